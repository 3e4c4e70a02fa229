// ParseTime / FormatIso8601 / FormatHumanDate(Time) / MakeTimeMs.
#include "core/time.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace engram {
namespace {

constexpr TimeMs kJune1At10 = 1748772000000;  // 2025-06-01T10:00:00Z

TimeMs Parse(std::string_view s) {
  auto r = ParseTime(s);
  EXPECT_TRUE(r.ok()) << s << " -> " << r.status().ToString();
  return r.ok() ? *r : -1;
}

TEST(MakeTimeMsTest, KnownInstants) {
  EXPECT_EQ(MakeTimeMs(1970, 1, 1), 0);
  EXPECT_EQ(MakeTimeMs(2025, 6, 1, 10), kJune1At10);
  EXPECT_EQ(MakeTimeMs(2024, 2, 29), 1709164800000);
  EXPECT_EQ(MakeTimeMs(1969, 12, 31, 23, 59, 59), -1000);
  EXPECT_EQ(MakeTimeMs(1000, 1, 1), -30610224000000);
  EXPECT_EQ(MakeTimeMs(9999, 12, 31, 23, 59, 59), 253402300799000);
}

TEST(MakeTimeMsTest, NormalisesOverflowingFields) {
  EXPECT_EQ(MakeTimeMs(2024, 13, 1), MakeTimeMs(2025, 1, 1));
  EXPECT_EQ(MakeTimeMs(2024, 0, 1), MakeTimeMs(2023, 12, 1));
  EXPECT_EQ(MakeTimeMs(2023, 2, 29), MakeTimeMs(2023, 3, 1));
  EXPECT_EQ(MakeTimeMs(2023, 1, 1, 24), MakeTimeMs(2023, 1, 2));
}

TEST(ParseTimeTest, IsoForms) {
  EXPECT_EQ(Parse("2025-06-01 10:00:00"), kJune1At10);
  EXPECT_EQ(Parse("2025-06-01T10:00:00Z"), kJune1At10);
  EXPECT_EQ(Parse("2025-06-01T10:00"), kJune1At10);
  EXPECT_EQ(Parse("2025-06-01t10:00:00z"), kJune1At10);
  EXPECT_EQ(Parse("2025-06-01"), kJune1At10 - 10 * 3600 * 1000);
  EXPECT_EQ(Parse("  2025-06-01T10:00:00Z \n"), kJune1At10);
}

TEST(ParseTimeTest, FractionalSecondsAndOffsets) {
  EXPECT_EQ(Parse("2025-06-01T10:00:00.250+02:00"), kJune1At10 - 2 * 3600 * 1000 + 250);
  EXPECT_EQ(Parse("2025-06-01T10:00:00.5Z"), kJune1At10 + 500);
  EXPECT_EQ(Parse("2025-06-01T10:00:00.123456Z"), kJune1At10 + 123);
  EXPECT_EQ(Parse("2025-06-01T10:00:00-0500"), kJune1At10 + 5 * 3600 * 1000);
  EXPECT_EQ(Parse("2025-06-01T10:00:00-05:30"), kJune1At10 + 330 * 60 * 1000);
  EXPECT_EQ(Parse("2025-06-01T10:00:00+02"), kJune1At10 - 2 * 3600 * 1000);
  // An offset can move the instant across a day boundary.
  EXPECT_EQ(Parse("2025-06-01T01:00:00+03:00"), MakeTimeMs(2025, 5, 31, 22));
  EXPECT_EQ(Parse("2024-12-31T23:30:00-01:00"), MakeTimeMs(2025, 1, 1, 0, 30));
}

TEST(ParseTimeTest, LocomoSessionStamps) {
  EXPECT_EQ(Parse("1:56 pm on 8 May, 2023"), MakeTimeMs(2023, 5, 8, 13, 56));
  EXPECT_EQ(Parse("10:04 am on 19 January, 2023"), MakeTimeMs(2023, 1, 19, 10, 4));
  EXPECT_EQ(Parse("12:00 am on 1 Jan, 2024"), MakeTimeMs(2024, 1, 1, 0, 0));
  EXPECT_EQ(Parse("12:00 pm on 1 Jan, 2024"), MakeTimeMs(2024, 1, 1, 12, 0));
  EXPECT_EQ(Parse("12:30 PM on 1 JAN, 2024"), MakeTimeMs(2024, 1, 1, 12, 30));
  EXPECT_EQ(Parse("11:59 pm on 31 December, 2023"), MakeTimeMs(2023, 12, 31, 23, 59));
  EXPECT_EQ(Parse("1:56pm on 8 may 2023"), MakeTimeMs(2023, 5, 8, 13, 56));
}

TEST(ParseTimeTest, HumanDates) {
  EXPECT_EQ(Parse("8 May 2023"), MakeTimeMs(2023, 5, 8));
  EXPECT_EQ(Parse("May 8, 2023"), MakeTimeMs(2023, 5, 8));
  EXPECT_EQ(Parse("may 8 2023"), MakeTimeMs(2023, 5, 8));
  EXPECT_EQ(Parse("8 Sep 2023"), MakeTimeMs(2023, 9, 8));
  EXPECT_EQ(Parse("8 SEPTEMBER 2023"), MakeTimeMs(2023, 9, 8));
  EXPECT_EQ(Parse("Feb 29, 2024"), MakeTimeMs(2024, 2, 29));
  EXPECT_EQ(Parse("8th May 2023"), MakeTimeMs(2023, 5, 8));
  EXPECT_EQ(Parse("8 May 2023, 13:56"), MakeTimeMs(2023, 5, 8, 13, 56));
}

TEST(ParseTimeTest, LeapYears) {
  EXPECT_TRUE(ParseTime("2024-02-29").ok());
  EXPECT_TRUE(ParseTime("2000-02-29").ok());  // divisible by 400
  EXPECT_FALSE(ParseTime("1900-02-29").ok());  // divisible by 100 only
  EXPECT_FALSE(ParseTime("2023-02-29").ok());
  EXPECT_FALSE(ParseTime("29 Feb 2023").ok());
  EXPECT_EQ(Parse("2024-03-01") - Parse("2024-02-28"), 2 * 86400000LL);
  EXPECT_EQ(Parse("2023-03-01") - Parse("2023-02-28"), 86400000LL);
}

TEST(ParseTimeTest, RejectsInvalidInputQuotingIt) {
  for (const char* bad :
       {"", "   ", "garbage", "2025-13-01", "2025-02-30", "2025-00-10", "2025-06-00",
        "2025-06-01T24:00:00", "2025-06-01T10:60", "2025-06-01T10:00:61", "2025-06-01T10",
        "2025-06-01T10:00:00+02:", "2025-06-01T10:00:00+25:00", "2025-06-01x", "2025-6-1",
        "0999-01-01", "25:00 on 8 May, 2023", "13:00 pm on 8 May, 2023",
        "0:30 am on 8 May, 2023", "1:56 pm on 32 May, 2023", "1:56 pm on 8 Mayo, 2023",
        "8 May", "May 2023", "8 May 23", "2025-06-01T10:00:00.Z", "1:5 pm on 8 May, 2023"}) {
    auto r = ParseTime(bad);
    ASSERT_FALSE(r.ok()) << "accepted: \"" << bad << "\"";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("\"" + std::string(bad) + "\""), std::string::npos)
        << r.status().message();
  }
}

TEST(FormatTest, Iso8601) {
  EXPECT_EQ(FormatIso8601(kJune1At10), "2025-06-01T10:00:00Z");
  EXPECT_EQ(FormatIso8601(kJune1At10 + 250), "2025-06-01T10:00:00.250Z");
  EXPECT_EQ(FormatIso8601(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatIso8601(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIso8601(MakeTimeMs(2024, 2, 29, 23, 59, 59)), "2024-02-29T23:59:59Z");
}

TEST(FormatTest, HumanDates) {
  EXPECT_EQ(FormatHumanDate(MakeTimeMs(2023, 5, 8, 13, 56)), "8 May 2023");
  EXPECT_EQ(FormatHumanDate(kJune1At10), "1 June 2025");
  EXPECT_EQ(FormatHumanDateTime(MakeTimeMs(2023, 5, 8, 13, 56)), "8 May 2023, 13:56");
  EXPECT_EQ(FormatHumanDateTime(MakeTimeMs(2024, 1, 1)), "1 January 2024, 00:00");
  EXPECT_EQ(FormatHumanDate(-1), "31 December 1969");
}

TEST(FormatTest, RoundTrips) {
  // Every day over several years (incl. leap days) survives both formats.
  for (TimeMs t = MakeTimeMs(1999, 12, 1, 7, 8, 9); t < MakeTimeMs(2005, 3, 1);
       t += 86400000LL + 1234) {
    EXPECT_EQ(Parse(FormatIso8601(t)), t);
    EXPECT_EQ(Parse(FormatHumanDateTime(t)), t - t % 60000);
    EXPECT_EQ(Parse(FormatHumanDate(t)), t - t % 86400000LL);
  }
  for (TimeMs t : {MakeTimeMs(1000, 1, 1), MakeTimeMs(1600, 2, 29, 12), MakeTimeMs(1969, 7, 20, 20, 17),
                   MakeTimeMs(9999, 12, 31, 23, 59, 59) + 999}) {
    EXPECT_EQ(Parse(FormatIso8601(t)), t) << FormatIso8601(t);
  }
}

TEST(TimeWordsTest, QuestionsThatAskForATime) {
  auto asks = [](std::vector<std::string> tokens) { return AsksWhen(tokens); };
  EXPECT_TRUE(asks({"when", "did", "ana", "fix", "the", "bike"}));
  EXPECT_TRUE(asks({"in", "what", "year", "did", "she", "move"}));
  EXPECT_TRUE(asks({"which", "days", "is", "it", "open"}));
  EXPECT_TRUE(asks({"how", "long", "has", "ben", "played", "chess"}));
  EXPECT_TRUE(asks({"how", "often", "does", "she", "swim"}));
  EXPECT_FALSE(asks({"what", "did", "ana", "fix"}));
  EXPECT_FALSE(asks({"how", "does", "she", "swim"}));
  EXPECT_FALSE(asks({"what"}));
  EXPECT_FALSE(asks({}));
  // "when" asks where it opens the question or a verb follows it as in one;
  // a "when" of a clause ("when traveling", "when I'm stressed") does not.
  EXPECT_TRUE(asks({"and", "when", "is", "the", "party"}));
  EXPECT_TRUE(asks({"remind", "me", "when", "does", "the", "gym", "open"}));
  EXPECT_FALSE(asks({"where", "does", "she", "sit", "when", "traveling", "by", "plane"}));
  EXPECT_FALSE(asks({"what", "breaks", "out", "when", "i'm", "under", "pressure"}));
  EXPECT_FALSE(asks({"what", "did", "he", "say", "when", "she", "left"}));
}

TEST(TimeWordsTest, TimeAndScheduleWords) {
  for (const char* w : {"yesterday", "weekend", "friday", "fridays", "may", "2022", "summer", "weeks"}) {
    EXPECT_TRUE(IsTimeWord(w)) << w;
    EXPECT_TRUE(IsScheduleWord(w)) << w;
  }
  for (const char* w : {"pm",       "4pm",      "10am",      "8th",      "21st",       "daily",
                        "biweekly", "mornings", "christmas", "a.m",      "noon",       "midnight",
                        "o'clock",  "hourly",   "7.40pm",    "11:15am",  "2025-03-14", "day",
                        "hours",    "quarter",  "quarterly", "semester", "fortnight",  "decade",
                        "when",     "until",    "after",     "before",   "during"}) {
    EXPECT_FALSE(IsTimeWord(w)) << w;  // dialogue keeps to the words above
    EXPECT_TRUE(IsScheduleWord(w)) << w;
  }
  for (const char* w : {"bike", "fix", "s", "", "3000", "123th", "800pm", "202", "friday's", "sundayss", "th",
                        "7.4pm", "7.40", "123.40pm", "2025-3-14", "2025-03-1x", "a.b", "noonday"}) {
    EXPECT_FALSE(IsTimeWord(w)) << w;
    EXPECT_FALSE(IsScheduleWord(w)) << w;
  }
}

TEST(TimeWordsTest, ClockTimesAndDatesInFigures) {
  for (const char* t : {"My train leaves at 7:40 every day", "14:30", "standup 9:05-9:20", "at 10:30:00",
                        "born 14/3/2025", "due 3/14/25", "(8:15)"}) {
    EXPECT_TRUE(HoldsClockTime(t)) << t;
  }
  for (const char* t : {"", "take 1/2 tablet", "we won 3-1", "a 3:1 ratio", "version 1.2.3", "pi is 3.14", "123:45",
                        "room 12/b", "1/2/3", "7:4", ":40", "7:", "page 5/"}) {
    EXPECT_FALSE(HoldsClockTime(t)) << t;
  }
}

// A season's words and the months of it a text names (meteorological,
// northern): a month written with a capital, "may" the verb aside.
TEST(TimeWordsTest, TheMonthsOfASeason) {
  EXPECT_EQ(SeasonFromWord("spring"), 3);
  EXPECT_EQ(SeasonFromWord("summer"), 6);
  EXPECT_EQ(SeasonFromWord("autumn"), 9);
  EXPECT_EQ(SeasonFromWord("fall"), 9);
  EXPECT_EQ(SeasonFromWord("winter"), 12);
  EXPECT_EQ(SeasonFromWord("springs"), 0);
  EXPECT_EQ(SeasonFromWord("Summer"), 0);  // lower-case words only
  EXPECT_TRUE(NamesMonthOfSeason("a two-week trip to Japan next April", 3));
  EXPECT_TRUE(NamesMonthOfSeason("back by Mar. 3", 3));
  EXPECT_TRUE(NamesMonthOfSeason("the wedding is in May", 3));
  EXPECT_FALSE(NamesMonthOfSeason("I may go to Japan", 3));  // the verb
  EXPECT_FALSE(NamesMonthOfSeason("a two-week trip to Japan next April", 6));
  EXPECT_TRUE(NamesMonthOfSeason("skiing in January", 12));
  EXPECT_TRUE(NamesMonthOfSeason("every December", 12));
  EXPECT_TRUE(NamesMonthOfSeason("Sept 14 to Oct 2", 9));
  EXPECT_FALSE(NamesMonthOfSeason("Marching band (MarchFest)", 3));  // no month is written whole
  EXPECT_FALSE(NamesMonthOfSeason("", 3));
  EXPECT_FALSE(NamesMonthOfSeason("in April", 0));
}

}  // namespace
}  // namespace engram
