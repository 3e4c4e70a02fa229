// Retrieval snapshots built incrementally (from the previous snapshot of the
// scope, after more turns were promoted) answer exactly as snapshots built
// from scratch; after an erasure nothing of the erased content comes back.
#include <gtest/gtest.h>

#include "engram/engine.hpp"
#include "testing/dialogue.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

const std::vector<std::string> kQueries = {"trip to Japan with the cello", "what did I cook for dinner?",
                                           "When did the user start running?", "work deadline project",
                                           "the assistant recommended a book"};

std::vector<std::string> Answers(Engine& e, const Scope& s) {
  std::vector<std::string> out;
  RetrieveOptions o;
  o.budget_tokens = 1500;
  for (const auto& q : kQueries) {
    auto r = e.Retrieve(s, q, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) continue;
    std::string ranked;
    for (const auto& i : r->ranked) ranked += std::to_string(i.id) + ":" + std::to_string(i.score) + ":" + TierName(i.tier) + " ";
    out.push_back(r->context + "\n" + ranked);
  }
  return out;
}

TEST(Snapshot, IncrementalBuildsAnswerLikeFullBuilds) {
  testing::TempDir dir;
  EngineOptions o;
  o.db_path = testing::StoreAt(dir.File("e.db"));
  o.mtm_capacity = 3;  // segments get archived as pages arrive: old pages change tier
  auto first = Engine::Open(o);
  ASSERT_TRUE(first.ok());
  Engine& e = **first;
  const Scope s{"default", "ana", "a"};
  const auto turns = testing::SyntheticDialogue(160);
  for (std::size_t done = 0; done < turns.size(); done += 40) {
    std::vector<TurnInput> batch(turns.begin() + static_cast<std::ptrdiff_t>(done),
                                 turns.begin() + static_cast<std::ptrdiff_t>(done + 40));
    ASSERT_TRUE(e.AddTurns(s, batch).ok());
    ASSERT_TRUE(e.Maintain(nullptr).ok());
    const auto incremental = Answers(e, s);  // from the previous round's snapshot after the first round
    auto fresh = Engine::Open(o);            // no cache: built from scratch
    ASSERT_TRUE(fresh.ok());
    const auto full = Answers(**fresh, s);
    ASSERT_EQ(incremental.size(), full.size());
    for (std::size_t i = 0; i < full.size(); ++i) EXPECT_EQ(incremental[i], full[i]) << "round " << done << ", " << kQueries[i];
  }
  auto stats = e.GetStats(&s);
  ASSERT_TRUE(stats.ok());
  EXPECT_GT(stats->archived_pages, 0);  // the tier change was exercised

  // Forgetting the user, then a new dialogue in the same scope: nothing of the
  // old one, although the engine had a snapshot of it.
  ASSERT_TRUE(e.ForgetUser("default", "ana").ok());
  std::vector<TurnInput> fresh_turns(20, TurnInput{"I now collect vintage maps", "Maps are wonderful", {}, "", "", "", ""});
  ASSERT_TRUE(e.AddTurns(s, fresh_turns).ok());
  ASSERT_TRUE(e.Maintain(nullptr).ok());
  for (const auto& q : kQueries) {
    auto r = e.Retrieve(s, q, {});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->context.find("cello"), std::string::npos) << r->context;
  }
}

// The indexed STM turns are cached between retrievals (retrieval/stm_cache.hpp):
// a turn admitted after a retrieval is found by the next one, and a
// promotion moves turns out of the cached STM.
TEST(Snapshot, CachedStmFollowsAdmissionsAndPromotions) {
  testing::TempDir dir;
  EngineOptions o;
  o.db_path = testing::StoreAt(dir.File("e.db"));
  auto opened = Engine::Open(o);
  ASSERT_TRUE(opened.ok());
  Engine& e = **opened;
  const Scope s{"default", "ana", "a"};
  ASSERT_TRUE(e.AddTurns(s, {TurnInput{"I walked the dog", "Nice walk", {}, "", "", "", ""}}).ok());
  auto before = e.Retrieve(s, "violin lessons", {});
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->context.find("violin"), std::string::npos);
  ASSERT_TRUE(e.AddTurns(s, {TurnInput{"I started violin lessons", "Which teacher?", {}, "", "", "", ""}}).ok());
  auto after = e.Retrieve(s, "violin lessons", {});
  ASSERT_TRUE(after.ok());
  EXPECT_NE(after->context.find("violin"), std::string::npos) << after->context;
  std::vector<std::int64_t> stm_ids;
  for (const auto& item : after->ranked) {
    if (item.tier == Tier::kStm) stm_ids.push_back(item.turn_id);
  }
  EXPECT_FALSE(stm_ids.empty());
  // Enough turns to promote the first ones: they leave STM for pages.
  const auto turns = testing::SyntheticDialogue(40);
  ASSERT_TRUE(e.AddTurns(s, turns).ok());
  ASSERT_TRUE(e.Maintain(nullptr).ok());
  auto promoted = e.Retrieve(s, "violin lessons", {});
  ASSERT_TRUE(promoted.ok());
  bool found = false;
  for (const auto& item : promoted->ranked) {
    if (item.turn_id == stm_ids.front()) {
      found = true;
      EXPECT_NE(item.tier, Tier::kStm);
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace engram
