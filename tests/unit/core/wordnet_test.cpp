// WordNet parsing and expansion on a tiny database in the Princeton format.
#include "core/wordnet.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/text.hpp"

namespace engram::wordnet {
namespace {

class TinyWordNet : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "engram-wn-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    const std::string header = "  1 This software and database is being provided\n";
    Write("data.noun", header +
          "00000001 06 n 02 instrument 0 musical_instrument 0 002 ~ 00000002 n 0000 ~ 00000003 n 0000 | a device\n"
          "00000002 06 n 01 violin 0 002 @ 00000001 n 0000 ~ 00000004 n 0000 | bowed\n"
          "00000003 06 n 01 clarinet 0 001 @ 00000001 n 0000 | a reed instrument\n"
          "00000004 06 n 01 Stradivarius 0 001 @ 00000002 n 0000 | a violin\n"
          "00000005 18 n 02 child 0 kid 0 001 + 00000006 n 0101 | a young person\n"
          "00000006 28 n 01 childhood 0 001 + 00000005 n 0101 | the time of being a child\n"
          "00000007 04 n 01 instrument 0 000 | a rare second sense\n");
    Write("index.noun", header +
          "child n 1 1 + 1 1 00000005\n"
          "childhood n 1 1 + 1 0 00000006\n"
          "clarinet n 1 1 @ 1 0 00000003\n"
          "instrument n 2 1 ~ 2 1 00000001 00000007\n"
          "kid n 1 1 + 1 0 00000005\n"
          "musical_instrument n 1 1 ~ 1 0 00000001\n"
          "stradivarius n 1 1 @ 1 0 00000004\n"
          "violin n 1 2 @ ~ 1 0 00000002\n");
    Write("noun.exc", "children child\n");
    Write("data.verb", header +
                           "00000001 29 v 01 play 0 000 | to play\n"
                           "00000002 30 v 01 instrument 0 000 | to equip with instruments\n");
    Write("index.verb", header + "instrument v 1 0 1 0 00000002\nplay v 1 0 1 0 00000001\n");
    Write("data.adj", header);
    Write("index.adj", header);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void Write(const std::string& name, const std::string& data) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << data;
  }
  static bool Has(const std::vector<RelatedWord>& words, const std::string& w, Relation rel, int depth) {
    return std::any_of(words.begin(), words.end(), [&](const RelatedWord& r) {
      return r.word == w && r.relation == rel && r.depth == depth;
    });
  }
  std::string dir_;
};

TEST_F(TinyWordNet, MissingDirectoryGivesNull) {
  EXPECT_EQ(WordNet::Load(dir_ + "/nowhere"), nullptr);
}

TEST_F(TinyWordNet, BaseFormsUseRulesAndExceptions) {
  auto wn = WordNet::Load(dir_);
  ASSERT_NE(wn, nullptr);
  EXPECT_EQ(wn->synsets(), 9u);
  auto bases = wn->BaseForms("instruments");
  EXPECT_NE(std::find(bases.begin(), bases.end(), "instrument"), bases.end());
  bases = wn->BaseForms("children");
  EXPECT_NE(std::find(bases.begin(), bases.end(), "child"), bases.end());
  bases = wn->BaseForms("Musical Instruments");
  EXPECT_NE(std::find(bases.begin(), bases.end(), "musical_instrument"), bases.end());
  EXPECT_TRUE(wn->BaseForms("zebra").empty());
  // The exception lists alone, as index terms.
  EXPECT_EQ(wn->IrregularBaseTerms("children"), std::vector<std::string>{"child"});
  EXPECT_TRUE(wn->IrregularBaseTerms("instruments").empty());  // a rule's form, not an exception
  EXPECT_TRUE(wn->IrregularBaseTerms("child").empty());
}

TEST_F(TinyWordNet, ExpandsToSynonymsDerivationsAndHyponyms) {
  auto wn = WordNet::Load(dir_);
  ASSERT_NE(wn, nullptr);
  auto words = wn->Expand("instruments");
  EXPECT_TRUE(Has(words, "musical instrument", Relation::kSynonym, 0));
  EXPECT_TRUE(Has(words, "violin", Relation::kHyponym, 1));
  EXPECT_TRUE(Has(words, "clarinet", Relation::kHyponym, 1));
  EXPECT_TRUE(Has(words, "stradivarius", Relation::kHyponym, 2));
  for (const auto& r : words) EXPECT_NE(r.word, "instrument");

  ExpandOptions shallow;
  shallow.hyponym_depth = 1;
  words = wn->Expand("instrument", shallow);
  EXPECT_FALSE(Has(words, "stradivarius", Relation::kHyponym, 2));
  shallow.max_words = 1;
  EXPECT_EQ(wn->Expand("instrument", shallow).size(), 1u);

  words = wn->Expand("kids");
  EXPECT_TRUE(Has(words, "child", Relation::kSynonym, 0));
  EXPECT_TRUE(Has(words, "childhood", Relation::kDerivation, 0));
  EXPECT_TRUE(wn->Expand("play").empty());  // verbs are off by default
  ExpandOptions verbs;
  verbs.verbs = true;
  EXPECT_TRUE(wn->Expand("play", verbs).empty());  // no relations, no self
  EXPECT_TRUE(wn->Expand("zebra").empty());
  // A verb's form brings no noun senses: "instrumenting" is the verb
  // "instrument" alone, whose noun is another word's business.
  EXPECT_FALSE(wn->Expand("instruments").empty());
  EXPECT_TRUE(wn->Expand("instrumenting").empty());
}

TEST_F(TinyWordNet, WordsShareTheirFirstSense) {
  auto wn = WordNet::Load(dir_);
  ASSERT_NE(wn, nullptr);
  EXPECT_TRUE(wn->ShareFirstSense("kid", "child"));
  EXPECT_TRUE(wn->ShareFirstSense("kids", "children"));  // through their base forms
  EXPECT_TRUE(wn->ShareFirstSense("instrument", "musical_instrument"));
  EXPECT_FALSE(wn->ShareFirstSense("violin", "instrument"));   // a hyponym is not the same sense
  EXPECT_FALSE(wn->ShareFirstSense("child", "childhood"));     // nor a derivation
  EXPECT_FALSE(wn->ShareFirstSense("violin", "clarinet"));     // nor a sibling
  EXPECT_FALSE(wn->ShareFirstSense("zebra", "zebra"));         // unknown words share nothing
  EXPECT_FALSE(wn->ShareFirstSense("play", "instrument"));
}

TEST_F(TinyWordNet, ExpansionIsDeterministic) {
  auto a = WordNet::Load(dir_);
  auto b = WordNet::Load(dir_);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  auto x = a->Expand("instrument"), y = b->Expand("instrument");
  ASSERT_EQ(x.size(), y.size());
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i].word, y[i].word);
}

// Every answer of a database, for comparing two forms of it.
std::string Answers(const WordNet& wn, const std::vector<std::string>& words) {
  std::string out;
  ExpandOptions all;
  all.verbs = all.adjectives = true;
  all.hyponym_depth = 3;
  all.part_depth = 2;
  all.max_parts = 100;
  for (const auto& w : words) {
    out += w + ":";
    for (const auto& b : wn.BaseForms(w)) out += " " + b;
    out += " |";
    for (const auto& t : wn.IrregularBaseTerms(w)) out += " " + t;
    out += " | " + std::to_string(wn.NounClass(w)) + " |";
    const WordNet::SynsetSet kinds = wn.NounsUnder({w}, 6, -1, 1000);
    out += " " + std::to_string(kinds.count) + (wn.FirstNounIn(w, kinds) ? " in" : " out") + " |";
    for (const auto& opt : {ExpandOptions{}, all}) {
      for (const auto& r : wn.Expand(w, opt)) {
        out += " " + r.word + "/" + std::to_string(static_cast<int>(r.relation)) + "/" + std::to_string(r.depth);
      }
      out += " ;";
      for (const auto& r : wn.ExpandTerms(w, opt)) {
        out += " " + r.word + "/" + std::to_string(static_cast<int>(r.relation)) + "/" + std::to_string(r.depth);
      }
    }
    out += "\n";
  }
  return out;
}

// ExpandTerms, written out; and what it must equal: text::Terms of each word
// Expand gives that is one term, in the same order.
std::string TermsOf(const WordNet& wn, const std::string& w) {
  ExpandOptions all;
  all.verbs = all.adjectives = true;
  std::string out;
  for (const auto& r : wn.ExpandTerms(w, all)) out += r.word + "/" + std::to_string(r.depth) + " ";
  return out;
}
std::string TermsOfExpand(const WordNet& wn, const std::string& w) {
  ExpandOptions all;
  all.verbs = all.adjectives = true;
  std::string out;
  for (const auto& r : wn.Expand(w, all)) {
    const auto terms = text::Terms(r.word);
    if (terms.size() == 1) out += terms[0] + "/" + std::to_string(r.depth) + " ";
  }
  return out;
}

// The places within a named place (its part meronyms, to a depth), when
// asked for; a kind of place ("country") names none of its own.
TEST_F(TinyWordNet, ThePlacesWithinANamedPlace) {
  const std::string header = "  1 This software and database is being provided\n";
  Write(
      "data.noun",
      header +
          "00000001 15 n 01 country 0 001 %p 00000005 n 0000 | a nation\n"
          "00000002 15 n 02 Portugal 0 Portuguese_Republic 0 003 @i 00000001 n 0000 %p 00000003 n "
          "0000 "
          "%p 00000004 n 0000 | a republic\n"
          "00000003 15 n 02 Lisbon 0 Lisboa 0 003 @i 00000006 n 0000 #p 00000002 n 0000 %p "
          "00000007 n 0000 | a capital\n"
          "00000004 15 n 01 Porto 0 002 @i 00000006 n 0000 #p 00000002 n 0000 | a port city\n"
          "00000005 15 n 01 province 0 001 #p 00000001 n 0000 | a part of a country\n"
          "00000006 15 n 01 city 0 000 | a town\n"
          "00000007 15 n 01 Alfama 0 002 @i 00000006 n 0000 #p 00000003 n 0000 | an old quarter\n");
  Write("index.noun", header +
                          "alfama n 1 2 @ #p 1 0 00000007\n"
                          "city n 1 0 1 0 00000006\n"
                          "country n 1 1 %p 1 0 00000001\n"
                          "lisbon n 1 3 @ #p %p 1 0 00000003\n"
                          "lisboa n 1 3 @ #p %p 1 0 00000003\n"
                          "portugal n 1 2 @ %p 1 0 00000002\n"
                          "porto n 1 2 @ #p 1 0 00000004\n"
                          "portuguese_republic n 1 2 @ %p 1 0 00000002\n"
                          "province n 1 1 #p 1 0 00000005\n");
  auto wn = WordNet::Load(dir_);
  ASSERT_NE(wn, nullptr);
  const auto plain = wn->Expand("portugal");  // places not asked for
  EXPECT_TRUE(Has(plain, "portuguese republic", Relation::kSynonym, 0));
  EXPECT_TRUE(std::none_of(plain.begin(), plain.end(),
                           [](const RelatedWord& r) { return r.relation == Relation::kPart; }));
  ExpandOptions places;
  places.part_depth = 2;
  places.max_parts = 10;
  auto words = wn->Expand("Portugal", places);
  EXPECT_TRUE(Has(words, "lisbon", Relation::kPart, 1));
  EXPECT_TRUE(Has(words, "lisboa", Relation::kPart, 1));
  EXPECT_TRUE(Has(words, "porto", Relation::kPart, 1));
  EXPECT_TRUE(Has(words, "alfama", Relation::kPart, 2));
  EXPECT_TRUE(
      wn->Expand("country", places).empty());  // a kind: its "province" is no place of its own
  EXPECT_TRUE(wn->Expand("porto", places).empty());
  places.part_depth = 1;
  EXPECT_FALSE(Has(wn->Expand("portugal", places), "alfama", Relation::kPart, 2));
  places.max_parts = 1;
  EXPECT_EQ(wn->Expand("portugal", places).size(), 2u);  // its synonym, and one place
  // The image answers alike.
  ASSERT_TRUE(wn->WriteImage(dir_ + "/wordnet.bin"));
  auto mapped = WordNet::Open(dir_ + "/wordnet.bin");
  ASSERT_NE(mapped, nullptr);
  const std::vector<std::string> all = {"portugal", "lisbon", "country",
                                        "porto",    "alfama", "province"};
  EXPECT_EQ(Answers(*mapped, all), Answers(*wn, all));
}

// A day's abbreviation ("Wed" beside "Wednesday") is no word of its synset:
// "wed" is to marry, and Wednesday is no sense of it nor its synonym; a
// synset of time without a longer name keeps its words, and so does a synset
// of another kind.
TEST_F(TinyWordNet, ADaysAbbreviationIsNoWordOfIt) {
  const std::string header = "  1 This software and database is being provided\n";
  Write("data.noun", header +
                         "00000001 28 n 03 Wednesday 0 Midweek 0 Wed 0 000 | the fourth day\n"
                         "00000002 28 n 02 minute 0 min 0 000 | sixty seconds\n"
                         "00000003 06 n 02 laboratory 0 lab 0 000 | a workplace for science\n");
  Write("index.noun", header +
                          "lab n 1 0 1 0 00000003\n"
                          "laboratory n 1 0 1 0 00000003\n"
                          "midweek n 1 0 1 0 00000001\n"
                          "min n 1 0 1 0 00000002\n"
                          "minute n 1 0 1 0 00000002\n"
                          "wed n 1 0 1 0 00000001\n"
                          "wednesday n 1 0 1 0 00000001\n");
  Write("data.verb", header + "00000001 41 v 02 marry 0 wed 0 000 | take in marriage\n");
  Write("index.verb", header + "marry v 1 0 1 0 00000001\nwed v 1 0 1 0 00000001\n");
  auto wn = WordNet::Load(dir_);
  ASSERT_NE(wn, nullptr);
  const auto day = wn->Expand("wednesday");
  EXPECT_TRUE(Has(day, "midweek", Relation::kSynonym, 0));
  EXPECT_FALSE(
      std::any_of(day.begin(), day.end(), [](const RelatedWord& r) { return r.word == "wed"; }));
  const auto wed = wn->Expand("wed");
  EXPECT_TRUE(wn->IsVerb("wed"));
  EXPECT_EQ(wn->NounClass("wed"), -1);
  EXPECT_FALSE(std::any_of(wed.begin(), wed.end(),
                           [](const RelatedWord& r) { return r.word == "wednesday"; }));
  EXPECT_FALSE(Has(wn->Expand("minute"), "min", Relation::kSynonym, 0));
  EXPECT_TRUE(Has(wn->Expand("laboratory"), "lab", Relation::kSynonym, 0));
  EXPECT_TRUE(IsTimeAbbreviation(28, "sept", {"september", "sep", "sept"}));
  EXPECT_FALSE(IsTimeAbbreviation(28, "midweek", {"wednesday", "midweek", "wed"}));
  EXPECT_FALSE(IsTimeAbbreviation(6, "lab", {"laboratory", "lab"}));
}

TEST_F(TinyWordNet, RelatedWordsAsIndexTerms) {
  auto wn = WordNet::Load(dir_);
  ASSERT_NE(wn, nullptr);
  EXPECT_EQ(TermsOf(*wn, "instrument"), "violin/1 clarinet/1 stradivarius/2 ");  // the collocation left out
  EXPECT_EQ(TermsOf(*wn, "kids"), "child/0 childhood/0 ");
  for (const std::string w : {"instrument", "instruments", "children", "kids", "violin", "play", "zebra", ""}) {
    EXPECT_EQ(TermsOf(*wn, w), TermsOfExpand(*wn, w)) << w;
  }
}

TEST_F(TinyWordNet, ANounsKindIsTheLexicographerFileOfItsFirstSense) {
  auto wn = WordNet::Load(dir_);
  ASSERT_NE(wn, nullptr);
  EXPECT_EQ(wn->NounClass("violin"), 6);
  EXPECT_EQ(wn->NounClass("instruments"), 6);  // the first sense (06), not the second (04)
  EXPECT_EQ(wn->NounClass("children"), 18);    // the exception list's base form
  EXPECT_EQ(wn->NounClass("kids"), 18);
  EXPECT_EQ(wn->NounClass("childhood"), 28);
  EXPECT_EQ(wn->NounClass("play"), -1);  // a verb only
  EXPECT_EQ(wn->NounClass("zebra"), -1);
  EXPECT_EQ(wn->NounClass(""), -1);
}

TEST_F(TinyWordNet, AVerbIsAWordWithAVerbSense) {
  auto wn = WordNet::Load(dir_);
  ASSERT_NE(wn, nullptr);
  EXPECT_TRUE(wn->IsVerb("play"));
  EXPECT_TRUE(wn->IsVerb("plays"));  // a regular form's base
  EXPECT_FALSE(wn->IsVerb("violin"));
  EXPECT_FALSE(wn->IsVerb("zebra"));
  EXPECT_FALSE(wn->IsVerb(""));
}

// What is a kind of a word: its noun senses and everything below them; a
// word is in the class by its most frequent noun sense.
TEST_F(TinyWordNet, NounsUnderAWordAreItsKinds) {
  auto wn = WordNet::Load(dir_);
  ASSERT_NE(wn, nullptr);
  const WordNet::SynsetSet all = wn->NounsUnder({"instrument"}, 6, -1, 1000);
  EXPECT_EQ(all.count, 5u);  // both senses, the violin, the clarinet and the Stradivarius
  EXPECT_TRUE(wn->FirstNounIn("violins", all));
  EXPECT_TRUE(wn->FirstNounIn("stradivarius", all));
  EXPECT_TRUE(wn->FirstNounIn("musical instrument", all));
  EXPECT_FALSE(wn->FirstNounIn("kid", all));
  EXPECT_FALSE(wn->FirstNounIn("play", all));  // a verb only
  EXPECT_FALSE(wn->FirstNounIn("zebra", all));
  // The most frequent sense alone.
  const WordNet::SynsetSet first = wn->NounsUnder({"instruments"}, 1, -1, 1000);
  EXPECT_EQ(first.count, 4u);
  EXPECT_TRUE(wn->FirstNounIn("clarinet", first));
  // A sense with more below it than the limit is left out, not the others.
  const WordNet::SynsetSet narrow = wn->NounsUnder({"instrument"}, 6, -1, 2);
  EXPECT_EQ(narrow.count, 1u);  // the rare second sense alone
  EXPECT_FALSE(wn->FirstNounIn("violin", narrow));
  // Only the senses of one lexicographer file (noun.person).
  EXPECT_TRUE(wn->FirstNounIn("kids", wn->NounsUnder({"child"}, 1, 18, 1000)));
  EXPECT_TRUE(wn->NounsUnder({"child"}, 1, 6, 1000).empty());
  EXPECT_TRUE(wn->NounsUnder({"zebra", "play"}, 6, -1, 1000).empty());
  EXPECT_FALSE(wn->FirstNounIn("violin", WordNet::SynsetSet{}));
}

// Name senses join the database as nouns of their own under their kind:
// first or second sense of their word, in their kind's lexicographer file,
// and in the image as in the parse.
TEST_F(TinyWordNet, NameSensesAreNounsUnderTheirKind) {
  std::vector<names::NameSense> names(4);
  names[0] = {"theremin", {"musical_instrument"}, true, "an electronic instrument played without touch", 1};
  names[1] = {"kid", {"instrument"}, true, "a brand of synthesiser", 2};            // before WordNet's sense
  names[2] = {"clarinet", {"instrument"}, false, "a band of the same name", 3};    // after it
  names[3] = {"busker", {"child", "instrument"}, true, "a toy that is a child's first instrument", 4};  // two kinds
  std::string error;
  auto wn = WordNet::Load(dir_, names, &error);
  ASSERT_NE(wn, nullptr) << error;
  EXPECT_EQ(wn->synsets(), 13u);
  EXPECT_EQ(wn->NounClass("theremin"), 6);  // noun.artifact, the instrument's file
  EXPECT_EQ(wn->NounClass("busker"), 18);   // the main kind's file
  const WordNet::SynsetSet instruments = wn->NounsUnder({"instrument"}, 1, -1, 1000);
  EXPECT_TRUE(wn->FirstNounIn("theremin", instruments));
  EXPECT_TRUE(wn->FirstNounIn("kid", instruments));        // the name's sense comes first
  EXPECT_FALSE(wn->ShareFirstSense("kid", "child"));
  EXPECT_TRUE(wn->FirstNounIn("clarinet", instruments));   // WordNet's own first sense stays first
  EXPECT_TRUE(Has(wn->Expand("instrument"), "theremin", Relation::kHyponym, 1));
  // A name of two kinds is below each.
  EXPECT_TRUE(wn->FirstNounIn("busker", instruments));
  EXPECT_TRUE(wn->FirstNounIn("busker", wn->NounsUnder({"child"}, 1, -1, 1000)));
  EXPECT_FALSE(wn->FirstNounIn("busker", wn->NounsUnder({"violin"}, 1, -1, 1000)));
  ASSERT_TRUE(wn->WriteImage(dir_ + "/wordnet.bin"));
  auto mapped = WordNet::Open(dir_ + "/wordnet.bin");
  ASSERT_NE(mapped, nullptr);
  const std::vector<std::string> words = {"instrument", "theremin", "kid", "kids", "clarinet", "child", "busker"};
  EXPECT_EQ(Answers(*mapped, words), Answers(*wn, words));

  // A kind that is no noun of the database is refused, naming the line.
  names.push_back({"zither", {"instrument", "play"}, true, "a verb is no kind", 9});
  EXPECT_EQ(WordNet::Load(dir_, names, &error), nullptr);
  EXPECT_NE(error.find("line 9"), std::string::npos) << error;
  EXPECT_NE(error.find("\"play\""), std::string::npos) << error;
}

// A related word's first sense: whether the sense it was reached by is the
// most frequent one of the word and of each of its base forms, as written
// ("kids", a band named under instruments, is read as "kid", a child first).
TEST_F(TinyWordNet, ARelatedWordsFirstSenseIsItsBaseFormsToo) {
  std::vector<names::NameSense> names(2);
  names[0] = {"kids", {"instrument"}, true, "a band of the same name", 1};
  names[1] = {"theremin", {"instrument"}, true, "an electronic instrument played without touch", 2};
  std::string error;
  auto wn = WordNet::Load(dir_, names, &error);
  ASSERT_NE(wn, nullptr) << error;
  ExpandOptions o;
  o.first_senses = true;
  auto first = [&](const std::vector<RelatedWord>& words, const std::string& w) {
    const auto it =
        std::find_if(words.begin(), words.end(), [&](const RelatedWord& r) { return r.word == w; });
    EXPECT_NE(it, words.end()) << w;
    return it != words.end() && it->first_sense;
  };
  const auto related = wn->Expand("musical instrument", o);
  EXPECT_TRUE(first(related, "violin"));
  EXPECT_TRUE(first(related, "stradivarius"));  // two levels down
  EXPECT_TRUE(first(related, "theremin"));
  EXPECT_TRUE(first(related, "instrument"));  // a synonym, in its first sense
  EXPECT_FALSE(first(related, "kids"));       // "kid" is a child first
  // Unasked, no word's is known.
  for (const auto& r : wn->Expand("musical instrument")) EXPECT_FALSE(r.first_sense) << r.word;
  ASSERT_TRUE(wn->WriteImage(dir_ + "/wordnet.bin"));
  auto mapped = WordNet::Open(dir_ + "/wordnet.bin");
  ASSERT_NE(mapped, nullptr);
  const auto terms = wn->ExpandTerms("musical instrument", o),
             mapped_terms = mapped->ExpandTerms("musical instrument", o);
  ASSERT_EQ(terms.size(), mapped_terms.size());
  for (std::size_t i = 0; i < terms.size(); ++i) {
    EXPECT_EQ(terms[i].word, mapped_terms[i].word);
    EXPECT_EQ(terms[i].first_sense, mapped_terms[i].first_sense) << terms[i].word;
  }
}

// An "also" entry adds no sense: the word's most frequent noun sense goes
// under its kinds as well, in the image as in the parse.
TEST_F(TinyWordNet, AnAlsoEntryPutsAKnownWordUnderMoreKinds) {
  std::vector<names::NameSense> kinds(1);
  kinds[0] = {"kid", {"instrument"}, false, "a child is an instrument of joy", 1, true, "kinds.tsv"};
  std::string error;
  auto wn = WordNet::Load(dir_, kinds, &error);
  ASSERT_NE(wn, nullptr) << error;
  EXPECT_EQ(wn->synsets(), WordNet::Load(dir_)->synsets());  // no synset of its own
  EXPECT_EQ(wn->NounClass("kid"), 18);  // still a person
  const WordNet::SynsetSet instruments = wn->NounsUnder({"instrument"}, 1, -1, 1000);
  EXPECT_TRUE(wn->FirstNounIn("kid", instruments));
  EXPECT_TRUE(wn->FirstNounIn("children", instruments));  // the sense, whatever word says it
  EXPECT_TRUE(wn->FirstNounIn("violin", instruments));
  EXPECT_FALSE(wn->FirstNounIn("kid", wn->NounsUnder({"violin"}, 1, -1, 1000)));
  ASSERT_TRUE(wn->WriteImage(dir_ + "/wordnet.bin"));
  auto mapped = WordNet::Open(dir_ + "/wordnet.bin");
  ASSERT_NE(mapped, nullptr);
  EXPECT_TRUE(mapped->FirstNounIn("kid", mapped->NounsUnder({"instrument"}, 1, -1, 1000)));
  // A word that is no noun of the database is refused, naming its file and line.
  kinds.push_back({"play", {"instrument"}, false, "a verb", 7, true, "kinds.tsv"});
  EXPECT_EQ(WordNet::Load(dir_, kinds, &error), nullptr);
  EXPECT_NE(error.find("kinds.tsv: line 7"), std::string::npos) << error;
  EXPECT_NE(error.find("\"play\""), std::string::npos) << error;
}

// A synonym ("same") is a word of its kind's most frequent sense, which
// becomes its own most frequent one: what is a kind of that sense is a kind
// of the word, in the image as in the parse, with no synset of its own.
TEST_F(TinyWordNet, ASynonymEntryIsAWordOfItsKind) {
  std::vector<names::NameSense> names(1);
  names[0].name = "axe";
  names[0].kinds = {"instrument"};
  names[0].same = true;
  names[0].gloss = "a guitar, as players say";
  std::string error;
  auto wn = WordNet::Load(dir_, names, &error);
  ASSERT_NE(wn, nullptr) << error;
  EXPECT_EQ(wn->synsets(), WordNet::Load(dir_)->synsets());
  EXPECT_TRUE(wn->ShareFirstSense("axe", "instrument"));
  EXPECT_TRUE(wn->FirstNounIn("violin", wn->NounsUnder({"axe"}, 1, -1, 1000)));
  EXPECT_TRUE(Has(wn->Expand("axe"), "violin", Relation::kHyponym, 1));
  ASSERT_TRUE(wn->WriteImage(dir_ + "/wordnet.bin"));
  auto mapped = WordNet::Open(dir_ + "/wordnet.bin");
  ASSERT_NE(mapped, nullptr);
  EXPECT_TRUE(mapped->FirstNounIn("clarinet", mapped->NounsUnder({"axe"}, 1, -1, 1000)));
}

// A preference makes the word's first noun sense below its kind its most
// frequent one (the others follow), in the image as in the parse, before
// the other entries apply to it.
TEST_F(TinyWordNet, APreferenceMakesALaterSenseTheFirst) {
  // A kind above the rare second sense of "instrument" (file 04, noun.act).
  std::ifstream in(dir_ + "/data.noun");
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string rare = "00000007 04 n 01 instrument 0 000 | a rare second sense\n";
  ASSERT_NE(data.find(rare), std::string::npos);
  data.replace(data.find(rare), rare.size(),
               "00000007 04 n 01 instrument 0 001 @ 00000008 n 0000 | a rare second sense\n"
               "00000008 04 n 01 means 0 001 ~ 00000007 n 0000 | how a thing is done\n");
  Write("data.noun", data);
  std::ifstream idx(dir_ + "/index.noun");
  std::string index((std::istreambuf_iterator<char>(idx)), std::istreambuf_iterator<char>());
  Write("index.noun", index + "means n 1 1 ~ 1 0 00000008\n");
  ASSERT_EQ(WordNet::Load(dir_)->NounClass("instrument"), 6);  // a device first
  std::vector<names::NameSense> prefs(2);
  prefs[0] = {"instrument", {"means"}, false, "the means, not the device", 1, false, "senses.tsv", true};
  prefs[1] = {"instrument", {"child"}, false, "given a kind after the preference", 2, true, "senses.tsv"};
  std::string error;
  auto wn = WordNet::Load(dir_, std::vector<names::NameSense>{prefs[1], prefs[0]}, &error);  // (file order aside)
  ASSERT_NE(wn, nullptr) << error;
  EXPECT_EQ(wn->NounClass("instrument"), 4);
  EXPECT_EQ(wn->NounClass("instruments"), 4);
  EXPECT_TRUE(wn->FirstNounIn("instrument", wn->NounsUnder({"means"}, 1, -1, 1000)));
  EXPECT_TRUE(wn->FirstNounIn("instrument", wn->NounsUnder({"child"}, 1, -1, 1000)));  // the also entry: the new first
  EXPECT_FALSE(wn->FirstNounIn("violin", wn->NounsUnder({"child"}, 1, -1, 1000)));     // not the device's
  EXPECT_TRUE(wn->FirstNounIn("violin", wn->NounsUnder({"instrument"}, 2, -1, 1000)));  // the device is still a sense
  ASSERT_TRUE(wn->WriteImage(dir_ + "/wordnet.bin"));
  auto mapped = WordNet::Open(dir_ + "/wordnet.bin");
  ASSERT_NE(mapped, nullptr);
  EXPECT_EQ(mapped->NounClass("instrument"), 4);
  // Refused, naming file and line: a first sense already below the kind,
  // no sense below it, a kind that is no noun.
  for (const auto& [kind, want] : std::vector<std::pair<std::string, std::string>>{
           {"musical_instrument", "(its first is)"}, {"child", "no later noun sense"}, {"play", "no WordNet noun"}}) {
    std::vector<names::NameSense> bad(1);
    bad[0] = {"instrument", {kind}, false, "x", 5, false, "senses.tsv", true};
    EXPECT_EQ(WordNet::Load(dir_, bad, &error), nullptr) << kind;
    EXPECT_NE(error.find("senses.tsv: line 5"), std::string::npos) << error;
    EXPECT_NE(error.find(want), std::string::npos) << error;
  }
}

TEST_F(TinyWordNet, AWordWithDiacriticsIsTheWordWithout) {
  auto wn = WordNet::Load(dir_);
  ASSERT_NE(wn, nullptr);
  EXPECT_EQ(wn->NounClass("clarinét"), wn->NounClass("clarinet"));
  EXPECT_EQ(wn->NounClass("Clarinét"), 6);
  EXPECT_EQ(wn->Expand("violín").size(), wn->Expand("violin").size());
  EXPECT_FALSE(wn->Expand("violin").empty());
  EXPECT_TRUE(wn->Expand("viölinx").empty());
}

TEST_F(TinyWordNet, TheMappedImageAnswersLikeTheParsedDatabase) {
  auto parsed = WordNet::Load(dir_);
  ASSERT_NE(parsed, nullptr);
  EXPECT_FALSE(parsed->mapped());
  ASSERT_TRUE(parsed->WriteImage(dir_ + "/wordnet.bin"));
  auto mapped = WordNet::Open(dir_ + "/wordnet.bin");
  ASSERT_NE(mapped, nullptr);
  EXPECT_TRUE(mapped->mapped());
  EXPECT_EQ(mapped->synsets(), parsed->synsets());
  const std::vector<std::string> words = {"instrument", "instruments", "children", "kids", "kid", "violin",
                                          "Musical Instruments", "play", "plays", "zebra", ""};
  EXPECT_EQ(Answers(*mapped, words), Answers(*parsed, words));
}

TEST_F(TinyWordNet, ADamagedImageIsRefused) {
  auto parsed = WordNet::Load(dir_);
  ASSERT_NE(parsed, nullptr);
  ASSERT_TRUE(parsed->WriteImage(dir_ + "/wordnet.bin"));
  EXPECT_EQ(WordNet::Open(dir_ + "/nowhere.bin"), nullptr);
  const auto size = std::filesystem::file_size(dir_ + "/wordnet.bin");
  std::filesystem::resize_file(dir_ + "/wordnet.bin", size - 4);  // truncated
  EXPECT_EQ(WordNet::Open(dir_ + "/wordnet.bin"), nullptr);
  Write("wordnet.bin", "not an image at all");
  EXPECT_EQ(WordNet::Open(dir_ + "/wordnet.bin"), nullptr);
}

// The real database (Debian's wordnet-base, when installed): the image made
// from it answers exactly as the parse for thousands of words.
TEST(RealWordNet, TheImageAnswersLikeTheParse) {
  const std::string dir = "/usr/share/wordnet";
  if (!std::filesystem::exists(dir + "/data.noun")) GTEST_SKIP() << "wordnet-base is not installed";
  auto parsed = WordNet::Load(dir);
  ASSERT_NE(parsed, nullptr);
  const std::string image = (std::filesystem::temp_directory_path() / ("engram-wn-image-" + std::to_string(getpid()))).string();
  ASSERT_TRUE(parsed->WriteImage(image));
  auto mapped = WordNet::Open(image);
  std::filesystem::remove(image);
  ASSERT_NE(mapped, nullptr);
  EXPECT_LT(mapped->ImageBytes(), 30u << 20);
  std::vector<std::string> words = {"cities", "went", "children", "martial_arts", "instruments", "kids",
                                    "running", "better", "geese", "painted"};
  std::ifstream index(dir + "/index.noun");
  int n = 0;
  for (std::string line; std::getline(index, line) && n < 40000; ++n) {
    if (line.empty() || line[0] == ' ' || n % 10 != 0) continue;
    words.push_back(line.substr(0, line.find(' ')));
  }
  EXPECT_EQ(Answers(*mapped, words), Answers(*parsed, words));
  // Irregular forms of nouns and verbs, as index terms (stemmed).
  auto bases = [&](const char* w) { return mapped->IrregularBaseTerms(w); };
  auto has = [](const std::vector<std::string>& v, const char* t) { return std::find(v.begin(), v.end(), t) != v.end(); };
  EXPECT_TRUE(has(bases("went"), "go"));
  EXPECT_TRUE(has(bases("made"), "make"));
  EXPECT_TRUE(has(bases("children"), "child"));
  EXPECT_TRUE(has(bases("bought"), "buy"));
  EXPECT_TRUE(has(bases("geese"), "goos"));  // Snowball's stem of "goose"
  EXPECT_TRUE(bases("painted").empty());
  EXPECT_TRUE(bases("garden").empty());
  // What kind of thing a noun names (lexnames: 4 noun.act, 5 noun.animal,
  // 6 noun.artifact, 13 noun.food, 15 noun.location, 18 noun.person).
  EXPECT_EQ(mapped->NounClass("activities"), 4);
  EXPECT_EQ(mapped->NounClass("swimming"), 4);
  EXPECT_EQ(mapped->NounClass("camping"), 4);
  EXPECT_EQ(mapped->NounClass("guitar"), 6);
  EXPECT_EQ(mapped->NounClass("dinosaurs"), 5);
  EXPECT_EQ(mapped->NounClass("sushi"), 13);
  EXPECT_EQ(mapped->NounClass("city"), 15);
  EXPECT_EQ(mapped->NounClass("boston"), 15);
  EXPECT_EQ(mapped->NounClass("nurses"), 18);
  EXPECT_EQ(mapped->NounClass("quickly"), -1);
  // The index terms kept in the image are the tokenizer's and stemmer's.
  for (const auto& w : words) EXPECT_EQ(TermsOfExpand(*mapped, w), TermsOf(*mapped, w)) << w;
}

}  // namespace
}  // namespace engram::wordnet
