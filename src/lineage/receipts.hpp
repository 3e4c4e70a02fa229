// Content-free lineage receipts, written in the same transaction as the tier
// transition they describe. A receipt never holds text, embeddings or hashes
// of content: only identities, versions, tiers, status and time.
#pragma once

#include <cstdint>
#include <string>

#include "engram/types.hpp"
#include "store/sqlite.hpp"

namespace engram::lineage {

struct Receipt {
  std::string run_id;
  std::string tenant;
  std::string user_scope;
  std::string assistant_scope;
  std::string memory_kind;  // "turn", "page", "segment", "fact", "profile_slot", "job"
  std::int64_t memory_id = 0;
  std::int64_t version = 1;
  std::string source_version;  // engram version + behaviour-changing configuration
  std::string from_tier;       // "input", "stm", "mtm", "archive", "lpm", ...
  std::string to_tier;
  std::string status;          // started, waiting, committed, verified, failed, degraded
  TimeMs at_utc = 0;
  std::string depends_on_version;  // e.g. "page:12@1,fact:3@2"
  std::string outcome_receipt;     // e.g. "pages.id=42"
};

// Appends a receipt. REQUIRES: called inside the transaction of the transition.
Status Write(sql::Db* db, const Receipt& r);

// A new random run id ("run-" + 16 hex digits).
std::string NewRunId();

}  // namespace engram::lineage
