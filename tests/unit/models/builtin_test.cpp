// ExtractiveMaintainer: continuity, chain/segment summaries, keywords and
// consolidation on small dialogues.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/time.hpp"
#include "models/builtin/extractive_maintainer.hpp"
#include "models/builtin/hash_embedder.hpp"

namespace engram {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr TimeMs kMinute = 60 * 1000;
constexpr TimeMs kDay = 24 * 60 * kMinute;

PageDraft Page(std::string user, std::string assistant, TimeMs t, const Vector& embedding = {}) {
  PageDraft p;
  p.user_text = std::move(user);
  p.assistant_text = std::move(assistant);
  p.user_name = "Caroline";
  p.assistant_name = "Melanie";
  p.event_time = t;
  p.embedding = embedding;
  return p;
}

// Unit vectors in 3-D: e1, one with a chosen cosine to e1 (in the e1-e2 plane),
// and e3, orthogonal to both.
Vector WithCosine(double c) {
  return {static_cast<float>(c), static_cast<float>(std::sqrt(1 - c * c)), 0.0f};
}
const Vector kE1 = {1.0f, 0.0f, 0.0f};
const Vector kE3 = {0.0f, 0.0f, 1.0f};

IdfFn FlatIdf() {
  return [](const std::string& t) { return t == "love" || t == "went" ? 0.3 : 2.0; };
}

TEST(ExtractiveMaintainer, Identity) {
  ExtractiveMaintainer m;
  EXPECT_EQ(m.Name(), "builtin-extractive-v1");
  EXPECT_TRUE(m.IsBuiltin());
}

TEST(ExtractiveMaintainer, ContinuityThresholds) {
  const PageDraft prev = Page("a", "b", 0, kE1);
  // Far apart in time: only the cosine counts.
  EXPECT_TRUE(ExtractiveMaintainer::Continues(prev, Page("c", "d", 5 * kDay, WithCosine(0.25))));
  EXPECT_FALSE(ExtractiveMaintainer::Continues(prev, Page("c", "d", 5 * kDay, WithCosine(0.15))));
  // Within 30 minutes a weaker cosine is enough.
  EXPECT_TRUE(ExtractiveMaintainer::Continues(prev, Page("c", "d", 20 * kMinute, WithCosine(0.1))));
  EXPECT_FALSE(ExtractiveMaintainer::Continues(prev, Page("c", "d", 20 * kMinute, WithCosine(0.01))));
  EXPECT_FALSE(ExtractiveMaintainer::Continues(prev, Page("c", "d", 31 * kMinute, WithCosine(0.1))));
  // Without embeddings, the term overlap is used.
  EXPECT_TRUE(ExtractiveMaintainer::Continues(Page("I love pottery class", "", 0),
                                              Page("pottery class again", "", 5 * kDay)));
  EXPECT_FALSE(ExtractiveMaintainer::Continues(Page("I love pottery class", "", 0),
                                               Page("tax report deadline", "", 5 * kDay)));
}

TEST(ExtractiveMaintainer, AnalyzePagesContinuityOnAndOff) {
  ExtractiveMaintainer m;
  ChainContext chain;
  chain.has_previous = true;
  chain.previous = Page("I adopted a puppy.", "Cute!", 0, kE1);
  chain.chain_summary = "Caroline: I adopted a puppy named Max from the shelter.";
  std::vector<PageDraft> pages = {
      Page("Max chews every shoe in the house.", "Puppies do that.", 3 * kDay, WithCosine(0.5)),
      Page("My new job at the bakery starts Monday.", "Congrats!", 10 * kDay, kE3),
  };
  auto r = m.AnalyzePages(chain, pages, FlatIdf());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->pages.size(), 2u);
  EXPECT_TRUE(r->degraded);
  EXPECT_EQ(r->model_calls, 0);
  EXPECT_TRUE(r->pages[0].continues_previous);
  // The continuing chain folds in the previous summary, chronologically.
  EXPECT_THAT(r->pages[0].chain_summary, HasSubstr("puppy named Max"));
  EXPECT_THAT(r->pages[0].chain_summary, HasSubstr("chews every shoe"));
  EXPECT_LT(r->pages[0].chain_summary.find("puppy named Max"), r->pages[0].chain_summary.find("chews"));
  EXPECT_EQ(r->pages[0].chain_summary.rfind("Caroline: ", 0), 0u);
  // The second page (cosine 0, days later) starts a new chain with its own text only.
  EXPECT_FALSE(r->pages[1].continues_previous);
  EXPECT_THAT(r->pages[1].chain_summary, HasSubstr("Caroline: My new job at the bakery starts Monday."));
  EXPECT_THAT(r->pages[1].chain_summary, Not(HasSubstr("Max")));
}

TEST(ExtractiveMaintainer, FirstPageWithoutPreviousDoesNotContinue) {
  ExtractiveMaintainer m;
  auto r = m.AnalyzePages({}, {Page("I went to a support group yesterday.", "How was it?", 0, kE1)}, FlatIdf());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->pages.size(), 1u);
  EXPECT_FALSE(r->pages[0].continues_previous);
  EXPECT_EQ(r->pages[0].chain_summary, "Caroline: I went to a support group yesterday.");
  auto empty = m.AnalyzePages({}, {}, FlatIdf());
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->pages.empty());
}

TEST(ExtractiveMaintainer, ChainSummaryStaysBoundedOverALongChain) {
  ExtractiveMaintainer m;
  HashEmbedder e;
  std::vector<PageDraft> pages;
  for (int i = 0; i < 12; ++i) {
    const std::string text = "Pottery session " + std::to_string(i) +
                             ": I glazed a large ceramic bowl with blue cobalt patterns and a matte finish.";
    pages.push_back(Page(text, "The pottery sounds lovely, keep going with the ceramic glazes!",
                         i * kMinute, e.EmbedOne(text)));
  }
  auto r = m.AnalyzePages({}, pages, FlatIdf());
  ASSERT_TRUE(r.ok());
  for (std::size_t i = 0; i < r->pages.size(); ++i) {
    EXPECT_LE(r->pages[i].chain_summary.size(), ExtractiveMaintainer::kChainSummaryBytes);
    EXPECT_FALSE(r->pages[i].chain_summary.empty());
    if (i > 0) {
      EXPECT_TRUE(r->pages[i].continues_previous);
    }
  }
}

TEST(ExtractiveMaintainer, KeywordsAreLowerCaseSurfaceWordsByTfIdf) {
  ExtractiveMaintainer m;
  IdfFn idf = [](const std::string& t) { return t == "weekend" ? 0.1 : 2.5; };
  auto r = m.AnalyzePages(
      {}, {Page("Hiking in Yosemite was great! We went hiking again this weekend, 3 times in 2023.",
                "Yosemite hiking trails are beautiful, Caroline.", 0)},
      idf);
  ASSERT_TRUE(r.ok());
  const std::vector<std::string>& kw = r->pages[0].keywords;
  ASSERT_GE(kw.size(), 3u);
  ASSERT_LE(kw.size(), 8u);
  EXPECT_EQ(kw[0], "hiking");  // highest tf, surface form (the stem is "hike")
  EXPECT_EQ(kw[1], "yosemite");
  for (const std::string& k : kw) {
    EXPECT_TRUE(std::none_of(k.begin(), k.end(), [](unsigned char c) { return std::isupper(c); })) << k;
    EXPECT_NE(k, "2023");
    EXPECT_NE(k, "in");
    EXPECT_NE(k, "caroline");  // speakers' names are not keywords
  }
  EXPECT_THAT(kw, Not(Contains("weekend")));  // low idf
}

TEST(ExtractiveMaintainer, DeterministicOutput) {
  ExtractiveMaintainer m;
  HashEmbedder e;
  std::vector<PageDraft> pages;
  for (const char* t : {"I started learning the violin.", "My teacher says I have a good ear.",
                        "We moved to Denver in May."}) {
    pages.push_back(Page(t, "That's wonderful to hear.", 0, e.EmbedOne(t)));
  }
  auto a = m.AnalyzePages({}, pages, FlatIdf());
  auto b = m.AnalyzePages({}, pages, FlatIdf());
  ASSERT_TRUE(a.ok() && b.ok());
  for (std::size_t i = 0; i < pages.size(); ++i) {
    EXPECT_EQ(a->pages[i].continues_previous, b->pages[i].continues_previous);
    EXPECT_EQ(a->pages[i].chain_summary, b->pages[i].chain_summary);
    EXPECT_EQ(a->pages[i].keywords, b->pages[i].keywords);
  }
}

TEST(ExtractiveMaintainer, SummarizeSegmentsMergesKeywordsAndBoundsSummary) {
  ExtractiveMaintainer m;
  SegmentInput seg;
  seg.summary = "Caroline: I joined a pottery class at the community center. Melanie: Pottery is relaxing.";
  seg.keywords = {"pottery", "class", "community"};
  seg.new_pages = {Page("I made my first pottery bowl with a blue glaze in class today.",
                        "The glaze colour sounds beautiful!", kDay)};
  SegmentInput fresh;  // a new segment
  fresh.new_pages = {Page("My daughter Emma starts kindergarten on Monday.", "Exciting times!", kDay)};
  auto r = m.SummarizeSegments({seg, fresh}, FlatIdf());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->segments.size(), 2u);
  EXPECT_TRUE(r->degraded);
  EXPECT_EQ(r->model_calls, 0);
  const SegmentSummary& s = r->segments[0];
  ASSERT_LE(s.keywords.size(), 10u);
  ASSERT_GE(s.keywords.size(), 3u);
  EXPECT_EQ(s.keywords[0], "pottery");  // stable and confirmed by new evidence
  EXPECT_THAT(s.keywords, Contains("glaze"));  // new evidence
  EXPECT_THAT(s.keywords, Contains("community"));  // stable ones kept
  EXPECT_LE(s.summary.size(), ExtractiveMaintainer::kSegmentSummaryBytes);
  EXPECT_THAT(s.summary, HasSubstr("Caroline: I joined a pottery class"));
  EXPECT_THAT(s.summary, HasSubstr("first pottery bowl"));
  EXPECT_THAT(r->segments[1].summary, HasSubstr("Caroline: My daughter Emma starts kindergarten"));
  EXPECT_THAT(r->segments[1].keywords, Contains("kindergarten"));
}

TEST(ExtractiveMaintainer, SummarizeSegmentWithoutNewPagesKeepsIt) {
  ExtractiveMaintainer m;
  SegmentInput seg;
  seg.summary = "Caroline: I love jazz.";
  seg.keywords = {"jazz"};
  auto r = m.SummarizeSegments({seg}, nullptr);  // a missing IdfFn is allowed
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->segments[0].summary, "Caroline: I love jazz.");
  EXPECT_THAT(r->segments[0].keywords, ElementsAre("jazz"));
}

TEST(ExtractiveMaintainer, ConsolidateExtractsFactsAndSlots) {
  ExtractiveMaintainer m;
  ConsolidationPage p1{11,
                       "Hey Mel! I went to a support group yesterday. How are you?",
                       "I'm good! I recommend trying the new trail by the lake.",
                       "Caroline",
                       "Melanie",
                       MakeTimeMs(2023, 5, 8, 10)};
  ConsolidationPage p2{12,
                       "My name is Caroline and I live in Portland. I love hiking and jazz.",
                       "Nice. I'll send you my favourite jazz playlist.",
                       "Caroline",
                       "Melanie",
                       MakeTimeMs(2023, 5, 8, 11)};
  ConsolidationPage p3{13,
                       "I went to a support group yesterday.",
                       "Good to hear.",
                       "Caroline",
                       "Melanie",
                       MakeTimeMs(2023, 5, 8, 12)};
  // The same words a day later are another day's fact.
  ConsolidationPage p4{14,        "I went to a support group yesterday.",
                       "",        "Caroline",
                       "Melanie", MakeTimeMs(2023, 5, 9, 12)};
  std::vector<ProfileSlot> profile = {{"interests", "painting", {5}, 0}};
  auto r = m.Consolidate(profile, {p1, p2, p3, p4});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->degraded);
  EXPECT_EQ(r->model_calls, 0);
  ASSERT_GE(r->user_facts.size(), 4u);
  // A time said relative to the page's is written as its date (core/relative_time.hpp).
  const ExtractedFact& f = r->user_facts[0];
  EXPECT_EQ(f.text, "Caroline went to a support group on 7 May 2023.");
  EXPECT_EQ(f.event_time, MakeTimeMs(2023, 5, 8, 10));
  EXPECT_THAT(f.source_pages, ElementsAre(11, 13));  // identical fact on page 13 merged
  std::vector<std::string> texts;
  for (const auto& x : r->user_facts) texts.push_back(x.text);
  EXPECT_THAT(texts, Contains("Caroline went to a support group on 8 May 2023."));
  EXPECT_THAT(texts, Contains("Caroline loves hiking and jazz."));
  EXPECT_THAT(texts, Contains("Caroline lives in Portland."));
  for (const std::string& t : texts) EXPECT_THAT(t, Not(HasSubstr("?")));  // no questions
  ASSERT_EQ(r->assistant_facts.size(), 2u);
  EXPECT_EQ(r->assistant_facts[0].text, "Melanie recommends trying the new trail by the lake.");
  EXPECT_EQ(r->assistant_facts[1].text, "Melanie will send Caroline Melanie's favourite jazz playlist.");
  EXPECT_THAT(r->assistant_facts[1].source_pages, ElementsAre(12));

  std::map<std::string, SlotUpdate> slots;
  for (const SlotUpdate& u : r->slot_updates) slots[u.dimension] = u;
  ASSERT_TRUE(slots.count("name"));
  EXPECT_EQ(slots["name"].value, "Caroline");
  EXPECT_THAT(slots["name"].evidence_pages, ElementsAre(12));
  EXPECT_EQ(slots["location"].value, "Portland");
  EXPECT_EQ(slots["interests"].value, "painting; hiking; jazz");  // accumulated
  EXPECT_THAT(slots["interests"].evidence_pages, ElementsAre(5, 12));
}

TEST(ExtractiveMaintainer, ConsolidateUsesDefaultNamesAndSkipsSmallTalk) {
  ExtractiveMaintainer m;
  ConsolidationPage p{1, "Hi! How are you doing today?", "Thanks for asking! I'm so glad you wrote.", "", "", 0};
  auto r = m.Consolidate({}, {p});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->user_facts.empty());
  EXPECT_TRUE(r->assistant_facts.empty());
  EXPECT_TRUE(r->slot_updates.empty());
  ConsolidationPage q{2, "I work as a paramedic.", "", "", "", 0};
  auto r2 = m.Consolidate({}, {q});
  ASSERT_TRUE(r2.ok());
  ASSERT_EQ(r2->user_facts.size(), 1u);
  EXPECT_EQ(r2->user_facts[0].text, "User works as a paramedic.");
}

TEST(ExtractiveMaintainer, IdfFailureBecomesStatus) {
  ExtractiveMaintainer m;
  IdfFn broken = [](const std::string&) -> double { throw std::runtime_error("idf store closed"); };
  auto r = m.AnalyzePages({}, {Page("I love pottery.", "Nice.", 0)}, broken);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_THAT(r.status().message(), HasSubstr("idf store closed"));
  SegmentInput seg;
  seg.new_pages = {Page("I love pottery.", "", 0)};
  EXPECT_FALSE(m.SummarizeSegments({seg}, broken).ok());
}

}  // namespace
}  // namespace engram
