// Running durable maintenance jobs (promotion and consolidation per scope,
// store/jobs.hpp): a job is leased to this process while it runs, so that no
// two processes run it at once; a job that keeps failing becomes `failed`
// with its reason and its source data stays where it was.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "memory/config.hpp"
#include "memory/promotion.hpp"
#include "store/jobs.hpp"

namespace engram::memory {

using JobRow = store::JobRow;

// Jobs with a status ("pending", "failed"), for one scope or all (scope_id 0).
Result<std::vector<JobRow>> ListJobs(sql::Db* db, const std::string& status, std::int64_t scope_id);

// Segment access counts gathered by retrieval: segment id -> (hits, last time).
using AccessLog = std::map<std::int64_t, std::pair<std::int64_t, TimeMs>>;

// Folds retrieval hits into segment visit counters and last-access times, and
// makes consolidation pending where heat now reaches the threshold.
Status ApplyAccessLog(const WriterDb& w, const AccessLog& log, const MemoryConfig& config,
                      TimeMs now);

// Runs pending jobs (of one scope when scope_id != 0) to completion. Each job
// is tried up to config.max_job_attempts times, then marked failed. A store
// error (store unavailable or store full) is not an attempt: the job is
// released, pending again, and the error returned.
// REQUIRES: calls with the same deps.job_holder are serialised.
Result<MaintainReport> RunPendingJobs(const WriterDb& w, std::int64_t scope_id,
                                      const MemoryConfig& config, const MemoryDeps& deps);

// Moves failed jobs back to pending (for `engram maintain --retry-failed`).
Result<int> RetryFailedJobs(const WriterDb& w, std::int64_t scope_id, TimeMs now);

}  // namespace engram::memory
