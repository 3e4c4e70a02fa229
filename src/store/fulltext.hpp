// The full-text indexes of turns, segments and facts, on both backends.
// SQLite: FTS5 tables (rowid, scope, terms) ranked by bm25. PostgreSQL: plain
// tables with the same columns and a generated tsvector of the terms under a
// GIN index, ranked by ts_rank. Documents are index terms (core/text FtsTerm:
// lower-case, stemmed, [a-z0-9_] and UTF-8) separated by spaces; `scope` is
// the scope token ("s42") so that a search stays inside one scope.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "store/db.hpp"

namespace engram::store {

enum class FullText { kTurns, kSegments, kFacts };

// The token that confines a lexical search to one scope ("s42").
std::string ScopeToken(std::int64_t scope_id);
// The index terms of a text, space-separated.
std::string FtsDocument(const std::string& text);
// The distinct index terms of a query, in order, a short form followed by its
// full word's (text::FullForm: "fave", "favorit"), which the facts' documents
// hold beside it.
std::vector<std::string> QueryTerms(const std::string& query);

// Indexes a row's document (REQUIRES: inside a write transaction).
Status IndexText(sql::Db* db, FullText table, std::int64_t rowid, std::int64_t scope_id, const std::string& doc);
// Replaces a row's document (REQUIRES: inside a write transaction).
Status ReindexText(sql::Db* db, FullText table, std::int64_t rowid, std::int64_t scope_id, const std::string& doc);
// Removes a row from the index (REQUIRES: inside a write transaction).
Status UnindexText(sql::Db* db, FullText table, std::int64_t rowid);

struct TextHit {
  std::int64_t rowid = 0;
  double score = 0;  // higher is better (comparable within one search only)
};
// The best `limit` rows matching any of `terms`, best first: inside the
// scope `scope_token` ("" = every scope). Empty when there are no terms.
Result<std::vector<TextHit>> SearchText(sql::Db* db, FullText table, const std::string& scope_token,
                                        const std::vector<std::string>& terms, int limit);

// Every row of one scope in a full-text table: its rowid and its document
// (the `terms` column), in rowid order, for an in-memory copy of the scope's
// rows (retrieval/text_index.hpp). SQLite only (the copy reproduces FTS5's
// bm25); FailedPrecondition on PostgreSQL.
Status ScanTextRows(sql::Db* db, FullText table, std::int64_t scope_id,
                    const std::function<void(std::int64_t rowid, const std::string& terms)>& sink);

// A row of a full-text table with its document as indexed and the columns
// of its source row that the document is made of: turns {user_name,
// user_text, assistant_name, assistant_text}; segments {summary, keyword,
// keyword, ...}; facts {text}.
struct TextSource {
  std::int64_t rowid = 0;
  std::int64_t scope_id = 0;
  std::string terms;
  std::vector<std::string> columns;
};
// The indexed rows of `table` with a rowid above `after`, in rowid order, at
// most `limit`, with their sources (a row of the index whose source row is
// gone is not listed). For bringing the documents up to new rules
// (memory/text_documents.hpp).
Result<std::vector<TextSource>> TextSourcesAfter(sql::Db* db, FullText table, std::int64_t after, int limit);

// The match expressions SearchText uses, for statements that join a
// full-text table with other conditions: FTS5 MATCH text (with the scope
// token when not empty) and tsquery text (the scope is a separate condition).
std::string Fts5MatchText(const std::string& scope_token, const std::vector<std::string>& terms);
std::string TsQueryText(const std::vector<std::string>& terms);

// Merges index segments so that no deleted term survives in them (SQLite;
// a no-op on PostgreSQL, whose VACUUM reclaims dead rows).
Status OptimizeText(sql::Db* db, FullText table);

}  // namespace engram::store
