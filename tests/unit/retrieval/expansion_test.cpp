// WordNet query expansion on a tiny database in the Princeton format.
#include "retrieval/expansion.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/text.hpp"
#include "core/wordnet.hpp"
#include "retrieval/ranking.hpp"

namespace engram::retrieval {
namespace {

class Expansion : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "engram-wnx-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    Write("data.noun",
          "00000001 06 n 01 instrument 0 002 ~ 00000002 n 0000 ~ 00000003 n 0000 | a device\n"
          "00000002 06 n 01 violin 0 000 | bowed\n"
          "00000003 06 n 01 clarinet 0 000 | reed\n");
    Write("index.noun",
          "clarinet n 1 0 1 0 00000003\ninstrument n 1 1 ~ 1 0 00000001\nviolin n 1 0 1 0 00000002\n");
    for (const char* f : {"data.verb", "index.verb", "data.adj", "index.adj"}) Write(f, "");
    wn_ = wordnet::WordNet::Load(dir_);
    ASSERT_NE(wn_, nullptr);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void Write(const std::string& name, const std::string& data) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << data;
  }
  std::string dir_;
  std::unique_ptr<wordnet::WordNet> wn_;
};

TEST_F(Expansion, AddsAcceptedRelatedTermsBelowTheQuerysOwn) {
  const std::string q = "What instruments does Ana play?";
  const auto base = QueryTerms(q);
  auto terms = ExpandQueryTerms(q, base, [](const std::string& t) { return t == "violin"; },
                                DefaultExpansionParams(), wn_.get());
  ASSERT_EQ(terms.size(), base.size() + 1);
  for (std::size_t i = 0; i < base.size(); ++i) {
    EXPECT_EQ(terms[i].term, base[i].term);
    EXPECT_EQ(terms[i].weight, 1.0);
  }
  EXPECT_EQ(terms.back().term, "violin");
  EXPECT_DOUBLE_EQ(terms.back().weight, DefaultExpansionParams().hyponym);
}

TEST_F(Expansion, LeavesTheQueryAloneWithoutMatches) {
  const std::string q = "instrument violin";
  const auto base = QueryTerms(q);
  // "violin" is a query term already; "clarinet" is not accepted.
  auto terms = ExpandQueryTerms(q, base, [](const std::string& t) { return t != "clarinet"; },
                                DefaultExpansionParams(), wn_.get());
  ASSERT_EQ(terms.size(), base.size());
  EXPECT_EQ(terms[1].weight, 1.0);
  EXPECT_EQ(ExpandQueryTerms("", {}, [](const std::string&) { return true; }, DefaultExpansionParams(),
                             wn_.get()).size(), 0u);
}

// Verb idioms: a tiny database with WordNet's shapes of them.
class IdiomExpansion : public Expansion {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "engram-wni-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    Write("data.noun", "00000004 26 n 01 death 0 001 + 00000002 v 0101 | the end of life\n");
    Write("index.noun", "death n 1 1 + 1 0 00000004\n");
    Write("data.verb",
          "00000001 32 v 03 propose 0 declare_oneself 0 pop_the_question 0 000 | ask to marry\n"
          "00000002 30 v 02 die 0 pass_away 0 001 + 00000004 n 0101 | stop living\n"
          "00000003 41 v 04 marry 0 wed 0 get_married 0 hook_up_with 0 000 | take in marriage\n"
          "00000005 30 v 02 separate 0 break_up 0 000 | part\n"
          "00000006 30 v 02 disband 0 break_up 0 000 | stop being a group\n"
          "00000007 30 v 02 crumble 0 break_up 0 000 | fall apart\n"
          "00000008 38 v 02 head 0 make_for 0 000 | go toward\n"
          "00000009 38 v 01 pop 0 000 | burst\n");
    Write("index.verb",
          "break_up v 3 0 3 0 00000005 00000006 00000007\n"
          "crumble v 1 0 1 0 00000007\n"
          "declare_oneself v 1 0 1 0 00000001\n"
          "die v 1 1 + 1 0 00000002\n"
          "disband v 1 0 1 0 00000006\n"
          "get_married v 1 0 1 0 00000003\n"
          "head v 1 0 1 0 00000008\n"
          "hook_up_with v 1 0 1 0 00000003\n"
          "make_for v 1 0 1 0 00000008\n"
          "marry v 1 0 1 0 00000003\n"
          "pass_away v 1 1 + 1 0 00000002\n"
          "pop v 1 0 1 0 00000009\n"
          "pop_the_question v 1 0 1 0 00000001\n"
          "propose v 1 0 1 0 00000001\n"
          "separate v 1 0 1 0 00000005\n"
          "wed v 1 0 1 0 00000003\n");
    Write("verb.exc", "popped pop\n");  // (a base form must be a word of its own)
    for (const char* f : {"data.adj", "index.adj"}) Write(f, "");
    wn_ = wordnet::WordNet::Load(dir_);
    ASSERT_NE(wn_, nullptr);
  }
  // The expansions of a question (its own terms aside), every term accepted.
  std::vector<QueryTerm> Expanded(const std::string& q,
                                  const ExpansionParams& p = DefaultExpansionParams()) {
    const auto base = QueryTerms(q);
    auto terms = ExpandQueryTerms(
        q, base, [](const std::string&) { return true; }, p, wn_.get());
    return {terms.begin() + static_cast<std::ptrdiff_t>(base.size()), terms.end()};
  }
  static const QueryTerm* Find(const std::vector<QueryTerm>& terms, const std::string& word) {
    const std::string term = text::Terms(word).at(0);
    auto it = std::find_if(terms.begin(), terms.end(),
                           [&](const QueryTerm& t) { return t.term == term; });
    return it == terms.end() ? nullptr : &*it;
  }
};

TEST_F(IdiomExpansion, AVerbIdiomAsksForTheWordsOfItsMeaning) {
  const ExpansionParams& p = DefaultExpansionParams();
  for (const char* q :
       {"Where did Dev pop the question?", "Where Dev popped the question to Mateo"}) {
    const auto terms = Expanded(q);
    const QueryTerm* propose = Find(terms, "propose");
    ASSERT_NE(propose, nullptr) << q;
    EXPECT_DOUBLE_EQ(propose->weight, p.compound) << q;
    // (It stands for the idiom's own words in the coverage share.)
    EXPECT_NE(propose->covers, 0u) << q;
  }
  const auto grandma = Expanded("When did Ana's grandma pass away?");
  const QueryTerm* die = Find(grandma, "die");
  const QueryTerm* death = Find(grandma, "death");
  ASSERT_NE(die, nullptr);
  ASSERT_NE(death, nullptr);
  EXPECT_DOUBLE_EQ(die->weight, p.compound);
  EXPECT_DOUBLE_EQ(death->weight, p.derivation);
  const auto married = Expanded("When did Ana get married?");
  // ("marry" is the question's own "married".)
  EXPECT_NE(Find(married, "wed"), nullptr);
  // A synonym of several words is not its one word "hook".
  EXPECT_EQ(Find(married, "hook"), nullptr);
}

TEST_F(IdiomExpansion, AnIdiomOfManySensesOrEndingOnAPrepositionAsksForNothing) {
  // Three senses: which one is meant is not known.
  const auto broke = Expanded("When did Ana and Ben break up?");
  EXPECT_EQ(Find(broke, "separate"), nullptr);
  EXPECT_EQ(Find(broke, "crumble"), nullptr);
  // "make for" here is the verb and the question's preposition.
  EXPECT_EQ(Find(Expanded("What did Ana make for the party?"), "head"), nullptr);
  // And none without the setting.
  ExpansionParams off = DefaultExpansionParams();
  off.idiom_senses = 0;
  EXPECT_EQ(Find(Expanded("Where did Dev pop the question?", off), "propose"), nullptr);
}

}  // namespace
}  // namespace engram::retrieval
