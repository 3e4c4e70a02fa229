#include "store/stats.hpp"

namespace engram::store {

namespace {

// The scalar subqueries of ContentCounts, in its order, with `in(column)` the
// predicate that keeps the rows of the scopes counted.
std::string ContentColumns(const std::function<std::string(const char*)>& in) {
  return "(SELECT count(*) FROM turns WHERE " + in("scope_id") +
         "), "
         "(SELECT count(*) FROM turns WHERE page_id IS NULL AND " +
         in("scope_id") +
         "), "
         "(SELECT count(*) FROM pages p JOIN segments g ON g.id = p.segment_id AND g.tenant = "
         "p.tenant "
         " WHERE g.archived_at IS NULL AND " +
         in("p.scope_id") +
         "), "
         "(SELECT count(*) FROM pages p JOIN segments g ON g.id = p.segment_id AND g.tenant = "
         "p.tenant "
         " WHERE g.archived_at IS NOT NULL AND " +
         in("p.scope_id") +
         "), "
         "(SELECT count(*) FROM segments WHERE archived_at IS NULL AND " +
         in("scope_id") +
         "), "
         "(SELECT count(*) FROM segments WHERE archived_at IS NOT NULL AND " +
         in("scope_id") +
         "), "
         "(SELECT count(*) FROM facts WHERE kind = 'user' AND status = 'live' AND " +
         in("scope_id") +
         "), "
         "(SELECT count(*) FROM facts WHERE kind = 'assistant' AND status = 'live' AND " +
         in("scope_id") +
         "), "
         "(SELECT count(*) FROM profile_slots WHERE " +
         in("scope_id") +
         "), "
         "(SELECT count(*) FROM pages WHERE degraded = 1 AND " +
         in("scope_id") +
         ") + "
         "(SELECT count(*) FROM facts WHERE degraded = 1 AND status = 'live' AND " +
         in("scope_id") +
         ") + "
         "(SELECT count(*) FROM profile_slots WHERE degraded = 1 AND " +
         in("scope_id") + ")";
}

ContentCounts ReadContents(sql::Stmt* st) {
  ContentCounts c;
  c.turns = st->Int(0);
  c.stm_turns = st->Int(1);
  c.mtm_pages = st->Int(2);
  c.archived_pages = st->Int(3);
  c.mtm_segments = st->Int(4);
  c.archived_segments = st->Int(5);
  c.user_facts = st->Int(6);
  c.assistant_facts = st->Int(7);
  c.profile_slots = st->Int(8);
  c.degraded_items = st->Int(9);
  return c;
}

}  // namespace

Result<ContentCounts> CountContents(sql::Db* db, std::int64_t scope_id) {
  // One statement of scalar subqueries; ?1 = 0 selects every scope.
  static const std::string kSql = "SELECT " + ContentColumns([](const char* col) {
                                    return std::string("(?1 = 0 OR ") + col + " = ?1)";
                                  });
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(kSql));
  st->Bind(1, scope_id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  ContentCounts c;
  if (row) c = ReadContents(st);
  st->Reset();
  return c;
}

Result<ScopeSetCounts> CountScopeSet(sql::Db* db, const std::string& tenant,
                                     const std::string& user, const std::string& assistant) {
  // The set's scope rows once (by the unique index on tenant, user, assistant),
  // then each table by its per-scope index: one statement, whatever the number of scopes.
  // (A statement per set of filters: "user_id = ? OR ? = ''" is no index
  // look-up, and counting one user's scopes read every scope of the tenant.)
  auto sql_of = [](bool by_user, bool by_assistant) {
    return "WITH s AS (SELECT id FROM scopes WHERE tenant = ?" +
           std::string(by_user ? " AND user_id = ?" : "") +
           (by_assistant ? " AND assistant_id = ?" : "") + ") SELECT " +
           ContentColumns(
               [](const char* col) { return std::string(col) + " IN (SELECT id FROM s)"; }) +
           ", (SELECT count(*) FROM s), "
           "(SELECT count(*) FROM jobs WHERE status IN ('pending', 'leased') AND scope_id IN "
           "(SELECT id "
           "FROM s)), "
           "(SELECT count(*) FROM jobs WHERE status = 'failed' AND scope_id IN (SELECT id FROM s))";
  };
  static const std::string kSql[2][2] = {{sql_of(false, false), sql_of(false, true)},
                                         {sql_of(true, false), sql_of(true, true)}};
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare(kSql[user.empty() ? 0 : 1][assistant.empty() ? 0 : 1]));
  int param = 1;
  st->Bind(param++, tenant);
  if (!user.empty()) st->Bind(param++, user);
  if (!assistant.empty()) st->Bind(param++, assistant);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  ScopeSetCounts c;
  if (row) {
    c.contents = ReadContents(st);
    c.scopes = st->Int(10);
    c.pending_jobs = st->Int(11);
    c.failed_jobs = st->Int(12);
  }
  st->Reset();
  return c;
}

Result<TenantUsage> CountTenantUsage(sql::Db* db, const std::string& tenant) {
  // Bytes, not characters: SQLite's length() of a blob, PostgreSQL's octet_length().
  const bool pg = db->dialect() == sql::Dialect::kPostgres;
  const std::string bytes_of = pg ? "octet_length" : "length";
  const std::string cast_open = pg ? "" : "CAST(", cast_close = pg ? "" : " AS BLOB)";
  auto len = [&](const char* col) { return bytes_of + "(" + cast_open + col + cast_close + ")"; };
  const std::string q =
      "WITH s AS (SELECT id FROM scopes WHERE tenant = ?1) SELECT "
      "(SELECT count(*) FROM turns WHERE scope_id IN (SELECT id FROM s)), "
      "(SELECT count(*) FROM facts WHERE scope_id IN (SELECT id FROM s) AND status = 'live' "
      " AND kind IN ('memory', 'procedural')), "
      "(SELECT coalesce(sum(" + len("user_text") + " + " + len("assistant_text") +
      "), 0) FROM turns WHERE scope_id IN (SELECT id FROM s)), "
      "(SELECT coalesce(sum(" + len("text") + "), 0) FROM facts WHERE scope_id IN (SELECT id FROM s) "
      " AND status = 'live' AND kind IN ('memory', 'procedural'))";
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(q));
  st->Bind(1, tenant);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  TenantUsage u;
  if (row) {
    u.turns = st->Int(0);
    u.memories = st->Int(1);
    u.bytes = st->Int(2) + st->Int(3);
  }
  st->Reset();
  return u;
}

Status ScanExportPages(sql::Db* db, std::int64_t scope_id,
                       const std::function<void(const ExportPageRow&)>& sink) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT id, turn_id, segment_id, prev_page, next_page, chain_summary, keywords, "
                  "analyzed FROM pages WHERE scope_id = ? ORDER BY id"));
  st->Bind(1, scope_id);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    ExportPageRow r;
    r.id = st->Int(0);
    r.turn_id = st->Int(1);
    r.segment_id = st->Int(2);
    if (!st->IsNull(3)) r.prev_page = st->Int(3);
    if (!st->IsNull(4)) r.next_page = st->Int(4);
    r.chain_summary = st->Text(5);
    r.keywords = st->Text(6);
    r.analyzed = st->Int(7) != 0;
    sink(r);
  }
  st->Reset();
  return Status::Ok();
}

Status ScanExportFacts(sql::Db* db, std::int64_t scope_id, TimeMs now,
                       const std::function<void(const FactRow&)>& sink) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(std::string("SELECT ") + kFactColumns +
                  " FROM facts f WHERE f.scope_id = ? AND f.status = 'live' ORDER BY f.id"));
  st->Bind(1, scope_id);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    sink(ReadFactRow(st, now));
  }
  st->Reset();
  return Status::Ok();
}

}  // namespace engram::store
