// CachingEmbedder: a persistent embedding cache in front of a (non-builtin)
// embedder. Vectors live in the store's `embed_cache` table keyed by
// (inner->Name(), text::ContentHash(text)), so the same normalised text is
// embedded once per model and store, across runs and processes.
//
// The cache holds vectors and 64-bit hashes only, never text. It is not
// erased by ForgetUser (see docs/ARCHITECTURE.md, "Erasure").
//
// The cache uses its own SQLite connection (and its own mutex), never the
// engine's writer, so it cannot deadlock with a caller that holds the writer
// mutex or a read transaction. A failure of the cache itself (a busy or broken
// table) never fails Embed: the vectors are then computed and returned
// uncached.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "models/embedder.hpp"
#include "store/sqlite.hpp"

namespace engram {

class CachingEmbedder final : public Embedder {
 public:
  // Wraps `inner` (not null) with the cache of the store at `db_path`, whose
  // schema must already exist (store::EnsureSchema). ":memory:" gives a
  // private in-memory cache that lives as long as this object.
  [[nodiscard]] static Result<std::shared_ptr<CachingEmbedder>> Open(std::shared_ptr<Embedder> inner,
                                                                     const std::string& db_path);

  std::string Name() const override { return inner_->Name(); }
  int Dimension() const override { return inner_->Dimension(); }
  bool IsBuiltin() const override { return inner_->IsBuiltin(); }

  // One vector per text, in order. Cached texts are answered from the table;
  // the misses (each distinct normalised text once) go to the inner embedder
  // in ONE call and are then stored in one small write transaction. Texts
  // whose normalised form is empty are never cached. Errors are the inner
  // embedder's. Thread-safe.
  [[nodiscard]] Result<std::vector<Vector>> Embed(const std::vector<std::string>& texts) override;

  const std::shared_ptr<Embedder>& inner() const { return inner_; }
  // Texts answered from the cache / sent to the inner embedder since Open.
  std::int64_t hits() const { return hits_.load(); }
  std::int64_t misses() const { return misses_.load(); }

 private:
  CachingEmbedder(std::shared_ptr<Embedder> inner, std::unique_ptr<sql::Db> db)
      : inner_(std::move(inner)), db_(std::move(db)) {}
  // Looks every key up; fills found[i] (true) and out[i]. Best effort.
  void Lookup(const std::vector<std::int64_t>& keys, std::vector<Vector>& out,
              std::vector<bool>& found);
  // Stores (key, vector) pairs in one transaction. Best effort.
  void Store(const std::vector<std::int64_t>& keys, const std::vector<Vector>& vectors);

  std::shared_ptr<Embedder> inner_;
  std::mutex mu_;                // guards db_ and its statements
  std::unique_ptr<sql::Db> db_;  // the cache connection
  std::atomic<std::int64_t> hits_{0};
  std::atomic<std::int64_t> misses_{0};
};

}  // namespace engram
