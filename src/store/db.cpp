#include "store/db.hpp"

#include <cctype>

#include "store/postgres.hpp"
#include "store/sqlite.hpp"

namespace engram::sql {

namespace {

// The scheme of "scheme://..." (lower-cased), or "" when the text has none.
// A scheme is letters, digits, '+', '-' and '.' after a leading letter.
std::string SchemeOf(const std::string& text) {
  auto pos = text.find("://");
  if (pos == std::string::npos || pos == 0) return {};
  std::string scheme;
  for (std::size_t i = 0; i < pos; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    bool ok = std::isalpha(c) || (i > 0 && (std::isdigit(c) || c == '+' || c == '-' || c == '.'));
    if (!ok) return {};
    scheme.push_back(static_cast<char>(std::tolower(c)));
  }
  return scheme;
}

}  // namespace

Result<Location> ParseLocation(const std::string& text) {
  if (text.empty()) return Status::InvalidArgument("db: must not be empty");
  const std::string scheme = SchemeOf(text);
  if (scheme.empty()) return Location{Dialect::kSqlite, text};
  if (scheme == "postgresql" || scheme == "postgres") return Location{Dialect::kPostgres, text};
  if (scheme == "file" || scheme == "sqlite") {
    std::string path = text.substr(text.find("://") + 3);
    if (path.empty()) return Status::InvalidArgument("db: " + scheme + ":// needs a file path");
    return Location{Dialect::kSqlite, path};
  }
  return Status::InvalidArgument("db: unsupported scheme \"" + scheme +
                                 "://\"; use a file path (SQLite) or a postgresql:// URL");
}

std::string RedactLocation(const std::string& text) {
  const std::string scheme = SchemeOf(text);
  if (scheme.empty()) return text;
  std::string out = text;
  // user:password@host: the user information ends at the first '@' before
  // any '/' (as libpq reads it), the password at its first ':'.
  auto start = out.find("://") + 3;
  const auto at = out.find('@', start);
  const auto slash = out.find('/', start);
  if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
    const auto colon = out.find(':', start);
    if (colon != std::string::npos && colon < at) out = out.substr(0, colon + 1) + "***" + out.substr(at);
    start = out.find('@', start) + 1;
  }
  // ?...&password=...&...: the value of every `password` parameter.
  const auto query = out.find('?', start);
  if (query == std::string::npos) return out;
  std::string redacted = out.substr(0, query + 1);
  std::size_t pos = query + 1;
  while (pos <= out.size()) {
    auto end = out.find('&', pos);
    if (end == std::string::npos) end = out.size();
    const std::string param = out.substr(pos, end - pos);
    const auto eq = param.find('=');
    std::string key = param.substr(0, eq);
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    redacted += eq != std::string::npos && key == "password" ? param.substr(0, eq + 1) + "***" : param;
    if (end == out.size()) break;
    redacted += '&';
    pos = end + 1;
  }
  return redacted;
}

Result<std::unique_ptr<Db>> Db::Open(const std::string& location, const OpenOptions& options) {
  ENGRAM_ASSIGN_OR_RETURN(Location loc, ParseLocation(location));
  if (loc.dialect == Dialect::kPostgres) {
    ENGRAM_ASSIGN_OR_RETURN(auto db, PgDb::Open(loc.target, options));
    return std::unique_ptr<Db>(std::move(db));
  }
  ENGRAM_ASSIGN_OR_RETURN(auto db, SqliteDb::Open(loc.target, options));
  return std::unique_ptr<Db>(std::move(db));
}

Result<std::unique_ptr<Txn>> Txn::Begin(Db* db) {
  ENGRAM_RETURN_IF_ERROR(db->BeginWrite());
  return std::unique_ptr<Txn>(new Txn(db));
}

Txn::~Txn() {
  if (!done_) (void)db_->Rollback();
}

Status Txn::Commit() {
  Status st = db_->Commit();
  if (st.ok()) done_ = true;
  return st;
}

Result<std::unique_ptr<ReadTxn>> ReadTxn::Begin(Db* db) {
  ENGRAM_RETURN_IF_ERROR(db->BeginRead());
  return std::unique_ptr<ReadTxn>(new ReadTxn(db));
}

ReadTxn::~ReadTxn() { (void)db_->Commit(); }

}  // namespace engram::sql
