// Lineage through the engine: receipts carry no content, retrieval receipts
// are buffered (retrieval stays read-only) and written by maintenance or at
// close, a crashed promotion is reconciled by run id before its retry, purges
// and retention keep the classifier honest, and health reports the states.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "core/clock.hpp"
#include "core/text.hpp"
#include "engram/engine.hpp"
#include "testing/dialogue.hpp"
#include "testing/fakes.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

const char* g_crash_at = nullptr;
void CrashAt(const char* name) {
  if (g_crash_at && std::strcmp(name, g_crash_at) == 0) kill(getpid(), SIGKILL);
}

class LineageTest : public ::testing::Test {
 protected:
  std::unique_ptr<Engine> Open(EngineOptions o = {}) {
    o.db_path = testing::StoreAt(path());
    if (!o.clock) o.clock = &clock_;
    auto e = Engine::Open(std::move(o));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  std::string path() const { return dir_.File("engram.db"); }
  static std::vector<ReceiptInfo> Receipts(Engine& e, const std::string& kind = "", const std::string& run = "") {
    ReceiptQuery q;
    q.memory_kind = kind;
    q.run_id = run;
    auto r = e.ListReceipts(q);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<ReceiptInfo>{};
  }
  static HealthReport HealthOf(Engine& e, HealthOptions o = {}) {
    auto r = e.Health(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : HealthReport{};
  }
  static std::int64_t Count(const HealthReport& r, HealthState s) { return r.counts[static_cast<int>(s)]; }

  testing::TempDir dir_;
  FakeClock clock_{MakeTimeMs(2025, 3, 1)};
  Scope scope_{"default", "u1", "a1"};
};

std::string Flatten(const ReceiptInfo& r) {
  return r.run_id + "|" + r.scope.tenant + "|" + r.scope.user + "|" + r.scope.assistant + "|" + r.memory_kind +
         "|" + std::to_string(r.memory_id) + "|" + std::to_string(r.version) + "|" + r.source_version + "|" +
         r.from_tier + "|" + r.to_tier + "|" + r.status + "|" + std::to_string(r.at_utc) + "|" +
         r.depends_on_version + "|" + r.outcome_receipt;
}

TEST_F(LineageTest, ReceiptsHoldNoContentAndNoHashOfContent) {
  auto llm = std::make_shared<testing::ScriptedLlm>();
  EngineOptions o;
  o.llm = llm;
  o.heat_threshold = 0.0;  // consolidate everything: facts and profile too
  auto e = Open(o);
  ASSERT_TRUE(e->AddTurns(scope_, testing::SyntheticDialogue(40)).ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  const std::string query = "Which instrument am I learning these days?";
  ASSERT_TRUE(e->Retrieve(scope_, query, {}).ok());
  llm->Say("You are learning the cello, since last month.");
  ASSERT_TRUE(e->Chat(scope_, query, {}).ok());
  Scope other{"default", "u2", "a1"};
  ASSERT_TRUE(e->AddTurns(other, testing::SyntheticDialogue(3)).ok());
  ASSERT_TRUE(e->ForgetUser("default", "u2").ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());  // writes the retrieval receipts

  std::vector<std::string> needles = {query, "You are learning the cello, since last month."};
  ASSERT_TRUE(e->Export(nullptr, [&](const std::string& line) {
                  auto j = nlohmann::json::parse(line);
                  for (const char* k : {"user_text", "assistant_text", "text", "summary", "chain_summary", "value"}) {
                    if (j.contains(k) && j[k].is_string() && j[k].get<std::string>().size() >= 8) {
                      needles.push_back(j[k].get<std::string>());
                    }
                  }
                }).ok());
  for (const auto& t : testing::SyntheticDialogue(3)) needles.push_back(t.user_text);  // the erased user's
  ASSERT_GT(needles.size(), 100u);
  std::vector<std::string> hashes;
  for (const auto& n : needles) {
    std::uint64_t h = text::ContentHash(n);
    hashes.push_back(std::to_string(h));
    hashes.push_back(std::to_string(static_cast<std::int64_t>(h)));
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    hashes.push_back(hex);
  }
  auto receipts = Receipts(*e);
  ASSERT_GT(receipts.size(), 100u);
  int kinds = 0;
  for (const char* k : {"turn", "segment", "fact", "job", "generation", "retrieval", "scope"}) {
    for (const auto& r : receipts) {
      if (r.memory_kind == k) {
        ++kinds;
        break;
      }
    }
  }
  EXPECT_EQ(kinds, 7);
  for (const auto& r : receipts) {
    const std::string flat = Flatten(r);
    for (const auto& n : needles) EXPECT_EQ(flat.find(n), std::string::npos) << "content in receipt " << r.id;
    for (const auto& h : hashes) EXPECT_EQ(flat.find(h), std::string::npos) << "hash in receipt " << r.id;
  }
}

TEST_F(LineageTest, RetrievalReceiptsWaitInMemoryUntilMaintenance) {
  auto e = Open();
  ASSERT_TRUE(e->AddTurns(scope_, testing::SyntheticDialogue(20)).ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  const std::string db_before = testing::ReadFile(path());
  const std::string wal_before = testing::ReadFile(path() + "-wal");
  std::vector<std::string> returned;
  for (const char* q : {"trip to Japan", "my sister", "cello"}) {
    auto r = e->Retrieve(scope_, q, {});
    ASSERT_TRUE(r.ok());
    std::string list;
    for (const auto& i : r->items) {
      if (i.kind == ItemKind::kProfile) continue;
      list += (list.empty() ? "" : ",") + std::string(ItemKindName(i.kind)) + ":" + std::to_string(i.id) + "@" +
              std::to_string(i.version);
    }
    returned.push_back(list);
  }
  EXPECT_TRUE(testing::ReadFile(path()) == db_before);
  EXPECT_TRUE(testing::ReadFile(path() + "-wal") == wal_before);
  EXPECT_TRUE(Receipts(*e, "retrieval").empty());
  EXPECT_TRUE(HealthOf(*e).green());  // the buffered receipts are evidence already
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  auto written = Receipts(*e, "retrieval");
  ASSERT_EQ(written.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(written[i].depends_on_version, returned[i]);
    EXPECT_EQ(written[i].scope.user, "u1");
    EXPECT_EQ(written[i].status, "committed");
  }
  // A retrieval just before the engine closes is written at close.
  ASSERT_TRUE(e->Retrieve(scope_, "kitten", {}).ok());
  e.reset();
  e = Open();
  EXPECT_EQ(Receipts(*e, "retrieval").size(), 4u);
}

TEST_F(LineageTest, HealthReportsWaitingAndMissingPromotion) {
  auto e = Open();
  ASSERT_TRUE(e->AddTurns(scope_, testing::SyntheticDialogue(15)).ok());
  auto before = HealthOf(*e);
  EXPECT_EQ(before.overall, HealthState::kWaiting);  // promotion pending, within the wait
  clock_.Advance(2LL * 3600 * 1000);
  auto late = HealthOf(*e);
  EXPECT_EQ(late.overall, HealthState::kPromotionMissing);
  EXPECT_EQ(Count(late, HealthState::kPromotionMissing), 6);  // 5 turns beyond capacity + the job
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  auto after = HealthOf(*e);
  EXPECT_EQ(after.overall, HealthState::kWaiting);
  EXPECT_EQ(Count(after, HealthState::kWaiting), 10);
  EXPECT_EQ(after.findings_total, 0);
  ASSERT_TRUE(after.oldest_waiting);
  EXPECT_EQ(after.oldest_waiting->kind, "turn");
  EXPECT_GT(after.degraded_share, 0.0);  // built-in engine
  HealthOptions someone_else;
  someone_else.tenant = "default";
  someone_else.user = "nobody";
  EXPECT_EQ(HealthOf(*e, someone_else).items, 0);
}

TEST_F(LineageTest, ExpiredEvidenceIsUncertainUntilVerified) {
  auto e = Open();
  ASSERT_TRUE(e->AddTurns(scope_, testing::SyntheticDialogue(15)).ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  clock_.Advance(25LL * 3600 * 1000);
  EXPECT_EQ(HealthOf(*e).overall, HealthState::kUncertain);
  auto v = e->VerifyLineage({});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, 1);
  EXPECT_TRUE(HealthOf(*e).green());
}

TEST_F(LineageTest, RetentionCompactsOldReceiptsWithoutRaisingFalseRisk) {
  EngineOptions o;
  o.receipt_retention_days = 2;
  auto e = Open(o);
  ASSERT_TRUE(e->AddTurns(scope_, testing::SyntheticDialogue(15)).ok());
  ASSERT_TRUE(e->Maintain(&scope_).ok());
  const std::size_t before = Receipts(*e).size();
  clock_.Advance(3LL * 24 * 3600 * 1000);
  ASSERT_TRUE(e->Maintain(&scope_).ok());  // compacts
  EXPECT_LT(Receipts(*e).size(), before);
  auto h = HealthOf(*e);
  EXPECT_EQ(Count(h, HealthState::kSourceAtRisk), 0);
  EXPECT_EQ(h.overall, HealthState::kUncertain);  // old evidence proves nothing...
  ASSERT_TRUE(e->VerifyLineage({}).ok());
  EXPECT_TRUE(HealthOf(*e).green());  // ...until re-verified
}

TEST_F(LineageTest, PurgedScopesAreNotAtRisk) {
  auto e = Open();
  Scope other{"default", "u2", "a1"};
  ASSERT_TRUE(e->AddTurns(scope_, testing::SyntheticDialogue(15)).ok());
  ASSERT_TRUE(e->AddTurns(other, testing::SyntheticDialogue(15)).ok());
  ASSERT_TRUE(e->Maintain(nullptr).ok());
  ASSERT_TRUE(e->ForgetUser("default", "u2").ok());
  auto h = HealthOf(*e);
  EXPECT_TRUE(h.green()) << (h.findings.empty() ? "" : h.findings[0].reason);
  EXPECT_EQ(h.scopes.size(), 1u);
  ReceiptQuery q;
  q.scope.user = "u2";
  auto kept = e->ListReceipts(q);
  ASSERT_TRUE(kept.ok());
  EXPECT_GT(kept->size(), 15u);  // receipts stay: they hold no content
  EXPECT_EQ(kept->back().to_tier, "purged");
}

// A promotion killed after its commit but before its job bookkeeping (or
// before the commit) is found started-but-not-finished, reconciled by run id
// and version, and only then retried.
class ReconcileTest : public LineageTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(ReconcileTest, InterruptedPromotionIsReconciledBeforeRetry) {
  EngineOptions o;
  o.db_path = testing::StoreAt(path());
  o.promote_batch_max = 8;
  {
    auto e = Engine::Open(o);
    ASSERT_TRUE(e.ok());
    ASSERT_TRUE((*e)->AddTurns(scope_, testing::SyntheticDialogue(30)).ok());
  }
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    g_crash_at = GetParam();
    EngineOptions co = o;
    co.fault_point = &CrashAt;
    auto e = Engine::Open(co);
    if (e.ok()) (void)(*e)->Maintain(nullptr);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto e = Engine::Open(o);
  ASSERT_TRUE(e.ok());
  auto jobs = Receipts(**e, "job");
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_EQ(jobs[0].status, "started");
  const std::string run = jobs[0].run_id;
  const auto paged = static_cast<std::int64_t>(Receipts(**e, "turn", run).size());
  EXPECT_EQ(paged, std::string(GetParam()) == "promote.after_commit" ? 8 : 0);
  auto h = HealthOf(**e);
  EXPECT_EQ(h.overall, HealthState::kSourceAtRisk);
  ASSERT_FALSE(h.findings.empty());
  EXPECT_EQ(h.findings[0].kind, "job");
  EXPECT_NE(std::find(h.findings[0].run_ids.begin(), h.findings[0].run_ids.end(), run), h.findings[0].run_ids.end());

  ASSERT_TRUE((*e)->Maintain(nullptr).ok());
  auto after = Receipts(**e, "job");
  ASSERT_GE(after.size(), 4u);  // started, reconciled, started (retry), committed
  EXPECT_EQ(after[1].run_id, run);
  EXPECT_EQ(after[1].status, "verified");
  const std::string n = std::to_string(paged);
  EXPECT_EQ(after[1].outcome_receipt.rfind("reconciled committed=", 0), 0u) << after[1].outcome_receipt;
  EXPECT_NE(after[1].outcome_receipt.find(" stm_turns=" + std::to_string(30 - paged)), std::string::npos)
      << after[1].outcome_receipt;
  EXPECT_EQ(after[2].status, "started");  // the retry comes after the reconciliation
  EXPECT_NE(after[2].run_id, run);
  auto st = (*e)->GetStats(&scope_);
  EXPECT_EQ(st->stm_turns, 10);
  EXPECT_EQ(st->mtm_pages, 20);
  EXPECT_TRUE(HealthOf(**e).green());
}

INSTANTIATE_TEST_SUITE_P(CrashPoints, ReconcileTest,
                         ::testing::Values("promote.after_commit", "promote.before_commit"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (auto& c : s) c = c == '.' ? '_' : c;
                           return s;
                         });

}  // namespace
}  // namespace engram
