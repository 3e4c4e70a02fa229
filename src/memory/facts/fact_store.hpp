// FactStore: the one versioned store of facts (docs/MEMORY_API.md). Every
// fact (consolidation's user/assistant facts and the memories of the fact
// API) is written through InsertFact: scope checks, exact and near-duplicate
// dedup, the row, its FTS document, its entities, its history event and its
// lineage receipt, all in the caller's transaction. Versions are rows sharing
// a memory_id; at most one row of a memory is not superseded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/facts.hpp"
#include "engram/result.hpp"
#include "memory/facts/fact_vectors.hpp"
#include "models/embedder.hpp"
#include "store/facts.hpp"
#include "store/sqlite.hpp"

namespace engram::wordnet {
class WordNet;
}

namespace engram::memory::facts {

// The scope row id of an absent user or agent id (scope rows need both; the
// memory's own ids are in facts.user_id / agent_id, "" = none).
inline constexpr const char* kNoId = kNoScopeId;

// Validates a memory scope: tenant, and at least one of user/agent/run; each
// given id 1..128 bytes of printable UTF-8, user and agent not kNoId.
// `for_write` refuses include_narrower. Messages name the field.
Status ValidateMemoryScope(const MemoryScope& s, bool for_write);
// The (tenant, user, assistant) of the scope row that holds the memory scope.
Scope RowScope(const MemoryScope& s);

// The row of the user's own memories ({user}: RowScope (tenant, user, "-"))
// whose memories with no run id a dialogue scope row's fact sections show
// beside its own (store/facts.hpp kUserFactRows); 0 when that row does not
// exist or `scope_id` is no dialogue's row.
Result<std::int64_t> UserRowOf(sql::Db* db, std::int64_t scope_id);
// The row whose snapshot a dialogue scope's retrieval and fact lists read:
// its own, or, while the user has no dialogue with this assistant, the row
// of the user's own memories; nullopt when neither exists.
Result<std::optional<store::ScopeRow>> FactSectionsRow(sql::Db* db, const Scope& scope);
// The scope rows whose snapshots read the facts of the row `scope_id`
// (`row_scope`): the row itself and, for the row of a user's own memories,
// every row of that user (each dialogue's fact sections show them).
Result<std::vector<std::int64_t>> FactReaders(sql::Db* db, std::int64_t scope_id, const Scope& row_scope);

// A typed entity mention.
struct EntityRef {
  std::string name;  // as written; stored lower-cased
  std::string type;  // "name", "quoted", "identifier" or the model's type
};

// A fact to insert.
struct NewFact {
  std::string kind = "memory";  // user, assistant, memory, procedural
  std::string text;
  std::string role, actor, attributed_to;
  std::string metadata = "{}";  // JSON object text (validated by the caller)
  std::vector<std::int64_t> source_pages;
  TimeMs event_time = 0;
  std::optional<TimeMs> expires_at;
  std::string idempotency_key;
  bool degraded = false;
  Vector embedding;  // of `text`, normalised
  // Entities to link; when empty the built-in extractor names them.
  std::vector<EntityRef> entities;
  bool extract_entities = true;
};

// Where and how a write happens. REQUIRES for every write below: `db` is in a
// write transaction that the caller commits (or rolls back) as a whole.
struct WriteContext {
  sql::Db* db = nullptr;
  std::int64_t scope_id = 0;    // the scope row (tenant, user|-, agent|-)
  MemoryScope ids;              // the exact identity the facts get
  Scope row_scope;              // of scope_id, for receipts
  TimeMs now = 0;
  std::string op_id;            // the operation's run id (receipts, history)
  std::string actor = "api";    // who performs it (history)
  std::string source_version;   // receipts
  std::string from_tier = "input";  // receipts: "input" (API) or "mtm" (consolidation)
  double near_duplicate = 0.95; // cosine at which a new fact duplicates a live one
  // The vector snapshot of scope_id as committed when the transaction began
  // (null: the near-duplicate check scans the scope's embeddings in SQL), and
  // where this operation's changes are recorded (also read by later
  // near-duplicate checks of the same operation). Both optional.
  const FactVectors* vectors = nullptr;
  FactChanges* changes = nullptr;
  // WordNet for the paraphrase check of InsertFact (SameInOtherWords): the
  // built-in engine sets it; null: only the embedding decides.
  const wordnet::WordNet* wordnet = nullptr;
};

// What one write did: "ADD", "UPDATE" (a new version superseded the live
// one), "NOOP" (duplicate of memory_id), "DELETE".
struct WriteOutcome {
  std::string event;
  std::string memory_id;
  std::int64_t fact_id = 0;
  std::int64_t version = 1;
  std::string text;
  std::string previous_text;
  std::int64_t superseded_version = 0;
};

// One facts row (store/facts.hpp).
using FactRow = store::FactRow;

// A fresh public id: "m_" + 16 random hex digits.
std::string NewMemoryId();

// Inserts a fact unless it is an exact (normalised-text hash) or near
// (cosine >= near_duplicate) duplicate of a live fact of exactly ctx.ids:
// then NOOP with that memory's id, except that an expired duplicate is
// renewed by a new version (UPDATE). ADD writes row, FTS, entities, history
// and a receipt.
Result<WriteOutcome> InsertFact(const WriteContext& ctx, const NewFact& f);

// A new version of `current` (which must be live): `text` (with embedding and
// entities) and/or metadata/expiry changed. The old row becomes superseded.
// event: "UPDATE" (the caller edited it) or "SUPERSEDE" (newer information).
// A text that duplicates another live memory of the scope is AlreadyExists.
struct VersionChange {
  std::optional<std::string> text;
  const Vector* embedding = nullptr;  // REQUIRED when text is set
  std::optional<std::string> metadata;
  std::optional<std::optional<TimeMs>> expires_at;
  std::vector<EntityRef> entities;
  std::string event = "UPDATE";
};
Result<WriteOutcome> NewVersion(const WriteContext& ctx, const FactRow& current,
                                const VersionChange& change);

// Tombstones the live row (status deleted, out of FTS); history keeps the text.
Status DeleteFact(const WriteContext& ctx, const FactRow& current);

// Erases the content of every version of a memory: texts, metadata, actor,
// embeddings, FTS rows, entity links (orphaned entities go), links, history
// texts and embedding-cache entries of its texts. Leaves content-free rows
// (status purged) and history events (plus a PURGE event).
Status PurgeMemory(const WriteContext& ctx, const std::string& memory_id);

// The newest row of a memory if it is visible to `scope` (same tenant and
// exact ids, or narrower when scope.include_narrower); nullopt otherwise
// (no existence leak). Superseded rows are never returned.
Result<std::optional<FactRow>> FindMemory(sql::Db* db, const MemoryScope& scope,
                                          const std::string& memory_id, TimeMs now);

// The facts columns and row reader of store/facts.hpp, under the names the
// export (engine_queries.cpp) uses.
using store::kFactColumns;
inline FactRow ReadRow(sql::Stmt* st, TimeMs now) { return store::ReadFactRow(st, now); }

}  // namespace engram::memory::facts
