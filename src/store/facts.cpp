#include "store/facts.hpp"

#include <cstdio>

#include "store/embed_cache.hpp"
#include "store/schema.hpp"

namespace engram::store {

namespace {

std::string HashHex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

constexpr const char* kVectorColumns =
    "f.id, f.memory_id, f.user_id, f.agent_id, f.run_id, f.expires_at, f.embedding, f.text";

Status ScanVectors(sql::Stmt* st, const FactVectorSink& sink) {
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    FactVectorRow r;
    r.id = st->Int(0);
    r.memory_id = st->Text(1);
    r.ids = FactIds{st->Text(2), st->Text(3), st->Text(4)};
    if (!st->IsNull(5)) r.expires_at = st->Int(5);
    r.embedding = st->Floats(6);
    r.text = st->Text(7);
    if (!sink(r)) break;
  }
  st->Reset();
  return Status::Ok();
}

// The first column of every row, as integers.
Result<std::vector<std::int64_t>> CollectIds(sql::Stmt* st) {
  std::vector<std::int64_t> ids;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    ids.push_back(st->Int(0));
  }
  st->Reset();
  return ids;
}

Result<std::vector<FactRow>> CollectRows(sql::Stmt* st, TimeMs now) {
  std::vector<FactRow> rows;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    rows.push_back(ReadFactRow(st, now));
  }
  st->Reset();
  return rows;
}

// `head WHERE <the selector's condition> tail`, its arguments bound from ?1.
Result<sql::Stmt*> PrepareWhere(sql::Db* db, const std::string& head, const FactSelector& sel,
                                const std::string& tail) {
  ENGRAM_ASSIGN_OR_RETURN(SqlCond c, FactCondition(db->dialect(), sel));
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(head + " WHERE " + c.sql + tail));
  BindArgs(st, c.args);
  return st;
}

// The rows among `ids` that pass the selector, one statement text for any
// count: the ids are one bound argument, and the id list drives the join (one
// primary-key lookup per id) whatever indexes the conditions could use.
Result<sql::Stmt*> PrepareAmong(sql::Db* db, const std::string& columns, const FactSelector& sel,
                                const std::vector<std::int64_t>& ids) {
  ENGRAM_ASSIGN_OR_RETURN(SqlCond c, FactCondition(db->dialect(), sel));
  const bool pg = db->dialect() == sql::Dialect::kPostgres;
  std::string list = pg ? "{" : "[";  // a PostgreSQL array / a JSON array
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) list += ',';
    list += std::to_string(ids[i]);
  }
  list += pg ? "}" : "]";
  const char* from = pg ? " FROM unnest(CAST(? AS bigint[])) AS j(value) JOIN facts f ON f.id = j.value WHERE "
                        : " FROM json_each(?) j CROSS JOIN facts f ON f.id = j.value WHERE ";
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("SELECT " + columns + from + c.sql));
  st->Bind(1, list);
  BindArgs(st, c.args, 2);
  return st;
}

}  // namespace

const char* const kFactColumns =
    "f.id, f.scope_id, f.memory_id, f.user_id, f.agent_id, f.run_id, f.kind, f.role, f.actor, "
    "f.attributed_to, f.text, f.norm_hash, f.embedding, f.metadata, f.source_pages, f.event_time, "
    "f.record_time, f.created_at, f.updated_at, f.expires_at, f.idempotency_key, f.version, f.status, "
    "f.degraded, f.tenant";

FactRow ReadFactRow(sql::Stmt* st, TimeMs now) {
  FactRow r;
  r.id = st->Int(0);
  r.scope_id = st->Int(1);
  MemoryItem& m = r.item;
  m.id = st->Text(2);
  m.user = st->Text(3);
  m.agent = st->Text(4);
  m.run = st->Text(5);
  m.kind = st->Text(6);
  m.role = st->Text(7);
  m.actor = st->Text(8);
  m.attributed_to = st->Text(9);
  m.memory = st->Text(10);
  r.norm_hash = static_cast<std::uint64_t>(st->Int(11));
  m.hash = HashHex(r.norm_hash);
  r.embedding = st->Floats(12);
  m.metadata = st->Text(13);
  r.source_pages = st->Text(14);
  m.event_time = st->Int(15);
  r.record_time = st->Int(16);
  m.created_at = st->Int(17);
  m.updated_at = st->Int(18);
  if (!st->IsNull(19)) m.expires_at = st->Int(19);
  m.expired = m.expires_at && *m.expires_at <= now;
  r.idempotency_key = st->IsNull(20) ? std::string() : st->Text(20);
  m.version = st->Int(21);
  m.status = st->Text(22);
  if (m.status == "purged") m.hash.clear();
  m.degraded = st->Int(23) != 0;
  m.tenant = st->Text(24);
  return r;
}

Result<std::int64_t> InsertFactRow(sql::Db* db, const NewFactRow& f) {
  if (!f.embedding) return Status::Internal("fact row without an embedding");
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * ins,
      db->Prepare("INSERT INTO facts(scope_id, memory_id, user_id, agent_id, run_id, kind, role, actor, "
                  "attributed_to, text, norm_hash, embedding, metadata, source_pages, event_time, "
                  "record_time, created_at, updated_at, expires_at, idempotency_key, version, status, "
                  "degraded, tenant) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,'live',?," +
                  ScopeTenantSql(1) + ") RETURNING id"));
  ins->Bind(1, f.scope_id).Bind(2, f.memory_id).Bind(3, f.ids.user).Bind(4, f.ids.agent).Bind(5, f.ids.run)
      .Bind(6, f.kind).Bind(7, f.role).Bind(8, f.actor).Bind(9, f.attributed_to).Bind(10, f.text)
      .Bind(11, static_cast<std::int64_t>(f.norm_hash))
      .BindFloats(12, *f.embedding)
      .Bind(13, f.metadata).Bind(14, f.source_pages).Bind(15, f.event_time).Bind(16, f.now).Bind(17, f.now)
      .Bind(18, f.now);
  if (f.expires_at) ins->Bind(19, *f.expires_at); else ins->BindNull(19);
  if (!f.idempotency_key.empty()) ins->Bind(20, f.idempotency_key); else ins->BindNull(20);
  ins->Bind(21, f.degraded ? 1 : 0);
  ENGRAM_ASSIGN_OR_RETURN(bool row, ins->Step());
  const std::int64_t id = row ? ins->Int(0) : 0;
  ins->Reset();
  if (!row) return Status::Internal("facts insert returned no id");
  return id;
}

Result<std::int64_t> InsertFactVersion(sql::Db* db, std::int64_t from_fact_id, const FactVersionRow& v) {
  if (!v.embedding) return Status::Internal("fact version without an embedding");
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * ins,
      db->Prepare("INSERT INTO facts(scope_id, memory_id, user_id, agent_id, run_id, kind, role, actor, "
                  "attributed_to, text, norm_hash, embedding, metadata, source_pages, event_time, "
                  "record_time, created_at, updated_at, expires_at, idempotency_key, version, status, "
                  "degraded, tenant) SELECT scope_id, memory_id, user_id, agent_id, run_id, kind, role, actor, "
                  "attributed_to, ?, ?, ?, ?, source_pages, event_time, ?, created_at, ?, ?, "
                  "idempotency_key, version + 1, 'live', degraded, tenant FROM facts WHERE id = ? RETURNING id"));
  ins->Bind(1, v.text).Bind(2, static_cast<std::int64_t>(v.norm_hash))
      .BindFloats(3, *v.embedding).Bind(4, v.metadata).Bind(5, v.now)
      .Bind(6, v.now);
  if (v.expires_at) ins->Bind(7, *v.expires_at); else ins->BindNull(7);
  ins->Bind(8, from_fact_id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, ins->Step());
  const std::int64_t id = row ? ins->Int(0) : 0;
  ins->Reset();
  if (!row) return Status::Internal("facts row " + std::to_string(from_fact_id) + " missing for a new version");
  return id;
}

Result<bool> RetireLiveFact(sql::Db* db, std::int64_t fact_id, const char* status, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare("UPDATE facts SET status = ?, updated_at = ? WHERE id = ? AND status = 'live'"));
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, status).Bind(2, now).Bind(3, fact_id).Run());
  return db->Changes() == 1;
}

Result<std::optional<FactRow>> FindLiveFactByHash(sql::Db* db, std::int64_t scope_id, const FactIds& ids,
                                                  std::uint64_t norm_hash, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(std::string("SELECT ") + kFactColumns +
                  " FROM facts f WHERE f.scope_id = ? AND f.user_id = ? AND f.agent_id = ? AND "
                  "f.run_id = ? AND f.norm_hash = ? AND f.status = 'live'"));
  st->Bind(1, scope_id).Bind(2, ids.user).Bind(3, ids.agent).Bind(4, ids.run)
      .Bind(5, static_cast<std::int64_t>(norm_hash));
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::optional<FactRow> out;
  if (row) out = ReadFactRow(st, now);
  st->Reset();
  return out;
}

Status ScanLiveFactVectors(sql::Db* db, std::int64_t scope_id, const FactVectorSink& sink) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare(std::string("SELECT ") + kVectorColumns +
                                      " FROM facts f WHERE f.scope_id = ? AND f.status = 'live' ORDER BY f.id"));
  st->Bind(1, scope_id);
  return ScanVectors(st, sink);
}

Status ScanUnexpiredFactVectors(sql::Db* db, std::int64_t scope_id, const FactIds& ids, TimeMs now,
                                const FactVectorSink& sink) {
  // No ORDER BY: the rows come in the order of the index the query uses.
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(std::string("SELECT ") + kVectorColumns +
                  " FROM facts f WHERE f.scope_id = ? AND f.user_id = ? AND f.agent_id = ? AND f.run_id = ? "
                  "AND f.status = 'live' AND (f.expires_at IS NULL OR f.expires_at > ?)"));
  st->Bind(1, scope_id).Bind(2, ids.user).Bind(3, ids.agent).Bind(4, ids.run).Bind(5, now);
  return ScanVectors(st, sink);
}

Status ScanFactVectors(sql::Db* db, const FactSelector& sel, const FactVectorSink& sink) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          PrepareWhere(db, std::string("SELECT ") + kVectorColumns + " FROM facts f", sel, ""));
  return ScanVectors(st, sink);
}

Result<std::vector<FactRow>> SelectFactRows(sql::Db* db, const FactSelector& sel) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, PrepareWhere(db, std::string("SELECT ") + kFactColumns + " FROM facts f", sel, " ORDER BY f.id"));
  return CollectRows(st, sel.now);
}

Result<std::optional<FactRow>> FindNewestFact(sql::Db* db, const FactSelector& sel) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, PrepareWhere(db, std::string("SELECT ") + kFactColumns + " FROM facts f",
                                                       sel, " ORDER BY f.version DESC LIMIT 1"));
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::optional<FactRow> out;
  if (row) out = ReadFactRow(st, sel.now);
  st->Reset();
  return out;
}

Result<std::vector<FactRow>> ListFactRows(sql::Db* db, const FactSelector& sel,
                                          const std::optional<FactCursor>& after, int limit) {
  ENGRAM_ASSIGN_OR_RETURN(SqlCond c, FactCondition(db->dialect(), sel));
  if (after) {
    c.And(SqlCond{"f.created_at < ? OR (f.created_at = ? AND f.memory_id < ?)",
                  {SqlArg::Int(after->created_at), SqlArg::Int(after->created_at), SqlArg::Text(after->memory_id)}});
  }
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare(std::string("SELECT ") + kFactColumns + " FROM facts f WHERE " + c.sql +
                                  " ORDER BY f.created_at DESC, f.memory_id DESC LIMIT ?"));
  BindArgs(st, c.args);
  st->Bind(static_cast<int>(c.args.size()) + 1, limit);
  return CollectRows(st, sel.now);
}

Result<std::vector<std::int64_t>> FilterFactIds(sql::Db* db, const FactSelector& sel,
                                                const std::vector<std::int64_t>& ids) {
  if (ids.empty()) return std::vector<std::int64_t>{};
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, PrepareAmong(db, "f.id", sel, ids));
  return CollectIds(st);
}

Result<std::vector<FactRow>> FetchFactRows(sql::Db* db, const FactSelector& sel,
                                           const std::vector<std::int64_t>& ids) {
  if (ids.empty()) return std::vector<FactRow>{};
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, PrepareAmong(db, kFactColumns, sel, ids));
  return CollectRows(st, sel.now);
}

Result<std::vector<std::int64_t>> UserScopeIds(sql::Db* db, const std::string& tenant, const std::string& user) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT id FROM scopes WHERE tenant = ? AND user_id = ? ORDER BY id"));
  st->Bind(1, tenant).Bind(2, user);
  return CollectIds(st);
}

Result<std::int64_t> CountFactVersions(sql::Db* db, const std::string& memory_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("SELECT count(*) FROM facts WHERE memory_id = ?"));
  st->Bind(1, memory_id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  const std::int64_t n = row ? st->Int(0) : 0;
  st->Reset();
  return n;
}

Result<std::vector<FactVersionText>> ListFactVersions(sql::Db* db, const std::string& memory_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT id, text, version, role FROM facts WHERE memory_id = ?"));
  st->Bind(1, memory_id);
  std::vector<FactVersionText> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back(FactVersionText{st->Int(0), st->Text(1), st->Int(2), st->Text(3)});
  }
  st->Reset();
  return out;
}

Status EraseFactContent(sql::Db* db, const std::string& memory_id, const std::vector<std::int64_t>& fact_ids,
                        const std::vector<std::int64_t>& cache_hashes, TimeMs now) {
  // The memory's tenant: only its cache entries go.
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * owner, db->Prepare("SELECT tenant FROM facts WHERE memory_id = ? LIMIT 1"));
  owner->Bind(1, memory_id);
  ENGRAM_ASSIGN_OR_RETURN(bool found, owner->Step());
  const std::string tenant = found ? owner->Text(0) : std::string();
  owner->Reset();
  if (found) ENGRAM_RETURN_IF_ERROR(DeleteCachedEmbeddings(db, tenant, cache_hashes));
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * unlink,
                          db->Prepare("DELETE FROM fact_entities WHERE fact_id = ? RETURNING entity_id"));
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * orphan, db->Prepare("DELETE FROM entities WHERE id = ?1 AND NOT EXISTS "
                                      "(SELECT 1 FROM fact_entities WHERE entity_id = ?1)"));
  for (auto id : fact_ids) {
    unlink->Bind(1, id);
    std::vector<std::int64_t> entities;
    for (;;) {
      ENGRAM_ASSIGN_OR_RETURN(bool row, unlink->Step());
      if (!row) break;
      entities.push_back(unlink->Int(0));
    }
    unlink->Reset();
    for (auto e : entities) ENGRAM_RETURN_IF_ERROR(orphan->Bind(1, e).Run());
  }
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * links,
                          db->Prepare("DELETE FROM fact_links WHERE from_memory = ?1 OR to_memory = ?1"));
  ENGRAM_RETURN_IF_ERROR(links->Bind(1, memory_id).Run());
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * rows,
      db->Prepare("UPDATE facts SET text = '', norm_hash = 0, embedding = ?, metadata = '{}', actor = '', "
                  "attributed_to = '', source_pages = '[]', idempotency_key = NULL, status = 'purged', "
                  "updated_at = ? WHERE memory_id = ?"));
  static const char kNoBytes = 0;  // an empty BLOB / BYTEA (a null pointer would bind NULL)
  ENGRAM_RETURN_IF_ERROR(rows->BindBlob(1, &kNoBytes, 0).Bind(2, now).Bind(3, memory_id).Run());
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * history,
      db->Prepare("UPDATE fact_history SET old_text = NULL, new_text = NULL, actor = '' WHERE memory_id = ?"));
  return history->Bind(1, memory_id).Run();
}

}  // namespace engram::store
