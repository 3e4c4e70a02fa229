// OpenAiEmbedder: normalisation, dimension tracking and the LRU cache.
#include "models/openai/openai_embedder.hpp"

#include <xxhash.h>

#include <exception>
#include <utility>

namespace engram {

OpenAiEmbedder::OpenAiEmbedder(std::shared_ptr<OpenAiClient> client, std::size_t cache_entries)
    : client_(std::move(client)), capacity_(cache_entries) {}

Result<std::shared_ptr<OpenAiEmbedder>> OpenAiEmbedder::Create(std::shared_ptr<OpenAiClient> client,
                                                               std::size_t cache_entries) {
  if (!client) return Status::InvalidArgument("embed endpoint: no client");
  try {
    auto embedder = std::make_shared<OpenAiEmbedder>(std::move(client), cache_entries);
    ENGRAM_RETURN_IF_ERROR(embedder->Probe());
    return embedder;
  } catch (const std::exception&) {
    return Status::Internal("embed endpoint: cannot create the embedder");
  }
}

std::string OpenAiEmbedder::Name() const { return "openai:" + client_->config().embed_model; }

bool OpenAiEmbedder::AcceptDimension(int dim) {
  if (dim <= 0) return false;
  int expected = 0;
  if (dimension_.compare_exchange_strong(expected, dim)) return true;
  return expected == dim;
}

Status OpenAiEmbedder::Probe() {
  Result<std::vector<Vector>> r = client_->Embed({"dimension probe"});
  if (!r.ok()) return r.status();
  if (r->size() != 1 || (*r)[0].empty()) return Status::Unavailable("embed endpoint: empty probe reply");
  const int dim = static_cast<int>((*r)[0].size());
  const int known = dimension_.load();
  if (!AcceptDimension(dim))
    return Status::Unavailable("embed endpoint: dimension changed from " + std::to_string(known) + " to " +
                               std::to_string(dim));
  return Status::Ok();
}

OpenAiEmbedder::Key OpenAiEmbedder::KeyOf(const std::string& text) {
  const XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  return Key{h.low64, h.high64};
}

bool OpenAiEmbedder::Lookup(const Key& key, Vector& out) {
  if (capacity_ == 0) return false;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  lru_.splice(lru_.begin(), lru_, it->second);  // now the most recent
  out = it->second->second;
  return true;
}

void OpenAiEmbedder::Insert(const Key& key, const Vector& v) {
  if (capacity_ == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.emplace_front(key, v);
  index_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

std::size_t OpenAiEmbedder::cache_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

Result<std::vector<Vector>> OpenAiEmbedder::Embed(const std::vector<std::string>& texts) {
  try {
    std::vector<Vector> out(texts.size());
    // Texts to send (each distinct text once) and the positions each one fills.
    std::vector<std::string> pending;
    std::vector<Key> pending_keys;
    std::vector<std::vector<std::size_t>> targets;
    std::unordered_map<Key, std::size_t, KeyHash> pending_index;
    bool any_empty = false;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if (texts[i].empty()) {
        any_empty = true;
        continue;
      }
      const Key key = KeyOf(texts[i]);
      if (Lookup(key, out[i])) {
        ++cache_hits_;
        continue;
      }
      auto [it, fresh] = pending_index.emplace(key, pending.size());
      if (fresh) {
        pending.push_back(texts[i]);
        pending_keys.push_back(key);
        targets.emplace_back();
      }
      targets[it->second].push_back(i);
    }
    if (!pending.empty()) {
      ENGRAM_ASSIGN_OR_RETURN(std::vector<Vector> vectors, client_->Embed(pending));
      if (vectors.size() != pending.size()) return Status::Unavailable("embed endpoint: wrong number of vectors");
      for (std::size_t p = 0; p < vectors.size(); ++p) {
        Vector& v = vectors[p];
        const int known = dimension_.load();
        if (!AcceptDimension(static_cast<int>(v.size())))
          return Status::Unavailable("embed endpoint: dimension changed from " + std::to_string(known) + " to " +
                                     std::to_string(v.size()));
        Normalize(v);
        Insert(pending_keys[p], v);
        for (std::size_t i : targets[p]) out[i] = v;
      }
    }
    if (any_empty) {
      if (dimension_.load() == 0) ENGRAM_RETURN_IF_ERROR(Probe());
      const Vector zero(static_cast<std::size_t>(dimension_.load()), 0.0f);
      for (std::size_t i = 0; i < texts.size(); ++i) {
        if (texts[i].empty()) out[i] = zero;
      }
    }
    return out;
  } catch (const std::exception&) {
    return Status::Internal("embed endpoint: unexpected failure");
  }
}

}  // namespace engram
