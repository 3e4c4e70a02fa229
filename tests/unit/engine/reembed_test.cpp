// Engine::Reembed: migrating a store to another embedder in place, resuming
// an interrupted migration, and what opening the store says meanwhile.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <set>

#include "core/clock.hpp"
#include "engram/engine.hpp"
#include "memory/stm.hpp"
#include "store/sqlite.hpp"
#include "testing/dialogue.hpp"
#include "testing/fakes.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

using testing::CountingEmbedder;

const Scope kAlice{"default", "alice", "assistant"};
const Scope kBob{"default", "bob", "assistant"};

class ReembedTest : public ::testing::Test {
 protected:
  std::string path() const { return dir_.File("engram.db"); }
  EngineOptions Options(std::shared_ptr<Embedder> embedder, bool migrate = false) {
    EngineOptions o;
    o.db_path = testing::StoreAt(path());
    o.clock = &clock_;
    o.heat_threshold = 0.0;  // consolidate every segment: the store gets facts
    o.embedder = std::move(embedder);
    o.allow_embedder_migration = migrate;
    return o;
  }
  std::unique_ptr<Engine> Open(std::shared_ptr<Embedder> embedder, bool migrate = false) {
    auto e = Engine::Open(Options(std::move(embedder), migrate));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  // A built-in store: two scopes, pages in MTM, segments and facts.
  void Populate() {
    auto e = Open(nullptr);
    ASSERT_TRUE(e->AddTurns(kAlice, testing::SyntheticDialogue(150)).ok());
    ASSERT_TRUE(e->AddTurns(kBob, testing::SyntheticDialogue(40)).ok());
    ASSERT_TRUE(e->Maintain(nullptr).ok());
    ASSERT_EQ(Int("SELECT count(*) FROM pages"), 170);
    ASSERT_GT(Int("SELECT count(*) FROM facts"), 0);
  }
  std::int64_t Int(const std::string& q) {
    auto db = sql::Db::Open(testing::StoreAt(path()), {});
    if (!db.ok()) return -1;
    auto st = (*db)->Prepare(q);
    if (!st.ok()) return -1;
    auto row = (*st)->Step();
    return row.ok() && *row ? (*st)->Int(0) : -1;
  }
  std::string Meta(const std::string& key) {
    auto db = sql::Db::Open(testing::StoreAt(path()), {});
    if (!db.ok()) return "<no store>";
    auto st = (*db)->Prepare("SELECT value FROM meta WHERE key = ?");
    (*st)->Bind(1, key);
    auto row = (*st)->Step();
    return row.ok() && *row ? (*st)->Text(0) : "";
  }
  std::int64_t Rows() { return Int("SELECT count(*) FROM pages") + Int("SELECT count(*) FROM facts"); }
  // Every vector of the store has `dim` floats and no shadow column is left.
  void ExpectVectorsOf(int dim) {
    const std::int64_t bytes = dim * 4;
    EXPECT_EQ(Int("SELECT count(*) FROM pages WHERE length(embedding) != " + std::to_string(bytes)), 0);
    EXPECT_EQ(Int("SELECT count(*) FROM facts WHERE length(embedding) != " + std::to_string(bytes)), 0);
    EXPECT_EQ(Int("SELECT count(*) FROM segments WHERE length(embedding) != " + std::to_string(bytes) +
                  " OR length(emb_sum) != " + std::to_string(bytes)),
              0);
    EXPECT_FALSE(testing::StoreHasColumn(path(), "pages", "embedding_next"));
    EXPECT_FALSE(testing::StoreHasColumn(path(), "facts", "embedding_next"));
    EXPECT_EQ(Meta("reembed_target"), "");
  }
  testing::TempDir dir_;
  FakeClock clock_{MakeTimeMs(2025, 3, 1)};
};

TEST_F(ReembedTest, BuiltinToAnotherEmbedderMigratesEveryVector) {
  Populate();
  const std::int64_t pages = Int("SELECT count(*) FROM pages");
  const std::int64_t facts = Int("SELECT count(*) FROM facts");
  const std::int64_t segments = Int("SELECT count(*) FROM segments");
  const std::int64_t versions = Int("SELECT sum(data_version) FROM scopes");
  auto target = std::make_shared<CountingEmbedder>();
  auto e = Open(target, /*migrate=*/true);
  std::vector<std::pair<std::int64_t, std::int64_t>> seen;
  auto r = e->Reembed(target, [&](std::int64_t d, std::int64_t t) { seen.emplace_back(d, t); });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->from, "builtin-hash-v1");
  EXPECT_EQ(r->from_dim, 512);
  EXPECT_EQ(r->to, "fake-embed");
  EXPECT_EQ(r->to_dim, 64);
  EXPECT_EQ(r->pages, pages);
  EXPECT_EQ(r->facts, facts);
  EXPECT_EQ(r->segments, segments);
  EXPECT_TRUE(r->changed);
  EXPECT_FALSE(r->resumed);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), std::make_pair(pages + facts, pages + facts));
  EXPECT_LE(target->texts, pages + facts);  // equal normalised texts share one vector

  ExpectVectorsOf(64);
  EXPECT_EQ(Meta("embedder_name"), "fake-embed");
  EXPECT_EQ(Meta("embedder_dim"), "64");
  EXPECT_EQ(Int("SELECT count(*) FROM pages"), pages);  // nothing lost or duplicated
  EXPECT_EQ(Int("SELECT sum(data_version) FROM scopes"), versions + 2);  // caches reload
  // A page's vector is the target's vector of the text promotion embeds.
  auto turns = e->ListTurns(kAlice, 0, 1);
  ASSERT_TRUE(turns.ok() && !turns->empty());
  const Vector want = CountingEmbedder().Embed({memory::RenderExchange(turns->front())})->front();
  auto db = sql::Db::Open(testing::StoreAt(path()), {});
  auto st = (*db)->Prepare("SELECT embedding FROM pages WHERE turn_id = ?");
  (*st)->Bind(1, turns->front().id);
  ASSERT_TRUE(*(*st)->Step());
  EXPECT_EQ((*st)->Floats(0), want);
  (*st)->Reset();
  // A segment's centroid is the normalised sum of its pages' new vectors.
  auto seg = (*db)->Prepare("SELECT id, emb_sum FROM segments ORDER BY page_count DESC LIMIT 1");
  ASSERT_TRUE(*(*seg)->Step());
  const std::int64_t seg_id = (*seg)->Int(0);
  const Vector emb_sum = (*seg)->Floats(1);
  (*seg)->Reset();
  Vector sum(64, 0.0f);
  auto pg = (*db)->Prepare("SELECT embedding FROM pages WHERE segment_id = ?");
  (*pg)->Bind(1, seg_id);
  while (*(*pg)->Step()) {
    const Vector v = (*pg)->Floats(0);
    for (int d = 0; d < 64; ++d) sum[d] += v[d];
  }
  (*pg)->Reset();
  for (int d = 0; d < 64; ++d) EXPECT_NEAR(emb_sum[d], sum[d], 1e-4);

  // The migrating engine now works with its embedder, and so does a normal open.
  auto hit = e->Retrieve(kAlice, "Which instrument did I start learning?", {});
  ASSERT_TRUE(hit.ok()) << hit.status().ToString();
  EXPECT_NE(hit->context.find("cello"), std::string::npos);
  e.reset();
  auto again = Open(std::make_shared<CountingEmbedder>());
  ASSERT_TRUE(again);
  hit = again->Retrieve(kBob, "Where does my sister live?", {});
  ASSERT_TRUE(hit.ok());
  EXPECT_NE(hit->context.find("Vienna"), std::string::npos);
  ASSERT_TRUE(again->AddTurns(kBob, testing::SyntheticDialogue(5)).ok());
  ASSERT_TRUE(again->Maintain(nullptr).ok());
  again.reset();
  ExpectVectorsOf(64);
  // The old embedder is refused, clearly.
  auto old = Engine::Open(Options(nullptr));
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(old.status().message().find("was built with embedder fake-embed"), std::string::npos)
      << old.status().message();
  EXPECT_NE(old.status().message().find("builtin-hash-v1"), std::string::npos);
  EXPECT_NE(old.status().message().find("engram reembed"), std::string::npos);
}

TEST_F(ReembedTest, AnInterruptedMigrationResumesWithoutRedoingRows) {
  Populate();
  const std::int64_t total = Rows();
  auto broken = std::make_shared<CountingEmbedder>();
  {
    broken->fail_from_call = 3;  // two batches of 64, then the endpoint is down
    auto e = Open(broken, true);
    auto r = e->Reembed(broken, nullptr);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  }
  EXPECT_EQ(Meta("reembed_target"), "fake-embed/64");
  EXPECT_EQ(Meta("embedder_name"), "builtin-hash-v1");
  EXPECT_EQ(Int("SELECT count(*) FROM pages WHERE embedding_next IS NOT NULL"), 128);

  // Opening with the target says what is going on.
  auto blocked = Engine::Open(Options(std::make_shared<CountingEmbedder>()));
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(blocked.status().message().find("is being migrated to fake-embed (128 of " +
                                            std::to_string(total) + " vectors); run `engram reembed` to finish"),
            std::string::npos)
      << blocked.status().message();
  // The old embedder still works meanwhile; what it adds is migrated too.
  {
    auto old = Open(nullptr);
    ASSERT_TRUE(old->Retrieve(kAlice, "Which instrument did I start learning?", {}).ok());
    ASSERT_TRUE(old->AddTurns(kBob, testing::SyntheticDialogue(12)).ok());
    ASSERT_TRUE(old->Maintain(nullptr).ok());
  }
  const std::int64_t now_total = Rows();
  ASSERT_GT(now_total, total);

  auto fresh = std::make_shared<CountingEmbedder>();
  auto e = Open(fresh, true);
  auto r = e->Reembed(fresh, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->resumed);
  EXPECT_EQ(r->pages + r->facts, now_total - 128);
  // No text of a finished row was sent again.
  const auto first = broken->Embedded();
  ASSERT_EQ(first.size(), 128u);
  const std::set<std::string> first_run(first.begin(), first.end());
  const auto second = fresh->Embedded();
  EXPECT_LE(static_cast<std::int64_t>(second.size()), now_total - 128);
  for (const auto& t : second) EXPECT_EQ(first_run.count(t), 0u) << t;
  e.reset();
  EXPECT_EQ(Rows(), now_total);
  ExpectVectorsOf(64);
  EXPECT_EQ(Int("SELECT count(*) FROM pages"), Int("SELECT count(DISTINCT turn_id) FROM pages"));
  EXPECT_TRUE(Open(std::make_shared<CountingEmbedder>()));
}

// Killed at the switch itself: the switch is one transaction, so the store is
// either entirely old or entirely new; the rerun only switches.
const char* g_kill_at = nullptr;
void KillAt(const char* name) {
  if (g_kill_at && std::strcmp(name, g_kill_at) == 0) kill(getpid(), SIGKILL);
}

TEST_F(ReembedTest, KilledAtTheSwitchLeavesTheOldVectorsAndResumes) {
  Populate();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    g_kill_at = "reembed.before_switch_commit";
    auto o = Options(std::make_shared<CountingEmbedder>(), true);
    o.fault_point = &KillAt;
    auto e = Engine::Open(o);
    if (!e.ok()) _exit(3);
    (void)(*e)->Reembed(o.embedder, nullptr);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child did not reach the switch";
  EXPECT_EQ(Meta("embedder_name"), "builtin-hash-v1");
  EXPECT_EQ(Int("SELECT count(*) FROM pages WHERE length(embedding) != 2048"), 0);
  EXPECT_EQ(Int("SELECT count(*) FROM pages WHERE embedding_next IS NULL"), 0);

  auto target = std::make_shared<CountingEmbedder>();
  auto e = Open(target, true);
  auto r = e->Reembed(target, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->resumed);
  EXPECT_EQ(r->pages + r->facts, 0);
  EXPECT_EQ(target->calls, 0);
  e.reset();
  ExpectVectorsOf(64);
}

TEST_F(ReembedTest, TheOwnEmbedderCancelsAndAnotherTargetRestarts) {
  Populate();
  auto broken = std::make_shared<CountingEmbedder>("model-a", 32);
  broken->fail_from_call = 2;
  {
    auto e = Open(broken, true);
    ASSERT_FALSE(e->Reembed(broken, nullptr).ok());
  }
  EXPECT_EQ(Meta("reembed_target"), "model-a/32");
  {  // Another target: the migration starts over for it.
    auto b = std::make_shared<CountingEmbedder>("model-b", 48);
    b->fail_from_call = 2;
    auto e = Open(b, true);
    ASSERT_FALSE(e->Reembed(b, nullptr).ok());
    EXPECT_EQ(Meta("reembed_target"), "model-b/48");
    EXPECT_EQ(Int("SELECT count(*) FROM pages WHERE length(embedding_next) = 128"), 0);
    EXPECT_EQ(Int("SELECT count(*) FROM pages WHERE length(embedding_next) = 192"), 64);
  }
  {  // The store's own embedder: the migration is cancelled.
    auto e = Open(nullptr, true);
    auto r = e->Reembed(nullptr, nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->changed);
    EXPECT_TRUE(r->cancelled);
  }
  ExpectVectorsOf(512);
  auto b = Engine::Open(Options(std::make_shared<CountingEmbedder>("model-b", 48)));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message().find("being migrated"), std::string::npos);
  EXPECT_TRUE(Open(nullptr));
}

TEST_F(ReembedTest, MigrationModeRefusesVectorWorkUntilTheSwitch) {
  Populate();
  auto target = std::make_shared<CountingEmbedder>();
  auto e = Open(target, true);
  auto q = e->Retrieve(kAlice, "cello", {});
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(e->Maintain(nullptr).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(e->AddTurn(kAlice, {.user_text = "I moved to Lisbon."}).ok());  // needs no vectors
  ASSERT_TRUE(e->Reembed(target, nullptr).ok());
  EXPECT_TRUE(e->Retrieve(kAlice, "cello", {}).ok());
  EXPECT_TRUE(e->Maintain(nullptr).ok());
}

// Round trip with the persistent cache: back to the built-in embedder, then
// to the first target again, which embeds nothing a second time.
TEST_F(ReembedTest, RoundTripReusesTheEmbeddingCache) {
  Populate();
  {
    auto t = std::make_shared<CountingEmbedder>();
    ASSERT_TRUE(Open(t, true)->Reembed(t, nullptr).ok());
  }
  {
    auto e = Open(nullptr, true);
    auto r = e->Reembed(nullptr, nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->to, "builtin-hash-v1");
    EXPECT_TRUE(r->changed);
  }
  ExpectVectorsOf(512);
  auto t = std::make_shared<CountingEmbedder>();
  auto r = Open(t, true)->Reembed(t, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->pages, Int("SELECT count(*) FROM pages"));
  EXPECT_EQ(t->calls, 0);
  ExpectVectorsOf(64);
  // Nothing to do the second time.
  auto again = Open(t, true)->Reembed(t, nullptr);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed);
}

}  // namespace
}  // namespace engram
