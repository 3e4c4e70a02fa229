// Routes of the fact memory (docs/MEMORY_API.md): add, search, list, get,
// update, delete, delete_all, history, purge. Scopes: user / agent / run
// fields (or query parameters), tenant from the API key.
#include "server/api.hpp"

#include "core/json_keys.hpp"
#include "wire/args.hpp"
#include "wire/json.hpp"

namespace engram::server {

using nlohmann::json;

namespace {

// The actor recorded in a memory's history: the API key.
std::string Actor(const Call& c) { return ActorOf(c, "api"); }

// Filters: a JSON object in a body, JSON object text in a query parameter.
std::string Filters(const Call& c, wire::Args& a) {
  auto it = c.body.find("filters");
  if (it == c.body.end() || it->is_null()) return "";
  if (it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    CheckJsonDepth(text, "filters", "invalid_argument");
    json_limits::DuplicateKeys keys;
    json f = json::parse(text, std::ref(keys), false);
    if (!f.is_object()) Throw(400, "invalid_argument", "parameter 'filters' must be a JSON object", "filters");
    if (keys.found()) Throw(400, "invalid_argument", "parameter 'filters': " + keys.Message(), "filters");
    return f.dump();
  }
  return a.Object("filters");
}

const std::string& MemoryId(const Call& c) { return c.req.params.at(0); }

json Results(const std::vector<MemoryItem>& items) {
  json out = json::array();
  for (const auto& m : items) out.push_back(wire::ToJson(m));
  return out;
}

}  // namespace

void Api::RegisterMemories(HttpServer& s) {
  Add(s, "POST", "/v1/memories", Role::kWrite, true, [this](Call& c) { return AddMemory(c); }, kWriteBodyBytes);
  Add(s, "POST", "/v1/memories/search", Role::kRead, true, [this](Call& c) { return SearchMemories(c); },
      kQueryBodyBytes);
  Add(s, "GET", "/v1/memories", Role::kRead, false, [this](Call& c) { return ListMemories(c); });
  Add(s, "DELETE", "/v1/memories", Role::kWrite, false, [this](Call& c) { return DeleteAllMemories(c); });
  Add(s, "POST", "/v1/memories/purge", Role::kAdmin, true, [this](Call& c) { return PurgeMemories(c); },
      kQueryBodyBytes);
  Add(s, "GET", "/v1/memories/{id}", Role::kRead, false, [this](Call& c) { return GetMemory(c); });
  Add(s, "PATCH", "/v1/memories/{id}", Role::kWrite, true, [this](Call& c) { return UpdateMemory(c); },
      kWriteBodyBytes);
  Add(s, "DELETE", "/v1/memories/{id}", Role::kWrite, false, [this](Call& c) { return DeleteMemory(c); });
  Add(s, "GET", "/v1/memories/{id}/history", Role::kRead, false, [this](Call& c) { return MemoryHistory(c); });
  Add(s, "GET", "/v1/memories/{id}/receipts", Role::kRead, false, [this](Call& c) { return MemoryReceipts(c); });
  Add(s, "POST", "/v1/memories/{id}/purge", Role::kAdmin, true, [this](Call& c) { return PurgeMemory(c); },
      kQueryBodyBytes);
}

HttpResponse Api::AddMemory(Call& c) {
  wire::Args a(c.body, "field");
  a.Only({"user", "agent", "run", "messages", "text", "infer", "procedural", "metadata", "idempotency_key",
          "expires_at", "event_time"});
  MemoryAddOptions o;
  o.infer = a.Bool("infer").value_or(true);
  o.procedural = a.Bool("procedural").value_or(false);
  o.metadata = a.Object("metadata");
  o.idempotency_key = IdempotencyKey(c, a.Str("idempotency_key", false));
  o.expires_at = a.Time("expires_at");
  o.event_time = a.Time("event_time");
  o.actor = Actor(c);
  const std::string text = a.Str("text", false);
  CheckArgs(a);
  const MemoryScope scope = FactScope(c, false);
  std::vector<MemoryMessage> messages;
  const bool has_messages = c.body.contains("messages") && !c.body["messages"].is_null();
  if (has_messages == !text.empty()) {
    Throw(400, "invalid_argument", "give either 'text' or 'messages' (not both)", has_messages ? "text" : "messages");
  }
  if (!text.empty()) {
    messages.push_back(MemoryMessage{"user", text, ""});
  } else {
    const json& list = c.body["messages"];
    if (!list.is_array() || list.empty()) {
      Throw(400, "invalid_argument", "field 'messages' must be a non-empty array of {role, content, name?}",
            "messages");
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string at = "messages[" + std::to_string(i) + "]";
      if (!list[i].is_object()) Throw(400, "invalid_argument", at + ": expected an object", "messages");
      wire::Args m(list[i], "field");
      m.Only({"role", "content", "name"});
      MemoryMessage msg;
      if (auto role = m.OptStr("role")) msg.role = *role;
      msg.content = m.Str("content", true);
      msg.name = m.Str("name", false);
      if (!m.ok()) Throw(400, "invalid_argument", at + ": " + m.error(), "messages");
      messages.push_back(std::move(msg));
    }
  }
  const QuotaAsk ask = MessagesAsk(messages);
  QuotaHold hold = CheckQuota(c, ask, !o.idempotency_key.empty());
  o.replay_only = !hold.over().empty();
  auto r = CheckWrite(text.empty() ? engine().AddMemory(scope, messages, o) : engine().AddMemoryText(scope, text, o),
                      c, hold.over());
  if (!r.replayed) hold.Charge(AddedAsk(r, ask));
  return Json(r.replayed ? 200 : 201, wire::ToJson(r));
}

HttpResponse Api::SearchMemories(Call& c) {
  wire::Args a(c.body, "field");
  a.Only({"user", "agent", "run", "narrower", "query", "top_k", "threshold", "filters", "include_expired",
          "explain"});
  const std::string query = a.Str("query", true);
  MemorySearchOptions o;
  o.top_k = static_cast<int>(a.Int("top_k", 1, 1000).value_or(o.top_k));
  o.threshold = a.Num("threshold", 0.0, 1.0).value_or(0.0);
  o.filters = Filters(c, a);
  o.include_expired = a.Bool("include_expired").value_or(false);
  o.explain = a.Bool("explain").value_or(false);
  CheckArgs(a);
  const MemoryScope scope = FactScope(c, true);
  return Json(200, {{"results", Results(Check(engine().SearchMemories(scope, query, o)))}});
}

HttpResponse Api::ListMemories(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "agent", "run", "narrower", "cursor", "limit", "filters", "include_expired"});
  MemoryListOptions o;
  o.cursor = a.Str("cursor", false);
  o.limit = static_cast<int>(a.Int("limit", 1, 1000).value_or(o.limit));
  o.filters = Filters(c, a);
  o.include_expired = a.Bool("include_expired").value_or(false);
  CheckArgs(a);
  const MemoryScope scope = FactScope(c, true);
  auto page = Check(engine().ListMemories(scope, o));
  return Json(200, {{"results", Results(page.items)},
                    {"next_cursor", page.next_cursor.empty() ? json(nullptr) : json(page.next_cursor)}});
}

HttpResponse Api::DeleteAllMemories(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "agent", "run", "narrower"});
  CheckArgs(a);
  const MemoryScope scope = FactScope(c, true);
  return Json(200, {{"deleted", Check(engine().DeleteAllMemories(scope, Actor(c)))}});
}

HttpResponse Api::GetMemory(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "agent", "run", "narrower"});
  CheckArgs(a);
  return Json(200, wire::ToJson(Check(engine().GetMemory(FactScope(c, true), MemoryId(c)))));
}

HttpResponse Api::UpdateMemory(Call& c) {
  wire::Args a(c.body, "field");
  a.Only({"user", "agent", "run", "text", "metadata", "expires_at"});
  MemoryUpdate u;
  u.text = a.OptStr("text");
  if (c.body.contains("metadata")) u.metadata = a.Object("metadata");
  if (c.body.contains("expires_at") && c.body["expires_at"].is_null()) u.clear_expiry = true;
  else u.expires_at = a.Time("expires_at");
  u.actor = Actor(c);
  CheckArgs(a);
  if (!u.text && !u.metadata && !u.expires_at && !u.clear_expiry) {
    Throw(400, "invalid_argument", "nothing to update: give text, metadata or expires_at (null clears it)", "text");
  }
  const MemoryScope scope = FactScope(c, false);
  const QuotaAsk ask{0, 0, u.text ? static_cast<std::int64_t>(u.text->size()) : 0};
  QuotaHold hold = CheckQuota(c, ask, false);
  auto item = Check(engine().UpdateMemory(scope, MemoryId(c), u));
  hold.Charge();
  return Json(200, wire::ToJson(item));
}

HttpResponse Api::DeleteMemory(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "agent", "run"});
  CheckArgs(a);
  Check(engine().DeleteMemory(FactScope(c, false), MemoryId(c), Actor(c)));
  return Json(200, {{"id", MemoryId(c)}, {"deleted", true}});
}

HttpResponse Api::MemoryHistory(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "agent", "run", "narrower"});
  CheckArgs(a);
  json out = json::array();
  for (const auto& e : Check(engine().MemoryHistory(FactScope(c, true), MemoryId(c)))) out.push_back(wire::ToJson(e));
  return Json(200, {{"id", MemoryId(c)}, {"results", out}});
}

HttpResponse Api::MemoryReceipts(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "agent", "run", "narrower"});
  CheckArgs(a);
  json out = json::array();
  for (const auto& r : Check(engine().MemoryReceipts(FactScope(c, true), MemoryId(c)))) out.push_back(wire::ToJson(r));
  return Json(200, {{"id", MemoryId(c)}, {"receipts", out}});
}

HttpResponse Api::PurgeMemory(Call& c) {
  wire::Args a(c.body, "field");
  a.Only({"user", "agent", "run"});
  CheckArgs(a);
  auto r = Check(engine().PurgeMemory(FactScope(c, false), MemoryId(c)));
  return Json(200, {{"memories", r.memories}, {"versions", r.rows}});
}

HttpResponse Api::PurgeMemories(Call& c) {
  wire::Args a(c.body, "field");
  a.Only({"user", "agent", "run", "narrower"});
  CheckArgs(a);
  auto r = Check(engine().PurgeMemories(FactScope(c, true)));
  return Json(200, {{"memories", r.memories}, {"versions", r.rows}});
}

}  // namespace engram::server
