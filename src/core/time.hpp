// Parsing and formatting of times as they appear in dialogue data.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engram/result.hpp"
#include "engram/types.hpp"

namespace engram {

// Parses a time into milliseconds since the epoch (UTC). Accepts:
//   ISO-8601: "2025-06-01", "2025-06-01T10:00", "2025-06-01T10:00:00Z",
//             "2025-06-01 10:00:00", fractional seconds, "+02:00"/"-0500" offsets
//             (converted to UTC; no offset means UTC);
//   LoCoMo session stamps: "1:56 pm on 8 May, 2023", "10:04 am on 19 January, 2023";
//   dates like "8 May 2023", "May 8, 2023".
// Returns InvalidArgument naming the text when it cannot be parsed or is out of
// range (years 1000..9999).
Result<TimeMs> ParseTime(std::string_view text);

// The times ParseTime accepts, as milliseconds: years 1000..9999. A time a
// caller gives as a number must lie here too (FormatIso8601 of anything else
// is no time ParseTime reads back: an export would not import).
inline constexpr TimeMs kMinTimeMs = -30610224000000;   // 1000-01-01T00:00:00Z
inline constexpr TimeMs kMaxTimeMs = 253402300799999;   // 9999-12-31T23:59:59.999Z
inline bool InTimeRange(TimeMs t) { return t >= kMinTimeMs && t <= kMaxTimeMs; }

// "2025-06-01T10:00:00Z" (milliseconds only when non-zero: "...00.250Z").
std::string FormatIso8601(TimeMs t);

// Human date for contexts: "1 June 2025"; with time: "1 June 2025, 10:00".
std::string FormatHumanDate(TimeMs t);
std::string FormatHumanDateTime(TimeMs t);
// Its month: "June 2025".
std::string FormatHumanMonth(TimeMs t);

// 1..12 for a lower-case month name or its three-letter abbreviation
// ("may", "sep"), 0 otherwise.
int MonthFromWord(std::string_view word);
// The first month of the season a lower-case word names (meteorological,
// northern hemisphere: "spring" 3, "summer" 6, "autumn" or "fall" 9,
// "winter" 12), 0 otherwise.
int SeasonFromWord(std::string_view word);
// Whether a text names a month of the season that begins in month `first`
// (SeasonFromWord): its name or three-letter abbreviation written with a
// capital ("April", "Apr", "May"; "may" the verb is written lower-case).
bool NamesMonthOfSeason(std::string_view text, int first);
// Days of a month (1..12) of a year, and whether a year is a leap year
// (proleptic Gregorian).
int DaysInMonth(int year, int month);
bool IsLeapYear(int year);

// Time in words (tokens as text::Tokenize makes them: lower-cased).
// Whether a question asks for a time: "when" opening it or followed by a verb
// as in a question ("..., and when is it?"; not "Where does she sit when
// traveling?"), "what/which" + "day(s)", "date", "time", "week", "month",
// "year", "how long", "how often".
bool AsksWhen(std::span<const std::string> tokens);
// Whether a lower-case word is a unit a question asks a time in after "what"
// or "which" ("year", "month", "week", "day", "days", "date", "time").
bool IsTimeUnit(std::string_view token);
// Whether a token names or implies a time, as dialogue says it: relative
// days and periods ("yesterday", "tonight", "next", "weeks", "weekend"),
// parts of the day, seasons, weekdays (also in the plural: "fridays"), months
// and years from 1000 to 2999 ("2023").
bool IsTimeWord(std::string_view token);
// IsTimeWord, or a word of schedules: "am"/"pm", "a.m", "4pm", "7.40pm",
// "noon", "midnight", "o'clock", frequencies ("daily", "biweekly",
// "hourly", "quarterly"), units ("day", "hours", "quarter", "semester"),
// parts of the day and weekends in the plural, holidays ("christmas"),
// days of the month ("8th", "21st"), dates in figures ("2025-03-14"), and
// the words that say a time by an event ("when", "until", "after",
// "before", "during"). (Dialogue retrieval keeps to IsTimeWord: on LoCoMo the
// first of these words moved recall@10 on conversations 0-4 from 0.785 to
// 0.784.)
bool IsScheduleWord(std::string_view token);
// Whether a text says a time of day or a date in figures that the tokenizer
// splits into plain numbers: "7:40", "14:30", "14/3/2025", "3/14/25" (a
// fraction, "1/2", a ratio, "3:1", or a score, "3-1", is none).
bool HoldsClockTime(std::string_view text);

// Days since epoch <-> civil date helpers (proleptic Gregorian, UTC).
TimeMs MakeTimeMs(int year, int month, int day, int hour = 0, int minute = 0, int second = 0);
// The civil year (UTC) of a time, and its month (1..12).
int YearOf(TimeMs t);
int MonthOf(TimeMs t);
// Whole UTC days since 1970-01-01 of a time (the floor: -1 for the last day
// of 1969).
std::int64_t DayOf(TimeMs t);

}  // namespace engram
