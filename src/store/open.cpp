#include "store/open.hpp"

#include <unistd.h>

#include <filesystem>

#include "store/schema.hpp"
#include "store/sqlite.hpp"

namespace engram::store {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t kQuickCheckMaxBytes = 64ull << 20;

// Checks an existing SQLite file: truncation (the header promises more pages
// than the file holds) always, the structural check up to kQuickCheckMaxBytes.
Status VerifySqliteFile(sql::Db* db, const std::string& path) {
  std::error_code ec;
  const std::uintmax_t bytes = fs::file_size(path, ec);
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * pc, db->Prepare("SELECT page_count * page_size FROM "
                                                      "pragma_page_count(), pragma_page_size()"));
  auto promised = pc->Step();
  const std::int64_t want = promised.ok() && *promised ? pc->Int(0) : 0;
  pc->Reset();
  if (!promised.ok()) {
    return Status::Corruption(path + ": unreadable (" + promised.status().message() +
                              "); the file was left untouched");
  }
  if (!ec && static_cast<std::uintmax_t>(want) > bytes && !fs::exists(path + "-wal")) {
    return Status::Corruption(path + ": truncated (" + std::to_string(bytes) + " of " +
                              std::to_string(want) + " bytes); the file was left untouched");
  }
  if (ec || bytes > kQuickCheckMaxBytes) return Status::Ok();
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * qc, db->Prepare("PRAGMA quick_check(1)"));
  auto row = qc->Step();
  if (!row.ok()) {
    return Status::Corruption(path + ": integrity check failed (" + row.status().message() +
                              "); the file was left untouched");
  }
  std::string verdict = *row ? qc->Text(0) : "no result";
  qc->Reset();
  if (verdict != "ok") {
    return Status::Corruption(path + ": integrity check failed (" + verdict +
                              "); the file was left untouched");
  }
  return Status::Ok();
}

fs::path DirOf(const fs::path& path) { return path.has_parent_path() ? path.parent_path() : fs::path("."); }

// Whether SQLite can find or make the -wal file beside `path`: when not,
// nothing writes the store (read-only media), and it is read as immutable.
bool WalReachable(const fs::path& path) {
  std::error_code ec;
  if (fs::exists(path.string() + "-wal", ec)) return true;
  return ::access(DirOf(path).c_str(), W_OK) == 0;
}

// Whether this process can write the store at `path` (an existing file):
// the file, and the directory where SQLite keeps the -wal and -shm files
// (unless both exist and are writable).
bool CanWrite(const fs::path& path) {
  if (::access(path.c_str(), W_OK) != 0) return false;
  if (::access(DirOf(path).c_str(), W_OK) == 0) return true;
  const std::string p = path.string();
  return ::access((p + "-wal").c_str(), W_OK) == 0 && ::access((p + "-shm").c_str(), W_OK) == 0;
}

Result<std::unique_ptr<sql::Db>> OpenSqliteWriter(const std::string& path,
                                                  const StoreOpenOptions& options) {
  const bool in_memory = path == ":memory:";
  bool existed = false;
  if (!in_memory) {
    std::error_code ec;
    fs::path p(path);
    existed = fs::exists(p, ec);
    if (existed && fs::is_directory(p, ec)) {
      return Status::InvalidArgument("db_path: " + path + " is a directory");
    }
    if (existed && fs::file_size(p, ec) == 0 && !ec) {
      return Status::Corruption(path +
                                " exists but is empty (truncated?); refusing to initialise over it. "
                                "Move it away to start a new store.");
    }
    if (!existed && p.has_parent_path()) {
      fs::create_directories(p.parent_path(), ec);
      if (ec) return Status::IoError("cannot create " + p.parent_path().string() + ": " + ec.message());
    }
  }
  if (existed && !CanWrite(path)) {
    // A store on read-only media, or another user's: opened read-only, so
    // reads work; a write is PermissionDenied ("readonly database").
    sql::OpenOptions ro;
    ro.read_only = true;
    ro.immutable = !WalReachable(path);
    ENGRAM_ASSIGN_OR_RETURN(auto db, sql::SqliteDb::Open(path, ro));
    if (options.verify) ENGRAM_RETURN_IF_ERROR(VerifySqliteFile(db.get(), path));
    ENGRAM_RETURN_IF_ERROR(CheckSchemaReadOnly(db.get()));
    return std::unique_ptr<sql::Db>(std::move(db));
  }
  ENGRAM_ASSIGN_OR_RETURN(auto db, sql::SqliteDb::Open(path, {}));
  if (existed && options.verify) ENGRAM_RETURN_IF_ERROR(VerifySqliteFile(db.get(), path));
  ENGRAM_RETURN_IF_ERROR(db->Exec("PRAGMA secure_delete = ON"));
  ENGRAM_RETURN_IF_ERROR(
      db->Exec(options.sync_every_commit ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL"));
  ENGRAM_RETURN_IF_ERROR(EnsureSchema(db.get(), options.now_ms));
  ENGRAM_RETURN_IF_ERROR(db->EnableWal());  // only once the file is known to be ours
  return std::unique_ptr<sql::Db>(std::move(db));
}

}  // namespace

bool IsInMemory(const std::string& location) { return location == ":memory:"; }

Result<std::unique_ptr<sql::Db>> OpenWriter(const std::string& location,
                                            const StoreOpenOptions& options) {
  // (The parsed location is read in place here and below: GCC 12 takes one
  // moved out of its Result for maybe-uninitialized.)
  const Result<sql::Location> parsed = sql::ParseLocation(location);
  if (!parsed.ok()) return parsed.status();
  const sql::Location& loc = *parsed;
  if (loc.dialect == sql::Dialect::kSqlite) return OpenSqliteWriter(loc.target, options);
  ENGRAM_ASSIGN_OR_RETURN(auto db, sql::Db::Open(location, {}));
  if (!options.sync_every_commit) ENGRAM_RETURN_IF_ERROR(db->Exec("SET synchronous_commit = off"));
  ENGRAM_RETURN_IF_ERROR(EnsureSchema(db.get(), options.now_ms));
  return db;
}

Result<std::unique_ptr<sql::Db>> OpenReader(const std::string& location) {
  sql::OpenOptions ro;
  ro.read_only = true;
  const Result<sql::Location> parsed = sql::ParseLocation(location);
  if (!parsed.ok()) return parsed.status();
  const sql::Location& loc = *parsed;
  ro.immutable = loc.dialect == sql::Dialect::kSqlite && !IsInMemory(loc.target) && !WalReachable(loc.target);
  return sql::Db::Open(location, ro);
}

Result<bool> Exists(const std::string& location) {
  const Result<sql::Location> parsed = sql::ParseLocation(location);
  if (!parsed.ok()) return parsed.status();
  const sql::Location& loc = *parsed;
  if (loc.dialect == sql::Dialect::kSqlite) {
    if (IsInMemory(loc.target)) return false;
    std::error_code ec;
    return fs::exists(loc.target, ec);
  }
  ENGRAM_ASSIGN_OR_RETURN(auto db, sql::Db::Open(location, {}));
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT count(*) FROM information_schema.tables "
                                      "WHERE table_schema = current_schema() AND table_name = 'meta'"));
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  bool exists = row && st->Int(0) > 0;
  st->Reset();
  return exists;
}

namespace {

Status CheckDatabaseName(const std::string& name) {
  if (name.empty() || name.size() > 60) return Status::InvalidArgument("database name: 1 to 60 characters");
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return Status::InvalidArgument("database name: only a-z, 0-9 and '_'");
    }
  }
  return Status::Ok();
}

// `url` with its database name replaced: postgresql://auth@host/DB?options.
Result<std::string> WithDatabase(const std::string& url, const std::string& name) {
  const auto start = url.find("://");
  const auto slash = start == std::string::npos ? std::string::npos : url.find('/', start + 3);
  if (slash == std::string::npos) return Status::InvalidArgument("db: no database name in " + sql::RedactLocation(url));
  const auto query = url.find('?', slash);
  return url.substr(0, slash + 1) + name + (query == std::string::npos ? "" : url.substr(query));
}

}  // namespace

Result<std::string> CreatePostgresDatabase(const std::string& server_url, const std::string& name) {
  ENGRAM_RETURN_IF_ERROR(CheckDatabaseName(name));
  ENGRAM_ASSIGN_OR_RETURN(auto db, sql::Db::Open(server_url, {}));
  if (db->dialect() != sql::Dialect::kPostgres) return Status::InvalidArgument("db: not a PostgreSQL URL");
  ENGRAM_RETURN_IF_ERROR(db->Exec("CREATE DATABASE " + name));
  return WithDatabase(server_url, name);
}

Status DropPostgresDatabase(const std::string& server_url, const std::string& name) {
  ENGRAM_RETURN_IF_ERROR(CheckDatabaseName(name));
  ENGRAM_ASSIGN_OR_RETURN(auto db, sql::Db::Open(server_url, {}));
  return db->Exec("DROP DATABASE IF EXISTS " + name);
}

Result<std::int64_t> StoreBytes(const std::string& location) {
  const Result<sql::Location> parsed = sql::ParseLocation(location);
  if (!parsed.ok()) return parsed.status();
  const sql::Location& loc = *parsed;
  if (loc.dialect == sql::Dialect::kSqlite) {
    std::error_code ec;
    std::int64_t bytes = 0;
    for (const char* suffix : {"", "-wal"}) {
      const auto n = fs::file_size(loc.target + suffix, ec);
      if (!ec) bytes += static_cast<std::int64_t>(n);
    }
    return bytes;
  }
  ENGRAM_ASSIGN_OR_RETURN(auto db, sql::Db::Open(location, {}));
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("SELECT pg_database_size(current_database())"));
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  const std::int64_t bytes = row ? st->Int(0) : 0;
  st->Reset();
  return bytes;
}

Status ScrubAfterErase(sql::Db* db) {
  if (db->dialect() != sql::Dialect::kSqlite) return Status::Ok();
  for (const char* t : {"turns_fts", "segments_fts", "facts_fts"}) {
    ENGRAM_RETURN_IF_ERROR(db->Exec(std::string("INSERT INTO ") + t + "(" + t + ") VALUES('optimize')"));
  }
  if (IsInMemory(db->path())) return Status::Ok();
  return db->Exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

}  // namespace engram::store
