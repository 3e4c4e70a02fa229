#include "memory/lpm.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/text.hpp"
#include "lineage/receipts.hpp"
#include "memory/facts/fact_store.hpp"
#include "memory/mtm.hpp"
#include "memory/scope_store.hpp"

namespace engram::memory {

namespace {

// Steps a write with "RETURNING <id>, version" once: the (id, version) written.
Result<std::pair<std::int64_t, std::int64_t>> StepIdVersion(sql::Stmt* st) {
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) {
    st->Reset();
    return Status::Internal("write returned no row");
  }
  std::pair<std::int64_t, std::int64_t> out{st->Int(0), st->Int(1)};
  st->Reset();
  return out;
}

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
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT p.id, t.user_text, t.assistant_text, t.user_name, t.assistant_name, "
                  "t.event_time FROM pages p JOIN turns t ON t.id = p.turn_id "
                  "WHERE p.segment_id = ? AND p.analyzed = 0 ORDER BY p.id"));
  std::vector<PendingPage> out;
  *more = false;
  for (const auto& [heat, seg_id] : hot) {
    st->Reset();
    st->Bind(1, seg_id);
    for (;;) {
      ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
      if (!row) break;
      if (static_cast<int>(out.size()) >= config.consolidate_batch_max) {
        *more = true;
        break;
      }
      PendingPage p;
      p.segment_id = seg_id;
      p.page.page_id = st->Int(0);
      p.page.user_text = st->Text(1);
      p.page.assistant_text = st->Text(2);
      std::string un = st->Text(3), an = st->Text(4);
      if (!un.empty()) p.page.user_name = un;
      if (!an.empty()) p.page.assistant_name = an;
      p.page.event_time = st->Int(5);
      out.push_back(std::move(p));
    }
    if (*more) break;
  }
  st->Reset();
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
    ENGRAM_ASSIGN_OR_RETURN(vecs, deps.embedder->Embed(texts));
    if (vecs.size() != texts.size()) return Status::Internal("embedder returned a wrong count");
  }
  deps.Fault("consolidate.after_compute");

  std::lock_guard<std::mutex> lock(*w.mu);
  sql::Db* db = w.db;
  TimeMs now = deps.clock->NowMs();
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * mark,
                          db->Prepare("UPDATE pages SET analyzed = 1 WHERE id = ? AND analyzed = 0"));
  std::set<std::int64_t> segments;
  for (const auto& p : pending) {
    ENGRAM_RETURN_IF_ERROR(mark->Bind(1, p.page.page_id).Run());
    if (db->Changes() != 1) return Status::Aborted("page analysed concurrently");
    segments.insert(p.segment_id);
  }
  lineage::Receipt base;
  base.run_id = run_id;
  base.tenant = scope.scope.tenant;
  base.user_scope = scope.scope.user;
  base.assistant_scope = scope.scope.assistant;
  base.source_version = config.source_version;
  base.at_utc = now;

  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * slot,
      db->Prepare("INSERT INTO profile_slots(scope_id, dimension, value, evidence, updated_at, "
                  "degraded) VALUES(?,?,?,?,?,?) ON CONFLICT(scope_id, dimension) DO UPDATE SET "
                  "value = excluded.value, evidence = excluded.evidence, updated_at = "
                  "excluded.updated_at, version = version + 1, degraded = excluded.degraded "
                  "RETURNING rowid, version"));
  for (const auto& u : c.slot_updates) {
    if (u.dimension.empty() || u.value.empty()) continue;
    std::vector<std::int64_t> evidence = u.evidence_pages;
    for (const auto& old : profile) {
      if (old.dimension != u.dimension) continue;
      for (auto id : old.evidence_pages) {
        if (std::find(evidence.begin(), evidence.end(), id) == evidence.end()) evidence.push_back(id);
      }
    }
    slot->Bind(1, scope_id)
        .Bind(2, u.dimension)
        .Bind(3, u.value)
        .Bind(4, IdsToJson(evidence))
        .Bind(5, now)
        .Bind(6, c.degraded ? 1 : 0);
    ENGRAM_ASSIGN_OR_RETURN(auto slot_version, StepIdVersion(slot));
    lineage::Receipt r = base;
    r.memory_kind = "profile_slot";
    r.memory_id = slot_version.first;  // the slot's row id
    r.version = slot_version.second;
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
  std::size_t v = 0;
  for (const auto& f : c.user_facts) {
    ENGRAM_ASSIGN_OR_RETURN(bool added, InsertFact(fctx, "user", f, vecs[v++], c.degraded));
    added ? ++out.facts_added : ++out.facts_duplicate;
  }
  for (const auto& f : c.assistant_facts) {
    ENGRAM_ASSIGN_OR_RETURN(bool added, InsertFact(fctx, "assistant", f, vecs[v++], c.degraded));
    added ? ++out.facts_added : ++out.facts_duplicate;
  }
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * reset,
      db->Prepare("UPDATE segments SET visits = 0, interaction = 0, version = version + 1 "
                  "WHERE id = ? RETURNING id, version"));
  for (auto id : segments) {
    reset->Bind(1, id);
    ENGRAM_ASSIGN_OR_RETURN(auto seg_version, StepIdVersion(reset));
    lineage::Receipt r = base;
    r.memory_kind = "segment";
    r.memory_id = id;
    r.version = seg_version.second;
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
  out.pages = static_cast<int>(pending.size());
  return out;
}

Result<std::vector<ProfileSlot>> LoadProfile(sql::Db* db, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT dimension, value, evidence, updated_at FROM profile_slots "
                  "WHERE scope_id = ? ORDER BY dimension"));
  st->Bind(1, scope_id);
  std::vector<ProfileSlot> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back({st->Text(0), st->Text(1), IdsFromJson(st->Text(2)), st->Int(3)});
  }
  st->Reset();
  return out;
}

std::string RenderProfile(const std::vector<ProfileSlot>& slots) {
  std::string out;
  for (const auto& s : slots) {
    if (!out.empty()) out += "\n";
    out += s.dimension + ": " + s.value;
  }
  return out;
}

Result<std::vector<Fact>> LoadFacts(sql::Db* db, std::int64_t scope_id, const std::string& kind) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT id, version, kind, text, source_pages, event_time, record_time, degraded "
                  "FROM facts WHERE scope_id = ? AND status = 'live' AND (? = '' OR kind = ?) "
                  "AND kind IN ('user','assistant') "
                  "ORDER BY id"));
  st->Bind(1, scope_id).Bind(2, kind).Bind(3, kind);
  std::vector<Fact> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    Fact f;
    f.id = st->Int(0);
    f.version = st->Int(1);
    f.kind = st->Text(2);
    f.text = st->Text(3);
    f.source_pages = IdsFromJson(st->Text(4));
    f.event_time = st->Int(5);
    f.record_time = st->Int(6);
    f.degraded = st->Int(7) != 0;
    out.push_back(std::move(f));
  }
  st->Reset();
  return out;
}

}  // namespace engram::memory
