// The bounded cache of per-scope snapshots: least recently used first out,
// never the entry being put or grown.
#include "engine/snapshot_lru.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace engram {
namespace {

using Lru = SnapshotLru<int>;

void Put(Lru& lru, std::int64_t id, std::size_t bytes, std::size_t budget, std::size_t max_count, Lru::Freed& freed) {
  lru.Put(id, std::make_shared<const int>(static_cast<int>(id)), bytes, lru.Tick(), budget, max_count, freed);
}

// Three entries of 100 bytes (1 the least recently used), filling a budget of 300.
void PutThree(Lru& lru, Lru::Freed& freed) {
  for (std::int64_t id = 1; id <= 3; ++id) Put(lru, id, 100, 300, 10, freed);
}

TEST(SnapshotLru, ThePutDropsTheLeastRecentlyUsedBeyondItsBounds) {
  Lru lru;
  Lru::Freed freed;
  PutThree(lru, freed);
  EXPECT_EQ(lru.bytes(), 300u);
  lru.Use(*lru.Find(1));  // 2 is now the least recently used
  Put(lru, 4, 100, 300, 10, freed);
  EXPECT_EQ(lru.Find(2), nullptr);
  EXPECT_NE(lru.Find(1), nullptr);
  EXPECT_EQ(lru.bytes(), 300u);
  EXPECT_EQ(lru.evictions(), 1);
  // The count bound too; and an entry over the whole budget alone stays.
  Put(lru, 5, 10, 1000, 2, freed);
  EXPECT_EQ(lru.size(), 2u);
  Put(lru, 6, 5000, 1000, 10, freed);
  EXPECT_EQ(lru.size(), 1u);
  EXPECT_NE(lru.Find(6), nullptr);
}

TEST(SnapshotLru, AnEntryThatGrowsInPlaceDropsOthersBeyondTheBudget) {
  Lru lru;
  Lru::Freed freed;
  PutThree(lru, freed);
  lru.Grow(3, 150, 300, 10, freed);  // 450 bytes: 1 (the least recent) goes, then 2
  EXPECT_EQ(lru.Find(1), nullptr);
  EXPECT_EQ(lru.Find(2), nullptr);
  ASSERT_NE(lru.Find(3), nullptr);
  EXPECT_EQ(lru.Find(3)->bytes, 250u);
  EXPECT_EQ(lru.bytes(), 250u);
  EXPECT_EQ(lru.evictions(), 2);
  lru.Grow(42, 10, 300, 10, freed);  // not cached: nothing
  EXPECT_EQ(lru.bytes(), 250u);
  lru.Grow(3, 1000, 300, 10, freed);  // alone over the budget: it stays
  EXPECT_EQ(lru.size(), 1u);
  EXPECT_EQ(lru.bytes(), 1250u);
}

}  // namespace
}  // namespace engram
