// The scopes repository and erasure (store/scopes.hpp, store/erase.hpp): ids
// are never reused, and the erasure list covers every table of the schema.
#include "store/scopes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "store/erase.hpp"
#include "store/open.hpp"
#include "store/schema.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram::store {
namespace {

Result<std::int64_t> Create(sql::Db* db, const Scope& s) {
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
  ENGRAM_ASSIGN_OR_RETURN(std::int64_t id, EnsureScope(db, s, 0));
  ENGRAM_RETURN_IF_ERROR(txn->Commit());
  return id;
}

Status Erase(sql::Db* db, std::int64_t id) {
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
  ENGRAM_RETURN_IF_ERROR(EraseScope(db, id, {}).status());
  return txn->Commit();
}

// SQLite gave a deleted scope's id (the largest) to the next new scope, in
// any tenant, so a cache keyed by scope id could serve erased content.
class ScopesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ScopesTest, AnErasedScopesIdIsNeverGivenAgain) {
  testing::TempDir dir;
  const std::string path = testing::FreshStore(GetParam(), dir.path());
  ASSERT_FALSE(path.empty());
  std::int64_t erased = 0;
  {
    auto db = OpenWriter(path, {});
    ASSERT_TRUE(db.ok());
    auto a = Create(db->get(), {"t1", "alice", "a"});
    auto b = Create(db->get(), {"t1", "bob", "a"});
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*Create(db->get(), {"t1", "alice", "a"}), *a) << "the same scope keeps its id";
    erased = *b;  // the largest id
    ASSERT_TRUE(Erase(db->get(), erased).ok());
    auto gone = LoadScope(db->get(), erased);
    EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
    auto c = Create(db->get(), {"t2", "bob", "a"});
    ASSERT_TRUE(c.ok());
    EXPECT_GT(*c, erased);
    erased = *c;
    ASSERT_TRUE(Erase(db->get(), erased).ok());
  }
  // Reopened (a new process): still never reused.
  auto db = OpenWriter(path, {});
  ASSERT_TRUE(db.ok());
  auto d = Create(db->get(), {"t3", "carol", "a"});
  ASSERT_TRUE(d.ok());
  EXPECT_GT(*d, erased);
}

TEST_P(ScopesTest, GenerationAndVersionMoveOnWithAnErasure) {
  testing::TempDir dir;
  auto db = OpenWriter(testing::FreshStore(GetParam(), dir.path()), {});
  ASSERT_TRUE(db.ok());
  auto id = Create(db->get(), {"t", "u", "a"});
  ASSERT_TRUE(id.ok());
  auto before = GetScopeVersion(db->get(), *id);
  ASSERT_TRUE(before.ok() && *before);
  ASSERT_TRUE(BumpDataVersion(db->get(), *id).ok());
  ASSERT_TRUE(BumpGeneration(db->get(), *id).ok());
  auto after = GetScopeVersion(db->get(), *id);
  ASSERT_TRUE(after.ok() && *after);
  EXPECT_EQ((*after)->generation, (*before)->generation + 1);
  EXPECT_EQ((*after)->data_version, (*before)->data_version + 2);
  ASSERT_TRUE(Erase(db->get(), *id).ok());
  auto gone = GetScopeVersion(db->get(), *id);
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(*gone);
}

INSTANTIATE_TEST_SUITE_P(Backends, ScopesTest, ::testing::Values("sqlite", "postgres"));

// The tables of a store and their columns, in order, from the catalog.
std::map<std::string, std::vector<std::string>> Columns(sql::Db* db) {
  const bool pg = db->dialect() == sql::Dialect::kPostgres;
  auto st = db->Prepare(
      pg ? "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = "
           "current_schema() AND column_name <> 'tsv' ORDER BY table_name, ordinal_position"
         : "SELECT m.name, p.name FROM sqlite_schema m JOIN pragma_table_info(m.name) p "
           "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE '%_fts_%' "
           "ORDER BY m.name, p.cid");
  EXPECT_TRUE(st.ok()) << st.status().ToString();
  std::map<std::string, std::vector<std::string>> out;
  if (!st.ok()) return out;
  for (;;) {
    auto row = (*st)->Step();
    EXPECT_TRUE(row.ok());
    if (!row.ok() || !*row) break;
    out[(*st)->Text(0)].push_back((*st)->Text(1));
  }
  (*st)->Reset();
  return out;
}

// Every table of the schema is either cleared by EraseScope or listed as
// deliberately kept: a new table fails here until it is classified.
TEST_P(ScopesTest, EveryTableIsErasedOrDeliberatelyKept) {
  testing::TempDir dir;
  auto db = OpenWriter(testing::FreshStore(GetParam(), dir.path()), {});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  std::set<std::string> tables;
  for (const auto& [t, cols] : Columns(db->get())) tables.insert(t);
  std::set<std::string> covered;
  for (const auto& t : ErasedTables()) covered.insert(t);
  for (const auto& t : KeptTables()) {
    EXPECT_FALSE(covered.count(t)) << t << " is both erased and kept";
    covered.insert(t);
  }
  EXPECT_EQ(tables, covered);
}

// The two backends' schemas have the same tables with the same columns in
// the same order (PostgreSQL adds only the generated tsvector of the
// full-text tables), so one SQL text serves both.
TEST(SchemaTest, BothBackendsHaveTheSameTablesAndColumns) {
  testing::TempDir dir;
  auto lite = OpenWriter(testing::FreshStore("sqlite", dir.path()), {});
  auto pg = OpenWriter(testing::FreshStore("postgres", dir.path()), {});
  ASSERT_TRUE(lite.ok()) << lite.status().ToString();
  ASSERT_TRUE(pg.ok()) << pg.status().ToString();
  auto a = Columns(lite->get());
  auto b = Columns(pg->get());
  // SQLite's rowid is implicit (FTS5 tables, profile_slots); PostgreSQL
  // names it as a column.
  for (auto& [t, cols] : b) {
    if (!cols.empty() && cols[0] == "rowid") cols.erase(cols.begin());
  }
  EXPECT_EQ(a, b);
  // Opening again checks and keeps the schema; a newer one is refused.
  ASSERT_TRUE(OpenWriter(testing::FreshStore("postgres", dir.path()), {}).ok());
}

TEST(SchemaTest, PostgresRefusesForeignAndNewerSchemas) {
  testing::TempDir dir;
  const std::string foreign = testing::FreshStore("postgres", dir.path());
  {
    auto raw = sql::Db::Open(foreign, {});
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE((*raw)->Exec("CREATE TABLE customers(id INT)").ok());
  }
  auto refused = OpenWriter(foreign, {});
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("not an engram store"), std::string::npos);
  const std::string newer = testing::FreshStore("postgres", dir.path());
  {
    auto db = OpenWriter(newer, {});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(SetMeta(db->get(), "schema_version", "99").ok());
  }
  auto too_new = OpenWriter(newer, {});
  EXPECT_EQ(too_new.status().code(), StatusCode::kFailedPrecondition) << too_new.status().ToString();
  EXPECT_NE(too_new.status().message().find("newer than this engram"), std::string::npos);
}

TEST(LocationTest, UrlsAreNeverTakenForPaths) {
  auto pg = sql::ParseLocation("postgresql://engram@localhost/engram");
  ASSERT_TRUE(pg.ok());
  EXPECT_EQ(pg->dialect, sql::Dialect::kPostgres);
  auto pg2 = sql::ParseLocation("postgres://u:p@h/db");
  ASSERT_TRUE(pg2.ok());
  EXPECT_EQ(pg2->dialect, sql::Dialect::kPostgres);
  auto file = sql::ParseLocation("/var/lib/engram/engram.db");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->dialect, sql::Dialect::kSqlite);
  EXPECT_EQ(file->target, "/var/lib/engram/engram.db");
  auto rel = sql::ParseLocation("data/x.db");
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ(rel->target, "data/x.db");
  auto uri = sql::ParseLocation("sqlite:///tmp/x.db");
  ASSERT_TRUE(uri.ok());
  EXPECT_EQ(uri->target, "/tmp/x.db");
  for (const char* bad : {"mysql://root@localhost/engram", "http://example/x", "redis://h"}) {
    auto r = sql::ParseLocation(bad);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("unsupported scheme"), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(sql::ParseLocation("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sql::RedactLocation("postgresql://u:secret@h/db"), "postgresql://u:***@h/db");
  EXPECT_EQ(sql::RedactLocation("postgresql://u@h/db"), "postgresql://u@h/db");
  // A password in the query is hidden too (any case), the other parameters stay.
  EXPECT_EQ(sql::RedactLocation("postgresql://u@h/db?password=x&sslmode=require"),
            "postgresql://u@h/db?password=***&sslmode=require");
  EXPECT_EQ(sql::RedactLocation("postgres://u:secret@h:5432/db?sslmode=require&Password=x%26y"),
            "postgres://u:***@h:5432/db?sslmode=require&Password=***");
  EXPECT_EQ(sql::RedactLocation("postgresql:///db?host=/run/pg&password=s3cret&password=again"),
            "postgresql:///db?host=/run/pg&password=***&password=***");
  EXPECT_EQ(sql::RedactLocation("postgresql://u:p?w@h/db"), "postgresql://u:***@h/db");
  EXPECT_EQ(sql::RedactLocation("postgresql://u@h/db?passwordless=1&application_name=x"),
            "postgresql://u@h/db?passwordless=1&application_name=x");
  // File paths are never rewritten.
  EXPECT_EQ(sql::RedactLocation("/srv/a:b@c/x.db?password=y"), "/srv/a:b@c/x.db?password=y");
}

}  // namespace
}  // namespace engram::store
