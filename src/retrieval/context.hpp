// Context assembly: fills ranked items with their text and packs the context
// under the token budget (recent STM turns, pages with dates and chain
// summaries, profile, user facts, assistant facts).
#pragma once

#include <utility>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/sqlite.hpp"

namespace engram::retrieval {

struct ContextInput {
  RetrieveOptions options;
  std::vector<Turn> stm;                    // oldest first
  std::vector<RetrievedItem> ranked;        // pages and matching STM turns, best first (ids only)
  std::vector<ProfileSlot> profile;
  std::vector<std::pair<std::int64_t, double>> user_facts;       // fact id, score; best first
  std::vector<std::pair<std::int64_t, double>> assistant_facts;
};

// Share of the budget that recent STM turns, the profile and the facts may
// take before pages; unused shares go to pages.
inline constexpr double kStmShare = 0.2;
inline constexpr double kProfileShare = 0.1;
inline constexpr double kFactsShare = 0.2;

Result<RetrievalResult> AssembleContext(sql::Db* db, const ContextInput& in);

}  // namespace engram::retrieval
