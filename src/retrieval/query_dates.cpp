#include "retrieval/query_dates.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include "core/relative_time.hpp"
#include "core/text.hpp"
#include "core/time.hpp"

namespace engram::retrieval {

namespace {

constexpr TimeMs kDayMs = 86400000;

// 1-12 for a month's name or its usual abbreviation ("jan", "sep", "sept"),
// 0 otherwise.
int Month(const std::string& t) { return t == "sept" ? 9 : MonthFromWord(t); }

bool AllDigits(const std::string& t) {
  if (t.empty()) return false;
  for (char c : t) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

int Number(const std::string& t, int lo, int hi) {
  std::string digits = t;
  // "8th", "1st", "22nd", "3rd"
  for (const char* suffix : {"st", "nd", "rd", "th"}) {
    const std::string s = suffix;
    if (digits.size() > s.size() && digits.compare(digits.size() - s.size(), s.size(), s) == 0) {
      digits.resize(digits.size() - s.size());
      break;
    }
  }
  if (!AllDigits(digits) || digits.size() > 4) return 0;
  const int v = std::atoi(digits.c_str());
  return v >= lo && v <= hi ? v : 0;
}

// Words after which a month's name is a month of the past: "in June",
// "during May", "early March", "the second week of November" ("this may" is
// a verb; "next June" is one to come, of which no message is yet).
bool IntroducesMonth(const std::string& t, int month) {
  static constexpr std::string_view kWords[] = {
      "in",  "during", "since", "until",  "till",  "of",     "early",   "late",
      "mid", "last",   "this",  "before", "after", "around", "through", "throughout"};
  if (month == 5 && t == "this") return false;
  return std::find(std::begin(kWords), std::end(kWords), t) != std::end(kWords);
}

TimeWindow Widen(TimeMs from, TimeMs to, int slack_days) {
  const TimeMs slack = static_cast<TimeMs>(slack_days) * kDayMs;
  return {from - slack, to + slack};
}

TimeWindow Days(std::int64_t from, std::int64_t to) { return {from * kDayMs, to * kDayMs}; }

}  // namespace

DayWindow DayWindow::Of(const TimeWindow& w) {
  if (w.empty()) return {};
  return {static_cast<std::int32_t>(DayOf(w.from)), static_cast<std::int32_t>(DayOf(w.to - 1) + 1)};
}

bool DayWindow::Meets(const TimeWindow& w) const {
  return !empty() && !w.empty() && from * kDayMs < w.to && to * kDayMs > w.from;
}

TimeWindow SaidWindow(const std::vector<std::string>& tokens, TimeMs said_at) {
  using Unit = RelativeTime::Unit;
  for (const RelativeTime& r : FindRelativeTimes(tokens, said_at)) {
    switch (r.unit) {
      case Unit::kDay:
        // "two days ago" is loose by a day either way; a night runs into the next day.
        if (r.ago > 0) return Days(r.day - 1, r.day + 2);
        return Days(r.day, r.day + (r.part == RelativeTime::Part::kNight ? 2 : 1));
      case Unit::kWeek:
        if (r.ago > 0)
          return Days(r.day - 3, r.day + 4);  // "two weeks ago": half a week either way
        return Days(r.day, r.day + 7);
      case Unit::kWeekend:
        return Days(r.day, r.day + 2);
      case Unit::kMonth: {
        const TimeMs from = r.day * kDayMs;
        return {from, MakeTimeMs(YearOf(from), MonthOf(from) + 1, 1)};
      }
      case Unit::kSeason:
      case Unit::kYear:
        break;  // too wide to point at a day
    }
  }
  return {};
}

TimeWindow QueryDateWindow(const std::string& query, int slack_days, std::optional<TimeMs> latest) {
  return QueryDateWindow(text::Tokenize(query), slack_days, latest);
}

TimeWindow QueryDateWindow(const std::vector<std::string>& tokens, int slack_days, std::optional<TimeMs> latest) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    // ISO dates: "2023-05-08" is one token.
    const std::string& t = tokens[i];
    if (t.size() == 10 && t[4] == '-' && t[7] == '-') {
      const int y = Number(t.substr(0, 4), 1000, 9999), m = Number(t.substr(5, 2), 1, 12),
                d = Number(t.substr(8, 2), 1, 31);
      if (y && m && d && d <= DaysInMonth(y, m)) {
        const TimeMs day = MakeTimeMs(y, m, d);
        return Widen(day, day + kDayMs, slack_days);
      }
    }
    // A season: "summer 2022", "the summer of 2021", "in the spring", "last
    // winter" (winter 2023 is December 2022 to February 2023, the winter of
    // its January).
    if (const int first = SeasonFromWord(t)) {
      std::size_t next = i + 1;
      if (next < tokens.size() && tokens[next] == "of") ++next;
      int year =
          next < tokens.size() && tokens[next].size() == 4 ? Number(tokens[next], 1000, 9999) : 0;
      if (year) {
        if (first == 12) --year;
      } else {
        // Without its year, after a word that introduces a time ("in the
        // fall", "during summer", "last winter"; "fall" alone is a verb more
        // often), the latest one that began by `latest`; not after "of"
        // ("the colours of autumn") nor "next" (one to come).
        const std::size_t before = i > 0 && tokens[i - 1] == "the" ? i - 1 : i;
        if (!latest || before == 0 || tokens[before - 1] == "of" ||
            !IntroducesMonth(tokens[before - 1], 0)) {
          continue;
        }
        year = YearOf(*latest);
        if (MakeTimeMs(year, first, 1) > *latest) --year;
      }
      const TimeMs from = MakeTimeMs(year, first, 1);
      const TimeMs to = first == 12 ? MakeTimeMs(year + 1, 3, 1) : MakeTimeMs(year, first + 3, 1);
      return Widen(from, to, slack_days);
    }
    const int month = Month(t);
    if (!month) continue;
    // "8 May, 2023" / "May 8, 2023" / "May 2023"
    int day = i > 0 ? Number(tokens[i - 1], 1, 31) : 0;
    std::size_t next = i + 1;
    if (!day && next < tokens.size() && tokens[next].size() <= 4) {
      day = Number(tokens[next], 1, 31);
      if (day) ++next;
    }
    int year = next < tokens.size() && tokens[next].size() == 4 ? Number(tokens[next], 1000, 9999) : 0;
    if (!year) {
      // Without its year, a day ("on Aug 15th") or a month after a word that
      // introduces one ("in June", "of November"; "may" and "march" alone
      // are verbs more often) is the latest one that began by `latest`.
      if (!latest || (!day && (i == 0 || !IntroducesMonth(tokens[i - 1], month)))) continue;
      year = YearOf(*latest);
      if (MakeTimeMs(year, month, day ? day : 1) > *latest) --year;
    }
    if (day && day <= DaysInMonth(year, month)) {
      const TimeMs from = MakeTimeMs(year, month, day);
      return Widen(from, from + kDayMs, slack_days);
    }
    const TimeMs from = MakeTimeMs(year, month, 1);
    return Widen(from, from + DaysInMonth(year, month) * kDayMs, slack_days);
  }
  return {};
}

}  // namespace engram::retrieval
