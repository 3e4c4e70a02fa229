// The connection seam of the data layer: one exception-free interface over the
// SQL engines engram runs on (SQLite, embedded; PostgreSQL, shared). A
// connection prepares statements (cached per SQL text), binds parameters,
// steps through rows and runs transactions. SQL is written once, with `?` or
// `?N` placeholders; a backend rewrites them into its own form. Text that
// differs between the dialects is chosen by `Db::dialect()` inside src/store/.
// Thread-safety: a Db (and its statements) must be used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engram/result.hpp"

namespace engram::sql {

enum class Dialect { kSqlite, kPostgres };

// The prefix of every kUnavailable status of a store (busy beyond the lock
// timeout, a lost or refused connection, a statement timeout): callers tell
// it from a model endpoint's unavailability, and may retry.
inline constexpr const char* kStoreUnavailable = "store unavailable: ";

struct OpenOptions {
  bool read_only = false;
  bool create = true;     // create the file when missing (SQLite; ignored when read_only)
  // SQLite, with read_only: the file cannot change while open (a store on
  // read-only media, with no -wal file and none can be made), so SQLite
  // reads it without the -shm and -wal files it could not create.
  bool immutable = false;
  int busy_timeout_ms = 5000;
};

// Where a store lives, parsed from `--db` / ENGRAM_DB: a file path (SQLite),
// ":memory:", or a `postgresql://` / `postgres://` URL. Any other `scheme://`
// is refused, so that a URL is never taken for a file path.
struct Location {
  Dialect dialect = Dialect::kSqlite;
  std::string target;  // the file path or the connection URL
};
Result<Location> ParseLocation(const std::string& text);
// The location without a password (for messages and reports).
std::string RedactLocation(const std::string& text);

class Stmt {
 public:
  virtual ~Stmt() = default;

  // Binding, 1-based indexes. Returns *this so calls chain; a failed bind is
  // reported by the next Step or Run.
  virtual Stmt& Bind(int i, std::int64_t v) = 0;
  Stmt& Bind(int i, int v) { return Bind(i, static_cast<std::int64_t>(v)); }
  virtual Stmt& Bind(int i, double v) = 0;
  virtual Stmt& Bind(int i, std::string_view v) = 0;
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  virtual Stmt& BindBlob(int i, const void* data, int bytes) = 0;
  // A vector as a BLOB / BYTEA of float32 (read back with Floats).
  Stmt& BindFloats(int i, const std::vector<float>& v) {
    return BindBlob(i, v.data(), static_cast<int>(v.size() * sizeof(float)));
  }
  virtual Stmt& BindNull(int i) = 0;

  // Steps once: true when a row is available, false when done.
  virtual Result<bool> Step() = 0;
  // Steps to completion (for statements without rows), then resets.
  virtual Status Run() = 0;
  // Ends the current execution and clears the bindings.
  virtual void Reset() = 0;

  // Columns of the current row, 0-based.
  virtual std::int64_t Int(int col) const = 0;
  virtual double Double(int col) const = 0;
  virtual std::string Text(int col) const = 0;
  virtual bool IsNull(int col) const = 0;
  virtual std::vector<float> Floats(int col) const = 0;  // a BLOB / BYTEA of floats
};

class Db {
 public:
  // Opens a store connection at `location` (see ParseLocation): a SQLite file
  // or ":memory:", or a PostgreSQL URL.
  static Result<std::unique_ptr<Db>> Open(const std::string& location, const OpenOptions& options);
  virtual ~Db() = default;

  virtual Dialect dialect() const = 0;
  // Runs one or more statements without results or parameters.
  virtual Status Exec(std::string_view sql) = 0;
  // A cached prepared statement, reset and with bindings cleared. The pointer
  // stays valid for the lifetime of the Db. Use one at a time per SQL text.
  virtual Result<Stmt*> Prepare(std::string_view sql) = 0;
  // Rows changed by the last INSERT, UPDATE or DELETE on this connection.
  virtual int Changes() const = 0;
  // The id of the last row inserted on this connection (prefer RETURNING).
  virtual std::int64_t LastInsertRowId() = 0;
  // The file path or the URL (without password).
  virtual const std::string& path() const = 0;

  // Transactions (used through Txn and ReadTxn). A write transaction takes
  // the backend's writer lock (SQLite: BEGIN IMMEDIATE); a read transaction
  // sees one consistent snapshot.
  virtual Status BeginWrite() = 0;
  virtual Status BeginRead() = 0;
  virtual Status Commit() = 0;
  virtual Status Rollback() = 0;
};

// A write transaction that rolls back unless committed.
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

// A read transaction: every read inside sees one snapshot. Ends when destroyed.
class ReadTxn {
 public:
  static Result<std::unique_ptr<ReadTxn>> Begin(Db* db);
  ~ReadTxn();

 private:
  explicit ReadTxn(Db* db) : db_(db) {}
  Db* db_;
};

// Steps the prepared, bound `st` to its last row, calling fn(st) for each,
// and resets it (also when a step fails: that step's status is returned).
template <typename Fn>
Status ForEachRow(Stmt* st, Fn&& fn) {
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) {
      st->Reset();
      return row.status();
    }
    if (!*row) break;
    fn(st);
  }
  st->Reset();
  return Status::Ok();
}

}  // namespace engram::sql
