#include "lineage/reconcile.hpp"

#include "lineage/receipts.hpp"

namespace engram::lineage {

namespace {

// One integer from a query with one (b < 0) or two bindings.
Result<std::int64_t> One(sql::Db* db, const char* sql, std::int64_t a, std::int64_t b = -1) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(sql));
  st->Bind(1, a);
  if (b >= 0) st->Bind(2, b);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::int64_t v = row ? st->Int(0) : 0;
  st->Reset();
  return v;
}

// Checks one commit receipt of the run against the rows it names.
Result<bool> CommitHolds(sql::Db* db, const std::string& kind, std::int64_t id, std::int64_t version,
                         const std::string& outcome) {
  if (kind == "turn") {
    std::int64_t page = OutcomeId(outcome, "pages.id=");
    ENGRAM_ASSIGN_OR_RETURN(
        std::int64_t n,
        One(db, "SELECT count(*) FROM turns t JOIN pages p ON p.id = t.page_id "
                "WHERE t.id = ?1 AND t.page_id = ?2 AND p.turn_id = t.id", id, page));
    return n == 1;
  }
  if (kind == "segment") {
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t n,
                            One(db, "SELECT count(*) FROM segments WHERE id = ?1 AND version >= ?2", id, version));
    return n == 1;
  }
  if (kind == "fact") {
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t n,
                            One(db, "SELECT count(*) FROM facts WHERE id = ?1 AND version >= ?2", id, version));
    return n == 1;
  }
  return true;  // profile slots are keyed by dimension; nothing to look up
}

}  // namespace

Status WriteJobReceipt(sql::Db* db, const JobRef& job, const std::string& run_id,
                       const std::string& status, const std::string& outcome, TimeMs now) {
  Receipt r;
  r.run_id = run_id;
  r.tenant = job.scope.tenant;
  r.user_scope = job.scope.user;
  r.assistant_scope = job.scope.assistant;
  r.memory_kind = "job";
  r.memory_id = job.job_id;
  r.source_version = job.source_version;
  r.from_tier = job.kind == "promote" ? "stm" : "mtm";
  r.to_tier = job.kind == "promote" ? "mtm" : "lpm";
  r.status = status;
  r.at_utc = now;
  r.outcome_receipt = outcome;
  return Write(db, r);
}

Result<std::vector<Reconciled>> ReconcileOpenRuns(sql::Db* db, const JobRef& job, TimeMs now) {
  std::vector<Reconciled> open;
  {
    ENGRAM_ASSIGN_OR_RETURN(
        sql::Stmt * st,
        db->Prepare("SELECT s.run_id, s.memory_id FROM receipts s WHERE s.memory_kind = 'job' AND "
                    "s.status = 'started' AND s.memory_id IN (SELECT id FROM jobs WHERE scope_id = ?1 "
                    "AND kind = ?2) AND NOT EXISTS (SELECT 1 FROM receipts o WHERE o.run_id = s.run_id "
                    "AND o.memory_kind = 'job' AND o.status <> 'started') ORDER BY s.id"));
    st->Bind(1, job.scope_id).Bind(2, job.kind);
    for (;;) {
      ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
      if (!row) break;
      Reconciled r;
      r.run_id = st->Text(0);
      r.job_id = st->Int(1);
      open.push_back(std::move(r));
    }
    st->Reset();
  }
  if (open.empty()) return open;
  ENGRAM_ASSIGN_OR_RETURN(
      std::int64_t stm,
      One(db, "SELECT count(*) FROM turns WHERE scope_id = ?1 AND page_id IS NULL", job.scope_id));
  const char* to = job.kind == "promote" ? "mtm" : "lpm";
  for (auto& rec : open) {
    rec.stm_turns = stm;
    struct Commit {
      std::string kind;
      std::int64_t id, version;
      std::string outcome;
    };
    std::vector<Commit> commits;
    {
      ENGRAM_ASSIGN_OR_RETURN(
          sql::Stmt * st,
          db->Prepare("SELECT memory_kind, memory_id, version, outcome_receipt FROM receipts "
                      "WHERE run_id = ?1 AND memory_kind <> 'job' AND to_tier = ?2 AND "
                      "status IN ('committed', 'degraded') ORDER BY id"));
      st->Bind(1, rec.run_id).Bind(2, to);
      for (;;) {
        ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
        if (!row) break;
        commits.push_back({st->Text(0), st->Int(1), st->Int(2), st->Text(3)});
      }
      st->Reset();
    }
    for (const auto& c : commits) {
      ++rec.committed;
      ENGRAM_ASSIGN_OR_RETURN(bool holds, CommitHolds(db, c.kind, c.id, c.version, c.outcome));
      if (holds) ++rec.verified;
    }
    JobRef j = job;
    j.job_id = rec.job_id;
    const bool ok = rec.verified == rec.committed;
    ENGRAM_RETURN_IF_ERROR(WriteJobReceipt(
        db, j, rec.run_id, ok ? "verified" : "failed",
        "reconciled committed=" + std::to_string(rec.committed) + " verified=" +
            std::to_string(rec.verified) + " stm_turns=" + std::to_string(rec.stm_turns),
        now));
  }
  return open;
}

}  // namespace engram::lineage
