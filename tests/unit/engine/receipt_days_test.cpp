// Engine::CountReceiptsByDay: receipts counted per day, scope and transition,
// the ones compacted into day counts included, one tenant (and user) only.
#include <gtest/gtest.h>

#include <map>

#include "core/clock.hpp"
#include "core/time.hpp"
#include "engram/engine.hpp"
#include "testing/dialogue.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

constexpr TimeMs kDay = 24ll * 3600 * 1000;

// Receipts admitted into STM per (day, compacted) for one query.
std::map<std::pair<std::int64_t, bool>, std::int64_t> Admitted(Engine& e, const ReceiptQuery& q) {
  auto counts = e.CountReceiptsByDay(q);
  EXPECT_TRUE(counts.ok()) << counts.status().ToString();
  std::map<std::pair<std::int64_t, bool>, std::int64_t> out;
  if (!counts.ok()) return out;
  std::int64_t last_day = -1;
  for (const auto& c : *counts) {
    EXPECT_GE(c.day, last_day) << "oldest day first";
    last_day = c.day;
    EXPECT_EQ(c.scope.tenant, q.scope.tenant);
    if (!q.scope.user.empty()) {
      EXPECT_EQ(c.scope.user, q.scope.user);
    }
    if (c.memory_kind == "turn" && c.from_tier == "input" && c.to_tier == "stm") out[{c.day, c.compacted}] += c.count;
  }
  return out;
}

TEST(ReceiptDays, CountsHeldAndCompactedReceiptsPerDayAndScope) {
  testing::TempDir dir;
  const TimeMs start = MakeTimeMs(2025, 3, 1);
  FakeClock clock{start};
  EngineOptions o;
  o.db_path = testing::StoreAt(dir.File("engram.db"));
  o.clock = &clock;
  auto opened = Engine::Open(o);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Engine& e = **opened;

  const Scope alice{"acme", "alice", "assistant"}, bob{"acme", "bob", "assistant"}, other{"globex", "alice", "assistant"};
  ASSERT_TRUE(e.AddTurns(alice, testing::SyntheticDialogue(12, start)).ok());
  ASSERT_TRUE(e.AddTurns(bob, testing::SyntheticDialogue(5, start)).ok());
  ASSERT_TRUE(e.AddTurns(other, testing::SyntheticDialogue(7, start)).ok());
  ASSERT_TRUE(e.Maintain(&alice).ok());
  clock.Advance(40 * kDay);
  ASSERT_TRUE(e.AddTurns(alice, testing::SyntheticDialogue(3, clock.NowMs())).ok());
  ASSERT_TRUE(e.CompactReceipts(30).ok());  // the first day's receipts become day counts

  const std::int64_t day0 = start / kDay, day40 = clock.NowMs() / kDay;
  ReceiptQuery tenant;
  tenant.scope = {"acme", "", ""};
  auto acme = Admitted(e, tenant);
  EXPECT_EQ((acme[{day0, true}]), 17);  // alice 12 + bob 5, compacted
  EXPECT_EQ((acme[{day0, false}]), 0);
  EXPECT_EQ((acme[{day40, false}]), 3);  // still held
  EXPECT_EQ(acme.size(), 3u);

  ReceiptQuery one = tenant;
  one.scope.user = "bob";
  auto b = Admitted(e, one);
  EXPECT_EQ((b[{day0, true}]), 5);
  EXPECT_EQ((b[{day40, false}]), 0);

  ReceiptQuery g;
  g.scope = {"globex", "", ""};
  EXPECT_EQ((Admitted(e, g)[{day0, true}]), 7);

  // A promotion that created a segment is told apart while its receipt is
  // held; compacted, it is not.
  auto all = e.CountReceiptsByDay(tenant);
  ASSERT_TRUE(all.ok());
  for (const auto& c : *all) {
    if (c.compacted) {
      EXPECT_FALSE(c.segment_created);
    }
  }

  ReceiptQuery limited = tenant;
  limited.limit = 1;
  auto first = e.CountReceiptsByDay(limited);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->size(), 1u);
  ReceiptQuery bad;
  EXPECT_EQ(e.CountReceiptsByDay(bad).status().code(), StatusCode::kInvalidArgument);  // no tenant
}

}  // namespace
}  // namespace engram
