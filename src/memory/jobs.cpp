#include "memory/jobs.hpp"

#include <set>

#include "lineage/receipts.hpp"
#include "lineage/reconcile.hpp"
#include "memory/lpm.hpp"
#include "memory/scope_store.hpp"
#include "memory/stm.hpp"

namespace engram::memory {

namespace {

Result<std::vector<JobRow>> Collect(sql::Stmt* st) {
  std::vector<JobRow> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    JobRow j;
    j.id = st->Int(0);
    j.scope_id = st->Int(1);
    j.kind = st->Text(2);
    j.status = st->Text(3);
    j.attempts = static_cast<int>(st->Int(4));
    j.last_error = st->Text(5);
    j.created_at = st->Int(6);
    j.updated_at = st->Int(7);
    out.push_back(std::move(j));
  }
  st->Reset();
  return out;
}

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
  ENGRAM_ASSIGN_OR_RETURN(ScopeRow scope, LoadScope(w.db, job.scope_id));
  lineage::JobRef ref = JobRefOf(job, scope, config);
  ENGRAM_RETURN_IF_ERROR(lineage::ReconcileOpenRuns(w.db, ref, now).status());
  ENGRAM_RETURN_IF_ERROR(lineage::WriteJobReceipt(
      w.db, ref, run_id, "started",
      "jobs.id=" + std::to_string(job.id) + " attempt=" + std::to_string(attempt), now));
  return txn->Commit();
}

// Records the outcome of one attempt in its own small transaction, with a
// receipt naming the run.
Status FinishAttempt(const WriterDb& w, const JobRow& job, const std::string& run_id,
                     const Status& result, bool final_attempt, const MemoryConfig& config,
                     TimeMs now) {
  std::lock_guard<std::mutex> lock(*w.mu);
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(w.db));
  ENGRAM_ASSIGN_OR_RETURN(ScopeRow scope, LoadScope(w.db, job.scope_id));
  const char* status = result.ok() ? "done" : (final_attempt ? "failed" : "pending");
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      w.db->Prepare("UPDATE jobs SET status = ?, attempts = attempts + 1, last_error = ?, "
                    "run_id = ?, updated_at = ? WHERE id = ?"));
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, status)
                             .Bind(2, result.ok() ? std::string() : result.ToString())
                             .Bind(3, run_id)
                             .Bind(4, now)
                             .Bind(5, job.id)
                             .Run());
  if (result.ok()) {
    // Earlier failures of the same work are resolved by this success.
    ENGRAM_ASSIGN_OR_RETURN(
        sql::Stmt * res,
        w.db->Prepare("UPDATE jobs SET status = 'done', updated_at = ? "
                      "WHERE scope_id = ? AND kind = ? AND status = 'failed'"));
    ENGRAM_RETURN_IF_ERROR(res->Bind(1, now).Bind(2, job.scope_id).Bind(3, job.kind).Run());
  }
  if (!result.ok()) {
    lineage::Receipt r;
    r.run_id = run_id;
    r.tenant = scope.scope.tenant;
    r.user_scope = scope.scope.user;
    r.assistant_scope = scope.scope.assistant;
    r.memory_kind = "job";
    r.memory_id = job.id;
    r.source_version = config.source_version;
    r.from_tier = job.kind == "promote" ? "stm" : "mtm";
    r.to_tier = job.kind == "promote" ? "mtm" : "lpm";
    r.status = "failed";
    r.at_utc = now;
    r.outcome_receipt = std::string(StatusCodeName(result.code()));
    ENGRAM_RETURN_IF_ERROR(lineage::Write(w.db, r));
  } else {
    ENGRAM_RETURN_IF_ERROR(lineage::WriteJobReceipt(w.db, JobRefOf(job, scope, config), run_id,
                                                    "committed",
                                                    "jobs.id=" + std::to_string(job.id) + " done", now));
  }
  return txn->Commit();
}

Status RunPromote(const WriterDb& w, const JobRow& job, const MemoryConfig& config,
                  const MemoryDeps& deps, const std::string& run_id, MaintainReport* report) {
  for (int aborted = 0;;) {
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
  if (hot) ENGRAM_RETURN_IF_ERROR(EnsurePendingJob(w.db, job.scope_id, "consolidate", now));
  return Status::Ok();
}

Status RunConsolidate(const WriterDb& w, const JobRow& job, const MemoryConfig& config,
                      const MemoryDeps& deps, const std::string& run_id, MaintainReport* report) {
  for (int aborted = 0;;) {
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
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT id, scope_id, kind, status, attempts, last_error, created_at, updated_at "
                  "FROM jobs WHERE status = ? AND (? = 0 OR scope_id = ?) "
                  "ORDER BY CASE kind WHEN 'promote' THEN 0 ELSE 1 END, id"));
  st->Bind(1, status).Bind(2, scope_id).Bind(3, scope_id);
  return Collect(st);
}

Status ApplyAccessLog(const WriterDb& w, const AccessLog& log, const MemoryConfig& config,
                      TimeMs now) {
  if (log.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(*w.mu);
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(w.db));
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      w.db->Prepare("UPDATE segments SET visits = visits + ?, last_access = max(last_access, ?) "
                    "WHERE id = ? AND archived_at IS NULL RETURNING scope_id"));
  std::set<std::int64_t> scopes;
  for (const auto& [seg, hit] : log) {
    st->Bind(1, hit.first).Bind(2, hit.second).Bind(3, seg);
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (row) scopes.insert(st->Int(0));
    st->Reset();
  }
  for (auto scope_id : scopes) {
    ENGRAM_ASSIGN_OR_RETURN(bool hot, HasConsolidationWork(w.db, scope_id, config, now));
    if (hot) ENGRAM_RETURN_IF_ERROR(EnsurePendingJob(w.db, scope_id, "consolidate", now));
  }
  return txn->Commit();
}

Result<MaintainReport> RunPendingJobs(const WriterDb& w, std::int64_t scope_id,
                                      const MemoryConfig& config, const MemoryDeps& deps) {
  MaintainReport report;
  std::set<std::int64_t> finished;  // jobs that reached an outcome in this call
  for (;;) {
    std::vector<JobRow> jobs;
    {
      std::lock_guard<std::mutex> lock(*w.mu);
      ENGRAM_ASSIGN_OR_RETURN(jobs, ListJobs(w.db, "pending", scope_id));
    }
    bool progressed = false;
    for (const auto& job : jobs) {
      if (finished.count(job.id)) continue;
      progressed = true;
      Status st;
      std::string run_id;
      for (int attempt = job.attempts; attempt < config.max_job_attempts; ++attempt) {
        run_id = lineage::NewRunId();
        ENGRAM_RETURN_IF_ERROR(
            BeginAttempt(w, job, run_id, config, deps.clock->NowMs(), attempt + 1));
        st = job.kind == "promote" ? RunPromote(w, job, config, deps, run_id, &report)
                                   : RunConsolidate(w, job, config, deps, run_id, &report);
        bool final_attempt = st.ok() || attempt + 1 >= config.max_job_attempts;
        ENGRAM_RETURN_IF_ERROR(
            FinishAttempt(w, job, run_id, st, final_attempt, config, deps.clock->NowMs()));
        if (st.ok()) break;
      }
      if (!st.ok()) ++report.jobs_failed;
      finished.insert(job.id);
    }
    if (!progressed) break;
  }
  return report;
}

Result<int> RetryFailedJobs(const WriterDb& w, std::int64_t scope_id, TimeMs now) {
  std::lock_guard<std::mutex> lock(*w.mu);
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(w.db));
  ENGRAM_ASSIGN_OR_RETURN(auto failed, ListJobs(w.db, "failed", scope_id));
  int n = 0;
  for (const auto& j : failed) {
    ENGRAM_RETURN_IF_ERROR(EnsurePendingJob(w.db, j.scope_id, j.kind.c_str(), now));
    ++n;
  }
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      w.db->Prepare("UPDATE jobs SET status = 'done', last_error = last_error || ' (retried)', "
                    "updated_at = ? WHERE status = 'failed' AND (? = 0 OR scope_id = ?)"));
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, now).Bind(2, scope_id).Bind(3, scope_id).Run());
  ENGRAM_RETURN_IF_ERROR(txn->Commit());
  return n;
}

}  // namespace engram::memory
