#include "wire/exported_memories.hpp"

#include <nlohmann/json.hpp>

#include "core/json_keys.hpp"
#include "core/json_limits.hpp"
#include "core/time.hpp"
#include "engram/engine.hpp"

namespace engram::wire {

namespace {

// One memory of a fact line; `at` ("<label>: line N: ") prefixes errors.
Result<ExportedMemory> ReadMemory(const nlohmann::json& j, const std::string& at) {
  auto text = [&](const char* key, std::string* v) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    if (!it->is_string()) return false;
    *v = it->get<std::string>();
    return true;
  };
  ExportedMemory m;
  std::string expires, event;
  MemoryAddOptions::Restored restored;
  restored.kind = j.value("kind", std::string("memory"));
  if (!text("tenant", &m.scope.tenant) || !text("user_id", &m.scope.user) || !text("agent_id", &m.scope.agent) ||
      !text("run_id", &m.scope.run) || !text("text", &m.message.content) || !text("role", &restored.role) ||
      !text("actor", &m.message.name) || !text("expires_at", &expires) || !text("event_time", &event) ||
      !text("attributed_to", &restored.attributed_to)) {
    return Status::InvalidArgument(at + "a fact field is not a string");
  }
  // The memory comes back with its own role ("" for one the engine
  // extracted), kind and attribution; the message only carries the text.
  if (restored.role != "" && restored.role != "user" && restored.role != "assistant" && restored.role != "tool") {
    return Status::InvalidArgument(at + "field \"role\": must be user, assistant, tool or empty");
  }
  if (restored.attributed_to != "" && restored.attributed_to != "user" && restored.attributed_to != "assistant") {
    return Status::InvalidArgument(at + "field \"attributed_to\": must be user, assistant or empty");
  }
  if (!j.contains("attributed_to") && (restored.role == "user" || restored.role == "assistant")) {
    restored.attributed_to = restored.role;  // a file written without it: the role's speaker
  }
  m.message.role = restored.role.empty() ? "user" : restored.role;
  m.options.restored = std::move(restored);
  auto meta = j.find("metadata");
  if (meta != j.end() && !meta->is_null()) {
    if (!meta->is_object()) return Status::InvalidArgument(at + "field \"metadata\": expected an object");
    m.options.metadata = meta->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  m.options.infer = false;  // re-added verbatim: the export holds the extracted text
  m.options.actor = "import";
  auto degraded = j.find("degraded");
  if (degraded != j.end() && !degraded->is_null()) {
    if (!degraded->is_boolean()) return Status::InvalidArgument(at + "field \"degraded\": expected true or false");
    m.options.degraded = degraded->get<bool>();
  }
  if (!expires.empty()) {
    auto t = ParseTime(expires);
    if (!t.ok()) return Status::InvalidArgument(at + "field \"expires_at\": " + t.status().message());
    m.options.expires_at = *t;
  }
  if (!event.empty()) {
    auto t = ParseTime(event);
    if (!t.ok()) return Status::InvalidArgument(at + "field \"event_time\": " + t.status().message());
    m.options.event_time = *t;
  }
  if (m.scope.user.empty() && m.scope.agent.empty() && m.scope.run.empty()) {
    return Status::InvalidArgument(at + "a memory needs a user_id, agent_id or run_id");
  }
  // Placeholders stand in for the optional ids: only the given ones are checked
  // (a given "-" is refused: it is the id of no user or agent).
  if (Status st = Engine::ValidateScope(Scope{m.scope.tenant, m.scope.user.empty() ? "x" : m.scope.user,
                                              m.scope.agent.empty() ? "x" : m.scope.agent});
      !st.ok()) {
    return Status::InvalidArgument(at + st.message());
  }
  return m;
}

}  // namespace

Result<std::vector<ExportedMemory>> ParseExportedMemories(std::string_view content, const std::string& label) {
  std::vector<ExportedMemory> out;
  std::size_t n = 0;
  while (!content.empty()) {
    ++n;
    const auto end = content.find('\n');
    std::string_view line = content.substr(0, end);
    content = end == std::string_view::npos ? std::string_view() : content.substr(end + 1);
    if (n == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    if (n == 1 && line[first] == '[') return out;  // a JSON array, not JSONL
    const std::string at = label + ": line " + std::to_string(n) + ": ";
    if (!json_limits::WithinDepth(line)) return Status::InvalidArgument(at + json_limits::TooDeepMessage());
    json_limits::DuplicateKeys keys;
    nlohmann::json j = nlohmann::json::parse(line, std::ref(keys), false);
    if (!j.is_object() || j.value("type", nlohmann::json()) != "fact") continue;
    if (keys.found()) return Status::InvalidArgument(at + keys.Message());
    const auto kind = j.value("kind", nlohmann::json());
    if (kind != "memory" && kind != "procedural") continue;
    auto m = ReadMemory(j, at);
    if (!m.ok()) return m.status();
    m->line = static_cast<int>(n);
    out.push_back(std::move(*m));
  }
  return out;
}

}  // namespace engram::wire
