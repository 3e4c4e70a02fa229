// The health classifier: reading the evidence and aggregating the states.
// The per-kind rules are in health_rules.cpp.
#include <algorithm>

#include "core/time.hpp"
#include "lineage/health_internal.hpp"

namespace engram {

const char* HealthStateName(HealthState state) {
  switch (state) {
    case HealthState::kScopeConflict: return "scope_conflict";
    case HealthState::kSourceAtRisk: return "source_at_risk";
    case HealthState::kPromotionMissing: return "promotion_missing";
    case HealthState::kStaleRetrieval: return "stale_retrieval";
    case HealthState::kGenerationUnverified: return "generation_unverified";
    case HealthState::kUncertain: return "uncertain";
    case HealthState::kWaiting: return "waiting";
    case HealthState::kHealthy: return "healthy";
  }
  return "unknown";
}

namespace lineage {

namespace detail {

std::string FormatTime(TimeMs t) { return FormatIso8601(t); }

Item& Classifier::Get(const std::string& kind, std::int64_t id, const std::string& key) {
  auto [it, fresh] = items_.try_emplace(ItemKey{kind, id});
  if (fresh) {
    it->second.out.kind = kind;
    it->second.out.id = id;
    it->second.key = key;
  }
  return it->second;
}

void Classifier::Flag(Item& it, HealthState s, const std::string& reason, const std::string& run) {
  if (s < it.out.state) {
    it.out.state = s;
    it.out.reason = reason;
  }
  auto& runs = it.out.run_ids;
  if (!run.empty() && std::find(runs.begin(), runs.end(), run) == runs.end()) {
    if (runs.size() >= 8) runs.erase(runs.begin());  // keep the newest
    runs.push_back(run);
  }
}

void Classifier::Touch(Item& it, const Receipt& r) {
  it.fresh = std::max(it.fresh, r.at_utc);
  Flag(it, HealthState::kHealthy, "", r.run_id);
  std::string key = ScopeKey(r.tenant, r.user_scope, r.assistant_scope);
  if (key != it.key) {
    Flag(it, HealthState::kScopeConflict,
         "receipt " + std::to_string(r.id) + " (" + r.memory_kind + " " + r.from_tier + "->" +
             r.to_tier + ") names the scope of another user or assistant",
         r.run_id);
  }
  if (MissingFields(r)) {
    Flag(it, HealthState::kUncertain,
         "receipt " + std::to_string(r.id) + " has a missing or unreadable field", r.run_id);
  }
}

void Classifier::Event(const Receipt& r, HealthState s, const std::string& reason) {
  auto [it, fresh] = events_.try_emplace(r.id);
  if (fresh) {
    it->second.out.kind = r.memory_kind;
    it->second.out.id = r.id;
    it->second.key = ScopeKey(r.tenant, r.user_scope, r.assistant_scope);
  }
  Flag(it->second, s, reason, r.run_id);
}

bool Classifier::Compacted(const std::string& key, TimeMs t) const {
  auto it = e_.compacted_through.find(key);
  return it != e_.compacted_through.end() && t <= it->second;
}

bool Classifier::Matches(const std::string& key) const {
  Scope s = ScopeFromKey(key);
  return (p_.tenant.empty() || s.tenant == p_.tenant) && (p_.user.empty() || s.user == p_.user);
}

void Classifier::IndexStore() {
  for (const auto& s : e_.scopes) {
    scope_key_[s.id] = ScopeKey(s.scope);
    keys_.insert(scope_key_[s.id]);
  }
  auto key_of = [&](std::int64_t scope_id) {
    auto it = scope_key_.find(scope_id);
    return it == scope_key_.end() ? ScopeKey("?", "?", std::to_string(scope_id)) : it->second;
  };
  for (const auto& t : e_.turns) {
    turns_[t.id] = &t;
    Get("turn", t.id, key_of(t.scope_id)).in_store = true;
  }
  for (const auto& p : e_.pages) pages_[p.id] = &p;
  for (const auto& s : e_.segments) {
    segments_[s.id] = &s;
    Get("segment", s.id, key_of(s.scope_id)).in_store = true;
  }
  for (const auto& f : e_.facts) {
    facts_[f.id] = &f;
    if (!f.memory.empty()) memory_rows_[f.memory].push_back(f.id);
    Get("fact", f.id, key_of(f.scope_id)).in_store = true;
  }
  for (const auto& j : e_.jobs) {
    jobs_[j.id] = &j;
    Get("job", j.id, key_of(j.scope_id)).in_store = true;
  }
}

void Classifier::ReadReceipts() {
  // Purges and verifications first: they decide which receipts still count.
  for (const auto& r : e_.receipts) {
    if (r.memory_kind != "scope" || !IsCommit(r.status)) continue;
    std::string key = ScopeKey(r.tenant, r.user_scope, r.assistant_scope);
    auto& slot = r.to_tier == "purged" ? purged_at_[key] : verified_at_[key];
    slot = std::max(slot, r.at_utc);
  }
  for (const auto& [key, at] : purged_at_) {
    auto v = verified_at_.find(key);
    if (v != verified_at_.end() && v->second <= at) verified_at_.erase(v);
  }
  for (const auto& r : e_.receipts) {
    std::string key = ScopeKey(r.tenant, r.user_scope, r.assistant_scope);
    auto purged = purged_at_.find(key);
    if (purged != purged_at_.end() && r.at_utc <= purged->second) continue;  // an erased incarnation
    if (r.memory_kind == "scope") continue;
    keys_.insert(key);
    if (!r.run_id.empty()) run_keys_[r.run_id].insert(key);
    const bool commit = IsCommit(r.status);
    if (r.memory_kind == "turn" || r.memory_kind == "segment" || r.memory_kind == "fact") {
      Item& it = Get(r.memory_kind, r.memory_id, key);
      Touch(it, r);
      if (!commit) continue;
      memory_commits_[key].emplace_back(r.at_utc, r.run_id);
      if (r.memory_kind == "turn" && r.from_tier == "input" && r.to_tier == "stm") it.has_admit = true;
      if (r.memory_kind == "turn" && r.from_tier == "stm" && r.to_tier == "mtm") {
        it.commit_pages.push_back(OutcomeId(r.outcome_receipt, "pages.id="));
      }
      if (r.memory_kind == "segment" && r.to_tier == "mtm" &&
          r.outcome_receipt.rfind("segment.create", 0) == 0) {
        it.has_create = true;
      }
      if (r.memory_kind == "segment" && r.to_tier == "archive") it.has_archive = true;
      if (r.memory_kind == "fact" && r.to_tier == "lpm") {
        it.has_add = true;
        it.versions.emplace_back(r.at_utc, r.version);
      }
      if (r.status == "degraded") it.out.degraded = true;
    } else if (r.memory_kind == "job") {
      Item& it = Get("job", r.memory_id, key);
      Touch(it, r);
      JobRun& run = it.runs[r.run_id];
      if (r.status == "started") {
        run.started = true;
      } else if (commit || r.status == "failed") {
        run.outcome = r.status;
      }
    } else if (r.memory_kind == "generation") {
      Item& it = Get("generation", r.id, key);
      Touch(it, r);
      it.answer_turn = OutcomeId(r.outcome_receipt, "turns.id=");
      uses_.push_back(&r);
    } else if (r.memory_kind == "retrieval") {
      if (MissingFields(r)) Event(r, HealthState::kUncertain, "retrieval receipt with a missing field");
      if (r.status == "degraded") {
        Event(r, HealthState::kUncertain, "retrieval receipts were lost: " + r.outcome_receipt);
      }
      uses_.push_back(&r);
    } else if (MissingFields(r)) {
      Event(r, HealthState::kUncertain, r.memory_kind + " receipt with a missing field");
    } else if (commit && r.memory_kind == "profile_slot") {
      memory_commits_[key].emplace_back(r.at_utc, r.run_id);
    }
  }
  for (auto& [key, v] : memory_commits_) std::sort(v.begin(), v.end());
}

void Classifier::Aggregate(HealthReport* report) {
  std::map<std::string, ScopeHealth> scopes;
  for (const auto& key : keys_) {
    if (Matches(key)) scopes[key].scope = ScopeFromKey(key);
  }
  std::vector<HealthItem> findings;
  auto add = [&](Item& it, bool is_event) {
    if (!Matches(it.key)) return;
    it.out.scope = ScopeFromKey(it.key);
    const auto s = static_cast<std::size_t>(it.out.state);
    ScopeHealth& sh = scopes[it.key];
    sh.scope = it.out.scope;
    sh.state = Worse(sh.state, it.out.state);
    ++sh.counts[s];
    ++report->counts[s];
    if (!is_event) {
      ++report->items;
      if (it.out.degraded) ++report->degraded_items;
    }
    if (!IsGreen(it.out.state)) findings.push_back(it.out);
    if (it.out.state == HealthState::kWaiting &&
        (!report->oldest_waiting || it.out.since < report->oldest_waiting->since)) {
      report->oldest_waiting = it.out;
    }
  };
  for (auto& [k, it] : items_) add(it, false);
  for (auto& [k, it] : events_) add(it, true);
  for (auto& [key, sh] : scopes) {
    report->overall = Worse(report->overall, sh.state);
    report->scopes.push_back(sh);
  }
  std::stable_sort(findings.begin(), findings.end(),
                   [](const HealthItem& a, const HealthItem& b) { return a.state < b.state; });
  report->findings_total = static_cast<std::int64_t>(findings.size());
  if (static_cast<int>(findings.size()) > p_.max_findings && p_.max_findings >= 0) {
    findings.resize(static_cast<std::size_t>(p_.max_findings));
  }
  report->findings = std::move(findings);
  report->degraded_share =
      report->items ? static_cast<double>(report->degraded_items) / static_cast<double>(report->items) : 0.0;
}

HealthReport Classifier::Run() {
  HealthReport report;
  report.now = p_.now;
  report.horizon_ms = p_.horizon_ms;
  report.receipts_read = static_cast<std::int64_t>(e_.receipts.size());
  IndexStore();
  ReadReceipts();
  CheckTurns();
  CheckSegments();
  CheckFacts();
  CheckJobs();
  CheckUses();
  CheckRuns();
  Expire();
  Aggregate(&report);
  return report;
}

}  // namespace detail

HealthReport Classify(const Evidence& evidence, const Policy& policy) {
  detail::Classifier c(evidence, policy);
  return c.Run();
}

}  // namespace lineage
}  // namespace engram
