// The API keys repository (store/api_keys.hpp) on both engines.
// Authentication and roles are covered by unit_server.
#include "store/api_keys.hpp"

#include <gtest/gtest.h>

#include "store/schema.hpp"
#include "testing/test_postgres.hpp"

namespace engram::store {
namespace {

class ApiKeysRepo : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const bool pg = GetParam() == "postgres";
    const std::string location = pg ? engram::testing::FreshPgDatabase() : ":memory:";
    ASSERT_FALSE(location.empty());
    auto db = sql::Db::Open(location, {});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ASSERT_TRUE(EnsureSchema(db_.get(), 1).ok());
  }

  static ApiKeyRow Key(const std::string& id, const std::string& tenant, TimeMs at,
                       std::vector<std::string> users = {}) {
    ApiKeyRow k;
    k.id = id;
    k.tenant = tenant;
    k.users = std::move(users);
    k.role = "write";
    k.name = "key " + id;
    k.hash = "hash-" + id;
    k.created_at = at;
    return k;
  }

  std::unique_ptr<sql::Db> db_;
};

TEST_P(ApiKeysRepo, InsertsFindsListsRevokesAndCounts) {
  ASSERT_TRUE(InsertApiKey(db_.get(), Key("b", "t1", 20, {"alice", "bob"})).ok());
  ASSERT_TRUE(InsertApiKey(db_.get(), Key("a", "t1", 20)).ok());
  ASSERT_TRUE(InsertApiKey(db_.get(), Key("c", "t2", 10)).ok());
  EXPECT_FALSE(InsertApiKey(db_.get(), Key("a", "t3", 30)).ok()) << "ids are unique";
  ApiKeyRow bad = Key("d", "t1", 40);
  bad.role = "owner";
  EXPECT_FALSE(InsertApiKey(db_.get(), bad).ok()) << "only the four roles";

  auto found = FindApiKey(db_.get(), "b");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->tenant, "t1");
  EXPECT_EQ((*found)->users, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ((*found)->role, "write");
  EXPECT_EQ((*found)->name, "key b");
  EXPECT_EQ((*found)->hash, "hash-b");
  EXPECT_EQ((*found)->created_at, 20);
  EXPECT_FALSE((*found)->revoked_at);
  EXPECT_FALSE(FindApiKey(db_.get(), "zz")->has_value());

  auto t1 = ListApiKeys(db_.get(), "t1");
  ASSERT_TRUE(t1.ok());
  ASSERT_EQ(t1->size(), 2u);
  EXPECT_EQ((*t1)[0].id, "a");  // same time: by id
  EXPECT_TRUE((*t1)[0].users.empty());
  EXPECT_TRUE((*t1)[0].hash.empty());
  auto all = ListApiKeys(db_.get(), "");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, "c");  // oldest first

  EXPECT_EQ(*CountActiveApiKeys(db_.get()), 3);
  EXPECT_TRUE(*RevokeApiKey(db_.get(), "a", 50));
  EXPECT_TRUE(*RevokeApiKey(db_.get(), "a", 60));  // twice: the first time stays
  EXPECT_FALSE(*RevokeApiKey(db_.get(), "zz", 60));
  EXPECT_EQ((*FindApiKey(db_.get(), "a"))->revoked_at, std::optional<TimeMs>(50));
  EXPECT_EQ(*CountActiveApiKeys(db_.get()), 2);
}

TEST_P(ApiKeysRepo, ExpiryLastUseAndTheOperatorRole) {
  ApiKeyRow k = Key("e", "t1", 10);
  k.role = "operator";
  k.expires_at = 500;
  ASSERT_TRUE(InsertApiKey(db_.get(), k).ok());
  auto found = FindApiKey(db_.get(), "e");
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status().ToString();
  EXPECT_EQ((*found)->role, "operator");
  EXPECT_EQ((*found)->expires_at, std::optional<TimeMs>(500));
  EXPECT_FALSE((*found)->last_used_at);
  ASSERT_TRUE(TouchApiKey(db_.get(), "e", 300).ok());
  ASSERT_TRUE(TouchApiKey(db_.get(), "e", 200).ok());  // an older use never moves it back
  EXPECT_EQ((*ListApiKeys(db_.get(), "t1"))[0].last_used_at, std::optional<TimeMs>(300));
}

// A version 3 store (keys without expiry or last use, three roles) opens
// as version 4 with its keys unchanged.
TEST_P(ApiKeysRepo, VersionThreeKeysMigrate) {
  const bool pg = GetParam() == "postgres";
  const std::string location = pg ? engram::testing::FreshPgDatabase() : ":memory:";
  auto opened = sql::Db::Open(location, {});
  ASSERT_TRUE(opened.ok());
  auto db = std::move(opened).value();
  ASSERT_TRUE(CreateSchemaAtVersion(db.get(), 3, 1).ok());
  ASSERT_TRUE(db->Exec("INSERT INTO api_keys(id, tenant, users, role, name, hash, created_at) "
                       "VALUES('k1', 't1', '[]', 'admin', 'old', 'h', 7)")
                  .ok());
  ASSERT_TRUE(EnsureSchema(db.get(), 2).ok());
  EXPECT_EQ(*GetMeta(db.get(), "schema_version"), std::to_string(kSchemaVersion));
  auto found = FindApiKey(db.get(), "k1");
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status().ToString();
  EXPECT_EQ((*found)->role, "admin");
  EXPECT_EQ((*found)->hash, "h");
  EXPECT_EQ((*found)->created_at, 7);
  EXPECT_FALSE((*found)->expires_at);
  ApiKeyRow op = Key("k2", "t1", 8);
  op.role = "operator";
  EXPECT_TRUE(InsertApiKey(db.get(), op).ok());
  ApiKeyRow bad = Key("k3", "t1", 8);
  bad.role = "root";
  EXPECT_FALSE(InsertApiKey(db.get(), bad).ok());
}

TEST_P(ApiKeysRepo, CountingFailsWithoutTheTable) {
  ASSERT_TRUE(db_->Exec("DROP TABLE api_keys").ok());
  EXPECT_FALSE(CountActiveApiKeys(db_.get()).ok());
}

INSTANTIATE_TEST_SUITE_P(Engines, ApiKeysRepo, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace engram::store
