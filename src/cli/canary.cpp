// The canary runner: one check per step of the operating gate
// (docs/LINEAGE.md). Every check records what it saw; none throws.
#include "cli/canary.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "cli/canary_support.hpp"
#include "lineage/receipts.hpp"

namespace engram::cli {

using namespace canary;  // NOLINT: the canary's own helpers

bool CanaryRun::ok() const {
  return !checks.empty() &&
         std::all_of(checks.begin(), checks.end(), [](const CanaryCheck& c) { return c.ok; });
}

nlohmann::json CanaryRun::ToJson() const {
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : checks) cs.push_back({{"check", c.name}, {"ok", c.ok}, {"detail", c.detail}});
  return {{"canary_id", id}, {"tenant", kTenant}, {"ok", ok()}, {"checks", cs}};
}

namespace {

class Runner {
 public:
  Runner(Engine& e, const CanaryRestart& r) : e_(e), restart_(r) {}

  CanaryRun Run() {
    run_.id = RandomLetters(12);
    scopes_ = Scopes(run_.id);
    expected_.resize(scopes_.size());
    if (Admit()) {
      Pin();
      Overflow();
      Degraded();
      Isolation();
      Restart();
      Generation();
      RetrievalReceipts();
      HealthNow();
      Expiry();
    }
    Cleanup();
    return std::move(run_);
  }

 private:
  void Check(const std::string& name, bool ok, const std::string& detail) {
    run_.checks.push_back({name, ok, detail});
  }
  bool Failed(const std::string& name, const Status& st) {
    Check(name, false, st.ToString());
    return false;
  }
  std::vector<ReceiptInfo> Receipts(const Scope& s, const std::string& kind, const std::string& run = "") {
    return ReceiptsOf(e_, s, kind, run);
  }
  Lane LaneOf(const Scope& s) { return canary::LaneOf(e_, s); }
  Result<RetrievalResult> Retrieve(std::size_t lane, const std::string& query) {
    auto r = e_.Retrieve(scopes_[lane], query, {});
    if (r.ok()) expected_[lane].push_back(VersionList(r->items));
    return r;
  }

  bool Admit() {
    const Scope& a = scopes_[0];
    auto first = e_.AddTurn(a, Turn(Token(run_.id, 0), 0));
    if (!first.ok()) return Failed("admit", first.status());
    auto rs = Receipts(a, "turn");
    source_version_ = rs.empty() ? "" : rs.front().source_version;
    cap_ = CapacityOf(source_version_);
    if (cap_ < 1) return Failed("admit", Status::Internal("no stm capacity in " + source_version_));
    std::vector<TurnInput> fill;
    for (int n = 1; n < cap_; ++n) fill.push_back(Turn(Token(run_.id, 0), n));
    if (!fill.empty()) {
      auto r = e_.AddTurns(a, fill);
      if (!r.ok()) return Failed("admit", r.status());
      pending_at_boundary_ = r->back().promotion_pending;
    }
    for (int n = cap_; n < cap_ + 3; ++n) {
      auto r = e_.AddTurn(a, Turn(Token(run_.id, 0), n));
      if (!r.ok()) return Failed("admit", r.status());
      if (n == cap_) pending_past_boundary_ = r->promotion_pending;
    }
    for (std::size_t lane = 1; lane < scopes_.size(); ++lane) {
      std::vector<TurnInput> ts;
      for (int n = 0; n < 3; ++n) ts.push_back(Turn(Token(run_.id, lane), n));
      if (auto r = e_.AddTurns(scopes_[lane], ts); !r.ok()) return Failed("admit", r.status());
    }
    return true;
  }

  void Pin() {
    const std::string want = std::string("engram/") + Version() + ";";
    bool same = !source_version_.empty() && source_version_.rfind(want, 0) == 0;
    std::size_t n = 0;
    for (const auto& s : scopes_) {
      for (const auto& r : Receipts(s, "")) {
        same = same && r.source_version == source_version_;
        ++n;
      }
    }
    Check("pin", same, source_version_ + " (" + std::to_string(n) + " receipts agree)");
  }

  void Overflow() {
    const Scope& a = scopes_[0];
    auto rep = e_.Maintain(&a);
    if (!rep.ok()) return (void)Failed("stm_overflow", rep.status());
    maintain_ = *rep;
    auto turns = e_.ListTurns(a, 0, 10000);
    if (!turns.ok()) return (void)Failed("stm_overflow", turns.status());
    std::map<std::int64_t, std::string> commits;
    for (const auto& r : Receipts(a, "turn")) {
      if (r.from_tier == "stm" && r.to_tier == "mtm" && r.status == "committed") commits[r.memory_id] = r.outcome_receipt;
    }
    int in_stm = 0, removed = 0, matched = 0;
    for (const auto& t : *turns) {
      if (t.tier == Tier::kStm) {
        ++in_stm;
        continue;
      }
      ++removed;
      auto c = commits.find(t.id);
      if (c != commits.end() && c->second == "pages.id=" + std::to_string(t.page_id)) ++matched;
    }
    std::map<std::string, std::set<std::string>> runs;  // run -> statuses
    for (const auto& r : Receipts(a, "job")) runs[r.run_id].insert(r.status);
    bool jobs_closed = !runs.empty();
    for (const auto& [run, st] : runs) jobs_closed = jobs_closed && st.count("started") && st.size() > 1;
    const bool ok = !pending_at_boundary_ && pending_past_boundary_ && in_stm == cap_ && removed == 3 &&
                    matched == removed && jobs_closed;
    Check("stm_overflow", ok,
          std::to_string(cap_ + 3) + " turns admitted at capacity " + std::to_string(cap_) +
              (pending_past_boundary_ && !pending_at_boundary_ ? ", promotion pending exactly past the boundary"
                                                                : ", promotion pending flag WRONG") +
              "; " + std::to_string(removed) + " left STM with " + std::to_string(matched) +
              " matching commit receipts; " + std::to_string(runs.size()) + " job run(s) started and closed");
  }

  void Degraded() {
    const Scope& a = scopes_[0];
    int labelled = 0, segs = 0, pages_flagged = 0, pages = 0;
    for (const auto& r : Receipts(a, "segment")) {
      if (r.from_tier != "stm") continue;
      ++segs;
      if ((r.status == "degraded") == maintain_.degraded) ++labelled;
    }
    if (auto p = e_.ListPageLinks(a); p.ok()) {
      for (const auto& l : *p) {
        ++pages;
        if (l.degraded == maintain_.degraded) ++pages_flagged;
      }
    }
    auto r = Retrieve(0, "canary probe " + Token(run_.id, 0));
    int found = 0;
    if (r.ok()) {
      for (const auto& i : r->items) found += i.kind == ItemKind::kPage ? 1 : 0;
    }
    const bool ok = segs > 0 && labelled == segs && pages > 0 && pages_flagged == pages && found > 0;
    Check("degraded_path", ok,
          std::string(maintain_.degraded ? "fallback (built-in) path: " : "model path (fallback not exercised): ") +
              e_.MaintainerName() + "; " + std::to_string(labelled) + "/" + std::to_string(segs) +
              " segment receipts and " + std::to_string(pages_flagged) + "/" + std::to_string(pages) +
              " pages labelled " + (maintain_.degraded ? "degraded" : "not degraded") +
              "; retrieval returned " + std::to_string(found) + " promoted page(s)");
  }

  void Isolation() {
    std::vector<Lane> lanes;
    for (const auto& s : scopes_) lanes.push_back(LaneOf(s));
    int queries = 0, wrong = 0, own = 0;
    std::string errors;
    for (std::size_t s = 0; s < scopes_.size(); ++s) {
      for (std::size_t t = 0; t < scopes_.size(); ++t) {
        auto r = Retrieve(s, "canary probe " + Token(run_.id, t) + " entry");
        ++queries;
        if (!r.ok()) {
          errors = r.status().ToString();
          continue;
        }
        bool mine = false;
        for (const auto* list : {&r->items, &r->ranked}) {
          for (const auto& i : *list) {
            bool foreign = !Owns(lanes[s], i);
            for (std::size_t o = 0; o < scopes_.size(); ++o) {
              foreign = foreign || (o != s && i.text.find(Token(run_.id, o)) != std::string::npos);
            }
            wrong += foreign ? 1 : 0;
            mine = mine || !foreign;
          }
        }
        own += (s == t && mine) ? 1 : 0;
      }
    }
    Check("scope_isolation", wrong == 0 && own == static_cast<int>(scopes_.size()) && errors.empty(),
          "2 users x 2 assistants, " + std::to_string(queries) + " queries (" +
              std::to_string(queries - static_cast<int>(scopes_.size())) + " crossed): " +
              std::to_string(wrong) + " wrong-lane results; " + std::to_string(own) +
              " lanes found their own memory" + (errors.empty() ? "" : "; " + errors));
  }

  void Restart() {
    const Scope& a = scopes_[0];
    auto before = e_.ListPageLinks(a);
    if (!before.ok() || before->empty()) {
      return (void)Check("restart_chain", false, "no pages before the restart");
    }
    std::int64_t tail = before->back().page_id;
    std::string out;
    int code = RunChild(restart_, {"canary", "--batch2", run_.id}, &out);
    auto child = nlohmann::json::parse(out, nullptr, false);
    if (code != 0 || child.is_discarded() || !child.value("ok", false)) {
      return (void)Check("restart_chain", false,
                         "the re-executed batch failed (exit " + std::to_string(code) + "): " +
                             (child.is_discarded() ? out : child.value("error", std::string())));
    }
    auto after = e_.ListPageLinks(a);
    const PageLink* first = nullptr;
    const PageLink* old_tail = nullptr;
    if (after.ok()) {
      for (const auto& p : *after) {
        if (p.page_id == tail) old_tail = &p;
        if (p.page_id > tail && !first) first = &p;
      }
    }
    const bool pinned = child.value("source_version", std::string()) == source_version_;
    const bool linked = first && old_tail && first->prev_page == tail && old_tail->next_page == first->page_id;
    Check("restart_chain", linked && pinned,
          "batch 2 ran in process " + std::to_string(child.value("pid", 0)) + " (" +
              std::to_string(child.value("pages_created", 0)) + " pages); " +
              (first ? "page " + std::to_string(first->page_id) + " links back to " +
                           std::to_string(first->prev_page)
                     : std::string("no new page")) +
              ", pre-restart tail " + std::to_string(tail) +
              (pinned ? "; same source version" : "; source version CHANGED"));
  }

  void Generation() {
    const Scope& a = scopes_[0];
    ChatOptions o;
    o.admit = true;
    auto reply = e_.Chat(a, "canary probe " + Token(run_.id, 0) + " entry?", o);
    if (!reply.ok()) return (void)Failed("generation_receipt", reply.status());
    expected_[0].push_back(VersionList(reply->used));  // Chat retrieved once
    const Lane lane = LaneOf(a);
    int outside = 0;
    for (const auto& i : reply->used) outside += Owns(lane, i) ? 0 : 1;
    const std::string want = VersionList(reply->used);
    bool gen = false, admit = false;
    for (const auto& r : Receipts(Scope{"", "", ""}, "", reply->run_id)) {
      gen = gen || (r.memory_kind == "generation" && r.depends_on_version == want &&
                    r.scope.user == a.user && r.scope.assistant == a.assistant);
      admit = admit || (r.memory_kind == "turn" && r.from_tier == "input");
    }
    Check("generation_receipt", gen && admit && outside == 0 && !want.empty(),
          "run " + reply->run_id + ": generation receipt names " + std::to_string(reply->used.size()) +
              " item versions (" + (gen ? "matching" : "NOT matching") + " the prompt), " +
              std::to_string(outside) + " from another lane; answer admitted in the same run: " +
              (admit ? "yes" : "no"));
  }

  void RetrievalReceipts() {
    if (auto m = e_.Maintain(&scopes_[0]); !m.ok()) return (void)Failed("retrieval_receipts", m.status());
    int want = 0, got = 0, matched = 0;
    for (std::size_t lane = 0; lane < scopes_.size(); ++lane) {
      std::multiset<std::string> expected(expected_[lane].begin(), expected_[lane].end());
      want += static_cast<int>(expected.size());
      for (const auto& r : Receipts(scopes_[lane], "retrieval")) {
        ++got;
        auto it = expected.find(r.depends_on_version);
        if (it != expected.end()) {
          expected.erase(it);
          ++matched;
        }
      }
    }
    Check("retrieval_receipts", want > 0 && got == want && matched == want,
          std::to_string(want) + " retrievals, " + std::to_string(got) + " receipts, " +
              std::to_string(matched) + " naming exactly the returned item versions");
  }

  void HealthNow() {
    bool ok = true;
    std::string detail;
    for (const std::string u : {"u1", "u2"}) {
      HealthOptions o;
      o.tenant = kTenant;
      o.user = "canary-" + run_.id + "-" + u;
      auto h = e_.Health(o);
      if (!h.ok()) return (void)Failed("health", h.status());
      ok = ok && h->green() && h->scopes.size() == 2;
      detail += (detail.empty() ? "" : "; ") + u + ": " + HealthStateName(h->overall) + " (" +
                std::to_string(h->items) + " items, " + std::to_string(h->counts[7]) + " healthy, " +
                std::to_string(h->counts[6]) + " waiting)";
      for (std::size_t i = 0; i < h->findings.size() && i < 3; ++i) {
        detail += "; " + h->findings[i].kind + " " + std::to_string(h->findings[i].id) + ": " +
                  h->findings[i].reason;
      }
    }
    Check("health", ok, detail);
  }

  void Expiry() {
    HealthOptions o;
    o.tenant = kTenant;
    o.user = scopes_[0].user;
    auto now = e_.Health(o);
    if (!now.ok()) return (void)Failed("expiry", now.status());
    if (now->horizon_ms <= 0) return Check("expiry", true, "expiry disabled (receipt_horizon_hours = 0)");
    o.now = now->now + now->horizon_ms + 60 * 1000;
    auto later = e_.Health(o);
    if (!later.ok()) return (void)Failed("expiry", later.status());
    Check("expiry", later->overall == HealthState::kUncertain,
          "one horizon (" + std::to_string(now->horizon_ms / 3600000) + " h) later the same evidence gives " +
              HealthStateName(later->overall) + " instead of " + HealthStateName(now->overall));
  }

  void Cleanup() {
    std::int64_t erased = 0;
    std::string error;
    for (const std::string u : {"u1", "u2"}) {
      auto r = e_.ForgetUser(kTenant, "canary-" + run_.id + "-" + u);
      if (r.ok()) {
        erased += *r;
      } else {
        error = r.status().ToString();
      }
    }
    int left = 0;
    if (auto scopes = e_.ListScopes(); scopes.ok()) {
      for (const auto& s : *scopes) left += s.user.rfind("canary-" + run_.id, 0) == 0 ? 1 : 0;
    }
    Check("cleanup", error.empty() && left == 0,
          "ForgetUser erased " + std::to_string(erased) + " canary turns; " + std::to_string(left) +
              " canary scopes left" + (error.empty() ? "" : "; " + error));
  }

  Engine& e_;
  const CanaryRestart& restart_;
  CanaryRun run_;
  std::vector<Scope> scopes_;
  std::vector<std::vector<std::string>> expected_;  // per lane: version lists retrieval returned
  std::string source_version_;
  int cap_ = 0;
  bool pending_at_boundary_ = false, pending_past_boundary_ = false;
  MaintainReport maintain_;
};

}  // namespace

CanaryRun RunCanary(Engine& engine, const CanaryRestart& restart) { return Runner(engine, restart).Run(); }

nlohmann::json RunCanaryBatch2(Engine& engine, const std::string& id) {
  const Scope a = Scopes(id).front();
  auto fail = [](const Status& st) { return nlohmann::json{{"ok", false}, {"error", st.ToString()}}; };
  auto turns = engine.ListTurns(a, 0, 10000);
  if (!turns.ok()) return fail(turns.status());
  if (turns->empty()) return fail(Status::NotFound("no canary " + id + " in this store"));
  // This process's own pinned version, from the receipts it writes.
  auto admitted = engine.AddTurn(a, Turn(Token(id, 0), static_cast<int>(turns->size())));
  if (!admitted.ok()) return fail(admitted.status());
  ReceiptQuery q;
  q.scope = a;
  q.memory_kind = "turn";
  q.limit = 1000000;
  auto rs = engine.ListReceipts(q);
  if (!rs.ok() || rs->empty()) return fail(rs.ok() ? Status::Internal("no admission receipt") : rs.status());
  const std::string sv = rs->back().source_version;
  const int start = static_cast<int>(turns->size()) + 1, cap = CapacityOf(sv);
  std::vector<TurnInput> batch;
  for (int n = start; n < start + cap + 1; ++n) batch.push_back(Turn(Token(id, 0), n));
  if (auto r = engine.AddTurns(a, batch); !r.ok()) return fail(r.status());
  auto m = engine.Maintain(&a);
  if (!m.ok()) return fail(m.status());
  return {{"ok", true}, {"pid", static_cast<int>(getpid())}, {"source_version", sv},
          {"pages_created", m->pages_created}};
}

}  // namespace engram::cli
