// The fact tools: search_memories, add_fact, list_memories, update_memory,
// delete_memory (the fact memory of docs/MEMORY_API.md, scope
// {tenant, user, agent = assistant}).
#include "core/time.hpp"
#include "mcp/tools.hpp"
#include "wire/json.hpp"

namespace engram::mcp {

namespace {

using nlohmann::json;

constexpr const char* kFindIds = "Call search_memories or list_memories to find the id of the memory";

json MemoryJson(const MemoryItem& m, bool with_score) {
  json j = {{"id", m.id},
            {"memory", m.memory},
            {"kind", m.kind},
            {"version", m.version},
            {"metadata", wire::MetadataJson(m.metadata)},
            {"created_at", FormatIso8601(m.created_at)},
            {"updated_at", FormatIso8601(m.updated_at)},
            {"event_time", FormatIso8601(m.event_time)},
            {"expired", m.expired},
            {"degraded", m.degraded}};
  if (with_score) j["score"] = m.score;
  return j;
}

// A memory id: "m_" + 16 hex digits.
bool IsMemoryId(const std::string& id) {
  return id.size() == 18 && id.rfind("m_", 0) == 0 && id.find_first_not_of("0123456789abcdef", 2) == std::string::npos;
}

ToolOutcome BadId(const std::string& given) {
  return ToolOutcome::Error("argument 'id' must be a memory id like \"m_0123456789abcdef\" (got \"" + given +
                            "\"). " + kFindIds + ".");
}

}  // namespace

ToolOutcome Tools::SearchMemories(const json& a) {
  Args args(a);
  args.Only({"query", "top_k", "threshold"});
  std::string query = args.Str("query", true);
  auto top_k = args.Int("top_k", 1, 100);
  auto threshold = args.Num("threshold", 0.0, 1.0);
  if (!args.ok()) return ToolOutcome::Error(args.error());
  MemorySearchOptions o;
  o.top_k = top_k ? static_cast<int>(*top_k) : 10;
  o.threshold = threshold.value_or(0.0);
  auto r = engine_.SearchMemories(FactScope(), query, o);
  if (!r.ok()) return FromStatus(r.status());
  json res = json::array();
  for (const auto& m : *r) res.push_back(MemoryJson(m, true));
  return ToolOutcome::Ok({{"results", res}});
}

ToolOutcome Tools::AddFact(const json& a) {
  Args args(a);
  args.Only({"text", "metadata"});
  std::string text = args.Str("text", true);
  MemoryAddOptions o;
  o.metadata = args.Object("metadata");
  if (!args.ok()) return ToolOutcome::Error(args.error());
  o.infer = false;
  o.actor = "mcp";
  auto r = engine_.AddMemoryText(FactScope(), text, o);
  if (!r.ok()) return FromStatus(r.status());
  json res = json::array();
  for (const auto& e : r->results) {
    res.push_back({{"id", e.id}, {"memory", e.memory}, {"event", e.event}, {"version", e.version}});
  }
  json out = {{"results", res}};
  if (!r->note.empty()) out["note"] = r->note;
  return ToolOutcome::Ok(out);
}

ToolOutcome Tools::ListMemories(const json& a) {
  Args args(a);
  args.Only({"limit", "cursor"});
  auto limit = args.Int("limit", 1, 1000);
  std::string cursor = args.Str("cursor", false, false);
  if (!args.ok()) return ToolOutcome::Error(args.error());
  MemoryListOptions o;
  o.limit = limit ? static_cast<int>(*limit) : 50;
  o.cursor = cursor;
  auto r = engine_.ListMemories(FactScope(), o);
  if (!r.ok()) {
    return FromStatus(r.status(), cursor.empty() ? "" : "Pass the next_cursor of the previous page unchanged, or omit it");
  }
  json res = json::array();
  for (const auto& m : r->items) res.push_back(MemoryJson(m, false));
  return ToolOutcome::Ok({{"results", res}, {"next_cursor", r->next_cursor.empty() ? json(nullptr) : json(r->next_cursor)}});
}

ToolOutcome Tools::UpdateMemory(const json& a) {
  Args args(a);
  args.Only({"id", "text", "metadata"});
  std::string id = args.Str("id", true);
  MemoryUpdate u;
  u.text = args.OptStr("text");
  std::string meta = args.Object("metadata");
  if (!args.ok()) return ToolOutcome::Error(args.error());
  if (!IsMemoryId(id)) return BadId(id);
  if (!meta.empty()) u.metadata = meta;
  if (!u.text && !u.metadata) return ToolOutcome::Error("nothing to change: give 'text' and/or 'metadata'");
  u.actor = "mcp";
  auto r = engine_.UpdateMemory(FactScope(), id, u);
  if (!r.ok()) return FromStatus(r.status(), r.status().code() == StatusCode::kNotFound ? kFindIds : "");
  return ToolOutcome::Ok(MemoryJson(*r, false));
}

ToolOutcome Tools::DeleteMemory(const json& a) {
  Args args(a);
  args.Only({"id"});
  std::string id = args.Str("id", true);
  if (!args.ok()) return ToolOutcome::Error(args.error());
  if (!IsMemoryId(id)) return BadId(id);
  Status st = engine_.DeleteMemory(FactScope(), id, "mcp");
  if (!st.ok()) return FromStatus(st, st.code() == StatusCode::kNotFound ? kFindIds : "");
  return ToolOutcome::Ok({{"id", id}, {"deleted", true}});
}

}  // namespace engram::mcp
