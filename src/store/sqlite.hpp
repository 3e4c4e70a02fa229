// The SQLite backend of the connection seam (store/db.hpp): an exception-free
// wrapper over the SQLite C API.
// Thread-safety: a SqliteDb (and its statements) must be used by one thread at a time.
#pragma once

#include <sqlite3.h>

#include <unordered_map>

#include "store/db.hpp"

namespace engram::sql {

class SqliteStmt;

class SqliteDb final : public Db {
 public:
  // Opens (or creates) a database file; ":memory:" for a private in-memory db.
  // Sets foreign keys, synchronous=FULL and the busy timeout; the journal
  // mode is left as it is (see EnableWal). A file that is not a SQLite
  // database gives Corruption.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, const OpenOptions& options);
  ~SqliteDb() override;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Switches a file database to WAL mode (persistent; a no-op in memory).
  Status EnableWal();

  Dialect dialect() const override { return Dialect::kSqlite; }
  Status Exec(std::string_view sql) override;
  Result<Stmt*> Prepare(std::string_view sql) override;
  int Changes() const override;
  std::int64_t LastInsertRowId() override;
  const std::string& path() const override { return path_; }
  Status BeginWrite() override { return Exec("BEGIN IMMEDIATE"); }
  Status BeginRead() override { return ExecCached("BEGIN"); }
  Status Commit() override { return ExecCached("COMMIT"); }
  Status Rollback() override { return Exec("ROLLBACK"); }

  sqlite3* raw() { return db_; }
  // Maps the last SQLite error on this connection to a Status.
  Status LastError(std::string_view context) const;

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  // Exec of one statement without parameters or rows, from the statement
  // cache: sqlite3_exec parses its text at every call (BEGIN and COMMIT of a
  // retrieval's read transaction: 3% of its time). The same errors as Exec.
  Status ExecCached(std::string_view sql);
  sqlite3* db_;
  std::string path_;
  std::unordered_map<std::string, std::unique_ptr<SqliteStmt>> cache_;
};

class SqliteStmt final : public Stmt {
 public:
  SqliteStmt(SqliteDb* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~SqliteStmt() override;
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;

  using Stmt::Bind;
  Stmt& Bind(int i, std::int64_t v) override;
  Stmt& Bind(int i, double v) override;
  Stmt& Bind(int i, std::string_view v) override;
  Stmt& BindBlob(int i, const void* data, int bytes) override;
  Stmt& BindNull(int i) override;
  Result<bool> Step() override;
  Status Run() override;
  void Reset() override;
  std::int64_t Int(int col) const override;
  double Double(int col) const override;
  std::string Text(int col) const override;
  bool IsNull(int col) const override;
  std::vector<float> Floats(int col) const override;

 private:
  SqliteDb* db_;
  sqlite3_stmt* stmt_;
  Status bind_error_;
  friend class SqliteDb;
};

}  // namespace engram::sql
