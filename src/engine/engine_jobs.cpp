// Engine: listing and retrying maintenance jobs per tenant and user (the jobs
// surface of `engram serve`; `engram maintain --retry-failed` retries all).
#include <set>

#include "engine/engine_impl.hpp"
#include "memory/jobs.hpp"
#include "memory/scope_store.hpp"

namespace engram {

namespace {

constexpr const char* kJobsSql =
    "SELECT j.id, s.tenant, s.user_id, s.assistant_id, j.kind, j.status, j.attempts, j.last_error, "
    "j.created_at, j.updated_at FROM jobs j JOIN scopes s ON s.id = j.scope_id "
    "WHERE j.status IN ('pending', 'failed') AND (?1 = '' OR j.status = ?1) "
    "AND (?2 = '' OR s.tenant = ?2) AND (?3 = '' OR s.user_id = ?3) ORDER BY j.id LIMIT ?4";

Status CheckQuery(const JobQuery& q) {
  if (!q.status.empty() && q.status != "pending" && q.status != "failed") {
    return Status::InvalidArgument("status: expected \"pending\" or \"failed\", got \"" + q.status + "\"");
  }
  if (q.limit < 1) return Status::InvalidArgument("limit: must be at least 1");
  return Status::Ok();
}

}  // namespace

Result<std::vector<JobInfo>> EngineImpl::ListJobs(const JobQuery& query) {
  ENGRAM_RETURN_IF_ERROR(CheckQuery(query));
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, lease->db()->Prepare(kJobsSql));
  st->Bind(1, query.status).Bind(2, query.tenant).Bind(3, query.user).Bind(4, std::int64_t{query.limit});
  std::vector<JobInfo> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    JobInfo j;
    j.id = st->Int(0);
    j.scope = Scope{st->Text(1), st->Text(2), st->Text(3)};
    j.kind = st->Text(4);
    j.status = st->Text(5);
    j.attempts = static_cast<int>(st->Int(6));
    j.last_error = st->Text(7);
    j.created_at = st->Int(8);
    j.updated_at = st->Int(9);
    out.push_back(std::move(j));
  }
  st->Reset();
  return out;
}

Result<int> EngineImpl::RetryFailedJobs(const JobQuery& query) {
  if (query.tenant.empty() && query.user.empty()) return RetryFailedJobs();
  JobQuery failed = query;
  failed.status = "failed";
  failed.limit = 1 << 30;
  ENGRAM_ASSIGN_OR_RETURN(auto jobs, ListJobs(failed));
  std::set<std::int64_t> scope_ids;
  {
    ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
    for (const auto& j : jobs) {
      ENGRAM_ASSIGN_OR_RETURN(auto row, memory::FindScope(lease->db(), j.scope));
      if (row) scope_ids.insert(row->id);
    }
  }
  int n = 0;
  for (std::int64_t id : scope_ids) {
    ENGRAM_ASSIGN_OR_RETURN(int k, memory::RetryFailedJobs(w_, id, deps_.clock->NowMs()));
    n += k;
  }
  if (n > 0) Wake();
  return n;
}

}  // namespace engram
