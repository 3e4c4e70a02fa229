#include "store/sqlite.hpp"

#include <cstring>

#include "store/errors.hpp"

namespace engram::sql {

namespace {

Status FromCode(int rc, std::string_view context, const char* msg) {
  std::string m = std::string(context) + ": " + (msg ? msg : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return Status::Corruption(m);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    // A failed read, write or fsync (EIO): the statement was not applied
    // (its transaction rolled back); retrying may get past it.
    case SQLITE_IOERR:
      return Status::Unavailable(std::string(kStoreUnavailable) + m);
    case SQLITE_FULL:  // ENOSPC: nothing was written; writes fail until space is freed
      return Status::IoError(std::string(kStoreFull) + m);
    case SQLITE_CONSTRAINT:
      return Status::AlreadyExists(m);
    case SQLITE_READONLY:  // opened read-only (store/open.cpp: a store this process cannot write)
      return Status::PermissionDenied(
          "the store is read-only (its file, directory or media cannot be written by this process): " + m);
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return Status::PermissionDenied(m);
    default:
      return Status::IoError(m);
  }
}

}  // namespace

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, const OpenOptions& options) {
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX;
  if (options.read_only) {
    flags |= SQLITE_OPEN_READONLY;
  } else {
    flags |= SQLITE_OPEN_READWRITE;
    if (options.create) flags |= SQLITE_OPEN_CREATE;
  }
  std::string name = path;
  if (options.read_only && options.immutable) {
    // file: URI with the path percent-encoded where URI syntax would read it.
    name = "file:";
    for (unsigned char c : path) {
      if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
        static constexpr char kHex[] = "0123456789ABCDEF";
        name += '%';
        name += kHex[c >> 4];
        name += kHex[c & 15];
      } else {
        name += static_cast<char>(c);
      }
    }
    name += "?immutable=1";
    flags |= SQLITE_OPEN_URI;
  }
  int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status st = FromCode(rc, "open " + path, raw ? sqlite3_errmsg(raw) : nullptr);
    sqlite3_close(raw);
    return st;
  }
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw, path));
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, options.busy_timeout_ms);
  // Reading the schema detects files that are not databases.
  ENGRAM_RETURN_IF_ERROR(db->Exec("PRAGMA schema_version"));
  // FULL: a commit on any connection (the API keys have their own) is durable
  // before it is acknowledged; OpenWriter sets NORMAL when asked.
  ENGRAM_RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL"));
  return db;
}

SqliteDb::~SqliteDb() {
  cache_.clear();  // finalize statements before closing
  if (db_) sqlite3_close_v2(db_);
}

Status SqliteDb::EnableWal() {
  if (path_ == ":memory:") return Status::Ok();
  return Exec("PRAGMA journal_mode=WAL");
}

Status SqliteDb::Exec(std::string_view sql) {
  char* err = nullptr;
  std::string s(sql);
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    Status st = FromCode(rc, "sql", err);
    sqlite3_free(err);
    return st;
  }
  return Status::Ok();
}

Status SqliteDb::ExecCached(std::string_view sql) {
  auto prepared = Prepare(sql);
  if (!prepared.ok()) return Exec(sql);
  sqlite3_stmt* stmt = static_cast<SqliteStmt*>(*prepared)->stmt_;
  const int rc = sqlite3_step(stmt);
  Status st = rc == SQLITE_DONE || rc == SQLITE_ROW ? Status::Ok() : FromCode(rc, "sql", sqlite3_errmsg(db_));
  sqlite3_reset(stmt);
  return st;
}

Result<Stmt*> SqliteDb::Prepare(std::string_view sql) {
  std::string key(sql);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    it->second->Reset();
    return it->second.get();
  }
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v3(db_, key.c_str(), static_cast<int>(key.size()),
                              SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  if (rc != SQLITE_OK) return LastError("prepare");
  auto stmt = std::make_unique<SqliteStmt>(this, raw);
  Stmt* out = stmt.get();
  cache_.emplace(std::move(key), std::move(stmt));
  return out;
}

std::int64_t SqliteDb::LastInsertRowId() { return sqlite3_last_insert_rowid(db_); }
int SqliteDb::Changes() const { return sqlite3_changes(db_); }

Status SqliteDb::LastError(std::string_view context) const {
  return FromCode(sqlite3_extended_errcode(db_), context, sqlite3_errmsg(db_));
}

SqliteStmt::~SqliteStmt() { sqlite3_finalize(stmt_); }

Stmt& SqliteStmt::Bind(int i, std::int64_t v) {
  if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) bind_error_ = db_->LastError("bind");
  return *this;
}
Stmt& SqliteStmt::Bind(int i, double v) {
  if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) bind_error_ = db_->LastError("bind");
  return *this;
}
Stmt& SqliteStmt::Bind(int i, std::string_view v) {
  if (sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) !=
      SQLITE_OK)
    bind_error_ = db_->LastError("bind");
  return *this;
}
Stmt& SqliteStmt::BindBlob(int i, const void* data, int bytes) {
  if (sqlite3_bind_blob(stmt_, i, data, bytes, SQLITE_TRANSIENT) != SQLITE_OK)
    bind_error_ = db_->LastError("bind");
  return *this;
}
Stmt& SqliteStmt::BindNull(int i) {
  if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) bind_error_ = db_->LastError("bind");
  return *this;
}

Result<bool> SqliteStmt::Step() {
  if (!bind_error_.ok()) {
    Status st = bind_error_;
    Reset();
    return st;
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status st = db_->LastError("step");
  sqlite3_reset(stmt_);
  return st;
}

Status SqliteStmt::Run() {
  for (;;) {
    auto r = Step();
    if (!r.ok()) return r.status();
    if (!*r) break;
  }
  Reset();
  return Status::Ok();
}

void SqliteStmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = Status::Ok();
}

std::int64_t SqliteStmt::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
double SqliteStmt::Double(int col) const { return sqlite3_column_double(stmt_, col); }
std::string SqliteStmt::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string();
}
bool SqliteStmt::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
std::vector<float> SqliteStmt::Floats(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  std::vector<float> v(static_cast<std::size_t>(n) / sizeof(float));
  if (p && !v.empty()) std::memcpy(v.data(), p, v.size() * sizeof(float));
  return v;
}

}  // namespace engram::sql
