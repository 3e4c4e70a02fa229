// OpenAiEmbedder: the Embedder seam over an OpenAI-compatible /embeddings
// endpoint, with a bounded in-memory LRU so one process never embeds the same
// text twice while it is cached.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/embedder.hpp"
#include "models/openai/openai_client.hpp"

namespace engram {

class OpenAiEmbedder final : public Embedder {
 public:
  static constexpr std::size_t kDefaultCacheEntries = 2048;

  // An embedder whose dimension is learnt by Probe() (recommended: Create)
  // or by the first reply. `client` must not be null. cache_entries = 0
  // disables the cache.
  explicit OpenAiEmbedder(std::shared_ptr<OpenAiClient> client,
                          std::size_t cache_entries = kDefaultCacheEntries);

  // Constructs and probes: one short embedding request, so Dimension() is
  // known before the engine compares it with the store. Errors are the
  // client's (kUnavailable when the endpoint fails).
  [[nodiscard]] static Result<std::shared_ptr<OpenAiEmbedder>> Create(
      std::shared_ptr<OpenAiClient> client, std::size_t cache_entries = kDefaultCacheEntries);

  // Embeds one short text to learn the dimension. kUnavailable when the
  // endpoint fails or its dimension differs from the one already known.
  [[nodiscard]] Status Probe();

  // "openai:" + the embedding model name.
  std::string Name() const override;
  // 0 until the first successful probe or reply.
  int Dimension() const override { return dimension_.load(); }
  bool IsBuiltin() const override { return false; }

  // One L2-normalised vector per text, in order; an empty text gives a zero
  // vector without a request. Cached texts are not sent again; identical
  // texts in one call are sent once. A reply whose dimension differs from the
  // known one is kUnavailable. Thread-safe.
  [[nodiscard]] Result<std::vector<Vector>> Embed(const std::vector<std::string>& texts) override;

  // Texts answered from the cache since construction.
  std::int64_t cache_hits() const { return cache_hits_.load(); }
  std::size_t cache_size() const;

 private:
  struct Key {
    std::uint64_t lo = 0, hi = 0;
    bool operator==(const Key& o) const { return lo == o.lo && hi == o.hi; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const { return static_cast<std::size_t>(k.lo ^ (k.hi * 0x9E3779B97F4A7C15ull)); }
  };
  static Key KeyOf(const std::string& text);  // 128-bit xxh3 of the exact text
  bool Lookup(const Key& key, Vector& out);
  void Insert(const Key& key, const Vector& v);
  // Records the dimension of a reply; false when it contradicts the known one.
  bool AcceptDimension(int dim);

  std::shared_ptr<OpenAiClient> client_;
  std::atomic<int> dimension_{0};
  std::atomic<std::int64_t> cache_hits_{0};

  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::list<std::pair<Key, Vector>> lru_;  // most recent first; guarded by mu_
  std::unordered_map<Key, std::list<std::pair<Key, Vector>>::iterator, KeyHash> index_;  // guarded by mu_
};

}  // namespace engram
