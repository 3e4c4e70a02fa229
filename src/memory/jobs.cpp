#include "memory/jobs.hpp"

#include <map>
#include <set>

#include "lineage/receipts.hpp"
#include "lineage/reconcile.hpp"
#include "memory/lpm.hpp"
#include "memory/scope_store.hpp"
#include "memory/stm.hpp"
#include "store/errors.hpp"
#include "store/jobs.hpp"
#include "store/segments.hpp"

namespace engram::memory {

namespace {

lineage::JobRef JobRefOf(const JobRow& job, const ScopeRow& scope, const MemoryConfig& config) {
  return {scope.scope, job.scope_id, job.id, job.kind, config.source_version};
}

// Opens an attempt in its own small transaction: runs of this scope's jobs of
// the same kind that started and never reached an outcome are reconciled by
// run id and version first (docs/LINEAGE.md), then a "started" receipt names
// the new run.
Status BeginAttempt(const WriterDb& w, const JobRow& job, const std::string& run_id,
                    const MemoryConfig& config, TimeMs now, int attempt) {
  std::lock_guard<std::mutex> lock(*w.mu);
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(w.db));
  ENGRAM_RETURN_IF_ERROR(store::RenewJobLease(w.db, job.id, job.lease_holder, now, config.job_lease_ms));
  ENGRAM_ASSIGN_OR_RETURN(ScopeRow scope, LoadScope(w.db, job.scope_id));
  lineage::JobRef ref = JobRefOf(job, scope, config);
  ENGRAM_RETURN_IF_ERROR(lineage::ReconcileOpenRuns(w.db, ref, now).status());
  ENGRAM_RETURN_IF_ERROR(lineage::WriteJobReceipt(
      w.db, ref, run_id, "started",
      "jobs.id=" + std::to_string(job.id) + " attempt=" + std::to_string(attempt), now));
  return txn->Commit();
}

// The "failed" receipt of a run; its outcome names the error's code.
Status WriteFailedRun(sql::Db* db, const JobRow& job, const ScopeRow& scope, const std::string& run_id,
                      const Status& result, const MemoryConfig& config, TimeMs now) {
  return lineage::WriteJobReceipt(db, JobRefOf(job, scope, config), run_id, "failed",
                                  std::string(StatusCodeName(result.code())), now);
}

// Records the outcome of one attempt in its own small transaction, with a
// receipt naming the run.
Status FinishAttempt(const WriterDb& w, const JobRow& job, const std::string& run_id,
                     const Status& result, bool final_attempt, const MemoryConfig& config,
                     TimeMs now) {
  std::lock_guard<std::mutex> lock(*w.mu);
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(w.db));
  ENGRAM_ASSIGN_OR_RETURN(ScopeRow scope, LoadScope(w.db, job.scope_id));
  ENGRAM_RETURN_IF_ERROR(store::FinishJobAttempt(w.db, job.id, job.lease_holder, result, final_attempt, now,
                                                 config.job_lease_ms));
  if (!result.ok()) {
    ENGRAM_RETURN_IF_ERROR(WriteFailedRun(w.db, job, scope, run_id, result, config, now));
  } else {
    ENGRAM_RETURN_IF_ERROR(lineage::WriteJobReceipt(w.db, JobRefOf(job, scope, config), run_id,
                                                    "committed",
                                                    "jobs.id=" + std::to_string(job.id) + " done", now));
  }
  return txn->Commit();
}

// Extends the job's lease before more work; Aborted when it was taken over.
Status RenewLease(const WriterDb& w, const JobRow& job, const MemoryConfig& config, const MemoryDeps& deps) {
  std::lock_guard<std::mutex> lock(*w.mu);
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(w.db));
  ENGRAM_RETURN_IF_ERROR(
      store::RenewJobLease(w.db, job.id, job.lease_holder, deps.clock->NowMs(), config.job_lease_ms));
  return txn->Commit();
}

// A store that cannot be written (unavailable: I/O error, lost connection,
// lock timeout; or full): not the job's failure, and every attempt would meet
// it until it clears.
bool IsStoreFault(const Status& st) { return sql::IsStoreUnavailable(st) || sql::IsStoreFull(st); }

// Gives the lease back when a run stops without an outcome (a store error),
// so that the job is not held until the lease expires. When the store cannot
// even record that, the lease stays with this holder, which takes it back on
// its next run (store::LeaseNextJob).
void Release(const WriterDb& w, const JobRow& job, const MemoryDeps& deps) {
  std::lock_guard<std::mutex> lock(*w.mu);
  auto txn = sql::Txn::Begin(w.db);
  if (!txn.ok()) return;
  if (store::ReleaseJobLease(w.db, job.id, job.lease_holder, deps.clock->NowMs()).ok()) (void)(*txn)->Commit();
}

// Release after a run that met a store fault: the run's "failed" receipt
// and the lease given back, together. When the store cannot record even that,
// the lease stays with this holder (taken back by its next run) and the run
// stays open until the next attempt reconciles it.
void ReleaseFailedRun(const WriterDb& w, const JobRow& job, const std::string& run_id, const Status& why,
                      const MemoryConfig& config, const MemoryDeps& deps) {
  std::lock_guard<std::mutex> lock(*w.mu);
  auto txn = sql::Txn::Begin(w.db);
  if (!txn.ok()) return;
  const TimeMs now = deps.clock->NowMs();
  auto scope = LoadScope(w.db, job.scope_id);
  if (!scope.ok() || !store::ReleaseJobLease(w.db, job.id, job.lease_holder, now).ok() ||
      !WriteFailedRun(w.db, job, *scope, run_id, why, config, now).ok()) {
    return;
  }
  (void)(*txn)->Commit();
}

Status RunPromote(const WriterDb& w, const JobRow& job, const MemoryConfig& config,
                  const MemoryDeps& deps, const std::string& run_id, MaintainReport* report) {
  for (int aborted = 0, batch = 0;; ++batch) {
    if (batch > 0) ENGRAM_RETURN_IF_ERROR(RenewLease(w, job, config, deps));
    auto r = PromoteBatch(w, job.scope_id, config, deps, run_id);
    if (!r.ok()) {
      if (r.status().code() == StatusCode::kAborted && ++aborted < 5) continue;
      return r.status();
    }
    report->pages_created += r->pages;
    report->segments_created += r->segments_created;
    report->segments_merged += r->segments_merged;
    report->segments_archived += r->segments_archived;
    report->model_calls += r->model_calls;
    report->degraded = report->degraded || r->degraded;
    if (r->pages > 0) ++report->promotions;
    if (!r->more) break;
  }
  std::lock_guard<std::mutex> lock(*w.mu);
  TimeMs now = deps.clock->NowMs();
  ENGRAM_ASSIGN_OR_RETURN(bool hot, HasConsolidationWork(w.db, job.scope_id, config, now));
  if (hot) ENGRAM_RETURN_IF_ERROR(store::ArmJob(w.db, job.scope_id, "consolidate", now));
  return Status::Ok();
}

Status RunConsolidate(const WriterDb& w, const JobRow& job, const MemoryConfig& config,
                      const MemoryDeps& deps, const std::string& run_id, MaintainReport* report) {
  for (int aborted = 0, batch = 0;; ++batch) {
    if (batch > 0) ENGRAM_RETURN_IF_ERROR(RenewLease(w, job, config, deps));
    auto r = ConsolidateBatch(w, job.scope_id, config, deps, run_id, false);
    if (!r.ok()) {
      if (r.status().code() == StatusCode::kAborted && ++aborted < 5) continue;
      return r.status();
    }
    if (r->pages > 0) ++report->consolidations;
    report->facts_added += r->facts_added;
    report->profile_slots_updated += r->slots_updated;
    report->model_calls += r->model_calls;
    report->degraded = report->degraded || r->degraded;
    if (!r->more) break;
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<JobRow>> ListJobs(sql::Db* db, const std::string& status, std::int64_t scope_id) {
  return store::ListJobRows(db, {status}, scope_id);
}

Status ApplyAccessLog(const WriterDb& w, const AccessLog& log, const MemoryConfig& config,
                      TimeMs now) {
  if (log.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(*w.mu);
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(w.db));
  std::set<std::int64_t> scopes;
  for (const auto& [seg, hit] : log) {
    ENGRAM_ASSIGN_OR_RETURN(auto scope, store::AddSegmentVisits(w.db, seg, hit.first, hit.second));
    if (scope) scopes.insert(*scope);
  }
  for (auto scope_id : scopes) {
    ENGRAM_ASSIGN_OR_RETURN(bool hot, HasConsolidationWork(w.db, scope_id, config, now));
    if (hot) ENGRAM_RETURN_IF_ERROR(store::ArmJob(w.db, scope_id, "consolidate", now));
  }
  return txn->Commit();
}

Result<MaintainReport> RunPendingJobs(const WriterDb& w, std::int64_t scope_id,
                                      const MemoryConfig& config, const MemoryDeps& deps) {
  // A job re-armed by admissions while it ran is pending again; it is run
  // again in this call, at most kMaxRunsPerCall times, so that a call ends
  // even while admissions keep coming.
  constexpr int kMaxRunsPerCall = 3;
  MaintainReport report;
  std::map<std::int64_t, int> runs;
  std::vector<std::int64_t> skip;
  for (;;) {
    std::optional<JobRow> leased;
    {
      std::lock_guard<std::mutex> lock(*w.mu);
      ENGRAM_ASSIGN_OR_RETURN(leased, store::LeaseNextJob(w.db, deps.job_holder, scope_id, skip,
                                                          deps.clock->NowMs(), config.job_lease_ms,
                                                          deps.holder_gone));
    }
    if (!leased) break;
    const JobRow& job = *leased;
    if (++runs[job.id] >= kMaxRunsPerCall) skip.push_back(job.id);
    Status st;
    bool lost = false;
    for (int attempt = job.attempts; attempt < config.max_job_attempts; ++attempt) {
      std::string run_id = lineage::NewRunId();
      Status begun = BeginAttempt(w, job, run_id, config, deps.clock->NowMs(), attempt + 1);
      if (store::IsLeaseLost(begun)) {
        lost = true;
        break;
      }
      if (!begun.ok()) {
        Release(w, job, deps);
        return begun;
      }
      st = job.kind == "promote" ? RunPromote(w, job, config, deps, run_id, &report)
                                 : RunConsolidate(w, job, config, deps, run_id, &report);
      if (store::IsLeaseLost(st)) {
        lost = true;
        break;
      }
      if (IsStoreFault(st)) {
        // Nothing was committed and no attempt is counted: the job is pending
        // again and runs once the store can be written.
        ReleaseFailedRun(w, job, run_id, st, config, deps);
        return st;
      }
      bool final_attempt = st.ok() || attempt + 1 >= config.max_job_attempts;
      Status finished = FinishAttempt(w, job, run_id, st, final_attempt, config, deps.clock->NowMs());
      if (store::IsLeaseLost(finished)) {
        lost = true;
        break;
      }
      if (!finished.ok()) {
        Release(w, job, deps);
        return finished;
      }
      if (st.ok()) break;
    }
    if (lost) {
      // Another process took the job over (this one was presumed dead): its
      // outcome is the new holder's to record.
      skip.push_back(job.id);
      continue;
    }
    if (!st.ok()) {
      ++report.jobs_failed;
      skip.push_back(job.id);
    }
  }
  return report;
}

Result<int> RetryFailedJobs(const WriterDb& w, std::int64_t scope_id, TimeMs now) {
  std::lock_guard<std::mutex> lock(*w.mu);
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(w.db));
  ENGRAM_ASSIGN_OR_RETURN(int n, store::RetryFailedJobRows(w.db, scope_id, now));
  ENGRAM_RETURN_IF_ERROR(txn->Commit());
  return n;
}

}  // namespace engram::memory
