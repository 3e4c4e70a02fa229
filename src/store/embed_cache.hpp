// The embedding cache repository: one vector per (tenant, embedder name, hash
// of the normalised text) in `embed_cache` (engine/caching_embedder.hpp
// decides what is cached). Kept per tenant: a vector cached for one tenant's
// text is never served to another. Holds vectors and 64-bit hashes only,
// never text. Erasure of a scope's entries is store::EraseScope's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "store/db.hpp"

namespace engram::store {

struct CachedEmbedding {
  std::int64_t dim = 0;       // as recorded; the caller checks it against the vector
  std::vector<float> vector;  // as stored
};

// The tenant's cached entry of `model` for `text_hash`; nullopt when there is
// none. Fails when the store has no cache table.
Result<std::optional<CachedEmbedding>> FindCachedEmbedding(sql::Db* db, const std::string& tenant,
                                                           const std::string& model, std::int64_t text_hash);

// Stores (or replaces) the tenant's vector of `model` for `text_hash`, with
// its length as the dimension. REQUIRES: inside a write transaction.
Status PutCachedEmbedding(sql::Db* db, const std::string& tenant, const std::string& model, std::int64_t text_hash,
                          const std::vector<float>& vector);

// Removes the tenant's vectors (of every model) for each text hash (erasure
// of the texts); other tenants' entries stay. REQUIRES: inside a write transaction.
Status DeleteCachedEmbeddings(sql::Db* db, const std::string& tenant, const std::vector<std::int64_t>& text_hashes);

}  // namespace engram::store
