// The persistent embedding cache: a text is embedded once per tenant, model
// and store, across calls, duplicate texts, engine reopens and threads; a
// vector cached for one tenant is never served to another.
#include "engine/caching_embedder.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "core/clock.hpp"
#include "core/text.hpp"
#include "engram/engine.hpp"
#include "store/schema.hpp"
#include "testing/dialogue.hpp"
#include "testing/fakes.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

using testing::CountingEmbedder;

class CachingEmbedderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = sql::Db::Open(testing::StoreAt(path()), {});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(store::EnsureSchema(db->get(), 0).ok());
  }
  std::string path() const { return dir_.File("engram.db"); }
  std::shared_ptr<CachingEmbedder> Wrap(std::shared_ptr<Embedder> inner) {
    auto c = CachingEmbedder::Open(std::move(inner), testing::StoreAt(path()));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : nullptr;
  }
  std::int64_t Rows() {
    auto db = sql::Db::Open(testing::StoreAt(path()), {});
    auto st = (*db)->Prepare("SELECT count(*) FROM embed_cache");
    EXPECT_TRUE((*st)->Step().ok());
    return (*st)->Int(0);
  }
  testing::TempDir dir_;
};

TEST_F(CachingEmbedderTest, TheSameTextTwiceIsEmbeddedOnce) {
  auto inner = std::make_shared<CountingEmbedder>();
  auto c = Wrap(inner);
  auto a = c->EmbedFor("t", {"I love hiking in the Alps."});
  auto b = c->EmbedFor("t", {"I love hiking in the Alps."});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(inner->calls, 1);
  EXPECT_EQ((*a)[0], (*b)[0]);
  EXPECT_EQ((*a)[0].size(), 64u);
  // The key is the normalised text: case, spacing and end punctuation.
  auto n = c->EmbedFor("t", {"  i LOVE hiking in the alps "});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(inner->calls, 1);
  EXPECT_EQ(c->hits(), 2);
  EXPECT_EQ(c->misses(), 1);
}

TEST_F(CachingEmbedderTest, OnlyMissesGoToTheInnerEmbedderInOneBatch) {
  auto inner = std::make_shared<CountingEmbedder>();
  auto c = Wrap(inner);
  ASSERT_TRUE(c->EmbedFor("t", {"alpha beta"}).ok());
  auto r = c->EmbedFor("t", {"gamma", "alpha beta", "delta", "gamma"});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ(inner->calls, 2);
  EXPECT_EQ(inner->Embedded(), (std::vector<std::string>{"alpha beta", "gamma", "delta"}));
  EXPECT_EQ((*r)[0], (*r)[3]);
  EXPECT_EQ((*r)[1], CountingEmbedder().Embed({"alpha beta"})->front());
  EXPECT_EQ(Rows(), 3);
}

TEST_F(CachingEmbedderTest, SurvivesReopeningAndIsKeyedByModel) {
  {
    auto inner = std::make_shared<CountingEmbedder>();
    ASSERT_TRUE(Wrap(inner)->EmbedFor("t", {"my sister Lena lives in Vienna", "cello lessons"}).ok());
    EXPECT_EQ(inner->texts, 2);
  }
  auto again = std::make_shared<CountingEmbedder>();
  auto r = Wrap(again)->EmbedFor("t", {"cello lessons", "my sister Lena lives in Vienna"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(again->calls, 0);
  EXPECT_EQ((*r)[0], CountingEmbedder().Embed({"cello lessons"})->front());
  // Another model (or the same name at another dimension) never sees them.
  auto other = std::make_shared<CountingEmbedder>("other-model", 64);
  ASSERT_TRUE(Wrap(other)->EmbedFor("t", {"cello lessons"}).ok());
  EXPECT_EQ(other->texts, 1);
  auto wider = std::make_shared<CountingEmbedder>("fake-embed", 128);
  auto w = Wrap(wider)->EmbedFor("t", {"cello lessons"});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(wider->texts, 1);
  EXPECT_EQ(w->front().size(), 128u);
}

// Texts that differ only in a sign are different texts: a model embeds them
// apart, and the cache must not answer one with the other's vector.
TEST_F(CachingEmbedderTest, TextsThatDifferInASignAreEmbeddedApart) {
  auto inner = std::make_shared<CountingEmbedder>();
  auto c = Wrap(inner);
  const std::vector<std::string> texts = {"I code in C++", "I code in C#", "I code in C", "Blood type O+",
                                          "Blood type O-", "I owe $500", "I owe -500"};
  auto first = c->EmbedFor("t", texts);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(inner->Embedded(), texts);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ((*first)[i], CountingEmbedder().Embed({texts[i]})->front()) << texts[i];
  }
  auto again = c->EmbedFor("t", {"i code in c++", "blood type O-"});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(inner->calls, 1) << "the same texts, case aside, are cached";
  EXPECT_EQ((*again)[0], (*first)[0]);
  EXPECT_EQ((*again)[1], (*first)[4]);
  EXPECT_EQ(Rows(), 7);
}

TEST_F(CachingEmbedderTest, FailuresAndEmptyTextsAreNotCached) {
  auto inner = std::make_shared<CountingEmbedder>();
  inner->fail_from_call = 1;
  auto c = Wrap(inner);
  auto r = c->EmbedFor("t", {"hello there"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(Rows(), 0);
  inner->fail_from_call = 0;
  ASSERT_TRUE(c->EmbedFor("t", {"hello there", "", "?!", "++"}).ok());
  ASSERT_TRUE(c->EmbedFor("t", {"", "?!", "++"}).ok());
  EXPECT_EQ(inner->texts, 7);  // texts without words always go to the embedder
  EXPECT_EQ(Rows(), 1);
}

TEST_F(CachingEmbedderTest, HoldsVectorsAndHashesOnly) {
  auto c = Wrap(std::make_shared<CountingEmbedder>());
  ASSERT_TRUE(c->EmbedFor("t", {"the secret code is tangerine"}).ok());
  auto db = sql::Db::Open(testing::StoreAt(path()), {});
  auto st = (*db)->Prepare("SELECT group_concat(name) FROM pragma_table_info('embed_cache')");
  ASSERT_TRUE((*st)->Step().ok());
  EXPECT_EQ((*st)->Text(0), "tenant,model,text_hash,dim,vector");
  EXPECT_EQ(testing::ReadFile(path()).find("tangerine"), std::string::npos);
}

TEST_F(CachingEmbedderTest, ConcurrentCallersGetTheirOwnVectors) {
  auto inner = std::make_shared<CountingEmbedder>();
  auto c = Wrap(inner);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const std::string text = "thread " + std::to_string(t) + " text " + std::to_string(i % 5);
        auto r = c->EmbedFor("t", {text});
        if (!r.ok() || r->front() != CountingEmbedder().Embed({text})->front()) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(Rows(), 20);
}

// The cache is kept per tenant: a vector cached for one tenant's text is
// never served to another tenant (its identical text is a miss, embedded
// again and stored as its own row); each tenant is then served its own.
TEST_F(CachingEmbedderTest, ATenantIsNeverServedAnotherTenantsVector) {
  auto inner = std::make_shared<CountingEmbedder>();
  auto c = Wrap(inner);
  const std::string text = "the launch code is tangerine";
  ASSERT_TRUE(c->ForTenant("acme")->Embed({text}).ok());
  EXPECT_EQ(c->misses(), 1);
  ASSERT_TRUE(c->ForTenant("globex")->Embed({text}).ok());
  EXPECT_EQ(c->hits(), 0) << "globex was served acme's vector";
  EXPECT_EQ(c->misses(), 2);
  EXPECT_EQ(inner->calls, 2);
  EXPECT_EQ(Rows(), 2);
  EXPECT_EQ(testing::CountStoreRows(path(), "SELECT count(DISTINCT tenant) FROM embed_cache"), 2);
  ASSERT_TRUE(c->ForTenant("globex")->Embed({text}).ok());
  ASSERT_TRUE(c->EmbedFor("acme", {text}).ok());
  EXPECT_EQ(c->hits(), 2);
  EXPECT_EQ(inner->calls, 2);
  // Without a tenant nothing is served from the cache or written to it.
  ASSERT_TRUE(c->Embed({text}).ok());
  EXPECT_EQ(inner->calls, 3);
  EXPECT_EQ(c->hits(), 2);
  EXPECT_EQ(Rows(), 2);
  // One view per tenant, for as long as the cache; other embedders have none.
  EXPECT_EQ(c->ForTenant("acme"), c->ForTenant("acme"));
  EXPECT_NE(c->ForTenant("acme"), c->ForTenant("globex"));
  EXPECT_EQ(EmbedderForTenant(c.get(), "acme"), c->ForTenant("acme"));
  EXPECT_EQ(c->ForTenant("acme")->Name(), "fake-embed");
  EXPECT_EQ(EmbedderForTenant(inner.get(), "acme"), inner.get());
}

// An engine over a store of `dir` whose configured embedder is `inner`
// (wrapped by the cache).
Result<std::unique_ptr<Engine>> OpenEngine(testing::TempDir& dir, FakeClock& clock,
                                           std::shared_ptr<Embedder> inner) {
  EngineOptions o;
  o.db_path = testing::StoreAt(dir.File("engram.db"));
  o.clock = &clock;
  o.embedder = std::move(inner);
  return Engine::Open(o);
}

// Through the engine: two tenants with the same user and the same dialogue
// each embed their pages (nothing is served across tenants), and forgetting
// the user in one tenant removes that tenant's entries only.
TEST(CachingEmbedderEngine, EachTenantEmbedsItsOwnTextsAndForgetsThemAlone) {
  testing::TempDir dir;
  FakeClock clock{MakeTimeMs(2025, 3, 1)};
  auto inner = std::make_shared<CountingEmbedder>();
  auto e = OpenEngine(dir, clock, inner);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const Scope acme{"acme", "alice", "assistant"}, globex{"globex", "alice", "assistant"};
  ASSERT_TRUE((*e)->AddTurns(acme, testing::SyntheticDialogue(20)).ok());
  ASSERT_TRUE((*e)->Maintain(&acme).ok());
  const int first = inner->texts;
  EXPECT_EQ(first, 10);  // the 10 pages
  ASSERT_TRUE((*e)->AddTurns(globex, testing::SyntheticDialogue(20)).ok());
  ASSERT_TRUE((*e)->Maintain(&globex).ok());
  EXPECT_EQ(inner->texts, 2 * first) << "globex's pages were served acme's vectors";
  auto count = [&](const std::string& where) {
    return testing::CountStoreRows(dir.File("engram.db"), "SELECT count(*) FROM embed_cache WHERE " + where);
  };
  EXPECT_EQ(count("tenant = 'acme'"), 10);
  EXPECT_EQ(count("tenant = 'globex'"), 10);
  EXPECT_EQ(count("text_hash IN (SELECT text_hash FROM embed_cache WHERE tenant = 'acme')"), 20)
      << "the same texts, one entry per tenant";
  ASSERT_TRUE((*e)->ForgetUser("acme", "alice").ok());
  EXPECT_EQ(count("tenant = 'acme'"), 0);
  EXPECT_EQ(count("tenant = 'globex'"), 10);
}

// A store's cache may hold entries keyed before signs were told apart (by
// text::ContentHash); erasing a memory erases those too.
TEST(CachingEmbedderEngine, PurgingAMemoryErasesItsEntriesUnderEitherKey) {
  testing::TempDir dir;
  FakeClock clock{MakeTimeMs(2025, 3, 1)};
  auto inner = std::make_shared<CountingEmbedder>();
  auto e = OpenEngine(dir, clock, inner);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  MemoryScope alice;
  alice.user = "alice";
  MemoryAddOptions add;
  add.infer = false;
  const std::string said = "I write my services in C++ and F#";
  auto r = (*e)->AddMemoryText(alice, said, add);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->results.size(), 1u);
  auto count = [&](std::uint64_t hash) {
    return testing::CountStoreRows(dir.File("engram.db"), "SELECT count(*) FROM embed_cache WHERE text_hash = " +
                                                              std::to_string(static_cast<std::int64_t>(hash)));
  };
  ASSERT_NE(text::ContentHash(said), text::SignedContentHash(said));
  EXPECT_EQ(count(text::SignedContentHash(said)), 1);
  EXPECT_EQ(count(text::ContentHash(said)), 0);
  {  // the entry an earlier build kept for the same text
    auto db = sql::Db::Open(testing::StoreAt(dir.File("engram.db")), {});
    ASSERT_TRUE(db.ok());
    auto st = (*db)->Prepare("INSERT INTO embed_cache(tenant, model, text_hash, dim, vector) VALUES(?,?,?,?,?)");
    ASSERT_TRUE(st.ok());
    const std::vector<float> v(4, 0.5f);
    (*st)->Bind(1, "default").Bind(2, inner->Name()).Bind(3, static_cast<std::int64_t>(text::ContentHash(said)));
    (*st)->Bind(4, 4).BindFloats(5, v);
    ASSERT_TRUE((*st)->Step().ok());
  }
  EXPECT_EQ(count(text::ContentHash(said)), 1);
  ASSERT_TRUE((*e)->PurgeMemory(alice, r->results[0].id).ok());
  EXPECT_EQ(count(text::SignedContentHash(said)), 0);
  EXPECT_EQ(count(text::ContentHash(said)), 0);
}

// Through the engine: promotion fills the cache; a reopened engine (a new
// process, in effect) embeds no page it has seen. Queries are never cached
// (they are not memory, and erasure could not find them).
TEST(CachingEmbedderEngine, AReopenedEngineEmbedsNothingTwice) {
  testing::TempDir dir;
  FakeClock clock{MakeTimeMs(2025, 3, 1)};
  Scope s{"default", "alice", "assistant"};
  EngineOptions o;
  o.db_path = testing::StoreAt(dir.File("engram.db"));
  o.clock = &clock;
  {
    auto inner = std::make_shared<CountingEmbedder>();
    o.embedder = inner;
    auto e = Engine::Open(o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ASSERT_TRUE((*e)->AddTurns(s, testing::SyntheticDialogue(20)).ok());
    ASSERT_TRUE((*e)->Maintain(&s).ok());
    ASSERT_TRUE((*e)->Retrieve(s, "Which instrument am I learning?", {}).ok());
    EXPECT_GE(inner->texts, 21);  // 10 pages, the query and 10 STM turns
    EXPECT_EQ(testing::CountStoreRows(dir.File("engram.db"),
                                 "SELECT count(*) FROM embed_cache"), 10);  // pages only
  }
  auto inner = std::make_shared<CountingEmbedder>();
  o.embedder = inner;
  auto e = Engine::Open(o);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto r = (*e)->Retrieve(s, "Which instrument am I learning?", {});
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->context.find("cello"), std::string::npos) << r->context;
  // The query and the 10 STM turns ranked with the pages (embedded per
  // retrieval, uncached); none of the 10 pages.
  EXPECT_EQ(inner->calls, 2);
  EXPECT_EQ(inner->texts, 11);
}

}  // namespace
}  // namespace engram
