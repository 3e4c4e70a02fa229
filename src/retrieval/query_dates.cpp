#include "retrieval/query_dates.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

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

// Words after which a month's name is a month: "in June", "during May",
// "early March", "the second week of November" ("this may" is a verb).
bool IntroducesMonth(const std::string& t, int month) {
  static constexpr std::string_view kWords[] = {"in", "during", "since", "until", "till", "of", "early",
                                                "late", "mid", "last", "this", "next", "before", "after",
                                                "around", "through", "throughout"};
  if (month == 5 && t == "this") return false;
  return std::find(std::begin(kWords), std::end(kWords), t) != std::end(kWords);
}

TimeWindow Widen(TimeMs from, TimeMs to, int slack_days) {
  const TimeMs slack = static_cast<TimeMs>(slack_days) * kDayMs;
  return {from - slack, to + slack};
}

TimeWindow Days(std::int64_t from, std::int64_t to) { return {from * kDayMs, to * kDayMs}; }

int Weekday(const std::string& t) {
  static constexpr std::string_view kNames[] = {"monday", "tuesday", "wednesday", "thursday",
                                                "friday", "saturday", "sunday"};
  for (int d = 0; d < 7; ++d) {
    if (t == kNames[d]) return d;
  }
  return -1;
}

// "two", "a", "couple" ... before a unit of "ago": how many; 0 when not a count.
int Count(const std::string& t) {
  static constexpr std::pair<std::string_view, int> kWords[] = {
      {"a", 1},    {"an", 1},    {"one", 1},   {"two", 2},   {"three", 3}, {"four", 4},
      {"five", 5}, {"six", 6},   {"seven", 7}, {"eight", 8}, {"nine", 9},  {"ten", 10},
      {"couple", 2}, {"few", 3}};
  for (const auto& [w, n] : kWords) {
    if (t == w) return n;
  }
  return Number(t, 1, 99);
}

}  // namespace

DayWindow DayWindow::Of(const TimeWindow& w) {
  if (w.empty()) return {};
  return {static_cast<std::int32_t>(DayOf(w.from)), static_cast<std::int32_t>(DayOf(w.to - 1) + 1)};
}

bool DayWindow::Meets(const TimeWindow& w) const {
  return !empty() && !w.empty() && from * kDayMs < w.to && to * kDayMs > w.from;
}

TimeWindow SaidWindow(const std::vector<std::string>& tokens, TimeMs said_at) {
  const std::int64_t today = DayOf(said_at);
  const std::int64_t weekday = ((today + 3) % 7 + 7) % 7;  // 0 Monday: 1 January 1970 was a Thursday
  const std::int64_t monday = today - weekday;
  auto month = [&](int delta) {
    const TimeMs from = MakeTimeMs(YearOf(said_at), MonthOf(said_at) + delta, 1);
    return TimeWindow{from, MakeTimeMs(YearOf(said_at), MonthOf(said_at) + delta + 1, 1)};
  };
  const std::string none;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    const std::string& prev = i > 0 ? tokens[i - 1] : none;
    const std::string& next = i + 1 < tokens.size() ? tokens[i + 1] : none;
    // ("the day before yesterday", "the day after tomorrow")
    const int beyond = i >= 2 && tokens[i - 2] == "day" && (prev == "before" || prev == "after") ? 1 : 0;
    if (t == "yesterday") return Days(today - 1 - beyond, today - beyond);
    if (t == "today" || t == "tonight") return Days(today, today + 1);
    if (t == "tomorrow") return Days(today + 1 + beyond, today + 2 + beyond);
    if (t == "this" && (next == "morning" || next == "afternoon" || next == "evening")) {
      return Days(today, today + 1);
    }
    if (t == "last" && next == "night") return Days(today - 1, today + 1);
    if (t == "last" || t == "this" || t == "next") {
      const int step = t == "last" ? -1 : t == "this" ? 0 : 1;
      if (next == "week") return Days(monday + 7 * step, monday + 7 * step + 7);
      if (next == "weekend") return Days(monday + 7 * step + 5, monday + 7 * step + 7);
      if (next == "month") return month(step);
      if (const int wd = Weekday(next); wd >= 0 && step != 0) {
        // "last Friday": the latest Friday before today; "next Friday": the first after it.
        const std::int64_t back = (weekday - wd + 7) % 7, ahead = (wd - weekday + 7) % 7;
        const std::int64_t day = step < 0 ? today - (back == 0 ? 7 : back) : today + (ahead == 0 ? 7 : ahead);
        return Days(day, day + 1);
      }
    }
    if (t == "ago" && i >= 2) {
      std::string unit = prev;
      if (!unit.empty() && unit.back() == 's') unit.pop_back();
      // "two days ago", "a couple of days ago", "a few weeks ago"
      const std::string& before = tokens[i - 2];
      const int n = before == "of" && i >= 3 ? Count(tokens[i - 3]) : Count(before);
      if (n == 0) continue;
      if (unit == "day") return Days(today - n - 1, today - n + 2);
      if (unit == "week") return Days(today - 7 * n - 3, today - 7 * n + 4);
      if (unit == "month") return month(-n);
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
