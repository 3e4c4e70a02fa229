// Units of the server layer: API keys, metrics text, --listen parsing.
#include <gtest/gtest.h>

#include "engram/engine.hpp"
#include "server/api_keys.hpp"
#include "server/metrics.hpp"
#include "server/serve.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram::server {
namespace {

class ApiKeysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = Engine::Open({.db_path = testing::StoreAt(dir_.File("engram.db"))});
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(*e);
    auto k = ApiKeys::Open(testing::StoreAt(dir_.File("engram.db")));
    ASSERT_TRUE(k.ok()) << k.status().ToString();
    keys_ = std::move(*k);
  }
  testing::TempDir dir_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<ApiKeys> keys_;
};

TEST_F(ApiKeysTest, CreatedKeyAuthenticatesWithItsRightsAndIsStoredOnlyAsAHash) {
  auto created = keys_->Create("acme", {"alice", "bob", "alice"}, Role::kWrite, "ci", 1000);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->first.users, (std::vector<std::string>{"alice", "bob"}));  // each user once
  const std::string key = created->second;
  EXPECT_EQ(key.rfind("egk_" + created->first.id + "_", 0), 0u);
  auto who = keys_->Authenticate(key, 1500);
  ASSERT_TRUE(who.ok());
  ASSERT_TRUE(who->has_value());
  EXPECT_EQ((*who)->tenant, "acme");
  EXPECT_EQ((*who)->role, Role::kWrite);
  EXPECT_TRUE((*who)->AllowsUser("alice"));
  EXPECT_FALSE((*who)->AllowsUser("carol"));
  EXPECT_EQ((*who)->users, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_TRUE((*who)->Can(Role::kRead));
  EXPECT_FALSE((*who)->Can(Role::kAdmin));
  // The secret part is nowhere in the store (its files, or any PostgreSQL table).
  if (testing::OnPostgres()) {
    EXPECT_EQ(testing::PgOccurrences(testing::StoreAt(dir_.File("engram.db")), key.substr(18)), 0);
  } else {
    const std::string rows = testing::ReadFile(dir_.File("engram.db")) + testing::ReadFile(dir_.File("engram.db-wal"));
    EXPECT_EQ(rows.find(key.substr(18)), std::string::npos);
  }
}

TEST_F(ApiKeysTest, WrongMalformedAndRevokedKeysAreRefused) {
  auto created = keys_->Create("acme", {}, Role::kAdmin, "", 1000);
  ASSERT_TRUE(created.ok());
  std::string tampered = created->second;
  tampered.back() = tampered.back() == 'A' ? 'B' : 'A';
  for (const std::string& k : {tampered, std::string("egk_"), std::string("nonsense"), std::string()}) {
    auto who = keys_->Authenticate(k, 1500);
    ASSERT_TRUE(who.ok());
    EXPECT_FALSE(who->has_value()) << k;
  }
  EXPECT_EQ(*keys_->CountActive(), 1);
  ASSERT_TRUE(keys_->Revoke(created->first.id, 2000).ok());
  EXPECT_TRUE(keys_->Revoke(created->first.id, 3000).ok());  // twice is fine
  EXPECT_FALSE(keys_->Authenticate(created->second, 2500)->has_value());
  EXPECT_EQ(*keys_->CountActive(), 0);
  auto listed = keys_->List("acme");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].revoked_at, 2000);
  EXPECT_EQ(keys_->Revoke("000000000000", 1).code(), StatusCode::kNotFound);
}

TEST_F(ApiKeysTest, InvalidTenantsUsersAndRolesAreRefused) {
  EXPECT_EQ(keys_->Create("", {}, Role::kRead, "", 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(keys_->Create("acme", {"bad\nuser"}, Role::kRead, "", 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseRole("root").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*ParseRole("admin"), Role::kAdmin);
}

TEST_F(ApiKeysTest, KeysExpireAndRecordTheirLastUseToTheMinute) {
  EXPECT_EQ(keys_->Create("acme", {}, Role::kRead, "", 1000, 1000).status().code(), StatusCode::kInvalidArgument)
      << "an expiry must be after the creation";
  auto created = keys_->Create("acme", {}, Role::kRead, "short", 1000, 100'000);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->first.expires_at, std::optional<TimeMs>(100'000));
  auto never = keys_->Create("acme", {}, Role::kRead, "unused", 1000);
  ASSERT_TRUE(never.ok());
  auto listed = [&](const std::string& id) {
    const auto keys = keys_->List("acme");  // held: iterating inside a temporary Result would dangle
    for (const auto& k : *keys) {
      if (k.id == id) return k;
    }
    return ApiKeyInfo{};
  };
  EXPECT_FALSE(listed(created->first.id).last_used_at);

  ASSERT_TRUE(keys_->Authenticate(created->second, 5000)->has_value());
  EXPECT_EQ(listed(created->first.id).last_used_at, std::optional<TimeMs>(5000));
  ASSERT_TRUE(keys_->Authenticate(created->second, 30'000)->has_value());
  EXPECT_EQ(listed(created->first.id).last_used_at, std::optional<TimeMs>(5000)) << "within the minute: not written";
  ASSERT_TRUE(keys_->Authenticate(created->second, 70'000)->has_value());
  EXPECT_EQ(listed(created->first.id).last_used_at, std::optional<TimeMs>(70'000));
  // From its expiry on, the key is refused; revocation is not needed.
  EXPECT_TRUE(keys_->Authenticate(created->second, 99'999)->has_value());
  EXPECT_FALSE(keys_->Authenticate(created->second, 100'000)->has_value());
  EXPECT_FALSE(keys_->Authenticate(created->second, 200'000)->has_value());
  EXPECT_EQ(listed(created->first.id).expires_at, std::optional<TimeMs>(100'000));
  EXPECT_FALSE(listed(never->first.id).last_used_at) << "a key never used says so";
}

TEST_F(ApiKeysTest, TheOperatorRoleIsAboveAdmin) {
  auto op = keys_->Create("acme", {}, Role::kOperator, "ops", 1000);
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  auto who = keys_->Authenticate(op->second, 2000);
  ASSERT_TRUE(who.ok() && who->has_value());
  EXPECT_TRUE((*who)->Can(Role::kAdmin));
  EXPECT_TRUE((*who)->Can(Role::kOperator));
  EXPECT_EQ(*ParseRole("operator"), Role::kOperator);
  EXPECT_STREQ(RoleName(Role::kOperator), "operator");
  auto admin = keys_->Create("acme", {}, Role::kAdmin, "", 1000);
  EXPECT_FALSE((*keys_->Authenticate(admin->second, 2000))->Can(Role::kOperator));
}

TEST(Serve, QuotaAndSizeTexts) {
  ApiOptions::Quota q;
  ASSERT_TRUE(ParseQuota("turns=100,bytes=5M", &q).ok());
  EXPECT_EQ(q.turns, 100);
  EXPECT_EQ(q.memories, 0);
  EXPECT_EQ(q.bytes, 5 << 20);
  ASSERT_TRUE(ParseQuota("memories=7", &q).ok());
  EXPECT_EQ(q.memories, 7);
  for (const char* bad : {"", "turns", "turns=", "turns=-1", "turns=5K", "rows=5", "turns=5,", "bytes=5X",
                          "bytes=99999999999999999T"}) {
    ApiOptions::Quota x;
    Status st = ParseQuota(bad, &x);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(*ParseSize("512"), 512);
  EXPECT_EQ(*ParseSize("64K"), 64 << 10);
  EXPECT_EQ(*ParseSize("10MiB"), 10 << 20);
  EXPECT_EQ(*ParseSize("2gb"), std::int64_t{2} << 30);
}

TEST(Metrics, RendersCountersAndCumulativeHistograms) {
  Metrics m;
  m.Observe("/v1/retrieve", "POST", 200, 0.0004);
  m.Observe("/v1/retrieve", "POST", 200, 0.003);
  m.Observe("/v1/retrieve", "POST", 400, 0.0001);
  const std::string text = m.Render();
  EXPECT_NE(text.find("engram_http_requests_total{route=\"/v1/retrieve\",method=\"POST\",status=\"200\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("engram_http_requests_total{route=\"/v1/retrieve\",method=\"POST\",status=\"400\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("route=\"/v1/retrieve\",method=\"POST\",le=\"0.0005\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("route=\"/v1/retrieve\",method=\"POST\",le=\"0.005\"} 3"), std::string::npos) << text;
  EXPECT_NE(text.find("le=\"+Inf\"} 3"), std::string::npos);
  EXPECT_NE(text.find("engram_http_request_duration_seconds_count{route=\"/v1/retrieve\",method=\"POST\"} 3"),
            std::string::npos);
  EXPECT_EQ(LabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(Serve, ListenAddressesAndLoopback) {
  std::string host;
  int port = 0;
  ASSERT_TRUE(ParseListen("127.0.0.1:8420", &host, &port).ok());
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 8420);
  ASSERT_TRUE(ParseListen("[::1]:0", &host, &port).ok());
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 0);
  for (const char* bad : {"8420", ":8420", "localhost:", "host:99999", "host:8x"}) {
    EXPECT_EQ(ParseListen(bad, &host, &port).code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(IsLoopback("127.0.0.1"));
  EXPECT_TRUE(IsLoopback("::1"));
  EXPECT_TRUE(IsLoopback("localhost"));
  EXPECT_FALSE(IsLoopback("0.0.0.0"));
  EXPECT_FALSE(IsLoopback("192.168.1.5"));
}

}  // namespace
}  // namespace engram::server
