// The STM turns a retrieval ranks, indexed for ranking, cached per scope.
// STM changes only when turns are admitted (next_seq and stm_count move) or
// promoted (data_version moves) or erased (generation moves), so while those
// four are the same, the turns and their message index are the same and a
// retrieval needs neither a statement nor tokenising for them. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "engram/types.hpp"
#include "retrieval/ranking.hpp"

namespace engram::retrieval {

// STM turns (oldest first) and their messages indexed (no vectors).
struct StmSnapshot {
  std::vector<Turn> turns;
  StmMessages messages;
  // The newest turns as "recent conversation" items of the context (made
  // once per STM state instead of per retrieval).
  std::vector<RetrievedItem> recent;
};

class StmCache {
 public:
  struct Key {
    std::int64_t generation = 0;
    std::int64_t data_version = 0;
    std::int64_t next_seq = 0;
    std::int64_t stm_count = 0;
    bool operator==(const Key&) const = default;
  };
  // The cached STM of the scope at `key`, or null. `epoch` receives the
  // cache's epoch, to hand to Put.
  std::shared_ptr<const StmSnapshot> Find(std::int64_t scope_id, const Key& key,
                                          std::uint64_t* epoch) const;
  // Caches `stm` unless an erasure dropped entries since `epoch` (it may hold
  // erased turns). Bounded: the cache empties itself when it holds too many
  // scopes.
  void Put(std::int64_t scope_id, const Key& key, std::shared_ptr<const StmSnapshot> stm,
           std::uint64_t epoch);
  // After an erasure: forgets these scopes.
  void Drop(const std::vector<std::int64_t>& scope_ids);

 private:
  static constexpr std::size_t kMaxScopes = 1024;
  mutable std::mutex mu_;
  std::uint64_t epoch_ = 0;
  std::unordered_map<std::int64_t, std::pair<Key, std::shared_ptr<const StmSnapshot>>> entries_;
};

}  // namespace engram::retrieval
