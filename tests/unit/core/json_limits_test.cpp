#include "core/json_limits.hpp"

#include <gtest/gtest.h>

#include <string>

namespace engram::json_limits {
namespace {

TEST(JsonLimits, CountsNestingOutsideStrings) {
  EXPECT_EQ(NestingDepth("1"), 0);
  EXPECT_EQ(NestingDepth("{}"), 1);
  EXPECT_EQ(NestingDepth(R"({"a":[1,{"b":[]}]})"), 4);
  EXPECT_EQ(NestingDepth(R"({"a":"[[[[{{{{"})"), 1);
  EXPECT_EQ(NestingDepth(R"({"a":"\"[[[["})"), 1);
  EXPECT_EQ(NestingDepth(R"(["\\",[[]]])"), 3);
}

TEST(JsonLimits, StopsEarlyOnHostileDepth) {
  const std::string deep(100000, '[');
  EXPECT_EQ(NestingDepth(deep), kMaxDepth + 1);
  EXPECT_FALSE(WithinDepth(deep));
  std::string ok(kMaxDepth, '[');
  ok += std::string(kMaxDepth, ']');
  EXPECT_TRUE(WithinDepth(ok));
  EXPECT_FALSE(WithinDepth("[" + ok + "]"));
  EXPECT_EQ(TooDeepMessage(), "JSON nested deeper than 128 levels");
}

TEST(JsonLimits, UnbalancedInputNeverGoesNegative) {
  EXPECT_EQ(NestingDepth("]]]]}}}}[["), 2);
  EXPECT_EQ(NestingDepth("\"unterminated [[["), 0);
}

}  // namespace
}  // namespace engram::json_limits
