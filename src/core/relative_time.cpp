#include "core/relative_time.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <utility>

#include "core/time.hpp"

namespace engram {

namespace {

constexpr TimeMs kDayMs = 86400000;

// 0 (Monday) .. 6 for a weekday's name or its usual short form, -1 otherwise.
int Weekday(std::string_view t) {
  static constexpr std::array<std::pair<std::string_view, int>, 17> kNames = {{
      {"monday", 0},
      {"mon", 0},
      {"tuesday", 1},
      {"tue", 1},
      {"tues", 1},
      {"wednesday", 2},
      {"wed", 2},
      {"thursday", 3},
      {"thu", 3},
      {"thur", 3},
      {"thurs", 3},
      {"friday", 4},
      {"fri", 4},
      {"saturday", 5},
      {"sat", 5},
      {"sunday", 6},
      {"sun", 6},
  }};
  for (const auto& [name, d] : kNames) {
    if (t == name) return d;
  }
  return -1;
}

std::string_view WeekdayTitle(std::int64_t day) {
  static constexpr std::array<std::string_view, 7> kTitles = {
      "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
  return kTitles[static_cast<std::size_t>(((day + 3) % 7 + 7) %
                                          7)];  // 1 January 1970 was a Thursday
}

// A number of 1 to 99 in figures, or 0.
int Figures(std::string_view t) {
  if (t.empty() || t.size() > 2) return 0;
  int v = 0;
  for (char c : t) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return 0;
    v = v * 10 + (c - '0');
  }
  return v;
}

// How many a count word before a unit of "ago" says ("two", "a", "couple",
// "3"); 0 when it is no count.
int Count(std::string_view t) {
  static constexpr std::array<std::pair<std::string_view, int>, 14> kWords = {{
      {"a", 1},
      {"an", 1},
      {"one", 1},
      {"two", 2},
      {"three", 3},
      {"four", 4},
      {"five", 5},
      {"six", 6},
      {"seven", 7},
      {"eight", 8},
      {"nine", 9},
      {"ten", 10},
      {"couple", 2},
      {"few", 3},
  }};
  for (const auto& [w, n] : kWords) {
    if (t == w) return n;
  }
  return Figures(t);
}

// The first month of a season of the northern hemisphere ("summer": 6), 0
// for any other word.
int SeasonStart(std::string_view t) {
  if (t == "spring") return 3;
  if (t == "summer") return 6;
  if (t == "autumn" || t == "fall") return 9;
  return 0;
}

RelativeTime::Part PartOf(std::string_view t) {
  if (t == "morning") return RelativeTime::Part::kMorning;
  if (t == "afternoon") return RelativeTime::Part::kAfternoon;
  if (t == "evening") return RelativeTime::Part::kEvening;
  if (t == "night") return RelativeTime::Part::kNight;
  return RelativeTime::Part::kNone;
}

std::int64_t MonthStart(TimeMs said_at, int delta) {
  return DayOf(MakeTimeMs(YearOf(said_at), MonthOf(said_at) + delta, 1));
}

// The relative time that starts at token i, if any.
std::optional<RelativeTime> At(std::span<const std::string> tokens, std::size_t i, TimeMs said_at) {
  auto tok = [&](std::size_t k) -> std::string_view {
    return k < tokens.size() ? std::string_view(tokens[k]) : "";
  };
  const std::int64_t today = DayOf(said_at);
  const std::int64_t weekday = ((today + 3) % 7 + 7) % 7;
  const std::int64_t monday = today - weekday;
  RelativeTime r;
  r.first = i;
  auto day = [&](std::int64_t d, std::size_t count) {
    r.unit = RelativeTime::Unit::kDay;
    r.day = d;
    r.count = count;
    // A part of the day after it: "tomorrow morning", "yesterday evening".
    if (const auto part = PartOf(tok(i + count));
        part != RelativeTime::Part::kNone && r.part == RelativeTime::Part::kNone) {
      r.part = part;
      ++r.count;
    }
    return r;
  };
  const std::string_view t = tok(i);
  // "the day before yesterday", "the day after tomorrow" (with or without "the")
  const std::size_t d0 = t == "the" ? i + 1 : i;
  if (tok(d0) == "day" && ((tok(d0 + 1) == "before" && tok(d0 + 2) == "yesterday") ||
                           (tok(d0 + 1) == "after" && tok(d0 + 2) == "tomorrow"))) {
    return day(tok(d0 + 1) == "before" ? today - 2 : today + 2, d0 + 3 - i);
  }
  if (t == "yesterday") return day(today - 1, 1);
  if (t == "today") return day(today, 1);
  if (t == "tonight") {
    r.part = RelativeTime::Part::kEvening;
    return day(today, 1);
  }
  if (t == "tomorrow") return day(today + 1, 1);
  const std::string_view next = tok(i + 1);
  if (t == "this" && (next == "morning" || next == "afternoon" || next == "evening")) {
    r.part = PartOf(next);
    return day(today, 2);
  }
  if (t == "last" && next == "night") {
    r.part = RelativeTime::Part::kNight;
    return day(today - 1, 2);
  }
  if (t == "last" || t == "this" || t == "next") {
    const int step = t == "last" ? -1 : t == "this" ? 0 : 1;
    r.count = 2;
    if (next == "week" || next == "weekend") {
      r.unit = next == "week" ? RelativeTime::Unit::kWeek : RelativeTime::Unit::kWeekend;
      r.day = monday + 7 * step + (next == "week" ? 0 : 5);
      return r;
    }
    if (next == "month") {
      r.unit = RelativeTime::Unit::kMonth;
      r.day = MonthStart(said_at, step);
      return r;
    }
    if (next == "year") {
      r.unit = RelativeTime::Unit::kYear;
      r.day = DayOf(MakeTimeMs(YearOf(said_at) + step, 1, 1));
      return r;
    }
    // "last May": the latest May before the month said; "next March": the first after it.
    if (const int m = next.size() > 3 || next == "may" ? MonthFromWord(next) : 0;
        m > 0 && step != 0) {
      const int now = MonthOf(said_at);
      int year = YearOf(said_at);
      if (step < 0 && m >= now) --year;
      if (step > 0 && m <= now) ++year;
      r.unit = RelativeTime::Unit::kMonth;
      r.day = DayOf(MakeTimeMs(year, m, 1));
      return r;
    }
    // "last summer": the latest one that ended before the month said; "next
    // spring": the first that begins after it. (Not winter: which year's?)
    if (const int first = SeasonStart(next); first > 0 && step != 0) {
      const int now = MonthOf(said_at);
      int year = YearOf(said_at);
      if (step < 0 && first + 2 >= now) --year;
      if (step > 0 && first <= now) ++year;
      r.unit = RelativeTime::Unit::kSeason;
      r.day = DayOf(MakeTimeMs(year, first, 1));
      return r;
    }
    if (const int wd = Weekday(next); wd >= 0 && step != 0) {
      // "last Friday": the latest Friday before today; "next Friday": the first after it.
      const std::int64_t back = (weekday - wd + 7) % 7, ahead = (wd - weekday + 7) % 7;
      r.weekday = true;
      return day(step < 0 ? today - (back == 0 ? 7 : back) : today + (ahead == 0 ? 7 : ahead), 2);
    }
    return std::nullopt;
  }
  // "[a] <count> [of] <units> ago": "two days ago", "a couple of weeks ago", "3 months ago"
  std::size_t k = i;
  if ((t == "a" || t == "an") && (tok(i + 1) == "couple" || tok(i + 1) == "few")) ++k;
  const int n = Count(tok(k));
  if (n == 0) return std::nullopt;
  r.loose = tok(k) == "couple" || tok(k) == "few";
  ++k;
  if (tok(k) == "of" && r.loose) ++k;
  std::string_view unit = tok(k);
  if (!unit.empty() && unit.back() == 's') unit.remove_suffix(1);
  if (tok(k + 1) != "ago") return std::nullopt;
  r.count = k + 2 - i;
  r.ago = n;
  if (unit == "day") {
    r.unit = RelativeTime::Unit::kDay;
    r.day = today - n;
  } else if (unit == "week") {
    r.unit = RelativeTime::Unit::kWeek;
    r.day = today - 7 * static_cast<std::int64_t>(n);
  } else if (unit == "month") {
    r.unit = RelativeTime::Unit::kMonth;
    r.day = MonthStart(said_at, -n);
  } else if (unit == "year") {
    r.unit = RelativeTime::Unit::kYear;
    r.day = DayOf(MakeTimeMs(YearOf(said_at) - n, 1, 1));
  } else {
    return std::nullopt;
  }
  return r;
}

// Where a word of a text lies: the runs Tokenize makes of ASCII letters and
// digits (and of bytes from 0x80, which no expression holds), with a single
// inner '-', '.', '_' or '\'' kept ("last week's", "today-only": one word
// each, and no time). Words() gives each one's lower-cased text beside it.
struct Word {
  std::size_t begin = 0, end = 0;
};

bool WordByte(unsigned char c) { return std::isalnum(c) || c >= 0x80; }

std::vector<Word> Words(std::string_view text, std::vector<std::string>& lower) {
  std::vector<Word> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!WordByte(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    const std::size_t b = i;
    while (i < text.size()) {
      if (WordByte(static_cast<unsigned char>(text[i]))) {
        ++i;
      } else if ((text[i] == '-' || text[i] == '.' || text[i] == '_' || text[i] == '\'') &&
                 i + 1 < text.size() && WordByte(static_cast<unsigned char>(text[i + 1]))) {
        ++i;
      } else {
        break;
      }
    }
    out.push_back({b, i});
    std::string w(text.substr(b, i - b));
    for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    lower.push_back(std::move(w));
  }
  return out;
}

// Words after which a time takes no "on" or "in" of its own.
bool IsPreposition(std::string_view t) {
  static constexpr std::array<std::string_view, 11> kWords = {
      "since", "until", "till", "by", "from", "before", "after", "to", "through", "of", "between"};
  return std::find(kWords.begin(), kWords.end(), t) != kWords.end();
}

std::string DayText(std::int64_t day, bool weekday) {
  std::string s;
  if (weekday) {
    s += WeekdayTitle(day);
    s += ' ';
  }
  s += FormatHumanDate(day * kDayMs);
  return s;
}

}  // namespace

std::vector<RelativeTime> FindRelativeTimes(std::span<const std::string> tokens, TimeMs said_at) {
  std::vector<RelativeTime> out;
  for (std::size_t i = 0; i < tokens.size();) {
    if (auto r = At(tokens, i, said_at)) {
      out.push_back(*r);
      i += r->count;
    } else {
      ++i;
    }
  }
  return out;
}

std::string WithAbsoluteTimes(std::string_view text, TimeMs said_at) {
  std::vector<std::string> lower;
  const std::vector<Word> words = Words(text, lower);
  // A possessive's word without its "'s" ("yesterday's" -> "yesterday"), marked.
  std::vector<bool> possessive(lower.size(), false);
  for (std::size_t k = 0; k < lower.size(); ++k) {
    for (std::string_view mark : {std::string_view("'s"), std::string_view("\xE2\x80\x99s")}) {
      if (lower[k].size() > mark.size() && lower[k].ends_with(mark)) {
        lower[k].resize(lower[k].size() - mark.size());
        possessive[k] = true;
        break;
      }
    }
  }
  const std::vector<RelativeTime> found = FindRelativeTimes(lower, said_at);
  if (found.empty()) return std::string(text);
  std::string out;
  std::size_t copied = 0;
  for (const RelativeTime& r : found) {
    const std::string_view prev = r.first > 0 ? std::string_view(lower[r.first - 1]) : "";
    const std::size_t last = r.first + r.count - 1;
    const std::string_view after = last + 1 < lower.size() ? std::string_view(lower[last + 1]) : "";
    const std::string_view head = lower[r.first];
    // A duration ("over the last week", "for the next month") is no date.
    if (prev == "the" && r.ago == 0 && (head == "last" || head == "next" || head == "this") &&
        r.unit != RelativeTime::Unit::kDay) {
      continue;
    }
    // A word a closing quote mark ends ("the weeks' plans") is no time either.
    const std::size_t end = words[last].end;
    if (end < text.size() && (text[end] == '\'' || text.substr(end).starts_with("\xE2\x80\x99")))
      continue;
    bool inner_possessive = false;
    for (std::size_t k = r.first; k < last; ++k)
      inner_possessive = inner_possessive || possessive[k];
    if (inner_possessive) continue;
    // (after a preposition, a word of being, or a word that makes it
    // approximate: "around 3 years ago" -> "around 2020", not "around in 2020")
    const bool bare = IsPreposition(prev) || after == "is" || after == "was" || prev == "around" ||
                      prev == "about" || prev == "roughly" || prev == "approximately" ||
                      prev == "circa";
    std::string phrase;
    using Unit = RelativeTime::Unit;
    using Part = RelativeTime::Part;
    if (possessive[last]) {
      // A possessive names its thing by the date, before it: "yesterday's class" -> "the 7 May
      // 2023 class", "last month's trip" -> "the April 2023 trip", "last year's" -> "the 2022".
      // A week, a weekend or a count ago has no such form: as written.
      if (r.ago > 0 || r.unit == Unit::kWeek || r.unit == Unit::kWeekend) continue;
      phrase = "the ";
      if (r.unit == Unit::kDay) {
        phrase += DayText(r.day, r.weekday);
      } else if (r.unit == Unit::kSeason) {
        phrase += lower[last];
        phrase += ' ';
        phrase += std::to_string(YearOf(r.day * kDayMs));
      } else {
        phrase += r.unit == Unit::kMonth ? FormatHumanMonth(r.day * kDayMs)
                                         : std::to_string(YearOf(r.day * kDayMs));
      }
    } else if (r.ago > 0 && (r.loose || r.unit == Unit::kWeek)) {
      // "a few days before 8 May 2023", "two weeks before 8 May 2023": the count as said.
      phrase = std::string(
          text.substr(words[r.first].begin, words[last - 1].end - words[r.first].begin));
      phrase += " before ";
      phrase += FormatHumanDate(DayOf(said_at) * kDayMs);
    } else if (r.unit == Unit::kDay) {
      static constexpr std::array<std::string_view, 5> kParts = {"", "morning", "afternoon",
                                                                 "evening", "night"};
      if (!bare) phrase = "on ";
      if (r.part != Part::kNone) {
        phrase += "the ";
        phrase += kParts[static_cast<std::size_t>(r.part)];
        phrase += " of ";
      }
      phrase += DayText(r.day, r.weekday);
    } else if (r.unit == Unit::kWeek || r.unit == Unit::kWeekend) {
      phrase = bare ? "the " : r.unit == Unit::kWeek ? "in the " : "on the ";
      phrase += r.unit == Unit::kWeek ? "week of " : "weekend of ";
      phrase += DayText(r.day, false);
    } else if (r.unit == Unit::kSeason) {
      // "in the summer of 2022", with the season's word as said ("fall", "autumn")
      phrase = bare ? "the " : "in the ";
      phrase += lower[last];
      phrase += " of ";
      phrase += std::to_string(YearOf(r.day * kDayMs));
    } else {
      if (!bare) phrase = "in ";
      phrase += r.unit == Unit::kMonth ? FormatHumanMonth(r.day * kDayMs)
                                       : std::to_string(YearOf(r.day * kDayMs));
    }
    const std::size_t begin = words[r.first].begin;
    // "Yesterday I ..." -> "On 7 May 2023 I ..."
    if (std::isupper(static_cast<unsigned char>(text[begin])) && !phrase.empty()) {
      phrase[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(phrase[0])));
    }
    out.append(text.substr(copied, begin - copied));
    out += phrase;
    copied = end;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace engram
