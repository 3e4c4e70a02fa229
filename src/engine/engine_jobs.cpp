// Engine: listing and retrying maintenance jobs per tenant and user (the jobs
// surface of `engram serve`; `engram maintain --retry-failed` retries all).
#include <set>

#include "engine/engine_impl.hpp"
#include "memory/jobs.hpp"
#include "memory/scope_store.hpp"
#include "store/jobs.hpp"

namespace engram {

namespace {

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
  ENGRAM_ASSIGN_OR_RETURN(auto rows, store::ListOpenJobs(lease->db(), query.status, query.tenant, query.user,
                                                         query.limit));
  std::vector<JobInfo> out;
  for (auto& r : rows) {
    JobInfo j;
    j.id = r.job.id;
    j.scope = std::move(r.scope);
    j.kind = r.job.kind;
    j.status = r.job.status;
    j.attempts = r.job.attempts;
    j.last_error = r.job.last_error;
    j.created_at = r.job.created_at;
    j.updated_at = r.job.updated_at;
    j.lease_holder = r.job.lease_holder;
    j.lease_expires = r.job.lease_expires;
    out.push_back(std::move(j));
  }
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
