// The full-text index of facts (facts_fts): one document per live facts row
// (rowid = facts.id), holding the scope token (store::ScopeToken) and the
// row's index terms (memory/facts/fact_text.hpp LexicalDocument), written
// through store/fulltext.hpp (IndexText / UnindexText, FullText::kFacts). SQLite
// ranks matches with FTS5's bm25; PostgreSQL with ts_rank over the generated
// tsvector (store/fulltext.hpp), reported negated so that lower is better on
// both. Scores are comparable within one search only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "store/db.hpp"
#include "store/facts_filter_sql.hpp"

namespace engram::store {

// A match: bm25 as FTS5 computes it over the terms column (SQLite), or
// -ts_rank (PostgreSQL): lower is better.
struct FactTextHit {
  std::int64_t fact_id = 0;
  double bm25 = 0;
};

// The best `limit` rows matching any of `terms`, best first, within the
// scope `scope_token` ("" = any scope). Empty when there are no terms.
Result<std::vector<FactTextHit>> FindFactText(sql::Db* db, const std::vector<std::string>& terms,
                                              const std::string& scope_token, std::size_t limit);

// The same among the rows the selector sees (the exact lexical query of a
// filtered search).
Result<std::vector<FactTextHit>> FindFactTextWhere(sql::Db* db, const std::vector<std::string>& terms,
                                                   const std::string& scope_token, const FactSelector& selector,
                                                   std::size_t limit);

}  // namespace engram::store
