// STM -> MTM promotion: the oldest turns beyond STM capacity become pages in
// dialogue chains and topic segments. Model work (embedding, analysis,
// summaries) happens outside any transaction; ONE transaction then commits the
// pages, the segment changes, the turns' move out of STM, the chain state, the
// receipts and any archiving. A failure before that commit changes nothing.
#pragma once

#include <mutex>
#include <string>

#include "engram/result.hpp"
#include "memory/config.hpp"
#include "store/sqlite.hpp"

namespace engram::memory {

// The writer connection and the mutex that serialises its use.
struct WriterDb {
  sql::Db* db = nullptr;
  std::mutex* mu = nullptr;
};

struct PromotionResult {
  int pages = 0;            // pages committed (0: nothing to promote)
  int segments_created = 0;
  int segments_merged = 0;  // pages that joined an existing segment
  int segments_archived = 0;
  int model_calls = 0;
  bool degraded = false;
  bool more = false;        // STM is still over capacity
};

// Promotes one batch (at most config.promote_batch_max turns) of `scope_id`.
// Returns Aborted when a concurrent writer changed the same segments or turns
// between the read and the commit (retry), other errors from the models (the
// turns stay in STM).
Result<PromotionResult> PromoteBatch(const WriterDb& w, std::int64_t scope_id,
                                     const MemoryConfig& config, const MemoryDeps& deps,
                                     const std::string& run_id);

}  // namespace engram::memory
