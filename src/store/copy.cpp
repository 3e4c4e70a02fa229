#include "store/copy.hpp"

#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "store/open.hpp"
#include "store/schema.hpp"

namespace engram::store {

namespace fs = std::filesystem;

namespace {

// The tables, in foreign-key order (scopes before every table that names a
// scope, turns and segments before pages). Columns are "name:k" with k = i
// (integer), t (text), b (bytes); the same on both backends (compare
// schema.cpp and schema_postgres.cpp; the test checks it against both).
// Every table that holds a tenant's data has its tenant column (version 3),
// copied as it is.
struct Spec {
  const char* name;
  const char* columns;
  const char* order_by;
  const char* identity;
};
constexpr Spec kSpecs[] = {
    {"meta", "key:t value:t", "key", ""},
    {"scopes",
     "id:i tenant:t user_id:t assistant_id:t created_at:i next_seq:i stm_count:i chain_page_id:i chain_summary:t "
     "data_version:i generation:i",
     "id", "id"},
    {"turns",
     "id:i scope_id:i seq:i user_text:t assistant_text:t user_name:t assistant_name:t event_time:i ingest_time:i "
     "metadata:t source_ref:t user_source_ref:t assistant_source_ref:t page_id:i tenant:t",
     "id", "id"},
    {"turns_fts", "rowid:i scope:t terms:t tenant:t", "rowid", ""},
    {"segments",
     "id:i scope_id:i summary:t keywords:t embedding:b emb_sum:b page_count:i interaction:i visits:i last_access:i "
     "created_at:i updated_at:i version:i archived_at:i degraded:i tenant:t",
     "id", "id"},
    {"segments_fts", "rowid:i scope:t terms:t tenant:t", "rowid", ""},
    {"pages",
     "id:i scope_id:i turn_id:i segment_id:i prev_page:i next_page:i chain_summary:t keywords:t embedding:b "
     "analyzed:i created_at:i degraded:i tenant:t",
     "id", "id"},
    {"scope_terms", "scope_id:i term:t df:i tenant:t", "scope_id, term", ""},
    {"profile_slots",
     "rowid:i scope_id:i dimension:t value:t evidence:t updated_at:i version:i degraded:i tenant:t", "rowid",
     "rowid"},
    {"facts",
     "id:i scope_id:i memory_id:t user_id:t agent_id:t run_id:t kind:t role:t actor:t attributed_to:t text:t "
     "norm_hash:i embedding:b metadata:t source_pages:t event_time:i record_time:i created_at:i updated_at:i "
     "expires_at:i idempotency_key:t version:i status:t degraded:i tenant:t",
     "id", "id"},
    {"facts_fts", "rowid:i scope:t terms:t tenant:t", "rowid", ""},
    {"fact_history",
     "id:i scope_id:i memory_id:t fact_id:i version:i event:t old_text:t new_text:t actor:t role:t at:i op_id:t "
     "tenant:t",
     "id", "id"},
    {"entities", "id:i scope_id:i name:t type:t tenant:t", "id", "id"},
    {"fact_entities", "fact_id:i entity_id:i relation:t tenant:t", "fact_id, entity_id", ""},
    {"fact_links", "id:i scope_id:i from_memory:t to_memory:t relation:t created_at:i tenant:t", "id", "id"},
    {"fact_requests", "scope_id:i user_id:t agent_id:t run_id:t idempotency_key:t events:t created_at:i tenant:t",
     "scope_id, user_id, agent_id, run_id, idempotency_key", ""},
    {"jobs",
     "id:i scope_id:i kind:t status:t attempts:i last_error:t run_id:t lease_holder:t lease_expires:i rearmed:i "
     "created_at:i updated_at:i tenant:t",
     "id", "id"},
    {"receipts",
     "id:i run_id:t tenant:t user_scope:t assistant_scope:t memory_kind:t memory_id:i version:i source_version:t "
     "from_tier:t to_tier:t status:t at_utc:i depends_on_version:t outcome_receipt:t",
     "id", "id"},
    {"receipt_days",
     "day:i tenant:t user_scope:t assistant_scope:t memory_kind:t from_tier:t to_tier:t status:t receipts:i "
     "first_at:i last_at:i",
     "day, tenant, user_scope, assistant_scope, memory_kind, from_tier, to_tier, status", ""},
    {"embed_cache", "tenant:t model:t text_hash:i dim:i vector:b", "tenant, model, text_hash", ""},
    {"api_keys", "id:t tenant:t users:t role:t name:t hash:t created_at:i revoked_at:i expires_at:i last_used_at:i", "id",
     ""},
    {"turn_requests", "scope_id:i idempotency_key:t fingerprint:i first_seq:i turns:i created_at:i tenant:t",
     "scope_id, idempotency_key", ""},
};

constexpr const char* kScopeHigh = "scope_id_high";
constexpr int kFetchRows = 1000;     // rows per FETCH from a PostgreSQL source
constexpr int kInsertParams = 2000;  // parameters per INSERT (SQLite allows 32766, PostgreSQL 65535)
constexpr int kInsertRowsMax = 200;

std::vector<CopyTable> BuildTables() {
  std::vector<CopyTable> out;
  for (const Spec& s : kSpecs) {
    CopyTable t;
    t.name = s.name;
    t.order_by = s.order_by;
    t.identity = s.identity;
    std::istringstream in(s.columns);
    for (std::string item; in >> item;) {
      const auto colon = item.find(':');
      CopyColumn c;
      c.name = item.substr(0, colon);
      const char k = item[colon + 1];
      c.kind = k == 'i' ? CopyKind::kInt : k == 'b' ? CopyKind::kBlob : CopyKind::kText;
      t.columns.push_back(std::move(c));
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string ColumnList(const CopyTable& t) {
  std::string out;
  for (const auto& c : t.columns) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

// Prefixes a failure with what was being done.
Status In(const std::string& context, const Status& st) {
  if (st.ok()) return st;
  return Status(st.code(), context + ": " + st.message());
}

struct Value {
  bool null = false;
  std::int64_t i = 0;
  std::string s;  // text or bytes
};
using Row = std::vector<Value>;

void ReadRow(const sql::Stmt* st, const CopyTable& t, Row* row) {
  row->resize(t.columns.size());
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    Value& v = (*row)[c];
    const int col = static_cast<int>(c);
    v.null = st->IsNull(col);
    v.i = 0;
    v.s.clear();
    if (v.null) continue;
    if (t.columns[c].kind == CopyKind::kInt) {
      v.i = st->Int(col);
    } else {
      v.s = st->Text(col);  // both backends give a BLOB / BYTEA's raw bytes
    }
  }
}

// Calls `sink` with every row of `t`, in key order, streamed: row by row from
// SQLite, kFetchRows at a time through a cursor from PostgreSQL (a plain
// SELECT would hold the whole result in memory). The sink must not use `db`.
// REQUIRES: inside a transaction (the cursor lives until its end).
Status ForEachRow(sql::Db* db, const CopyTable& t, const std::function<Status(Row&)>& sink) {
  const std::string select = "SELECT " + ColumnList(t) + " FROM " + t.name + " ORDER BY " + t.order_by;
  Row row;
  if (db->dialect() == sql::Dialect::kSqlite) {
    ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(select));
    for (;;) {
      ENGRAM_ASSIGN_OR_RETURN(bool more, st->Step());
      if (!more) break;
      ReadRow(st, t, &row);
      if (Status s = sink(row); !s.ok()) {
        st->Reset();
        return s;
      }
    }
    st->Reset();
    return Status::Ok();
  }
  const std::string cursor = "engram_copy_" + t.name;
  ENGRAM_RETURN_IF_ERROR(db->Exec("DECLARE " + cursor + " NO SCROLL CURSOR FOR " + select));
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * fetch,
                          db->Prepare("FETCH FORWARD " + std::to_string(kFetchRows) + " FROM " + cursor));
  for (;;) {
    int n = 0;
    for (;;) {
      ENGRAM_ASSIGN_OR_RETURN(bool more, fetch->Step());
      if (!more) break;
      ++n;
      ReadRow(fetch, t, &row);
      if (Status s = sink(row); !s.ok()) {
        fetch->Reset();
        return s;
      }
    }
    if (n < kFetchRows) break;
  }
  return db->Exec("CLOSE " + cursor);
}

// The digest of rows added one at a time.
class Digester {
 public:
  explicit Digester(const CopyTable& t) : t_(t) { d_.table = t.name; }

  void Add(const Row& row) {
    buf_.clear();
    for (std::size_t c = 0; c < row.size(); ++c) {
      const Value& v = row[c];
      const CopyKind kind = t_.columns[c].kind;
      if (v.null) {
        buf_.push_back('\0');
      } else if (kind == CopyKind::kInt) {
        buf_.push_back('\1');
        PutU64(static_cast<std::uint64_t>(v.i));
      } else {
        buf_.push_back(kind == CopyKind::kText ? '\2' : '\3');
        PutU64(v.s.size());
        buf_.append(v.s);
        if (kind == CopyKind::kBlob) d_.vector_bytes += static_cast<std::int64_t>(v.s.size());
      }
    }
    const XXH128_hash_t h = XXH3_128bits(buf_.data(), buf_.size());
    const std::uint64_t low = d_.hash_low + h.low64;
    d_.hash_high += h.high64 + (low < d_.hash_low ? 1 : 0);
    d_.hash_low = low;
    ++d_.rows;
  }
  const TableDigest& digest() const { return d_; }

 private:
  void PutU64(std::uint64_t v) {
    for (int b = 0; b < 8; ++b) buf_.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
  }
  const CopyTable& t_;
  TableDigest d_;
  std::string buf_;
};

// Rows written a batch at a time with multi-row INSERTs (one round trip per
// batch on PostgreSQL).
class BatchInsert {
 public:
  BatchInsert(sql::Db* db, const CopyTable& t)
      : db_(db),
        t_(t),
        per_statement_(std::clamp(kInsertParams / static_cast<int>(t.columns.size()), 1, kInsertRowsMax)) {}

  Status Add(Row&& row) {
    pending_.push_back(std::move(row));
    if (static_cast<int>(pending_.size()) >= per_statement_) return Flush();
    return Status::Ok();
  }

  Status Flush() {
    if (pending_.empty()) return Status::Ok();
    const std::string& sql = Sql(static_cast<int>(pending_.size()));
    ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db_->Prepare(sql));
    const std::size_t n = t_.columns.size();
    int p = 0;
    for (const Row& row : pending_) {
      for (std::size_t c = 0; c < n; ++c) {
        const Value& v = row[c];
        ++p;
        if (v.null) {
          st->BindNull(p);
        } else if (t_.columns[c].kind == CopyKind::kInt) {
          st->Bind(p, v.i);
        } else if (t_.columns[c].kind == CopyKind::kText) {
          st->Bind(p, std::string_view(v.s));
        } else {
          st->BindBlob(p, v.s.data(), static_cast<int>(v.s.size()));  // data() is never null: "" stays a blob
        }
      }
    }
    pending_.clear();
    return st->Run();
  }

 private:
  const std::string& Sql(int rows) {
    auto it = sql_.find(rows);
    if (it != sql_.end()) return it->second;
    std::string one = "(";
    for (std::size_t c = 0; c < t_.columns.size(); ++c) one += c ? ",?" : "?";
    one += ")";
    std::string sql = "INSERT INTO " + t_.name + "(" + ColumnList(t_) + ") VALUES ";
    for (int r = 0; r < rows; ++r) sql += (r ? "," : "") + one;
    return sql_.emplace(rows, std::move(sql)).first->second;
  }

  sql::Db* db_;
  const CopyTable& t_;
  const int per_statement_;
  std::vector<Row> pending_;
  std::map<int, std::string> sql_;
};

Result<std::int64_t> QueryInt(sql::Db* db, const std::string& q) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(q));
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  const std::int64_t v = row && !st->IsNull(0) ? st->Int(0) : 0;
  st->Reset();
  return v;
}

Result<std::int64_t> ParseCount(const std::string& text, const std::string& what) {
  if (text.empty()) return std::int64_t{0};
  std::int64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    return Status::Corruption(what + " is not a number: " + text);
  }
  return v;
}

// Whether the current schema of a PostgreSQL database has a table.
Result<bool> PgHasTable(sql::Db* db, const std::string& table) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT count(*) FROM information_schema.tables "
                                      "WHERE table_schema = current_schema() AND table_name = ?1"));
  st->Bind(1, table);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  const bool has = row && st->Int(0) > 0;
  st->Reset();
  return has;
}

// "" when `db` is an engram store of this schema version; else why not.
// `engram` is false when it is not an engram store at all.
struct StoreKind {
  bool engram = false;
  std::string version;  // meta.schema_version
};
Result<StoreKind> KindOf(sql::Db* db) {
  StoreKind k;
  if (db->dialect() == sql::Dialect::kSqlite) {
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t app, QueryInt(db, "PRAGMA application_id"));
    if (app != kApplicationId) return k;
  } else {
    ENGRAM_ASSIGN_OR_RETURN(bool has_meta, PgHasTable(db, "meta"));
    if (!has_meta) return k;
    ENGRAM_ASSIGN_OR_RETURN(std::string app, GetMeta(db, "application"));
    if (app != "engram") return k;
  }
  k.engram = true;
  ENGRAM_ASSIGN_OR_RETURN(k.version, GetMeta(db, "schema_version"));
  return k;
}

// The columns a store's catalog lists for a table (SQLite: without the
// implicit rowid; PostgreSQL: without the generated tsvector).
Result<std::set<std::string>> CatalogColumns(sql::Db* db, const std::string& table) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(db->dialect() == sql::Dialect::kSqlite
                      ? "SELECT name FROM pragma_table_info(?1)"
                      : "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                        "current_schema() AND table_name = ?1 AND column_name <> 'tsv'"));
  st->Bind(1, table);
  std::set<std::string> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.insert(st->Text(0));
  }
  st->Reset();
  return out;
}

// Every table of the list is there with exactly the listed columns.
Status CheckColumns(sql::Db* db, const std::string& where) {
  for (const CopyTable& t : CopyTables()) {
    ENGRAM_ASSIGN_OR_RETURN(auto have, CatalogColumns(db, t.name));
    std::set<std::string> want;
    for (const auto& c : t.columns) {
      if (!(c.name == "rowid" && db->dialect() == sql::Dialect::kSqlite)) want.insert(c.name);
    }
    if (have.empty()) {
      return Status::FailedPrecondition(where + " has no table " + t.name +
                                        "; open it with this engram first (which completes its schema)");
    }
    for (const auto& c : have) {
      if (!want.count(c)) {
        return Status::FailedPrecondition(where + ": table " + t.name + " has a column " + c +
                                          " that this engram does not copy");
      }
    }
    for (const auto& c : want) {
      if (!have.count(c)) return Status::FailedPrecondition(where + ": table " + t.name + " lacks column " + c);
    }
  }
  return Status::Ok();
}

// A source must be an engram store of this schema version, not in the middle
// of an embedder migration, with the columns this build knows.
Status CheckSource(sql::Db* db, const std::string& where) {
  ENGRAM_ASSIGN_OR_RETURN(StoreKind kind, KindOf(db));
  if (!kind.engram) return Status::FailedPrecondition(where + " is not an engram store");
  const std::string want = std::to_string(kSchemaVersion);
  if (kind.version != want) {
    int v = 0;
    std::from_chars(kind.version.data(), kind.version.data() + kind.version.size(), v);
    if (v > kSchemaVersion) {
      return Status::FailedPrecondition(where + " has schema version " + kind.version +
                                        ", newer than this engram (" + want + "); upgrade engram");
    }
    return Status::FailedPrecondition(where + " has schema version " + kind.version + ", not this engram's (" +
                                      want + "); open it with this engram first (any command, e.g. "
                                      "`engram stats`), which migrates it, then copy it");
  }
  ENGRAM_ASSIGN_OR_RETURN(std::string reembed, GetMeta(db, "reembed_target"));
  if (!reembed.empty()) {
    return Status::FailedPrecondition(where + " is being migrated to the embedder " + reembed +
                                      "; finish (or cancel) the migration with `engram reembed` before copying");
  }
  return CheckColumns(db, where);
}

// A target that holds nothing but what its creation wrote.
Status CheckPristine(sql::Db* db, const std::string& where) {
  const std::string refuse = "; the target of a copy must be empty";
  for (const CopyTable& t : CopyTables()) {
    if (t.name == "meta") continue;
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t any, QueryInt(db, "SELECT count(*) FROM (SELECT 1 FROM " + t.name +
                                                              " LIMIT 1) AS x"));
    if (any) return Status::FailedPrecondition(where + " is not empty (table " + t.name + " has rows)" + refuse);
  }
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("SELECT key, value FROM meta ORDER BY key"));
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    const std::string key = st->Text(0), value = st->Text(1);
    if (IsStoreBookkeeping(key) || (key == kScopeHigh && (value.empty() || value == "0"))) continue;
    st->Reset();
    return Status::FailedPrecondition(where + " is not empty (meta." + key + " is set)" + refuse);
  }
  st->Reset();
  return Status::Ok();
}

// Checks, without writing anything, that `target` may receive a copy: true
// when it is a SQLite file that does not exist yet (the copy creates it).
Result<bool> CheckTargetBeforeOpen(const sql::Location& loc, const std::string& target, const std::string& where) {
  const std::string refuse = "; the target of a copy must be a new file, an empty database or an empty store";
  sql::OpenOptions ro;
  ro.read_only = true;
  ro.create = false;
  if (loc.dialect == sql::Dialect::kSqlite) {
    std::error_code ec;
    if (!fs::exists(loc.target, ec)) return true;
    if (fs::is_directory(loc.target, ec)) return Status::InvalidArgument(where + " is a directory");
    auto db = sql::Db::Open(target, ro);
    if (!db.ok()) return Status::FailedPrecondition(where + " already exists and is not an engram store" + refuse);
    ENGRAM_ASSIGN_OR_RETURN(StoreKind kind, KindOf(db->get()));
    if (!kind.engram || kind.version != std::to_string(kSchemaVersion)) {
      return Status::FailedPrecondition(where + " already exists and is not an empty engram store" + refuse);
    }
    ENGRAM_RETURN_IF_ERROR(CheckPristine(db->get(), where));
    return false;
  }
  auto opened = sql::Db::Open(target, ro);
  if (!opened.ok()) return In(where, opened.status());
  std::unique_ptr<sql::Db> db = std::move(opened).value();
  ENGRAM_ASSIGN_OR_RETURN(std::int64_t tables,
                          QueryInt(db.get(), "SELECT count(*) FROM information_schema.tables "
                                             "WHERE table_schema = current_schema()"));
  if (tables == 0) return false;
  ENGRAM_ASSIGN_OR_RETURN(StoreKind kind, KindOf(db.get()));
  if (!kind.engram || kind.version != std::to_string(kSchemaVersion)) {
    return Status::FailedPrecondition(where + " holds " + std::to_string(tables) +
                                      " tables and is not an empty engram store" + refuse);
  }
  ENGRAM_RETURN_IF_ERROR(CheckPristine(db.get(), where));
  return false;
}

// The last value a PostgreSQL identity sequence gave (0 when none).
Result<std::int64_t> SequenceLast(sql::Db* db, const CopyTable& t) {
  return QueryInt(db, "SELECT pg_sequence_last_value(CAST(pg_get_serial_sequence('" + t.name + "', '" +
                          t.identity + "') AS regclass))");
}

Status SetSequence(sql::Db* db, const CopyTable& t, std::int64_t value) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("SELECT setval(CAST(pg_get_serial_sequence('" + t.name +
                                                      "', '" + t.identity + "') AS regclass), ?1)"));
  st->Bind(1, value);
  ENGRAM_RETURN_IF_ERROR(st->Step().status());
  st->Reset();
  return Status::Ok();
}

// The meta rows that are copied: every key but the store's own bookkeeping
// and scope_id_high (recomputed).
bool CopiedMetaKey(const std::string& key) { return !IsStoreBookkeeping(key) && key != kScopeHigh; }

Result<TableDigest> DigestTable(sql::Db* db, const CopyTable& t) {
  Digester d(t);
  const bool meta = t.name == "meta";
  ENGRAM_RETURN_IF_ERROR(In("digest " + t.name, ForEachRow(db, t, [&](Row& row) {
                              if (!meta || CopiedMetaKey(row[0].s)) d.Add(row);
                              return Status::Ok();
                            })));
  return d.digest();
}

// Removes a SQLite target that the copy created, unless the copy committed.
struct NewFileGuard {
  std::string path;
  bool armed = false;
  ~NewFileGuard() {
    if (!armed) return;
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix, ec);
  }
};

}  // namespace

const std::vector<CopyTable>& CopyTables() {
  static const std::vector<CopyTable> tables = BuildTables();
  return tables;
}

std::vector<std::string> CopiedTables() {
  std::vector<std::string> out;
  for (const auto& t : CopyTables()) out.push_back(t.name);
  return out;
}

bool IsStoreBookkeeping(const std::string& meta_key) {
  return meta_key == "schema_version" || meta_key == "application" || meta_key == "created_at";
}

std::string TableDigest::Hash() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(hash_high),
                static_cast<unsigned long long>(hash_low));
  return buf;
}

Result<std::vector<TableDigest>> DigestStore(sql::Db* db) {
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::ReadTxn::Begin(db));
  std::vector<TableDigest> out;
  for (const CopyTable& t : CopyTables()) {
    ENGRAM_ASSIGN_OR_RETURN(TableDigest d, DigestTable(db, t));
    out.push_back(std::move(d));
  }
  return out;
}

Result<CopyReport> CopyStore(const std::string& source, const std::string& target, const CopyOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  CopyReport report;
  report.source = sql::RedactLocation(source);
  report.target = sql::RedactLocation(target);
  const std::string from = "source " + report.source, to = "target " + report.target;
  ENGRAM_ASSIGN_OR_RETURN(sql::Location src_loc, sql::ParseLocation(source));
  ENGRAM_ASSIGN_OR_RETURN(sql::Location dst_loc, sql::ParseLocation(target));
  if (IsInMemory(src_loc.target) || IsInMemory(dst_loc.target)) {
    return Status::InvalidArgument("copy: a private in-memory store (:memory:) cannot be copied from or to");
  }
  bool same = src_loc.dialect == dst_loc.dialect && src_loc.target == dst_loc.target;
  if (!same && src_loc.dialect == sql::Dialect::kSqlite && dst_loc.dialect == sql::Dialect::kSqlite) {
    std::error_code ec;
    same = fs::equivalent(src_loc.target, dst_loc.target, ec) && !ec;
  }
  if (same) return Status::InvalidArgument("copy: the source and the target are the same store");

  // The source: one read transaction, so the copy is one snapshot.
  if (src_loc.dialect == sql::Dialect::kSqlite) {
    std::error_code ec;
    if (!fs::exists(src_loc.target, ec)) return Status::NotFound("no store at " + report.source);
  }
  sql::OpenOptions ro;
  ro.read_only = true;
  ro.create = false;
  auto src_open = sql::Db::Open(source, ro);
  if (!src_open.ok()) return In(from, src_open.status());
  std::unique_ptr<sql::Db> src = std::move(src_open).value();
  auto read = sql::ReadTxn::Begin(src.get());
  if (!read.ok()) return In(from, read.status());
  std::unique_ptr<sql::ReadTxn> snapshot = std::move(read).value();
  ENGRAM_RETURN_IF_ERROR(CheckSource(src.get(), from));

  // The target: checked before anything is written, then created as usual.
  NewFileGuard guard;  // declared before the connection: removes the file after it is closed
  ENGRAM_ASSIGN_OR_RETURN(bool new_file, CheckTargetBeforeOpen(dst_loc, target, to));
  if (new_file) {
    guard.path = dst_loc.target;
    guard.armed = true;
  }
  StoreOpenOptions open_options;
  open_options.now_ms = options.now_ms;
  auto dst_open = OpenWriter(target, open_options);
  if (!dst_open.ok()) return In(to, dst_open.status());
  std::unique_ptr<sql::Db> dst = std::move(dst_open).value();

  // Everything in one write transaction, under the target's writer lock.
  auto write = sql::Txn::Begin(dst.get());
  if (!write.ok()) return In(to, write.status());
  std::unique_ptr<sql::Txn> txn = std::move(write).value();
  ENGRAM_RETURN_IF_ERROR(CheckPristine(dst.get(), to));  // nobody wrote meanwhile
  ENGRAM_RETURN_IF_ERROR(In(to, dst->Exec("DELETE FROM meta WHERE key NOT IN "
                                          "('schema_version', 'application', 'created_at')")));

  const bool src_pg = src_loc.dialect == sql::Dialect::kPostgres;
  const bool dst_pg = dst_loc.dialect == sql::Dialect::kPostgres;
  std::map<std::string, std::int64_t> identity_high;  // per table with an identity column
  const CopyTable* meta_table = nullptr;
  for (const CopyTable& t : CopyTables()) {
    if (t.name == "meta") {
      meta_table = &t;
      continue;  // last: it needs the scopes
    }
    Digester digest(t);
    BatchInsert insert(dst.get(), t);
    int id_col = -1;
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      if (t.columns[c].name == t.identity) id_col = static_cast<int>(c);
    }
    std::int64_t high = 0;
    if (src_pg && id_col >= 0) {
      auto last = SequenceLast(src.get(), t);
      if (!last.ok()) return In(from + ": " + t.name, last.status());
      high = *last;
    }
    Status st = ForEachRow(src.get(), t, [&](Row& row) {
      digest.Add(row);
      if (id_col >= 0 && !row[static_cast<std::size_t>(id_col)].null) {
        high = std::max(high, row[static_cast<std::size_t>(id_col)].i);
      }
      return insert.Add(std::move(row));
    });
    if (st.ok()) st = insert.Flush();
    ENGRAM_RETURN_IF_ERROR(In("copy " + t.name, st));
    if (id_col >= 0) identity_high[t.name] = high;
    report.tables.push_back(digest.digest());
    if (options.on_table) options.on_table(report.tables.back());
  }

  // meta: the source's settings (embedder, ...), and the scope id high-water
  // mark: at least every scope id the source ever gave.
  ENGRAM_ASSIGN_OR_RETURN(std::string src_high, GetMeta(src.get(), kScopeHigh));
  ENGRAM_ASSIGN_OR_RETURN(std::int64_t scope_high, ParseCount(src_high, from + ": meta.scope_id_high"));
  scope_high = std::max(scope_high, identity_high["scopes"]);
  identity_high["scopes"] = scope_high;
  {
    Digester digest(*meta_table);
    BatchInsert insert(dst.get(), *meta_table);
    Status st = ForEachRow(src.get(), *meta_table, [&](Row& row) {
      if (!CopiedMetaKey(row[0].s)) return Status::Ok();
      digest.Add(row);
      return insert.Add(std::move(row));
    });
    if (st.ok()) st = insert.Flush();
    if (st.ok()) st = SetMeta(dst.get(), kScopeHigh, std::to_string(scope_high));
    ENGRAM_RETURN_IF_ERROR(In("copy meta", st));
    report.tables.insert(report.tables.begin(), digest.digest());
    if (options.on_table) options.on_table(report.tables.front());
  }
  report.scope_id_high = scope_high;
  if (dst_pg) {
    for (const CopyTable& t : CopyTables()) {
      if (t.identity.empty() || identity_high[t.name] <= 0) continue;
      ENGRAM_RETURN_IF_ERROR(In(to + ": sequence of " + t.name, SetSequence(dst.get(), t, identity_high[t.name])));
    }
  }
  ENGRAM_RETURN_IF_ERROR(In(to + ": commit", txn->Commit()));
  guard.armed = false;
  snapshot.reset();
  src.reset();

  // Housekeeping of the new store: the WAL into the file (SQLite), planner
  // statistics (PostgreSQL).
  if (dst_pg) {
    std::string tables;
    for (const auto& name : CopiedTables()) tables += (tables.empty() ? "" : ", ") + name;
    ENGRAM_RETURN_IF_ERROR(In(to + ": analyze", dst->Exec("ANALYZE " + tables)));
  } else {
    ENGRAM_RETURN_IF_ERROR(In(to + ": checkpoint", dst->Exec("PRAGMA wal_checkpoint(TRUNCATE)")));
  }
  if (options.before_verify) options.before_verify(dst.get());

  // Verification: the committed target, read again through a new connection.
  auto reader = OpenReader(target);
  if (!reader.ok()) return In(to + ": verify", reader.status());
  auto after = DigestStore(reader->get());
  if (!after.ok()) return In(to + ": verify", after.status());
  std::string mismatches;
  int bad = 0;
  for (std::size_t i = 0; i < report.tables.size(); ++i) {
    const TableDigest& want = report.tables[i];
    const TableDigest* got = nullptr;
    for (const auto& d : *after) {
      if (d.table == want.table) got = &d;
    }
    if (got && got->SameContent(want)) continue;
    ++bad;
    mismatches += (mismatches.empty() ? "" : "; ") + want.table + " (source " + std::to_string(want.rows) +
                  " rows, hash " + want.Hash() + "; target " + (got ? std::to_string(got->rows) : "no") +
                  " rows, hash " + (got ? got->Hash() : "-") + ")";
  }
  if (bad) {
    return Status::Corruption("copy: verification failed for " + std::to_string(bad) + " table(s) of " +
                              report.target + ": " + mismatches);
  }
  ENGRAM_ASSIGN_OR_RETURN(std::string dst_high, GetMeta(reader->get(), kScopeHigh));
  if (dst_high != std::to_string(scope_high)) {
    return Status::Corruption("copy: verification failed: meta.scope_id_high of " + report.target + " is " +
                              dst_high + ", not " + std::to_string(scope_high));
  }
  for (const auto& d : report.tables) {
    report.rows += d.rows;
    report.vector_bytes += d.vector_bytes;
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace engram::store
