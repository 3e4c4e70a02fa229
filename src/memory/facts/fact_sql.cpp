#include "memory/facts/fact_sql.hpp"

#include <cstdio>

#include "memory/facts/fact_store.hpp"

namespace engram::memory::facts {

namespace {

std::string HashHex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

const char* const kFactColumns =
    "f.id, f.scope_id, f.memory_id, f.user_id, f.agent_id, f.run_id, f.kind, f.role, f.actor, "
    "f.attributed_to, f.text, f.norm_hash, f.embedding, f.metadata, f.source_pages, f.event_time, "
    "f.record_time, f.created_at, f.updated_at, f.expires_at, f.idempotency_key, f.version, f.status, "
    "f.degraded, (SELECT tenant FROM scopes WHERE id = f.scope_id)";

FactRow ReadRow(sql::Stmt* st, TimeMs now) {
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
  m.hash = m.status == "purged" ? std::string() : HashHex(r.norm_hash);
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
