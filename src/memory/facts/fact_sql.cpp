#include "memory/facts/fact_sql.hpp"

#include "memory/facts/fact_store.hpp"

namespace engram::memory::facts {

void SqlCond::And(const SqlCond& other) {
  if (other.sql.empty()) return;
  sql = sql.empty() ? "(" + other.sql + ")" : sql + " AND (" + other.sql + ")";
  args.insert(args.end(), other.args.begin(), other.args.end());
}

void BindArgs(sql::Stmt* st, const std::vector<SqlArg>& args, int first) {
  int i = first;
  for (const auto& a : args) {
    switch (a.type) {
      case SqlArg::kInt: st->Bind(i, a.i); break;
      case SqlArg::kReal: st->Bind(i, a.d); break;
      case SqlArg::kText: st->Bind(i, a.s); break;
      case SqlArg::kNull: st->BindNull(i); break;
    }
    ++i;
  }
}

SqlCond ScopeCondition(const MemoryScope& s) {
  Scope row = RowScope(s);
  SqlCond c;
  if (!s.include_narrower) {
    c.sql =
        "f.scope_id = (SELECT id FROM scopes WHERE tenant = ? AND user_id = ? AND assistant_id = ?) "
        "AND f.user_id = ? AND f.agent_id = ? AND f.run_id = ?";
    c.args = {SqlArg::Text(row.tenant), SqlArg::Text(row.user), SqlArg::Text(row.assistant),
              SqlArg::Text(s.user),     SqlArg::Text(s.agent), SqlArg::Text(s.run)};
    return c;
  }
  // Narrower: the user id stays exact; an absent agent or run id matches any.
  c.sql = "f.scope_id IN (SELECT id FROM scopes WHERE tenant = ? AND user_id = ?) AND f.user_id = ?";
  c.args = {SqlArg::Text(row.tenant), SqlArg::Text(row.user), SqlArg::Text(s.user)};
  if (!s.agent.empty()) {
    c.sql += " AND f.agent_id = ?";
    c.args.push_back(SqlArg::Text(s.agent));
  }
  if (!s.run.empty()) {
    c.sql += " AND f.run_id = ?";
    c.args.push_back(SqlArg::Text(s.run));
  }
  return c;
}

SqlCond VisibleCondition(TimeMs now, bool include_expired) {
  SqlCond c;
  c.sql = "f.status = 'live'";
  if (!include_expired) {
    c.sql += " AND (f.expires_at IS NULL OR f.expires_at > ?)";
    c.args.push_back(SqlArg::Int(now));
  }
  return c;
}

}  // namespace engram::memory::facts
