#include "lineage/compaction.hpp"

#include "store/receipts.hpp"

namespace engram::lineage {

Result<ReceiptCompaction> CompactReceipts(sql::Db* db, TimeMs cutoff) { return store::CompactReceipts(db, cutoff); }

}  // namespace engram::lineage
