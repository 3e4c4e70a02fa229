// Schema version 3: every table that holds tenant data is keyed by tenant.
// On both backends every table but meta has a NOT NULL tenant column; on
// PostgreSQL every primary key and unique index leads with tenant and every
// foreign key goes through it (what a distributed PostgreSQL needs to shard
// by tenant), read from the catalogs of a new store and of a migrated one; a
// version 2 store with the data of two tenants migrates to version 3 with
// every row's tenant filled and its data intact, is then the same schema as a
// new store, and a newer version is still refused.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "store/embed_cache.hpp"
#include "store/fulltext.hpp"
#include "store/open.hpp"
#include "store/schema.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram::store {
namespace {

std::int64_t Int(sql::Db* db, const std::string& q) {
  auto st = db->Prepare(q);
  EXPECT_TRUE(st.ok()) << q << ": " << st.status().ToString();
  if (!st.ok()) return -1;
  auto row = (*st)->Step();
  EXPECT_TRUE(row.ok()) << q << ": " << row.status().ToString();
  const std::int64_t v = row.ok() && *row ? (*st)->Int(0) : -1;
  (*st)->Reset();
  return v;
}

std::string Text(sql::Db* db, const std::string& q) {
  auto st = db->Prepare(q);
  EXPECT_TRUE(st.ok()) << q << ": " << st.status().ToString();
  if (!st.ok()) return "";
  auto row = (*st)->Step();
  EXPECT_TRUE(row.ok()) << q << ": " << row.status().ToString();
  const std::string v = row.ok() && *row ? (*st)->Text(0) : "";
  (*st)->Reset();
  return v;
}

// Every row of a query, its columns joined by '|'.
std::vector<std::string> Rows(sql::Db* db, const std::string& q, int columns) {
  std::vector<std::string> out;
  auto st = db->Prepare(q);
  EXPECT_TRUE(st.ok()) << q << ": " << st.status().ToString();
  if (!st.ok()) return out;
  for (;;) {
    auto row = (*st)->Step();
    EXPECT_TRUE(row.ok()) << q << ": " << row.status().ToString();
    if (!row.ok() || !*row) break;
    std::string line;
    for (int c = 0; c < columns; ++c) {
      line += (c ? "|" : "") + ((*st)->IsNull(c) ? std::string("NULL") : (*st)->Text(c));
    }
    out.push_back(line);
  }
  (*st)->Reset();
  return out;
}

void Exec(sql::Db* db, const std::string& q) {
  Status st = db->Exec(q);
  ASSERT_TRUE(st.ok()) << q << ": " << st.ToString();
}

void Blob(sql::Db* db, const std::string& q, const std::vector<float>& v) {
  auto st = db->Prepare(q);
  ASSERT_TRUE(st.ok()) << q << ": " << st.status().ToString();
  ASSERT_TRUE((*st)->BindFloats(1, v).Run().ok()) << q;
}

std::unique_ptr<sql::Db> Raw(const std::string& location) {
  auto db = sql::Db::Open(location, {});
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(db).value() : nullptr;
}

std::unique_ptr<sql::Db> Writer(const std::string& location) {
  StoreOpenOptions o;
  o.now_ms = 1;
  auto db = OpenWriter(location, o);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(db).value() : nullptr;
}

// The rows of a version 2 store (its columns, no tenant but the scopes'):
// scopes 1 (acme) and 2 (globex), each with turns in STM and in a page, a
// segment, term statistics, a profile slot, a fact with history, an entity
// and a link, idempotency records, a job, full-text rows; receipts, an API
// key, and `cache_rows` embedding-cache entries.
void FillV2(sql::Db* db, int cache_rows) {
  auto txn = sql::Txn::Begin(db);
  ASSERT_TRUE(txn.ok()) << txn.status().ToString();
  Exec(db, "INSERT INTO scopes(id, tenant, user_id, assistant_id, created_at) VALUES "
           "(1, 'acme', 'alice', 'a', 1), (2, 'globex', 'alice', 'a', 2)");
  const std::vector<float> v = {0.5f, -0.25f, 1.0f, 0.0f};
  for (int s = 1; s <= 2; ++s) {
    const std::string id = std::to_string(s), base = std::to_string(s * 10);
    const std::string word = s == 1 ? "tokyo" : "lisbon";
    Exec(db, "INSERT INTO turns(id, scope_id, seq, user_text, assistant_text, event_time, ingest_time) VALUES (" +
                 base + ", " + id + ", 1, 'I moved to " + word + "', 'Nice', 1, 1), (" + base + " + 1, " + id +
                 ", 2, 'Still in STM', 'ok', 2, 2)");
    Exec(db, "INSERT INTO turns_fts(rowid, scope, terms) VALUES (" + base + ", 's" + id + "', 'move " + word +
                 "'), (" + base + " + 1, 's" + id + "', 'still stm')");
    Blob(db, "INSERT INTO segments(id, scope_id, summary, keywords, embedding, emb_sum, page_count, last_access, "
             "created_at, updated_at) VALUES (" + base + ", " + id + ", 'Moving', '[]', ?1, ?1, 1, 1, 1, 1)", v);
    Exec(db, "INSERT INTO segments_fts(rowid, scope, terms) VALUES (" + base + ", 's" + id + "', 'move')");
    Blob(db, "INSERT INTO pages(id, scope_id, turn_id, segment_id, chain_summary, keywords, embedding, created_at) "
             "VALUES (" + base + ", " + id + ", " + base + ", " + base + ", '', '[]', ?1, 1)", v);
    Exec(db, "UPDATE turns SET page_id = " + base + " WHERE id = " + base);
    Exec(db, "UPDATE scopes SET next_seq = 3, stm_count = 1, chain_page_id = " + base + " WHERE id = " + id);
    Exec(db, "INSERT INTO scope_terms(scope_id, term, df) VALUES (" + id + ", 'move', 1), (" + id + ", '" + word +
                 "', 1)");
    Exec(db, "INSERT INTO profile_slots(scope_id, dimension, value, evidence, updated_at) VALUES (" + id +
                 ", 'home', '" + word + "', '[" + base + "]', 1)");
    Blob(db, "INSERT INTO facts(id, scope_id, memory_id, user_id, kind, text, norm_hash, embedding, event_time, "
             "record_time, created_at, updated_at) VALUES (" + base + ", " + id + ", 'm_" + base +
             "', 'alice', 'memory', 'Alice lives in " + word + "', " + base + ", ?1, 1, 1, 1, 1)", v);
    Exec(db, "INSERT INTO facts_fts(rowid, scope, terms) VALUES (" + base + ", 's" + id + "', 'alic live " + word +
                 "')");
    Exec(db, "INSERT INTO fact_history(scope_id, memory_id, fact_id, version, event, new_text, at) VALUES (" + id +
                 ", 'm_" + base + "', " + base + ", 1, 'ADD', 'Alice lives in " + word + "', 1)");
    Exec(db, "INSERT INTO entities(id, scope_id, name, type) VALUES (" + base + ", " + id + ", '" + word +
                 "', 'place')");
    Exec(db, "INSERT INTO fact_entities(fact_id, entity_id) VALUES (" + base + ", " + base + ")");
    Exec(db, "INSERT INTO fact_links(scope_id, from_memory, to_memory, relation, created_at) VALUES (" + id +
                 ", 'm_" + base + "', 'm_" + base + "', 'self', 1)");
    Exec(db, "INSERT INTO fact_requests(scope_id, user_id, agent_id, run_id, idempotency_key, events, created_at) "
             "VALUES (" + id + ", 'alice', '', '', 'k', '[]', 1)");
    Exec(db, "INSERT INTO turn_requests(scope_id, idempotency_key, fingerprint, first_seq, turns, created_at) "
             "VALUES (" + id + ", 'k', 7, 1, 2, 1)");
    Exec(db, "INSERT INTO jobs(scope_id, kind, status, created_at, updated_at) VALUES (" + id +
                 ", 'promote', 'pending', 1, 1)");
  }
  Exec(db, "INSERT INTO receipts(run_id, tenant, user_scope, assistant_scope, memory_kind, memory_id, version, "
           "source_version, from_tier, to_tier, status, at_utc) VALUES ('r', 'acme', 'alice', 'a', 'turn', 10, 1, "
           "'', 'input', 'stm', 'committed', 1)");
  Exec(db, "INSERT INTO receipt_days(day, tenant, user_scope, assistant_scope, memory_kind, from_tier, to_tier, "
           "status, receipts, first_at, last_at) VALUES (1, 'globex', 'alice', 'a', 'turn', 'input', 'stm', "
           "'committed', 3, 1, 2)");
  Exec(db, "INSERT INTO api_keys(id, tenant, role, hash, created_at) VALUES ('k1', 'acme', 'admin', 'ab', 1)");
  for (int i = 0; i < cache_rows; ++i) {
    Blob(db, "INSERT INTO embed_cache(model, text_hash, dim, vector) VALUES ('m', " + std::to_string(i + 1) +
                 ", 4, ?1)", v);
  }
  ASSERT_TRUE((*txn)->Commit().ok());
}

// Rows per table (every table but meta).
std::map<std::string, std::int64_t> Counts(sql::Db* db) {
  std::map<std::string, std::int64_t> out;
  for (const auto& t : testing::TenantTables()) out[t.name] = Int(db, std::string("SELECT count(*) FROM ") + t.name);
  return out;
}

// A version 2 store (the first schema and the migrations up to 2, as that
// engram created it) at a new location of the backend.
std::string V2Store(const std::string& backend, const std::string& dir, int cache_rows, bool two_tenants = true) {
  const std::string location = testing::FreshStore(backend, dir);
  auto db = Raw(location);
  if (!db) return "";
  Status st = CreateSchemaAtVersion(db.get(), 2, 1);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(*GetMeta(db.get(), "schema_version"), "2");
  EXPECT_EQ(Int(db.get(), backend == "postgres"
                              ? "SELECT count(*) FROM information_schema.columns WHERE table_schema = "
                                "current_schema() AND column_name = 'tenant'"
                              : "SELECT count(*) FROM sqlite_schema m JOIN pragma_table_info(m.name) p "
                                "WHERE m.type = 'table' AND p.name = 'tenant'"),
            4)
      << "version 2: only scopes, receipts, receipt_days and api_keys name the tenant";
  FillV2(db.get(), cache_rows);
  if (!two_tenants) Exec(db.get(), "UPDATE scopes SET tenant = 'acme', user_id = 'u' || id");
  return location;
}

class TenantSchemaTest : public ::testing::TestWithParam<std::string> {
 protected:
  bool pg() const { return GetParam() == "postgres"; }
  testing::TempDir dir_;
};

// Every table but meta has a tenant column that must be set.
TEST_P(TenantSchemaTest, EveryTableButMetaHasATenantColumn) {
  auto db = Writer(testing::FreshStore(GetParam(), dir_.path()));
  ASSERT_TRUE(db);
  EXPECT_EQ(*GetMeta(db.get(), "schema_version"), std::to_string(kSchemaVersion));
  const std::vector<std::string> tables =
      Rows(db.get(), pg() ? "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                            "current_schema() ORDER BY 1"
                          : "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                            "AND name NOT LIKE '%_fts_%' ORDER BY 1",
           1);
  std::set<std::string> want;
  for (const auto& t : testing::TenantTables()) want.insert(t.name);
  want.insert("meta");
  EXPECT_EQ(std::set<std::string>(tables.begin(), tables.end()), want);
  for (const auto& t : tables) {
    const std::string notnull =
        pg() ? Text(db.get(), "SELECT is_nullable FROM information_schema.columns WHERE table_schema = "
                              "current_schema() AND table_name = '" + t + "' AND column_name = 'tenant'")
             : Text(db.get(), "SELECT CASE WHEN \"notnull\" = 1 OR '" + t + "' LIKE '%_fts' THEN 'NO' ELSE 'YES' "
                              "END FROM pragma_table_info('" + t + "') WHERE name = 'tenant'");
    if (t == "meta") {
      EXPECT_EQ(notnull, "") << "meta is global";
    } else {
      EXPECT_EQ(notnull, "NO") << t << ": tenant is missing or nullable";
    }
  }
}

// The PostgreSQL keys lead with tenant; the foreign keys go through it.
void ExpectKeysLeadWithTenant(sql::Db* db) {
  // Every primary key and unique index (unique constraints are unique
  // indexes) of every table but meta: its first column.
  const auto keys = Rows(db,
                         "SELECT c.relname, i.relname, a.attname FROM pg_index x "
                         "JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid "
                         "JOIN pg_namespace n ON n.oid = c.relnamespace "
                         "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = x.indkey[0] "
                         "WHERE n.nspname = current_schema() AND (x.indisprimary OR x.indisunique) "
                         "ORDER BY 1, 2",
                         3);
  int checked = 0, primary = 0;
  for (const auto& k : keys) {
    const auto bar1 = k.find('|'), bar2 = k.find('|', bar1 + 1);
    const std::string table = k.substr(0, bar1), index = k.substr(bar1 + 1, bar2 - bar1 - 1);
    const std::string first = k.substr(bar2 + 1);
    if (table == "meta") continue;
    ++checked;
    if (index == table + "_pkey") ++primary;
    EXPECT_EQ(first, "tenant") << table << "." << index << " does not lead with tenant";
  }
  EXPECT_EQ(primary, static_cast<int>(testing::TenantTables().size())) << "a table without a primary key";
  EXPECT_GE(checked, 30);
  // Every foreign key, on both sides.
  const auto fks = Rows(db,
                        "SELECT r.conrelid::regclass::text, r.conname, "
                        "(SELECT count(*) FROM pg_attribute a WHERE a.attrelid = r.conrelid AND "
                        "a.attnum = ANY(r.conkey) AND a.attname = 'tenant') + "
                        "(SELECT count(*) FROM pg_attribute a WHERE a.attrelid = r.confrelid AND "
                        "a.attnum = ANY(r.confkey) AND a.attname = 'tenant') "
                        "FROM pg_constraint r JOIN pg_namespace n ON n.oid = r.connamespace "
                        "WHERE n.nspname = current_schema() AND r.contype = 'f' ORDER BY 1, 2",
                        3);
  for (const auto& f : fks) {
    EXPECT_EQ(f.substr(f.rfind('|') + 1), "2") << f << ": a foreign key that does not go through tenant";
  }
  EXPECT_EQ(fks.size(), 8u);  // turns, segments, pages (3), profile_slots, facts, jobs
  // Lookups that do not name the tenant keep an index (by id, memory id, scope).
  for (const char* index : {"scopes_id", "turns_id", "turns_scope", "pages_id", "segments_id", "facts_id",
                            "facts_memory", "entities_id", "jobs_id", "api_keys_id", "turns_fts_rowid"}) {
    EXPECT_EQ(Int(db, std::string("SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND "
                                  "indexname = '") + index + "'"),
              1)
        << index;
  }
}

TEST(TenantKeysTest, PostgresKeysLeadWithTenantInANewStore) {
  testing::TempDir dir;
  auto db = Writer(testing::FreshStore("postgres", dir.path()));
  ASSERT_TRUE(db);
  ExpectKeysLeadWithTenant(db.get());
}

TEST(TenantKeysTest, PostgresKeysLeadWithTenantInAMigratedStore) {
  testing::TempDir dir;
  const std::string location = V2Store("postgres", dir.path(), 2);
  ASSERT_FALSE(location.empty());
  auto db = Writer(location);
  ASSERT_TRUE(db);
  ExpectKeysLeadWithTenant(db.get());
}

// The shape of a store's schema from its catalog: columns (with type,
// nullability, default), indexes and constraints.
std::vector<std::string> Shape(sql::Db* db) {
  if (db->dialect() == sql::Dialect::kSqlite) {
    auto out = Rows(db, "SELECT type, name, coalesce(sql, '') FROM sqlite_schema ORDER BY name", 3);
    auto cols = Rows(db, "SELECT m.name, p.cid, p.name, p.type, p.\"notnull\", coalesce(p.dflt_value, '') "
                         "FROM sqlite_schema m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' "
                         "ORDER BY 1, 2",
                     6);
    out.insert(out.end(), cols.begin(), cols.end());
    return out;
  }
  auto out = Rows(db, "SELECT table_name, ordinal_position, column_name, data_type, is_nullable, "
                      "coalesce(column_default, '') FROM information_schema.columns "
                      "WHERE table_schema = current_schema() ORDER BY 1, 2",
                  6);
  auto idx = Rows(db, "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1", 2);
  auto con = Rows(db, "SELECT r.conrelid::regclass::text, r.conname, pg_get_constraintdef(r.oid) "
                      "FROM pg_constraint r JOIN pg_namespace n ON n.oid = r.connamespace "
                      "WHERE n.nspname = current_schema() ORDER BY 1, 2",
                  3);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), con.begin(), con.end());
  return out;
}

// A version 2 store with the data of two tenants: opened, it is migrated to
// version 3 in place; every row names its scope's tenant, the data is intact,
// lexical search still works, the embedding cache (whose entries cannot be
// attributed to one of two tenants) starts empty, and the schema is the same
// as a new store's. A newer version is still refused, untouched.
TEST_P(TenantSchemaTest, AVersion2StoreOfTwoTenantsMigrates) {
  const std::string location = V2Store(GetParam(), dir_.path(), 3);
  ASSERT_FALSE(location.empty());
  std::map<std::string, std::int64_t> before;
  {
    auto raw = Raw(location);
    ASSERT_TRUE(raw);
    before = Counts(raw.get());
  }
  auto db = Writer(location);
  ASSERT_TRUE(db);
  EXPECT_EQ(*GetMeta(db.get(), "schema_version"), std::to_string(kSchemaVersion));
  const auto after = Counts(db.get());
  for (const auto& [table, n] : before) {
    if (table == "embed_cache") continue;
    EXPECT_EQ(after.at(table), n) << table;
    EXPECT_GT(n, 0) << table << " is not exercised";
  }
  EXPECT_EQ(before.at("embed_cache"), 3);
  EXPECT_EQ(after.at("embed_cache"), 0) << "entries of an unknown tenant must not survive";
  for (const auto& c : testing::CheckTenants(db.get())) {
    EXPECT_EQ(c.wrong, 0) << c.table << ": rows with an empty tenant or not their scope's";
  }
  EXPECT_EQ(Int(db.get(), "SELECT count(*) FROM turns WHERE tenant = 'acme'"), 2);
  EXPECT_EQ(Int(db.get(), "SELECT count(*) FROM fact_entities WHERE tenant = 'globex'"), 1);
  // The content is as it was.
  EXPECT_EQ(Text(db.get(), "SELECT user_text FROM turns WHERE id = 20"), "I moved to lisbon");
  EXPECT_EQ(Int(db.get(), "SELECT page_id FROM turns WHERE id = 10"), 10);
  EXPECT_EQ(Text(db.get(), "SELECT value FROM profile_slots WHERE scope_id = 1"), "tokyo");
  EXPECT_EQ(Text(db.get(), "SELECT text FROM facts WHERE memory_id = 'm_20'"), "Alice lives in lisbon");
  EXPECT_EQ(Int(db.get(), "SELECT df FROM scope_terms WHERE scope_id = 2 AND term = 'lisbon'"), 1);
  EXPECT_EQ(Int(db.get(), "SELECT length(embedding) FROM pages WHERE id = 20"), 16);
  // The full-text indexes (rebuilt on SQLite) still answer within a scope.
  auto hits = SearchText(db.get(), FullText::kTurns, ScopeToken(2), {"lisbon"}, 10);
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ(hits->front().rowid, 20);
  auto none = SearchText(db.get(), FullText::kTurns, ScopeToken(1), {"lisbon"}, 10);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto facts = SearchText(db.get(), FullText::kFacts, ScopeToken(1), {"tokyo"}, 10);
  ASSERT_TRUE(facts.ok());
  ASSERT_EQ(facts->size(), 1u);
  EXPECT_EQ(facts->front().rowid, 10);
  // New rows get their tenant.
  {
    auto txn = sql::Txn::Begin(db.get());
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(IndexText(db.get(), FullText::kSegments, 21, 2, "new").ok());
    ASSERT_TRUE(PutCachedEmbedding(db.get(), "globex", "m", 1, {1.0f}).ok());
    ASSERT_TRUE((*txn)->Commit().ok());
  }
  EXPECT_EQ(Text(db.get(), "SELECT tenant FROM segments_fts WHERE rowid = 21"), "globex");
  for (const auto& c : testing::CheckTenants(db.get())) EXPECT_EQ(c.wrong, 0) << c.table;

  // The same schema as a new store, column by column, key by key.
  auto fresh = Writer(testing::FreshStore(GetParam(), dir_.path()));
  ASSERT_TRUE(fresh);
  const auto a = Shape(db.get()), b = Shape(fresh.get());
  EXPECT_GT(a.size(), 100u);
  EXPECT_EQ(a, b);

  // A newer version is refused and left as it is.
  ASSERT_TRUE(SetMeta(db.get(), "schema_version", std::to_string(kSchemaVersion + 1)).ok());
  db.reset();
  auto refused = OpenWriter(location, {});
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("newer than this engram"), std::string::npos);
  auto raw = Raw(location);
  ASSERT_TRUE(raw);
  EXPECT_EQ(*GetMeta(raw.get(), "schema_version"), std::to_string(kSchemaVersion + 1));
}

// A store of one tenant keeps its cached vectors, as that tenant's.
TEST_P(TenantSchemaTest, AOneTenantStoreKeepsItsEmbeddingCache) {
  const std::string location = V2Store(GetParam(), dir_.path(), 2, false);
  ASSERT_FALSE(location.empty());
  auto db = Writer(location);
  ASSERT_TRUE(db);
  EXPECT_EQ(Int(db.get(), "SELECT count(*) FROM embed_cache WHERE tenant = 'acme'"), 2);
  auto hit = FindCachedEmbedding(db.get(), "acme", "m", 2);
  ASSERT_TRUE(hit.ok() && *hit);
  EXPECT_EQ((*hit)->vector, (std::vector<float>{0.5f, -0.25f, 1.0f, 0.0f}));
  auto other = FindCachedEmbedding(db.get(), "globex", "m", 2);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(*other);
}

INSTANTIATE_TEST_SUITE_P(Backends, TenantSchemaTest, ::testing::Values("sqlite", "postgres"));

// Version 1 (SQLite only) still migrates through 2 to 3.
TEST(TenantSchemaV1Test, AVersion1StoreMigratesToTheLatest) {
  testing::TempDir dir;
  const std::string path = dir.File("v1.db");
  {
    auto db = Raw(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE(CreateSchemaAtVersion(db.get(), 1, 1).ok());
    Exec(db.get(), "INSERT INTO scopes(id, tenant, user_id, assistant_id, created_at) VALUES (1, 'acme', 'u', 'a', 1)");
    Exec(db.get(), "INSERT INTO jobs(scope_id, kind, status, created_at, updated_at) VALUES (1, 'promote', 'pending', 1, 1)");
  }
  auto db = Writer(path);
  ASSERT_TRUE(db);
  EXPECT_EQ(*GetMeta(db.get(), "schema_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(Text(db.get(), "SELECT tenant FROM jobs"), "acme");
  EXPECT_EQ(*GetMeta(db.get(), "scope_id_high"), "1");
}

}  // namespace
}  // namespace engram::store
