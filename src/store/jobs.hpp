// The jobs repository: durable maintenance jobs with leases.
//
// One open job per (scope, kind): `pending` (waiting), or `leased` (a process
// runs it: lease_holder until lease_expires). A lease is taken atomically, so
// two processes never run the same job at once; a holder that died loses the
// job when its lease expires and another process takes it over. Arming a job
// that is leased marks it `rearmed`: when the holder finishes, the job goes
// back to pending instead of done, so no admission made during a run is lost.
// Outcomes are written only by the current holder (fenced by holder id).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/db.hpp"

namespace engram::store {

struct JobRow {
  std::int64_t id = 0;
  std::int64_t scope_id = 0;
  std::string kind;    // "promote" or "consolidate"
  std::string status;  // "pending", "leased", "failed", "done"
  int attempts = 0;
  std::string last_error;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  std::string lease_holder;  // "" unless leased
  TimeMs lease_expires = 0;
};

// Makes a job of `kind` pending for the scope, or re-arms the open one.
// REQUIRES: inside a write transaction.
Status ArmJob(sql::Db* db, std::int64_t scope_id, std::string_view kind, TimeMs now);

// Takes the lease of the next runnable job (pending; or leased with an
// expired lease, or whose holder `holder_gone` says is certainly dead),
// promotions first, oldest first; of one scope when scope_id != 0; jobs in
// `skip` are passed over, and so are the jobs of a scope that another job
// holds a live lease on (one process maintains a scope at a time). A lease
// held by `holder` itself counts as given back: the caller runs one job at a
// time per holder. nullopt when none. Runs its own write transaction.
using HolderGoneFn = std::function<bool(const std::string& holder)>;
Result<std::optional<JobRow>> LeaseNextJob(sql::Db* db, const std::string& holder, std::int64_t scope_id,
                                           const std::vector<std::int64_t>& skip, TimeMs now,
                                           TimeMs lease_ms, const HolderGoneFn& holder_gone = nullptr);

// Extends the lease; Aborted when `holder` no longer holds it.
// REQUIRES: inside a write transaction.
Status RenewJobLease(sql::Db* db, std::int64_t job_id, const std::string& holder, TimeMs now,
                     TimeMs lease_ms);

// Records an attempt's outcome. Success: done, or pending again when the job
// was re-armed during the lease (earlier failed jobs of the same scope and
// kind are resolved). Failure: the attempt is counted; with `final_attempt`
// the job becomes failed (and a re-armed job leaves a new pending one), else
// it stays leased for the next attempt. Aborted when `holder` lost the lease.
// REQUIRES: inside a write transaction.
Status FinishJobAttempt(sql::Db* db, std::int64_t job_id, const std::string& holder, const Status& result,
                        bool final_attempt, TimeMs now, TimeMs lease_ms);

// True for the Aborted status of an operation whose lease was taken over.
bool IsLeaseLost(const Status& status);

// Gives a lease back without an outcome (the job is pending again).
// REQUIRES: inside a write transaction.
Status ReleaseJobLease(sql::Db* db, std::int64_t job_id, const std::string& holder, TimeMs now);

// Jobs with one of `statuses` for one scope or all (scope_id 0).
Result<std::vector<JobRow>> ListJobRows(sql::Db* db, const std::vector<std::string>& statuses,
                                        std::int64_t scope_id);

// Failed jobs become pending again (marked "(retried)"); returns how many.
// REQUIRES: inside a write transaction.
Result<int> RetryFailedJobRows(sql::Db* db, std::int64_t scope_id, TimeMs now);

// Open (pending or leased) and failed jobs of a tenant/user, oldest first.
struct JobListing {
  JobRow job;
  Scope scope;
};
Result<std::vector<JobListing>> ListOpenJobs(sql::Db* db, const std::string& status, const std::string& tenant,
                                             const std::string& user, int limit);

// Counts of open and failed jobs (one scope, or all when scope_id == 0).
Result<std::int64_t> CountJobs(sql::Db* db, bool failed, std::int64_t scope_id);

}  // namespace engram::store
