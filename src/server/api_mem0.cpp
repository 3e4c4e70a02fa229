// Mem0-compatible routes under /mem0 (docs/MEM0_COMPAT.md): the official
// Mem0 clients (`MemoryClient` with host "http://HOST:PORT/mem0") work
// unchanged over engram's fact memory. Mem0 names identities user_id,
// agent_id and run_id (in the body when adding, in `filters` when reading,
// in the query when deleting); the tenant always comes from the API key.
// Identities are taken out of Mem0 filters here; what remains is engram's own
// filter syntax, which is Mem0's. Features engram does not have answer 400
// `unsupported` naming the feature, never a fake success.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/time.hpp"
#include "server/api.hpp"
#include "wire/args.hpp"
#include "wire/json.hpp"

namespace engram::server {

using nlohmann::json;

namespace {

constexpr int kPageSizeMax = 1000;
constexpr int kBatchMax = 1000;

const std::set<std::string>& IdentityKeys() {
  static const std::set<std::string> k = {"user_id", "agent_id", "run_id", "app_id"};
  return k;
}

[[noreturn]] void Unsupported(const std::string& what, const std::string& field = "") {
  Throw(400, "unsupported",
        what + " is not supported by engram's Mem0 compatibility (see docs/MEM0_COMPAT.md)", field);
}

std::string Actor(const Call& c) { return ActorOf(c, "mem0"); }

// Mem0 identities, as engram's fact scope wants them.
struct Ids {
  std::string user, agent, run;
  bool empty() const { return user.empty() && agent.empty() && run.empty(); }
};

void SetId(Ids* ids, const std::string& key, const json& v, const std::string& where) {
  if (key == "app_id") Unsupported(where + "app_id (use agent_id, run_id or metadata)", "app_id");
  if (!v.is_string()) {
    Throw(400, "invalid_argument",
          where + key + ": only equality with a string (or \"*\" for any) is supported for identities", key);
  }
  std::string s = v.get<std::string>();
  if (s == "*") return;  // any: the identity does not narrow the scope
  std::string& slot = key == "user_id" ? ids->user : key == "agent_id" ? ids->agent : ids->run;
  if (!slot.empty() && slot != s) {
    Throw(400, "invalid_argument", where + key + ": given twice with different values", key);
  }
  slot = std::move(s);
}

bool MentionsIdentity(const json& f) {
  if (f.is_object()) {
    for (const auto& [k, v] : f.items()) {
      if (IdentityKeys().count(k) || MentionsIdentity(v)) return true;
    }
  } else if (f.is_array()) {
    for (const auto& v : f) {
      if (MentionsIdentity(v)) return true;
    }
  }
  return false;
}

// Splits a Mem0 filter into identities (top level, or single-key members of
// a top-level AND) and the rest, in engram's filter syntax ("" = none).
std::string SplitFilters(const json& filters, Ids* ids) {
  if (filters.is_null()) return "";
  if (!filters.is_object()) Throw(400, "invalid_argument", "filters: must be a JSON object", "filters");
  json rest = json::object();
  json and_rest = json::array();
  for (const auto& [k, v] : filters.items()) {
    if (IdentityKeys().count(k)) {
      SetId(ids, k, v, "filters.");
    } else if (k == "AND") {
      if (!v.is_array()) Throw(400, "invalid_argument", "filters.AND: must be an array of filters", "filters");
      for (const auto& member : v) {
        if (member.is_object() && member.size() == 1 && IdentityKeys().count(member.begin().key())) {
          SetId(ids, member.begin().key(), member.begin().value(), "filters.AND[].");
        } else if (MentionsIdentity(member)) {
          Throw(400, "invalid_argument",
                "filters: user_id, agent_id and run_id may only be given as equality at the top level or as "
                "members of a top-level AND",
                "filters");
        } else {
          and_rest.push_back(member);
        }
      }
    } else if (MentionsIdentity(v)) {
      Throw(400, "invalid_argument",
            "filters." + k + ": user_id, agent_id and run_id may only be given as equality at the top level or as "
            "members of a top-level AND",
            "filters");
    } else if (k == "metadata" && v.is_object()) {
      for (const auto& [mk, mv] : v.items()) rest["metadata." + mk] = mv;
    } else {
      rest[k] = v;
    }
  }
  if (!and_rest.empty()) rest["AND"] = and_rest;
  return rest.empty() ? "" : wire::Dump(rest);
}

// The identities named at the top level of a request (adds, and the reads
// of Mem0's earlier clients).
Ids TopLevelIds(const json& body) {
  Ids ids;
  for (const char* k : {"user_id", "agent_id", "run_id", "app_id"}) {
    if (auto it = body.find(k); it != body.end() && !it->is_null()) SetId(&ids, k, *it, "");
  }
  return ids;
}

// What the routes of Mem0's earlier clients answer: a list, or {"results":
// list} when the request asks for output_format "v1.1".
json Listed(const json& body, json list) {
  auto it = body.find("output_format");
  if (it != body.end() && it->is_string() && *it == "v1.1") return {{"results", std::move(list)}};
  return list;
}

// The fact scope of `ids` for the caller's key: exactly it (writes) or with
// narrower scopes (reads: Mem0's user_id filter sees every agent and run).
MemoryScope ScopeOf(const Call& c, const Ids& ids, bool narrower) {
  if (ids.empty()) {
    Throw(400, "invalid_argument", "user_id: at least one of user_id, agent_id and run_id is required", "user_id");
  }
  json p = {{"narrower", narrower}};
  if (!ids.user.empty()) p["user"] = ids.user;
  if (!ids.agent.empty()) p["agent"] = ids.agent;
  if (!ids.run.empty()) p["run"] = ids.run;
  Call scoped{c.req, c.who, std::move(p)};
  return FactScope(scoped, narrower);
}

json NullIfEmpty(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// One memory in Mem0's shape (engram's own fields are kept alongside).
json Mem0Memory(const MemoryItem& m) {
  json j = wire::ToJson(m);
  j["user_id"] = NullIfEmpty(m.user);
  j["agent_id"] = NullIfEmpty(m.agent);
  j["run_id"] = NullIfEmpty(m.run);
  j["app_id"] = nullptr;
  json categories = json::array();
  if (auto it = j["metadata"].find("categories"); it != j["metadata"].end() && it->is_array()) {
    for (const auto& c : *it) {
      if (c.is_string()) categories.push_back(c);
    }
  }
  j["categories"] = categories;
  j["immutable"] = false;
  return j;
}

// The request's JSON body (Mem0 routes read query and body together).
json BodyOf(const Call& c) { return ParseJsonBody(c.req); }

// Mem0 fields engram accepts and ignores are named in one response header.
void NoteIgnored(HttpResponse* r, const json& body, const std::set<std::string>& ignorable) {
  std::string ignored;
  for (const auto& [k, v] : body.items()) {
    if (ignorable.count(k) && !v.is_null()) ignored += (ignored.empty() ? "" : ",") + k;
  }
  if (!ignored.empty()) r->headers.emplace_back("X-Engram-Ignored", ignored);
}

void OnlyKeys(const json& body, const std::set<std::string>& known, const std::set<std::string>& ignorable,
              const char* route) {
  for (const auto& [k, v] : body.items()) {
    if (!known.count(k) && !ignorable.count(k)) {
      Throw(400, "invalid_argument", std::string(route) + ": unknown field '" + k + "'", k);
    }
  }
}

std::vector<MemoryMessage> Mem0Messages(const json& v) {
  std::vector<MemoryMessage> out;
  if (v.is_string()) {
    out.push_back(MemoryMessage{"user", v.get<std::string>(), ""});
    return out;
  }
  if (v.is_object()) return Mem0Messages(json::array({v}));
  if (!v.is_array() || v.empty()) {
    Throw(400, "invalid_argument", "messages: must be a non-empty array of {role, content} or a string", "messages");
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = "messages[" + std::to_string(i) + "]";
    const json& m = v[i];
    if (!m.is_object()) Throw(400, "invalid_argument", at + ": expected an object {role, content}", "messages");
    MemoryMessage msg;
    if (auto r = m.find("role"); r != m.end()) {
      if (!r->is_string()) Throw(400, "invalid_argument", at + ".role: must be a string", "messages");
      msg.role = r->get<std::string>();
    }
    auto content = m.find("content");
    if (content == m.end() || content->is_null()) Throw(400, "invalid_argument", at + ".content: required", "messages");
    if (content->is_object() || content->is_array()) Unsupported(at + ".content: multimodal content", "messages");
    if (!content->is_string()) Throw(400, "invalid_argument", at + ".content: must be a string", "messages");
    msg.content = content->get<std::string>();
    if (auto n = m.find("name"); n != m.end() && n->is_string()) msg.name = n->get<std::string>();
    out.push_back(std::move(msg));
  }
  return out;
}

// Mem0 times: "YYYY-MM-DD" or ISO-8601 text, or Unix seconds.
std::optional<TimeMs> Mem0Time(const json& body, const char* key) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (it->is_number()) {
    const double ms = it->get<double>() * 1000.0;  // Unix seconds
    if (std::isfinite(ms) && ms >= static_cast<double>(kMinTimeMs) && ms <= static_cast<double>(kMaxTimeMs)) {
      return static_cast<TimeMs>(ms);
    }
    Throw(400, "invalid_argument", std::string(key) + ": out of range (Unix seconds of the years 1000..9999)", key);
  }
  if (it->is_string()) {
    auto t = ParseTime(it->get<std::string>());
    if (t.ok()) return *t;
  }
  Throw(400, "invalid_argument",
        std::string(key) + ": expected a date (\"2025-06-01\"), an ISO-8601 time or Unix seconds", key);
}

int PositiveParam(const json& q, const char* key, int fallback, int max) {
  auto it = q.find(key);
  if (it == q.end()) return fallback;
  long long v = 0;
  if (it->is_number_integer()) {
    v = it->get<long long>();
  } else if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) v = -1;
    else v = std::stoll(s);
  } else {
    v = -1;
  }
  if (v < 1 || v > max) {
    Throw(400, "invalid_argument", std::string(key) + ": must be an integer from 1 to " + std::to_string(max), key);
  }
  return static_cast<int>(v);
}

// A Host header that names a host ("name", "name:port", "[v6]:port"); the
// pages' links are made of it, so nothing else of it is echoed.
bool IsHostName(const std::string& host) {
  if (host.empty() || host.size() > 255) return false;
  return std::all_of(host.begin(), host.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return std::isalnum(c) || ch == '.' || ch == '-' || ch == '_' || ch == ':' || ch == '[' || ch == ']';
  });
}

std::string ExternalBase(const Call& c) {
  std::string host = c.req.Header("host");
  if (!IsHostName(host)) host = "localhost";
  return "http://" + host + "/mem0";
}

}  // namespace

void Api::RegisterMem0(HttpServer& s) {
  // Identity check of the client: any valid key answers ok.
  Add(s, "GET", "/mem0/v1/ping/", Role::kRead, false, [](Call& c) {
    return Json(200, {{"status", "ok"},
                      {"org_id", nullptr},
                      {"project_id", nullptr},
                      {"user_email", nullptr},
                      {"tenant", c.who.tenant}});
  });

  // Two generations of Mem0's clients: mem0ai 3.x (npm) and 2.x (Python)
  // add, search and list on /v3 and read the identities of a read from
  // `filters`; the clients before them (npm 2.x, Python 1.x, in April 2026
  // still the current ones) add on POST /v1/memories/, search on
  // /v2/memories/search/ (or /v1 with the identities at the top level) and
  // list on POST /v2/memories/ (or GET /v1/memories/ with the identities in
  // the query). Those earlier routes answer a plain list, or {"results":
  // list} when the request asks for output_format "v1.1"; a read there may
  // name its identities at the top level as well as in `filters`.
  auto add = [this](Call& c, bool earlier) {
    const json body = BodyOf(c);
    static const std::set<std::string> known = {"messages", "user_id", "agent_id", "run_id", "app_id",
                                                "metadata", "infer", "timestamp", "expiration_date"};
    static const std::set<std::string> ignorable = {"custom_categories", "custom_instructions",
                                                    "agent_custom_instructions", "includes", "excludes",
                                                    "async_mode", "version", "output_format", "enable_graph",
                                                    "immutable", "structured_data_schema", "source"};
    OnlyKeys(body, known, ignorable, "add");
    Ids ids = TopLevelIds(body);
    const MemoryScope scope = ScopeOf(c, ids, false);
    if (!body.contains("messages")) Throw(400, "invalid_argument", "messages: required", "messages");
    const std::vector<MemoryMessage> messages = Mem0Messages(body["messages"]);
    MemoryAddOptions o;
    wire::Args a(body, "field");
    o.infer = a.Bool("infer").value_or(true);
    o.metadata = a.Object("metadata");
    CheckArgs(a);
    o.event_time = Mem0Time(body, "timestamp");
    o.expires_at = Mem0Time(body, "expiration_date");
    o.idempotency_key = IdempotencyKey(c);
    o.actor = Actor(c);
    const QuotaAsk ask = MessagesAsk(messages);
    QuotaHold hold = CheckQuota(c, ask, !o.idempotency_key.empty());
    o.replay_only = !hold.over().empty();
    auto r = CheckWrite(engine().AddMemory(scope, messages, o), c, hold.over());
    if (!r.replayed) hold.Charge(AddedAsk(r, ask));
    json out = json::array();
    for (const auto& e : r.results) {
      out.push_back({{"id", e.id}, {"event", e.event}, {"memory", e.memory}, {"data", {{"memory", e.memory}}}});
    }
    HttpResponse resp = Json(200, earlier ? Listed(body, std::move(out)) : out);
    NoteIgnored(&resp, body, ignorable);
    return resp;
  };
  Add(s, "POST", "/mem0/v3/memories/add/", Role::kWrite, false, [add](Call& c) { return add(c, false); },
      kWriteBodyBytes);
  Add(s, "POST", "/mem0/v1/memories/", Role::kWrite, false, [add](Call& c) { return add(c, true); },
      kWriteBodyBytes);

  auto search = [this](Call& c, bool earlier) {
    const json body = BodyOf(c);
    static const std::set<std::string> known = {"query", "filters", "top_k", "threshold", "show_expired"};
    static const std::set<std::string> known_earlier = {"query",   "filters",  "top_k",  "threshold", "show_expired",
                                                        "user_id", "agent_id", "run_id", "app_id"};
    static const std::set<std::string> ignorable = {"rerank", "keyword_search", "fields", "output_format",
                                                    "latest_only", "categories", "metadata", "reference_date",
                                                    "source", "version", "filter_memories"};
    OnlyKeys(body, earlier ? known_earlier : known, ignorable, "search");
    wire::Args a(body, "field");
    const std::string query = a.Str("query", true);
    MemorySearchOptions o;
    o.top_k = static_cast<int>(a.Int("top_k", 1, 1000).value_or(10));
    o.threshold = a.Num("threshold", 0.0, 1.0).value_or(0.0);
    o.include_expired = a.Bool("show_expired").value_or(false);
    CheckArgs(a);
    Ids ids = earlier ? TopLevelIds(body) : Ids{};
    o.filters = SplitFilters(body.value("filters", json()), &ids);
    const MemoryScope scope = ScopeOf(c, ids, true);
    json results = json::array();
    for (const auto& m : Check(engine().SearchMemories(scope, query, o))) results.push_back(Mem0Memory(m));
    HttpResponse resp = Json(200, earlier ? Listed(body, std::move(results)) : json{{"results", results}});
    NoteIgnored(&resp, body, ignorable);
    return resp;
  };
  Add(s, "POST", "/mem0/v3/memories/search/", Role::kRead, false, [search](Call& c) { return search(c, false); });
  Add(s, "POST", "/mem0/v2/memories/search/", Role::kRead, false, [search](Call& c) { return search(c, true); });
  Add(s, "POST", "/mem0/v1/memories/search/", Role::kRead, false, [search](Call& c) { return search(c, true); });

  // getAll: Mem0 pages by number; engram's list by cursor, walked here. The
  // query holds page and page_size (and, for GET /v1/memories/, the request's
  // other fields too); `route` is where the page links point.
  enum class ListRoute { kV3, kV2, kV1Get };
  auto get_all = [this](Call& c, ListRoute route) {
    const bool earlier = route != ListRoute::kV3;
    json body = route == ListRoute::kV1Get ? c.body : BodyOf(c);
    const bool paged = c.body.contains("page") || c.body.contains("page_size");
    const int page = PositiveParam(c.body, "page", 1, 1 << 30);
    const int page_size = PositiveParam(c.body, "page_size", 100, kPageSizeMax);
    if (route == ListRoute::kV1Get) {
      body.erase("page");
      body.erase("page_size");
    } else {
      for (const auto& [k, v] : c.body.items()) {
        if (k != "page" && k != "page_size") Throw(400, "invalid_argument", "parameter '" + k + "': unknown", k);
      }
    }
    static const std::set<std::string> known = {"filters", "show_expired"};
    static const std::set<std::string> known_earlier = {"filters", "show_expired", "user_id", "agent_id", "run_id",
                                                        "app_id"};
    static const std::set<std::string> ignorable = {"start_date", "end_date", "latest_only", "categories",
                                                    "fields", "output_format", "version", "source", "top_k"};
    OnlyKeys(body, earlier ? known_earlier : known, ignorable, "get_all");
    Ids ids = earlier ? TopLevelIds(body) : Ids{};
    MemoryListOptions o;
    o.filters = SplitFilters(body.value("filters", json()), &ids);
    if (route == ListRoute::kV1Get) {
      // Query values are text: "true" and "false" for show_expired.
      if (auto it = body.find("show_expired"); it != body.end() && it->is_string()) {
        if (*it != "true" && *it != "false") {
          Throw(400, "invalid_argument", "show_expired: must be true or false", "show_expired");
        }
        *it = *it == "true";
      }
    }
    wire::Args a(body, "field");
    o.include_expired = a.Bool("show_expired").value_or(false);
    CheckArgs(a);
    const MemoryScope scope = ScopeOf(c, ids, true);
    o.limit = kPageSizeMax;
    // The earlier routes list everything when no page is asked for, up to
    // the size of the largest page: beyond it the answer says to ask by page
    // (never a silently cut list, never an answer of unbounded size).
    const bool whole = earlier && !paged;
    const long long first = whole ? 0 : static_cast<long long>(page - 1) * page_size;
    const long long last = whole ? kPageSizeMax : first + page_size;
    long long count = 0;
    json results = json::array();
    for (;;) {
      MemoryPage p = Check(engine().ListMemories(scope, o));
      for (const auto& m : p.items) {
        if (whole && count >= kPageSizeMax) {
          Throw(400, "invalid_argument",
                "get_all: more than " + std::to_string(kPageSizeMax) +
                    " memories match; ask for them by page (page and page_size, up to " +
                    std::to_string(kPageSizeMax) + " a page)",
                "page");
        }
        if (count >= first && count < last) results.push_back(Mem0Memory(m));
        ++count;
      }
      if (p.next_cursor.empty()) break;
      o.cursor = p.next_cursor;
    }
    json out;
    if (whole) {
      out = Listed(body, std::move(results));
    } else {
      const char* path = route == ListRoute::kV3 ? "/v3/memories/" : route == ListRoute::kV2 ? "/v2/memories/"
                                                                                               : "/v1/memories/";
      const std::string base = ExternalBase(c) + path + "?page_size=" + std::to_string(page_size) + "&page=";
      out = {{"count", count},
             {"next", first + page_size < count ? json(base + std::to_string(page + 1)) : json(nullptr)},
             {"previous",
              page > 1 && first - page_size < count ? json(base + std::to_string(page - 1)) : json(nullptr)},
             {"results", results}};
    }
    HttpResponse resp = Json(200, out);
    NoteIgnored(&resp, body, ignorable);
    return resp;
  };
  Add(s, "POST", "/mem0/v3/memories/", Role::kRead, false, [get_all](Call& c) { return get_all(c, ListRoute::kV3); });
  Add(s, "POST", "/mem0/v2/memories/", Role::kRead, false, [get_all](Call& c) { return get_all(c, ListRoute::kV2); });
  Add(s, "GET", "/mem0/v1/memories/", Role::kRead, false,
      [get_all](Call& c) { return get_all(c, ListRoute::kV1Get); });

  // By id: the memory is found in the key's tenant, then read or changed in
  // its own scope (a key limited to users must allow the memory's user).
  auto located = [this](const Call& c, bool deleted_too = false) {
    const std::string& id = c.req.params.at(0);
    auto where = engine().LocateMemory(c.who.tenant, id, deleted_too);
    if (!where.ok()) ThrowStatus(where.status());
    if (!c.who.AllUsers() && !c.who.AllowsUser(where->user)) {
      Throw(404, "not_found", "memory " + id);  // as if absent: no probing of other users' ids
    }
    return *where;
  };

  Add(s, "GET", "/mem0/v1/memories/{id}/", Role::kRead, false, [this, located](Call& c) {
    const MemoryScope scope = located(c);
    return Json(200, Mem0Memory(Check(engine().GetMemory(scope, c.req.params.at(0)))));
  });

  Add(s, "PUT", "/mem0/v1/memories/{id}/", Role::kWrite, false, [this, located](Call& c) {
    const json body = BodyOf(c);
    static const std::set<std::string> known = {"text", "metadata", "expiration_date"};
    static const std::set<std::string> ignorable = {"timestamp"};
    OnlyKeys(body, known, ignorable, "update");
    MemoryUpdate u;
    wire::Args a(body, "field");
    u.text = a.OptStr("text");
    if (body.contains("metadata")) u.metadata = a.Object("metadata");
    CheckArgs(a);
    if (body.contains("expiration_date") && body["expiration_date"].is_null()) u.clear_expiry = true;
    else u.expires_at = Mem0Time(body, "expiration_date");
    u.actor = Actor(c);
    if (!u.text && !u.metadata && !u.expires_at && !u.clear_expiry) {
      Throw(400, "invalid_argument", "nothing to update: give text, metadata or expiration_date", "text");
    }
    const MemoryScope scope = located(c);
    QuotaHold hold = CheckQuota(c, QuotaAsk{0, 0, u.text ? static_cast<std::int64_t>(u.text->size()) : 0}, false);
    HttpResponse resp = Json(200, Mem0Memory(Check(engine().UpdateMemory(scope, c.req.params.at(0), u))));
    hold.Charge();
    NoteIgnored(&resp, body, ignorable);
    return resp;
  }, kWriteBodyBytes);

  Add(s, "DELETE", "/mem0/v1/memories/{id}/", Role::kWrite, false, [this, located](Call& c) {
    for (const auto& [k, v] : c.body.items()) {
      if (k == "delete_linked") Unsupported("delete_linked", k);
      Throw(400, "invalid_argument", "parameter '" + k + "': unknown", k);
    }
    const MemoryScope scope = located(c);
    Check(engine().DeleteMemory(scope, c.req.params.at(0), Actor(c)));
    return Json(200, {{"message", "Memory deleted successfully!"}});
  });

  Add(s, "GET", "/mem0/v1/memories/{id}/history/", Role::kRead, false, [this, located](Call& c) {
    const std::string& id = c.req.params.at(0);
    const MemoryScope scope = located(c, /*deleted_too=*/true);  // a deleted memory keeps its history
    json out = json::array();
    for (const auto& e : Check(engine().MemoryHistory(scope, id))) {
      const std::string at = FormatIso8601(e.at);
      out.push_back({{"id", id + ":" + std::to_string(out.size() + 1)},
                     {"memory_id", id},
                     {"version", e.version},
                     {"event", e.event},
                     {"old_memory", e.old_text ? json(*e.old_text) : json(nullptr)},
                     {"new_memory", e.new_text ? json(*e.new_text) : json(nullptr)},
                     {"input", json::array()},
                     {"user_id", NullIfEmpty(scope.user)},
                     {"categories", json::array()},
                     {"actor", e.actor},
                     {"created_at", at},
                     {"updated_at", at}});
    }
    return Json(200, out);
  });

  // deleteAll: identities in the query.
  Add(s, "DELETE", "/mem0/v1/memories/", Role::kWrite, false, [this](Call& c) {
    Ids ids;
    for (const auto& [k, v] : c.body.items()) {
      if (!IdentityKeys().count(k)) Throw(400, "invalid_argument", "parameter '" + k + "': unknown", k);
      SetId(&ids, k, v, "");
    }
    const std::int64_t n = Check(engine().DeleteAllMemories(ScopeOf(c, ids, true), Actor(c)));
    return Json(200, {{"message", "Memories deleted successfully!"}, {"deleted", n}});
  });

  // users(): every user, agent and run id of the tenant that holds memories.
  Add(s, "GET", "/mem0/v1/entities/", Role::kRead, false, [this](Call& c) {
    const int page = PositiveParam(c.body, "page", 1, 1 << 30);
    const int page_size = PositiveParam(c.body, "page_size", 100, kPageSizeMax);
    json all = json::array();
    for (const auto& e : Check(engine().ListMemoryEntities(c.who.tenant))) {
      // A key limited to users sees those users only (agents and runs span users).
      if (!c.who.AllUsers() && (e.type != "user" || !c.who.AllowsUser(e.name))) continue;
      all.push_back({{"id", e.name},
                     {"name", e.name},
                     {"type", e.type},
                     {"total_memories", e.memories},
                     {"owner", c.who.tenant},
                     {"created_at", FormatIso8601(e.first_at)},
                     {"updated_at", FormatIso8601(e.last_at)}});
    }
    const std::size_t first = static_cast<std::size_t>(page - 1) * page_size;
    json results = json::array();
    for (std::size_t i = first; i < all.size() && i < first + page_size; ++i) results.push_back(all[i]);
    const std::string base = ExternalBase(c) + "/v1/entities/?page_size=" + std::to_string(page_size) + "&page=";
    return Json(200, {{"count", all.size()},
                      {"next", first + page_size < all.size() ? json(base + std::to_string(page + 1)) : json(nullptr)},
                      {"previous", page > 1 ? json(base + std::to_string(page - 1)) : json(nullptr)},
                      {"results", results}});
  });

  // deleteUsers / deleteUser: every memory of one user, agent or run.
  auto delete_entity = [this](Call& c) {
    const std::string& type = c.req.params.at(0);
    const std::string& name = c.req.params.at(1);
    Ids ids;
    if (type == "user") ids.user = name;
    else if (type == "agent") ids.agent = name;
    else if (type == "run") ids.run = name;
    else if (type == "app") Unsupported("the entity type 'app'", "entity_type");
    else Throw(400, "invalid_argument", "entity_type: must be user, agent or run", "entity_type");
    if (!c.who.AllUsers() && type != "user") {
      Throw(403, "forbidden", "this API key is limited to some users; it may delete only a user's memories");
    }
    const std::int64_t n = Check(engine().DeleteAllMemories(ScopeOf(c, ids, true), Actor(c)));
    return Json(200, {{"message", "Entity deleted successfully!"}, {"deleted", n}});
  };
  Add(s, "DELETE", "/mem0/v2/entities/{type}/{name}/", Role::kWrite, false, delete_entity);
  Add(s, "DELETE", "/mem0/v1/entities/{type}/{name}/", Role::kWrite, false, delete_entity);

  // batchUpdate / batchDelete: one transaction, all or nothing (an unknown
  // id, a bad text or an id named twice fails the batch, naming the entry).
  auto batch = [this, located](Call& c, bool update) {
    const json body = BodyOf(c);
    auto it = body.find("memories");
    if (it == body.end() || !it->is_array() || it->empty() || it->size() > kBatchMax) {
      Throw(400, "invalid_argument",
            "memories: must be an array of 1 to " + std::to_string(kBatchMax) + " {memory_id" +
                (update ? ", text}" : "}"),
            "memories");
    }
    std::vector<MemoryChange> todo;
    QuotaAsk ask;
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& m = (*it)[i];
      const std::string at = "memories[" + std::to_string(i) + "]";
      if (!m.is_object() || !m.contains("memory_id") || !m["memory_id"].is_string() ||
          (update && (!m.contains("text") || !m["text"].is_string()))) {
        Throw(400, "invalid_argument", at + ": expected {memory_id" + std::string(update ? ", text}" : "}"),
              "memories");
      }
      HttpRequest one = c.req;
      one.params = {m["memory_id"].get<std::string>()};
      Call probe{one, c.who, json::object()};
      MemoryChange change;
      try {
        change.scope = located(probe);
      } catch (const ApiError& e) {
        Throw(e.status, e.code, at + ": " + e.message, "memories");
      }
      change.id = one.params.front();
      change.remove = !update;
      change.update.actor = Actor(c);
      if (update) {
        change.update.text = m["text"].get<std::string>();
        ask.bytes += static_cast<std::int64_t>(change.update.text->size());
      }
      todo.push_back(std::move(change));
    }
    QuotaHold hold = CheckQuota(c, ask, false);
    Check(engine().ChangeMemories(todo));
    hold.Charge();
    const std::string n = std::to_string(todo.size());
    return Json(200, {{"message", (update ? "Successfully updated " : "Successfully deleted ") + n + " memories"}});
  };
  Add(s, "PUT", "/mem0/v1/batch/", Role::kWrite, false, [batch](Call& c) { return batch(c, true); },
      kWriteBodyBytes);
  Add(s, "DELETE", "/mem0/v1/batch/", Role::kWrite, false, [batch](Call& c) { return batch(c, false); });

  // Platform features engram does not have: a clear 400, never a fake success.
  struct Gap {
    const char* method;
    const char* path;
    const char* what;
  };
  static const Gap kGaps[] = {
      {"GET", "/mem0/api/v1/orgs/organizations/{org}/projects/{project}/", "projects and organisations"},
      {"PATCH", "/mem0/api/v1/orgs/organizations/{org}/projects/{project}/", "projects and organisations"},
      {"GET", "/mem0/api/v1/webhooks/projects/{project}/", "webhooks"},
      {"POST", "/mem0/api/v1/webhooks/projects/{project}/", "webhooks"},
      {"PUT", "/mem0/api/v1/webhooks/{id}/", "webhooks"},
      {"DELETE", "/mem0/api/v1/webhooks/{id}/", "webhooks"},
      {"POST", "/mem0/v1/feedback/", "feedback"},
      {"POST", "/mem0/v1/summary/", "memory summaries"},
      {"POST", "/mem0/v1/exports/", "exports as jobs (use GET /v1/export)"},
      {"POST", "/mem0/v1/exports/get/", "exports as jobs (use GET /v1/export)"},
      {"GET", "/mem0/v2/entities/{type}/{name}/profile/", "generated profiles (use GET /v1/profile)"},
      {"GET", "/mem0/v2/profiles/settings/", "generated profiles (use GET /v1/profile)"},
      {"PATCH", "/mem0/v2/profiles/settings/", "generated profiles (use GET /v1/profile)"},
      {"POST", "/mem0/v2/profiles/jobs/", "generated profiles (use GET /v1/profile)"},
      {"GET", "/mem0/v2/profiles/jobs/{id}/", "generated profiles (use GET /v1/profile)"},
  };
  for (const Gap& g : kGaps) {
    const std::string what = g.what;
    Add(s, g.method, g.path, Role::kRead, false, [what](Call&) -> HttpResponse { Unsupported(what); });
  }
}

}  // namespace engram::server
