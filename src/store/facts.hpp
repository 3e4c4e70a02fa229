// The facts repository: the rows of the versioned fact store
// (docs/MEMORY_API.md, "Storage"). One facts row per version of a memory;
// the rows of one memory share memory_id, and at most one of them is not
// superseded. memory/facts/fact_store.hpp decides what is written (dedup,
// versions, history, receipts); these functions only read and write rows.
// Reads with a scope, a state and a caller's filter take a FactSelector
// (store/facts_filter_sql.hpp); the full-text index is store/facts_fts.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engram/facts.hpp"
#include "engram/result.hpp"
#include "store/db.hpp"
#include "store/facts_filter_sql.hpp"

namespace engram::store {

// The facts a dialogue's fact sections hold (the context's "Facts about the
// user" and "... the assistant", the profile's lists): in the dialogue's
// scope row, the live facts consolidation wrote (kinds user and assistant)
// and the memories added through the fact API in the dialogue's own scope
// ({user, agent = assistant}, no run id; kind memory); in the row of the
// user's own memories ({user}), those with no run id. SQL conditions on the
// facts table's columns: kDialogueFactRows for the dialogue's row,
// kUserFactRows for the user's. A memory is a fact about the assistant when
// it is attributed to the assistant, about the user otherwise
// (kDialogueFactKind).
inline constexpr const char* kDialogueFactRows =
    "(kind IN ('user','assistant') OR (kind = 'memory' AND run_id = ''))";
inline constexpr const char* kUserFactRows = "(kind = 'memory' AND run_id = '')";
inline constexpr const char* kDialogueFactKind =
    "(CASE WHEN kind <> 'memory' THEN kind WHEN attributed_to = 'assistant' THEN 'assistant' ELSE 'user' END)";

// The memory's own ids inside its scope row ("" = none).
struct FactIds {
  std::string user, agent, run;
};

// One facts row, as the fact store reads it.
struct FactRow {
  std::int64_t id = 0;
  std::int64_t scope_id = 0;
  MemoryItem item;  // tenant from the scope row; expired as of the read's `now`
  std::uint64_t norm_hash = 0;
  std::vector<float> embedding;
  std::string source_pages;  // JSON array of page ids
  std::string idempotency_key;
  TimeMs record_time = 0;
};

// The columns ReadFactRow expects, on the facts alias "f" (for a read that
// writes its own query: engine_queries.cpp's export).
extern const char* const kFactColumns;
// The row at the statement's current step (expired: expires_at <= now).
FactRow ReadFactRow(sql::Stmt* st, TimeMs now);

// Version 1 of a new memory (status live).
struct NewFactRow {
  std::int64_t scope_id = 0;
  std::string memory_id;
  FactIds ids;
  std::string kind, role, actor, attributed_to;
  std::string text;
  std::uint64_t norm_hash = 0;
  const std::vector<float>* embedding = nullptr;  // REQUIRED
  std::string metadata;      // JSON object text
  std::string source_pages;  // JSON array of page ids
  TimeMs event_time = 0;
  TimeMs now = 0;            // record, creation and update time
  std::optional<TimeMs> expires_at;
  std::string idempotency_key;  // "" = none (NULL)
  bool degraded = false;
};
// Inserts it; returns facts.id. REQUIRES: inside a write transaction.
Result<std::int64_t> InsertFactRow(sql::Db* db, const NewFactRow& row);

// What the next version of a memory changes; everything else (identity,
// kind, role, actor, source, creation time, key, degraded) is copied.
struct FactVersionRow {
  std::string text;
  std::uint64_t norm_hash = 0;
  const std::vector<float>* embedding = nullptr;  // REQUIRED
  std::string metadata;
  std::optional<TimeMs> expires_at;
  TimeMs now = 0;  // record and update time
};
// Inserts version (from's version + 1) of from_fact_id's memory, live;
// returns its facts.id. REQUIRES: inside a write transaction.
Result<std::int64_t> InsertFactVersion(sql::Db* db, std::int64_t from_fact_id, const FactVersionRow& row);

// Moves a live row to `status` ("superseded" or "deleted") at `now`; false
// when the row was not live (changed concurrently). REQUIRES: inside a write
// transaction.
Result<bool> RetireLiveFact(sql::Db* db, std::int64_t fact_id, const char* status, TimeMs now);

// The live row of exactly (scope_id, ids) with this normalised-text hash.
Result<std::optional<FactRow>> FindLiveFactByHash(sql::Db* db, std::int64_t scope_id, const FactIds& ids,
                                                  std::uint64_t norm_hash, TimeMs now);

// A live row's vector and what the in-memory snapshots keep of it.
struct FactVectorRow {
  std::int64_t id = 0;
  std::string memory_id;
  FactIds ids;
  std::optional<TimeMs> expires_at;
  std::vector<float> embedding;
  std::string text;
};
// Called per row; false stops the scan.
using FactVectorSink = std::function<bool(FactVectorRow& row)>;
// Every live row of a scope row, oldest first.
Status ScanLiveFactVectors(sql::Db* db, std::int64_t scope_id, const FactVectorSink& sink);
// The live rows of exactly (scope_id, ids) unexpired at `now`, oldest first.
Status ScanUnexpiredFactVectors(sql::Db* db, std::int64_t scope_id, const FactIds& ids, TimeMs now,
                                const FactVectorSink& sink);
// The rows the selector sees, oldest first.
Status ScanFactVectors(sql::Db* db, const FactSelector& selector, const FactVectorSink& sink);

// The rows the selector sees, oldest first (facts.id).
Result<std::vector<FactRow>> SelectFactRows(sql::Db* db, const FactSelector& selector);
// The highest version the selector sees (a memory's current row when the
// selector names one memory and excludes superseded rows); nullopt if none.
Result<std::optional<FactRow>> FindNewestFact(sql::Db* db, const FactSelector& selector);

// A list position: after the memory created at `created_at` with this id.
struct FactCursor {
  TimeMs created_at = 0;
  std::string memory_id;
};
// Up to `limit` rows the selector sees, newest first by (created_at,
// memory_id), after `after` when given.
Result<std::vector<FactRow>> ListFactRows(sql::Db* db, const FactSelector& selector,
                                          const std::optional<FactCursor>& after, int limit);

// The ids among `ids` of rows the selector sees (any order).
Result<std::vector<std::int64_t>> FilterFactIds(sql::Db* db, const FactSelector& selector,
                                                const std::vector<std::int64_t>& ids);
// The rows among `ids` that the selector sees (any order).
Result<std::vector<FactRow>> FetchFactRows(sql::Db* db, const FactSelector& selector,
                                           const std::vector<std::int64_t>& ids);

// Scope rows of a tenant's user (the scope rows a narrower read spans), by id.
Result<std::vector<std::int64_t>> UserScopeIds(sql::Db* db, const std::string& tenant, const std::string& user);

// Every version of a memory: how many there are.
Result<std::int64_t> CountFactVersions(sql::Db* db, const std::string& memory_id);
// One version of a memory, for a purge.
struct FactVersionText {
  std::int64_t id = 0;
  std::string text;
  std::int64_t version = 0;
  std::string role;
};
// Every version of a memory (storage order).
Result<std::vector<FactVersionText>> ListFactVersions(sql::Db* db, const std::string& memory_id);
// Erases the content of every version of a memory: the embedding-cache
// entries with `cache_hashes`, the entity links of `fact_ids` (and entities
// no row names any more), its links, and the texts, metadata, actor,
// embeddings and keys of its rows (status purged, updated at `now`) and of
// its history. The full-text rows are facts_fts's (store::UnindexText, FullText::kFacts).
// REQUIRES: inside a write transaction.
Status EraseFactContent(sql::Db* db, const std::string& memory_id, const std::vector<std::int64_t>& fact_ids,
                        const std::vector<std::int64_t>& cache_hashes, TimeMs now);

}  // namespace engram::store
