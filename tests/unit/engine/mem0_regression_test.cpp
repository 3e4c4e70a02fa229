// One regression test per defect of Mem0 listed in
// ../shared/brief/mem0-facts.md ("Defects engram must not have", 1-11): the
// fact memory must never show them.
#include <gtest/gtest.h>

#include <algorithm>

#include <set>

#include "core/clock.hpp"
#include "core/time.hpp"
#include "engram/engine.hpp"
#include "testing/fakes.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

using testing::TempDir;

MemoryScope User(const std::string& u, const std::string& run = "") {
  MemoryScope s;
  s.user = u;
  s.run = run;
  return s;
}

MemoryAddOptions Raw() {
  MemoryAddOptions o;
  o.infer = false;
  return o;
}

class Mem0Regression : public ::testing::Test {
 protected:
  std::unique_ptr<Engine> Open(EngineOptions o = {}) {
    o.db_path = testing::StoreAt(dir_.File("engram.db"));
    if (!o.clock) o.clock = &clock_;
    auto e = Engine::Open(std::move(o));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  std::string Add(Engine& e, const MemoryScope& s, const std::string& text, MemoryAddOptions o = Raw()) {
    auto r = e.AddMemoryText(s, text, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || r->results.empty()) return "";
    return r->results.front().id;
  }
  std::int64_t Count(const std::string& sql) { return testing::CountStoreRows(dir_.File("engram.db"), sql); }
  TempDir dir_;
  FakeClock clock_{MakeTimeMs(2025, 3, 1)};
};

// 1. By-id operations check the caller's tenant and scope; otherwise NotFound,
// exactly as for an id that does not exist.
TEST_F(Mem0Regression, D1_ByIdOperationsCheckTheScope) {
  auto e = Open();
  const std::string id = Add(*e, User("alice"), "Alice's locker code is 4711");
  MemoryScope bob = User("bob");
  MemoryScope other_tenant = User("alice");
  other_tenant.tenant = "acme";
  MemoryScope alice_run = User("alice", "r1");
  for (const MemoryScope& s : {bob, other_tenant, alice_run}) {
    EXPECT_EQ(e->GetMemory(s, id).status().code(), StatusCode::kNotFound);
    EXPECT_EQ(e->MemoryHistory(s, id).status().code(), StatusCode::kNotFound);
    MemoryUpdate u;
    u.text = "hijacked";
    EXPECT_EQ(e->UpdateMemory(s, id, u).status().code(), StatusCode::kNotFound);
    EXPECT_EQ(e->DeleteMemory(s, id, "").code(), StatusCode::kNotFound);
    EXPECT_EQ(e->PurgeMemory(s, id).status().code(), StatusCode::kNotFound);
  }
  // Same message as an id that never existed: no existence leak.
  auto missing = e->GetMemory(bob, "m_0000000000000000");
  auto foreign = e->GetMemory(bob, id);
  EXPECT_EQ(missing.status().message().substr(0, 6), foreign.status().message().substr(0, 6));
  auto mine = e->GetMemory(User("alice"), id);
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(mine->memory, "Alice's locker code is 4711");
  EXPECT_EQ(mine->version, 1);
}

// 2. A user-level search sees exactly the user-level memories; narrower
// scopes only when asked.
TEST_F(Mem0Regression, D2_NoImplicitSupersetOfScopes) {
  auto e = Open();
  Add(*e, User("alice"), "Alice likes green tea");
  Add(*e, User("alice", "r1"), "Alice ordered green tea in run one");
  MemoryScope agent_level = User("alice");
  agent_level.agent = "planner";
  Add(*e, agent_level, "The planner noted green tea for Alice");
  auto only = e->SearchMemories(User("alice"), "green tea", {});
  ASSERT_TRUE(only.ok());
  ASSERT_EQ(only->size(), 1u);
  EXPECT_EQ(only->front().memory, "Alice likes green tea");
  auto list = e->ListMemories(User("alice"), {});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->items.size(), 1u);
  MemoryScope wide = User("alice");
  wide.include_narrower = true;
  auto all = e->SearchMemories(wide, "green tea", {});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
  // Never another user's, even when widening.
  Add(*e, User("bob"), "Bob likes green tea");
  auto again = e->SearchMemories(wide, "green tea", {});
  ASSERT_TRUE(again.ok());
  for (const auto& m : *again) EXPECT_EQ(m.user, "alice");
  auto run_only = e->ListMemories(User("alice", "r1"), {});
  ASSERT_TRUE(run_only.ok());
  ASSERT_EQ(run_only->items.size(), 1u);
  EXPECT_EQ(run_only->items[0].run, "r1");
}

// 3. Dedup against every live memory of the scope, raw adds included.
TEST_F(Mem0Regression, D3_DedupAgainstTheWholeScopeAlsoForRawAdds) {
  auto e = Open();
  const std::string first = Add(*e, User("alice"), "I love jazz and blues");
  for (int i = 0; i < 40; ++i) Add(*e, User("alice"), "Unrelated note number " + std::to_string(i) + " about topic " + std::to_string(i * 7));
  auto r = e->AddMemoryText(User("alice"), "  i LOVE jazz and blues!! ", Raw());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->results.size(), 1u);
  EXPECT_EQ(r->results[0].event, "NOOP");
  EXPECT_EQ(r->results[0].id, first);
  EXPECT_EQ(Count("SELECT count(*) FROM facts WHERE status = 'live'"), 41);
  // Another scope is not a duplicate.
  auto other = e->AddMemoryText(User("bob"), "I love jazz and blues", Raw());
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->results[0].event, "ADD");
}

// 3b. A memory whose embedding is as close to another's as a duplicate's is
// still not its duplicate when it denies it or names other numbers: the bag
// of hashed words of the built-in embedder (and many a model's vector)
// barely moves for "not", so the add would have been a NOOP and the fact lost.
TEST_F(Mem0Regression, D3_NegationsAndNumbersAreNeverDuplicates) {
  auto e = Open();
  const std::string allergic = Add(*e, User("alice"), "I am allergic to peanuts");
  // (Each of these is at cosine 1.0 from the claim with the built-in embedder.)
  for (const char* text : {"I am not allergic to peanuts", "I am allergic to peanuts no more",
                           "I am allergic to no peanuts"}) {
    auto r = e->AddMemoryText(User("alice"), text, Raw());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->results.size(), 1u);
    // (Two denials may be one another's duplicates; never the claim's.)
    EXPECT_NE(r->results[0].id, allergic) << text;
  }
  // (At cosine 0.96 from one another with the built-in embedder.)
  const std::string piece =
      "My daughter Emma has piano lessons with Mrs Novak every Tuesday afternoon at the music school near "
      "the park, and her recital piece this term is sonata number ";
  Add(*e, User("alice"), piece + "12");
  auto moved = e->AddMemoryText(User("alice"), piece + "13", Raw());
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->results[0].event, "ADD");
  // What only differs in case, spacing and punctuation still is one.
  auto again = e->AddMemoryText(User("alice"), "I am allergic to Peanuts!", Raw());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->results[0].event, "NOOP");
  EXPECT_EQ(again->results[0].id, allergic);
}

// 4. A contradiction makes a new version that supersedes the old one;
// history keeps both; one live fact.
TEST_F(Mem0Regression, D4_ContradictionsSupersedeInsteadOfPilingUp) {
  auto llm = std::make_shared<testing::ScriptedLlm>();
  EngineOptions o;
  o.llm = llm;
  auto e = Open(o);
  const std::string id = Add(*e, User("alice"), "Alice lives in Berlin");
  llm->Say(R"({"facts": [{"text": "Alice lives in Lisbon since May 2025", "attributed_to": "user",
               "event": "UPDATE", "id": ")" + id + R"("}]})");
  MemoryAddOptions infer;
  auto r = e->AddMemoryText(User("alice"), "I moved to Lisbon in May", infer);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->results.size(), 1u);
  EXPECT_EQ(r->results[0].event, "UPDATE");
  EXPECT_EQ(r->results[0].id, id);
  EXPECT_EQ(r->results[0].previous_memory, "Alice lives in Berlin");
  EXPECT_EQ(r->results[0].superseded_version, 1);
  EXPECT_FALSE(r->degraded);
  auto list = e->ListMemories(User("alice"), {});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0].memory, "Alice lives in Lisbon since May 2025");
  EXPECT_EQ(list->items[0].version, 2);
  auto h = e->MemoryHistory(User("alice"), id);
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 2u);
  EXPECT_EQ((*h)[1].event, "SUPERSEDE");
  EXPECT_EQ(*(*h)[1].old_text, "Alice lives in Berlin");
  EXPECT_EQ(*(*h)[1].new_text, "Alice lives in Lisbon since May 2025");
  // The prompt had the existing memory as context.
  ASSERT_FALSE(llm->requests.empty());
  EXPECT_NE(llm->requests.back().messages.back().content.find(id), std::string::npos);
}

// 5. The links (and entities) the model proposes are kept.
TEST_F(Mem0Regression, D5_ModelLinksAndEntitiesAreKept) {
  auto llm = std::make_shared<testing::ScriptedLlm>();
  EngineOptions o;
  o.llm = llm;
  auto e = Open(o);
  llm->Say(R"({"facts": [
      {"text": "Alice adopted a dog named Rex", "attributed_to": "user", "event": "ADD",
       "entities": [{"name": "Rex", "type": "pet"}]},
      {"text": "Alice walks Rex every morning in Hyde Park", "attributed_to": "user",
       "entities": [{"name": "Rex", "type": "pet"}, {"name": "Hyde Park", "type": "place"}]}],
     "links": [{"from": 1, "to": 0, "relation": "elaborates"}]})");
  auto r = e->AddMemoryText(User("alice"), "I adopted Rex; I walk him every morning in Hyde Park.", {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->results.size(), 2u);
  EXPECT_EQ(Count("SELECT count(*) FROM fact_links WHERE relation = 'elaborates' AND from_memory = '" +
                  r->results[1].id + "' AND to_memory = '" + r->results[0].id + "'"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM entities WHERE name = 'hyde park' AND type = 'place'"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM fact_entities fe JOIN entities e ON e.id = fe.entity_id WHERE e.name = 'rex'"), 2);
  // The entity is a search signal.
  MemorySearchOptions so;
  so.explain = true;
  auto s = e->SearchMemories(User("alice"), "Rex", so);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 2u);
  EXPECT_TRUE(s->front().score_details->from_entity);
}

// 6 (and 11b). A failed add reports an error and writes nothing: no partial
// rows, no silently dropped facts (malformed model JSON included).
TEST_F(Mem0Regression, D6_FailedAddsWriteNothingAndSaySo) {
  auto embedder = std::make_shared<testing::CountingEmbedder>();
  auto llm = std::make_shared<testing::ScriptedLlm>();
  EngineOptions o;
  o.embedder = embedder;
  o.llm = llm;
  auto e = Open(o);
  auto tables = [&] {
    return Count("SELECT (SELECT count(*) FROM facts) + (SELECT count(*) FROM facts_fts) + "
                 "(SELECT count(*) FROM fact_history) + (SELECT count(*) FROM fact_entities) + "
                 "(SELECT count(*) FROM fact_requests)");
  };
  ASSERT_EQ(tables(), 0);
  embedder->fail_from_call = 1;
  std::vector<MemoryMessage> msgs = {{"user", "Carol works at Initech", ""}, {"assistant", "Noted, Carol.", ""}};
  MemoryAddOptions raw = Raw();
  raw.idempotency_key = "k1";
  auto r = e->AddMemory(User("carol"), msgs, raw);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(tables(), 0);
  embedder->fail_from_call = 0;
  for (int i = 0; i < 3; ++i) llm->Say("Sure! Here are the facts: {\"facts\": [{\"txt\": broken");
  auto bad = e->AddMemory(User("carol"), msgs, {});
  EXPECT_EQ(bad.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(bad.status().message().find("invalid"), std::string::npos);
  EXPECT_EQ(tables(), 0);
  // The same key works once the failure is gone (the failed request left no record).
  auto ok = e->AddMemory(User("carol"), msgs, raw);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->results.size(), 2u);
  EXPECT_EQ(Count("SELECT count(*) FROM facts WHERE status = 'live'"), 2);
}

// 7. Scores are in [0, 1] and the threshold applies to the returned score.
TEST_F(Mem0Regression, D7_ThresholdAppliesToTheReturnedScore) {
  auto e = Open();
  Add(*e, User("alice"), "Alice plays the cello in an orchestra");
  Add(*e, User("alice"), "Alice practises the cello every evening");
  Add(*e, User("alice"), "Alice's favourite food is ramen");
  Add(*e, User("alice"), "The weather in Oslo was rainy");
  MemorySearchOptions all;
  all.explain = true;
  auto r = e->SearchMemories(User("alice"), "cello orchestra", all);
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->size(), 2u);
  for (const auto& m : *r) {
    EXPECT_GE(m.score, 0.0);
    EXPECT_LE(m.score, 1.0);
    const auto& d = *m.score_details;
    // `semantic` (built-in word vectors) shares the vector slot: the larger counts.
    EXPECT_NEAR(m.score, 0.55 * std::max(d.vector, d.semantic) + 0.30 * d.lexical + 0.15 * d.entity, 1e-9);
  }
  const double cut = ((*r)[0].score + (*r)[1].score) / 2;
  MemorySearchOptions th;
  th.threshold = cut;
  auto above = e->SearchMemories(User("alice"), "cello orchestra", th);
  ASSERT_TRUE(above.ok());
  ASSERT_EQ(above->size(), 1u);
  EXPECT_DOUBLE_EQ(above->front().score, (*r)[0].score);
  th.threshold = 1.5;
  EXPECT_EQ(e->SearchMemories(User("alice"), "cello", th).status().code(), StatusCode::kInvalidArgument);
}

// 8. The lexical signal keeps gpt-4, node.js, e-mail and works on non-English text.
TEST_F(Mem0Regression, D8_LexicalKeepsCompoundsAndNonEnglish) {
  auto e = Open();
  Add(*e, User("dev"), "The service calls gpt-4 through a node.js proxy");
  Add(*e, User("dev"), "Send the e-mail report on Fridays");
  Add(*e, User("dev"), "Ich wohne seit Jahren in München");
  Add(*e, User("dev"), "我喜欢喝绿茶");
  Add(*e, User("dev"), "Plain unrelated sentence about gardening");
  MemorySearchOptions o;
  o.explain = true;
  struct Case { const char* query; const char* expect; };
  for (Case c : {Case{"gpt-4", "gpt-4"}, Case{"node.js", "node.js"}, Case{"e-mail", "e-mail"},
                 Case{"München", "München"}, Case{"绿茶", "绿茶"}}) {
    auto r = e->SearchMemories(User("dev"), c.query, o);
    ASSERT_TRUE(r.ok()) << c.query;
    ASSERT_FALSE(r->empty()) << c.query;
    EXPECT_NE(r->front().memory.find(c.expect), std::string::npos) << c.query;
    EXPECT_TRUE(r->front().score_details->from_lexical) << c.query;
    EXPECT_GT(r->front().score_details->lexical, 0.0) << c.query;
  }
}

// 9. Expiry is part of the query (results are never short) and lists paginate.
TEST_F(Mem0Regression, D9_ExpiryInsideTheQueryAndPagination) {
  auto e = Open();
  const TimeMs soon = clock_.NowMs() + 1000;
  static const char* kPlaces[] = {"Kyoto", "Osaka", "Nara", "Sapporo", "Sendai", "Kobe", "Nagoya", "Fukuoka",
                                  "Hiroshima", "Kanazawa", "Nikko", "Hakone", "Kamakura", "Okinawa", "Yokohama",
                                  "Matsumoto", "Takayama", "Beppu", "Otaru", "Hakodate", "Kochi", "Naoshima",
                                  "Miyajima", "Ise", "Koyasan", "Kagoshima", "Nagasaki", "Kumamoto", "Aomori",
                                  "Tottori"};
  static const char* kDoings[] = {"temples", "ramen", "hiking", "museums", "onsen", "markets"};
  for (int i = 0; i < 30; ++i) {
    MemoryAddOptions o = Raw();
    if (i < 20) o.expires_at = soon;
    Add(*e, User("alice"), std::string("On the trip to Japan Alice saw ") + kPlaces[i] + " and loved its " +
                               kDoings[i % 6] + " " + std::to_string(i * 37), o);
  }
  // Expire the first 20 by moving time (they were given an expiry above).
  clock_.Advance(5000);
  MemorySearchOptions so;
  so.top_k = 10;
  auto r = e->SearchMemories(User("alice"), "trip to Japan", so);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 10u);
  for (const auto& m : *r) EXPECT_FALSE(m.expired);
  so.top_k = 100;
  auto live = e->SearchMemories(User("alice"), "trip to Japan", so);
  EXPECT_EQ(live->size(), 10u);
  so.include_expired = true;
  auto all = e->SearchMemories(User("alice"), "trip to Japan", so);
  EXPECT_EQ(all->size(), 30u);
  // get shows an expired memory with its expiry.
  auto page = e->ListMemories(User("alice"), {"", "", 1000, true});
  ASSERT_TRUE(page.ok());
  int expired = 0;
  for (const auto& m : page->items) {
    if (!m.expired) continue;
    ++expired;
    auto g = e->GetMemory(User("alice"), m.id);
    ASSERT_TRUE(g.ok());
    EXPECT_TRUE(g->expired);
    EXPECT_EQ(*g->expires_at, soon);
  }
  EXPECT_EQ(expired, 20);
  // Pagination over the 10 unexpired ones, 3 per page.
  std::set<std::string> seen;
  std::string cursor;
  int pages = 0;
  do {
    auto p = e->ListMemories(User("alice"), {"", cursor, 3, false});
    ASSERT_TRUE(p.ok());
    for (const auto& m : p->items) EXPECT_TRUE(seen.insert(m.id).second);
    cursor = p->next_cursor;
    ++pages;
  } while (!cursor.empty() && pages < 10);
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(pages, 4);
}

// 10. The store is SQLite in WAL mode with indexes on the fact tables.
TEST_F(Mem0Regression, D10_WalAndIndexes) {
  auto e = Open();
  Add(*e, User("alice"), "Alice reads science fiction");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(dir_.File("engram.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
  for (const char* index : {"facts_dedup", "facts_versions", "facts_list", "fact_history_memory",
                            "fact_entities_entity", "fact_links_to"}) {
    EXPECT_EQ(Count(std::string("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = '") + index + "'"), 1)
        << index;
  }
}

// 11a. delete_all deletes exactly the scope asked for, and needs one.
TEST_F(Mem0Regression, D11_DeleteAllIsExact) {
  auto e = Open();
  Add(*e, User("alice"), "Alice note one");
  Add(*e, User("alice"), "Alice note two");
  Add(*e, User("alice", "r1"), "Alice run note");
  Add(*e, User("bob"), "Bob note");
  auto n = e->DeleteAllMemories(User("alice"), "test");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2);
  EXPECT_EQ(e->ListMemories(User("alice", "r1"), {})->items.size(), 1u);
  EXPECT_EQ(e->ListMemories(User("bob"), {})->items.size(), 1u);
  MemoryScope none;
  EXPECT_EQ(e->DeleteAllMemories(none, "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Count("SELECT count(*) FROM facts WHERE status = 'live'"), 2);
}

}  // namespace
}  // namespace engram
