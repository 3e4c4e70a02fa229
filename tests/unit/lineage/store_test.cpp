// Lineage on a real schema (in-memory SQLite): receipt compaction into
// per-day summaries, and reconciliation of a started run by run id and
// version (including a commit receipt the rows contradict).
#include <gtest/gtest.h>

#include "lineage/compaction.hpp"
#include "lineage/evidence.hpp"
#include "lineage/receipts.hpp"
#include "lineage/reconcile.hpp"
#include "store/schema.hpp"

namespace engram::lineage {
namespace {

constexpr TimeMs kDay = 86'400'000;
constexpr TimeMs kT0 = 1'700'006'400'000;  // 2023-11-15T00:00Z, a day boundary

class LineageStore : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = sql::Db::Open(":memory:", {});
    ASSERT_TRUE(db.ok());
    db_ = std::move(db).value();
    ASSERT_TRUE(store::EnsureSchema(db_.get(), kT0).ok());
  }
  void Receipt(const std::string& run, const std::string& kind, std::int64_t id, const std::string& status,
               TimeMs at, const std::string& to = "mtm", const std::string& outcome = "") {
    lineage::Receipt r;
    r.run_id = run;
    r.tenant = "t";
    r.user_scope = "u";
    r.assistant_scope = "a";
    r.memory_kind = kind;
    r.memory_id = id;
    r.source_version = "engram/0.1.0;stm=10";
    r.from_tier = "stm";
    r.to_tier = to;
    r.status = status;
    r.at_utc = at;
    r.outcome_receipt = outcome;
    ASSERT_TRUE(Write(db_.get(), r).ok());
  }
  std::int64_t Int(const std::string& q) {
    auto st = db_->Prepare(q);
    EXPECT_TRUE(st.ok());
    auto row = (*st)->Step();
    std::int64_t v = row.ok() && *row ? (*st)->Int(0) : -1;
    (*st)->Reset();
    return v;
  }
  void Exec(const std::string& q) { ASSERT_TRUE(db_->Exec(q).ok()) << q; }
  std::unique_ptr<sql::Db> db_;
};

TEST_F(LineageStore, CompactionFoldsOldReceiptsIntoDailyCounts) {
  Receipt("r1", "turn", 1, "committed", kT0 + 1000);
  Receipt("r1", "turn", 2, "committed", kT0 + 2000);
  Receipt("r2", "turn", 3, "committed", kT0 + kDay + 5);
  Receipt("r3", "job", 9, "started", kT0 + 10);  // no outcome: kept
  Receipt("r4", "job", 9, "started", kT0 + 20);
  Receipt("r4", "job", 9, "committed", kT0 + 30);
  Receipt("r5", "turn", 4, "committed", kT0 + 3 * kDay);  // recent
  auto c = CompactReceipts(db_.get(), kT0 + 2 * kDay);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->receipts_removed, 5);
  EXPECT_EQ(Int("SELECT count(*) FROM receipts"), 2);
  EXPECT_EQ(Int("SELECT count(*) FROM receipts WHERE run_id = 'r3'"), 1);
  EXPECT_EQ(Int("SELECT receipts FROM receipt_days WHERE day = " + std::to_string(kT0 / kDay) +
                " AND memory_kind = 'turn'"),
            2);
  EXPECT_EQ(Int("SELECT sum(receipts) FROM receipt_days"), 5);
  // Compacting again later adds to the same day rows.
  Receipt("r6", "turn", 5, "committed", kT0 + 3000);
  ASSERT_TRUE(CompactReceipts(db_.get(), kT0 + 2 * kDay).ok());
  EXPECT_EQ(Int("SELECT receipts FROM receipt_days WHERE day = " + std::to_string(kT0 / kDay) +
                " AND memory_kind = 'turn'"),
            3);
  auto ev = LoadEvidence(db_.get());
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(ev->compacted_through.at(ScopeKey("t", "u", "a")), kT0 + kDay + 5);
}

TEST_F(LineageStore, ReconciliationChecksEveryCommitOfTheRun) {
  Exec("INSERT INTO scopes(id, tenant, user_id, assistant_id, created_at) VALUES(1, 't', 'u', 'a', 0)");
  Exec("INSERT INTO segments(id, scope_id, summary, keywords, embedding, emb_sum, last_access, created_at, "
       "updated_at, version) VALUES(5, 1, '', '[]', x'', x'', 0, 0, 0, 2)");
  for (int t = 1; t <= 3; ++t) {
    Exec("INSERT INTO turns(id, scope_id, seq, user_text, assistant_text, event_time, ingest_time) VALUES(" +
         std::to_string(t) + ", 1, " + std::to_string(t) + ", 'x', 'y', 0, 0)");
  }
  Exec("INSERT INTO pages(id, scope_id, turn_id, segment_id, chain_summary, keywords, embedding, created_at) "
       "VALUES(10, 1, 1, 5, '', '[]', x'', 0)");
  Exec("UPDATE turns SET page_id = 10 WHERE id = 1");
  Exec("INSERT INTO jobs(id, scope_id, kind, status, created_at, updated_at) VALUES(7, 1, 'promote', 'pending', 0, 0)");
  JobRef job{Scope{"t", "u", "a"}, 1, 7, "promote", "engram/0.1.0;stm=10"};
  // Run A committed turn 1 (true) and claims turn 2 (false: turn 2 is in STM).
  ASSERT_TRUE(WriteJobReceipt(db_.get(), job, "run-a", "started", "", kT0).ok());
  Receipt("run-a", "turn", 1, "committed", kT0 + 1, "mtm", "pages.id=10");
  Receipt("run-a", "segment", 5, "degraded", kT0 + 1, "mtm", "segment.create");
  Receipt("run-a", "turn", 2, "committed", kT0 + 1, "mtm", "pages.id=11");
  // Run B crashed before committing anything.
  ASSERT_TRUE(WriteJobReceipt(db_.get(), job, "run-b", "started", "", kT0 + 5).ok());
  // Run C finished.
  ASSERT_TRUE(WriteJobReceipt(db_.get(), job, "run-c", "started", "", kT0 + 6).ok());
  ASSERT_TRUE(WriteJobReceipt(db_.get(), job, "run-c", "committed", "", kT0 + 7).ok());

  auto r = ReconcileOpenRuns(db_.get(), job, kT0 + 10);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].run_id, "run-a");
  EXPECT_EQ((*r)[0].committed, 3);
  EXPECT_EQ((*r)[0].verified, 2);
  EXPECT_EQ((*r)[0].stm_turns, 2);
  EXPECT_EQ((*r)[1].run_id, "run-b");
  EXPECT_EQ((*r)[1].committed, 0);
  EXPECT_EQ(Int("SELECT count(*) FROM receipts WHERE run_id = 'run-a' AND memory_kind = 'job' AND "
                "status = 'failed' AND outcome_receipt LIKE 'reconciled committed=3 verified=2%'"),
            1);
  EXPECT_EQ(Int("SELECT count(*) FROM receipts WHERE run_id = 'run-b' AND status = 'verified' AND "
                "outcome_receipt LIKE 'reconciled committed=0 verified=0%'"),
            1);
  // Reconciled once: nothing is open any more.
  auto again = ReconcileOpenRuns(db_.get(), job, kT0 + 20);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
}

}  // namespace
}  // namespace engram::lineage
