#include "retrieval/stm_cache.hpp"

namespace engram::retrieval {

std::shared_ptr<const StmSnapshot> StmCache::Find(std::int64_t scope_id, const Key& key,
                                                  std::uint64_t* epoch) const {
  std::lock_guard<std::mutex> lock(mu_);
  *epoch = epoch_;
  auto it = entries_.find(scope_id);
  if (it == entries_.end() || !(it->second.first == key)) return nullptr;
  return it->second.second;
}

void StmCache::Put(std::int64_t scope_id, const Key& key, std::shared_ptr<const StmSnapshot> stm,
                   std::uint64_t epoch) {
  std::shared_ptr<const StmSnapshot> old;  // freed after the lock is released
  std::unordered_map<std::int64_t, std::pair<Key, std::shared_ptr<const StmSnapshot>>> cleared;
  std::lock_guard<std::mutex> lock(mu_);
  if (epoch != epoch_) return;
  if (entries_.size() >= kMaxScopes && !entries_.count(scope_id)) cleared.swap(entries_);
  auto& slot = entries_[scope_id];
  old = std::move(slot.second);
  slot = {key, std::move(stm)};
}

void StmCache::Drop(const std::vector<std::int64_t>& scope_ids) {
  std::vector<std::shared_ptr<const StmSnapshot>> dropped;
  std::lock_guard<std::mutex> lock(mu_);
  ++epoch_;
  for (auto id : scope_ids) {
    auto it = entries_.find(id);
    if (it == entries_.end()) continue;
    dropped.push_back(std::move(it->second.second));
    entries_.erase(it);
  }
}

}  // namespace engram::retrieval
