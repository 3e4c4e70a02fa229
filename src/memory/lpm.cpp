#include "memory/lpm.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/text.hpp"
#include "core/wordnet.hpp"
#include "lineage/receipts.hpp"
#include "memory/facts/fact_store.hpp"
#include "memory/facts/fact_vectors.hpp"
#include "memory/mtm.hpp"
#include "memory/scope_store.hpp"
#include "store/segments.hpp"

namespace engram::memory {

namespace {

struct PendingPage {
  ConsolidationPage page;
  std::int64_t segment_id = 0;
};

Result<std::vector<PendingPage>> ReadEligiblePages(sql::Db* db, std::int64_t scope_id,
                                                   const MemoryConfig& config, TimeMs now,
                                                   bool force, bool* more) {
  ENGRAM_ASSIGN_OR_RETURN(auto segs, LoadSegments(db, scope_id, false));
  std::vector<std::pair<double, std::int64_t>> hot;
  for (const auto& s : segs) {
    double h = Heat(s, now, config.heat_tau_hours);
    if (force || h >= config.heat_threshold) hot.emplace_back(h, s.id);
  }
  std::sort(hot.rbegin(), hot.rend());
  std::vector<PendingPage> out;
  *more = false;
  for (const auto& [heat, seg_id] : hot) {
    // One more than still fits tells whether more is left.
    const int room = config.consolidate_batch_max - static_cast<int>(out.size());
    ENGRAM_ASSIGN_OR_RETURN(auto rows, store::LoadUnanalysedPages(db, seg_id, room + 1));
    for (auto& r : rows) {
      if (static_cast<int>(out.size()) >= config.consolidate_batch_max) {
        *more = true;
        break;
      }
      PendingPage p;
      p.segment_id = seg_id;
      p.page.page_id = r.page_id;
      p.page.user_text = std::move(r.user_text);
      p.page.assistant_text = std::move(r.assistant_text);
      if (!r.user_name.empty()) p.page.user_name = r.user_name;
      if (!r.assistant_name.empty()) p.page.assistant_name = r.assistant_name;
      p.page.event_time = r.event_time;
      out.push_back(std::move(p));
    }
    if (*more) break;
  }
  return out;
}

// Inserts one consolidated fact through the fact store (the one code path:
// dedup, FTS, entities, history, receipt). False for a duplicate.
Result<bool> InsertFact(const facts::WriteContext& ctx, const char* kind, const ExtractedFact& f,
                        const Vector& emb, bool degraded) {
  facts::NewFact nf;
  nf.kind = kind;
  nf.text = f.text;
  nf.role = kind;
  nf.attributed_to = kind;
  nf.source_pages = f.source_pages;
  nf.event_time = f.event_time;
  nf.degraded = degraded;
  nf.embedding = emb;
  ENGRAM_ASSIGN_OR_RETURN(facts::WriteOutcome out, facts::InsertFact(ctx, nf));
  return out.event == "ADD";
}

}  // namespace

Result<bool> HasConsolidationWork(sql::Db* db, std::int64_t scope_id, const MemoryConfig& config,
                                  TimeMs now) {
  bool more = false;
  MemoryConfig one = config;
  one.consolidate_batch_max = 1;
  ENGRAM_ASSIGN_OR_RETURN(auto pages, ReadEligiblePages(db, scope_id, one, now, false, &more));
  return !pages.empty();
}

Result<ConsolidationResult> ConsolidateBatch(const WriterDb& w, std::int64_t scope_id,
                                             const MemoryConfig& config, const MemoryDeps& deps,
                                             const std::string& run_id, bool force) {
  ConsolidationResult out;
  std::vector<PendingPage> pending;
  std::vector<ProfileSlot> profile;
  ScopeRow scope;
  {
    std::lock_guard<std::mutex> lock(*w.mu);
    ENGRAM_ASSIGN_OR_RETURN(scope, LoadScope(w.db, scope_id));
    ENGRAM_ASSIGN_OR_RETURN(pending, ReadEligiblePages(w.db, scope_id, config,
                                                       deps.clock->NowMs(), force, &out.more));
    ENGRAM_ASSIGN_OR_RETURN(profile, LoadProfile(w.db, scope_id));
  }
  if (pending.empty()) return out;

  std::vector<ConsolidationPage> pages;
  for (const auto& p : pending) pages.push_back(p.page);
  ENGRAM_ASSIGN_OR_RETURN(Consolidation c, deps.maintainer->Consolidate(profile, pages));
  out.model_calls += c.model_calls;
  out.degraded = c.degraded;
  std::vector<std::string> texts;
  for (const auto& f : c.user_facts) texts.push_back(f.text);
  for (const auto& f : c.assistant_facts) texts.push_back(f.text);
  std::vector<Vector> vecs;
  if (!texts.empty()) {
    ENGRAM_ASSIGN_OR_RETURN(vecs, deps.EmbedderFor(scope.scope.tenant)->Embed(texts));
    if (vecs.size() != texts.size()) return Status::Internal("embedder returned a wrong count");
  }
  deps.Fault("consolidate.after_compute");

  std::lock_guard<std::mutex> lock(*w.mu);
  sql::Db* db = w.db;
  TimeMs now = deps.clock->NowMs();
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
  std::set<std::int64_t> segments;
  for (const auto& p : pending) {
    ENGRAM_RETURN_IF_ERROR(store::MarkPageAnalysed(db, p.page.page_id));
    segments.insert(p.segment_id);
  }
  lineage::Receipt base;
  base.run_id = run_id;
  base.tenant = scope.scope.tenant;
  base.user_scope = scope.scope.user;
  base.assistant_scope = scope.scope.assistant;
  base.source_version = config.source_version;
  base.at_utc = now;

  for (const auto& u : c.slot_updates) {
    if (u.dimension.empty() || u.value.empty()) continue;
    std::vector<std::int64_t> evidence = u.evidence_pages;
    for (const auto& old : profile) {
      if (old.dimension != u.dimension) continue;
      for (auto id : old.evidence_pages) {
        if (std::find(evidence.begin(), evidence.end(), id) == evidence.end()) evidence.push_back(id);
      }
    }
    ENGRAM_ASSIGN_OR_RETURN(
        store::SlotVersion slot_version,
        store::UpsertProfileSlot(db, scope_id, ProfileSlot{u.dimension, u.value, evidence, now}, c.degraded));
    lineage::Receipt r = base;
    r.memory_kind = "profile_slot";
    r.memory_id = slot_version.id;  // the slot's row id
    r.version = slot_version.version;
    r.from_tier = "mtm";
    r.to_tier = "lpm";
    r.status = c.degraded ? "degraded" : "committed";
    r.outcome_receipt = "profile_slots.dimension";
    ENGRAM_RETURN_IF_ERROR(lineage::Write(db, r));
    ++out.slots_updated;
  }
  facts::WriteContext fctx;
  fctx.db = db;
  fctx.scope_id = scope_id;
  fctx.ids = {scope.scope.tenant, scope.scope.user, scope.scope.assistant, "", false};
  fctx.row_scope = scope.scope;
  fctx.now = now;
  fctx.op_id = run_id;
  fctx.actor = "consolidation";
  fctx.source_version = config.source_version;
  fctx.from_tier = "mtm";
  fctx.near_duplicate = config.fact_near_duplicate;
  // The built-in engine also finds facts that say a live one in other words
  // (checked on the scan of the scope's facts each insert makes).
  if (const Embedder* e = deps.EmbedderFor(scope.scope.tenant); e && e->IsBuiltin()) {
    fctx.wordnet = wordnet::WordNet::Default();
  }
  // The scope's fact snapshot as committed, and this batch's changes: each
  // insert's duplicate check reads them instead of scanning every fact of
  // the scope (a scan per fact held the writer lock for seconds at 10k facts).
  std::shared_ptr<const facts::FactVectors> vectors;
  facts::FactChanges changes;
  if (deps.writer_fact_vectors && deps.publish_fact_vectors) {
    ENGRAM_ASSIGN_OR_RETURN(vectors, deps.writer_fact_vectors(db, scope_id));
    fctx.vectors = vectors.get();
    fctx.changes = &changes;
  }
  std::size_t v = 0;
  for (const auto& f : c.user_facts) {
    ENGRAM_ASSIGN_OR_RETURN(bool added, InsertFact(fctx, "user", f, vecs[v++], c.degraded));
    added ? ++out.facts_added : ++out.facts_duplicate;
  }
  for (const auto& f : c.assistant_facts) {
    ENGRAM_ASSIGN_OR_RETURN(bool added, InsertFact(fctx, "assistant", f, vecs[v++], c.degraded));
    added ? ++out.facts_added : ++out.facts_duplicate;
  }
  for (auto id : segments) {
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t seg_version, store::ResetSegmentCounters(db, id));
    lineage::Receipt r = base;
    r.memory_kind = "segment";
    r.memory_id = id;
    r.version = seg_version;
    r.from_tier = "mtm";
    r.to_tier = "lpm";
    r.status = c.degraded ? "degraded" : "committed";
    r.outcome_receipt = "consolidate pages=" + std::to_string(pending.size());
    ENGRAM_RETURN_IF_ERROR(lineage::Write(db, r));
  }
  ENGRAM_RETURN_IF_ERROR(BumpDataVersion(db, scope_id));
  deps.Fault("consolidate.before_commit");
  ENGRAM_RETURN_IF_ERROR(txn->Commit());
  deps.Fault("consolidate.after_commit");
  if (vectors) {
    // Not an error of the batch, which is committed: a snapshot left behind
    // is older than the scope's data version, and its next reader reloads it.
    const Status published = deps.publish_fact_vectors(db, *vectors, changes);
    (void)published;
  }
  out.pages = static_cast<int>(pending.size());
  return out;
}

Result<std::vector<ProfileSlot>> LoadProfile(sql::Db* db, std::int64_t scope_id) {
  return store::LoadProfileSlots(db, scope_id);
}

std::string RenderProfile(const std::vector<ProfileSlot>& slots) {
  std::string out;
  for (const auto& s : slots) {
    if (!out.empty()) out += "\n";
    out += s.dimension + ": " + s.value;
  }
  return out;
}

Result<std::vector<Fact>> LoadFacts(sql::Db* db, std::int64_t scope_id, std::int64_t user_scope_id,
                                    const std::string& kind, TimeMs now) {
  return store::LoadLongTermFacts(db, scope_id, user_scope_id, kind, now);
}

}  // namespace engram::memory
