// CachingEmbedder: a persistent embedding cache in front of a (non-builtin)
// embedder. Vectors live in the store's `embed_cache` table keyed by
// (tenant, inner->Name(), text::SignedContentHash(text)), so the same
// normalised text (signs kept: "C++" is not "C#") of one tenant is embedded
// once per model and store, across runs and processes. The cache is kept
// per tenant: a vector cached for one tenant's text is never served to
// another tenant (no cross-tenant sharing, and every cache row belongs to
// the tenant whose shard holds it in a distributed PostgreSQL). ForTenant()
// gives the embedder of one tenant's memory content; Embed() without a
// tenant is not cached at all.
//
// The cache holds vectors and 64-bit hashes only, never text. ForgetUser and
// memory purges delete the entries of the erased texts, within their tenant
// (see docs/ARCHITECTURE.md, "Erasure").
//
// The cache uses its own connection (and its own mutex), never the engine's
// writer, so it cannot deadlock with a caller that holds the writer mutex or
// a read transaction. A failure of the cache itself (a busy or broken table)
// never fails Embed: the vectors are then computed and returned uncached.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "models/embedder.hpp"
#include "store/db.hpp"

namespace engram {

class CachingEmbedder final : public Embedder {
 public:
  // Wraps `inner` (not null) with the cache of the store at `db_path`, whose
  // schema must already exist (store::EnsureSchema). ":memory:" gives a
  // private in-memory cache that lives as long as this object.
  [[nodiscard]] static Result<std::shared_ptr<CachingEmbedder>> Open(std::shared_ptr<Embedder> inner,
                                                                     const std::string& db_path);
  ~CachingEmbedder() override;

  std::string Name() const override { return inner_->Name(); }
  int Dimension() const override { return inner_->Dimension(); }
  bool IsBuiltin() const override { return inner_->IsBuiltin(); }

  // Without a tenant: the inner embedder's vectors, uncached (counted as
  // misses). Memory content goes through ForTenant.
  [[nodiscard]] Result<std::vector<Vector>> Embed(const std::vector<std::string>& texts) override;

  // The embedder of `tenant`'s memory content: one vector per text, in
  // order. The tenant's cached texts are answered from the table; the misses
  // (each distinct normalised text once) go to the inner embedder in ONE
  // call and are then stored, as the tenant's, in one small write
  // transaction. Texts whose normalised form is empty are never cached.
  // Errors are the inner embedder's. Thread-safe; the pointer stays valid as
  // long as this object (one small object per tenant seen).
  Embedder* ForTenant(const std::string& tenant);
  // The same, in one call.
  [[nodiscard]] Result<std::vector<Vector>> EmbedFor(const std::string& tenant, const std::vector<std::string>& texts);

  const std::shared_ptr<Embedder>& inner() const { return inner_; }
  // Texts answered from the cache / sent to the inner embedder since Open
  // (every tenant together).
  std::int64_t hits() const { return hits_.load(); }
  std::int64_t misses() const { return misses_.load(); }

 private:
  class TenantView;
  CachingEmbedder(std::shared_ptr<Embedder> inner, std::unique_ptr<sql::Db> db);
  // Looks every key of the tenant up; fills found[i] (true) and out[i]. Best effort.
  void Lookup(const std::string& tenant, const std::vector<std::int64_t>& keys, std::vector<Vector>& out,
              std::vector<bool>& found);
  // Stores the tenant's (key, vector) pairs in one transaction. Best effort.
  void Store(const std::string& tenant, const std::vector<std::int64_t>& keys, const std::vector<Vector>& vectors);

  std::shared_ptr<Embedder> inner_;
  std::mutex mu_;                // guards db_ and its statements
  std::unique_ptr<sql::Db> db_;  // the cache connection
  std::atomic<std::int64_t> hits_{0};
  std::atomic<std::int64_t> misses_{0};
  std::mutex views_mu_;  // guards views_
  std::map<std::string, std::unique_ptr<TenantView>> views_;
};

// The embedder of `tenant`'s memory content: `embedder`'s view for the tenant
// when it is a CachingEmbedder, else `embedder` itself.
Embedder* EmbedderForTenant(Embedder* embedder, const std::string& tenant);

}  // namespace engram
