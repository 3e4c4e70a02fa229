// One regression test per MemoryOS defect (brief: memoryos-facts.md, 1-12).
// Each fails on the defect it names.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>

#include "core/clock.hpp"
#include "engram/engine.hpp"
#include "memory/mtm.hpp"
#include "testing/dialogue.hpp"
#include "testing/fakes.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

using testing::FaultyMaintainer;
using testing::MaintainerFault;
using testing::SyntheticDialogue;
using testing::TempDir;

std::int64_t Count(const std::string& db_path, const std::string& sql) {
  return testing::CountStoreRows(db_path, sql);
}

class MemoryOsRegression : public ::testing::Test {
 protected:
  std::unique_ptr<Engine> Open(EngineOptions o = {}) {
    o.db_path = testing::StoreAt(path());
    if (!o.clock) o.clock = &clock_;
    auto e = Engine::Open(std::move(o));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  std::string path() const { return dir_.File("engram.db"); }
  // Every admitted turn is in exactly one tier.
  void ExpectConserved(std::int64_t admitted) {
    EXPECT_EQ(Count(path(), "SELECT count(*) FROM turns"), admitted);
    EXPECT_EQ(Count(path(), "SELECT count(*) FROM turns t WHERE t.page_id IS NOT NULL AND "
                            "NOT EXISTS (SELECT 1 FROM pages p WHERE p.id = t.page_id AND p.turn_id = t.id)"),
              0);
    EXPECT_EQ(Count(path(), "SELECT count(*) FROM pages"),
              Count(path(), "SELECT count(DISTINCT turn_id) FROM pages"));
    EXPECT_EQ(Count(path(), "SELECT count(*) FROM pages p JOIN turns t ON t.id = p.turn_id "
                            "WHERE t.page_id IS DISTINCT FROM p.id"),
              0);
  }
  TempDir dir_;
  FakeClock clock_{MakeTimeMs(2025, 3, 1)};
  Scope scope_{"default", "u1", "a1"};
};

// Defect 1: promotion popped the turn before model work; a bad reply lost it.
TEST_F(MemoryOsRegression, D01_FailedModelWorkLosesNoTurn) {
  auto m = std::make_shared<FaultyMaintainer>();
  m->fault = MaintainerFault::kUnavailable;
  EngineOptions o;
  o.maintainer = m;
  auto e = Open(o);
  ASSERT_TRUE(e->AddTurns(scope_, SyntheticDialogue(15)).ok());
  auto r = e->Maintain(&scope_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->jobs_failed, 1);
  auto st = e->GetStats(&scope_);
  EXPECT_EQ(st->stm_turns, 15);
  EXPECT_EQ(st->failed_jobs, 1);
  ExpectConserved(15);
  // A later good reply completes the job without duplicates.
  m->fault = MaintainerFault::kNone;
  ASSERT_TRUE(e->RetryFailedJobs().ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  st = e->GetStats(&scope_);
  EXPECT_EQ(st->stm_turns, 10);
  EXPECT_EQ(st->mtm_pages, 5);
  EXPECT_EQ(st->failed_jobs, 0);
  ExpectConserved(15);
}

// Defect 2: the provider's error sentinel was stored as answer, summary, profile.
TEST_F(MemoryOsRegression, D02_ProviderErrorIsNeverAdmitted) {
  auto m = std::make_shared<FaultyMaintainer>();
  m->fault = MaintainerFault::kUnavailable;
  EngineOptions o;
  o.maintainer = m;
  auto e = Open(o);
  ASSERT_TRUE(e->AddTurns(scope_, SyntheticDialogue(30)).ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  for (const char* q : {"SELECT count(*) FROM pages WHERE chain_summary LIKE '%Error%'",
                        "SELECT count(*) FROM segments WHERE summary LIKE '%Error%'",
                        "SELECT count(*) FROM profile_slots WHERE value LIKE '%Error%'",
                        "SELECT count(*) FROM facts WHERE text LIKE '%Error%'",
                        "SELECT count(*) FROM scopes WHERE chain_summary LIKE '%Error%'",
                        "SELECT count(*) FROM receipts WHERE outcome_receipt LIKE '%LLM%'"}) {
    EXPECT_EQ(Count(path(), q), 0) << q;
  }
}

// Defect 3: a malformed topic reply fell back to one fixed summary and merged
// every batch into a mega-session (or crashed after the pop).
TEST_F(MemoryOsRegression, D03_MalformedReplyFailsTheJobAndKeepsTheSource) {
  for (auto fault : {MaintainerFault::kWrongPageCount, MaintainerFault::kWrongSegments}) {
    TempDir dir;
    auto m = std::make_shared<FaultyMaintainer>();
    m->fault = fault;
    EngineOptions o;
    o.db_path = testing::StoreAt(dir.File("e.db"));
    o.maintainer = m;
    o.clock = &clock_;
    auto e = Engine::Open(o);
    ASSERT_TRUE(e.ok());
    ASSERT_TRUE((*e)->AddTurns(scope_, SyntheticDialogue(20)).ok());
    auto r = (*e)->Maintain(&scope_);
    ASSERT_TRUE(r.ok());
    auto st = (*e)->GetStats(&scope_);
    EXPECT_EQ(st->stm_turns, 20);
    EXPECT_EQ(st->mtm_segments, 0);
    EXPECT_EQ(st->failed_jobs, 1);
  }
}

// Defect 4: two themes inserted the same pages twice.
TEST_F(MemoryOsRegression, D04_EveryPageBelongsToExactlyOneSegment) {
  auto e = Open();
  ASSERT_TRUE(e->AddTurns(scope_, SyntheticDialogue(120)).ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  ExpectConserved(120);
  EXPECT_EQ(Count(path(), "SELECT count(*) FROM pages"), 110);
  EXPECT_EQ(Count(path(), "SELECT sum(page_count) FROM segments"), 110);
}

// Defect 5: segment summary, keywords and embedding froze at creation.
TEST_F(MemoryOsRegression, D05_SegmentsUpdateWhenPagesJoin) {
  EngineOptions o;
  o.stm_capacity = 1;
  o.promote_batch_max = 1;
  o.merge_threshold = 0.0;  // every page joins the first segment
  auto e = Open(o);
  ASSERT_TRUE(e->AddTurns(scope_, SyntheticDialogue(3)).ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  std::int64_t v1 = Count(path(), "SELECT version FROM segments");
  std::int64_t pages1 = Count(path(), "SELECT page_count FROM segments");
  ASSERT_TRUE(e->AddTurns(scope_, SyntheticDialogue(6)).ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  EXPECT_EQ(Count(path(), "SELECT count(*) FROM segments"), 1);
  EXPECT_GT(Count(path(), "SELECT version FROM segments"), v1);
  EXPECT_GT(Count(path(), "SELECT page_count FROM segments"), pages1);
  // The keywords now mention later topics too (the 4th line is about Japan).
  EXPECT_EQ(Count(path(), "SELECT count(*) FROM segments WHERE keywords LIKE '%japan%' "
                          "OR summary LIKE '%Japan%' OR keywords LIKE '%cello%' OR summary LIKE '%cello%'"),
            1);
}

// Defect 6: heat never decayed; only the single hottest session was checked.
TEST_F(MemoryOsRegression, D06_HeatDecaysAndEveryHotSegmentIsConsolidated) {
  TimeMs t0 = MakeTimeMs(2025, 3, 1);
  double fresh = memory::Heat(0, 2, t0, t0, 24.0);
  double later = memory::Heat(0, 2, t0, t0 + 48 * 3600 * 1000LL, 24.0);
  EXPECT_NEAR(fresh, 3.0, 1e-9);
  EXPECT_NEAR(later, 2.0 + std::exp(-2.0), 1e-9);

  EngineOptions o;
  o.heat_threshold = 3.0;  // segments with 2+ pages qualify
  auto e = Open(o);
  ASSERT_TRUE(e->AddTurns(scope_, SyntheticDialogue(60)).ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  // No segment that reached the threshold is left with unanalysed pages.
  EXPECT_EQ(Count(path(), "SELECT count(*) FROM pages p JOIN segments s ON s.id = p.segment_id "
                          "WHERE p.analyzed = 0 AND s.interaction >= 3"),
            0);
  EXPECT_GT(Count(path(), "SELECT count(DISTINCT segment_id) FROM pages WHERE analyzed = 1"), 1);
}

// Defect 7: eviction deleted unanalysed pages and could evict a new session.
TEST_F(MemoryOsRegression, D07_EvictionArchivesAndNeverDropsPages) {
  EngineOptions o;
  o.mtm_capacity = 2;
  o.merge_threshold = 5.0;  // never merge: one segment per page
  o.promote_batch_max = 1;
  auto e = Open(o);
  ASSERT_TRUE(e->AddTurns(scope_, SyntheticDialogue(20)).ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  auto st = e->GetStats(&scope_);
  EXPECT_EQ(st->mtm_segments, 2);
  EXPECT_EQ(st->mtm_pages + st->archived_pages, 10);
  ExpectConserved(20);
  // The newest segment is live.
  EXPECT_EQ(Count(path(), "SELECT archived_at IS NULL FROM segments ORDER BY id DESC LIMIT 1"), 1);
  // Archived pages stay searchable.
  auto r = e->Retrieve(scope_, "hiking in the Alps with Bruno", {});
  ASSERT_TRUE(r.ok());
  bool archived_hit = false;
  for (const auto& i : r->ranked) archived_hit |= (i.tier == Tier::kArchive);
  EXPECT_TRUE(archived_hit);
}

// Defect 8: retrieval mutated state and rewrote files.
TEST_F(MemoryOsRegression, D08_RetrievalIsReadOnly) {
  auto e = Open();
  ASSERT_TRUE(e->AddTurns(scope_, SyntheticDialogue(40)).ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  std::string db_before = testing::ReadFile(path());
  std::string wal_before = testing::ReadFile(path() + "-wal");
  std::int64_t changes_before = Count(path(), "SELECT total(visits) + total(version) FROM segments");
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(e->Retrieve(scope_, "trip to Japan", {}).ok());
  EXPECT_TRUE(testing::ReadFile(path()) == db_before) << "the file was modified";
  EXPECT_TRUE(testing::ReadFile(path() + "-wal") == wal_before) << "the file was modified";
  EXPECT_EQ(Count(path(), "SELECT total(visits) + total(version) FROM segments"), changes_before);
  // The hits are folded into heat by the next maintenance run.
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  EXPECT_GT(Count(path(), "SELECT coalesce(sum(visits), 0) FROM segments"), 0);
}

// Defect 9: facts had no dedup; repeats pushed distinct facts out.
TEST_F(MemoryOsRegression, D09_RepeatedFactsAreStoredOnce) {
  EngineOptions o;
  o.heat_threshold = 0.0;  // consolidate everything
  auto e = Open(o);
  std::vector<TurnInput> turns;
  for (int i = 0; i < 30; ++i) {
    TurnInput t;
    t.user_text = i % 2 ? "I work as a nurse at the city hospital." : "I adopted a kitten called Pepper.";
    t.assistant_text = "Good to know.";
    t.event_time = MakeTimeMs(2025, 1, 1) + i * 60000LL;
    turns.push_back(t);
  }
  ASSERT_TRUE(e->AddTurns(scope_, turns).ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  auto facts = e->ListFacts(scope_, "user");
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->size(), 2u);
  EXPECT_EQ(Count(path(), "SELECT count(*) FROM (SELECT norm_hash FROM facts GROUP BY scope_id, kind, "
                          "norm_hash HAVING count(*) > 1) AS dup"),
            0);
}

// Defect 10: assistant knowledge leaked across users of one assistant.
TEST_F(MemoryOsRegression, D10_AssistantFactsAreScopedPerUser) {
  EngineOptions o;
  o.heat_threshold = 0.0;
  auto e = Open(o);
  Scope alice{"default", "alice", "helper"}, bob{"default", "bob", "helper"};
  std::vector<TurnInput> turns;
  for (int i = 0; i < 14; ++i) {
    TurnInput t;
    t.user_text = "What should I cook tonight?";
    t.assistant_text = "I recommend the secret walnut pesto for you, Alice.";
    t.event_time = MakeTimeMs(2025, 1, 1) + i * 60000LL;
    turns.push_back(t);
  }
  ASSERT_TRUE(e->AddTurns(alice, turns).ok());
  ASSERT_TRUE(e->AddTurns(bob, SyntheticDialogue(14)).ok());
  ASSERT_TRUE(e->Maintain(nullptr).ok());
  auto a = e->ListFacts(alice, "assistant");
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->empty());
  auto b = e->ListFacts(bob, "assistant");
  for (const auto& f : *b) EXPECT_EQ(f.text.find("walnut"), std::string::npos) << f.text;
  auto r = e->Retrieve(bob, "walnut pesto", {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->context.find("walnut"), std::string::npos);
}

// Defect 11: a corrupt store loaded as empty and was then overwritten.
TEST_F(MemoryOsRegression, D11_CorruptStoreIsRefusedAndLeftUntouched) {
  {
    auto e = Open();
    ASSERT_TRUE(e->AddTurns(scope_, SyntheticDialogue(30)).ok());
    ASSERT_TRUE(e->Maintain(&scope_).ok());
  }
  std::string bytes = testing::ReadFile(path());
  ASSERT_GT(bytes.size(), 8192u);
  // Truncated to half.
  std::string half = bytes.substr(0, bytes.size() / 2);
  testing::WriteFile(path(), half);
  std::remove((path() + "-wal").c_str());
  std::remove((path() + "-shm").c_str());
  EngineOptions o;
  o.db_path = testing::StoreAt(path());
  auto e = Engine::Open(o);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kCorruption) << e.status().ToString();
  EXPECT_TRUE(testing::ReadFile(path()) == half) << "the file was modified";
  // Garbage.
  testing::WriteFile(path(), std::string(5000, 'x'));
  auto g = Engine::Open(o);
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(testing::ReadFile(path()) == std::string(5000, 'x')) << "the file was modified";
  // Empty (truncated to zero).
  testing::WriteFile(path(), "");
  auto z = Engine::Open(o);
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.status().message().find("empty"), std::string::npos);
}

TEST_F(MemoryOsRegression, D11_ForeignSqliteDatabaseIsNotModified) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path().c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES('mine');", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  std::string before = testing::ReadFile(path());
  EngineOptions o;
  o.db_path = testing::StoreAt(path());
  auto e = Engine::Open(o);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(testing::ReadFile(path()) == before) << "the file was modified";
}

// Defect 12: no embedder metadata; switching embedder crashed.
TEST_F(MemoryOsRegression, D12_OtherEmbedderIsAClearError) {
  {
    auto e = Open();
    ASSERT_TRUE(e->AddTurns(scope_, SyntheticDialogue(12)).ok());
    ASSERT_TRUE(e->Maintain(&scope_).ok());
  }
  EngineOptions o;
  o.db_path = testing::StoreAt(path());
  o.embedder = std::make_shared<testing::OtherEmbedder>();
  auto e = Engine::Open(o);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(e.status().message().find("builtin-hash-v1"), std::string::npos);
  EXPECT_NE(e.status().message().find("other-embedder"), std::string::npos);
}

}  // namespace
}  // namespace engram
