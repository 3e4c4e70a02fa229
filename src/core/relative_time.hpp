// Times said relative to the moment of saying ("yesterday", "last week",
// "two days ago"): found in a text's words and made absolute. Dialogue
// retrieval reads the days a message points to (retrieval::SaidWindow); the
// built-in fact rules write a fact's time as a date, so that "I went to the
// dentist yesterday" is still true of its day when read a month later.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engram/types.hpp"

namespace engram {

struct RelativeTime {
  enum class Unit { kDay, kWeek, kWeekend, kMonth, kSeason, kYear };
  enum class Part { kNone, kMorning, kAfternoon, kEvening, kNight };
  std::size_t first = 0;  // its first token
  std::size_t count = 0;  // its tokens
  Unit unit = Unit::kDay;
  Part part = Part::kNone;  // a day's part ("this morning", "last night", "tomorrow evening")
  // The first day it points to (whole UTC days since the epoch): a week's
  // Monday, a weekend's Saturday, a month's, a season's or a year's first
  // day; for "<n>
  // days/weeks ago" the day n days or weeks before the day it was said.
  std::int64_t day = 0;
  bool weekday = false;  // it names a weekday ("last Friday", "next Tues")
  int ago = 0;           // "<n> <units> ago": n; 0 for any other expression
  bool loose = false;    // ... with a count that is no number ("a few", "a couple of")
};

// The relative times of lower-cased word tokens (text::Tokenize's), in order
// and not overlapping, against `said_at`:
// - days: "yesterday", "today", "tonight" (an evening), "tomorrow", each
//   with a part of the day after it ("tomorrow morning"), "this morning",
//   "this afternoon", "this evening", "last night", "the day before
//   yesterday", "the day after tomorrow";
// - "last", "this" or "next" + "week", "weekend", "month" or "year" (a
//   week runs Monday to Sunday; "last weekend" is the Saturday and Sunday
//   before the week of `said_at`); "last" or "next" + a weekday or its
//   short form ("last Friday": the latest Friday before the day said;
//   "next Tues": the first Tuesday after it), a month's name ("last May":
//   the latest May before the month said) or a season but winter ("last
//   summer": the latest summer that ended before the month said; spring
//   is March to May, summer June to August, autumn or fall September to
//   November);
// - "<count> days/weeks/months/years ago", the count a number ("3",
//   "two") or "a", "an", "a few", "a couple of".
// Not: "recently", a season or a month alone or after "this", a weekday
// alone or after "this" (past or to come?), "the other day".
std::vector<RelativeTime> FindRelativeTimes(std::span<const std::string> tokens, TimeMs said_at);

// `text` with each relative time written as the date it points to, against
// `said_at`: "I went hiking yesterday" -> "I went hiking on 7 May 2023",
// "Last Fri I ..." -> "On Friday 5 May 2023 I ...", "last week" -> "in the
// week of 1 May 2023", "last month" -> "in April 2023", "two years ago" ->
// "in 2021", "a few days ago" -> "a few days before 8 May 2023"; after a
// preposition without its own ("since yesterday" -> "since 7 May 2023"),
// and as a subject ("Today is my birthday" -> "8 May 2023 is my
// birthday"), and a possessive as the date before its thing
// ("yesterday's class" -> "the 7 May 2023 class", "last month's trip" ->
// "the April 2023 trip"). Left as written: a duration ("over the last
// week", "for the next month"), a week's, a weekend's or a count ago's
// possessive ("last week's game"), and every other word.
std::string WithAbsoluteTimes(std::string_view text, TimeMs said_at);

}  // namespace engram
