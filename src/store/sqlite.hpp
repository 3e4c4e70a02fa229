// A thin, exception-free wrapper over the SQLite C API: a connection, prepared
// statements with bind/step/column helpers, and RAII transactions.
// Thread-safety: a Db (and its statements) must be used by one thread at a time.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engram/result.hpp"

namespace engram::sql {

class Stmt;

struct OpenOptions {
  bool read_only = false;
  bool create = true;     // create the file when missing (ignored when read_only)
  int busy_timeout_ms = 5000;
};

class Db {
 public:
  // Opens (or creates) a database file; ":memory:" for a private in-memory db.
  // Sets foreign keys, synchronous=NORMAL and the busy timeout; the journal
  // mode is left as it is (see EnableWal). A file that is not a SQLite
  // database gives Corruption.
  static Result<std::unique_ptr<Db>> Open(const std::string& path, const OpenOptions& options);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Switches a file database to WAL mode (persistent; a no-op in memory).
  Status EnableWal();
  // Runs one or more statements without results.
  Status Exec(std::string_view sql);
  // A cached prepared statement, reset and with bindings cleared. The pointer
  // stays valid for the lifetime of the Db. Use one at a time per SQL text.
  Result<Stmt*> Prepare(std::string_view sql);
  std::int64_t LastInsertRowId() const;
  int Changes() const;
  const std::string& path() const { return path_; }
  sqlite3* raw() { return db_; }
  // Maps the last SQLite error on this connection to a Status.
  Status LastError(std::string_view context) const;

 private:
  Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
  std::unordered_map<std::string, std::unique_ptr<Stmt>> cache_;
};

class Stmt {
 public:
  Stmt(Db* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Binding, 1-based indexes. Returns *this so calls chain.
  Stmt& Bind(int i, std::int64_t v);
  Stmt& Bind(int i, int v) { return Bind(i, static_cast<std::int64_t>(v)); }
  Stmt& Bind(int i, double v);
  Stmt& Bind(int i, std::string_view v);
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Stmt& BindBlob(int i, const void* data, int bytes);
  Stmt& BindNull(int i);

  // Steps once: true when a row is available, false when done.
  Result<bool> Step();
  // Steps to completion (for statements without rows).
  Status Run();
  void Reset();

  std::int64_t Int(int col) const;
  double Double(int col) const;
  std::string Text(int col) const;
  bool IsNull(int col) const;
  std::vector<float> Floats(int col) const;  // a BLOB of floats

 private:
  Db* db_;
  sqlite3_stmt* stmt_;
  Status bind_error_;
};

// A write transaction (BEGIN IMMEDIATE) that rolls back unless committed.
class Txn {
 public:
  static Result<std::unique_ptr<Txn>> Begin(Db* db);
  ~Txn();
  Status Commit();

 private:
  explicit Txn(Db* db) : db_(db) {}
  Db* db_;
  bool done_ = false;
};

// A read transaction (BEGIN DEFERRED): every read inside sees one snapshot.
// Ends (COMMIT) when destroyed.
class ReadTxn {
 public:
  static Result<std::unique_ptr<ReadTxn>> Begin(Db* db);
  ~ReadTxn();

 private:
  explicit ReadTxn(Db* db) : db_(db) {}
  Db* db_;
};

}  // namespace engram::sql
