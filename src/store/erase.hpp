// Erasure: the one function of the data layer that removes a scope's content
// from every table that holds any (`engram forget`, DELETE /v1/users). The
// table list lives here and is checked against the schema by a test, so a new
// table cannot be forgotten. Receipts stay (they hold no content).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "store/db.hpp"

namespace engram::store {

// Calls `sink` with every text of the scope whose vector may sit in the
// embedding cache: each turn's (user_name, user_text, assistant_name,
// assistant_text) with `fact_text` empty, then each fact's text.
struct ScopeText {
  std::string user_name, user_text, assistant_name, assistant_text;
  std::string fact_text;
  bool is_fact = false;
};
Status ForEachCachedText(sql::Db* db, std::int64_t scope_id, const std::function<void(const ScopeText&)>& sink);

// Deletes every row of the scope (turns, pages, segments, facts and their
// history, entities and links, profile, term statistics, jobs, idempotency
// records, full-text rows) and the scope row itself, and the embedding-cache
// entries of the scope's tenant with the given text hashes. Returns the
// number of turns erased (0 when the scope does not exist).
// REQUIRES: inside a write transaction.
Result<std::int64_t> EraseScope(sql::Db* db, std::int64_t scope_id, const std::vector<std::int64_t>& cache_hashes);

// The tables EraseScope clears, and the tables that are deliberately kept
// (content-free or not per scope), for the schema test.
std::vector<std::string> ErasedTables();
std::vector<std::string> KeptTables();

}  // namespace engram::store
