// Durability of acknowledged writes (StoreOpenOptions::sync_every_commit,
// EngineOptions::Durability): the writer connection of each backend is set
// up for the mode asked, and full is the default.
#include <gtest/gtest.h>

#include "engram/options.hpp"
#include "store/open.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram::store {
namespace {

class DurabilityTest : public ::testing::TestWithParam<std::string> {};

// SQLite: PRAGMA synchronous (2 = FULL, 1 = NORMAL); PostgreSQL:
// synchronous_commit ("on", "off").
std::string Setting(sql::Db* db) {
  const bool pg = db->dialect() == sql::Dialect::kPostgres;
  auto st = db->Prepare(pg ? "SHOW synchronous_commit" : "PRAGMA synchronous");
  EXPECT_TRUE(st.ok()) << st.status().ToString();
  if (!st.ok()) return "";
  auto row = (*st)->Step();
  EXPECT_TRUE(row.ok() && *row);
  std::string v = pg ? (*st)->Text(0) : std::to_string((*st)->Int(0));
  (*st)->Reset();
  return v;
}

TEST_P(DurabilityTest, FullIsTheDefaultAndNormalIsAsked) {
  EXPECT_EQ(EngineOptions{}.durability, EngineOptions::Durability::kFull);
  EXPECT_TRUE(StoreOpenOptions{}.sync_every_commit);
  const bool pg = GetParam() == "postgres";
  testing::TempDir dir;
  const std::string location = testing::FreshStore(GetParam(), dir.path());
  {
    auto db = OpenWriter(location, {});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ(Setting(db->get()), pg ? "on" : "2");
  }
  StoreOpenOptions normal;
  normal.sync_every_commit = false;
  auto db = OpenWriter(location, normal);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(Setting(db->get()), pg ? "off" : "1");
}

INSTANTIATE_TEST_SUITE_P(Backends, DurabilityTest, ::testing::Values("sqlite", "postgres"));

}  // namespace
}  // namespace engram::store
