// Message ranking: every message (one side of an exchange, paged or in STM)
// scored by BM25F (text + speaker name) with evidence from its neighbouring
// messages, fused with the vector similarity of its exchange and with the
// two-stage segment evidence. Pure: reads the snapshot and the inputs only.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "models/embedder.hpp"
#include "retrieval/lexical.hpp"
#include "retrieval/scope_index.hpp"

namespace engram::retrieval {

// Tunable weights of the ranking (defaults measured on LoCoMo, see
// docs/PERFORMANCE.md); exposed for tests.
struct RankParams {
  Bm25Params bm25;
  double neighbour = 0.0;   // share of the best neighbouring message's lexical score
  double neighbour2 = 0.0;  // share of the best message two steps away
  double neighbour_sum = 0.0;  // 1: add both neighbours instead of the best
  double neighbour3 = 0.0;  // share of the best message three steps away
  double gap_minutes = 0.0;  // neighbours only within this time gap (0 = any)
  int prf_docs = 0;          // pseudo-relevance feedback: messages read
  int prf_terms = 0;         // terms added
  double prf_weight = 0.0;   // weight of the best added term
  double vector = 0.0;      // weight of the exchange's cosine against normalised lexical
  double segment = 0.0;     // bonus for messages of the top segments
  double short_len = 0.0;   // messages with fewer text terms are damped (0 = off)
};
const RankParams& DefaultRankParams();

// STM turns of one retrieval, indexed on the fly (chronological order).
struct StmMessages {
  std::vector<TurnEntry> entries;
  std::vector<Vector> vectors;  // per entry, empty when unknown
  MessageIndex index;
  std::vector<MessageDoc> docs;
};

struct RankedMessage {
  const TurnEntry* entry = nullptr;
  int side = 0;
  double score = 0.0;
};

struct RankQuery {
  std::vector<QueryTerm> terms;
  const Vector* vector = nullptr;
  std::unordered_set<std::int64_t> top_segments;
};

// The query's terms (text::Terms, deduplicated, weight 1).
std::vector<QueryTerm> QueryTerms(const std::string& query);

// The best `limit` messages, best first; ties by recency (newer first).
std::vector<RankedMessage> RankMessages(const ScopeIndex& idx, const StmMessages& stm,
                                        const RankQuery& q, const RankParams& p, std::size_t limit);

}  // namespace engram::retrieval
