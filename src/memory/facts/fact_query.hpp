// Reads of the fact store: list with cursor pagination, history, and search
// (vector + FTS5 bm25 + entity candidates, calibrated fusion).
#pragma once

#include <string>
#include <vector>

#include "engram/facts.hpp"
#include "engram/result.hpp"
#include "memory/facts/fact_sql.hpp"
#include "memory/facts/fact_store.hpp"
#include "memory/facts/fact_vectors.hpp"
#include "models/embedder.hpp"
#include "store/sqlite.hpp"

namespace engram::memory::facts {

// Visible memories of the scope matching the filters, newest first
// (created_at, then memory id, both descending: an update never moves a
// memory). The cursor is the position after the last item of a page.
Result<MemoryPage> ListMemories(sql::Db* db, const MemoryScope& scope, const MemoryListOptions& options,
                                TimeMs now);

// The facts rows the selector sees, oldest first.
Result<std::vector<FactRow>> SelectFacts(sql::Db* db, const store::FactSelector& selector);

// Events of a memory visible to the scope, oldest first; NotFound otherwise.
Result<std::vector<MemoryHistoryEvent>> MemoryHistory(sql::Db* db, const MemoryScope& scope,
                                                      const std::string& memory_id, TimeMs now);

// Weights of the fused score (they sum to 1, so score is in [0, 1] and means
// the same for every query, whichever signals matched).
inline constexpr double kVectorWeight = 0.55;
inline constexpr double kLexicalWeight = 0.30;
inline constexpr double kEntityWeight = 0.15;

// With `words` (the built-in embedder, whose hashed vectors know no meaning):
// the cosine of the query's word-vector mean and the mean of the memory's
// words that the query does not contain (the shared words count in the
// lexical and vector components already), rescaled
// from [kSemanticFloor, kSemanticCeiling] to [0, 1], is the `semantic` component, and the
// vector slot of the score takes the larger of `vector` and `semantic`; the
// best semantic matches of the snapshots are candidates too.
// Floor 0: any positive cosine counts (paraphrase set hit@3 0.586 at 0.05,
// 0.603 at 0; docs/PERFORMANCE.md).
inline constexpr double kSemanticFloor = 0.0;
// Word-vector means of related texts rarely go past 0.40; the expansion
// share added to them (below) reaches further, and at 0.40 many scores were
// clamped to 1 and tied (paraphrase set hit@1 0.25 at 0.40, 0.29 at 0.50).
inline constexpr double kSemanticCeiling = 0.50;
// Added to that cosine before rescaling: kExpansionWeight times the
// idf-weighted share of the query's terms found in the memory's WordNet
// neighbourhood (wordvec::WordVectors::Expansions of its words).
inline constexpr double kExpansionWeight = 0.6;
// What a memory naming no occupation keeps of its `semantic` component for a
// question asking for one (fact_search.cpp; the nine paraphrase sets' hit@3
// summed 6.208 / 6.226 / 6.173 / 6.131 at 0.25 / 0.5 / 0.75 / 1,
// docs/PERFORMANCE.md).
inline constexpr double kOccupationUnheld = 0.5;
// What a memory saying no number keeps of its `semantic` component for a
// question asking for one ("how many", "how much", "how old"; the ten
// paraphrase sets' hit@3 summed 6.872 -> 6.890 at 0.75 and 0.5, no question
// of them nor of their keyword or direct queries lost; docs/PERFORMANCE.md).
inline constexpr double kNumberUnheld = 0.5;
// And a memory saying no time (IsScheduleWord) for a question asking for one
// (AsksWhen): the twelve sets' questions summed hit@1 / hit@3 6.262 / 8.367
// -> 6.263 / 8.411, 6.280 / 8.438, 6.306 / 8.385 at 0.5 / 0.7 / 0.85, no
// question of them out of the first three at 0.7, the keyword and direct
// queries the same (docs/PERFORMANCE.md).
inline constexpr double kTimeUnheld = 0.7;

// Search (fact_search.cpp): candidates are the union of the best vector
// matches, the FTS5 bm25 matches and the entity matches among the visible
// memories that pass the filters (filters inside the query); each candidate gets
// every component, the fused score, and is kept when score >= threshold; best
// top_k, ties by the unclamped semantic cosine, then newer (by creation, then by the row
// written later: memories added within one millisecond keep their order). Vector candidates come
// from `source`'s snapshots (the rows then fetched with the filter; widened once, then an exact
// filtered scan, when the filter removes too many) or, without a source, from an exact scan of the
// scope's embeddings in the store. `query` as the caller asked it: "the user" of it is read as the
// person (text::UserAsPronoun) and tells whom it asks about (AsksAboutUser).
Result<std::vector<MemoryItem>> SearchMemories(sql::Db* db, const MemoryScope& scope,
                                               const std::string& query, const Vector& query_vector,
                                               const MemorySearchOptions& options, TimeMs now,
                                               const FactVectorSource& source = {},
                                               const wordvec::WordVectors* words = nullptr);

}  // namespace engram::memory::facts
