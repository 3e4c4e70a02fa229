// The per-scope snapshots an engine keeps in memory (retrieval indexes, fact
// vectors), bounded by their estimated bytes and by a count: beyond either,
// the least recently used are dropped (never the one being put). Values are
// immutable and shared; the ones dropped or replaced are handed back in a
// `Freed` list, so the caller releases them after its lock. Not thread-safe:
// the owner guards it with its mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace engram {

template <class T>
class SnapshotLru {
 public:
  struct Entry {
    std::shared_ptr<const T> value;
    std::size_t bytes = 0;   // estimated when put, plus what Grow added
    std::uint64_t used = 0;  // the tick of its last use
  };
  using Freed = std::vector<std::shared_ptr<const T>>;

  // The entry of `id` (nullptr when none); valid until the next change.
  Entry* Find(std::int64_t id) {
    auto it = entries_.find(id);
    return it == entries_.end() ? nullptr : &it->second;
  }
  // A new use tick (the most recent).
  std::uint64_t Tick() { return ++tick_; }
  void Use(Entry& e) { e.used = Tick(); }

  // Sets `id`'s value, then drops the least recently used others while the
  // total passes `budget` bytes or the count passes `max_count`.
  void Put(std::int64_t id, std::shared_ptr<const T> value, std::size_t bytes, std::uint64_t used,
           std::size_t budget, std::size_t max_count, Freed& freed) {
    Entry& e = entries_[id];
    bytes_ -= e.bytes;
    freed.push_back(std::move(e.value));
    e = Entry{std::move(value), bytes, used};
    bytes_ += bytes;
    Trim(id, budget, max_count, freed);
  }
  // Counts `more` bytes for `id`'s entry, which grew in place, then drops
  // the least recently used others as Put does.
  void Grow(std::int64_t id, std::size_t more, std::size_t budget, std::size_t max_count, Freed& freed) {
    Entry* e = Find(id);
    if (e == nullptr) return;
    e->bytes += more;
    bytes_ += more;
    Trim(id, budget, max_count, freed);
  }
  void Drop(std::int64_t id, Freed& freed) {
    auto it = entries_.find(id);
    if (it != entries_.end()) Erase(it, freed);
  }
  void Clear(Freed& freed) {
    while (!entries_.empty()) Erase(entries_.begin(), freed);
  }
  std::vector<std::int64_t> Ids() const {
    std::vector<std::int64_t> out;
    for (const auto& entry : entries_) out.push_back(entry.first);
    return out;
  }

  std::size_t size() const { return entries_.size(); }
  std::size_t bytes() const { return bytes_; }
  std::int64_t evictions() const { return evictions_; }

 private:
  // Drops the least recently used entries other than `keep` while the total
  // passes `budget` bytes or the count `max_count`.
  void Trim(std::int64_t keep, std::size_t budget, std::size_t max_count, Freed& freed) {
    while ((bytes_ > budget || entries_.size() > max_count) && entries_.size() > 1) {
      auto victim = entries_.end();
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->first != keep && (victim == entries_.end() || it->second.used < victim->second.used)) victim = it;
      }
      if (victim == entries_.end()) return;
      Erase(victim, freed);
      ++evictions_;
    }
  }
  void Erase(typename std::map<std::int64_t, Entry>::iterator it, Freed& freed) {
    bytes_ -= it->second.bytes;
    freed.push_back(std::move(it->second.value));
    entries_.erase(it);
  }

  std::map<std::int64_t, Entry> entries_;
  std::size_t bytes_ = 0;
  std::uint64_t tick_ = 0;
  std::int64_t evictions_ = 0;
};

}  // namespace engram
