// Status names, enum names and the system clock.
#include <gtest/gtest.h>

#include "core/clock.hpp"
#include "engram/result.hpp"
#include "engram/status.hpp"
#include "engram/types.hpp"

namespace engram {
namespace {

TEST(StatusTest, CodeNamesAreStable) {
  EXPECT_EQ(StatusCodeName(StatusCode::kOk), "ok");
  EXPECT_EQ(StatusCodeName(StatusCode::kInvalidArgument), "invalid_argument");
  EXPECT_EQ(StatusCodeName(StatusCode::kNotFound), "not_found");
  EXPECT_EQ(StatusCodeName(StatusCode::kAlreadyExists), "already_exists");
  EXPECT_EQ(StatusCodeName(StatusCode::kFailedPrecondition), "failed_precondition");
  EXPECT_EQ(StatusCodeName(StatusCode::kCorruption), "corruption");
  EXPECT_EQ(StatusCodeName(StatusCode::kIoError), "io_error");
  EXPECT_EQ(StatusCodeName(StatusCode::kUnavailable), "unavailable");
  EXPECT_EQ(StatusCodeName(StatusCode::kAborted), "aborted");
  EXPECT_EQ(StatusCodeName(StatusCode::kPermissionDenied), "permission_denied");
  EXPECT_EQ(StatusCodeName(StatusCode::kInternal), "internal");
}

TEST(StatusTest, ToStringJoinsCodeAndMessage) {
  EXPECT_EQ(Status::Ok().ToString(), "ok");
  EXPECT_EQ(Status().ToString(), "ok");
  EXPECT_EQ(Status::InvalidArgument("user: must not be empty").ToString(),
            "invalid_argument: user: must not be empty");
  EXPECT_EQ(Status::IoError("disk full").ToString(), "io_error: disk full");
  EXPECT_EQ(Status::NotFound("").ToString(), "not_found");
}

TEST(StatusTest, ResultCarriesValueOrStatus) {
  Result<int> good(7);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 7);
  Result<int> bad(Status::Aborted("retry"));
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kAborted);
}

TEST(StatusDeathTest, ValueOfAnErrorAbortsWithItsMessageInEveryBuild) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Result<int> r = Status::NotFound("memory m_1");
  EXPECT_DEATH((void)r.value(), "Result::value\\(\\) called on an error: .*memory m_1");
  EXPECT_DEATH((void)*r, "memory m_1");
}

TEST(TypesTest, TierNames) {
  EXPECT_STREQ(TierName(Tier::kStm), "stm");
  EXPECT_STREQ(TierName(Tier::kMtm), "mtm");
  EXPECT_STREQ(TierName(Tier::kArchive), "archive");
  EXPECT_STREQ(TierName(Tier::kLpm), "lpm");
}

TEST(TypesTest, ItemKindNames) {
  EXPECT_STREQ(ItemKindName(ItemKind::kStmTurn), "stm_turn");
  EXPECT_STREQ(ItemKindName(ItemKind::kPage), "page");
  EXPECT_STREQ(ItemKindName(ItemKind::kUserFact), "user_fact");
  EXPECT_STREQ(ItemKindName(ItemKind::kAssistantFact), "assistant_fact");
  EXPECT_STREQ(ItemKindName(ItemKind::kProfile), "profile");
}

TEST(ClockTest, SystemClockIsNearWallTimeAndMonotonicEnough) {
  const Clock& c = SystemClock::Default();
  EXPECT_EQ(&c, &SystemClock::Default());
  const TimeMs a = c.NowMs();
  EXPECT_GT(a, 1'700'000'000'000);  // after Nov 2023
  EXPECT_LT(a, 4'102'444'800'000);  // before 2100
  const TimeMs b = SystemClock().NowMs();
  EXPECT_GE(b, a - 1000);
}

TEST(ClockTest, FakeClockMovesOnlyWhenTold) {
  FakeClock c(1000);
  EXPECT_EQ(c.NowMs(), 1000);
  c.Advance(250);
  EXPECT_EQ(c.NowMs(), 1250);
  c.Set(5);
  EXPECT_EQ(c.NowMs(), 5);
}

}  // namespace
}  // namespace engram
