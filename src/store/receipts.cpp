#include "store/receipts.hpp"

namespace engram::store {

namespace {

using sql::ForEachRow;

// Prepares `sql` (no parameters) and calls fn(st) per row.
template <typename Fn>
Status ForEachRow(sql::Db* db, const char* sql, Fn fn) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(sql));
  return ForEachRow(st, fn);
}

// The first column of the first row of the prepared, bound `st` (0 without rows).
Result<std::int64_t> OneInt(sql::Stmt* st) {
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::int64_t v = row ? st->Int(0) : 0;
  st->Reset();
  return v;
}

constexpr const char* kReceiptCols =
    "id, run_id, tenant, user_scope, assistant_scope, memory_kind, memory_id, version, source_version, "
    "from_tier, to_tier, status, at_utc, depends_on_version, outcome_receipt";

ReceiptRow ReceiptFrom(sql::Stmt* st) {
  ReceiptRow r;
  r.id = st->Int(0);
  r.run_id = st->Text(1);
  r.tenant = st->Text(2);
  r.user_scope = st->Text(3);
  r.assistant_scope = st->Text(4);
  r.memory_kind = st->Text(5);
  r.memory_id = st->Int(6);
  r.version = st->Int(7);
  r.source_version = st->Text(8);
  r.from_tier = st->Text(9);
  r.to_tier = st->Text(10);
  r.status = st->Text(11);
  r.at_utc = st->Int(12);
  r.depends_on_version = st->Text(13);
  r.outcome_receipt = st->Text(14);
  return r;
}

constexpr const char* kPageCols = "id, scope_id, turn_id, segment_id, prev_page, next_page, degraded";

PageRec PageFrom(sql::Stmt* st) {
  PageRec p;
  p.id = st->Int(0);
  p.scope_id = st->Int(1);
  p.turn_id = st->Int(2);
  p.segment_id = st->Int(3);
  p.prev_page = st->IsNull(4) ? 0 : st->Int(4);
  p.next_page = st->IsNull(5) ? 0 : st->Int(5);
  p.degraded = st->Int(6) != 0;
  return p;
}

// Receipts before ?1, except started job receipts still waiting for an outcome.
constexpr const char* kOld =
    " FROM receipts WHERE at_utc < ?1 AND NOT (memory_kind = 'job' AND status = 'started' AND "
    "NOT EXISTS (SELECT 1 FROM receipts o WHERE o.run_id = receipts.run_id AND "
    "o.memory_kind = 'job' AND o.status <> 'started'))";

}  // namespace

Status WriteReceipt(sql::Db* db, const ReceiptRow& r) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO receipts(run_id, tenant, user_scope, assistant_scope, memory_kind, "
                  "memory_id, version, source_version, from_tier, to_tier, status, at_utc, "
                  "depends_on_version, outcome_receipt) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  return st->Bind(1, r.run_id)
      .Bind(2, r.tenant)
      .Bind(3, r.user_scope)
      .Bind(4, r.assistant_scope)
      .Bind(5, r.memory_kind)
      .Bind(6, r.memory_id)
      .Bind(7, r.version)
      .Bind(8, r.source_version)
      .Bind(9, r.from_tier)
      .Bind(10, r.to_tier)
      .Bind(11, r.status)
      .Bind(12, r.at_utc)
      .Bind(13, r.depends_on_version)
      .Bind(14, r.outcome_receipt)
      .Run();
}

Result<std::vector<ReceiptRow>> ReadReceipts(sql::Db* db, const ReceiptFilter& f) {
  // No LIMIT clause for "no limit": PostgreSQL refuses a negative LIMIT and
  // SQLite a NULL one.
  const bool limited = f.limit >= 0;
  // Only the filters given, each "column = ?": "(? = '' OR tenant = ?)" is
  // no index look-up, and one user's receipts were read from every tenant's.
  const std::pair<const char*, const std::string*> filters[] = {{"tenant", &f.tenant},
                                                                {"user_scope", &f.user},
                                                                {"assistant_scope", &f.assistant},
                                                                {"run_id", &f.run_id},
                                                                {"memory_kind", &f.memory_kind}};
  std::string where;
  for (const auto& [column, value] : filters) {
    if (value->empty()) continue;
    where += where.empty() ? " WHERE " : " AND ";
    where += std::string(column) + " = ?";
  }
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare(std::string("SELECT ") + kReceiptCols + " FROM receipts" + where +
                                  " ORDER BY id" + (limited ? " LIMIT ?" : "")));
  int param = 1;
  for (const auto& [column, value] : filters) {
    if (!value->empty()) st->Bind(param++, *value);
  }
  if (limited) st->Bind(param, f.limit);
  std::vector<ReceiptRow> out;
  ENGRAM_RETURN_IF_ERROR(ForEachRow(st, [&](sql::Stmt* s) { out.push_back(ReceiptFrom(s)); }));
  return out;
}

Result<std::vector<ReceiptDayRow>> CountReceiptsByDay(sql::Db* db, const std::string& tenant, const std::string& user,
                                                      std::int64_t limit) {
  // (A statement with the user and one without: "(? = '' OR user_scope = ?)"
  // is no index look-up, and one user's days read the whole tenant's.)
  auto sql_of = [](const char* scope, const char* limit) {
    const std::string where = std::string(" WHERE ") + scope;
    return "SELECT day, user_scope, assistant_scope, memory_kind, from_tier, to_tier, status, "
           "created, compacted, CAST(SUM(n) AS BIGINT) FROM ("
           "SELECT at_utc / 86400000 AS day, user_scope, assistant_scope, memory_kind, from_tier, "
           "to_tier, status, CASE WHEN memory_kind = 'segment' AND outcome_receipt LIKE "
           "'segment.create%' THEN 1 ELSE 0 END AS created, 0 AS compacted, "
           "CAST(1 AS BIGINT) AS n FROM receipts" +
           where +
           " UNION ALL SELECT day, user_scope, assistant_scope, memory_kind, from_tier, to_tier, "
           "status, 0, 1, receipts FROM receipt_days" +
           where +
           ") t GROUP BY day, user_scope, assistant_scope, memory_kind, from_tier, to_tier, "
           "status, created, compacted ORDER BY day, compacted DESC LIMIT " +
           limit;
  };
  static const std::string kTenant = sql_of("tenant = ?1", "?2"),
                           kUser = sql_of("tenant = ?1 AND user_scope = ?2", "?3");
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(user.empty() ? kTenant : kUser));
  st->Bind(1, tenant);
  if (!user.empty()) st->Bind(2, user);
  st->Bind(user.empty() ? 2 : 3, limit);
  std::vector<ReceiptDayRow> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool more, st->Step());
    if (!more) break;
    ReceiptDayRow r;
    r.day = st->Int(0);
    r.user = st->Text(1);
    r.assistant = st->Text(2);
    r.kind = st->Text(3);
    r.from_tier = st->Text(4);
    r.to_tier = st->Text(5);
    r.status = st->Text(6);
    r.segment_created = st->Int(7) != 0;
    r.compacted = st->Int(8) != 0;
    r.count = st->Int(9);
    out.push_back(std::move(r));
  }
  st->Reset();
  return out;
}

Result<ReceiptCompaction> CompactReceipts(sql::Db* db, TimeMs cutoff) {
  ReceiptCompaction out;
  out.cutoff = cutoff;
  // Two-argument min/max are SQLite's; PostgreSQL spells them LEAST/GREATEST.
  const bool pg = db->dialect() == sql::Dialect::kPostgres;
  const std::string first = std::string(pg ? "LEAST" : "min") + "(receipt_days.first_at, excluded.first_at)";
  const std::string last = std::string(pg ? "GREATEST" : "max") + "(receipt_days.last_at, excluded.last_at)";
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * sum,
      db->Prepare(std::string("INSERT INTO receipt_days(day, tenant, user_scope, assistant_scope, "
                              "memory_kind, from_tier, to_tier, status, receipts, first_at, last_at) "
                              "SELECT at_utc / 86400000, tenant, user_scope, assistant_scope, "
                              "memory_kind, from_tier, to_tier, status, count(*), min(at_utc), "
                              "max(at_utc)") +
                  kOld +
                  " GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 ON CONFLICT(day, tenant, user_scope, "
                  "assistant_scope, memory_kind, from_tier, to_tier, status) DO UPDATE SET "
                  "receipts = receipt_days.receipts + excluded.receipts, first_at = " +
                  first + ", last_at = " + last));
  ENGRAM_RETURN_IF_ERROR(sum->Bind(1, cutoff).Run());
  out.day_rows = db->Changes();
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * del, db->Prepare(std::string("DELETE") + kOld));
  ENGRAM_RETURN_IF_ERROR(del->Bind(1, cutoff).Run());
  out.receipts_removed = db->Changes();
  return out;
}

Result<std::vector<OpenJobRun>> FindOpenJobRuns(sql::Db* db, std::int64_t scope_id, const std::string& kind) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT s.run_id, s.memory_id FROM receipts s WHERE s.memory_kind = 'job' AND "
                  "s.status = 'started' AND s.memory_id IN (SELECT id FROM jobs WHERE scope_id = ?1 "
                  "AND kind = ?2) AND NOT EXISTS (SELECT 1 FROM receipts o WHERE o.run_id = s.run_id "
                  "AND o.memory_kind = 'job' AND o.status <> 'started') ORDER BY s.id"));
  st->Bind(1, scope_id).Bind(2, kind);
  std::vector<OpenJobRun> out;
  ENGRAM_RETURN_IF_ERROR(ForEachRow(st, [&](sql::Stmt* s) { out.push_back({s->Text(0), s->Int(1)}); }));
  return out;
}

Result<std::vector<RunCommit>> ListRunCommits(sql::Db* db, const std::string& run_id, const std::string& to_tier) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT memory_kind, memory_id, version, outcome_receipt FROM receipts "
                  "WHERE run_id = ?1 AND memory_kind <> 'job' AND to_tier = ?2 AND "
                  "status IN ('committed', 'degraded') ORDER BY id"));
  st->Bind(1, run_id).Bind(2, to_tier);
  std::vector<RunCommit> out;
  ENGRAM_RETURN_IF_ERROR(
      ForEachRow(st, [&](sql::Stmt* s) { out.push_back({s->Text(0), s->Int(1), s->Int(2), s->Text(3)}); }));
  return out;
}

Result<std::int64_t> CountUnpagedTurns(sql::Db* db, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT count(*) FROM turns WHERE scope_id = ?1 AND page_id IS NULL"));
  st->Bind(1, scope_id);
  return OneInt(st);
}

Result<bool> CommitRowHolds(sql::Db* db, const std::string& memory_kind, std::int64_t memory_id,
                            std::int64_t version, std::int64_t page_id) {
  const char* sql = nullptr;
  std::int64_t second = version;
  if (memory_kind == "turn") {
    sql = "SELECT count(*) FROM turns t JOIN pages p ON p.id = t.page_id AND p.tenant = t.tenant "
          "WHERE t.id = ?1 AND t.page_id = ?2 AND p.turn_id = t.id";
    second = page_id;
  } else if (memory_kind == "segment") {
    sql = "SELECT count(*) FROM segments WHERE id = ?1 AND version >= ?2";
  } else if (memory_kind == "fact") {
    sql = "SELECT count(*) FROM facts WHERE id = ?1 AND version >= ?2";
  } else {
    return true;
  }
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(sql));
  st->Bind(1, memory_id).Bind(2, second);
  ENGRAM_ASSIGN_OR_RETURN(std::int64_t n, OneInt(st));
  return n == 1;
}

Result<EvidenceRows> LoadEvidenceRows(sql::Db* db) {
  EvidenceRows e;
  ENGRAM_ASSIGN_OR_RETURN(e.receipts, ReadReceipts(db, ReceiptFilter{}));
  ENGRAM_RETURN_IF_ERROR(ForEachRow(db, "SELECT id, tenant, user_id, assistant_id FROM scopes", [&](sql::Stmt* st) {
    e.scopes.push_back({st->Int(0), Scope{st->Text(1), st->Text(2), st->Text(3)}});
  }));
  ENGRAM_RETURN_IF_ERROR(ForEachRow(db, "SELECT id, scope_id, seq, page_id, ingest_time FROM turns", [&](sql::Stmt* st) {
    e.turns.push_back({st->Int(0), st->Int(1), st->Int(2), st->IsNull(3) ? 0 : st->Int(3), st->Int(4)});
  }));
  ENGRAM_RETURN_IF_ERROR(ForEachRow(db, (std::string("SELECT ") + kPageCols + " FROM pages").c_str(),
                                    [&](sql::Stmt* st) { e.pages.push_back(PageFrom(st)); }));
  ENGRAM_RETURN_IF_ERROR(ForEachRow(
      db, "SELECT id, scope_id, version, created_at, archived_at, degraded FROM segments", [&](sql::Stmt* st) {
        e.segments.push_back(
            {st->Int(0), st->Int(1), st->Int(2), st->Int(3), st->IsNull(4) ? 0 : st->Int(4), st->Int(5) != 0});
      }));
  // Stores whose facts keep each version in its own row name the memory a
  // row belongs to (facts.memory_id); older layouts have one row per fact.
  bool grouped = false;
  ENGRAM_RETURN_IF_ERROR(ForEachRow(
      db,
      db->dialect() == sql::Dialect::kPostgres
          ? "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND "
            "table_name = 'facts' AND column_name = 'memory_id'"
          : "SELECT 1 FROM pragma_table_info('facts') WHERE name = 'memory_id'",
      [&](sql::Stmt*) { grouped = true; }));
  ENGRAM_RETURN_IF_ERROR(ForEachRow(
      db,
      grouped ? "SELECT id, scope_id, version, status, record_time, degraded, memory_id FROM facts"
              : "SELECT id, scope_id, version, status, record_time, degraded, '' FROM facts",
      [&](sql::Stmt* st) {
        e.facts.push_back(
            {st->Int(0), st->Int(1), st->Int(2), st->Text(3), st->Int(4), st->Int(5) != 0, st->Text(6)});
      }));
  ENGRAM_RETURN_IF_ERROR(ForEachRow(
      db, "SELECT id, scope_id, kind, status, attempts, created_at, updated_at FROM jobs", [&](sql::Stmt* st) {
        e.jobs.push_back({st->Int(0), st->Int(1), st->Text(2), st->Text(3), static_cast<int>(st->Int(4)),
                          st->Int(5), st->Int(6)});
      }));
  ENGRAM_RETURN_IF_ERROR(ForEachRow(
      db,
      "SELECT tenant, user_scope, assistant_scope, max(last_at) FROM receipt_days "
      "GROUP BY tenant, user_scope, assistant_scope",
      [&](sql::Stmt* st) { e.compacted.push_back({Scope{st->Text(0), st->Text(1), st->Text(2)}, st->Int(3)}); }));
  return e;
}

Result<std::vector<PageRec>> LoadScopePages(sql::Db* db, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare(std::string("SELECT ") + kPageCols + " FROM pages WHERE scope_id = ? ORDER BY id"));
  st->Bind(1, scope_id);
  std::vector<PageRec> out;
  ENGRAM_RETURN_IF_ERROR(ForEachRow(st, [&](sql::Stmt* s) { out.push_back(PageFrom(s)); }));
  return out;
}

}  // namespace engram::store
