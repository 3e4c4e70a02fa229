// The scopes repository and erasure (store/scopes.hpp, store/erase.hpp): ids
// are never reused, and the erasure list covers every table of the schema.
#include "store/scopes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "store/erase.hpp"
#include "store/open.hpp"
#include "testing/temp_dir.hpp"

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
TEST(ScopesTest, AnErasedScopesIdIsNeverGivenAgain) {
  testing::TempDir dir;
  const std::string path = dir.File("s.db");
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

TEST(ScopesTest, GenerationAndVersionMoveOnWithAnErasure) {
  testing::TempDir dir;
  auto db = OpenWriter(dir.File("s.db"), {});
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

// Every table of the schema is either cleared by EraseScope or listed as
// deliberately kept: a new table fails here until it is classified.
TEST(EraseTest, EveryTableIsErasedOrDeliberatelyKept) {
  testing::TempDir dir;
  auto db = OpenWriter(dir.File("s.db"), {});
  ASSERT_TRUE(db.ok());
  auto st = (*db)->Prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
      "AND name NOT LIKE '%_fts_%' ORDER BY name");
  ASSERT_TRUE(st.ok());
  std::set<std::string> tables;
  for (;;) {
    auto row = (*st)->Step();
    ASSERT_TRUE(row.ok());
    if (!*row) break;
    tables.insert((*st)->Text(0));
  }
  std::set<std::string> covered;
  for (const auto& t : ErasedTables(sql::Dialect::kSqlite)) covered.insert(t);
  for (const auto& t : KeptTables(sql::Dialect::kSqlite)) {
    EXPECT_FALSE(covered.count(t)) << t << " is both erased and kept";
    covered.insert(t);
  }
  EXPECT_EQ(tables, covered);
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
}

}  // namespace
}  // namespace engram::store
