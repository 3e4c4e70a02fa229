// Content-free lineage receipts, written in the same transaction as the tier
// transition they describe. A receipt never holds text, embeddings or hashes
// of content: only identities, versions, tiers, status and time.
// docs/LINEAGE.md lists the fields, the kinds and the statuses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/types.hpp"
#include "store/receipts.hpp"
#include "store/sqlite.hpp"

namespace engram::lineage {

// The receipt record lives in the data layer (store/receipts.hpp).
using Receipt = store::ReceiptRow;

// Appends a receipt. REQUIRES: called inside the transaction of the transition.
inline Status Write(sql::Db* db, const Receipt& r) { return store::WriteReceipt(db, r); }

// A new random run id ("run-" + 16 hex digits).
std::string NewRunId();

// Filters of Read; empty strings match everything; limit -1 = no limit.
using ReadFilter = store::ReceiptFilter;
// Receipts in id order.
inline Result<std::vector<Receipt>> Read(sql::Db* db, const ReadFilter& filter) {
  return store::ReadReceipts(db, filter);
}

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
