// Dates a question names ("what did Anna say on 8 May, 2023?", "in June
// 2023", "on October 13, 2023"), as a window of time: the messages of that
// day or month are where such a question is answered.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engram/types.hpp"

namespace engram::retrieval {

// [from, to) in milliseconds since the epoch (UTC); empty when from >= to.
struct TimeWindow {
  TimeMs from = 0;
  TimeMs to = 0;
  bool empty() const { return from >= to; }
  bool contains(TimeMs t) const { return t >= from && t < to; }
};

// The window of the first date the query names: a day ("8 May, 2023", "May
// 8 2023", "2023-05-08") widened by `slack_days` on each side, or a month
// ("June 2023", widened the same way). A day or a month named without its
// year ("on Aug 15th", "in June", "the second week of November") is the
// latest one that began by `latest` (the newest message of the scope), and
// no window without `latest`. Empty when the query names none (a year alone
// is not a window; nor is a month's name without a day that no "in", "of",
// "during", "early" ... introduces: "may" and "march" are verbs too).
TimeWindow QueryDateWindow(const std::string& query, int slack_days = 1,
                           std::optional<TimeMs> latest = std::nullopt);
// The same from the question's tokens (text::Tokenize), made once per query.
TimeWindow QueryDateWindow(const std::vector<std::string>& tokens, int slack_days = 1,
                           std::optional<TimeMs> latest = std::nullopt);

}  // namespace engram::retrieval
