// Engine behaviour: admission, promotion, conservation across tiers,
// retrieval, scopes, erasure.
#include "engram/engine.hpp"

#include <gtest/gtest.h>

#include "core/clock.hpp"
#include "testing/dialogue.hpp"
#include "testing/fakes.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

using testing::SyntheticDialogue;
using testing::TempDir;

Scope UserScope(const std::string& user, const std::string& assistant = "assistant") {
  Scope s;
  s.user = user;
  s.assistant = assistant;
  return s;
}

class EngineTest : public ::testing::Test {
 protected:
  std::unique_ptr<Engine> Open(EngineOptions o = {}) {
    o.db_path = testing::StoreAt(dir_.File("engram.db"));
    if (!o.clock) o.clock = &clock_;
    auto e = Engine::Open(std::move(o));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  TempDir dir_;
  FakeClock clock_{MakeTimeMs(2025, 3, 1)};
};

TEST_F(EngineTest, AdmittedTurnsAreConservedAcrossTiers) {
  auto e = Open();
  Scope s = UserScope("alice");
  ASSERT_TRUE(e->AddTurns(s, SyntheticDialogue(69)).ok());
  auto before = e->GetStats(&s);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->turns_admitted, 69);
  EXPECT_EQ(before->stm_turns, 69);
  EXPECT_GE(before->pending_jobs, 1);

  auto r = e->Maintain(&s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->pages_created, 59);
  EXPECT_EQ(r->model_calls, 0);  // built-in engine
  EXPECT_TRUE(r->degraded);

  auto st = e->GetStats(&s);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->turns_admitted, 69);
  EXPECT_EQ(st->stm_turns, 10);
  EXPECT_EQ(st->stm_turns + st->mtm_pages + st->archived_pages, 69);
  EXPECT_EQ(st->pending_jobs, 0);

  auto turns = e->ListTurns(s, 0, 1000);
  ASSERT_TRUE(turns.ok());
  ASSERT_EQ(turns->size(), 69u);
  for (std::size_t i = 0; i < turns->size(); ++i) {
    EXPECT_EQ((*turns)[i].seq, static_cast<std::int64_t>(i + 1));
    EXPECT_EQ((*turns)[i].tier, i < 59 ? Tier::kMtm : Tier::kStm);
  }
}

TEST_F(EngineTest, RetrievalFindsOldTurnsWithDates) {
  auto e = Open();
  Scope s = UserScope("alice");
  ASSERT_TRUE(e->AddTurns(s, SyntheticDialogue(40)).ok());
  ASSERT_TRUE(e->Maintain(&s).ok());
  auto r = e->Retrieve(s, "Which instrument am I learning?", {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->ranked.empty());
  EXPECT_NE(r->ranked.front().text.find("cello"), std::string::npos) << r->ranked.front().text;
  EXPECT_NE(r->context.find("cello"), std::string::npos);
  EXPECT_NE(r->context.find("2025"), std::string::npos);  // dates are rendered
  EXPECT_LE(r->context_tokens, 2000);
}

// A speaker whose name is a stopword ("Will") is still named by a question:
// "What does Will like to eat?" favours Will's own messages, as it does for
// "Grace"; a sentence's opening "Will" is the verb, and the texts' "will"
// never matches the name.
TEST_F(EngineTest, ASpeakerNamedLikeAStopwordIsStillNamed) {
  auto e = Open();
  Scope s = UserScope("will");
  std::vector<TurnInput> turns;
  auto add = [&](const std::string& will, const std::string& grace) {
    TurnInput t;
    t.user_text = will;
    t.assistant_text = grace;
    t.user_name = "Will";
    t.assistant_name = "Grace";
    t.event_time = MakeTimeMs(2025, 2, 1) + static_cast<TimeMs>(turns.size()) * 60000;
    turns.push_back(t);
  };
  add("I love eating sushi on Fridays.", "I will bake bread and eat it warm.");
  add("Grace, I will eat with you on Sunday.", "I like to eat salad at lunch.");
  for (int i = 0; i < 20; ++i) add("The weather report " + std::to_string(i) + " says clouds.", "Noted, thanks.");
  ASSERT_TRUE(e->AddTurns(s, turns).ok());
  ASSERT_TRUE(e->Maintain(&s).ok());
  RetrieveOptions o;
  o.explain = true;
  // Whether the named speaker's factor lifted the message holding `words`.
  auto lifted = [&](const std::string& q, const std::string& words) {
    auto r = e->Retrieve(s, q, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return false;
    for (const auto& m : r->ranked) {
      if (m.text.find(words) != std::string::npos) return m.why.speaker;
    }
    ADD_FAILURE() << "no message holds '" << words << "' for " << q;
    return false;
  };
  // (Will's sushi message shares only "eat" with the question: Grace's
  // salad line, which holds "like" too, ranks above it on words alone.)
  EXPECT_TRUE(lifted("What does Will like to eat?", "sushi"));
  EXPECT_FALSE(lifted("What does Will like to eat?", "bake bread"));
  EXPECT_TRUE(lifted("and Will, what does he love eating?", "sushi"));
  EXPECT_TRUE(lifted("What does Grace like to eat?", "bake bread"));
  EXPECT_FALSE(lifted("What does Grace like to eat?", "sushi"));
  // A sentence's first word is the verb: no speaker is named.
  auto modal = e->Retrieve(s, "Will anyone eat sushi?", o);
  ASSERT_TRUE(modal.ok());
  for (const auto& m : modal->ranked) EXPECT_FALSE(m.why.speaker) << m.text;

  // An article of a speaker's name is no name: a title's "The" names no one.
  Scope oracle = UserScope("oracle");
  TurnInput t;
  t.user_text = "I like to eat sushi.";
  t.assistant_text = "The bakery sells bread.";
  t.user_name = "Ana";
  t.assistant_name = "The Oracle";
  t.event_time = MakeTimeMs(2025, 2, 1);
  ASSERT_TRUE(e->AddTurns(oracle, {t}).ok());
  auto title = e->Retrieve(oracle, "What did The Bakery sell?", o);
  ASSERT_TRUE(title.ok());
  ASSERT_FALSE(title->ranked.empty());
  for (const auto& m : title->ranked) EXPECT_FALSE(m.why.speaker) << m.text;
}

TEST_F(EngineTest, ContextRespectsTheBudget) {
  auto e = Open();
  Scope s = UserScope("alice");
  ASSERT_TRUE(e->AddTurns(s, SyntheticDialogue(60)).ok());
  ASSERT_TRUE(e->Maintain(&s).ok());
  for (int budget : {0, 100, 500, 1000}) {
    RetrieveOptions o;
    o.budget_tokens = budget;
    auto r = e->Retrieve(s, "trip to Japan", o);
    ASSERT_TRUE(r.ok());
    EXPECT_LE(r->context_tokens, std::max(budget, 0)) << budget;
  }
}

// The retrieval snapshots a process caches stay within their budget: the
// least recently used are dropped and rebuilt from the store when their scope
// is retrieved again, with the same context; the one in use is kept.
TEST_F(EngineTest, SnapshotCacheStaysWithinItsBudget) {
  EngineOptions o;
  o.snapshot_cache_mb = 1;
  auto e = Open(o);
  const int kScopes = 12;
  for (int u = 0; u < kScopes; ++u) {
    ASSERT_TRUE(e->AddTurns(UserScope("u" + std::to_string(u)), SyntheticDialogue(400)).ok());
  }
  ASSERT_TRUE(e->Maintain().ok());
  std::vector<std::string> first;
  for (int u = 0; u < kScopes; ++u) {
    auto r = e->Retrieve(UserScope("u" + std::to_string(u)), "weekend plans", {});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    first.push_back(r->context);
    const SnapshotCacheStats s = e->GetSnapshotCacheStats();
    EXPECT_TRUE(s.bytes <= s.budget_bytes || s.scopes == 1) << s.bytes << " bytes in " << s.scopes;
  }
  SnapshotCacheStats s = e->GetSnapshotCacheStats();
  EXPECT_EQ(s.budget_bytes, 1 << 20);
  EXPECT_GT(s.evictions, 0);
  EXPECT_LT(s.scopes, kScopes);
  EXPECT_GE(s.scopes, 1);
  // The latest is cached: retrieving it again drops nothing.
  const std::int64_t evicted = s.evictions;
  ASSERT_TRUE(e->Retrieve(UserScope("u" + std::to_string(kScopes - 1)), "weekend plans", {}).ok());
  EXPECT_EQ(e->GetSnapshotCacheStats().evictions, evicted);
  // The first was dropped: it is rebuilt, and says the same.
  auto again = e->Retrieve(UserScope("u0"), "weekend plans", {});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(first[0].empty());
  EXPECT_EQ(again->context, first[0]);
  // Erasure leaves the count true.
  ASSERT_TRUE(e->ForgetUser("default", "u0").ok());
  s = e->GetSnapshotCacheStats();
  EXPECT_TRUE(s.bytes <= s.budget_bytes || s.scopes == 1);
  EXPECT_GE(s.bytes, 0);
}

TEST_F(EngineTest, ScopesAreIsolated) {
  auto e = Open();
  Scope a = UserScope("alice"), b = UserScope("bob");
  TurnInput t;
  t.user_text = "My locker code is 4711.";
  t.assistant_text = "Noted.";
  ASSERT_TRUE(e->AddTurn(a, t).ok());
  auto r = e->Retrieve(b, "locker code", {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->context.find("4711"), std::string::npos);
  auto ra = e->Retrieve(a, "locker code", {});
  ASSERT_TRUE(ra.ok());
  EXPECT_NE(ra->context.find("4711"), std::string::npos);
}

TEST_F(EngineTest, InvalidInputIsRejectedWithTheField) {
  auto e = Open();
  Scope bad = UserScope("");
  TurnInput t;
  t.user_text = "hi";
  auto r = e->AddTurn(bad, t);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("user"), std::string::npos);

  Scope s = UserScope("alice");
  TurnInput empty;
  EXPECT_EQ(e->AddTurn(s, empty).status().code(), StatusCode::kInvalidArgument);
  TurnInput meta;
  meta.user_text = "x";
  meta.metadata = "[1,2]";
  auto m = e->AddTurn(s, meta);
  EXPECT_NE(m.status().message().find("metadata"), std::string::npos);
  TurnInput utf;
  utf.user_text = std::string("bad \xff\xfe bytes");
  EXPECT_EQ(e->AddTurn(s, utf).status().code(), StatusCode::kInvalidArgument);
  auto bad_query = e->Retrieve(s, std::string("where \xff\xfe"), {});
  ASSERT_FALSE(bad_query.ok());
  EXPECT_NE(bad_query.status().message().find("query: not valid UTF-8"), std::string::npos);
  Scope traversal = UserScope("../../etc/passwd");
  TurnInput ok;
  ok.user_text = "paths are never built from ids";
  EXPECT_TRUE(e->AddTurn(traversal, ok).ok());

  // A bad turn inside a batch writes nothing of the batch.
  auto batch = SyntheticDialogue(5);
  batch[3].user_text = batch[3].assistant_text = "";
  auto br = e->AddTurns(s, batch);
  ASSERT_FALSE(br.ok());
  EXPECT_NE(br.status().message().find("turns[3]"), std::string::npos);
  auto st = e->GetStats(&s);
  EXPECT_EQ(st->turns_admitted, 0);
}

// The statistics of a set of scopes (a tenant's, a user's, an assistant's)
// are those of its scopes added up, read at once, and no other tenant's.
// A tenant's users, paged by the store in byte order of their ids: "-" (an
// agent's own memories) is no user and a user's own memories no assistant;
// the filter folds ASCII case; `matched` counts every page's users.
TEST_F(EngineTest, TenantUsersArePagedByTheStore) {
  auto e = Open();
  for (const char* user : {"bob", "Bobby", "alice", "carol", "dave", "zoe"}) {
    ASSERT_TRUE(e->AddTurns(UserScope(user), SyntheticDialogue(1)).ok()) << user;
  }
  ASSERT_TRUE(e->AddTurns(UserScope("alice", "coder"), SyntheticDialogue(1)).ok());
  Scope elsewhere = UserScope("mallory");
  elsewhere.tenant = "acme";
  ASSERT_TRUE(e->AddTurns(elsewhere, SyntheticDialogue(1)).ok());
  MemoryAddOptions raw;
  raw.infer = false;
  MemoryScope agent_own;
  agent_own.agent = "bot";
  ASSERT_TRUE(e->AddMemoryText(agent_own, "Deploys run on Mondays", raw).ok());
  MemoryScope carol_own;
  carol_own.user = "carol";
  ASSERT_TRUE(e->AddMemoryText(carol_own, "Carol drinks tea", raw).ok());

  auto page = [&](const std::string& contains, const std::string& after, int limit) {
    auto p = e->ListTenantUsers("default", contains, after, limit);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    std::string out;
    for (const TenantUser& u : p.ok() ? p->users : std::vector<TenantUser>{}) {
      out += u.user + "[";
      for (const auto& a : u.assistants) out += a + ",";
      out += "] ";
    }
    if (p.ok()) out += std::to_string(p->matched) + (p->more ? " more" : " end");
    return out;
  };
  // Byte order: capitals first.
  EXPECT_EQ(page("", "", 3), "Bobby[assistant,] alice[assistant,coder,] bob[assistant,] 6 more");
  EXPECT_EQ(page("", "bob", 3), "carol[assistant,] dave[assistant,] zoe[assistant,] 6 end");
  EXPECT_EQ(page("", "dave", 3), "zoe[assistant,] 6 end");
  EXPECT_EQ(page("", "zoe", 3), "6 end");
  EXPECT_EQ(page("bob", "", 1), "Bobby[assistant,] 2 more");
  EXPECT_EQ(page("bob", "Bobby", 1), "bob[assistant,] 2 end");
  EXPECT_EQ(page("BoB", "", 5), "Bobby[assistant,] bob[assistant,] 2 end");  // folded alike
  EXPECT_EQ(page("nobody", "", 5), "0 end");
  auto acme = e->ListTenantUsers("acme", "", "", 10);
  ASSERT_TRUE(acme.ok());
  ASSERT_EQ(acme->users.size(), 1u);
  EXPECT_EQ(acme->users[0].user, "mallory");
  EXPECT_FALSE(e->ListTenantUsers("default", "", "", 0).ok());
  EXPECT_FALSE(e->ListTenantUsers("", "", "", 10).ok());
}

TEST_F(EngineTest, ScopeSetStatsAddUpTheSetsScopes) {
  auto e = Open();
  const Scope a = UserScope("alice"), a2 = UserScope("alice", "coder"),
              b = UserScope("bob", "coder");
  Scope other = UserScope("alice");
  other.tenant = "acme";
  ASSERT_TRUE(e->AddTurns(a, SyntheticDialogue(14)).ok());
  ASSERT_TRUE(e->AddTurns(a2, SyntheticDialogue(3)).ok());
  ASSERT_TRUE(e->AddTurns(b, SyntheticDialogue(5)).ok());
  ASSERT_TRUE(e->AddTurns(other, SyntheticDialogue(7)).ok());
  ASSERT_TRUE(e->Maintain(nullptr).ok());
  auto sum = [&](std::initializer_list<Scope> scopes) {
    Stats t;
    for (const Scope& sc : scopes) {
      auto st = e->GetStats(&sc);
      EXPECT_TRUE(st.ok());
      t.turns_admitted += st->turns_admitted;
      t.stm_turns += st->stm_turns;
      t.mtm_pages += st->mtm_pages;
      t.mtm_segments += st->mtm_segments;
      t.pending_jobs += st->pending_jobs;
    }
    return t;
  };
  struct Case {
    std::string tenant, user, assistant;
    Stats want;
    std::int64_t scopes;
  };
  const Case cases[] = {
      {"default", "", "", sum({a, a2, b}), 3},   {"default", "alice", "", sum({a, a2}), 2},
      {"default", "", "coder", sum({a2, b}), 2}, {"default", "bob", "coder", sum({b}), 1},
      {"default", "carol", "", Stats{}, 0},      {"acme", "", "", sum({other}), 1}};
  for (const Case& c : cases) {
    std::int64_t scopes = -1;
    auto st = e->GetScopeSetStats(c.tenant, c.user, c.assistant, &scopes);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_EQ(scopes, c.scopes) << c.tenant << "/" << c.user << "/" << c.assistant;
    EXPECT_EQ(st->turns_admitted, c.want.turns_admitted) << c.user << "/" << c.assistant;
    EXPECT_EQ(st->stm_turns, c.want.stm_turns) << c.user << "/" << c.assistant;
    EXPECT_EQ(st->mtm_pages, c.want.mtm_pages) << c.user << "/" << c.assistant;
    EXPECT_EQ(st->mtm_segments, c.want.mtm_segments) << c.user << "/" << c.assistant;
    EXPECT_EQ(st->pending_jobs, c.want.pending_jobs) << c.user << "/" << c.assistant;
  }
  EXPECT_GT(sum({a, a2, b}).mtm_pages, 0);  // the counts compared are not all zero
  // The same sets' scopes, listed.
  auto names = [&](const std::string& tenant, const std::string& user) {
    std::vector<std::string> out;
    auto listed = e->ListTenantScopes(tenant, user);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    for (const Scope& sc : listed.ok() ? *listed : std::vector<Scope>{})
      out.push_back(sc.tenant + "/" + sc.user + "/" + sc.assistant);
    return out;
  };
  EXPECT_EQ(names("default", ""),
            (std::vector<std::string>{"default/alice/assistant", "default/alice/coder",
                                      "default/bob/coder"}));
  EXPECT_EQ(names("default", "alice"),
            (std::vector<std::string>{"default/alice/assistant", "default/alice/coder"}));
  EXPECT_EQ(names("acme", ""), (std::vector<std::string>{"acme/alice/assistant"}));
  EXPECT_TRUE(names("default", "carol").empty());
  auto bad = e->GetScopeSetStats("default", std::string("\xff"), "", nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(EngineTest, ForgetUserErasesContentEverywhere) {
  const std::string marker = "zanzibarquokka";
  {
    auto e = Open();
    Scope a = UserScope("alice"), a2 = UserScope("alice", "coder"), b = UserScope("bob");
    auto turns = SyntheticDialogue(30);
    turns[2].user_text = "I love " + marker + " pastries and I live in " + marker + " town.";
    ASSERT_TRUE(e->AddTurns(a, turns).ok());
    ASSERT_TRUE(e->AddTurns(a2, SyntheticDialogue(3)).ok());
    ASSERT_TRUE(e->AddTurns(b, SyntheticDialogue(12)).ok());
    EngineOptions o;
    ASSERT_TRUE(e->Maintain(nullptr).ok());
    auto n = e->ForgetUser("default", "alice");
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(*n, 33);
    auto sa = e->GetStats(&a);
    EXPECT_EQ(sa->turns_admitted, 0);
    auto sb = e->GetStats(&b);
    EXPECT_EQ(sb->turns_admitted, 12);
  }
  // Nothing of the marker remains in any table (PostgreSQL), or in the
  // database file or its WAL (SQLite).
  if (testing::OnPostgres()) {
    EXPECT_EQ(testing::PgOccurrences(testing::StoreAt(dir_.File("engram.db")), marker), 0);
    return;
  }
  for (const char* f : {"engram.db", "engram.db-wal"}) {
    std::string bytes = testing::ReadFile(dir_.File(f));
    EXPECT_EQ(bytes.find(marker), std::string::npos) << f;
    EXPECT_EQ(bytes.find("zanzibarquokka"), std::string::npos) << f;
  }
}

TEST_F(EngineTest, ForgetUserRemovesTheEmbeddingCacheEntriesOfItsContent) {
  EngineOptions o;
  o.embedder = std::make_shared<testing::CountingEmbedder>();
  auto e = Open(o);
  Scope a = UserScope("alice"), b = UserScope("bob");
  ASSERT_TRUE(e->AddTurns(a, SyntheticDialogue(20)).ok());
  auto bob_turns = SyntheticDialogue(20);
  for (auto& t : bob_turns) t.user_text = "Bob: " + t.user_text;  // distinct texts
  ASSERT_TRUE(e->AddTurns(b, bob_turns).ok());
  ASSERT_TRUE(e->Maintain(nullptr).ok());
  ASSERT_TRUE(e->Retrieve(a, "a question that is never cached", {}).ok());
  auto count = [&] { return testing::CountStoreRows(dir_.File("engram.db"), "SELECT count(*) FROM embed_cache"); };
  const std::int64_t before = count();
  EXPECT_GE(before, 20);  // alice's and bob's pages (and facts)
  ASSERT_TRUE(e->ForgetUser("default", "alice").ok());
  const std::int64_t after = count();
  EXPECT_LT(after, before);
  EXPECT_GE(after, 10);  // bob's entries stay
}

TEST_F(EngineTest, BackgroundWorkerPromotes) {
  EngineOptions o;
  o.background_maintenance = true;
  auto e = Open(o);
  Scope s = UserScope("alice");
  ASSERT_TRUE(e->AddTurns(s, SyntheticDialogue(25)).ok());
  for (int i = 0; i < 100; ++i) {
    auto st = e->GetStats(&s);
    if (st->stm_turns == 10 && st->pending_jobs == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto st = e->GetStats(&s);
  EXPECT_EQ(st->stm_turns, 10);
  EXPECT_EQ(st->mtm_pages + st->archived_pages, 15);
}

}  // namespace
}  // namespace engram
