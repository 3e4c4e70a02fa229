// The fact memory's in-memory vector snapshots: search and the near-duplicate
// check see every write (incrementally published snapshots), expiry applies
// at query time, filtered searches are never short, narrower scopes span
// scope rows; and dialogue retrieval hides expired consolidated facts.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/clock.hpp"
#include "core/time.hpp"
#include "engram/engine.hpp"
#include "testing/dialogue.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

using testing::TempDir;

MemoryScope User(const std::string& u) {
  MemoryScope s;
  s.user = u;
  return s;
}

// Distinct pseudo-words, so that texts are neither exact nor near duplicates.
std::string Word(std::mt19937& rng) {
  static const char* kSyl[] = {"ka", "lo", "mi", "ru", "te", "zo", "pa", "ni", "su", "ve", "do", "ga"};
  std::string w;
  for (int i = 0; i < 4; ++i) w += kSyl[rng() % 12];
  return w;
}

class MemorySearchIndexTest : public ::testing::Test {
 protected:
  std::unique_ptr<Engine> Open(EngineOptions o = {}) {
    o.db_path = testing::StoreAt(dir_.File("engram.db"));
    o.clock = &clock_;
    auto e = Engine::Open(std::move(o));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  std::set<std::string> Found(Engine& e, const MemoryScope& s, const std::string& q, MemorySearchOptions o = {}) {
    auto r = e.SearchMemories(s, q, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::set<std::string> out;
    if (r.ok()) {
      for (const auto& m : *r) out.insert(m.memory);
    }
    return out;
  }
  TempDir dir_;
  FakeClock clock_{MakeTimeMs(2025, 3, 1)};
};

TEST_F(MemorySearchIndexTest, SearchAndDedupSeeEveryWrite) {
  auto e = Open();
  MemoryAddOptions raw;
  raw.infer = false;
  auto a = e->AddMemoryText(User("alice"), "Alice keeps bees in Sintra", raw);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Found(*e, User("alice"), "bees"), (std::set<std::string>{"Alice keeps bees in Sintra"}));  // loads
  ASSERT_TRUE(e->AddMemoryText(User("alice"), "Alice repairs old bees hives", raw).ok());        // published
  EXPECT_EQ(Found(*e, User("alice"), "bees").size(), 2u);
  MemoryUpdate u;
  u.text = "Alice keeps goats in Sintra";
  ASSERT_TRUE(e->UpdateMemory(User("alice"), a->results[0].id, u).ok());
  EXPECT_EQ(Found(*e, User("alice"), "goats Sintra").count("Alice keeps goats in Sintra"), 1u);
  EXPECT_EQ(Found(*e, User("alice"), "bees").count("Alice keeps bees in Sintra"), 0u);
  // Near duplicates (same words, other order: the same built-in vector, another
  // text hash): against the snapshot, and within one operation.
  auto near = e->AddMemoryText(User("alice"), "in Sintra Alice keeps goats", raw);
  ASSERT_TRUE(near.ok());
  EXPECT_EQ(near->results[0].event, "NOOP");
  EXPECT_EQ(near->results[0].id, a->results[0].id);
  auto both = e->AddMemory(User("alice"), {{"user", "Alice plays the cello on Sundays", ""},
                                          {"user", "on Sundays Alice plays the cello", ""}}, raw);
  ASSERT_TRUE(both.ok());
  ASSERT_EQ(both->results.size(), 2u);
  EXPECT_EQ(both->results[0].event, "ADD");
  EXPECT_EQ(both->results[1].event, "NOOP");
  EXPECT_EQ(both->results[1].id, both->results[0].id);
  // A deleted memory leaves search and no longer absorbs its duplicates.
  ASSERT_TRUE(e->DeleteMemory(User("alice"), both->results[0].id, "").ok());
  EXPECT_EQ(Found(*e, User("alice"), "cello Sundays").count("Alice plays the cello on Sundays"), 0u);
  auto again = e->AddMemoryText(User("alice"), "on Sundays Alice plays the cello", raw);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->results[0].event, "ADD");
  // A new engine (empty cache) sees the same.
  e.reset();
  e = Open();
  EXPECT_EQ(Found(*e, User("alice"), "cello Sundays").count("on Sundays Alice plays the cello"), 1u);
}

TEST_F(MemorySearchIndexTest, ExpiryAppliesAtQueryTimeWithoutAWrite) {
  auto e = Open();
  MemoryAddOptions raw;
  raw.infer = false;
  raw.expires_at = clock_.NowMs() + 10'000;
  ASSERT_TRUE(e->AddMemoryText(User("bob"), "Bob parks on level three", raw).ok());
  raw.expires_at.reset();
  ASSERT_TRUE(e->AddMemoryText(User("bob"), "Bob parks bikes at work", raw).ok());
  EXPECT_EQ(Found(*e, User("bob"), "parks").size(), 2u);
  clock_.Advance(20'000);  // no write: the snapshot's data_version is unchanged
  EXPECT_EQ(Found(*e, User("bob"), "parks"), (std::set<std::string>{"Bob parks bikes at work"}));
  MemorySearchOptions all;
  all.include_expired = true;
  EXPECT_EQ(Found(*e, User("bob"), "parks", all).size(), 2u);
  // The expired one no longer absorbs a near duplicate: it is renewed.
  auto renewed = e->AddMemoryText(User("bob"), "on level three Bob parks", raw);
  ASSERT_TRUE(renewed.ok());
  EXPECT_EQ(renewed->results[0].event, "ADD");
}

TEST_F(MemorySearchIndexTest, FilteredSearchIsNeverShort) {
  auto e = Open();
  std::mt19937 rng(5);
  std::vector<MemoryMessage> many;
  for (int i = 0; i < 1000; ++i) many.push_back({"user", "alpha " + Word(rng) + " " + Word(rng) + " " + Word(rng), ""});
  MemoryAddOptions raw;
  raw.infer = false;
  raw.metadata = R"({"category": "common"})";
  auto r = e->AddMemory(User("carol"), many, raw);
  ASSERT_TRUE(r.ok());
  raw.metadata = R"({"category": "rare"})";
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(e->AddMemoryText(User("carol"), "omega " + Word(rng) + " alpha " + Word(rng), raw).ok());
  }
  MemorySearchOptions o;
  o.top_k = 1;
  o.filters = R"({"category": "rare"})";
  auto hits = e->SearchMemories(User("carol"), "alpha", o);
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].memory.rfind("omega ", 0), 0u);
  o.top_k = 10;
  EXPECT_EQ(Found(*e, User("carol"), "alpha", o).size(), 3u);
  o.filters = R"({"category": "common"})";
  EXPECT_EQ(Found(*e, User("carol"), "alpha", o).size(), 10u);
}

TEST_F(MemorySearchIndexTest, NarrowerSearchSpansScopeRows) {
  auto e = Open();
  MemoryAddOptions raw;
  raw.infer = false;
  MemoryScope a1 = User("dana"), a2 = User("dana"), other = User("erin");
  a1.agent = "planner";
  a2.agent = "coder";
  a2.run = "r7";
  ASSERT_TRUE(e->AddMemoryText(a1, "Dana prefers tabs over spaces", raw).ok());
  ASSERT_TRUE(e->AddMemoryText(a2, "Dana prefers dark themes", raw).ok());
  ASSERT_TRUE(e->AddMemoryText(other, "Erin prefers light themes", raw).ok());
  EXPECT_TRUE(Found(*e, User("dana"), "prefers").empty());  // exact scope: none
  MemoryScope wide = User("dana");
  wide.include_narrower = true;
  EXPECT_EQ(Found(*e, wide, "prefers"),
            (std::set<std::string>{"Dana prefers tabs over spaces", "Dana prefers dark themes"}));
  EXPECT_EQ(Found(*e, a2, "prefers"), (std::set<std::string>{"Dana prefers dark themes"}));
}

// Chinese, Japanese and Thai are written without spaces between words: a
// word asked for is found inside a sentence that holds it (memory search and
// dialogue retrieval), and a sentence that does not hold it is not returned.
TEST_F(MemorySearchIndexTest, WordsOfScriptsWithoutSpacesAreFoundInsideSentences) {
  auto e = Open();
  MemoryAddOptions raw;
  raw.infer = false;
  const std::string coffee = "我每天早上喝两杯咖啡";   // I drink two cups of coffee every morning
  const std::string tea = "我妹妹在上海教中文";         // my sister teaches Chinese in Shanghai
  const std::string tokyo = "来月東京に引っ越します";   // I move to Tokyo next month
  const std::string thai = "ฉันแพ้ถั่วลิสง";               // I am allergic to peanuts
  for (const auto& t : {coffee, tea, tokyo, thai, std::string("I keep bees in Sintra")}) {
    ASSERT_TRUE(e->AddMemoryText(User("mei"), t, raw).ok()) << t;
  }
  auto first = [&](const std::string& q) {
    auto r = e->SearchMemories(User("mei"), q, {});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && !r->empty() ? r->front().memory : std::string();
  };
  EXPECT_EQ(first("咖啡"), coffee);
  EXPECT_EQ(first("喝咖啡"), coffee);
  EXPECT_EQ(first("上海"), tea);
  EXPECT_EQ(first("東京"), tokyo);
  EXPECT_EQ(first("ถั่วลิสง"), thai);
  EXPECT_EQ(first("bees"), "I keep bees in Sintra");
  EXPECT_EQ(Found(*e, User("mei"), "北京"), std::set<std::string>{});  // (Beijing: no memory says it)

  Scope dialogue{"default", "mei", "assistant"};
  TurnInput t;
  t.user_text = "周末我们去杭州看西湖";  // at the weekend we go to Hangzhou to see West Lake
  t.assistant_text = "听起来很棒";
  t.event_time = clock_.NowMs();
  ASSERT_TRUE(e->AddTurns(dialogue, testing::SyntheticDialogue(30)).ok());
  ASSERT_TRUE(e->AddTurns(dialogue, {t}).ok());
  ASSERT_TRUE(e->AddTurns(dialogue, testing::SyntheticDialogue(30, clock_.NowMs() + 3'600'000)).ok());
  auto r = e->Retrieve(dialogue, "西湖", {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->items.empty());
  EXPECT_NE(r->items.front().text.find("西湖"), std::string::npos) << r->context;
}

TEST_F(MemorySearchIndexTest, DialogueRetrievalHidesExpiredFacts) {
  EngineOptions o;
  o.heat_threshold = 0.5;
  auto e = Open(o);
  Scope dialogue{"default", "frank", "assistant"};
  ASSERT_TRUE(e->AddTurns(dialogue, testing::SyntheticDialogue(40)).ok());
  ASSERT_TRUE(e->Maintain(&dialogue).ok());
  MemoryScope same{"default", "frank", "assistant", "", false};
  MemoryListOptions lo;
  lo.limit = 1000;
  auto listed = e->ListMemories(same, lo);
  ASSERT_TRUE(listed.ok());
  ASSERT_FALSE(listed->items.empty());
  MemoryUpdate u;
  u.text = "Frank collects antique barometers from Gdansk";
  u.expires_at = clock_.NowMs() + 60'000;
  ASSERT_TRUE(e->UpdateMemory(same, listed->items.back().id, u).ok());
  auto r = e->Retrieve(dialogue, "antique barometers", {});
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->context.find("antique barometers from Gdansk"), std::string::npos);
  clock_.Advance(120'000);  // expires without any write
  auto r2 = e->Retrieve(dialogue, "antique barometers", {});
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->context.find("antique barometers"), std::string::npos);
  for (const auto& item : r2->items) EXPECT_EQ(item.text.find("barometers"), std::string::npos);
}

// Memories that score alike and were added within one millisecond come back
// in one order, the one they were added in (newest first), whatever their
// random ids: a search is repeatable.
TEST_F(MemorySearchIndexTest, EqualScoresKeepTheOrderOfAdding) {
  const std::vector<std::string> said = {"Zorblat likes tea", "Quixa likes tea", "Vemlo likes tea",
                                         "Drusk likes tea"};
  for (int run = 0; run < 3; ++run) {
    const std::string user = "tie" + std::to_string(run);
    auto e = Open();
    MemoryAddOptions raw;
    raw.infer = false;
    for (const auto& text : said)
      ASSERT_TRUE(e->AddMemoryText(User(user), text, raw).ok());  // one ms
    auto r = e->SearchMemories(User(user), "tea", {});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->size(), said.size());
    for (std::size_t i = 0; i < said.size(); ++i) {
      EXPECT_EQ((*r)[i].memory, said[said.size() - 1 - i]) << run;
      EXPECT_EQ((*r)[i].score, r->front().score) << (*r)[i].memory;  // they do tie
    }
  }
}

}  // namespace
}  // namespace engram
