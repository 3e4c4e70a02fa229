#include "store/facts_entities.hpp"

#include "store/schema.hpp"

namespace engram::store {

Status LinkFactEntities(sql::Db* db, std::int64_t scope_id, std::int64_t fact_id,
                        const std::vector<FactEntity>& entities) {
  if (entities.empty()) return Status::Ok();
  // The fact's tenant (its scope's), for every row written here.
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * owner, db->Prepare("SELECT tenant FROM facts WHERE id = ?"));
  owner->Bind(1, fact_id);
  ENGRAM_ASSIGN_OR_RETURN(bool found, owner->Step());
  const std::string tenant = found ? owner->Text(0) : std::string();
  owner->Reset();
  if (!found) return Status::Internal("fact row " + std::to_string(fact_id) + " missing for its entities");
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * ins, db->Prepare("INSERT INTO entities(scope_id, name, type, tenant) VALUES(?,?,?,?) "
                                   "ON CONFLICT" + TenantKey(db, "scope_id, name") + " DO NOTHING"));
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * id,
                          db->Prepare("SELECT id FROM entities WHERE tenant = ? AND scope_id = ? AND name = ?"));
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * link, db->Prepare("INSERT INTO fact_entities(fact_id, entity_id, relation, tenant) VALUES(?,?,?,?) "
                                    "ON CONFLICT DO NOTHING"));
  for (const auto& e : entities) {
    ENGRAM_RETURN_IF_ERROR(ins->Bind(1, scope_id).Bind(2, e.name).Bind(3, e.type).Bind(4, tenant).Run());
    id->Bind(1, tenant).Bind(2, scope_id).Bind(3, e.name);
    ENGRAM_ASSIGN_OR_RETURN(bool row, id->Step());
    const std::int64_t eid = row ? id->Int(0) : 0;
    id->Reset();
    if (eid == 0) return Status::Internal("entity row missing after insert");
    ENGRAM_RETURN_IF_ERROR(link->Bind(1, fact_id).Bind(2, eid).Bind(3, "mentions").Bind(4, tenant).Run());
  }
  return Status::Ok();
}

Status CopyFactEntities(sql::Db* db, std::int64_t from_fact_id, std::int64_t to_fact_id) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * copy, db->Prepare("INSERT INTO fact_entities(fact_id, entity_id, relation, tenant) "
                                    "SELECT ?, entity_id, relation, tenant FROM fact_entities WHERE fact_id = ? "
                                    "ON CONFLICT DO NOTHING"));
  return copy->Bind(1, to_fact_id).Bind(2, from_fact_id).Run();
}

Result<std::vector<EntityMatch>> FindEntityMatches(sql::Db* db, const FactSelector& selector,
                                                   const std::vector<std::string>& names, int limit) {
  std::vector<EntityMatch> out;
  if (names.empty()) return out;
  ENGRAM_ASSIGN_OR_RETURN(SqlCond c, FactCondition(db->dialect(), selector));
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) list += i ? ",?" : "?";
  // SQLite: CROSS JOIN fixes the join order (entities by name first);
  // PostgreSQL has no CROSS JOIN ... ON and plans the order itself.
  const char* join = db->dialect() == sql::Dialect::kPostgres ? " JOIN " : " CROSS JOIN ";
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(std::string("SELECT fe.fact_id, e.name FROM entities e") + join +
                  "fact_entities fe ON fe.entity_id = e.id AND fe.tenant = e.tenant" + join +
                  "facts f ON f.id = fe.fact_id AND f.tenant = fe.tenant WHERE e.name IN (" +
                  list + ") AND " + c.sql + " LIMIT " + std::to_string(limit)));
  std::vector<SqlArg> args;
  for (const auto& n : names) args.push_back(SqlArg::Text(n));
  args.insert(args.end(), c.args.begin(), c.args.end());
  BindArgs(st, args);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back(EntityMatch{st->Int(0), st->Text(1)});
  }
  st->Reset();
  return out;
}

Status InsertFactLink(sql::Db* db, std::int64_t scope_id, const std::string& from_memory,
                      const std::string& to_memory, const std::string& relation, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare("INSERT INTO fact_links(scope_id, from_memory, to_memory, relation, created_at, "
                                  "tenant) VALUES(?,?,?,?,?," + ScopeTenantSql(1) + ") ON CONFLICT DO NOTHING"));
  return st->Bind(1, scope_id).Bind(2, from_memory).Bind(3, to_memory).Bind(4, relation).Bind(5, now).Run();
}

}  // namespace engram::store
