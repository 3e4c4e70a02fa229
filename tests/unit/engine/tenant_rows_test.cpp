// Every row names its tenant (schema version 3): after a realistic workload
// of two tenants through the engine (admissions with and without idempotency
// keys, promotion, consolidation, retrieval, memories with entities, links
// and new versions, idempotent memory adds, jobs, the embedding cache,
// receipts and their compaction, an API key, a purge and an erasure), every
// row of every table that holds tenant data carries the tenant of its scope,
// never an empty one. Runs on both backends (the conformance registration).
#include <gtest/gtest.h>

#include <set>

#include "core/clock.hpp"
#include "core/time.hpp"
#include "engram/engine.hpp"
#include "store/api_keys.hpp"
#include "testing/dialogue.hpp"
#include "testing/fakes.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

constexpr TimeMs kDay = 24ll * 3600 * 1000;

// One memory add whose model reply names entities and a link.
void AddLinkedMemories(Engine& e, testing::ScriptedLlm& llm, const MemoryScope& s, const std::string& key) {
  llm.Say(R"({"facts": [
      {"text": "Alice adopted a dog named Rex", "attributed_to": "user", "event": "ADD",
       "entities": [{"name": "Rex", "type": "pet"}]},
      {"text": "Alice walks Rex every morning in Hyde Park", "attributed_to": "user",
       "entities": [{"name": "Rex", "type": "pet"}, {"name": "Hyde Park", "type": "place"}]}],
     "links": [{"from": 1, "to": 0, "relation": "elaborates"}]})");
  MemoryAddOptions o;
  o.idempotency_key = key;
  auto r = e.AddMemoryText(s, "I adopted Rex; I walk him every morning in Hyde Park.", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->results.size(), 2u);
  // The same request again is answered from its idempotency record.
  auto again = e.AddMemoryText(s, "I adopted Rex; I walk him every morning in Hyde Park.", o);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  // A new version of the first memory (its entities go with it).
  MemoryUpdate u;
  u.text = "Alice adopted a dog named Rex in March";
  ASSERT_TRUE(e.UpdateMemory(s, r->results[0].id, u).ok());
}

TEST(TenantRows, EveryRowCarriesTheTenantOfItsScope) {
  testing::TempDir dir;
  FakeClock clock{MakeTimeMs(2025, 3, 1)};
  auto llm = std::make_shared<testing::ScriptedLlm>();
  auto embedder = std::make_shared<testing::CountingEmbedder>();  // not built-in: the embedding cache is used
  EngineOptions o;
  o.db_path = testing::StoreAt(dir.File("engram.db"));
  o.clock = &clock;
  o.llm = llm;
  o.embedder = embedder;
  o.heat_threshold = 0.0;  // consolidate everything: facts and profile too
  auto opened = Engine::Open(o);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Engine& e = **opened;

  // The same user and assistant ids under both tenants.
  for (const std::string tenant : {"acme", "globex"}) {
    const Scope s{tenant, "alice", "assistant"};
    AdmitOptions keyed;
    keyed.idempotency_key = "batch-1";
    const auto turns = testing::SyntheticDialogue(30);
    ASSERT_TRUE(e.AddTurns(s, turns, keyed).ok());
    ASSERT_TRUE(e.AddTurns(s, turns, keyed).ok());  // a retry: nothing admitted
    ASSERT_TRUE(e.Maintain(&s).ok());
    ASSERT_TRUE(e.Retrieve(s, "Which instrument am I learning?", {}).ok());
    MemoryScope m;
    m.tenant = tenant;
    m.user = "alice";
    AddLinkedMemories(e, *llm, m, "add-1");
    MemoryAddOptions raw;
    raw.infer = false;
    auto purged = e.AddMemoryText(m, "My locker code at " + tenant + " is 4711", raw);
    ASSERT_TRUE(purged.ok()) << purged.status().ToString();
    ASSERT_TRUE(e.PurgeMemory(m, purged->results.at(0).id).ok());
    // A user who is then forgotten.
    const Scope gone{tenant, "bob", "assistant"};
    ASSERT_TRUE(e.AddTurns(gone, testing::SyntheticDialogue(12)).ok());
    ASSERT_TRUE(e.Maintain(&gone).ok());
    ASSERT_TRUE(e.ForgetUser(tenant, "bob").ok());
  }
  // Receipts older than the retention become per-day counts; newer ones stay.
  clock.Advance(40 * kDay);
  for (const std::string tenant : {"acme", "globex"}) {
    const Scope s{tenant, "alice", "assistant"};
    ASSERT_TRUE(e.AddTurns(s, testing::SyntheticDialogue(14, clock.NowMs())).ok());
    ASSERT_TRUE(e.Maintain(&s).ok());
  }
  ASSERT_TRUE(e.CompactReceipts(30).ok());
  {
    auto db = sql::Db::Open(o.db_path, {});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    store::ApiKeyRow key;
    key.id = "k_acme";
    key.tenant = "acme";
    key.role = "admin";
    key.hash = "00";
    key.created_at = clock.NowMs();
    ASSERT_TRUE(store::InsertApiKey(db->get(), key).ok());
  }
  opened->reset();

  auto db = sql::Db::Open(o.db_path, {});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  const auto checks = testing::CheckTenants(db->get());
  ASSERT_EQ(checks.size(), testing::TenantTables().size());
  for (const auto& c : checks) {
    EXPECT_GT(c.rows, 0) << c.table << " is not exercised by the workload";
    EXPECT_EQ(c.wrong, 0) << c.table << ": rows with an empty tenant or not their scope's";
  }
  // Both tenants have rows in every table of the workload (the API key is acme's only).
  for (const auto& t : testing::TenantTables()) {
    if (std::string(t.name) == "api_keys") continue;
    EXPECT_EQ(testing::CountStoreRows(dir.File("engram.db"),
                                      std::string("SELECT count(DISTINCT tenant) FROM ") + t.name), 2)
        << t.name;
  }
  // The forgotten users left nothing behind, in either tenant.
  EXPECT_EQ(testing::CountStoreRows(dir.File("engram.db"), "SELECT count(*) FROM scopes WHERE user_id = 'bob'"), 0);
}

}  // namespace
}  // namespace engram
