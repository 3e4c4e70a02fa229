#include "store/erase.hpp"

#include "store/embed_cache.hpp"

namespace engram::store {

namespace {

struct EraseStep {
  const char* table;
  const char* sql;  // ?1 = scope id, ?2 = its tenant; the same on both backends
};

// In dependency order: index rows and links before the rows they point at.
// Every statement names the tenant, so it stays on the tenant's shard of a
// distributed PostgreSQL (and uses its keys, which lead with tenant).
constexpr EraseStep kSteps[] = {
    {"turns_fts",
     "DELETE FROM turns_fts WHERE tenant = ?2 AND rowid IN (SELECT id FROM turns WHERE tenant = ?2 AND scope_id = ?1)"},
    {"segments_fts", "DELETE FROM segments_fts WHERE tenant = ?2 AND rowid IN "
                     "(SELECT id FROM segments WHERE tenant = ?2 AND scope_id = ?1)"},
    {"facts_fts",
     "DELETE FROM facts_fts WHERE tenant = ?2 AND rowid IN (SELECT id FROM facts WHERE tenant = ?2 AND scope_id = ?1)"},
    {"fact_entities", "DELETE FROM fact_entities WHERE tenant = ?2 AND fact_id IN "
                      "(SELECT id FROM facts WHERE tenant = ?2 AND scope_id = ?1)"},
    {"entities", "DELETE FROM entities WHERE tenant = ?2 AND scope_id = ?1"},
    {"fact_links", "DELETE FROM fact_links WHERE tenant = ?2 AND scope_id = ?1"},
    {"fact_history", "DELETE FROM fact_history WHERE tenant = ?2 AND scope_id = ?1"},
    {"fact_requests", "DELETE FROM fact_requests WHERE tenant = ?2 AND scope_id = ?1"},
    {"turn_requests", "DELETE FROM turn_requests WHERE tenant = ?2 AND scope_id = ?1"},
    {"turns", "UPDATE turns SET page_id = NULL WHERE tenant = ?2 AND scope_id = ?1"},
    {"pages", "DELETE FROM pages WHERE tenant = ?2 AND scope_id = ?1"},
    {"segments", "DELETE FROM segments WHERE tenant = ?2 AND scope_id = ?1"},
    {"turns", "DELETE FROM turns WHERE tenant = ?2 AND scope_id = ?1"},
    {"facts", "DELETE FROM facts WHERE tenant = ?2 AND scope_id = ?1"},
    {"profile_slots", "DELETE FROM profile_slots WHERE tenant = ?2 AND scope_id = ?1"},
    {"scope_terms", "DELETE FROM scope_terms WHERE tenant = ?2 AND scope_id = ?1"},
    {"jobs", "DELETE FROM jobs WHERE tenant = ?2 AND scope_id = ?1"},
    {"scopes", "DELETE FROM scopes WHERE tenant = ?2 AND id = ?1"},
};

}  // namespace

Status ForEachCachedText(sql::Db* db, std::int64_t scope_id, const std::function<void(const ScopeText&)>& sink) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT user_name, user_text, assistant_name, assistant_text, NULL FROM turns "
                  "WHERE scope_id = ?1 UNION ALL SELECT NULL, NULL, NULL, NULL, text FROM facts "
                  "WHERE scope_id = ?1"));
  st->Bind(1, scope_id);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    ScopeText t;
    t.is_fact = !st->IsNull(4);
    if (t.is_fact) {
      t.fact_text = st->Text(4);
    } else {
      t.user_name = st->Text(0);
      t.user_text = st->Text(1);
      t.assistant_name = st->Text(2);
      t.assistant_text = st->Text(3);
    }
    sink(t);
  }
  st->Reset();
  return Status::Ok();
}

Result<std::int64_t> EraseScope(sql::Db* db, std::int64_t scope_id, const std::vector<std::int64_t>& cache_hashes) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * owner, db->Prepare("SELECT tenant FROM scopes WHERE id = ?1"));
  owner->Bind(1, scope_id);
  ENGRAM_ASSIGN_OR_RETURN(bool found, owner->Step());
  const std::string tenant = found ? owner->Text(0) : std::string();
  owner->Reset();
  if (!found) return std::int64_t{0};  // gone already: nothing of it is left
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * count,
                          db->Prepare("SELECT count(*) FROM turns WHERE tenant = ?2 AND scope_id = ?1"));
  count->Bind(1, scope_id).Bind(2, tenant);
  ENGRAM_ASSIGN_OR_RETURN(bool row, count->Step());
  const std::int64_t turns = row ? count->Int(0) : 0;
  count->Reset();
  ENGRAM_RETURN_IF_ERROR(DeleteCachedEmbeddings(db, tenant, cache_hashes));
  for (const auto& step : kSteps) {
    ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(step.sql));
    ENGRAM_RETURN_IF_ERROR(st->Bind(1, scope_id).Bind(2, tenant).Run());
  }
  return turns;
}

std::vector<std::string> ErasedTables() {
  std::vector<std::string> out{"embed_cache"};
  for (const auto& step : kSteps) out.push_back(step.table);
  return out;
}

std::vector<std::string> KeptTables() {
  // meta: store settings; receipts, receipt_days: content-free lineage;
  // api_keys: per tenant, revoked separately.
  return {"meta", "receipts", "receipt_days", "api_keys"};
}

}  // namespace engram::store
