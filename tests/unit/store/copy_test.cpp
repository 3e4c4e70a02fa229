// Copying a whole store (store/copy.hpp): the table list covers the schema of
// both backends, a store goes SQLite -> PostgreSQL -> SQLite with every row,
// NULL, vector byte and id intact (and fresh ids afterwards), and every
// refusal writes nothing.
#include "store/copy.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "store/erase.hpp"
#include "store/open.hpp"
#include "store/schema.hpp"
#include "store/scopes.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram::store {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kNow = 1767225600000;  // 2026-01-01

std::unique_ptr<sql::Db> Writer(const std::string& location) {
  StoreOpenOptions o;
  o.now_ms = 1;
  auto db = OpenWriter(location, o);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(db).value() : nullptr;
}

std::unique_ptr<sql::Db> Raw(const std::string& location) {
  auto db = sql::Db::Open(location, {});
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(db).value() : nullptr;
}

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

void Exec(sql::Db* db, const std::string& q) {
  Status st = db->Exec(q);
  ASSERT_TRUE(st.ok()) << q << ": " << st.ToString();
}

void Blob(sql::Db* db, const std::string& q, const std::vector<float>& v) {
  auto st = db->Prepare(q);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_TRUE((*st)->BindFloats(1, v).Run().ok()) << q;
}

// Rows in every table, with NULLs, non-ASCII text, extreme integers, vectors
// (and an empty one), and an erased scope whose id must never come back.
// Returns the largest scope id ever given.
std::int64_t Fill(sql::Db* db) {
  auto txn = sql::Txn::Begin(db);
  EXPECT_TRUE(txn.ok());
  auto a = EnsureScope(db, {"t", "alice", "a"}, 10);
  auto b = EnsureScope(db, {"t", "bob", "a"}, 11);
  auto c = EnsureScope(db, {"t2", "carol", "a"}, 12);
  EXPECT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(EraseScope(db, *c, {}).ok());
  const std::string s1 = std::to_string(*a), s2 = std::to_string(*b);
  Exec(db, "UPDATE scopes SET chain_summary = 'they talk about Zoë', chain_page_id = 1, data_version = 7, "
           "stm_count = 2 WHERE id = " + s1);
  Exec(db, "INSERT INTO turns(id, scope_id, seq, user_text, assistant_text, user_name, assistant_name, event_time, "
           "ingest_time, metadata, source_ref, user_source_ref, assistant_source_ref, page_id, tenant) VALUES "
           "(1, " + s1 + ", 1, 'Zoë moved to 東京 🚀', 'Nice!', 'Zoë', 'Bot', -5, 100, '{\"k\":1}', 'D1:1', 'u1', 'a1', 1, 't'),"
           "(2, " + s1 + ", 2, 'It''s \"quoted\" and back\\slash', '', '', '', 9223372036854775807, 101, '', '', '', '', NULL, 't'),"
           "(5, " + s2 + ", 1, 'bob here', 'hi bob', 'Bob', 'A', 3, 102, '', 'x', '', '', NULL, 't')");
  Exec(db, "INSERT INTO turns_fts(rowid, scope, terms, tenant) VALUES (1, 's" + s1 + "', 'zoe move tokyo', 't'), (2, 's" + s1 +
           "', 'quot back slash', 't'), (5, 's" + s2 + "', 'bob', 't')");
  auto seg = db->Prepare(
      "INSERT INTO segments(id, scope_id, summary, keywords, embedding, emb_sum, page_count, interaction, visits, "
      "last_access, created_at, updated_at, version, archived_at, degraded, tenant) VALUES (?2, ?3, 'Moving', "
      "'[\"move\"]', ?1, ?1, 1, 2, 3, 4, 5, 6, 7, ?4, 1, 't')");
  EXPECT_TRUE(seg.ok());
  const std::vector<float> v1 = {0.5f, -0.25f, 1e-30f, 3.0f}, v2 = {-0.0f, 7.5f, 0.125f, -2.0f};
  EXPECT_TRUE((*seg)->BindFloats(1, v1).Bind(2, 1).Bind(3, *a).BindNull(4).Run().ok());
  EXPECT_TRUE((*seg)->BindFloats(1, v2).Bind(2, 2).Bind(3, *b).Bind(4, 123).Run().ok());
  Exec(db, "INSERT INTO segments_fts(rowid, scope, terms, tenant) VALUES (1, 's" + s1 + "', 'move', 't'), (2, 's" + s2 +
           "', 'x', 't')");
  Blob(db, "INSERT INTO pages(id, scope_id, turn_id, segment_id, prev_page, next_page, chain_summary, keywords, "
           "embedding, analyzed, created_at, degraded, tenant) VALUES (1, " + s1 +
           ", 1, 1, NULL, NULL, 'chain', '[]', ?1, 1, 8, 0, 't')",
       v1);
  Exec(db, "INSERT INTO scope_terms(scope_id, term, df, tenant) VALUES (" + s1 + ", 'alpha', 2, 't'), (" + s1 +
           ", 'Zeta', 1, 't'), (" + s2 + ", 'ärger', 1, 't'), (" + s2 + ", 'B', 3, 't')");
  Exec(db, "INSERT INTO profile_slots(scope_id, dimension, value, evidence, updated_at, version, degraded, tenant) "
           "VALUES (" + s1 + ", 'home', 'Lisbon', '[1]', 5, 1, 0, 't'), (" + s2 + ", 'job', 'nurse', '[]', 6, 2, 1, 't')");
  Blob(db, "INSERT INTO facts(id, scope_id, memory_id, user_id, agent_id, run_id, kind, role, actor, attributed_to, "
           "text, norm_hash, embedding, metadata, source_pages, event_time, record_time, created_at, updated_at, "
           "expires_at, idempotency_key, version, status, degraded, tenant) VALUES "
           "(1, " + s1 + ", 'm_0000000000000001', 'alice', '', '', 'user', 'user', 'Zoë', 'user', 'Zoë lives in Tokyo', "
           "-9223372036854775807, ?1, '{}', '[1]', 1, 2, 3, 4, NULL, NULL, 1, 'live', 1, 't'), "
           "(2, " + s1 + ", 'm_0000000000000002', 'alice', 'agent', 'run', 'memory', '', '', '', 'old text', 42, ?1, "
           "'{\"c\":\"d\"}', '[]', 5, 6, 7, 8, 99, 'key-1', 2, 'superseded', 0, 't')",
       v2);
  Exec(db, "INSERT INTO facts_fts(rowid, scope, terms, tenant) VALUES (1, 's" + s1 + "', 'zoe live tokyo', 't')");
  Exec(db, "INSERT INTO fact_history(id, scope_id, memory_id, fact_id, version, event, old_text, new_text, actor, role, "
           "at, op_id, tenant) VALUES (1, " + s1 + ", 'm_0000000000000001', 1, 1, 'ADD', NULL, 'Zoë lives in Tokyo', "
           "'api', '', 9, 'r1', 't'), (2, " + s1 + ", 'm_0000000000000002', 2, 2, 'UPDATE', 'older', NULL, '', 'user', "
           "10, '', 't')");
  Exec(db, "INSERT INTO entities(id, scope_id, name, type, tenant) VALUES (1, " + s1 + ", 'tokyo', 'name', 't'), (3, " +
           s1 + ", 'zoë', '', 't')");
  Exec(db, "INSERT INTO fact_entities(fact_id, entity_id, relation, tenant) VALUES (1, 1, 'mentions', 't'), "
           "(1, 3, 'about', 't')");
  Exec(db, "INSERT INTO fact_links(id, scope_id, from_memory, to_memory, relation, created_at, tenant) VALUES (1, " +
           s1 + ", 'm_0000000000000001', 'm_0000000000000002', 'relates', 7, 't')");
  Exec(db, "INSERT INTO fact_requests(scope_id, user_id, agent_id, run_id, idempotency_key, events, created_at, tenant) "
           "VALUES (" + s1 + ", 'alice', '', '', 'k', '[{\"id\":\"m_1\"}]', 8, 't')");
  Exec(db, "INSERT INTO jobs(id, scope_id, kind, status, attempts, last_error, run_id, lease_holder, lease_expires, "
           "rearmed, created_at, updated_at, tenant) VALUES (1, " + s1 +
           ", 'promote', 'done', 1, '', 'r1', '', 0, 0, 1, 2, 't'), "
           "(4, " + s2 + ", 'consolidate', 'leased', 2, 'boom', 'r2', 'host/1/x', 99, 1, 3, 4, 't')");
  Exec(db, "INSERT INTO receipts(id, run_id, tenant, user_scope, assistant_scope, memory_kind, memory_id, version, "
           "source_version, from_tier, to_tier, status, at_utc, depends_on_version, outcome_receipt) VALUES "
           "(1, 'r1', 't', 'alice', 'a', 'turn', 1, 1, '', 'input', 'stm', 'ok', 100, '', ''), "
           "(2, 'r1', 't2', 'carol', 'a', 'turn', 4, 1, 'v', 'stm', 'mtm', 'ok', 101, 'page:1@1', 'x')");
  Exec(db, "INSERT INTO receipt_days(day, tenant, user_scope, assistant_scope, memory_kind, from_tier, to_tier, status, "
           "receipts, first_at, last_at) VALUES (20000, 't', 'alice', 'a', 'turn', 'input', 'stm', 'ok', 12, 1, 2)");
  Blob(db, "INSERT INTO embed_cache(model, text_hash, dim, vector, tenant) VALUES ('model-x', 42, 4, ?1, 't')", v1);
  auto empty = db->Prepare(
      "INSERT INTO embed_cache(model, text_hash, dim, vector, tenant) VALUES ('model-x', -7, 0, ?1, 't')");
  EXPECT_TRUE(empty.ok());
  EXPECT_TRUE((*empty)->BindBlob(1, "", 0).Run().ok());
  Exec(db, "INSERT INTO api_keys(id, tenant, users, role, name, hash, created_at, revoked_at) VALUES "
           "('k1', 't', '[]', 'admin', 'ops', 'abcd', 9, NULL), ('k2', 't', '[\"alice\"]', 'read', '', 'ef', 9, 10)");
  Exec(db, "INSERT INTO turn_requests(scope_id, idempotency_key, fingerprint, first_seq, turns, created_at, tenant) "
           "VALUES (" + s1 + ", 'idem', -123, 1, 2, 10, 't')");
  EXPECT_TRUE(SetMeta(db, "embedder_name", "builtin-hash-v1").ok());
  EXPECT_TRUE(SetMeta(db, "embedder_dim", "4").ok());
  EXPECT_TRUE(SetMeta(db, "some_setting", "x").ok());
  EXPECT_TRUE((*txn)->Commit().ok());
  return *c;
}

std::vector<TableDigest> Digest(const std::string& location) {
  auto db = OpenReader(location);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  if (!db.ok()) return {};
  auto d = DigestStore(db->get());
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : std::vector<TableDigest>{};
}

void ExpectSameContent(const std::vector<TableDigest>& a, const std::vector<TableDigest>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].table, b[i].table);
    EXPECT_TRUE(a[i].SameContent(b[i])) << a[i].table << ": " << a[i].rows << " rows " << a[i].Hash() << " vs "
                                        << b[i].rows << " rows " << b[i].Hash();
    EXPECT_EQ(a[i].vector_bytes, b[i].vector_bytes) << a[i].table;
  }
}

Result<CopyReport> Copy(const std::string& from, const std::string& to) {
  CopyOptions o;
  o.now_ms = kNow;
  return CopyStore(from, to, o);
}

// The tables and columns of a store's catalog (SQLite: without implicit
// rowids; PostgreSQL: without the generated tsvector).
std::map<std::string, std::set<std::string>> Catalog(sql::Db* db) {
  const bool pg = db->dialect() == sql::Dialect::kPostgres;
  auto st = db->Prepare(
      pg ? "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = "
           "current_schema() AND column_name <> 'tsv'"
         : "SELECT m.name, p.name FROM sqlite_schema m JOIN pragma_table_info(m.name) p "
           "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE '%_fts_%'");
  EXPECT_TRUE(st.ok());
  std::map<std::string, std::set<std::string>> out;
  if (!st.ok()) return out;
  for (;;) {
    auto row = (*st)->Step();
    EXPECT_TRUE(row.ok());
    if (!row.ok() || !*row) break;
    out[(*st)->Text(0)].insert((*st)->Text(1));
  }
  (*st)->Reset();
  return out;
}

class CopyTest : public ::testing::TestWithParam<std::string> {};

// Every table of the schema is copied with every column: a new table or
// column fails here until the copy list names it.
TEST_P(CopyTest, TheTableListCoversEveryTableAndColumn) {
  testing::TempDir dir;
  auto db = Writer(testing::FreshStore(GetParam(), dir.path()));
  ASSERT_TRUE(db);
  const bool pg = db->dialect() == sql::Dialect::kPostgres;
  std::map<std::string, std::set<std::string>> listed;
  for (const auto& t : CopyTables()) {
    EXPECT_FALSE(listed.count(t.name)) << t.name << " listed twice";
    for (const auto& c : t.columns) {
      if (c.name != "rowid" || pg) listed[t.name].insert(c.name);
    }
    EXPECT_FALSE(t.order_by.empty()) << t.name;
  }
  EXPECT_EQ(Catalog(db.get()), listed);
  // The same tables as the erasure's classification (erased or kept).
  std::set<std::string> classified, copied;
  for (const auto& t : ErasedTables()) classified.insert(t);
  for (const auto& t : KeptTables()) classified.insert(t);
  for (const auto& t : CopiedTables()) copied.insert(t);
  EXPECT_EQ(copied, classified);
}

INSTANTIATE_TEST_SUITE_P(Backends, CopyTest, ::testing::Values("sqlite", "postgres"));

// The order satisfies the foreign keys: a referenced table comes first.
TEST(CopyOrderTest, EveryReferencedTableComesFirst) {
  testing::TempDir dir;
  auto db = Writer(dir.File("s.db"));
  ASSERT_TRUE(db);
  std::set<std::string> seen;
  int references = 0;
  for (const auto& t : CopiedTables()) {
    auto st = db->Prepare("SELECT \"table\" FROM pragma_foreign_key_list(?1)");
    ASSERT_TRUE(st.ok());
    (*st)->Bind(1, t);
    for (;;) {
      auto row = (*st)->Step();
      ASSERT_TRUE(row.ok());
      if (!*row) break;
      ++references;
      EXPECT_TRUE(seen.count((*st)->Text(0))) << t << " references " << (*st)->Text(0) << ", copied later";
    }
    seen.insert(t);
  }
  EXPECT_GE(references, 7);
}

// SQLite -> PostgreSQL -> SQLite: every table has the same rows (ids, NULLs,
// text, vector bytes), the targets keep their own creation bookkeeping, and
// new rows get fresh ids on both targets (an erased scope's id included).
TEST(CopyStoreTest, RoundTripSqlitePostgresSqlite) {
  testing::TempDir dir;
  const std::string lite = dir.File("source.db"), back = dir.File("sub/back.db");
  const std::string pg = testing::FreshPgDatabase();
  ASSERT_FALSE(pg.empty());
  std::int64_t erased = 0;
  {
    auto db = Writer(lite);
    ASSERT_TRUE(db);
    erased = Fill(db.get());
  }
  const auto source = Digest(lite);
  std::vector<std::string> copied_tables;
  CopyOptions o;
  o.now_ms = kNow;
  o.on_table = [&](const TableDigest& d) { copied_tables.push_back(d.table); };
  auto to_pg = CopyStore(lite, pg, o);
  ASSERT_TRUE(to_pg.ok()) << to_pg.status().ToString();
  EXPECT_EQ(copied_tables.size(), CopiedTables().size());
  ASSERT_EQ(to_pg->tables.size(), CopiedTables().size());
  std::int64_t rows = 0, bytes = 0;
  for (const auto& d : to_pg->tables) rows += d.rows, bytes += d.vector_bytes;
  EXPECT_EQ(to_pg->rows, rows);
  EXPECT_EQ(to_pg->vector_bytes, bytes);
  EXPECT_EQ(bytes, 16 * 8);  // vectors of 4 floats: 2 segments x 2, 1 page, 2 facts, 1 cached (and 1 empty)
  EXPECT_EQ(to_pg->scope_id_high, erased);
  ExpectSameContent(source, Digest(pg));
  for (const auto& d : source) {
    if (d.table != "meta") {
      EXPECT_GT(d.rows, 0) << d.table << " is not exercised";
    }
  }

  auto back_report = Copy(pg, back);
  ASSERT_TRUE(back_report.ok()) << back_report.status().ToString();
  ExpectSameContent(source, Digest(back));

  // Bookkeeping: each store keeps its own; the settings travel.
  auto pgdb = Writer(pg);
  auto backdb = Writer(back);
  ASSERT_TRUE(pgdb && backdb);
  EXPECT_EQ(*GetMeta(pgdb.get(), "created_at"), std::to_string(kNow));
  EXPECT_EQ(*GetMeta(pgdb.get(), "application"), "engram");
  EXPECT_EQ(*GetMeta(backdb.get(), "created_at"), std::to_string(kNow));
  EXPECT_EQ(*GetMeta(backdb.get(), "application"), "");
  EXPECT_EQ(*GetMeta(backdb.get(), "schema_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(Int(backdb.get(), "PRAGMA application_id"), kApplicationId);
  EXPECT_EQ(*GetMeta(backdb.get(), "embedder_name"), "builtin-hash-v1");
  EXPECT_EQ(*GetMeta(backdb.get(), "some_setting"), "x");
  EXPECT_EQ(*GetMeta(backdb.get(), "scope_id_high"), std::to_string(erased));

  // Fresh ids: the erased scope's id is never given again, on either target;
  // PostgreSQL's identity sequences are past the copied ids.
  for (sql::Db* db : {pgdb.get(), backdb.get()}) {
    auto txn = sql::Txn::Begin(db);
    ASSERT_TRUE(txn.ok());
    auto s = EnsureScope(db, {"t3", "dave", "a"}, 13);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_GT(*s, erased);
    Exec(db, "INSERT INTO turns(scope_id, seq, user_text, assistant_text, event_time, ingest_time, tenant) VALUES (" +
                 std::to_string(*s) + ", 1, 'new', 'turn', 1, 1, 't3')");
    EXPECT_GT(Int(db, "SELECT max(id) FROM turns"), 5);
    Exec(db, "INSERT INTO profile_slots(scope_id, dimension, value, evidence, updated_at, tenant) VALUES (" +
                 std::to_string(*s) + ", 'home', 'Oslo', '[]', 1, 't3')");
    EXPECT_EQ(Int(db, "SELECT count(DISTINCT rowid) FROM profile_slots"), 3);
    for (const char* insert :
         {"INSERT INTO jobs(scope_id, kind, status, created_at, updated_at, tenant) "
          "VALUES (1, 'promote', 'pending', 1, 1, 't')",
          "INSERT INTO receipts(run_id, tenant, user_scope, assistant_scope, memory_kind, memory_id, version, "
          "source_version, from_tier, to_tier, status, at_utc) VALUES ('r', 't', 'u', 'a', 'turn', 1, 1, '', 'a', "
          "'b', 'ok', 1)",
          "INSERT INTO entities(scope_id, name, tenant) VALUES (1, 'new', 't')",
          "INSERT INTO fact_history(scope_id, memory_id, fact_id, version, event, at, tenant) "
          "VALUES (1, 'm', 1, 1, 'ADD', 1, 't')",
          "INSERT INTO fact_links(scope_id, from_memory, to_memory, relation, created_at, tenant) "
          "VALUES (1, 'a', 'b', 'c', 1, 't')"}) {
      Exec(db, insert);
    }
    ASSERT_TRUE((*txn)->Commit().ok());
  }
}

// PostgreSQL -> PostgreSQL keeps the source's sequences (ids given and then
// deleted are not given again), SQLite -> SQLite works as well.
TEST(CopyStoreTest, SameBackendCopies) {
  testing::TempDir dir;
  const std::string pg1 = testing::FreshPgDatabase(), pg2 = testing::FreshPgDatabase();
  ASSERT_FALSE(pg1.empty() || pg2.empty());
  {
    auto db = Writer(pg1);
    ASSERT_TRUE(db);
    Fill(db.get());
    // Ids 100 and 101 were given by the sequence, then their rows deleted.
    Exec(db.get(), "SELECT setval(pg_get_serial_sequence('turns', 'id'), 99)");
    Exec(db.get(), "INSERT INTO turns(scope_id, seq, user_text, assistant_text, event_time, ingest_time, tenant) "
                   "SELECT id, 50, 'x', 'y', 1, 1, tenant FROM scopes ORDER BY id LIMIT 2");
    Exec(db.get(), "DELETE FROM turns WHERE id >= 100");
  }
  auto r = Copy(pg1, pg2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectSameContent(Digest(pg1), Digest(pg2));
  auto db = Raw(pg2);
  ASSERT_TRUE(db);
  Exec(db.get(), "INSERT INTO turns(scope_id, seq, user_text, assistant_text, event_time, ingest_time, tenant) "
                 "SELECT id, 60, 'x', 'y', 1, 1, tenant FROM scopes ORDER BY id LIMIT 1");
  EXPECT_EQ(Int(db.get(), "SELECT max(id) FROM turns"), 102);

  const std::string a = dir.File("a.db"), b = dir.File("b.db");
  {
    auto w = Writer(a);
    ASSERT_TRUE(w);
    Fill(w.get());
  }
  auto lite = Copy(a, b);
  ASSERT_TRUE(lite.ok()) << lite.status().ToString();
  ExpectSameContent(Digest(a), Digest(b));
}

// A target that holds anything is refused before anything is written; a
// store that holds nothing but its creation (a failed copy's PostgreSQL
// target, a server that never stored anything) is accepted.
TEST(CopyStoreTest, RefusesANonEmptyTarget) {
  testing::TempDir dir;
  const std::string source = dir.File("source.db");
  {
    auto db = Writer(source);
    ASSERT_TRUE(db);
    Fill(db.get());
  }
  // SQLite: a store with content, a database that is not a store, any file.
  const std::string full = dir.File("full.db");
  {
    auto db = Writer(full);
    ASSERT_TRUE(db);
    auto txn = sql::Txn::Begin(db.get());
    ASSERT_TRUE(EnsureScope(db.get(), {"t", "u", "a"}, 1).ok());
    ASSERT_TRUE((*txn)->Commit().ok());
    Exec(db.get(), "PRAGMA wal_checkpoint(TRUNCATE)");
  }
  const std::string foreign = dir.File("foreign.db"), text = dir.File("notes.txt");
  {
    auto db = Raw(foreign);
    ASSERT_TRUE(db);
    Exec(db.get(), "CREATE TABLE customers(id INTEGER); INSERT INTO customers VALUES (1)");
  }
  testing::WriteFile(text, "just some notes\n");
  for (const auto& target : {full, foreign, text}) {
    const std::string before = testing::ReadFile(target);
    auto r = Copy(source, target);
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << target << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find("must be"), std::string::npos) << r.status().message();
    EXPECT_EQ(testing::ReadFile(target), before) << target << " was modified";
  }
  EXPECT_NE(Copy(source, full).status().message().find("table scopes has rows"), std::string::npos);

  // PostgreSQL: a store with content, a schema with foreign tables.
  const std::string pg_full = testing::FreshPgDatabase(), pg_foreign = testing::FreshPgDatabase();
  ASSERT_FALSE(pg_full.empty() || pg_foreign.empty());
  {
    auto db = Writer(pg_full);
    ASSERT_TRUE(db);
    ASSERT_TRUE(SetMeta(db.get(), "embedder_name", "other").ok());
    auto raw = Raw(pg_foreign);
    ASSERT_TRUE(raw);
    Exec(raw.get(), "CREATE TABLE customers(id INT)");
  }
  const auto pg_before = Digest(pg_full);
  auto r = Copy(source, pg_full);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
  EXPECT_NE(r.status().message().find("meta.embedder_name is set"), std::string::npos) << r.status().message();
  ExpectSameContent(pg_before, Digest(pg_full));
  r = Copy(source, pg_foreign);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
  EXPECT_NE(r.status().message().find("holds 1 tables"), std::string::npos) << r.status().message();
  {
    auto raw = Raw(pg_foreign);
    EXPECT_EQ(Int(raw.get(), "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"),
              1);
  }

  // A freshly created store, on either backend, is empty.
  const std::string pg_new = testing::FreshPgDatabase(), lite_new = dir.File("new.db");
  ASSERT_TRUE(Writer(pg_new) && Writer(lite_new));
  ASSERT_TRUE(Copy(source, pg_new).ok());
  ASSERT_TRUE(Copy(source, lite_new).ok());
  ExpectSameContent(Digest(source), Digest(lite_new));
}

// A source must be an engram store of this schema version with no embedder
// migration under way; nothing is created at the target otherwise.
TEST(CopyStoreTest, RefusesForeignAndMismatchedSources) {
  testing::TempDir dir;
  const std::string target = dir.File("target.db");
  const std::string pg_target = testing::FreshPgDatabase();
  ASSERT_FALSE(pg_target.empty());
  auto refused = [&](const std::string& source, StatusCode code, const std::string& says) {
    for (const auto& to : {target, pg_target}) {
      auto r = Copy(source, to);
      EXPECT_EQ(r.status().code(), code) << source << ": " << r.status().ToString();
      EXPECT_NE(r.status().message().find(says), std::string::npos) << r.status().message();
    }
    EXPECT_FALSE(fs::exists(target)) << "a refused copy created " << target;
    auto db = Raw(pg_target);
    EXPECT_EQ(Int(db.get(), "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"),
              0);
  };
  refused(dir.File("missing.db"), StatusCode::kNotFound, "no store at");
  const std::string foreign = dir.File("foreign.db");
  {
    auto db = Raw(foreign);
    ASSERT_TRUE(db);
    Exec(db.get(), "CREATE TABLE customers(id INTEGER)");
  }
  refused(foreign, StatusCode::kFailedPrecondition, "is not an engram store");
  const std::string pg_foreign = testing::FreshPgDatabase();
  {
    auto db = Raw(pg_foreign);
    ASSERT_TRUE(db);
    Exec(db.get(), "CREATE TABLE meta(key TEXT, value TEXT)");
  }
  refused(pg_foreign, StatusCode::kFailedPrecondition, "is not an engram store");

  const std::string old = dir.File("old.db"), newer = dir.File("newer.db"), migrating = dir.File("migrating.db");
  const std::vector<std::tuple<std::string, std::string, std::string>> changes = {
      {old, "schema_version", "1"}, {newer, "schema_version", "99"}, {migrating, "reembed_target", "openai:x/8"}};
  for (const auto& [path, key, value] : changes) {
    auto db = Writer(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE(SetMeta(db.get(), key, value).ok());
  }
  refused(old, StatusCode::kFailedPrecondition, "open it with this engram first");
  refused(newer, StatusCode::kFailedPrecondition, "upgrade engram");
  refused(migrating, StatusCode::kFailedPrecondition, "engram reembed");

  // The same store, and private in-memory stores, are not copies.
  const std::string ok = dir.File("ok.db");
  ASSERT_TRUE(Writer(ok));
  EXPECT_EQ(Copy(ok, ok).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Copy(ok, dir.path() + "/./ok.db").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Copy(ok, ":memory:").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Copy(ok, "mysql://h/db").status().code(), StatusCode::kInvalidArgument);
}

// A copy that fails half-way commits nothing: no SQLite file is left behind,
// and the PostgreSQL target stays empty, so the next copy is accepted.
TEST(CopyStoreTest, AFailedCopyLeavesNothingBehind) {
  testing::TempDir dir;
  const std::string source = dir.File("source.db");
  {
    auto db = Writer(source);
    ASSERT_TRUE(db);
    Fill(db.get());
  }
  {
    // A page whose turn does not exist (written without foreign-key checks).
    auto raw = Raw(source);
    ASSERT_TRUE(raw);
    Exec(raw.get(), "PRAGMA foreign_keys = OFF");
    Exec(raw.get(), "INSERT INTO pages(id, scope_id, turn_id, segment_id, chain_summary, keywords, embedding, "
                    "created_at, tenant) SELECT 2, scope_id, 999, segment_id, '', '[]', embedding, 1, tenant FROM pages");
  }
  const std::string target = dir.File("target.db"), pg = testing::FreshPgDatabase();
  ASSERT_FALSE(pg.empty());
  for (const auto& to : {target, pg}) {
    auto r = Copy(source, to);
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("copy pages"), std::string::npos) << r.status().ToString();
  }
  EXPECT_FALSE(fs::exists(target));
  EXPECT_FALSE(fs::exists(target + "-wal"));
  {
    auto raw = Raw(source);
    Exec(raw.get(), "DELETE FROM pages WHERE id = 2");
  }
  auto again = Copy(source, pg);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ExpectSameContent(Digest(source), Digest(pg));
}

// The verification reads the committed target again: a difference is an
// error that names the table.
TEST(CopyStoreTest, AMismatchAfterTheCommitNamesTheTable) {
  testing::TempDir dir;
  const std::string source = dir.File("source.db");
  {
    auto db = Writer(source);
    ASSERT_TRUE(db);
    Fill(db.get());
  }
  for (const auto& target : {dir.File("target.db"), testing::FreshPgDatabase()}) {
    CopyOptions o;
    o.before_verify = [](sql::Db* db) {
      ASSERT_TRUE(db->Exec("UPDATE scope_terms SET df = df + 1 WHERE term = 'alpha'").ok());
      ASSERT_TRUE(db->Exec("DELETE FROM api_keys WHERE id = 'k2'").ok());
    };
    auto r = CopyStore(source, target, o);
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << r.status().ToString();
    const std::string& m = r.status().message();
    EXPECT_NE(m.find("verification failed for 2 table(s)"), std::string::npos) << m;
    EXPECT_NE(m.find("scope_terms (source 4 rows"), std::string::npos) << m;
    EXPECT_NE(m.find("api_keys (source 2 rows"), std::string::npos) << m;
    EXPECT_NE(m.find("target 1 rows"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace engram::store
