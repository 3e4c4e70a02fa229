// Routes of the inspector (ui/, served at /ui/): the tenant's users with
// their tier counts, a scope's mid-term segments with their page chain, the
// receipts of one item, activity over time, the recent-requests log and the
// canary. Every one is tenant-scoped and role-checked like the other /v1
// routes; none of them writes memory (the canary writes only to its own
// throwaway tenant and erases it).
#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <map>
#include <set>
#include <string_view>

#include "core/clock.hpp"
#include "core/text.hpp"
#include "core/time.hpp"
#include "retrieval/ranking.hpp"
#include "server/api.hpp"
#include "wire/json.hpp"

namespace engram::server {

using nlohmann::json;

namespace {

constexpr std::int64_t kDayMs = 24LL * 3600 * 1000;
// Receipts read at most for one report (the oldest first): a bound on the
// memory of a request.
constexpr int kMaxReceiptsRead = 200000;

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Day(TimeMs t) { return FormatIso8601(t - t % kDayMs).substr(0, 10); }

json StatsPart(const engram::Stats& s) {
  json j = wire::ToJson(s);
  return j;
}

}  // namespace

void Api::RegisterInspect(HttpServer& s) {
  Add(s, "GET", "/v1/whoami", Role::kRead, false, [this](Call& c) { return WhoAmI(c); });
  Add(s, "GET", "/v1/users", Role::kRead, false, [this](Call& c) { return Users(c); });
  Add(s, "GET", "/v1/segments", Role::kRead, false, [this](Call& c) { return Segments(c); });
  Add(s, "GET", "/v1/receipts", Role::kRead, false, [this](Call& c) { return Receipts(c); });
  Add(s, "GET", "/v1/activity", Role::kRead, false, [this](Call& c) { return Activity(c); });
  Add(s, "GET", "/v1/requests", Role::kAdmin, false, [this](Call& c) { return Requests(c); });
  Add(s, "POST", "/v1/canary", Role::kAdmin, true, [this](Call& c) { return Canary(c); }, kQueryBodyBytes);
}

HttpResponse Api::WhoAmI(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({});
  CheckArgs(a);
  return Json(200, {{"key_id", c.who.key_id.empty() ? json(nullptr) : json(c.who.key_id)},
                    {"tenant", c.who.tenant},
                    {"role", RoleName(c.who.role)},
                    {"users", c.who.AllUsers() ? json(nullptr) : json(c.who.users)},
                    {"embedder", engine().EmbedderName()},
                    {"maintainer", engine().MaintainerName()}});
}

HttpResponse Api::Users(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"q", "cursor", "limit"});
  const std::string q = Lower(a.Str("q", false, false));
  const std::string cursor = a.Str("cursor", false, false);
  const int limit = static_cast<int>(a.Int("limit", 1, 200).value_or(50));
  CheckArgs(a);
  TenantUserPage page;
  if (c.who.AllUsers()) {
    // Paged by the store: a tenant of many users is not read whole.
    page = Check(engine().ListTenantUsers(c.who.tenant, q, cursor, limit));
  } else {
    // A key limited to some users (a few, named when it was made): their scopes.
    std::map<std::string, std::vector<std::string>> by_user;  // in byte order, as the store's
    for (auto& sc : VisibleScopes(c, "")) {
      // An agent's own memories are no user's; a user's own are no dialogue's
      // (their counts join the user's, their "-" is no assistant to open).
      if (sc.user == kNoScopeId || (!q.empty() && Lower(sc.user).find(q) == std::string::npos))
        continue;
      auto& assistants = by_user[sc.user];
      if (sc.assistant != kNoScopeId) assistants.push_back(std::move(sc.assistant));
    }
    page.matched = static_cast<std::int64_t>(by_user.size());
    for (auto& [user, assistants] : by_user) {
      if (!cursor.empty() && user <= cursor) continue;
      if (static_cast<int>(page.users.size()) == limit) {
        page.more = true;
        break;
      }
      page.users.push_back({user, std::move(assistants)});
    }
  }
  json users = json::array();
  for (const auto& u : page.users) {
    json j = StatsPart(Check(engine().GetScopeSetStats(c.who.tenant, u.user, "", nullptr)));
    j["user"] = u.user;
    j["assistants"] = u.assistants;
    users.push_back(std::move(j));
  }
  const json next = page.more && !page.users.empty() ? json(page.users.back().user) : json(nullptr);
  return Json(200, {{"users", users}, {"matched", page.matched}, {"next_cursor", next}});
}

HttpResponse Api::Segments(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "assistant", "archived"});
  const bool archived = a.Bool("archived").value_or(true);
  CheckArgs(a);
  const Scope scope = TurnScope(c);
  json segments = json::array();
  std::map<std::int64_t, std::vector<std::int64_t>> pages_of;
  json pages = json::array();
  for (const auto& p : Check(engine().ListPageLinks(scope))) {
    pages_of[p.segment_id].push_back(p.page_id);
    pages.push_back({{"id", p.page_id},
                     {"turn_id", p.turn_id},
                     {"segment_id", p.segment_id},
                     {"prev_page", p.prev_page ? json(p.prev_page) : json(nullptr)},
                     {"next_page", p.next_page ? json(p.next_page) : json(nullptr)},
                     {"degraded", p.degraded}});
  }
  for (const auto& g : Check(engine().ListSegments(scope, archived))) {
    segments.push_back({{"id", g.id},
                        {"summary", g.summary},
                        {"keywords", g.keywords},
                        {"pages", g.pages},
                        {"page_ids", pages_of[g.id]},
                        {"interaction", g.interaction},
                        {"visits", g.visits},
                        {"recency", g.recency},
                        {"heat", g.heat},
                        {"last_access", g.last_access ? json(FormatIso8601(g.last_access)) : json(nullptr)},
                        {"created_at", FormatIso8601(g.created_at)},
                        {"archived", g.archived}});
  }
  return Json(200, {{"user", scope.user}, {"assistant", scope.assistant}, {"segments", segments}, {"pages", pages}});
}

HttpResponse Api::Receipts(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "assistant", "kind", "id", "run", "limit"});
  const std::string kind = a.Str("kind", false);
  const std::string run = a.Str("run", false);
  const std::string id_text = a.Str("id", false);
  const int limit = static_cast<int>(a.Int("limit", 1, 10000).value_or(500));
  CheckArgs(a);
  std::int64_t id = 0;
  if (!id_text.empty()) {
    char* end = nullptr;
    const long long v = std::strtoll(id_text.c_str(), &end, 10);
    if (!end || *end != '\0' || v < 0) Throw(400, "invalid_argument", "parameter 'id': expected a number", "id");
    id = v;
  }
  if (!id_text.empty() && kind.empty()) Throw(400, "invalid_argument", "parameter 'kind': required with 'id'", "kind");
  // The kinds of item a receipt is written for (docs/LINEAGE.md); any other
  // name is a typo that would list nothing.
  static constexpr std::array<std::string_view, 8> kKinds = {"turn", "segment", "fact", "profile_slot",
                                                              "job", "generation", "retrieval", "scope"};
  if (!kind.empty() && std::find(kKinds.begin(), kKinds.end(), kind) == kKinds.end()) {
    Throw(400, "invalid_argument",
          "parameter 'kind': expected turn, segment, fact, profile_slot, job, generation, retrieval or scope", "kind");
  }
  Scope scope = TurnScope(c);
  ReceiptQuery q;
  q.scope = {scope.tenant, scope.user, c.body.contains("assistant") ? scope.assistant : ""};
  q.memory_kind = kind;
  q.run_id = run;
  q.limit = kMaxReceiptsRead;
  json out = json::array();
  std::int64_t matched = 0;
  auto receipts = Check(engine().ListReceipts(q));
  // Newest last; the last `limit` that match.
  std::vector<const ReceiptInfo*> hits;
  for (const auto& r : receipts) {
    if (!id_text.empty() && r.memory_id != id) continue;
    hits.push_back(&r);
  }
  matched = static_cast<std::int64_t>(hits.size());
  const std::size_t keep = static_cast<std::size_t>(limit);
  const std::size_t from = hits.size() > keep ? hits.size() - keep : 0;
  for (std::size_t i = from; i < hits.size(); ++i) {
    out.push_back(wire::ToJson(*hits[i]));
  }
  return Json(200, {{"user", scope.user}, {"receipts", out}, {"matched", matched}});
}

HttpResponse Api::Activity(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "days"});
  const std::string user = a.Str("user", false);
  const int days = static_cast<int>(a.Int("days", 1, 366).value_or(30));
  CheckArgs(a);
  if (!user.empty()) RequireUser(c, user);
  if (user.empty() && !c.who.AllUsers()) {
    Throw(403, "forbidden", "user: this API key is limited to some users; name one of them", "user");
  }
  // Receipts counted per day, scope and transition by the store (every
  // receipt of the tenant or user, compacted days included), folded here into
  // per-day transitions and, per scope, the tier sizes at the end of each day
  // as the receipts tell them (turns in STM, live and archived segments, fact
  // versions consolidated); a scope purged on a day starts from zero.
  ReceiptQuery q;
  q.scope = {c.who.tenant, user, ""};
  q.limit = kMaxReceiptsRead + 1;
  auto counts = Check(engine().CountReceiptsByDay(q));
  const bool complete = static_cast<int>(counts.size()) <= kMaxReceiptsRead;
  if (!complete) counts.resize(kMaxReceiptsRead);
  struct Tiers {
    std::int64_t stm = 0, mtm = 0, archive = 0, lpm = 0;
  };
  struct DayRow {
    std::int64_t admitted = 0, promoted = 0, archived = 0, consolidated = 0, retrievals = 0, answers = 0;
    Tiers size;
    bool compacted = false;
  };
  std::map<std::int64_t, DayRow> by_day;
  std::map<std::pair<std::string, std::string>, Tiers> scopes;
  std::int64_t receipts = 0;
  auto end_of_day = [&](std::int64_t day, const std::vector<const ReceiptDayCount*>& purged) {
    for (const auto* p : purged) scopes[{p->scope.user, p->scope.assistant}] = Tiers{};
    Tiers total;
    for (const auto& [key, t] : scopes) {
      total.stm += std::max<std::int64_t>(0, t.stm);
      total.mtm += std::max<std::int64_t>(0, t.mtm);
      total.archive += std::max<std::int64_t>(0, t.archive);
      total.lpm += std::max<std::int64_t>(0, t.lpm);
    }
    by_day[day].size = total;
  };
  std::vector<const ReceiptDayCount*> purged;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const ReceiptDayCount& r = counts[i];
    receipts += r.count;
    if (r.status == "committed" || r.status == "degraded") {
      DayRow& d = by_day[r.day];
      d.compacted = d.compacted || r.compacted;
      Tiers& t = scopes[{r.scope.user, r.scope.assistant}];
      const std::string tr = r.from_tier + "->" + r.to_tier;
      const std::int64_t n = r.count;
      if (r.memory_kind == "turn" && tr == "input->stm") d.admitted += n, t.stm += n;
      else if (r.memory_kind == "turn" && tr == "stm->mtm") d.promoted += n, t.stm -= n;
      else if (r.memory_kind == "segment" && tr == "stm->mtm" && r.segment_created) t.mtm += n;
      else if (r.memory_kind == "segment" && tr == "mtm->archive") d.archived += n, t.mtm -= n, t.archive += n;
      else if (r.memory_kind == "fact" && tr == "mtm->lpm") d.consolidated += n, t.lpm += n;
      else if (r.memory_kind == "retrieval") d.retrievals += n;
      else if (r.memory_kind == "generation") d.answers += n;
      else if (r.memory_kind == "scope" && r.to_tier == "purged") purged.push_back(&r);
    }
    if (i + 1 == counts.size() || counts[i + 1].day != r.day) {
      if (by_day.count(r.day)) end_of_day(r.day, purged);
      purged.clear();
    }
  }
  json out = json::array();
  const std::int64_t now_day = SystemClock::Default().NowMs() / kDayMs;
  for (const auto& [day, d] : by_day) {
    if (day < now_day - (days - 1)) continue;  // days before the window set its starting sizes
    out.push_back({{"day", Day(day * kDayMs)},
                   {"admitted", d.admitted},
                   {"promoted", d.promoted},
                   {"archived", d.archived},
                   {"consolidated", d.consolidated},
                   {"retrievals", d.retrievals},
                   {"answers", d.answers},
                   {"stm", d.size.stm},
                   {"mtm_segments", d.size.mtm},
                   {"archived_segments", d.size.archive},
                   {"lpm_facts", d.size.lpm},
                   {"compacted", d.compacted}});
  }
  return Json(200, {{"tenant", c.who.tenant}, {"days", out}, {"receipts_read", receipts}, {"complete", complete}});
}

HttpResponse Api::Requests(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"limit"});
  const int limit = static_cast<int>(a.Int("limit", 1, static_cast<long long>(RequestLog::kPerTenant)).value_or(100));
  CheckArgs(a);
  json out = json::array();
  for (const auto& e : requests_.Recent(c.who.tenant, static_cast<std::size_t>(limit))) {
    out.push_back({{"method", e.method},
                   {"route", e.route},
                   {"status", e.status},
                   {"ms", e.ms},
                   {"at", FormatIso8601(e.at_ms)},
                   {"request_id", e.request_id}});
  }
  return Json(200, {{"requests", out}, {"kept", RequestLog::kPerTenant}});
}

HttpResponse Api::Canary(Call& c) {
  wire::Args a(c.body, "field");
  a.Only({});
  CheckArgs(a);
  if (!options_.canary) Throw(409, "failed_precondition", "this server cannot run the canary");
  json r = options_.canary();
  if (!r.is_object()) Throw(500, "internal", "the canary gave no report");
  return Json(200, r);
}

json ExplainItem(const RetrievedItem& item, const std::string& query, bool semantic_embedder, int rank,
                 const RankingOptions& ranking) {
  const bool message = item.kind == ItemKind::kPage || item.kind == ItemKind::kStmTurn;
  auto share = [](double s) { return std::to_string(static_cast<int>(s * 100 + 0.5)) + "%"; };
  std::string chosen;
  const std::string within =
      ranking.recent_hours > 0 ? " said within " + wire::CompactNumber(ranking.recent_hours) + " hours" : "";
  switch (item.kind) {
    case ItemKind::kStmTurn:
      chosen = rank > 0 ? "short-term turn ranked #" + std::to_string(rank) + " among the scope's messages"
                        : "recent short-term turn (the newest turns" + within + " fill up to " +
                              share(ranking.stm_share) + " of the budget, older ones what is left)";
      break;
    case ItemKind::kProfile: chosen = "profile slot (up to " + share(ranking.profile_share) + " of the budget)"; break;
    case ItemKind::kUserFact:
    case ItemKind::kAssistantFact:
      chosen = "fact ranked by bm25 and vector similarity (up to " + share(ranking.facts_share) + " of the budget)";
      break;
    case ItemKind::kPage:
      chosen = rank > 0 ? "message ranked #" + std::to_string(rank) + " among the scope's messages"
                        : "message ranked among the scope's messages";
      break;
  }
  json why = {{"chosen", chosen}};
  json matched = json::array(), expansions = json::array();
  if (item.why.filled) {
    // The ranker's own sums (RankReasons).
    for (const auto& t : item.why.matched_terms) {
      if (!t.expansion && t.weight >= 1.0)
        matched.push_back(t.term);
      else
        expansions.push_back({{"term", t.term}, {"weight", t.weight}});
    }
  } else {
    // Not ranked (recent turns, facts, profile): the query terms its text holds.
    std::set<std::string> item_terms;
    for (auto& t : text::Terms(item.text)) item_terms.insert(std::move(t));
    for (const auto& qt : retrieval::QueryTerms(query)) {
      if (item_terms.count(qt.term)) matched.push_back(qt.term);
    }
  }
  why["matched_terms"] = matched;
  if (!message) return why;
  why["speaker"] = item.part;
  if (item.why.filled) {
    const RankReasons& r = item.why;
    why["expansions"] = expansions;
    why["lexical_score"] = r.lexical;
    why["neighbour_score"] = r.neighbour;
    why["neighbour_evidence"] = r.neighbour > 0;
    why["coverage"] = r.coverage;
    why["speaker_factor"] = r.speaker;
    why["time_cue"] = r.time_cue;
    why["named_date"] = r.named_date;
    why["said_date"] = r.said_date;
    why["answer_type"] = r.answer_type;
    why["meaning_score"] = r.meaning;
    why["self_reference"] = r.self_reference;
    why["cue_factor"] = r.cues;
  } else {
    why["neighbour_evidence"] = false;
    why["time_cue"] = false;
    why["named_date"] = false;
    why["said_date"] = false;
    why["answer_type"] = false;
  }
  why["vector_similarity"] =
      semantic_embedder
          ? "used (the exchange's cosine similarity: " + std::to_string(item.why.vector) + ")"
          : "not used (built-in embedder: words, and the word vectors' meaning_score where "
            "the question's words say little)";
  return why;
}

}  // namespace engram::server
