// The PostgreSQL backend of the connection seam (store/db.hpp), over libpq.
// SQL is written with `?` / `?N` placeholders (rewritten to `$N`, outside
// string literals, quoted identifiers, dollar quotes and comments; a bare `?`
// takes the largest number used so far plus one, as in SQLite). The jsonb
// operators `?`, `?|` and `?&` cannot be written: use jsonb_exists() & co.
// Statements are prepared once per connection and cached by SQL text.
// Parameters are sent as text (blobs as binary bytea) and typed by the server
// from their context; a blob bound where the server inferred another type is
// sent as bytea through a second prepared variant. Text holding a NUL byte is
// refused at bind (InvalidArgument), as is text that is not UTF-8 (by the server).
// Results are read as text: Int() also reads booleans as 1/0, Text() and
// Floats() decode bytea into its raw bytes.
// Errors: unique violations (and every other constraint violation, class 23,
// as in SQLite) are AlreadyExists, serialization failures, deadlocks and
// statements in an aborted transaction Aborted (retry the transaction), a lost
// connection, a server that cannot be reached, a statement or lock timeout,
// insufficient resources (class 53) and a server I/O error Unavailable, a
// full disk (53100) IoError with the kStoreFull prefix (store/errors.hpp), invalid UTF-8 InvalidArgument, writes in a read-only
// transaction PermissionDenied, data corruption Corruption, every other
// failure IoError; messages read "context: message (SQLSTATE xxxxx)" and never
// carry the password. A COMMIT that the server turned into a ROLLBACK (an
// earlier statement of the transaction failed) is Aborted.
// Lost connections: the call that finds the connection lost fails with
// Unavailable. Outside a transaction, the next call reconnects (same URL and
// settings; statements are prepared again); BeginWrite and BeginRead, Prepare
// and a SELECT outside a transaction that find it lost reconnect and run at
// once (nothing had been done, or it only read). Inside one, every call fails with
// Unavailable until Rollback (Ok: the server has rolled it back) or Commit
// (Unavailable) ends it.
// Thread-safety: a PgDb (and its statements) must be used by one thread at a time.
#pragma once

#include <cstdint>

#include "store/db.hpp"

struct pg_conn;    // libpq's PGconn
struct pg_result;  // libpq's PGresult

namespace engram::sql {

class PgStmt;

// The key of the advisory lock that serialises write transactions ("ENGR").
inline constexpr std::int64_t kWriterLockKey = 0x454e4752;

class PgDb final : public Db {
 public:
  // Connects to `url` (postgresql://user[:password]@host[:port]/db?options;
  // a unix socket folder as `host=` option). Sets application_name=engram
  // (unless the URL names one), client_encoding=UTF8 and connect_timeout=5
  // (unless the URL sets one). With read_only, transactions are READ ONLY.
  // Unavailable when the server cannot be reached, InvalidArgument for a
  // malformed URL.
  static Result<std::unique_ptr<PgDb>> Open(const std::string& url, const OpenOptions& options);
  ~PgDb() override;
  PgDb(const PgDb&) = delete;
  PgDb& operator=(const PgDb&) = delete;

  Dialect dialect() const override { return Dialect::kPostgres; }
  Status Exec(std::string_view sql) override;
  Result<Stmt*> Prepare(std::string_view sql) override;
  int Changes() const override;
  // lastval() of this session: the id of the last row inserted into a table
  // with an identity column (the last value any sequence gave this session);
  // 0 when none did. Safe inside a transaction (runs under a savepoint).
  std::int64_t LastInsertRowId() override;
  const std::string& path() const override;
  // Writes: BEGIN (READ COMMITTED), then the transaction-level advisory lock
  // kWriterLockKey, waited for up to busy_timeout_ms (then Unavailable), so
  // write transactions are serialised across processes as SQLite's BEGIN
  // IMMEDIATE does and every read-then-write inside one is safe. Reads: BEGIN
  // ISOLATION LEVEL REPEATABLE READ READ ONLY (one snapshot, never waits).
  // As in SQLite, Begin inside a transaction and Commit or Rollback outside
  // one are IoError (PostgreSQL itself only warns).
  Status BeginWrite() override;
  Status BeginRead() override;
  Status Commit() override;
  Status Rollback() override;

  // `?` / `?N` placeholders as `$N` (exposed for tests).
  static std::string RewritePlaceholders(std::string_view sql);

 private:
  friend class PgStmt;  // postgres_stmt.cpp
  struct Impl;
  explicit PgDb(std::unique_ptr<Impl> impl);

  // A new prepared statement for `sql` (postgres_stmt.cpp).
  static Result<std::unique_ptr<Stmt>> NewStmt(PgDb* db, std::string_view sql);
  pg_conn* conn() const;
  // Bumped by every reconnect: statements prepared before must be prepared again.
  std::uint64_t generation() const;
  // A fresh server-side statement name ("s1", "s2", ...).
  std::string NextName();
  // Ok when the connection is up, reconnecting first when it was lost
  // outside a transaction.
  Status Ready(std::string_view context);
  // The connection is lost and no transaction was open on it: nothing of the
  // failed call was done.
  bool LostOutsideTxn() const;
  // Ok for a successful result (and records Changes()); else the error as a Status.
  Status Check(pg_result* res, std::string_view context);
  Status Simple(const char* sql, std::string_view context);
  // BEGIN, connecting again once when BEGIN finds the connection lost.
  static Status BeginAgainIfLost(PgDb* db, const char* sql);

  std::unique_ptr<Impl> impl_;
};

}  // namespace engram::sql
