#include "lineage/evidence.hpp"

namespace engram::lineage {

namespace {

constexpr char kSep = '\x1f';

// Runs `sql` and calls fn(stmt) per row.
template <typename Fn>
Status ForEachRow(sql::Db* db, const char* sql, Fn fn) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(sql));
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

}  // namespace

std::string ScopeKey(const std::string& tenant, const std::string& user, const std::string& assistant) {
  std::string k = tenant;
  k += kSep;
  k += user;
  k += kSep;
  k += assistant;
  return k;
}

Scope ScopeFromKey(const std::string& key) {
  Scope s;
  std::size_t a = key.find(kSep);
  std::size_t b = a == std::string::npos ? a : key.find(kSep, a + 1);
  if (b == std::string::npos) return Scope{key, "", ""};
  s.tenant = key.substr(0, a);
  s.user = key.substr(a + 1, b - a - 1);
  s.assistant = key.substr(b + 1);
  return s;
}

Result<Evidence> LoadEvidence(sql::Db* db) {
  Evidence e;
  ENGRAM_ASSIGN_OR_RETURN(e.receipts, Read(db, ReadFilter{}));
  ENGRAM_RETURN_IF_ERROR(ForEachRow(db, "SELECT id, tenant, user_id, assistant_id FROM scopes",
                                    [&](sql::Stmt* st) {
                                      e.scopes.push_back(
                                          {st->Int(0), Scope{st->Text(1), st->Text(2), st->Text(3)}});
                                    }));
  ENGRAM_RETURN_IF_ERROR(ForEachRow(
      db, "SELECT id, scope_id, seq, page_id, ingest_time FROM turns", [&](sql::Stmt* st) {
        e.turns.push_back({st->Int(0), st->Int(1), st->Int(2), st->IsNull(3) ? 0 : st->Int(3), st->Int(4)});
      }));
  ENGRAM_RETURN_IF_ERROR(ForEachRow(
      db, "SELECT id, scope_id, turn_id, segment_id, prev_page, next_page, degraded FROM pages",
      [&](sql::Stmt* st) { e.pages.push_back(PageFrom(st)); }));
  ENGRAM_RETURN_IF_ERROR(ForEachRow(
      db, "SELECT id, scope_id, version, created_at, archived_at, degraded FROM segments",
      [&](sql::Stmt* st) {
        e.segments.push_back({st->Int(0), st->Int(1), st->Int(2), st->Int(3),
                              st->IsNull(4) ? 0 : st->Int(4), st->Int(5) != 0});
      }));
  // Stores whose facts keep each version in its own row name the memory a
  // row belongs to (facts.memory_id); older layouts have one row per fact.
  bool grouped = false;
  ENGRAM_RETURN_IF_ERROR(ForEachRow(
      db, "SELECT 1 FROM pragma_table_info('facts') WHERE name = 'memory_id'",
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
      db, "SELECT id, scope_id, kind, status, attempts, created_at, updated_at FROM jobs",
      [&](sql::Stmt* st) {
        e.jobs.push_back({st->Int(0), st->Int(1), st->Text(2), st->Text(3),
                          static_cast<int>(st->Int(4)), st->Int(5), st->Int(6)});
      }));
  ENGRAM_RETURN_IF_ERROR(ForEachRow(
      db, "SELECT tenant, user_scope, assistant_scope, max(last_at) FROM receipt_days "
          "GROUP BY tenant, user_scope, assistant_scope",
      [&](sql::Stmt* st) {
        e.compacted_through[ScopeKey(st->Text(0), st->Text(1), st->Text(2))] = st->Int(3);
      }));
  return e;
}

Result<std::vector<PageRec>> LoadPages(sql::Db* db, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT id, scope_id, turn_id, segment_id, prev_page, next_page, degraded FROM pages "
                  "WHERE scope_id = ? ORDER BY id"));
  st->Bind(1, scope_id);
  std::vector<PageRec> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back(PageFrom(st));
  }
  st->Reset();
  return out;
}

}  // namespace engram::lineage
