// Long-term personal memory: profile slots and facts (user and assistant),
// and MTM -> LPM consolidation.
#pragma once

#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "memory/config.hpp"
#include "memory/promotion.hpp"
#include "store/sqlite.hpp"

namespace engram::memory {

struct ConsolidationResult {
  int pages = 0;  // pages analysed (0: nothing eligible)
  int facts_added = 0;
  int facts_duplicate = 0;
  int slots_updated = 0;
  int model_calls = 0;
  bool degraded = false;
  bool more = false;  // eligible pages remain
};

// Consolidates up to config.consolidate_batch_max unanalysed pages of the
// scope's segments whose current heat reaches the threshold (every segment
// with unanalysed pages when `force`), hottest first. One transaction commits
// the profile, the facts (deduplicated by normalised-text hash and near-
// duplicate embedding), the pages' analysed flags and segment counters.
Result<ConsolidationResult> ConsolidateBatch(const WriterDb& w, std::int64_t scope_id,
                                             const MemoryConfig& config, const MemoryDeps& deps,
                                             const std::string& run_id, bool force);

// True when some live segment of the scope is eligible for consolidation.
Result<bool> HasConsolidationWork(sql::Db* db, std::int64_t scope_id, const MemoryConfig& config,
                                  TimeMs now);

Result<std::vector<ProfileSlot>> LoadProfile(sql::Db* db, std::int64_t scope_id);
// "name: Caroline\ninterests: painting; hiking"
std::string RenderProfile(const std::vector<ProfileSlot>& slots);
// Live facts of a dialogue's fact sections of a kind ("user", "assistant"
// or "" for both), oldest first: the scope's, and the memories of the user's
// own row `user_scope_id` (0: none; facts::UserRowOf); expired ones (by
// `now`) left out.
Result<std::vector<Fact>> LoadFacts(sql::Db* db, std::int64_t scope_id, std::int64_t user_scope_id,
                                    const std::string& kind, TimeMs now);

}  // namespace engram::memory
