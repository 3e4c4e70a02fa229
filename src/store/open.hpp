// Opening a store: the one entry point that turns a location (a SQLite file,
// ":memory:", a postgresql:// URL) into checked connections.
#pragma once

#include <memory>
#include <string>

#include "store/db.hpp"

namespace engram::store {

struct StoreOpenOptions {
  // Checks an existing SQLite file before use (truncation always, the full
  // structural check up to 64 MiB).
  bool verify = true;
  std::int64_t now_ms = 0;  // for the schema's created_at
  // Every commit durable before it is acknowledged (SQLite synchronous=FULL,
  // PostgreSQL synchronous_commit=on); false: SQLite synchronous=NORMAL and
  // PostgreSQL synchronous_commit=off (EngineOptions::Durability).
  bool sync_every_commit = true;
};

// The writer connection of a store: creates the parent folder and the schema
// of a new store, checks and migrates an existing one (refusing a newer or a
// foreign database), and sets the connection up (SQLite: WAL, secure_delete).
Result<std::unique_ptr<sql::Db>> OpenWriter(const std::string& location,
                                            const StoreOpenOptions& options);
// A read-only connection to a store that OpenWriter has opened.
Result<std::unique_ptr<sql::Db>> OpenReader(const std::string& location);
// True for a private in-memory store (one connection, no readers).
bool IsInMemory(const std::string& location);
// True when the store exists (a SQLite file that is there; a PostgreSQL
// database with the engram schema). Creates nothing.
Result<bool> Exists(const std::string& location);

// A new database `name` (letters, digits, '_') on the PostgreSQL server of
// `server_url` (connected to as given): the URL of the new database.
Result<std::string> CreatePostgresDatabase(const std::string& server_url, const std::string& name);
// Drops it again (and every connection to it must be closed first).
Status DropPostgresDatabase(const std::string& server_url, const std::string& name);
// Bytes the store occupies: the SQLite file and its WAL; the PostgreSQL
// database (pg_database_size).
Result<std::int64_t> StoreBytes(const std::string& location);

// After an erasure: makes deleted content unrecoverable from the files
// (SQLite: merges the full-text indexes and truncates the WAL into the
// secure-deleted main file). Outside any transaction.
Status ScrubAfterErase(sql::Db* db);

}  // namespace engram::store
