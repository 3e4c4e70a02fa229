#include "store/embed_cache.hpp"

namespace engram::store {

Result<std::optional<CachedEmbedding>> FindCachedEmbedding(sql::Db* db, const std::string& model,
                                                           std::int64_t text_hash) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT dim, vector FROM embed_cache WHERE model = ? AND text_hash = ?"));
  st->Bind(1, model).Bind(2, text_hash);
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

Status PutCachedEmbedding(sql::Db* db, const std::string& model, std::int64_t text_hash,
                          const std::vector<float>& vector) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO embed_cache(model, text_hash, dim, vector) VALUES(?,?,?,?) "
                  "ON CONFLICT(model, text_hash) DO UPDATE SET dim = excluded.dim, vector = excluded.vector"));
  return st->Bind(1, model)
      .Bind(2, text_hash)
      .Bind(3, static_cast<std::int64_t>(vector.size()))
      .BindBlob(4, vector.data(), static_cast<int>(vector.size() * sizeof(float)))
      .Run();
}

Status DeleteCachedEmbeddings(sql::Db* db, const std::vector<std::int64_t>& text_hashes) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("DELETE FROM embed_cache WHERE text_hash = ?1"));
  for (auto h : text_hashes) ENGRAM_RETURN_IF_ERROR(st->Bind(1, h).Run());
  return Status::Ok();
}

}  // namespace engram::store
