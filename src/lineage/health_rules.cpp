// The per-kind rules of the health classifier (docs/LINEAGE.md, "states").
// Each rule only lowers an item's state (Flag keeps the state of highest
// precedence), so a later success never hides an earlier conflict.
#include <algorithm>

#include "lineage/health_internal.hpp"

namespace engram::lineage::detail {

void Classifier::CheckTurns() {
  // When each STM turn went beyond capacity: the i-th oldest of n STM turns
  // is due once the (i + capacity)-th was admitted.
  std::map<std::string, std::vector<const TurnRec*>> stm;
  for (const auto& t : e_.turns) {
    if (t.page_id == 0) stm[items_.at({"turn", t.id}).key].push_back(&t);
  }
  std::map<std::int64_t, TimeMs> due_since;
  const auto cap = static_cast<std::size_t>(std::max(p_.stm_capacity, 0));
  for (auto& [key, v] : stm) {
    std::sort(v.begin(), v.end(), [](const TurnRec* a, const TurnRec* b) { return a->seq < b->seq; });
    for (std::size_t i = 0; i + cap < v.size(); ++i) due_since[v[i]->id] = v[i + cap]->ingest_time;
  }
  for (auto& [k, it] : items_) {
    if (k.first != "turn") continue;
    if (!it.in_store) {
      Flag(it, HealthState::kSourceAtRisk, "receipts name a turn that is missing from the store");
      continue;
    }
    const TurnRec& t = *turns_.at(k.second);
    const bool compacted = Compacted(it.key, t.ingest_time);
    if (!it.has_admit && !compacted) Flag(it, HealthState::kUncertain, "no admission receipt");
    const auto& cp = it.commit_pages;
    if (t.page_id != 0) {
      auto p = pages_.find(t.page_id);
      if (p == pages_.end() || p->second->turn_id != t.id) {
        Flag(it, HealthState::kSourceAtRisk, "left STM but its page is missing or does not point back");
        continue;
      }
      it.out.degraded = it.out.degraded || p->second->degraded;
      if (std::find(cp.begin(), cp.end(), t.page_id) != cp.end()) continue;
      if (!cp.empty()) {
        Flag(it, HealthState::kSourceAtRisk, "the promotion receipt names another page than the turn's");
      } else if (!compacted) {
        Flag(it, HealthState::kSourceAtRisk, "left STM without a promotion commit receipt");
      }
      continue;
    }
    if (!cp.empty()) {
      Flag(it, HealthState::kSourceAtRisk,
           "a promotion commit names pages.id=" + std::to_string(cp.back()) + " but the turn has no page");
      continue;
    }
    auto due = due_since.find(t.id);
    if (due != due_since.end() && p_.now - due->second > p_.promotion_wait_ms) {
      Flag(it, HealthState::kPromotionMissing,
           "beyond STM capacity since " + FormatTime(due->second) + " and not promoted");
    } else {
      Flag(it, HealthState::kWaiting, due != due_since.end() ? "beyond capacity, promotion pending"
                                                              : "in STM below capacity");
      it.out.since = due != due_since.end() ? due->second : t.ingest_time;
    }
  }
}

void Classifier::CheckSegments() {
  for (auto& [k, it] : items_) {
    if (k.first != "segment") continue;
    if (!it.in_store) {
      Flag(it, HealthState::kSourceAtRisk, "receipts name a segment that is missing from the store");
      continue;
    }
    const SegmentRec& s = *segments_.at(k.second);
    it.out.degraded = it.out.degraded || s.degraded;
    if (!it.has_create && !Compacted(it.key, s.created_at)) {
      Flag(it, HealthState::kUncertain, "no segment creation receipt");
    }
    if (s.archived_at != 0 && !it.has_archive && !Compacted(it.key, s.archived_at)) {
      Flag(it, HealthState::kSourceAtRisk, "left MTM (archived) without an archive receipt");
    }
  }
}

void Classifier::CheckFacts() {
  for (auto& [k, it] : items_) {
    if (k.first != "fact") continue;
    if (!it.in_store) {
      Flag(it, HealthState::kSourceAtRisk, "a fact commit receipt names a fact missing from the store");
      continue;
    }
    const FactRec& f = *facts_.at(k.second);
    it.out.degraded = it.out.degraded || f.degraded;
    if (!it.has_add && !Compacted(it.key, f.record_time)) Flag(it, HealthState::kUncertain, "no fact receipt");
  }
}

void Classifier::CheckJobs() {
  for (auto& [k, it] : items_) {
    if (k.first != "job") continue;
    for (const auto& [run, jr] : it.runs) {
      if (jr.started && jr.outcome.empty()) {
        Flag(it, HealthState::kSourceAtRisk,
             "run started but never committed or failed (interrupted): reconcile before retrying", run);
      }
    }
    if (!it.in_store) {
      Flag(it, HealthState::kUncertain, "job receipts without a job row");
      continue;
    }
    const JobRec& j = *jobs_.at(k.second);
    // A job row is written in the transaction of the admission (or promotion)
    // that made it pending, whose receipts back its creation time.
    it.fresh = std::max(it.fresh, j.created_at);
    if (j.status == "failed") {
      Flag(it, HealthState::kPromotionMissing,
           j.kind + " job failed after " + std::to_string(j.attempts) + " attempts");
    } else if (j.status == "pending") {
      if (p_.now - j.updated_at > p_.promotion_wait_ms) {
        Flag(it, HealthState::kPromotionMissing, j.kind + " job pending since " + FormatTime(j.updated_at));
      } else {
        Flag(it, HealthState::kWaiting, j.kind + " job pending");
        it.out.since = j.created_at;
      }
    } else if (it.runs.empty() && !Compacted(it.key, j.updated_at)) {
      Flag(it, HealthState::kUncertain, "job done without any job receipt");
    }
  }
}

Item* Classifier::Resolve(const std::string& kind, std::int64_t id) {
  std::int64_t turn = 0;
  if (kind == "page") {
    auto p = pages_.find(id);
    if (p == pages_.end()) return nullptr;
    turn = p->second->turn_id;
  } else if (kind == "stm_turn") {
    turn = id;
  } else if (kind == "fact" || kind == "memory" || kind == "procedural" ||
             (kind.size() > 5 && kind.compare(kind.size() - 5, 5, "_fact") == 0)) {
    auto it = items_.find({"fact", id});
    return it == items_.end() ? nullptr : &it->second;
  } else {
    return nullptr;
  }
  auto it = items_.find({"turn", turn});
  return it == items_.end() || !it->second.in_store ? nullptr : &it->second;
}

std::int64_t Classifier::Expected(const Item& it, TimeMs at) const {
  if (it.out.kind == "turn") return 1;  // turns and pages are immutable
  std::int64_t best = 0;
  auto consider = [&](const Item& row) {
    for (const auto& [t, v] : row.versions) {
      if (t <= at) best = std::max(best, v);
    }
  };
  consider(it);
  // A fact whose versions are rows of one memory: the newest committed
  // version of any of its rows is the expected one.
  auto f = facts_.find(it.out.id);
  auto group = f == facts_.end() ? memory_rows_.end() : memory_rows_.find(f->second->memory);
  if (group != memory_rows_.end()) {
    for (auto row : group->second) {
      auto other = items_.find({"fact", row});
      if (row != it.out.id && other != items_.end()) consider(other->second);
    }
  }
  if (best == 0 && f != facts_.end() && f->second->record_time <= at) best = f->second->version;
  return best;
}

void Classifier::CheckUses() {
  for (const Receipt* r : uses_) {
    const bool gen = r->memory_kind == "generation";
    const std::string key = ScopeKey(r->tenant, r->user_scope, r->assistant_scope);
    Item* owner = gen ? &items_.at({"generation", r->id}) : nullptr;
    auto flag_use = [&](HealthState s, const std::string& why) {
      if (owner) {
        Flag(*owner, s, why, r->run_id);
      } else {
        Event(*r, s, why);
      }
    };
    std::vector<VersionRef> refs;
    if (!ParseVersionRefs(r->depends_on_version, &refs)) {
      flag_use(HealthState::kUncertain, "unreadable version list");
      continue;
    }
    if (gen) {
      auto t = turns_.find(owner->answer_turn);
      if (t == turns_.end()) {
        Flag(*owner, HealthState::kSourceAtRisk, "the admitted answer turn is missing", r->run_id);
      }
      bool had_memory = false;
      for (const auto& [at, run] : memory_commits_[key]) {
        if (at > r->at_utc) break;
        had_memory = had_memory || run != r->run_id;
      }
      if (refs.empty() && had_memory) {
        Flag(*owner, HealthState::kGenerationUnverified,
             "answer without a dependency receipt naming the memory versions it used", r->run_id);
      }
    }
    for (const auto& ref : refs) {
      if (ref.kind == "profile") continue;
      const std::string name = ref.kind + ":" + std::to_string(ref.id);
      Item* target = Resolve(ref.kind, ref.id);
      if (!target) {
        flag_use(HealthState::kUncertain, name + " is not in the store");
        continue;
      }
      const std::string verb = gen ? "used by a generation" : "returned by a retrieval";
      if (target->key != key) {
        Flag(*target, HealthState::kScopeConflict, verb + " of another user or assistant scope", r->run_id);
        flag_use(HealthState::kScopeConflict, name + " belongs to another user or assistant scope");
        continue;
      }
      const std::int64_t want = Expected(*target, r->at_utc);
      if (want == 0 || ref.version > want) {
        flag_use(HealthState::kUncertain, name + "@" + std::to_string(ref.version) + " has no matching commit");
      } else if (ref.version < want) {
        const std::string why = name + " " + verb + " at version " + std::to_string(ref.version) +
                                " while version " + std::to_string(want) + " was current";
        Flag(*target, HealthState::kStaleRetrieval, why, r->run_id);
        flag_use(HealthState::kStaleRetrieval, why);
      }
    }
  }
}

void Classifier::CheckRuns() {
  std::set<std::string> crossed;
  for (const auto& [run, keys] : run_keys_) {
    if (keys.size() > 1) crossed.insert(run);
  }
  if (crossed.empty()) return;
  for (const auto& r : e_.receipts) {
    if (!crossed.count(r.run_id) || r.memory_kind == "scope") continue;
    std::string key = ScopeKey(r.tenant, r.user_scope, r.assistant_scope);
    auto purged = purged_at_.find(key);
    if (purged != purged_at_.end() && r.at_utc <= purged->second) continue;
    const std::string why = "run " + r.run_id + " spans more than one user or assistant scope";
    std::int64_t id = r.memory_kind == "generation" ? r.id : r.memory_id;
    auto it = items_.find({r.memory_kind, id});
    if (it != items_.end()) {
      Flag(it->second, HealthState::kScopeConflict, why, r.run_id);
    } else {
      Event(r, HealthState::kScopeConflict, why);
    }
  }
}

void Classifier::Expire() {
  if (p_.horizon_ms <= 0) return;
  for (auto& [k, it] : items_) {
    if (!IsGreen(it.out.state)) continue;
    TimeMs fresh = it.fresh;
    auto v = verified_at_.find(it.key);
    if (v != verified_at_.end()) fresh = std::max(fresh, v->second);
    if (p_.now - fresh > p_.horizon_ms) {
      Flag(it, HealthState::kUncertain,
           fresh ? "newest evidence (" + FormatTime(fresh) + ") is older than the horizon"
                 : "no evidence within the horizon");
    }
  }
}

}  // namespace engram::lineage::detail
