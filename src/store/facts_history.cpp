#include "store/facts_history.hpp"

#include "store/schema.hpp"

namespace engram::store {

Status InsertFactHistory(sql::Db* db, const FactHistoryRow& h) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO fact_history(scope_id, memory_id, fact_id, version, event, old_text, "
                  "new_text, actor, role, at, op_id, tenant) VALUES(?,?,?,?,?,?,?,?,?,?,?," + ScopeTenantSql(1) +
                  ")"));
  st->Bind(1, h.scope_id).Bind(2, h.memory_id).Bind(3, h.fact_id).Bind(4, h.version).Bind(5, h.event);
  if (h.old_text) st->Bind(6, *h.old_text); else st->BindNull(6);
  if (h.new_text) st->Bind(7, *h.new_text); else st->BindNull(7);
  return st->Bind(8, h.actor).Bind(9, h.role).Bind(10, h.at).Bind(11, h.op_id).Run();
}

Result<std::vector<FactHistoryRow>> ListFactHistory(sql::Db* db, const std::string& memory_id) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare("SELECT version, event, old_text, new_text, actor, role, at, scope_id, fact_id "
                                  "FROM fact_history WHERE memory_id = ? ORDER BY id"));
  st->Bind(1, memory_id);
  std::vector<FactHistoryRow> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool r, st->Step());
    if (!r) break;
    FactHistoryRow e;
    e.memory_id = memory_id;
    e.version = st->Int(0);
    e.event = st->Text(1);
    if (!st->IsNull(2)) e.old_text = st->Text(2);
    if (!st->IsNull(3)) e.new_text = st->Text(3);
    e.actor = st->Text(4);
    e.role = st->Text(5);
    e.at = st->Int(6);
    e.scope_id = st->Int(7);
    e.fact_id = st->Int(8);
    out.push_back(std::move(e));
  }
  st->Reset();
  return out;
}

Result<std::optional<std::string>> FindFactRequest(sql::Db* db, const Scope& row, const FactIds& ids,
                                                   const std::string& key) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare("SELECT r.events FROM fact_requests r JOIN scopes s ON s.id = r.scope_id "
                                  "AND s.tenant = r.tenant WHERE r.tenant = ?1 AND s.tenant = ?1 AND "
                                  "s.user_id = ? AND s.assistant_id = ? AND "
                                  "r.user_id = ? AND r.agent_id = ? AND r.run_id = ? AND r.idempotency_key = ?"));
  st->Bind(1, row.tenant).Bind(2, row.user).Bind(3, row.assistant).Bind(4, ids.user).Bind(5, ids.agent)
      .Bind(6, ids.run).Bind(7, key);
  ENGRAM_ASSIGN_OR_RETURN(bool found, st->Step());
  std::optional<std::string> events;
  if (found) events = st->Text(0);
  st->Reset();
  return events;
}

Status InsertFactRequest(sql::Db* db, std::int64_t scope_id, const FactIds& ids, const std::string& key,
                         const std::string& events, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare("INSERT INTO fact_requests(scope_id, user_id, agent_id, run_id, "
                                  "idempotency_key, events, created_at, tenant) VALUES(?,?,?,?,?,?,?," +
                                  ScopeTenantSql(1) + ")"));
  return st->Bind(1, scope_id).Bind(2, ids.user).Bind(3, ids.agent).Bind(4, ids.run).Bind(5, key)
      .Bind(6, events).Bind(7, now).Run();
}

}  // namespace engram::store
