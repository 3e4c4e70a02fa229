// Idempotent admission: a retried batch with the same key admits nothing and
// returns the first admission's turns; the same key with other turns is
// refused; keys are per scope, forgotten after 24 hours (an import's are
// kept) and with the user.
#include <gtest/gtest.h>

#include "core/clock.hpp"
#include "engram/engine.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

class AdmissionKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    EngineOptions o;
    o.db_path = testing::StoreAt(dir_.File("e.db"));
    o.clock = &clock_;
    auto e = Engine::Open(o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(*e);
  }
  std::int64_t Admitted(const Scope& s) {
    auto st = engine_->GetStats(&s);
    EXPECT_TRUE(st.ok());
    return st.ok() ? st->turns_admitted : -1;
  }
  testing::TempDir dir_;
  FakeClock clock_{1700000000000};
  std::unique_ptr<Engine> engine_;
  const Scope alice_{"default", "alice", "a"};
  const std::vector<TurnInput> batch_ = {{"I moved to Lisbon", "Welcome!", {}, "", "", "", ""},
                                         {"I love trams", "They are lovely", {}, "", "", "", ""}};
};

TEST_F(AdmissionKeys, ARetryReturnsTheFirstAdmission) {
  AdmitOptions key{"batch-1"};
  auto first = engine_->AddTurns(alice_, batch_, key);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->front().replayed);
  auto again = engine_->AddTurns(alice_, batch_, key);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ(again->size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE((*again)[i].replayed);
    EXPECT_EQ((*again)[i].turn_id, (*first)[i].turn_id);
    EXPECT_EQ((*again)[i].seq, (*first)[i].seq);
  }
  EXPECT_EQ(Admitted(alice_), 2);
  // Without a key, the same turns are admitted again (a user may repeat themselves).
  ASSERT_TRUE(engine_->AddTurns(alice_, batch_).ok());
  EXPECT_EQ(Admitted(alice_), 4);
}

TEST_F(AdmissionKeys, TheSameKeyWithOtherTurnsIsRefusedAndWritesNothing) {
  ASSERT_TRUE(engine_->AddTurns(alice_, batch_, {"k"}).ok());
  auto other = engine_->AddTurns(alice_, {{"Something else", "ok", {}, "", "", "", ""}}, {"k"});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(Admitted(alice_), 2);
  EXPECT_EQ(engine_->AddTurns(alice_, batch_, {std::string(256, 'x')}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(engine_->AddTurns(alice_, batch_, {"a\nb"}).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(AdmissionKeys, KeysArePerScopeExpireAndGoWithTheUser) {
  const Scope bob{"default", "bob", "a"};
  ASSERT_TRUE(engine_->AddTurns(alice_, batch_, {"k"}).ok());
  auto b = engine_->AddTurns(bob, batch_, {"k"});
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->front().replayed);
  clock_.Advance(25LL * 3600 * 1000);  // beyond the 24 hours a key is remembered
  auto later = engine_->AddTurns(alice_, batch_, {"k"});
  ASSERT_TRUE(later.ok());
  EXPECT_FALSE(later->front().replayed);
  EXPECT_EQ(Admitted(alice_), 4);
  ASSERT_TRUE(engine_->ForgetUser("default", "bob").ok());
  auto anew = engine_->AddTurns(bob, batch_, {"k"});
  ASSERT_TRUE(anew.ok());
  EXPECT_FALSE(anew->front().replayed);
  EXPECT_EQ(Admitted(bob), 2);
}

// An import's key is kept as long as the scope: a restore run again much
// later admits nothing twice, while other keys age out around it.
TEST_F(AdmissionKeys, AKeptKeyNeverAgesOutButGoesWithTheUser) {
  AdmitOptions kept{"import:0:0:1"};
  kept.keep_key = true;
  auto first = engine_->AddTurns(alice_, batch_, kept);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(engine_->AddTurns(alice_, {{"Just passing", "ok", {}, "", "", "", ""}}, {"retry-key"}).ok());
  clock_.Advance(400LL * 24 * 3600 * 1000);
  // An admission prunes the aged keys of the scope; the kept one stays.
  ASSERT_TRUE(engine_->AddTurns(alice_, {{"A year on", "ok", {}, "", "", "", ""}}, {"another"}).ok());
  auto again = engine_->AddTurns(alice_, batch_, kept);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ(again->size(), 2u);
  EXPECT_TRUE(again->front().replayed);
  EXPECT_EQ(again->front().turn_id, first->front().turn_id);
  auto other = engine_->AddTurns(alice_, {{"Something else", "ok", {}, "", "", "", ""}}, kept);
  EXPECT_EQ(other.status().code(), StatusCode::kAlreadyExists);
  auto aged = engine_->AddTurns(alice_, {{"Just passing", "ok", {}, "", "", "", ""}}, {"retry-key"});
  ASSERT_TRUE(aged.ok());
  EXPECT_FALSE(aged->front().replayed);
  EXPECT_EQ(Admitted(alice_), 5);
  ASSERT_TRUE(engine_->ForgetUser("default", "alice").ok());
  auto anew = engine_->AddTurns(alice_, batch_, kept);
  ASSERT_TRUE(anew.ok());
  EXPECT_FALSE(anew->front().replayed);
}

}  // namespace
}  // namespace engram
