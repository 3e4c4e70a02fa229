// The time parser (core/time): ISO-8601 with offsets, LoCoMo session stamps,
// "8 May 2023" / "May 8, 2023". Invariants: a parsed time lies in the years
// the parser promises (1000..9999, give or take an offset of a day); its ISO
// form parses back to the same instant; the formatters never fail.
#include <cstdint>
#include <string>

#include "core/time.hpp"
#include "fuzz_support.hpp"

namespace {
// 1000-01-01 minus a day and 10000-01-01 plus a day, in ms since the epoch.
constexpr engram::TimeMs kDayMs = 86400000;
const engram::TimeMs kLow = engram::MakeTimeMs(1000, 1, 1) - kDayMs;
const engram::TimeMs kHigh = engram::MakeTimeMs(10000, 1, 1) + kDayMs;
const engram::TimeMs kYear1000 = engram::MakeTimeMs(1000, 1, 1);
const engram::TimeMs kYear10000 = engram::MakeTimeMs(10000, 1, 1);
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(engram::fuzz::AsText(data, size));
  auto t = engram::ParseTime(text);
  if (!t.ok()) {
    FUZZ_CHECK(t.status().code() == engram::StatusCode::kInvalidArgument, t.status().ToString());
    return 0;
  }
  FUZZ_CHECK(*t >= kLow && *t < kHigh, "out of range: " + std::to_string(*t));
  const std::string iso = engram::FormatIso8601(*t);
  const std::string human = engram::FormatHumanDateTime(*t);
  FUZZ_CHECK(!engram::FormatHumanDate(*t).empty() && !human.empty(), iso);
  if (*t >= kYear1000 && *t < kYear10000) {
    auto back = engram::ParseTime(iso);
    FUZZ_CHECK(back.ok(), iso + ": " + back.status().ToString());
    FUZZ_CHECK(*back == *t, iso + " parsed as " + std::to_string(*back) + ", not " + std::to_string(*t));
  }
  return 0;
}
