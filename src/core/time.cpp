// Time parsing and formatting; civil-date arithmetic done by hand (no locale,
// no timegm), proleptic Gregorian calendar, UTC.
#include "core/time.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <unordered_set>
#include <vector>

namespace engram {
namespace {

constexpr std::int64_t kMsPerSecond = 1000;
constexpr std::int64_t kMsPerMinute = 60 * kMsPerSecond;
constexpr std::int64_t kMsPerHour = 60 * kMsPerMinute;
constexpr std::int64_t kMsPerDay = 24 * kMsPerHour;

// How many figures ('0'-'9') the text holds from `i` on, in a row.
std::size_t FiguresFrom(std::string_view t, std::size_t i) {
  std::size_t j = i;
  while (j < t.size() && t[j] >= '0' && t[j] <= '9') ++j;
  return j - i;
}

constexpr std::array<const char*, 12> kMonthNames = {
    "january", "february", "march",     "april",   "may",      "june",
    "july",    "august",   "september", "october", "november", "december"};
constexpr std::array<const char*, 12> kMonthTitle = {
    "January", "February", "March",     "April",   "May",      "June",
    "July",    "August",   "September", "October", "November", "December"};

// Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil).
// Linear in `d`, so out-of-range days roll into neighbouring months.
std::int64_t DaysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);                 // [0, 399]
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Civil {
  std::int64_t year;
  unsigned month;
  unsigned day;
};

// Inverse of DaysFromCivil.
Civil CivilFromDays(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {m <= 2 ? y + 1 : y, m, d};
}

}  // namespace

bool IsLeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeapYear(y) ? 29 : kDays[m - 1];
}

int MonthFromWord(std::string_view w) {
  for (int i = 0; i < 12; ++i) {
    const std::string_view full = kMonthNames[i];
    if (w == full || (w.size() == 3 && full.substr(0, 3) == w)) return i + 1;
  }
  return 0;
}

int SeasonFromWord(std::string_view w) {
  if (w == "spring") return 3;
  if (w == "summer") return 6;
  if (w == "autumn" || w == "fall") return 9;
  if (w == "winter") return 12;
  return 0;
}

bool NamesMonthOfSeason(std::string_view text, int first) {
  if (first < 1 || first > 12) return false;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !(text[i] >= 'A' && text[i] <= 'Z')) ++i;
    const std::size_t from = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    if (from == i || (from > 0 && std::isalpha(static_cast<unsigned char>(text[from - 1]))))
      continue;
    std::string word(text.substr(from, i - from));
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const int month = word == "sept" ? 9 : MonthFromWord(word);
    if (month != 0 && (month - first + 12) % 12 < 3) return true;
  }
  return false;
}

bool IsTimeUnit(std::string_view t) {
  return t == "year" || t == "month" || t == "week" || t == "day" || t == "days" || t == "date" ||
         t == "time";
}

bool AsksWhen(std::span<const std::string> tokens) {
  static const std::unordered_set<std::string_view> kAuxiliaries = {
      "is",     "are",    "was",      "were",  "do",       "does",     "did",   "will",
      "would",  "should", "shall",    "can",   "could",    "may",      "might", "must",
      "has",    "have",   "had",      "am",    "isn't",    "aren't",   "don't", "doesn't",
      "didn't", "won't",  "wouldn't", "can't", "couldn't", "shouldn't"};
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    // "when" asks for a time where it opens the question, or where a verb
    // follows it as in a question ("..., and when is it?"); "Where does she
    // sit when traveling?" and "What breaks out when I'm stressed?" ask no time.
    if (t == "when" && (i == 0 || (i + 1 < tokens.size() && kAuxiliaries.count(tokens[i + 1])))) {
      return true;
    }
    if (i + 1 >= tokens.size()) continue;
    const std::string& n = tokens[i + 1];
    if ((t == "what" || t == "which") && IsTimeUnit(n)) return true;
    if (t == "how" && (n == "long" || n == "often")) return true;
  }
  return false;
}

bool IsTimeWord(std::string_view t) {
  static const std::unordered_set<std::string_view> kWords = {
      "yesterday", "today", "tomorrow", "tonight", "ago", "last", "next", "week", "weekend",
      "month", "year", "morning", "evening", "afternoon", "night", "recently", "since", "weeks",
      "months", "years", "days", "summer", "winter", "spring", "autumn", "fall", "earlier", "soon", "upcoming"};
  static const std::string_view kWeekdays[] = {"monday", "tuesday", "wednesday", "thursday",
                                               "friday", "saturday", "sunday"};
  if (kWords.count(t)) return true;
  const std::string_view one = !t.empty() && t.back() == 's' ? t.substr(0, t.size() - 1) : t;  // "fridays"
  for (std::string_view d : kWeekdays) {
    if (t == d || one == d) return true;
  }
  for (const char* m : kMonthNames) {
    if (t == m) return true;
  }
  return t.size() == 4 && (t[0] == '1' || t[0] == '2') &&
         std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });  // a year
}

bool IsScheduleWord(std::string_view t) {
  static const std::unordered_set<std::string_view> kWords = {
      "am", "pm", "daily", "weekly", "biweekly", "fortnightly", "monthly", "yearly", "annually",
      "weekends", "mornings", "evenings", "afternoons", "nights", "christmas", "easter",
      "thanksgiving", "halloween", "a.m", "p.m", "noon", "midnight", "o'clock", "hourly", "day",
      "hour", "hours", "quarter", "quarterly", "semester", "fortnight", "decade",
      // A time said by an event ("split up when I was twelve", "on leave
      // until March", "retire after the kids finish school").
      "when", "until", "till", "after", "before", "during"};
  if (IsTimeWord(t) || kWords.count(t)) return true;
  // A date in figures kept whole by the tokenizer: "2025-03-14".
  if (t.size() == 10 && FiguresFrom(t, 0) == 4 && t[4] == '-' && FiguresFrom(t, 5) == 2 && t[7] == '-' &&
      FiguresFrom(t, 8) == 2) {
    return true;
  }
  const std::size_t digits = FiguresFrom(t, 0);
  if (digits == 0 || digits > 2) return false;
  const std::string_view rest = t.substr(digits);
  if (rest == "st" || rest == "nd" || rest == "rd" || rest == "th" || rest == "am" || rest == "pm") return true;  // "8th", "4pm"
  // "7.40pm", "7:40am" (a time of day with its minutes, kept whole).
  return rest.size() == 5 && (rest[0] == '.' || rest[0] == ':') && FiguresFrom(t, digits + 1) == 2 &&
         (rest.substr(3) == "am" || rest.substr(3) == "pm");
}

bool HoldsClockTime(std::string_view t) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::size_t lead = FiguresFrom(t, i);
    if (lead == 0) continue;
    const bool starts = i == 0 || !(t[i - 1] >= '0' && t[i - 1] <= '9');
    const std::size_t j = i + lead;
    if (starts && lead <= 2 && j < t.size() && t[j] == ':' && FiguresFrom(t, j + 1) == 2) return true;  // 7:40
    if (starts && lead <= 2 && j < t.size() && t[j] == '/') {  // 14/3/2025, 3/14/25
      const std::size_t mid = FiguresFrom(t, j + 1), k = j + 1 + mid;
      if (mid >= 1 && mid <= 2 && k < t.size() && t[k] == '/') {
        const std::size_t year = FiguresFrom(t, k + 1);
        if (year == 2 || year == 4) return true;
      }
    }
    i = j - 1;  // past this run of figures
  }
  return false;
}

namespace {

struct Fields {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, millis = 0;
  int offset_minutes = 0;  // local = UTC + offset
};

Status Invalid(std::string_view text, const char* why) {
  return Status::InvalidArgument("cannot parse time \"" + std::string(text) + "\": " + why);
}

Result<TimeMs> Finish(std::string_view text, const Fields& f) {
  if (f.year < 1000 || f.year > 9999) return Invalid(text, "year out of range 1000..9999");
  if (f.month < 1 || f.month > 12) return Invalid(text, "month out of range");
  if (f.day < 1 || f.day > DaysInMonth(f.year, f.month)) return Invalid(text, "day out of range");
  if (f.hour > 23 || f.minute > 59 || f.second > 59) return Invalid(text, "time of day out of range");
  return MakeTimeMs(f.year, f.month, f.day, f.hour, f.minute, f.second) + f.millis -
         static_cast<TimeMs>(f.offset_minutes) * kMsPerMinute;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Reads exactly `n` digits at `pos`; advances on success.
bool ReadDigits(std::string_view s, size_t& pos, int n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  pos += n;
  return true;
}

// ISO-8601 subset: YYYY-MM-DD[(T| )HH:MM[:SS[.fff]]][Z|+HH:MM|+HHMM|+HH].
Result<TimeMs> ParseIso(std::string_view s) {
  Fields f;
  size_t p = 0;
  if (!ReadDigits(s, p, 4, f.year) || p >= s.size() || s[p++] != '-' ||
      !ReadDigits(s, p, 2, f.month) || p >= s.size() || s[p++] != '-' ||
      !ReadDigits(s, p, 2, f.day)) {
    return Invalid(s, "expected YYYY-MM-DD");
  }
  if (p < s.size() && (s[p] == 'T' || s[p] == 't' || s[p] == ' ')) {
    ++p;
    if (!ReadDigits(s, p, 2, f.hour) || p >= s.size() || s[p++] != ':' ||
        !ReadDigits(s, p, 2, f.minute)) {
      return Invalid(s, "expected HH:MM after the date");
    }
    if (p < s.size() && s[p] == ':') {
      ++p;
      if (!ReadDigits(s, p, 2, f.second)) return Invalid(s, "expected two-digit seconds");
      if (p < s.size() && (s[p] == '.' || s[p] == ',')) {
        ++p;
        int digits = 0, ms = 0;
        while (p < s.size() && IsDigit(s[p])) {
          if (digits < 3) ms = ms * 10 + (s[p] - '0');
          ++digits;
          ++p;
        }
        if (digits == 0) return Invalid(s, "expected digits after the decimal point");
        for (int i = digits; i < 3; ++i) ms *= 10;
        f.millis = ms;  // truncated to milliseconds
      }
    }
    if (p < s.size() && (s[p] == 'Z' || s[p] == 'z')) {
      ++p;
    } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
      const int sign = s[p++] == '-' ? -1 : 1;
      int oh = 0, om = 0;
      if (!ReadDigits(s, p, 2, oh)) return Invalid(s, "expected a UTC offset such as +02:00");
      const bool colon = p < s.size() && s[p] == ':';
      if (colon) ++p;
      if ((colon || p < s.size()) && !ReadDigits(s, p, 2, om)) {
        return Invalid(s, "bad UTC offset minutes");
      }
      if (oh > 23 || om > 59) return Invalid(s, "UTC offset out of range");
      f.offset_minutes = sign * (oh * 60 + om);
    }
  }
  if (p != s.size()) return Invalid(s, "unexpected trailing characters");
  return Finish(s, f);
}

// Tokens of human-written dates: numbers, words, ':' and ','.
struct Token {
  enum Kind { kNum, kWord, kColon, kComma } kind;
  int value = 0;     // kNum
  int length = 0;    // kNum: digit count
  std::string word;  // kWord, lower-cased
};

bool Lex(std::string_view s, std::vector<Token>& out) {
  size_t p = 0;
  while (p < s.size()) {
    const char c = s[p];
    if (IsSpace(c)) {
      ++p;
    } else if (IsDigit(c)) {
      Token t{Token::kNum};
      while (p < s.size() && IsDigit(s[p])) {
        if (t.length >= 6) return false;
        t.value = t.value * 10 + (s[p++] - '0');
        ++t.length;
      }
      out.push_back(std::move(t));
    } else if (IsAlpha(c)) {
      Token t{Token::kWord};
      while (p < s.size() && IsAlpha(s[p])) t.word.push_back(Lower(s[p++]));
      if (p < s.size() && s[p] == '.') ++p;  // "Jan." / "a.m" style dots
      out.push_back(std::move(t));
    } else if (c == ':' || c == ',') {
      out.push_back(Token{c == ':' ? Token::kColon : Token::kComma});
      ++p;
    } else {
      return false;
    }
  }
  return true;
}

class HumanParser {
 public:
  explicit HumanParser(const std::vector<Token>& t) : t_(t) {}

  // time [on] date  |  date [,] [time]
  bool Parse(Fields& f) {
    if (Time(f)) {
      if (IsWord("on")) ++i_;
      return Date(f) && i_ == t_.size();
    }
    i_ = 0;
    if (!Date(f)) return false;
    if (i_ < t_.size() && t_[i_].kind == Token::kComma) ++i_;
    if (i_ < t_.size() && !Time(f)) return false;
    return i_ == t_.size();
  }

 private:
  bool Is(Token::Kind k, size_t at) const { return at < t_.size() && t_[at].kind == k; }
  bool IsWord(const char* w) const { return Is(Token::kWord, i_) && t_[i_].word == w; }

  // H:MM[:SS] [am|pm]; 12-hour clock when am/pm is present (12 am = 00:00).
  bool Time(Fields& f) {
    if (!Is(Token::kNum, i_) || !Is(Token::kColon, i_ + 1) || !Is(Token::kNum, i_ + 2)) return false;
    if (t_[i_].length > 2 || t_[i_ + 2].length != 2) return false;
    int hour = t_[i_].value;
    f.minute = t_[i_ + 2].value;
    i_ += 3;
    f.second = 0;
    if (Is(Token::kColon, i_) && Is(Token::kNum, i_ + 1) && t_[i_ + 1].length == 2) {
      f.second = t_[i_ + 1].value;
      i_ += 2;
    }
    if (IsWord("am") || IsWord("pm") || IsWord("a") || IsWord("p")) {
      const bool pm = t_[i_].word[0] == 'p';
      ++i_;
      if (IsWord("m")) ++i_;  // "a.m." lexes as "a" "m"
      if (hour < 1 || hour > 12) { hour = 99; }  // rejected by Finish
      else hour = hour % 12 + (pm ? 12 : 0);
    }
    f.hour = hour;
    return true;
  }

  bool Day(Fields& f) {
    if (!Is(Token::kNum, i_) || t_[i_].length > 2) return false;
    f.day = t_[i_++].value;
    if (IsWord("st") || IsWord("nd") || IsWord("rd") || IsWord("th")) ++i_;
    return true;
  }

  bool Month(Fields& f) {
    if (!Is(Token::kWord, i_)) return false;
    f.month = MonthFromWord(t_[i_].word);
    if (f.month == 0) return false;
    ++i_;
    return true;
  }

  bool Year(Fields& f) {
    if (i_ < t_.size() && t_[i_].kind == Token::kComma) ++i_;
    if (!Is(Token::kNum, i_) || t_[i_].length != 4) return false;
    f.year = t_[i_++].value;
    return true;
  }

  // D Month[,] YYYY  |  Month D[,] YYYY
  bool Date(Fields& f) {
    const size_t start = i_;
    if (Day(f) && Month(f) && Year(f)) return true;
    i_ = start;
    return Month(f) && Day(f) && Year(f);
  }

  const std::vector<Token>& t_;
  size_t i_ = 0;
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Splits a time into civil date and milliseconds within the day.
void Split(TimeMs t, Civil& c, std::int64_t& ms_of_day) {
  std::int64_t days = t / kMsPerDay;
  ms_of_day = t % kMsPerDay;
  if (ms_of_day < 0) {
    ms_of_day += kMsPerDay;
    --days;
  }
  c = CivilFromDays(days);
}

}  // namespace

int YearOf(TimeMs t) {
  Civil c;
  std::int64_t ms = 0;
  Split(t, c, ms);
  return static_cast<int>(c.year);
}

std::int64_t DayOf(TimeMs t) { return t >= 0 ? t / kMsPerDay : (t - kMsPerDay + 1) / kMsPerDay; }

int MonthOf(TimeMs t) {
  Civil c;
  std::int64_t ms = 0;
  Split(t, c, ms);
  return static_cast<int>(c.month);
}

TimeMs MakeTimeMs(int year, int month, int day, int hour, int minute, int second) {
  // Normalise the month so that e.g. month 13 is January of the next year.
  std::int64_t y = year;
  std::int64_t m0 = month - 1;
  y += m0 >= 0 ? m0 / 12 : (m0 - 11) / 12;
  m0 -= (m0 >= 0 ? m0 / 12 : (m0 - 11) / 12) * 12;
  const std::int64_t days = DaysFromCivil(y, static_cast<unsigned>(m0 + 1), 1) + (day - 1);
  return days * kMsPerDay + hour * kMsPerHour + minute * kMsPerMinute + second * kMsPerSecond;
}

Result<TimeMs> ParseTime(std::string_view text) {
  const std::string_view s = Trim(text);
  if (s.empty()) return Invalid(text, "empty");
  if (s.size() >= 5 && IsDigit(s[0]) && IsDigit(s[1]) && IsDigit(s[2]) && IsDigit(s[3]) &&
      s[4] == '-') {
    return ParseIso(s);
  }
  std::vector<Token> tokens;
  Fields f;
  if (!Lex(s, tokens) || !HumanParser(tokens).Parse(f)) {
    return Invalid(text, "unrecognised format");
  }
  return Finish(s, f);
}

std::string FormatIso8601(TimeMs t) {
  Civil c{};
  std::int64_t ms = 0;
  Split(t, c, ms);
  char buf[64];
  const auto h = static_cast<int>(ms / kMsPerHour);
  const auto mi = static_cast<int>(ms / kMsPerMinute % 60);
  const auto s = static_cast<int>(ms / kMsPerSecond % 60);
  const auto frac = static_cast<int>(ms % kMsPerSecond);
  if (frac != 0) {
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ",
                  static_cast<long long>(c.year), c.month, c.day, h, mi, s, frac);
  } else {
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02dZ",
                  static_cast<long long>(c.year), c.month, c.day, h, mi, s);
  }
  return buf;
}

std::string FormatHumanDate(TimeMs t) {
  Civil c{};
  std::int64_t ms = 0;
  Split(t, c, ms);
  return std::to_string(c.day) + " " + kMonthTitle[c.month - 1] + " " + std::to_string(c.year);
}

std::string FormatHumanMonth(TimeMs t) {
  return std::string(kMonthTitle[MonthOf(t) - 1]) + " " + std::to_string(YearOf(t));
}

std::string FormatHumanDateTime(TimeMs t) {
  Civil c{};
  std::int64_t ms = 0;
  Split(t, c, ms);
  char hm[16];
  std::snprintf(hm, sizeof hm, "%02d:%02d", static_cast<int>(ms / kMsPerHour),
                static_cast<int>(ms / kMsPerMinute % 60));
  return FormatHumanDate(t) + ", " + hm;
}

}  // namespace engram
