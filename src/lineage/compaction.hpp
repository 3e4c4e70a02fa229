// Receipt retention: receipts older than a cutoff are folded into per-day
// summaries (receipt_days: counts per day, scope, kind, tiers and status) and
// deleted. Started job receipts whose run has no outcome yet are kept: they
// are the evidence reconciliation needs.
#pragma once

#include "engram/lineage.hpp"
#include "store/sqlite.hpp"

namespace engram::lineage {

// Folds receipts before `cutoff` into receipt_days and deletes them (the
// rows are written by store::CompactReceipts).
// REQUIRES: inside a write transaction.
Result<ReceiptCompaction> CompactReceipts(sql::Db* db, TimeMs cutoff);

}  // namespace engram::lineage
