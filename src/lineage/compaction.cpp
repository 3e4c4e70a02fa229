#include "lineage/compaction.hpp"

namespace engram::lineage {

namespace {

// Receipts before ?1, except started job receipts still waiting for an outcome.
constexpr const char* kOld =
    " FROM receipts WHERE at_utc < ?1 AND NOT (memory_kind = 'job' AND status = 'started' AND "
    "NOT EXISTS (SELECT 1 FROM receipts o WHERE o.run_id = receipts.run_id AND "
    "o.memory_kind = 'job' AND o.status <> 'started'))";

}  // namespace

Result<ReceiptCompaction> CompactReceipts(sql::Db* db, TimeMs cutoff) {
  ReceiptCompaction out;
  out.cutoff = cutoff;
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * sum,
      db->Prepare(std::string("INSERT INTO receipt_days(day, tenant, user_scope, assistant_scope, "
                              "memory_kind, from_tier, to_tier, status, receipts, first_at, last_at) "
                              "SELECT at_utc / 86400000, tenant, user_scope, assistant_scope, "
                              "memory_kind, from_tier, to_tier, status, count(*), min(at_utc), "
                              "max(at_utc)") +
                  kOld +
                  " GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 ON CONFLICT(day, tenant, user_scope, "
                  "assistant_scope, memory_kind, from_tier, to_tier, status) DO UPDATE SET "
                  "receipts = receipts + excluded.receipts, first_at = min(first_at, "
                  "excluded.first_at), last_at = max(last_at, excluded.last_at)"));
  ENGRAM_RETURN_IF_ERROR(sum->Bind(1, cutoff).Run());
  out.day_rows = db->Changes();
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * del, db->Prepare(std::string("DELETE") + kOld));
  ENGRAM_RETURN_IF_ERROR(del->Bind(1, cutoff).Run());
  out.receipts_removed = db->Changes();
  return out;
}

}  // namespace engram::lineage
