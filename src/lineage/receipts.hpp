// Content-free lineage receipts, written in the same transaction as the tier
// transition they describe. A receipt never holds text, embeddings or hashes
// of content: only identities, versions, tiers, status and time.
// docs/LINEAGE.md lists the fields, the kinds and the statuses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/types.hpp"
#include "store/sqlite.hpp"

namespace engram::lineage {

struct Receipt {
  std::int64_t id = 0;      // set when read back; ignored by Write
  std::string run_id;
  std::string tenant;
  std::string user_scope;
  std::string assistant_scope;
  // "turn", "segment", "fact", "profile_slot", "job", "generation",
  // "retrieval", "scope" (purge and verification)
  std::string memory_kind;
  std::int64_t memory_id = 0;
  std::int64_t version = 1;
  std::string source_version;  // engram version + behaviour-changing configuration
  std::string from_tier;       // "input", "stm", "mtm", "archive", "lpm", ...
  std::string to_tier;
  std::string status;          // started, waiting, committed, verified, failed, degraded
  TimeMs at_utc = 0;
  std::string depends_on_version;  // e.g. "page:12@1,user_fact:3@2"
  std::string outcome_receipt;     // e.g. "pages.id=42"
};

// Appends a receipt. REQUIRES: called inside the transaction of the transition.
Status Write(sql::Db* db, const Receipt& r);

// A new random run id ("run-" + 16 hex digits).
std::string NewRunId();

// Filters of Read; empty strings match everything.
struct ReadFilter {
  std::string tenant, user, assistant;
  std::string run_id;
  std::string memory_kind;
  std::int64_t limit = -1;  // -1 = no limit
};
// Receipts in id order.
Result<std::vector<Receipt>> Read(sql::Db* db, const ReadFilter& filter);

// One entry of depends_on_version: "<kind>:<id>@<version>".
struct VersionRef {
  std::string kind;  // an ItemKindName: "page", "stm_turn", "user_fact", ...
  std::int64_t id = 0;
  std::int64_t version = 0;
};
std::string FormatVersionRefs(const std::vector<VersionRef>& refs);
// False when any entry is malformed (the evidence cannot be read).
bool ParseVersionRefs(const std::string& text, std::vector<VersionRef>* out);

// True when a required field is missing: run id, scope ids, kind, version,
// an engram source version, tiers, a known status, or the time.
bool MissingFields(const Receipt& r);
// The row id an outcome names: OutcomeId("pages.id=42", "pages.id=") == 42;
// 0 when the prefix is absent.
std::int64_t OutcomeId(const std::string& outcome, const std::string& prefix);
// True for statuses that record a completed transition.
bool IsCommit(const std::string& status);

}  // namespace engram::lineage
