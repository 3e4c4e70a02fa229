// A date a question names ("on 8 May, 2023", "in June 2023") and what the
// ranking does with it.
#include <gtest/gtest.h>

#include "core/text.hpp"
#include "core/time.hpp"
#include "retrieval/query_dates.hpp"
#include "retrieval/ranking.hpp"
#include "retrieval/scope_index.hpp"

namespace engram::retrieval {
namespace {

constexpr TimeMs kDay = 86400000;

TEST(QueryDates, ADayOrAMonthWithItsYear) {
  const TimeMs may8 = MakeTimeMs(2023, 5, 8, 14);
  for (const char* q : {"What did Ana say on 8 May, 2023?", "What did Ana say on May 8, 2023?",
                        "What did Ana say on May 8th 2023?", "What happened on 2023-05-08?"}) {
    const TimeWindow w = QueryDateWindow(q, 0);
    ASSERT_FALSE(w.empty()) << q;
    EXPECT_TRUE(w.contains(may8)) << q;
    EXPECT_FALSE(w.contains(may8 + kDay)) << q;
    EXPECT_FALSE(w.contains(may8 - kDay)) << q;
  }
  // Slack widens the day on both sides.
  const TimeWindow slack = QueryDateWindow("on 8 May, 2023", 1);
  EXPECT_TRUE(slack.contains(may8 + kDay));
  EXPECT_TRUE(slack.contains(may8 - kDay));
  EXPECT_FALSE(slack.contains(may8 + 2 * kDay));
  // A month: all its days.
  const TimeWindow june = QueryDateWindow("What did Ben start in June 2023?", 0);
  EXPECT_TRUE(june.contains(MakeTimeMs(2023, 6, 1)));
  EXPECT_TRUE(june.contains(MakeTimeMs(2023, 6, 30, 23)));
  EXPECT_FALSE(june.contains(MakeTimeMs(2023, 7, 1)));
  EXPECT_FALSE(june.contains(MakeTimeMs(2023, 5, 31, 23)));
  EXPECT_TRUE(QueryDateWindow("Sep 2024", 0).contains(MakeTimeMs(2024, 9, 10)));
  // No window: no date, a year alone, a day without its year, "may" the verb.
  EXPECT_TRUE(QueryDateWindow("What does Ana like?").empty());
  EXPECT_TRUE(QueryDateWindow("What did Ana do in 2023?").empty());
  EXPECT_TRUE(QueryDateWindow("What did Ana do on 8 May?").empty());
  EXPECT_TRUE(QueryDateWindow("May I ask what Ana did?").empty());
  EXPECT_TRUE(QueryDateWindow("What did Ana do on 31 February, 2023?").empty() ||
              !QueryDateWindow("What did Ana do on 31 February, 2023?").contains(MakeTimeMs(2023, 3, 3)));
}

TEST(QueryDates, WithoutItsYearTheLatestByTheLastMessage) {
  const TimeMs last = MakeTimeMs(2023, 10, 20, 9);  // the scope's newest message
  auto window = [&](const char* q) { return QueryDateWindow(q, 0, last); };
  // A month after a word that introduces it: the latest one begun by then.
  const TimeWindow june = window("When did Melanie go camping in June?");
  EXPECT_TRUE(june.contains(MakeTimeMs(2023, 6, 15)));
  EXPECT_FALSE(june.contains(MakeTimeMs(2022, 6, 15)));
  EXPECT_FALSE(june.contains(MakeTimeMs(2023, 7, 1)));
  EXPECT_TRUE(window("Which country was Tim visiting in the second week of November?")
                  .contains(MakeTimeMs(2022, 11, 10)));  // November 2023 had not begun
  EXPECT_TRUE(window("What did Ana do in October?").contains(MakeTimeMs(2023, 10, 2)));
  EXPECT_TRUE(window("Where did Ana go in May?").contains(MakeTimeMs(2023, 5, 2)));
  // A day: the latest one by then.
  const TimeWindow aug15 = window("What did John's teammates give him when they met on Aug 15th?");
  EXPECT_TRUE(aug15.contains(MakeTimeMs(2023, 8, 15, 12)));
  EXPECT_FALSE(aug15.contains(MakeTimeMs(2023, 8, 16, 12)));
  EXPECT_TRUE(window("What happened on 21 October?").contains(MakeTimeMs(2022, 10, 21, 12)));
  // A year named wins over the latest.
  EXPECT_TRUE(window("What did Ana do in June 2021?").contains(MakeTimeMs(2021, 6, 3)));
  // No window: a bare month that nothing introduces ("may", "march" are
  // verbs), or nothing to date it by.
  EXPECT_TRUE(window("May I ask what Ana did?").empty());
  EXPECT_TRUE(window("Did this may help Ana?").empty());
  EXPECT_TRUE(window("Will they march for the cause?").empty());
  EXPECT_TRUE(window("June said she would come").empty());
  EXPECT_TRUE(window("What is Ana planning for next June?").empty());  // one to come
  EXPECT_TRUE(QueryDateWindow("When did Melanie go camping in June?", 0).empty());
}

// A season (meteorological, northern) is a window of its three months:
// with its year ("summer 2022", "the summer of 2021"; winter 2023 is the
// one of its January), or without it after a word that introduces a time,
// the latest one begun by the scope's last message; not after "of" ("the
// colours of autumn") or "next" (one to come), nor "fall" the verb.
TEST(QueryDates, ASeasonIsItsThreeMonths) {
  const TimeWindow summer = QueryDateWindow("What did Sam do towards the end of summer 2023?", 0);
  EXPECT_TRUE(summer.contains(MakeTimeMs(2023, 6, 1)));
  EXPECT_TRUE(summer.contains(MakeTimeMs(2023, 8, 31, 23)));
  EXPECT_FALSE(summer.contains(MakeTimeMs(2023, 9, 1)));
  EXPECT_FALSE(summer.contains(MakeTimeMs(2023, 5, 31, 23)));
  EXPECT_TRUE(QueryDateWindow("Where was Jolene in the summer of 2021?", 0)
                  .contains(MakeTimeMs(2021, 7, 4)));
  const TimeWindow winter = QueryDateWindow("What did Ana read in winter 2023?", 0);
  EXPECT_TRUE(winter.contains(MakeTimeMs(2022, 12, 20)));
  EXPECT_TRUE(winter.contains(MakeTimeMs(2023, 2, 28, 12)));
  EXPECT_FALSE(winter.contains(MakeTimeMs(2023, 3, 1)));
  EXPECT_TRUE(
      QueryDateWindow("Where did they go in fall 2022?", 0).contains(MakeTimeMs(2022, 10, 1)));
  EXPECT_TRUE(QueryDateWindow("spring 2024", 0).contains(MakeTimeMs(2024, 4, 30)));
  const TimeMs last = MakeTimeMs(2023, 10, 20, 9);  // the scope's newest message
  auto window = [&](const char* q) { return QueryDateWindow(q, 0, last); };
  EXPECT_TRUE(window("When did Caroline go to a pride parade during the summer?")
                  .contains(MakeTimeMs(2023, 7, 1)));
  EXPECT_TRUE(window("What did Ana plant in the spring?").contains(MakeTimeMs(2023, 4, 1)));
  EXPECT_TRUE(window("Where did they hike last fall?").contains(MakeTimeMs(2023, 10, 1)));
  // (winter 2023-24 had not begun: the one before)
  EXPECT_TRUE(window("What did James do in the winter?").contains(MakeTimeMs(2023, 1, 15)));
  EXPECT_TRUE(window("What aspect of autumn does Andrew find beautiful?").empty());
  EXPECT_TRUE(window("What family event is Evan planning for next summer?").empty());
  EXPECT_TRUE(window("When did Evan's son fall off his bike?").empty());
  EXPECT_TRUE(window("Does Ana like summer?").empty());
  EXPECT_TRUE(
      QueryDateWindow("What did Ana do in the summer?", 0).empty());  // nothing to date it by
}

TEST(QueryDates, WhatAMessageSaysPointsToDays) {
  const TimeMs said = MakeTimeMs(2023, 10, 4, 15);  // a Wednesday
  auto days = [&](const char* text) { return SaidWindow(text::Tokenize(text), said); };
  auto is = [&](const char* text, TimeMs from, TimeMs to) {
    const TimeWindow w = days(text);
    EXPECT_EQ(w.from, from) << text;
    EXPECT_EQ(w.to, to) << text;
  };
  auto day = [](int m, int d) { return MakeTimeMs(2023, m, d); };
  is("Yesterday I met some artists in Boston", day(10, 3), day(10, 4));
  is("I'm seeing them tonight", day(10, 4), day(10, 5));
  is("We fly out tomorrow!", day(10, 5), day(10, 6));
  is("I'm leaving the day after tomorrow", day(10, 6), day(10, 7));
  is("it was the day before yesterday", day(10, 2), day(10, 3));
  is("Last Friday I went to the car show", day(9, 29), day(9, 30));
  is("Last Wednesday was rough", day(9, 27), day(9, 28));  // a week ago, not today
  is("let's go next Friday", day(10, 6), day(10, 7));
  is("last week was busy", day(9, 25), day(10, 2));  // Monday to Sunday
  is("This week has been long", day(10, 2), day(10, 9));
  is("last weekend we went camping", day(9, 30), day(10, 2));
  is("what about this weekend?", day(10, 7), day(10, 9));
  is("I started two days ago", day(10, 1), day(10, 4));  // widened by a day
  is("A couple of weeks ago I joined", day(9, 17), day(9, 24));
  is("last month I moved", day(9, 1), day(10, 1));
  is("3 months ago I adopted a pup", day(7, 1), day(8, 1));
  is("next month I will travel", day(11, 1), day(12, 1));
  is("Yesterday was fun and next month is too", day(10, 3), day(10, 4));  // the first
  // Across a year's end.
  EXPECT_EQ(SaidWindow(text::Tokenize("next month"), MakeTimeMs(2023, 12, 20)).from, MakeTimeMs(2024, 1, 1));
  EXPECT_EQ(SaidWindow(text::Tokenize("last month"), MakeTimeMs(2024, 1, 5)).from, MakeTimeMs(2023, 12, 1));
  // Nothing that points to days.
  for (const char* text : {"I went there last year", "Recently I started painting", "On Friday we met",
                           "I love summer", "It was a long time ago", "many days ago"}) {
    EXPECT_TRUE(days(text).empty()) << text;
  }
}

TEST(QueryDates, DayWindowsKeepWholeDays) {
  const TimeWindow oct3{MakeTimeMs(2023, 10, 3), MakeTimeMs(2023, 10, 4)};
  const DayWindow d = DayWindow::Of(oct3);
  EXPECT_EQ(d.to - d.from, 1);
  EXPECT_TRUE(d.Meets(oct3));
  EXPECT_TRUE(d.Meets({MakeTimeMs(2023, 10, 3, 23), MakeTimeMs(2023, 10, 9)}));
  EXPECT_FALSE(d.Meets({MakeTimeMs(2023, 10, 4), MakeTimeMs(2023, 10, 9)}));
  EXPECT_FALSE(d.Meets({MakeTimeMs(2023, 9, 1), MakeTimeMs(2023, 10, 3)}));
  EXPECT_FALSE(d.Meets({}));
  // Part of a day counts as the day; before 1970 too.
  EXPECT_EQ(DayWindow::Of({MakeTimeMs(2023, 10, 3, 12), MakeTimeMs(2023, 10, 3, 13)}).from, d.from);
  const DayWindow old = DayWindow::Of({MakeTimeMs(1969, 12, 31, 6), MakeTimeMs(1969, 12, 31, 7)});
  EXPECT_EQ(old.from, -1);
  EXPECT_EQ(old.to, 0);
  EXPECT_TRUE(DayWindow::Of({}).empty());
  EXPECT_FALSE(DayWindow{}.Meets(oct3));
}

TurnEntry Entry(std::int64_t id, const std::string& user, const std::string& assistant, TimeMs t) {
  TurnEntry e;
  e.turn_id = id;
  e.page_id = 100 + id;
  e.seq = id;
  e.event_time = t;
  e.names[0] = "Ana";
  e.names[1] = "Ben";
  e.texts[0] = user;
  e.texts[1] = assistant;
  return e;
}

ScopeIndex Snapshot(std::vector<TurnEntry> entries) {
  ScopeIndex idx;
  idx.entries = std::move(entries);
  IndexMessages(idx.entries, idx.messages, idx.message_docs);
  return idx;
}

std::vector<std::pair<std::int64_t, int>> Order(const ScopeIndex& idx, const RankQuery& q, const RankParams& p) {
  StmMessages stm;
  std::vector<std::pair<std::int64_t, int>> out;  // turn, side
  for (const auto& m : RankMessages(idx, stm, q, p, 10)) out.emplace_back(m.entry->turn_id, m.side);
  return out;
}

TEST(Ranking, AQuestionsDateFavoursThatDaysMessages) {
  const TimeMs may8 = MakeTimeMs(2023, 5, 8, 10), june20 = MakeTimeMs(2023, 6, 20, 10);
  ScopeIndex idx = Snapshot({Entry(1, "I baked bread for the neighbours", "", may8),
                             Entry(2, "I baked bread again", "", june20)});
  const std::string question = "What did Ana bake on 8 May, 2023?";
  RankQuery q;
  q.terms = QueryTerms(question);
  RankParams no_date = DefaultRankParams();
  no_date.date = 0;
  q.dates = QueryDateWindow(question, 1);
  ASSERT_FALSE(q.dates.empty());
  auto dated = Order(idx, q, DefaultRankParams());
  ASSERT_GE(dated.size(), 2u);
  EXPECT_EQ(dated[0].first, 1);
  // Without the date the shorter, newer message ranks first.
  auto plain = Order(idx, q, no_date);
  ASSERT_GE(plain.size(), 2u);
  EXPECT_EQ(plain[0].first, 2);
}

TEST(Ranking, AMessageThatSaysItsDayIsFoundForThatDay) {
  // Said on 9 October, "last week" points to 2-8 October; the other message
  // is of no day the question names.
  ScopeIndex idx = Snapshot({Entry(1, "Last week I met some artists in Boston", "", MakeTimeMs(2023, 10, 9, 10)),
                             Entry(2, "I met some artists in Boston", "", MakeTimeMs(2023, 10, 20, 10))});
  EXPECT_FALSE(idx.entries[0].said[0].empty());
  EXPECT_TRUE(idx.entries[1].said[0].empty());
  EXPECT_EQ(idx.message_docs[0].said, 1);
  const std::string question = "Where did Ana meet artists on October 3, 2023?";
  RankQuery q;
  q.terms = QueryTerms(question);
  q.dates = QueryDateWindow(question, 1);
  ASSERT_FALSE(q.dates.empty());
  q.explain = true;
  const RankParams p = DefaultRankParams();
  StmMessages stm;
  auto ranked = RankMessages(idx, stm, q, p, 10);
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].entry->turn_id, 1);
  EXPECT_TRUE(ranked[0].why.said_date);
  EXPECT_FALSE(ranked[1].why.said_date);
  EXPECT_NEAR(ranked[0].score, (1 + p.said_date) * ranked[1].score, 0.35 * ranked[1].score);
  // Without it the newer message ranks first (the tie order).
  RankParams off = p;
  off.said_date = 0;
  auto plain = Order(idx, q, off);
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0].first, 2);
}

}  // namespace
}  // namespace engram::retrieval
