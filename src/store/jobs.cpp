#include "store/jobs.hpp"

#include <algorithm>
#include <set>

#include "store/schema.hpp"

namespace engram::store {

namespace {

constexpr const char* kJobCols =
    "id, scope_id, kind, status, attempts, last_error, created_at, updated_at, lease_holder, lease_expires";

JobRow JobFrom(sql::Stmt* st, int c = 0) {
  JobRow j;
  j.id = st->Int(c + 0);
  j.scope_id = st->Int(c + 1);
  j.kind = st->Text(c + 2);
  j.status = st->Text(c + 3);
  j.attempts = static_cast<int>(st->Int(c + 4));
  j.last_error = st->Text(c + 5);
  j.created_at = st->Int(c + 6);
  j.updated_at = st->Int(c + 7);
  j.lease_holder = st->Text(c + 8);
  j.lease_expires = st->Int(c + 9);
  return j;
}

Result<std::vector<JobRow>> CollectJobs(sql::Stmt* st) {
  std::vector<JobRow> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back(JobFrom(st));
  }
  st->Reset();
  return out;
}

constexpr std::string_view kLeaseLost = " lease was taken over by another process";

Status LeaseLost(std::int64_t job_id) {
  return Status::Aborted("job " + std::to_string(job_id) + ":" + std::string(kLeaseLost));
}

}  // namespace

bool IsLeaseLost(const Status& status) {
  return status.code() == StatusCode::kAborted && status.message().find(kLeaseLost) != std::string::npos;
}

Status ArmJob(sql::Db* db, std::int64_t scope_id, std::string_view kind, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO jobs(scope_id, kind, status, created_at, updated_at, tenant) "
                  "VALUES(?1, ?2, 'pending', ?3, ?3, " + ScopeTenantSql(1) + ") "
                  "ON CONFLICT" + TenantKey(db, "scope_id, kind") + " WHERE status IN ('pending', 'leased') "
                  "DO UPDATE SET rearmed = 1"));
  return st->Bind(1, scope_id).Bind(2, kind).Bind(3, now).Run();
}

Result<std::optional<JobRow>> LeaseNextJob(sql::Db* db, const std::string& holder, std::int64_t scope_id,
                                           const std::vector<std::int64_t>& skip, TimeMs now,
                                           TimeMs lease_ms, const HolderGoneFn& holder_gone) {
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
  // PostgreSQL: rows leased by a concurrent transaction are skipped, not
  // waited for; SQLite: the write transaction already excludes other writers.
  const std::string lock = db->dialect() == sql::Dialect::kPostgres ? " FOR UPDATE SKIP LOCKED" : "";
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * pick,
      db->Prepare(std::string("SELECT ") + kJobCols +
                  " FROM jobs WHERE status IN ('pending', 'leased') AND (?1 = 0 OR scope_id = ?1) "
                  "ORDER BY CASE kind WHEN 'promote' THEN 0 ELSE 1 END, id" + lock));
  pick->Bind(1, scope_id);
  std::vector<JobRow> rows;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, pick->Step());
    if (!row) break;
    rows.push_back(JobFrom(pick));
  }
  // A lease of `holder` itself is one it could not give back (a store
  // error): its runs are serialised, so no run of its own holds it now.
  auto lease_live = [&](const JobRow& j) {
    return j.status == "leased" && j.lease_expires > now && j.lease_holder != holder &&
           !(holder_gone && j.lease_holder != holder && holder_gone(j.lease_holder));
  };
  // One process maintains a scope at a time: a promotion and a consolidation
  // of one scope in two processes would conflict at commit and pay for the
  // model calls of the loser again.
  std::set<std::int64_t> busy;
  for (const auto& j : rows) {
    if (lease_live(j)) busy.insert(j.scope_id);
  }
  std::optional<JobRow> chosen;
  for (auto& j : rows) {
    if (lease_live(j) || busy.count(j.scope_id)) continue;
    if (std::find(skip.begin(), skip.end(), j.id) != skip.end()) continue;
    chosen = std::move(j);
    break;
  }
  pick->Reset();
  if (!chosen) return std::optional<JobRow>();
  // Compare-and-set on what was read: the job is still in the state seen.
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * take,
      db->Prepare("UPDATE jobs SET status = 'leased', lease_holder = ?1, lease_expires = ?2, rearmed = 0, "
                  "updated_at = ?3 WHERE id = ?4 AND status = ?5 AND lease_holder = ?6"));
  ENGRAM_RETURN_IF_ERROR(take->Bind(1, holder)
                             .Bind(2, now + lease_ms)
                             .Bind(3, now)
                             .Bind(4, chosen->id)
                             .Bind(5, chosen->status)
                             .Bind(6, chosen->lease_holder)
                             .Run());
  if (db->Changes() != 1) return std::optional<JobRow>();  // changed meanwhile: try again later
  ENGRAM_RETURN_IF_ERROR(txn->Commit());
  chosen->status = "leased";
  chosen->lease_holder = holder;
  chosen->lease_expires = now + lease_ms;
  chosen->updated_at = now;
  return chosen;
}

Status RenewJobLease(sql::Db* db, std::int64_t job_id, const std::string& holder, TimeMs now,
                     TimeMs lease_ms) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("UPDATE jobs SET lease_expires = ?1 WHERE id = ?2 AND status = 'leased' AND lease_holder = ?3"));
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, now + lease_ms).Bind(2, job_id).Bind(3, holder).Run());
  return db->Changes() == 1 ? Status::Ok() : LeaseLost(job_id);
}

Status FinishJobAttempt(sql::Db* db, std::int64_t job_id, const std::string& holder, const Status& result,
                        bool final_attempt, TimeMs now, TimeMs lease_ms) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * cur,
      db->Prepare("SELECT scope_id, kind, rearmed FROM jobs WHERE id = ?1 AND status = 'leased' "
                  "AND lease_holder = ?2"));
  cur->Bind(1, job_id).Bind(2, holder);
  ENGRAM_ASSIGN_OR_RETURN(bool held, cur->Step());
  if (!held) {
    cur->Reset();
    return LeaseLost(job_id);
  }
  const std::int64_t scope_id = cur->Int(0);
  const std::string kind = cur->Text(1);
  const bool rearmed = cur->Int(2) != 0;
  cur->Reset();
  if (result.ok()) {
    // Re-armed during the lease: the work that arrived meanwhile is due.
    ENGRAM_ASSIGN_OR_RETURN(
        sql::Stmt * st,
        db->Prepare("UPDATE jobs SET status = ?1, attempts = 0, last_error = '', lease_holder = '', "
                    "lease_expires = 0, rearmed = 0, updated_at = ?2 WHERE id = ?3"));
    ENGRAM_RETURN_IF_ERROR(st->Bind(1, rearmed ? "pending" : "done").Bind(2, now).Bind(3, job_id).Run());
    // Earlier failures of the same work are resolved by this success.
    ENGRAM_ASSIGN_OR_RETURN(
        sql::Stmt * res,
        db->Prepare("UPDATE jobs SET status = 'done', updated_at = ?1 "
                    "WHERE scope_id = ?2 AND kind = ?3 AND status = 'failed'"));
    return res->Bind(1, now).Bind(2, scope_id).Bind(3, kind).Run();
  }
  if (!final_attempt) {
    ENGRAM_ASSIGN_OR_RETURN(
        sql::Stmt * st,
        db->Prepare("UPDATE jobs SET attempts = attempts + 1, last_error = ?1, lease_expires = ?2, "
                    "updated_at = ?3 WHERE id = ?4"));
    return st->Bind(1, result.ToString()).Bind(2, now + lease_ms).Bind(3, now).Bind(4, job_id).Run();
  }
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("UPDATE jobs SET status = 'failed', attempts = attempts + 1, last_error = ?1, "
                  "lease_holder = '', lease_expires = 0, rearmed = 0, updated_at = ?2 WHERE id = ?3"));
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, result.ToString()).Bind(2, now).Bind(3, job_id).Run());
  return rearmed ? ArmJob(db, scope_id, kind, now) : Status::Ok();
}

Status ReleaseJobLease(sql::Db* db, std::int64_t job_id, const std::string& holder, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("UPDATE jobs SET status = 'pending', lease_holder = '', lease_expires = 0, rearmed = 0, "
                  "updated_at = ?1 WHERE id = ?2 AND status = 'leased' AND lease_holder = ?3"));
  return st->Bind(1, now).Bind(2, job_id).Bind(3, holder).Run();
}

Result<std::vector<JobRow>> ListJobRows(sql::Db* db, const std::vector<std::string>& statuses,
                                        std::int64_t scope_id) {
  std::vector<JobRow> out;
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(std::string("SELECT ") + kJobCols +
                  " FROM jobs WHERE status = ?1 AND (?2 = 0 OR scope_id = ?2) "
                  "ORDER BY CASE kind WHEN 'promote' THEN 0 ELSE 1 END, id"));
  for (const auto& status : statuses) {
    st->Bind(1, status).Bind(2, scope_id);
    ENGRAM_ASSIGN_OR_RETURN(auto rows, CollectJobs(st));
    out.insert(out.end(), rows.begin(), rows.end());
  }
  return out;
}

Result<int> RetryFailedJobRows(sql::Db* db, std::int64_t scope_id, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(auto failed, ListJobRows(db, {"failed"}, scope_id));
  for (const auto& j : failed) ENGRAM_RETURN_IF_ERROR(ArmJob(db, j.scope_id, j.kind, now));
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("UPDATE jobs SET status = 'done', last_error = last_error || ' (retried)', "
                  "updated_at = ?1 WHERE status = 'failed' AND (?2 = 0 OR scope_id = ?2)"));
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, now).Bind(2, scope_id).Run());
  return static_cast<int>(failed.size());
}

Result<std::vector<JobListing>> ListOpenJobs(sql::Db* db, const std::string& status, const std::string& tenant,
                                             const std::string& user, int limit) {
  // "pending" covers leased jobs too (pending work that a process is running).
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT j.id, j.scope_id, j.kind, j.status, j.attempts, j.last_error, j.created_at, "
                  "j.updated_at, j.lease_holder, j.lease_expires, s.tenant, s.user_id, s.assistant_id "
                  "FROM jobs j JOIN scopes s ON s.id = j.scope_id AND s.tenant = j.tenant "
                  "WHERE j.status IN ('pending', 'leased', 'failed') AND (?1 = '' OR j.status = ?1 OR "
                  "(?1 = 'pending' AND j.status = 'leased')) "
                  "AND (?2 = '' OR s.tenant = ?2) AND (?3 = '' OR s.user_id = ?3) ORDER BY j.id LIMIT ?4"));
  st->Bind(1, status).Bind(2, tenant).Bind(3, user).Bind(4, std::int64_t{limit});
  std::vector<JobListing> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back({JobFrom(st), Scope{st->Text(10), st->Text(11), st->Text(12)}});
  }
  st->Reset();
  return out;
}

Result<std::int64_t> CountJobs(sql::Db* db, bool failed, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(failed ? "SELECT count(*) FROM jobs WHERE status = 'failed' AND (?1 = 0 OR scope_id = ?1)"
                         : "SELECT count(*) FROM jobs WHERE status IN ('pending', 'leased') "
                           "AND (?1 = 0 OR scope_id = ?1)"));
  st->Bind(1, scope_id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::int64_t n = row ? st->Int(0) : 0;
  st->Reset();
  return n;
}

}  // namespace engram::store
