// The PostgreSQL connection: connect, errors, Exec, the statement cache and
// transactions. Statements are in postgres_stmt.cpp.
#include "store/postgres.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <unordered_map>

#include "store/errors.hpp"

namespace engram::sql {

namespace {

struct ConnCloser {
  void operator()(PGconn* c) const { PQfinish(c); }
};
struct ResultClearer {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultClearer>;

void IgnoreNotice(void*, const char*) {}
void Discard(PGconn* c, const char* sql) { PQclear(PQexec(c, sql)); }

// libpq messages span lines ("...failed: ...\n\tIs the server running...?\n").
std::string OneLine(const char* text) {
  std::string out;
  for (const char* p = text ? text : ""; *p; ++p) {
    if (*p == '\n' || *p == '\t' || *p == '\r') {
      if (!out.empty() && out.back() != ' ') out.push_back(' ');
    } else {
      out.push_back(*p);
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The URL without password: user:***@ and password=*** (query or key=value).
std::string Redact(const std::string& url) {
  std::string out = RedactLocation(url);
  std::string lower = out;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::size_t pos = lower.find("password="); pos != std::string::npos;
       pos = lower.find("password=", pos + 1)) {
    const std::size_t start = pos + 9;
    std::size_t end = out.find_first_of("& ", start);
    if (end == std::string::npos) end = out.size();
    out.replace(start, end - start, "***");
    lower.replace(start, end - start, "***");
  }
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

Status FromState(std::string_view state, std::string message) {
  if (StartsWith(state, "23")) return Status::AlreadyExists(std::move(message));
  if (state == "40001" || state == "40P01" || state == "25P02")
    return Status::Aborted(std::move(message));
  if (state == "53100") return Status::IoError(std::string(kStoreFull) + message);  // disk_full
  // Connection errors, timeouts, insufficient resources (class 53), an I/O
  // error on the server, a server shutting down or restarting.
  if (StartsWith(state, "08") || StartsWith(state, "53") || state == "58030" || state == "57014" ||
      state == "55P03" || state == "57P01" || state == "57P02" || state == "57P03")
    return Status::Unavailable(std::string(kStoreUnavailable) + message);
  if (state == "22021" || state == "22P05") return Status::InvalidArgument(std::move(message));
  if (state == "25006" || state == "42501") return Status::PermissionDenied(std::move(message));
  if (state == "XX001" || state == "XX002") return Status::Corruption(std::move(message));
  return Status::IoError(std::move(message));
}

}  // namespace

struct PgDb::Impl {
  std::unique_ptr<PGconn, ConnCloser> conn;
  std::string redacted;  // path()
  std::string password;  // scrubbed from every message
  bool read_only = false;
  int busy_timeout_ms = 5000;
  std::unordered_map<std::string, std::unique_ptr<Stmt>> cache;
  int next_name = 0;
  std::uint64_t generation = 1;
  int changes = 0;
  bool in_txn = false;  // the last known transaction state of the session

  std::string Scrub(std::string text) const {
    if (password.empty()) return text;
    for (auto pos = text.find(password); pos != std::string::npos; pos = text.find(password, pos))
      text.replace(pos, password.size(), "***");
    return text;
  }
};

PgDb::PgDb(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PgDb::~PgDb() {
  impl_->cache.clear();  // statements before the connection
}

Result<std::unique_ptr<PgDb>> PgDb::Open(const std::string& url, const OpenOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->redacted = Redact(url);
  impl->read_only = options.read_only;
  impl->busy_timeout_ms = options.busy_timeout_ms;
  char* err = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &err);
  if (!parsed) {
    std::string msg = OneLine(err ? err : "out of memory");
    PQfreemem(err);
    return Status::InvalidArgument("connect " + impl->redacted + ": " + impl->Scrub(msg));
  }
  for (PQconninfoOption* o = parsed; o->keyword; ++o) {
    if (o->val && std::string_view(o->keyword) == "password") impl->password = o->val;
  }
  PQconninfoFree(parsed);
  // Entries before dbname may be overridden by the URL, those after may not.
  const char* keys[] = {"connect_timeout", "application_name", "dbname", "client_encoding",
                        nullptr};
  const char* values[] = {"5", "engram", url.c_str(), "UTF8", nullptr};
  impl->conn.reset(PQconnectdbParams(keys, values, /*expand_dbname=*/1));
  if (!impl->conn) return Status::Unavailable("connect " + impl->redacted + ": out of memory");
  if (PQstatus(impl->conn.get()) != CONNECTION_OK) {
    return Status::Unavailable("connect " + impl->redacted + ": " +
                               impl->Scrub(OneLine(PQerrorMessage(impl->conn.get()))));
  }
  std::unique_ptr<PgDb> db(new PgDb(std::move(impl)));
  PQsetNoticeProcessor(db->conn(), IgnoreNotice, nullptr);
  if (options.read_only)
    ENGRAM_RETURN_IF_ERROR(db->Simple("SET default_transaction_read_only = on", "connect"));
  return db;
}

pg_conn* PgDb::conn() const { return impl_->conn.get(); }
std::uint64_t PgDb::generation() const { return impl_->generation; }
std::string PgDb::NextName() { return "s" + std::to_string(++impl_->next_name); }
const std::string& PgDb::path() const { return impl_->redacted; }
int PgDb::Changes() const { return impl_->changes; }

Status PgDb::Ready(std::string_view context) {
  Impl& d = *impl_;
  if (PQstatus(d.conn.get()) == CONNECTION_OK) return Status::Ok();
  if (d.in_txn) {
    return Status::Unavailable(std::string(kStoreUnavailable) + std::string(context) +
                               ": the connection to the server was lost inside a transaction; "
                               "roll the transaction back");
  }
  PQreset(d.conn.get());
  if (PQstatus(d.conn.get()) != CONNECTION_OK) {
    return Status::Unavailable(std::string(kStoreUnavailable) + std::string(context) + ": reconnect " + d.redacted + ": " +
                               d.Scrub(OneLine(PQerrorMessage(d.conn.get()))));
  }
  ++d.generation;  // the server forgot the prepared statements
  PQsetNoticeProcessor(d.conn.get(), IgnoreNotice, nullptr);
  if (d.read_only) return Simple("SET default_transaction_read_only = on", context);
  return Status::Ok();
}

Status PgDb::Check(pg_result* res, std::string_view context) {
  Impl& d = *impl_;
  PGconn* c = d.conn.get();
  switch (PQtransactionStatus(c)) {
    case PQTRANS_IDLE:
      d.in_txn = false;
      break;
    case PQTRANS_INTRANS:
    case PQTRANS_INERROR:
      d.in_txn = true;
      break;
    default:
      break;  // unknown (connection lost): keep the last known state
  }
  const ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY) {
    const std::string_view cmd = PQcmdStatus(res);
    if (StartsWith(cmd, "INSERT") || StartsWith(cmd, "UPDATE") || StartsWith(cmd, "DELETE") ||
        StartsWith(cmd, "MERGE")) {
      const std::string_view n = PQcmdTuples(res);
      int v = 0;
      std::from_chars(n.data(), n.data() + n.size(), v);
      d.changes = v;
    }
    return Status::Ok();
  }
  if (st == PGRES_COPY_IN || st == PGRES_COPY_OUT || st == PGRES_COPY_BOTH) {
    if (st != PGRES_COPY_OUT) PQputCopyEnd(c, "COPY is not supported");
    char* buf = nullptr;
    while (st == PGRES_COPY_OUT && PQgetCopyData(c, &buf, 0) >= 0) PQfreemem(buf);
    while (PGresult* r = PQgetResult(c)) PQclear(r);
    return Status::InvalidArgument(std::string(context) + ": COPY is not supported");
  }
  const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  const char* primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  std::string text = primary ? std::string(primary)
                             : OneLine(res && *PQresultErrorMessage(res) ? PQresultErrorMessage(res)
                                                                         : PQerrorMessage(c));
  std::string msg = std::string(context) + ": " + text;
  if (state) msg += std::string(" (SQLSTATE ") + state + ")";
  msg = d.Scrub(std::move(msg));
  if (PQstatus(c) != CONNECTION_OK) return Status::Unavailable(std::string(kStoreUnavailable) + msg);
  return FromState(state ? state : "", std::move(msg));
}

Status PgDb::Simple(const char* sql, std::string_view context) {
  ResultPtr res(PQexec(conn(), sql));
  return Check(res.get(), context);
}

Status PgDb::Exec(std::string_view sql) {
  ENGRAM_RETURN_IF_ERROR(Ready("sql"));
  const std::string text(sql);
  return Simple(text.c_str(), "sql");
}

Result<Stmt*> PgDb::Prepare(std::string_view sql) {
  std::string key(sql);
  auto it = impl_->cache.find(key);
  if (it != impl_->cache.end()) {
    it->second->Reset();
    return it->second.get();
  }
  ENGRAM_RETURN_IF_ERROR(Ready("prepare"));
  auto stmt = NewStmt(this, sql);
  if (!stmt.ok() && LostOutsideTxn()) {  // preparing changes nothing: once more, connected again
    ENGRAM_RETURN_IF_ERROR(Ready("prepare"));
    stmt = NewStmt(this, sql);
  }
  ENGRAM_RETURN_IF_ERROR(stmt.status());
  Stmt* out = stmt->get();
  impl_->cache.emplace(std::move(key), std::move(*stmt));
  return out;
}

bool PgDb::LostOutsideTxn() const { return PQstatus(conn()) != CONNECTION_OK && !impl_->in_txn; }

std::int64_t PgDb::LastInsertRowId() {
  if (!Ready("lastval").ok()) return 0;
  PGconn* c = conn();
  const PGTransactionStatusType ts = PQtransactionStatus(c);
  if (ts == PQTRANS_INERROR) return 0;
  // lastval() fails when no sequence was used: inside a transaction, that
  // error must not abort it.
  const bool in_txn = ts == PQTRANS_INTRANS;
  if (in_txn) Discard(c, "SAVEPOINT engram_lastval");
  ResultPtr res(PQexec(c, "SELECT lastval()"));
  std::int64_t id = 0;
  const bool ok = res && PQresultStatus(res.get()) == PGRES_TUPLES_OK && PQntuples(res.get()) == 1;
  if (ok) {
    const char* v = PQgetvalue(res.get(), 0, 0);
    std::from_chars(v, v + PQgetlength(res.get(), 0, 0), id);
  }
  if (in_txn && !ok) Discard(c, "ROLLBACK TO SAVEPOINT engram_lastval");
  if (in_txn) Discard(c, "RELEASE SAVEPOINT engram_lastval");
  return id;
}

// Runs BEGIN. A connection that BEGIN finds lost (the server restarted, the
// idle session was terminated) has done nothing yet: it is connected again
// and BEGIN runs once more, so a transaction never fails for a loss that
// happened between transactions.
Status PgDb::BeginAgainIfLost(PgDb* db, const char* sql) {
  Status st = db->Simple(sql, "begin");
  if (st.ok() || PQstatus(db->conn()) == CONNECTION_OK || db->impl_->in_txn) return st;
  ENGRAM_RETURN_IF_ERROR(db->Ready("begin"));
  return db->Simple(sql, "begin");
}

Status PgDb::BeginWrite() {
  ENGRAM_RETURN_IF_ERROR(Ready("begin"));
  // PostgreSQL only warns; SQLite refuses, and so do we.
  if (PQtransactionStatus(conn()) != PQTRANS_IDLE)
    return Status::IoError("begin: a transaction is already active");
  if (impl_->read_only) return BeginAgainIfLost(this, "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY");
  ENGRAM_RETURN_IF_ERROR(BeginAgainIfLost(this, "BEGIN ISOLATION LEVEL READ COMMITTED"));
  // The store's writer lock, as SQLite's BEGIN IMMEDIATE: one write
  // transaction at a time across every process on this database, waited for
  // up to the busy timeout (then Unavailable: retry). Reads never wait.
  const std::string lock = "SET LOCAL lock_timeout = " + std::to_string(impl_->busy_timeout_ms) +
                           "; SELECT pg_advisory_xact_lock(" + std::to_string(kWriterLockKey) + ")";
  Status locked = Simple(lock.c_str(), "begin: writer lock");
  if (!locked.ok()) (void)Rollback();
  return locked;
}

Status PgDb::BeginRead() {
  ENGRAM_RETURN_IF_ERROR(Ready("begin"));
  if (PQtransactionStatus(conn()) != PQTRANS_IDLE)
    return Status::IoError("begin: a transaction is already active");
  return BeginAgainIfLost(this, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
}

Status PgDb::Commit() {
  if (PQstatus(conn()) != CONNECTION_OK && impl_->in_txn) {
    impl_->in_txn = false;
    return Status::Unavailable(std::string(kStoreUnavailable) +
                               "commit: the connection to the server was lost; the transaction was rolled back");
  }
  ENGRAM_RETURN_IF_ERROR(Ready("commit"));
  if (PQtransactionStatus(conn()) == PQTRANS_IDLE)
    return Status::IoError("commit: no transaction is active");
  ResultPtr res(PQexec(conn(), "COMMIT"));
  Status st = Check(res.get(), "commit");
  impl_->in_txn = false;  // over, whatever the outcome
  ENGRAM_RETURN_IF_ERROR(st);
  // COMMIT of a failed transaction succeeds as "ROLLBACK".
  if (std::string_view(PQcmdStatus(res.get())) == "ROLLBACK") {
    return Status::Aborted(
        "commit: the transaction was rolled back because a statement in it failed");
  }
  return Status::Ok();
}

Status PgDb::Rollback() {
  if (PQstatus(conn()) != CONNECTION_OK && impl_->in_txn) {
    impl_->in_txn = false;  // the server rolled it back when the connection ended
    return Status::Ok();
  }
  ENGRAM_RETURN_IF_ERROR(Ready("rollback"));
  if (PQtransactionStatus(conn()) == PQTRANS_IDLE)
    return Status::IoError("rollback: no transaction is active");
  Status st = Simple("ROLLBACK", "rollback");
  impl_->in_txn = false;
  return st;
}

}  // namespace engram::sql
