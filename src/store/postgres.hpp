// The PostgreSQL backend of the connection seam (store/db.hpp), over libpq.
// SQL is written with `?` / `?N` placeholders (rewritten to `$N`, outside
// string literals and quoted identifiers); statements are prepared once per
// connection and cached by SQL text. Parameters are sent as text (blobs as
// binary bytea) and typed by the server from their context.
// Errors: unique violations are AlreadyExists, serialization failures and
// deadlocks Aborted (retry the transaction), a lost connection or a server
// that cannot be reached Unavailable, a statement timeout Unavailable, every
// other failure IoError; messages carry the SQLSTATE and never the password.
// Thread-safety: a PgDb (and its statements) must be used by one thread at a time.
#pragma once

#include "store/db.hpp"

namespace engram::sql {

class PgDb final : public Db {
 public:
  // Connects to `url` (postgresql://user[:password]@host[:port]/db?options;
  // a unix socket folder as `host=` option). With read_only, transactions are
  // READ ONLY. Unavailable when the server cannot be reached.
  static Result<std::unique_ptr<PgDb>> Open(const std::string& url, const OpenOptions& options);
  ~PgDb() override;
  PgDb(const PgDb&) = delete;
  PgDb& operator=(const PgDb&) = delete;

  Dialect dialect() const override { return Dialect::kPostgres; }
  Status Exec(std::string_view sql) override;
  Result<Stmt*> Prepare(std::string_view sql) override;
  int Changes() const override;
  // lastval() of this session: the id of the last row inserted into a table
  // with an identity column.
  std::int64_t LastInsertRowId() override;
  const std::string& path() const override;
  // BEGIN (READ COMMITTED, READ WRITE); BEGIN ISOLATION LEVEL REPEATABLE READ
  // READ ONLY for reads (one snapshot for every statement inside).
  Status BeginWrite() override;
  Status BeginRead() override;
  Status Commit() override;
  Status Rollback() override;

  // `?` / `?N` placeholders as `$N` (exposed for tests).
  static std::string RewritePlaceholders(std::string_view sql);

 private:
  struct Impl;
  explicit PgDb(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace engram::sql
