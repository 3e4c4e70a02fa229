// Dates a question names ("what did Anna say on 8 May, 2023?", "in June
// 2023", "on October 13, 2023"), as a window of time: the messages of that
// day or month are where such a question is answered; and the days a
// message's own time expression points to ("yesterday", "last Friday"),
// which may lie outside the day it was said.
#pragma once

#include <cstdint>
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

// Whole days since the epoch (UTC), [from, to): a time window as a message
// keeps it (TurnEntry::said), in 8 bytes.
struct DayWindow {
  std::int32_t from = 0, to = 0;
  bool empty() const { return from >= to; }
  // The days `w` covers, in part or whole; empty for an empty `w`.
  static DayWindow Of(const TimeWindow& w);
  // Whether these days and `w` share a moment (false when either is empty).
  bool Meets(const TimeWindow& w) const;
};

// The window of the first date the query names: a day ("8 May, 2023", "May
// 8 2023", "2023-05-08") widened by `slack_days` on each side, or a month
// ("June 2023", widened the same way), or a season's three months
// (meteorological, northern: "summer 2022", "the summer of 2021"; winter
// 2023 is December 2022 to February 2023). A day, a month or a season named
// without its year ("on Aug 15th", "in June", "the second week of November",
// "during the summer") is the latest one that began by `latest` (the newest
// message of the scope), and no window without `latest`. Empty when the
// query names none (a year alone is not a window; nor is a month's name
// without a day that no "in", "of", "during", "early" ... introduces: "may"
// and "march" are verbs too; nor one after "next", a month to come, of which
// no message is yet; nor a season's name without its year that no such word
// but "of" introduces: "the colours of autumn", "next summer", "fall" the
// verb).
TimeWindow QueryDateWindow(const std::string& query, int slack_days = 1,
                           std::optional<TimeMs> latest = std::nullopt);
// The same from the question's tokens (text::Tokenize), made once per query.
TimeWindow QueryDateWindow(const std::vector<std::string>& tokens, int slack_days = 1,
                           std::optional<TimeMs> latest = std::nullopt);

// The days a message's own time expression points to, from `said_at` (when
// it was said): the first of the expressions core's FindRelativeTimes finds
// ("yesterday", "tonight", "last night", "last week", "last weekend", "last
// month", "last May", "last Friday", "next Fri", "two days ago", "a couple of
// weeks ago", "3 months ago") that points at days: a day (a night runs into
// the next one), a week, a weekend or a month, "<n> days ago" widened by a
// day and "<n> weeks ago" by half a week ("ago" is loose). Whole days (UTC);
// empty when the message has none ("last year", "last summer", "recently"
// and weekdays alone are too wide or ambiguous to point at a day). Tokens as
// text::Tokenize makes them.
TimeWindow SaidWindow(const std::vector<std::string>& tokens, TimeMs said_at);

}  // namespace engram::retrieval
