#include "lineage/reconcile.hpp"

#include "lineage/receipts.hpp"
#include "store/receipts.hpp"

namespace engram::lineage {

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
  ENGRAM_ASSIGN_OR_RETURN(std::vector<store::OpenJobRun> runs, store::FindOpenJobRuns(db, job.scope_id, job.kind));
  for (auto& run : runs) {
    Reconciled r;
    r.run_id = std::move(run.run_id);
    r.job_id = run.job_id;
    open.push_back(std::move(r));
  }
  if (open.empty()) return open;
  ENGRAM_ASSIGN_OR_RETURN(std::int64_t stm, store::CountUnpagedTurns(db, job.scope_id));
  const char* to = job.kind == "promote" ? "mtm" : "lpm";
  for (auto& rec : open) {
    rec.stm_turns = stm;
    ENGRAM_ASSIGN_OR_RETURN(std::vector<store::RunCommit> commits, store::ListRunCommits(db, rec.run_id, to));
    for (const auto& c : commits) {
      ++rec.committed;
      // A turn's commit names the page it went into.
      const std::int64_t page = c.memory_kind == "turn" ? OutcomeId(c.outcome_receipt, "pages.id=") : 0;
      ENGRAM_ASSIGN_OR_RETURN(bool holds, store::CommitRowHolds(db, c.memory_kind, c.memory_id, c.version, page));
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
