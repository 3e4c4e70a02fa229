// The receipts repository (store/receipts.hpp) on both engines. The
// dialect-specific SQL (two-argument min/max in the compaction upsert, the
// facts column probe, reading without a limit) is what this checks;
// behaviour is covered by unit_lineage.
#include "store/receipts.hpp"

#include <gtest/gtest.h>

#include "store/schema.hpp"
#include "testing/test_postgres.hpp"

namespace engram::store {
namespace {

constexpr TimeMs kDay = 86'400'000;
constexpr TimeMs kT0 = 1'700'006'400'000;  // 2023-11-15T00:00Z, a day boundary

class ReceiptsRepo : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const bool pg = GetParam() == "postgres";
    const std::string location = pg ? engram::testing::FreshPgDatabase() : ":memory:";
    ASSERT_FALSE(location.empty());
    auto db = sql::Db::Open(location, {});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ASSERT_TRUE(EnsureSchema(db_.get(), kT0).ok());
  }

  void Exec(const std::string& q) { ASSERT_TRUE(db_->Exec(q).ok()) << q; }
  std::int64_t Int(const std::string& q) {
    auto st = db_->Prepare(q);
    EXPECT_TRUE(st.ok()) << q;
    if (!st.ok()) return -1;
    auto row = (*st)->Step();
    std::int64_t v = row.ok() && *row ? (*st)->Int(0) : -1;
    (*st)->Reset();
    return v;
  }
  void Receipt(const std::string& run, const std::string& kind, std::int64_t id, const std::string& status,
               TimeMs at, const std::string& to = "mtm", std::int64_t version = 1, const std::string& outcome = "") {
    ReceiptRow r;
    r.run_id = run;
    r.tenant = "t";
    r.user_scope = "u";
    r.assistant_scope = "a";
    r.memory_kind = kind;
    r.memory_id = id;
    r.version = version;
    r.source_version = "engram/0.1.0";
    r.from_tier = "stm";
    r.to_tier = to;
    r.status = status;
    r.at_utc = at;
    r.outcome_receipt = outcome;
    ASSERT_TRUE(WriteReceipt(db_.get(), r).ok());
  }
  // Scope 1 with turns 1 (in page 1 of segment 1) and 2 (in STM), fact 1 at
  // version 2, and a promote job 7.
  void Rows() {
    Exec("INSERT INTO scopes(id, tenant, user_id, assistant_id, created_at) VALUES(1, 't', 'u', 'a', 0)");
    Exec("INSERT INTO turns(id, scope_id, seq, user_text, assistant_text, event_time, ingest_time, tenant) "
         "VALUES(1, 1, 1, 'x', 'y', 0, 10, 't'), (2, 1, 2, 'x', 'y', 0, 20, 't')");
    Exec("INSERT INTO segments(id, scope_id, summary, keywords, embedding, emb_sum, last_access, created_at, "
         "updated_at, version, archived_at, degraded, tenant) VALUES(1, 1, '', '[]', '', '', 0, 5, 5, 3, 9, 1, 't')");
    Exec("INSERT INTO pages(id, scope_id, turn_id, segment_id, chain_summary, keywords, embedding, created_at, tenant) "
         "VALUES(1, 1, 1, 1, '', '[]', '', 0, 't')");
    Exec("UPDATE turns SET page_id = 1 WHERE id = 1");
    Exec("INSERT INTO facts(id, scope_id, memory_id, kind, text, norm_hash, embedding, event_time, record_time, "
         "created_at, updated_at, version, tenant) VALUES(1, 1, 'm_1', 'user', 'x', 1, '', 0, 0, 0, 0, 2, 't')");
    Exec("INSERT INTO jobs(id, scope_id, kind, status, created_at, updated_at, tenant) "
         "VALUES(7, 1, 'promote', 'done', 0, 0, 't')");
  }

  std::unique_ptr<sql::Db> db_;
};

TEST_P(ReceiptsRepo, ReadsByFilterInIdOrderWithOrWithoutALimit) {
  Receipt("r1", "turn", 1, "committed", kT0);
  Receipt("r2", "segment", 2, "committed", kT0 + 1);
  Receipt("r2", "turn", 3, "committed", kT0 + 2);
  auto all = ReadReceipts(db_.get(), {});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_LT((*all)[0].id, (*all)[1].id);
  EXPECT_EQ((*all)[2].memory_id, 3);
  EXPECT_EQ((*all)[2].source_version, "engram/0.1.0");
  ReceiptFilter f;
  f.run_id = "r2";
  f.memory_kind = "turn";
  auto some = ReadReceipts(db_.get(), f);
  ASSERT_TRUE(some.ok());
  ASSERT_EQ(some->size(), 1u);
  EXPECT_EQ(some->front().memory_id, 3);
  ReceiptFilter limited;
  limited.limit = 2;
  EXPECT_EQ(ReadReceipts(db_.get(), limited)->size(), 2u);
  limited.limit = 0;
  EXPECT_EQ(ReadReceipts(db_.get(), limited)->size(), 0u);
  limited.tenant = "other";
  limited.limit = -1;
  EXPECT_EQ(ReadReceipts(db_.get(), limited)->size(), 0u);
}

TEST_P(ReceiptsRepo, CompactionAddsToDayRowsAndKeepsTheirFirstAndLastTimes) {
  Receipt("r1", "turn", 1, "committed", kT0 + 1000);
  Receipt("r1", "turn", 2, "committed", kT0 + 2000);
  Receipt("r3", "job", 9, "started", kT0 + 10);  // no outcome: kept
  Receipt("r5", "turn", 4, "committed", kT0 + 3 * kDay);
  auto c = CompactReceipts(db_.get(), kT0 + 2 * kDay);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->receipts_removed, 2);
  EXPECT_EQ(c->day_rows, 1);
  EXPECT_EQ(c->cutoff, kT0 + 2 * kDay);
  // Later receipts of the same day, one earlier and one later than before.
  Receipt("r6", "turn", 5, "committed", kT0 + 500);
  Receipt("r7", "turn", 6, "committed", kT0 + 9000);
  c = CompactReceipts(db_.get(), kT0 + 2 * kDay);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->receipts_removed, 2);
  const std::string day = " FROM receipt_days WHERE day = " + std::to_string(kT0 / kDay);
  EXPECT_EQ(Int("SELECT receipts" + day), 4);
  EXPECT_EQ(Int("SELECT first_at" + day), kT0 + 500);
  EXPECT_EQ(Int("SELECT last_at" + day), kT0 + 9000);
  EXPECT_EQ(Int("SELECT count(*) FROM receipts"), 2);
}

TEST_P(ReceiptsRepo, FindsOpenRunsAndChecksTheirCommitsAgainstTheRows) {
  Rows();
  Receipt("open", "job", 7, "started", kT0);
  Receipt("open", "turn", 1, "committed", kT0 + 1, "mtm", 1, "pages.id=1");
  Receipt("open", "segment", 1, "committed", kT0 + 2, "mtm", 3);
  Receipt("open", "turn", 2, "failed", kT0 + 3);
  Receipt("closed", "job", 7, "started", kT0 + 4);
  Receipt("closed", "job", 7, "committed", kT0 + 5);
  auto runs = FindOpenJobRuns(db_.get(), 1, "promote");
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->front().run_id, "open");
  EXPECT_EQ(runs->front().job_id, 7);
  EXPECT_TRUE(FindOpenJobRuns(db_.get(), 1, "consolidate")->empty());
  auto commits = ListRunCommits(db_.get(), "open", "mtm");
  ASSERT_TRUE(commits.ok()) << commits.status().ToString();
  ASSERT_EQ(commits->size(), 2u);
  EXPECT_EQ((*commits)[0].memory_kind, "turn");
  EXPECT_EQ((*commits)[0].outcome_receipt, "pages.id=1");
  EXPECT_EQ((*commits)[1].version, 3);
  EXPECT_EQ(*CountUnpagedTurns(db_.get(), 1), 1);

  EXPECT_TRUE(*CommitRowHolds(db_.get(), "turn", 1, 1, 1));
  EXPECT_FALSE(*CommitRowHolds(db_.get(), "turn", 1, 1, 2));  // another page
  EXPECT_FALSE(*CommitRowHolds(db_.get(), "turn", 2, 1, 1));  // in STM
  EXPECT_TRUE(*CommitRowHolds(db_.get(), "segment", 1, 3, 0));
  EXPECT_FALSE(*CommitRowHolds(db_.get(), "segment", 1, 4, 0));
  EXPECT_TRUE(*CommitRowHolds(db_.get(), "fact", 1, 1, 0));  // a later version holds
  EXPECT_FALSE(*CommitRowHolds(db_.get(), "fact", 2, 1, 0));
  EXPECT_TRUE(*CommitRowHolds(db_.get(), "profile_slot", 99, 1, 0));
}

TEST_P(ReceiptsRepo, EvidenceReadsEveryTableAndTheCompactedTimes) {
  Rows();
  Receipt("r1", "turn", 1, "committed", kT0);
  Receipt("r2", "turn", 2, "committed", kT0 + 3 * kDay);
  ASSERT_TRUE(CompactReceipts(db_.get(), kT0 + kDay).ok());
  auto e = LoadEvidenceRows(db_.get());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_EQ(e->receipts.size(), 1u);
  EXPECT_EQ(e->receipts[0].run_id, "r2");
  ASSERT_EQ(e->scopes.size(), 1u);
  EXPECT_EQ(e->scopes[0].scope.assistant, "a");
  ASSERT_EQ(e->turns.size(), 2u);
  EXPECT_EQ(e->turns[0].page_id + e->turns[1].page_id, 1);
  ASSERT_EQ(e->pages.size(), 1u);
  EXPECT_EQ(e->pages[0].prev_page, 0);
  EXPECT_FALSE(e->pages[0].degraded);
  ASSERT_EQ(e->segments.size(), 1u);
  EXPECT_EQ(e->segments[0].archived_at, 9);
  EXPECT_TRUE(e->segments[0].degraded);
  ASSERT_EQ(e->facts.size(), 1u);
  EXPECT_EQ(e->facts[0].memory, "m_1");  // the facts table has memory_id
  EXPECT_EQ(e->facts[0].status, "live");
  ASSERT_EQ(e->jobs.size(), 1u);
  EXPECT_EQ(e->jobs[0].kind, "promote");
  ASSERT_EQ(e->compacted.size(), 1u);
  EXPECT_EQ(e->compacted[0].scope.user, "u");
  EXPECT_EQ(e->compacted[0].last_at, kT0);
  auto pages = LoadScopePages(db_.get(), 1);
  ASSERT_TRUE(pages.ok());
  ASSERT_EQ(pages->size(), 1u);
  EXPECT_EQ(pages->front().turn_id, 1);
  EXPECT_TRUE(LoadScopePages(db_.get(), 2)->empty());
}

INSTANTIATE_TEST_SUITE_P(Engines, ReceiptsRepo, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace engram::store
