#include "store/fact_lookup.hpp"

namespace engram::store {

Result<std::optional<FactIds>> LocateFact(sql::Db* db, const std::string& tenant, const std::string& memory_id,
                                          bool live_only) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT f.user_id, f.agent_id, f.run_id, f.status FROM facts f "
                  "WHERE f.tenant = ?1 AND f.memory_id = ?2 AND f.status <> 'superseded' "
                  "ORDER BY f.version DESC LIMIT 1"));
  st->Bind(1, tenant).Bind(2, memory_id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::optional<FactIds> out;
  if (row && (!live_only || st->Text(3) == "live")) out = FactIds{st->Text(0), st->Text(1), st->Text(2)};
  st->Reset();
  return out;
}

Result<std::vector<FactEntityRow>> ListFactEntities(sql::Db* db, const std::string& tenant) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("WITH live AS (SELECT f.user_id, f.agent_id, f.run_id, f.created_at, f.updated_at "
                  "FROM scopes s JOIN facts f ON f.tenant = s.tenant AND f.scope_id = s.id "
                  "WHERE s.tenant = ?1 AND f.status = 'live') "
                  "SELECT 'agent', agent_id, count(*), min(created_at), max(updated_at) FROM live "
                  "WHERE agent_id <> '' GROUP BY agent_id "
                  "UNION ALL SELECT 'run', run_id, count(*), min(created_at), max(updated_at) FROM live "
                  "WHERE run_id <> '' GROUP BY run_id "
                  "UNION ALL SELECT 'user', user_id, count(*), min(created_at), max(updated_at) FROM live "
                  "WHERE user_id <> '' GROUP BY user_id "
                  "ORDER BY 1, 2"));
  st->Bind(1, tenant);
  std::vector<FactEntityRow> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back(FactEntityRow{st->Text(0), st->Text(1), st->Int(2), st->Int(3), st->Int(4)});
  }
  return out;
}

}  // namespace engram::store
