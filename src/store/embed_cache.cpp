#include "store/embed_cache.hpp"

namespace engram::store {

Result<std::optional<CachedEmbedding>> FindCachedEmbedding(sql::Db* db, const std::string& tenant,
                                                           const std::string& model, std::int64_t text_hash) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT dim, vector FROM embed_cache WHERE tenant = ? AND model = ? AND text_hash = ?"));
  st->Bind(1, tenant).Bind(2, model).Bind(3, text_hash);
  auto row = st->Step();
  if (!row.ok()) {
    st->Reset();
    return row.status();
  }
  std::optional<CachedEmbedding> out;
  if (*row) out = CachedEmbedding{st->Int(0), st->Floats(1)};
  st->Reset();
  return out;
}

Status PutCachedEmbedding(sql::Db* db, const std::string& tenant, const std::string& model, std::int64_t text_hash,
                          const std::vector<float>& vector) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO embed_cache(tenant, model, text_hash, dim, vector) VALUES(?,?,?,?,?) "
                  "ON CONFLICT(tenant, model, text_hash) DO UPDATE SET dim = excluded.dim, vector = excluded.vector"));
  return st->Bind(1, tenant)
      .Bind(2, model)
      .Bind(3, text_hash)
      .Bind(4, static_cast<std::int64_t>(vector.size()))
      .BindBlob(5, vector.data(), static_cast<int>(vector.size() * sizeof(float)))
      .Run();
}

Status DeleteCachedEmbeddings(sql::Db* db, const std::string& tenant, const std::vector<std::int64_t>& text_hashes) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("DELETE FROM embed_cache WHERE tenant = ?1 AND text_hash = ?2"));
  for (auto h : text_hashes) ENGRAM_RETURN_IF_ERROR(st->Bind(1, tenant).Bind(2, h).Run());
  return Status::Ok();
}

}  // namespace engram::store
