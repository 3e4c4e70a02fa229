// The engram store schema and its migrations.
#pragma once

#include <string>
#include <string_view>

#include "store/db.hpp"

namespace engram::store {

// The schema version this build writes. Older stores are migrated forward on
// open; a newer store is refused (FailedPrecondition).
//   1  the first schema (SQLite only)
//   2  leased jobs, scope generations, scope ids never reused (the first
//      PostgreSQL schema)
//   3  every table that holds a tenant's data has a `tenant` column (the
//      tenant of the row's scope); PostgreSQL keys lead with it, so that a
//      distributed PostgreSQL can shard every table by tenant; the embedding
//      cache is keyed by tenant
inline constexpr int kSchemaVersion = 4;

// SQLite application_id that marks a file as an engram store ("ENGR").
inline constexpr int kApplicationId = 0x454e4752;

// Creates the schema in an empty database, or migrates an older engram store
// to kSchemaVersion, in one transaction. A non-empty database that is not an
// engram store gives FailedPrecondition and is left untouched.
Status EnsureSchema(sql::Db* db, std::int64_t now_ms);
// For a SQLite store opened read-only: the same checks without a change (a
// store of an older version needs a writable open first to be migrated).
Status CheckSchemaReadOnly(sql::Db* db);
// The same on PostgreSQL (schema_postgres.cpp): the schema of kSchemaVersion
// in the connection's current schema, under the writer lock.
Status EnsurePostgresSchema(sql::Db* db, std::int64_t now_ms);

// Creates the schema of an older `version` (SQLite: 1 to kSchemaVersion;
// PostgreSQL: 2 to kSchemaVersion) in an empty database, in one transaction,
// exactly as that version of engram created it: the first schema followed by
// every migration up to `version`. EnsureSchema creates new stores this way
// (so a new store and a migrated one are the same by construction); the
// migration tests build old stores with it.
Status CreateSchemaAtVersion(sql::Db* db, int version, std::int64_t now_ms);
Status CreatePostgresSchemaAtVersion(sql::Db* db, int version, std::int64_t now_ms);

// The key columns of a table that holds tenant data as an ON CONFLICT target
// names them, e.g. TenantKey(db, "scope_id, term"): PostgreSQL's keys lead
// with tenant ("(tenant, scope_id, term)"), SQLite's keep their columns
// ("(scope_id, term)"; SQLite is never sharded).
std::string TenantKey(sql::Db* db, std::string_view columns);

// The tenant of a scope row, as an SQL expression for statements that write
// or read rows of one scope: "(SELECT tenant FROM scopes WHERE id = ?N)".
std::string ScopeTenantSql(int placeholder);

// Reads a meta value ("" when absent).
Result<std::string> GetMeta(sql::Db* db, std::string_view key);
Status SetMeta(sql::Db* db, std::string_view key, std::string_view value);

}  // namespace engram::store
