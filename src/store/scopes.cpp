#include "store/scopes.hpp"

#include <algorithm>
#include <charconv>

#include "store/schema.hpp"

namespace engram::store {

namespace {

ScopeRow RowFrom(sql::Stmt* st) {
  ScopeRow r;
  r.id = st->Int(0);
  r.scope.tenant = st->Text(1);
  r.scope.user = st->Text(2);
  r.scope.assistant = st->Text(3);
  r.next_seq = st->Int(4);
  r.chain_page_id = st->IsNull(5) ? 0 : st->Int(5);
  r.chain_summary = st->Text(6);
  r.data_version = st->Int(7);
  r.stm_count = st->Int(8);
  r.generation = st->Int(9);
  return r;
}

constexpr const char* kScopeCols =
    "SELECT id, tenant, user_id, assistant_id, next_seq, chain_page_id, chain_summary, "
    "data_version, stm_count, generation FROM scopes ";

// SQLite reuses the largest rowid once its row is deleted; meta.scope_id_high
// remembers the highest id ever given, so a new scope always gets a fresh id.
// (PostgreSQL: an identity column, whose sequence never goes back.)
Result<std::int64_t> NextSqliteScopeId(sql::Db* db) {
  ENGRAM_ASSIGN_OR_RETURN(std::string high, GetMeta(db, "scope_id_high"));
  std::int64_t id = 0;
  if (!high.empty() && std::from_chars(high.data(), high.data() + high.size(), id).ec != std::errc()) {
    return Status::Corruption("meta.scope_id_high is not a number: " + high);
  }
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("SELECT coalesce(max(id), 0) FROM scopes"));
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (row) id = std::max(id, st->Int(0));
  st->Reset();
  ++id;
  ENGRAM_RETURN_IF_ERROR(SetMeta(db, "scope_id_high", std::to_string(id)));
  return id;
}

Result<std::optional<std::int64_t>> FindScopeId(sql::Db* db, const Scope& scope) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * q,
      db->Prepare("SELECT id FROM scopes WHERE tenant = ? AND user_id = ? AND assistant_id = ?"));
  q->Bind(1, scope.tenant).Bind(2, scope.user).Bind(3, scope.assistant);
  ENGRAM_ASSIGN_OR_RETURN(bool row, q->Step());
  std::optional<std::int64_t> id;
  if (row) id = q->Int(0);
  q->Reset();
  return id;
}

}  // namespace

Result<std::int64_t> EnsureScope(sql::Db* db, const Scope& scope, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(auto found, FindScopeId(db, scope));
  if (found) return *found;
  if (db->dialect() == sql::Dialect::kPostgres) {
    // Concurrent writers may create the same scope: the loser's insert does
    // nothing and it reads the winner's row.
    ENGRAM_ASSIGN_OR_RETURN(
        sql::Stmt * st,
        db->Prepare("INSERT INTO scopes(tenant, user_id, assistant_id, created_at) VALUES(?,?,?,?) "
                    "ON CONFLICT(tenant, user_id, assistant_id) DO NOTHING"));
    ENGRAM_RETURN_IF_ERROR(
        st->Bind(1, scope.tenant).Bind(2, scope.user).Bind(3, scope.assistant).Bind(4, now).Run());
  } else {
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t id, NextSqliteScopeId(db));
    ENGRAM_ASSIGN_OR_RETURN(
        sql::Stmt * st,
        db->Prepare("INSERT INTO scopes(id, tenant, user_id, assistant_id, created_at) VALUES(?,?,?,?,?)"));
    ENGRAM_RETURN_IF_ERROR(
        st->Bind(1, id).Bind(2, scope.tenant).Bind(3, scope.user).Bind(4, scope.assistant).Bind(5, now).Run());
    return id;
  }
  ENGRAM_ASSIGN_OR_RETURN(found, FindScopeId(db, scope));
  if (!found) return Status::Internal("scope row missing after insert");
  return *found;
}

Result<std::optional<ScopeRow>> FindScope(sql::Db* db, const Scope& scope) {
  static const std::string kSql = std::string(kScopeCols) + "WHERE tenant = ? AND user_id = ? AND assistant_id = ?";
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * q, db->Prepare(kSql));
  q->Bind(1, scope.tenant).Bind(2, scope.user).Bind(3, scope.assistant);
  ENGRAM_ASSIGN_OR_RETURN(bool row, q->Step());
  std::optional<ScopeRow> out;
  if (row) out = RowFrom(q);
  q->Reset();
  return out;
}

Result<ScopeRow> LoadScope(sql::Db* db, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * q, db->Prepare(std::string(kScopeCols) + "WHERE id = ?"));
  q->Bind(1, scope_id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, q->Step());
  if (!row) {
    q->Reset();
    return Status::NotFound("scope " + std::to_string(scope_id));
  }
  ScopeRow r = RowFrom(q);
  q->Reset();
  return r;
}

namespace {

// Every row a prepared scope query gives (its parameters bound).
Result<std::vector<ScopeRow>> AllRows(sql::Stmt* q) {
  std::vector<ScopeRow> out;
  ENGRAM_RETURN_IF_ERROR(sql::ForEachRow(q, [&](sql::Stmt* row) { out.push_back(RowFrom(row)); }));
  return out;
}

}  // namespace

Result<std::vector<ScopeRow>> ListScopes(sql::Db* db) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * q, db->Prepare(std::string(kScopeCols) + "ORDER BY id"));
  return AllRows(q);
}

Result<std::vector<ScopeRow>> ListTenantScopes(sql::Db* db, const std::string& tenant,
                                               const std::string& user) {
  // (By the unique index on tenant, user, assistant: a statement for one
  // user's scopes, as "user_id = ? OR ? = ''" is no index look-up.)
  static const std::string kTenant = std::string(kScopeCols) + "WHERE tenant = ? ORDER BY id";
  static const std::string kUser =
      std::string(kScopeCols) + "WHERE tenant = ? AND user_id = ? ORDER BY id";
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * q, db->Prepare(user.empty() ? kTenant : kUser));
  q->Bind(1, tenant);
  if (!user.empty()) q->Bind(2, user);
  return AllRows(q);
}

Result<TenantUserRows> ListTenantUsers(sql::Db* db, const std::string& tenant,
                                       const std::string& contains, const std::string& after,
                                       int limit) {
  const bool pg = db->dialect() == sql::Dialect::kPostgres;
  // Ids compared byte by byte ("C" collation; SQLite's BINARY), names folded
  // to ASCII lower case (SQLite's lower() without ICU).
  const std::string id = pg ? "user_id COLLATE \"C\"" : "user_id";
  const std::string match =
      pg ? "(?2 = '' OR strpos(translate(user_id, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', "
           "'abcdefghijklmnopqrstuvwxyz'), ?2) > 0)"
         : "(?2 = '' OR instr(lower(user_id), ?2) > 0)";
  const std::string users =
      "SELECT user_id FROM scopes WHERE tenant = ?1 AND user_id <> '-' AND " + match;
  TenantUserRows out;
  {
    ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                            db->Prepare("SELECT count(*) FROM (" + users + " GROUP BY user_id) u"));
    st->Bind(1, tenant);
    st->Bind(2, contains);
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (row) out.matched = st->Int(0);
    st->Reset();
  }
  // One user more than the page: whether more follow. (Grouped, not
  // DISTINCT: the page's users are then read in the index's order, up to
  // the limit, instead of every user after the cursor sorted.)
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT user_id, assistant_id FROM scopes WHERE tenant = ?1 AND user_id IN (" +
                  users + " AND " + id + " > ?3 GROUP BY user_id ORDER BY " + id +
                  " LIMIT ?4) ORDER BY " + id + ", id"));
  st->Bind(1, tenant);
  st->Bind(2, contains);
  st->Bind(3, after);
  st->Bind(4, static_cast<std::int64_t>(limit) + 1);
  // (The user beyond the page only says that more follow: its few scopes
  // are read and passed over.)
  ENGRAM_RETURN_IF_ERROR(sql::ForEachRow(st, [&](sql::Stmt* row) {
    if (out.more) return;
    std::string user = row->Text(0), assistant = row->Text(1);
    if (out.users.empty() || out.users.back().first != user) {
      if (static_cast<int>(out.users.size()) == limit) {
        out.more = true;
        return;
      }
      out.users.emplace_back(std::move(user), std::vector<std::string>{});
    }
    if (assistant != kNoScopeId) out.users.back().second.push_back(std::move(assistant));
  }));
  return out;
}

Status BumpDataVersion(sql::Db* db, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare("UPDATE scopes SET data_version = data_version + 1 WHERE id = ?"));
  return st->Bind(1, scope_id).Run();
}

Status BumpAllGenerations(sql::Db* db) {
  return db->Exec("UPDATE scopes SET generation = generation + 1, data_version = data_version + 1");
}

Status BumpGeneration(sql::Db* db, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("UPDATE scopes SET generation = generation + 1, data_version = data_version + 1 WHERE id = ?"));
  return st->Bind(1, scope_id).Run();
}

Result<std::optional<ScopeVersion>> GetScopeVersion(sql::Db* db, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT generation, data_version FROM scopes WHERE id = ?"));
  st->Bind(1, scope_id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::optional<ScopeVersion> out;
  if (row) out = ScopeVersion{st->Int(0), st->Int(1)};
  st->Reset();
  return out;
}

}  // namespace engram::store
