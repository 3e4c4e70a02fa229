// The engram store schema and its migrations.
#pragma once

#include "store/db.hpp"

namespace engram::store {

// The schema version this build writes. Older stores are migrated forward on
// open; a newer store is refused (FailedPrecondition).
inline constexpr int kSchemaVersion = 2;

// SQLite application_id that marks a file as an engram store ("ENGR").
inline constexpr int kApplicationId = 0x454e4752;

// Creates the schema in an empty database, or migrates an older engram store
// to kSchemaVersion, in one transaction. A non-empty database that is not an
// engram store gives FailedPrecondition and is left untouched.
Status EnsureSchema(sql::Db* db, std::int64_t now_ms);
// The same on PostgreSQL (schema_postgres.cpp): the schema of kSchemaVersion
// in the connection's current schema, under the writer lock.
Status EnsurePostgresSchema(sql::Db* db, std::int64_t now_ms);

// Reads a meta value ("" when absent).
Result<std::string> GetMeta(sql::Db* db, std::string_view key);
Status SetMeta(sql::Db* db, std::string_view key, std::string_view value);

}  // namespace engram::store
