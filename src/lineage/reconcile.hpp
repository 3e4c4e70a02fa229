// Job lineage: "started" receipts when an attempt begins, and reconciliation
// of runs that started but never reached an outcome (a crash between the
// promotion commit and the job's bookkeeping, or before the commit). A run is
// never blindly replayed: what it committed is checked by run id and version
// first, and the check is recorded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/types.hpp"
#include "store/sqlite.hpp"

namespace engram::lineage {

// The job a receipt is about.
struct JobRef {
  Scope scope;
  std::int64_t scope_id = 0;
  std::int64_t job_id = 0;
  std::string kind;            // "promote" or "consolidate"
  std::string source_version;
};

// Appends a job receipt (memory_kind "job", stm->mtm for promote, mtm->lpm
// for consolidate). REQUIRES: inside a write transaction.
Status WriteJobReceipt(sql::Db* db, const JobRef& job, const std::string& run_id,
                       const std::string& status, const std::string& outcome, TimeMs now);

struct Reconciled {
  std::string run_id;
  std::int64_t job_id = 0;
  std::int64_t committed = 0;  // transitions the run's commit receipts record
  std::int64_t verified = 0;   // of those, confirmed by the rows (id and version)
  std::int64_t stm_turns = 0;  // the scope's turns still in STM (durable sources)
};

// Finds runs of this scope's jobs of job.kind that have a "started" receipt
// and no outcome, checks each: promotion turn commits against turns.page_id
// and the page pointing back, segment commits against the segment's version,
// fact commits against the fact row. Records the outcome with the run's id:
// "verified" when every commit checks out (nothing committed included), else
// "failed". REQUIRES: inside a write transaction.
Result<std::vector<Reconciled>> ReconcileOpenRuns(sql::Db* db, const JobRef& job, TimeMs now);

}  // namespace engram::lineage
