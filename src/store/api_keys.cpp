#include "store/api_keys.hpp"

#include "core/json_lists.hpp"

namespace engram::store {

namespace {

constexpr const char* kKeyCols = "id, tenant, users, role, name, created_at, revoked_at, expires_at, last_used_at";

ApiKeyRow KeyFrom(sql::Stmt* st) {
  ApiKeyRow k;
  k.id = st->Text(0);
  k.tenant = st->Text(1);
  k.users = json_lists::StringsFromJson(st->Text(2));  // a JSON array; [] = every user
  k.role = st->Text(3);
  k.name = st->Text(4);
  k.created_at = st->Int(5);
  if (!st->IsNull(6)) k.revoked_at = st->Int(6);
  if (!st->IsNull(7)) k.expires_at = st->Int(7);
  if (!st->IsNull(8)) k.last_used_at = st->Int(8);
  return k;
}

}  // namespace

Status InsertApiKey(sql::Db* db, const ApiKeyRow& key) {
  // A key is found by its id alone (before its tenant is known), so ids are
  // unique in the store, not only per tenant as the primary key (tenant, id)
  // of PostgreSQL says: the insert happens only when no key has the id.
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO api_keys(id, tenant, users, role, name, hash, created_at, expires_at) "
                  "SELECT ?1, ?2, ?3, ?4, ?5, ?6, CAST(?7 AS BIGINT), CAST(?8 AS BIGINT) "
                  "WHERE NOT EXISTS (SELECT 1 FROM api_keys WHERE id = ?1)"));
  if (key.expires_at) st->Bind(8, *key.expires_at);
  else st->BindNull(8);
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, key.id)
                             .Bind(2, key.tenant)
                             .Bind(3, json_lists::StringsToJson(key.users))
                             .Bind(4, key.role)
                             .Bind(5, key.name)
                             .Bind(6, key.hash)
                             .Bind(7, key.created_at)
                             .Run());
  if (db->Changes() != 1) return Status::AlreadyExists("api key " + key.id + " exists");
  return Status::Ok();
}

Result<std::optional<ApiKeyRow>> FindApiKey(sql::Db* db, const std::string& id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare(std::string("SELECT ") + kKeyCols + ", hash FROM api_keys WHERE id = ?"));
  st->Bind(1, id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::optional<ApiKeyRow> out;
  if (row) {
    out = KeyFrom(st);
    out->hash = st->Text(9);
  }
  st->Reset();
  return out;
}

Result<std::vector<ApiKeyRow>> ListApiKeys(sql::Db* db, const std::string& tenant) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(std::string("SELECT ") + kKeyCols +
                                                      " FROM api_keys WHERE ?1 = '' OR tenant = ?1 "
                                                      "ORDER BY created_at, id"));
  st->Bind(1, tenant);
  std::vector<ApiKeyRow> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back(KeyFrom(st));
  }
  st->Reset();
  return out;
}

Status TouchApiKey(sql::Db* db, const std::string& id, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("UPDATE api_keys SET last_used_at = ?1 WHERE id = ?2 AND "
                                                      "(last_used_at IS NULL OR last_used_at < ?1)"));
  return st->Bind(1, now).Bind(2, id).Run();
}

Result<bool> RevokeApiKey(sql::Db* db, const std::string& id, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?"));
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, now).Bind(2, id).Run());
  return db->Changes() > 0;
}

Result<std::int64_t> CountActiveApiKeys(sql::Db* db) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("SELECT count(*) FROM api_keys WHERE revoked_at IS NULL"));
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::int64_t n = row ? st->Int(0) : 0;
  st->Reset();
  return n;
}

}  // namespace engram::store
