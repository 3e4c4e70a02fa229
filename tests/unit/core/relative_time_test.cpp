// FindRelativeTimes / WithAbsoluteTimes: times said relative to the moment
// of saying, found and written as dates.
#include "core/relative_time.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/text.hpp"
#include "core/time.hpp"

namespace engram {
namespace {

const TimeMs kMonday = MakeTimeMs(2023, 5, 8, 13, 56);  // Monday 8 May 2023, 1:56 pm

std::string Dated(const char* text, TimeMs said = kMonday) { return WithAbsoluteTimes(text, said); }

TEST(RelativeTime, DaysBecomeDates) {
  EXPECT_EQ(Dated("Caroline went to a support group yesterday and it was powerful."),
            "Caroline went to a support group on 7 May 2023 and it was powerful.");
  EXPECT_EQ(Dated("Yesterday Melanie took the kids to the museum."),
            "On 7 May 2023 Melanie took the kids to the museum.");
  EXPECT_EQ(Dated("User is flying out tomorrow morning."),
            "User is flying out on the morning of 9 May 2023.");
  EXPECT_EQ(Dated("User is going to a concert tonight."),
            "User is going to a concert on the evening of 8 May 2023.");
  EXPECT_EQ(Dated("This morning User ran 5k."), "On the morning of 8 May 2023 User ran 5k.");
  EXPECT_EQ(Dated("Last night was fun."), "The night of 7 May 2023 was fun.");
  EXPECT_EQ(Dated("User moved in the day before yesterday."), "User moved in on 6 May 2023.");
  EXPECT_EQ(Dated("The party is the day after tomorrow."), "The party is on 10 May 2023.");
  EXPECT_EQ(Dated("User started two days ago."), "User started on 6 May 2023.");
  EXPECT_EQ(Dated("User has been sick since yesterday."), "User has been sick since 7 May 2023.");
  EXPECT_EQ(Dated("Today is Bob's birthday."), "8 May 2023 is Bob's birthday.");
}

TEST(RelativeTime, WeekdaysWeeksMonthsAndYears) {
  EXPECT_EQ(Dated("Last Fri Melanie took the kids to a pottery workshop."),
            "On Friday 5 May 2023 Melanie took the kids to a pottery workshop.");
  EXPECT_EQ(Dated("User ran a charity race last Saturday."),
            "User ran a charity race on Saturday 6 May 2023.");
  // The latest one before the day said, never that day itself; the first one after it.
  EXPECT_EQ(Dated("User met Ann last Monday."), "User met Ann on Monday 1 May 2023.");
  EXPECT_EQ(Dated("The interview is next Thurs."), "The interview is on Thursday 11 May 2023.");
  EXPECT_EQ(Dated("User went hiking last week."), "User went hiking in the week of 1 May 2023.");
  EXPECT_EQ(Dated("User starts a new job next week."),
            "User starts a new job in the week of 15 May 2023.");
  EXPECT_EQ(Dated("Last weekend we went camping."),
            "On the weekend of 6 May 2023 we went camping.");
  EXPECT_EQ(Dated("User moves to Berlin next month."), "User moves to Berlin in June 2023.");
  EXPECT_EQ(Dated("The conference is this month."), "The conference is in May 2023.");
  EXPECT_EQ(Dated("User painted that sunrise last year."), "User painted that sunrise in 2022.");
  EXPECT_EQ(Dated("User started transitioning three years ago."),
            "User started transitioning in 2020.");
  EXPECT_EQ(Dated("User adopted a pup 3 months ago."), "User adopted a pup in February 2023.");
  EXPECT_EQ(Dated("User first watched it around 3 years ago."),
            "User first watched it around 2020.");
  EXPECT_EQ(Dated("User moved about 2 months ago."), "User moved about March 2023.");
  EXPECT_EQ(Dated("User visited Rome last May."), "User visited Rome in May 2022.");  // said in May
  EXPECT_EQ(Dated("User visited Rome last April."), "User visited Rome in April 2023.");
  EXPECT_EQ(Dated("Emma starts school next September."), "Emma starts school in September 2023.");
  EXPECT_EQ(Dated("The wedding is next March."), "The wedding is in March 2024.");
  EXPECT_EQ(Dated("User went to Crete last summer."), "User went to Crete in the summer of 2022.");
  EXPECT_EQ(Dated("User moves next fall."), "User moves in the fall of 2023.");
  EXPECT_EQ(Dated("User went to Crete last summer.", MakeTimeMs(2023, 10, 2)),
            "User went to Crete in the summer of 2023.");
  EXPECT_EQ(Dated("User took a course last spring.", MakeTimeMs(2023, 5, 20)),
            "User took a course in the spring of 2022.");  // this one has not ended
  // A loose count, or weeks: as many before the day said.
  EXPECT_EQ(Dated("A couple of weeks ago User joined a club."),
            "A couple of weeks before 8 May 2023 User joined a club.");
  EXPECT_EQ(Dated("User saw it a few days ago."), "User saw it a few days before 8 May 2023.");
  // Across a year's end.
  EXPECT_EQ(Dated("User moves next month.", MakeTimeMs(2023, 12, 20)),
            "User moves in January 2024.");
  EXPECT_EQ(Dated("User moved last month.", MakeTimeMs(2024, 1, 5)),
            "User moved in December 2023.");
  EXPECT_EQ(Dated("User came home yesterday.", MakeTimeMs(2024, 1, 1, 9)),
            "User came home on 31 December 2023.");
}

// A possessive names its thing by the date before it; a week's, a weekend's
// and a count ago's are left as written.
TEST(RelativeTime, PossessivesNameTheirThingByTheDate) {
  EXPECT_EQ(Dated("User loved yesterday's pottery class."),
            "User loved the 7 May 2023 pottery class.");
  EXPECT_EQ(Dated("Tomorrow's appointment is at 3pm."), "The 9 May 2023 appointment is at 3pm.");
  EXPECT_EQ(Dated("User missed tonight\xE2\x80\x99s game."), "User missed the 8 May 2023 game.");
  EXPECT_EQ(Dated("Last Friday's party ran late."), "The Friday 5 May 2023 party ran late.");
  EXPECT_EQ(Dated("User booked next month's flights."), "User booked the June 2023 flights.");
  EXPECT_EQ(Dated("Last year's trip to Crete was the best."),
            "The 2022 trip to Crete was the best.");
  EXPECT_EQ(Dated("Last summer's trip was long."), "The summer 2022 trip was long.");
  EXPECT_EQ(Dated("Yesterday I read today's paper."), "On 7 May 2023 I read the 8 May 2023 paper.");
}

TEST(RelativeTime, WhatIsNoDateIsLeftAsWritten) {
  for (const char* text : {"Over the last week User was sick.",
                           "User is away for the next month.",
                           "Last week's game was great.",
                           "User watches films on Friday.",
                           "This Friday User plays.",
                           "Recently User started painting.",
                           "User loves summer.",
                           "It was a long time ago.",
                           "User went there many days ago.",
                           "See you Sun.",
                           "User was the last one to leave.",
                           "Next time User brings snacks.",
                           "Two weekends ago User went camping.",
                           "User skis every winter.",
                           "Last winter was cold.",
                           "This summer User works.",
                           "User may come next.",
                           "The last March User joined was in Paris.",
                           "Die Tagung ist gestern gewesen.",
                           ""}) {
    EXPECT_EQ(Dated(text), text);
  }
}

TEST(RelativeTime, FoundInTokensWithTheirSpans) {
  const std::vector<std::string> tokens =
      text::Tokenize("Yesterday I ran, and a couple of weeks ago I swam last Fri");
  const auto found = FindRelativeTimes(tokens, kMonday);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].first, 0u);
  EXPECT_EQ(found[0].count, 1u);
  EXPECT_EQ(found[0].day, DayOf(MakeTimeMs(2023, 5, 7)));
  EXPECT_EQ(found[1].first, 4u);  // "a couple of weeks ago"
  EXPECT_EQ(found[1].count, 5u);
  EXPECT_EQ(found[1].unit, RelativeTime::Unit::kWeek);
  EXPECT_EQ(found[1].ago, 2);
  EXPECT_TRUE(found[1].loose);
  EXPECT_EQ(found[2].unit, RelativeTime::Unit::kDay);
  EXPECT_TRUE(found[2].weekday);
  EXPECT_EQ(found[2].day, DayOf(MakeTimeMs(2023, 5, 5)));
}

}  // namespace
}  // namespace engram
