// Retrieval snapshots built incrementally (from the previous snapshot of the
// scope, after more turns were promoted) answer exactly as snapshots built
// from scratch; after an erasure nothing of the erased content comes back.
#include <gtest/gtest.h>

#include "engram/engine.hpp"
#include "retrieval/scope_index.hpp"
#include "store/db.hpp"
#include "store/scopes.hpp"
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

// A snapshot updated after a promotion shares the unchanged chunks of its
// turns and the posting lists it did not extend with the previous snapshot,
// and equals a snapshot built from scratch.
TEST(Snapshot, AnUpdateSharesTheUnchangedChunks) {
  testing::TempDir dir;
  EngineOptions o;
  o.db_path = testing::StoreAt(dir.File("e.db"));
  o.mtm_capacity = 100000;  // nothing archived: old pages keep their tier
  auto opened = Engine::Open(o);
  ASSERT_TRUE(opened.ok());
  Engine& e = **opened;
  const Scope s{"default", "ana", "a"};
  const auto turns = testing::SyntheticDialogue(1200);
  ASSERT_TRUE(e.AddTurns(s, std::vector<TurnInput>(turns.begin(), turns.begin() + 1100)).ok());
  ASSERT_TRUE(e.Maintain(nullptr).ok());

  sql::OpenOptions ro;
  ro.read_only = true;
  ro.create = false;
  auto db = sql::Db::Open(o.db_path, ro);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto load = [&](const retrieval::ScopeIndex* previous) -> std::shared_ptr<const retrieval::ScopeIndex> {
    auto txn = sql::ReadTxn::Begin(db->get());
    EXPECT_TRUE(txn.ok());
    auto row = store::FindScope(db->get(), s);
    EXPECT_TRUE(row.ok() && row->has_value());
    if (!row.ok() || !row->has_value()) return nullptr;
    auto idx = retrieval::LoadScopeIndex(db->get(), (*row)->id, (*row)->generation, (*row)->data_version, previous,
                                         false);
    EXPECT_TRUE(idx.ok()) << idx.status().ToString();
    return idx.ok() ? *idx : nullptr;
  };
  auto before = load(nullptr);
  ASSERT_NE(before, nullptr);
  ASSERT_GT(before->entries.size(), retrieval::EntryList::kChunk);

  ASSERT_TRUE(e.AddTurns(s, std::vector<TurnInput>(turns.begin() + 1100, turns.end())).ok());
  ASSERT_TRUE(e.Maintain(nullptr).ok());
  auto updated = load(before.get());
  auto full = load(nullptr);
  ASSERT_NE(updated, nullptr);
  ASSERT_NE(full, nullptr);
  ASSERT_GT(updated->entries.size(), before->entries.size());
  EXPECT_GE(updated->entries.SharedChunks(before->entries), 1u);  // the first chunk is not copied
  EXPECT_EQ(full->entries.SharedChunks(before->entries), 0u);

  ASSERT_EQ(updated->entries.size(), full->entries.size());
  for (std::size_t i = 0; i < full->entries.size(); ++i) {
    const auto& a = updated->entries[i];
    const auto& b = full->entries[i];
    ASSERT_EQ(a.page_id, b.page_id);
    EXPECT_EQ(MessageLine(a, 0), MessageLine(b, 0));
    EXPECT_EQ(MessageLine(a, 1), MessageLine(b, 1));
    EXPECT_EQ(a.tier, b.tier);
    EXPECT_EQ(a.docs[0], b.docs[0]);
    EXPECT_EQ(a.docs[1], b.docs[1]);
  }
  ASSERT_EQ(updated->messages.size(), full->messages.size());
  EXPECT_EQ(updated->messages.TotalLength(), full->messages.TotalLength());
  for (const char* word : {"cello", "hike", "japan", "nurs", "vienna", "ana"}) {
    EXPECT_EQ(updated->messages.Df(word), full->messages.Df(word)) << word;
    EXPECT_LE(before->messages.Df(word), updated->messages.Df(word)) << word;
  }
  for (std::size_t d = 0; d < full->message_docs.size(); ++d) {
    EXPECT_EQ(updated->message_docs[d].entry, full->message_docs[d].entry);
    EXPECT_EQ(updated->message_docs[d].time, full->message_docs[d].time);
  }
  for (std::int64_t t = 0; t < 1300; ++t) EXPECT_EQ(updated->turn_page.count(t), full->turn_page.count(t)) << t;
}

}  // namespace
}  // namespace engram
