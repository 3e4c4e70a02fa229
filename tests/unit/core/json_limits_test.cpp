#include "core/json_limits.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/json_keys.hpp"

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

// DuplicateKeys notes the first key an object repeats, keys compared as
// parsed; siblings and the objects of an array have keys of their own.
TEST(DuplicateKeys, FindsAKeyAnObjectRepeats) {
  auto check = [](const std::string& text) {
    engram::json_limits::DuplicateKeys keys;
    auto j = nlohmann::json::parse(text, std::ref(keys), false);
    EXPECT_FALSE(j.is_discarded()) << text;
    return keys.found() ? keys.Message() : std::string();
  };
  EXPECT_EQ(check(R"({"a": 1, "b": 2})"), "");
  EXPECT_EQ(check(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})"), "");
  EXPECT_EQ(check(R"({"a": {"x": 1}, "x": 2})"), "");
  EXPECT_EQ(check(R"({"user": "a", "user": "b"})"), "key \"user\" appears twice in one object");
  EXPECT_EQ(check(R"({"user": "a", "\u0075ser": "b"})"), "key \"user\" appears twice in one object");
  EXPECT_EQ(check(R"([{"m": {"k": 1, "j": 2, "k": 3}}])"), "key \"k\" appears twice in one object");
  EXPECT_EQ(check(R"({"a": 1, "b": 1, "a": 2, "b": 2})"), "key \"a\" appears twice in one object");
  // The key is cut in the message.
  const std::string long_key(500, 'k');
  const std::string message = check("{\"" + long_key + "\": 1, \"" + long_key + "\": 2}");
  EXPECT_LT(message.size(), 120u);
}
