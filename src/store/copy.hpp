// Moving a whole store (`engram store copy`): from a SQLite file or a
// PostgreSQL database to another one, either direction. The target's schema is
// made by the normal path (OpenWriter); every table is then copied with the
// same ids in ONE write transaction on the target, from ONE read transaction
// on the source (a consistent snapshot), rows streamed in batches. After the
// commit, each table's row count and content hash are read again from the
// target and compared with the source's.
//
// The table list lives here and is checked against the schema by a test, so a
// new table or column cannot be left behind.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "store/db.hpp"

namespace engram::store {

// How a column is read and written: an integer, text, or bytes (a vector:
// BLOB / BYTEA, copied byte for byte). Any column may be NULL.
enum class CopyKind { kInt, kText, kBlob };

struct CopyColumn {
  std::string name;
  CopyKind kind = CopyKind::kInt;
};

// One table as the copy sees it.
struct CopyTable {
  std::string name;
  // Every column, in the order they are read and written. On the full-text
  // tables and profile_slots the first is `rowid` (implicit in SQLite, a
  // column in PostgreSQL).
  std::vector<CopyColumn> columns;
  std::string order_by;  // the primary key, for reading in key order
  std::string identity;  // PostgreSQL identity column ("" when none)
};

// Every table of the schema (meta included), in an order that satisfies the
// foreign keys: a table comes after every table it references.
const std::vector<CopyTable>& CopyTables();
// Their names, in the same order.
std::vector<std::string> CopiedTables();

// Meta keys that belong to the store that holds them (written when its schema
// is created): never copied, left out of the meta digest. scope_id_high is
// recomputed for the target (at least the largest scope id the source ever
// gave) and checked on its own.
bool IsStoreBookkeeping(const std::string& meta_key);

// A table's row count and content hash. The hash is the sum (mod 2^128) of an
// xxh3-128 per row over its columns (kind-tagged, lengths included), read
// through sql::Stmt the same way on both backends; a sum does not depend on
// the order of the rows, which differs between backends for text keys (the
// collations differ).
struct TableDigest {
  std::string table;
  std::int64_t rows = 0;
  std::int64_t vector_bytes = 0;  // bytes of BLOB / BYTEA values
  std::uint64_t hash_low = 0, hash_high = 0;
  std::string Hash() const;  // 32 hex digits
  bool SameContent(const TableDigest& o) const {
    return rows == o.rows && hash_low == o.hash_low && hash_high == o.hash_high;
  }
};

// The digest of every table of CopyTables(), in its order (meta without its
// bookkeeping keys), read in one read transaction of `db`.
// REQUIRES: outside any transaction.
Result<std::vector<TableDigest>> DigestStore(sql::Db* db);

struct CopyOptions {
  std::int64_t now_ms = 0;  // the target's created_at
  // Called after each table is copied (progress).
  std::function<void(const TableDigest&)> on_table;
  // Tests: called after the commit, before the verification.
  std::function<void(sql::Db* target)> before_verify;
};

struct CopyReport {
  std::string source, target;       // without passwords
  std::vector<TableDigest> tables;  // as copied and verified, in CopyTables() order
  std::int64_t rows = 0;
  std::int64_t vector_bytes = 0;
  std::int64_t scope_id_high = 0;  // the target's scope id high-water mark
  double seconds = 0;
};

// Copies the store at `source` into the new store at `target` (locations as
// for OpenWriter: a SQLite file path or a postgresql:// URL).
// Refused, with nothing written: a source that is missing (NotFound), not an
// engram store, of another schema version, or in the middle of an embedder
// migration; a target that is not empty: an existing SQLite file or a
// PostgreSQL schema with tables, unless it is an engram store of this version
// that holds nothing but what its creation wrote (FailedPrecondition); a
// ":memory:" location or the same store on both sides (InvalidArgument).
// A failure before the commit leaves no new SQLite file behind (a PostgreSQL
// target keeps the empty schema, which a new copy accepts). A verification
// mismatch after the commit is Corruption naming the tables.
Result<CopyReport> CopyStore(const std::string& source, const std::string& target, const CopyOptions& options);

}  // namespace engram::store
