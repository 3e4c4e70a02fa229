#include "core/shared_list.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace engram {
namespace {

std::vector<int> Items(const SharedList<int>& list) { return {list.begin(), list.end()}; }

TEST(SharedList, StartsEmptyAndAppends) {
  SharedList<int> list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.capacity(), 0u);
  EXPECT_EQ(list.begin(), list.end());
  for (int i = 0; i < 100; ++i) list.push_back(i);
  ASSERT_EQ(list.size(), 100u);
  EXPECT_EQ(list.back(), 99);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(list[static_cast<std::size_t>(i)], i);
  EXPECT_GE(list.capacity(), 100u);
  list.clear();
  EXPECT_TRUE(list.empty());
}

// A copy shares the elements: the first copy to append after the shared
// length writes in place, a later one moves to a buffer of its own; each
// sees its own elements, and the list they came from is unchanged.
TEST(SharedList, CopiesShareAndEachSeesItsOwnAppends) {
  SharedList<int> base;
  base.reserve(8);
  for (int i = 0; i < 4; ++i) base.push_back(i);
  SharedList<int> first = base, second = base;
  EXPECT_EQ(first.data(), base.data());  // shared, not copied
  first.push_back(10);                   // in place: the buffer has room
  EXPECT_EQ(first.data(), base.data());
  second.push_back(20);  // the slot is first's: second moves
  EXPECT_NE(second.data(), base.data());
  SharedList<int> third = first;
  third.push_back(30);  // after first's element, in place
  EXPECT_EQ(third.data(), base.data());
  EXPECT_EQ(Items(base), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(Items(first), (std::vector<int>{0, 1, 2, 3, 10}));
  EXPECT_EQ(Items(second), (std::vector<int>{0, 1, 2, 3, 20}));
  EXPECT_EQ(Items(third), (std::vector<int>{0, 1, 2, 3, 10, 30}));
  // Growing past the room moves that copy only.
  for (int i = 0; i < 50; ++i) first.push_back(100 + i);
  EXPECT_EQ(first.size(), 55u);
  EXPECT_EQ(Items(third), (std::vector<int>{0, 1, 2, 3, 10, 30}));
  EXPECT_EQ(Items(base), (std::vector<int>{0, 1, 2, 3}));
  // reserve keeps the elements.
  second.reserve(1000);
  EXPECT_GE(second.capacity(), 1000u);
  EXPECT_EQ(Items(second), (std::vector<int>{0, 1, 2, 3, 20}));
}

// Copies appending from threads at once, as snapshot updates made from one
// snapshot would (TSan runs it: "Snapshot" is in its name), while a reader
// reads the shared one.
TEST(SharedList, SnapshotCopiesAppendingAtOnce) {
  SharedList<int> base;
  base.reserve(64);
  for (int i = 0; i < 8; ++i) base.push_back(i);
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop.load()) {
      int sum = 0;
      for (const int x : base) sum += x;
      EXPECT_EQ(sum, 28);
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int round = 0; round < 50; ++round) {
        SharedList<int> copy = base;
        for (int k = 0; k < 3; ++k) copy.push_back(1000 * w + k);
        ASSERT_EQ(copy.size(), 11u);
        for (int i = 0; i < 8; ++i) EXPECT_EQ(copy[static_cast<std::size_t>(i)], i);
        for (int k = 0; k < 3; ++k) EXPECT_EQ(copy[static_cast<std::size_t>(8 + k)], 1000 * w + k);
      }
    });
  }
  for (auto& t : writers) t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(base.size(), 8u);
}

}  // namespace
}  // namespace engram
