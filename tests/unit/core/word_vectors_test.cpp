// The built-in word vectors (made at build time from WordNet, beside the test
// binaries): words of one topic lie nearer than words of different topics,
// terms carry their WordNet neighbourhood, unknown words have no vector, and a
// damaged file is refused.
#include "core/word_vectors.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/text.hpp"
#include "testing/temp_dir.hpp"

namespace engram::wordvec {
namespace {

const WordVectors* Words() { return WordVectors::Default(); }

TEST(WordVectors, WordsOfATopicLieNearer) {
  ASSERT_TRUE(Words()) << "no built-in word vectors: the build makes them from WordNet (wordnet-base, installed by scripts/bootstrap)";
  const WordVectors& w = *Words();
  EXPECT_EQ(w.dim(), 256);
  EXPECT_GT(w.terms(), 30000u);
  EXPECT_GT(w.Similarity("vegetarian", "diet"), w.Similarity("vegetarian", "keyboard"));
  EXPECT_GT(w.Similarity("vegetarian", "meat"), w.Similarity("vegetarian", "salary"));
  EXPECT_GT(w.Similarity("nurse", "hospital care"), w.Similarity("nurse", "guitar"));
  EXPECT_GT(w.Similarity("vacation", "holiday"), 0.5f);
  EXPECT_GT(w.Similarity("car", "automobile"), 0.8f);
  EXPECT_NEAR(w.Similarity("daughters", "daughter"), 1.0f, 1e-3f);  // one index term
}

// The weight of `neighbour` among the expansions of `word` (0 when absent).
float Expands(const WordVectors& w, const std::string& word, const std::string& neighbour) {
  const long i = w.Find(word), j = w.Find(neighbour);
  if (i < 0 || j < 0) return -1.0f;
  float via_list = 0.0f;
  for (const auto& [k, weight] : w.Expansions(i)) {
    if (k == j) via_list = weight;
  }
  EXPECT_EQ(via_list, w.ExpansionWeight(i, j)) << word << " -> " << neighbour;
  return via_list;
}

TEST(WordVectors, TermsCarryTheirWordNetNeighbourhood) {
  ASSERT_TRUE(Words()) << "no built-in word vectors: the build makes them from WordNet (wordnet-base, installed by scripts/bootstrap)";
  const WordVectors& w = *Words();
  ASSERT_TRUE(w.has_expansions());
  // Index terms are stems (text::Terms): "beverage" -> "beverag".
  EXPECT_GT(Expands(w, "tea", "beverag"), 0.5f);   // a direct hypernym
  EXPECT_GT(Expands(w, "jazz", "music"), 0.3f);     // three levels up
  EXPECT_GT(Expands(w, "wife", "spous"), 0.5f);
  EXPECT_GT(Expands(w, "wrist", "arm"), 0.5f);       // what it is part of
  EXPECT_GT(Expands(w, "saturday", "weekend"), 0.5f);
  EXPECT_GT(Expands(w, "famili", "sibl"), 0.2f);     // its members (second sense: 1/2 x 0.5)
  // The words of a synset's multi-word synonyms ("tooth doctor", "dental
  // practitioner"), weaker than a synonym.
  EXPECT_GT(Expands(w, "dentist", "tooth"), 0.2f);
  EXPECT_GT(Expands(w, "dentist", "dental"), 0.2f);
  EXPECT_LT(Expands(w, "dentist", "dental"), 0.5f);
  EXPECT_EQ(Expands(w, "tea", "keyboard"), 0.0f);
  EXPECT_EQ(Expands(w, "tea", "tea"), 0.0f);        // never the term itself
  // A stem's lemmas weigh by how often each is used: the verb "prefer"
  // (tagged 39 times in SemCor) brings its own neighbours whole, the
  // adjective "preferred" (once) little of its synonyms ("pet").
  EXPECT_GT(Expands(w, "prefer", "like"), 0.7f);
  EXPECT_GT(Expands(w, "prefer", "pet"), 0.0f);
  EXPECT_LT(Expands(w, "prefer", "pet"), 0.5f);
  const long tea = w.Find("tea");
  const auto list = w.Expansions(tea);
  ASSERT_FALSE(list.empty());
  EXPECT_LE(list.size(), 64u);
  for (std::size_t k = 0; k < list.size(); ++k) {
    EXPECT_GT(list[k].second, 0.0f);
    EXPECT_LE(list[k].second, 1.0f);
    EXPECT_FALSE(w.Term(list[k].first).empty());
    if (k > 0) {
      EXPECT_GE(list[k - 1].second, list[k].second);  // strongest first
    }
  }
  EXPECT_EQ(w.Term(tea), "tea");
  EXPECT_TRUE(w.Term(-1).empty());
  EXPECT_TRUE(w.Expansions(-1).empty());
  EXPECT_EQ(w.ExpansionWeight(tea, -1), 0.0f);
}

// A name of the names file written apart means the name, not its parts (a
// raspberry is a fruit, pi a number).
// A matcher of one query against many texts gives what ExpansionMatch gives
// for each, whatever texts it has seen before (its cache of words' weights
// is the query's): texts of several words, repeated words, a text holding
// a query word itself (not looked for in the others' neighbourhoods),
// unknown indexes.
// The inner product of floats and codes (by AVX2 where the processor has
// it) is what a plain sum in doubles gives, within float rounding, for any
// length.
TEST(WordVectors, ADotOfFloatsAndCodesIsThePlainSum) {
  for (const std::size_t dim :
       {std::size_t{256}, std::size_t{37}, std::size_t{16}, std::size_t{5}}) {
    std::vector<float> a(dim), b(dim);
    for (std::size_t i = 0; i < dim; ++i) {
      a[i] = std::sin(static_cast<float>(i) * 0.37f + 0.1f);
      b[i] = std::cos(static_cast<float>(i) * 0.91f - 0.3f);
    }
    const QuantizedVector q = Quantize(b);
    double plain = 0;
    for (std::size_t i = 0; i < dim; ++i) plain += static_cast<double>(a[i]) * q.codes[i];
    plain *= q.scale;
    EXPECT_NEAR(Dot(a, q), plain, 1e-4 * (1 + std::abs(plain))) << dim;
  }
  EXPECT_EQ(Dot(std::vector<float>(4, 1.0f), Quantize(std::vector<float>(5, 0.5f))), 0.0f);
}

TEST(WordVectors, AnExpansionMatcherGivesWhatExpansionMatchGives) {
  ASSERT_TRUE(Words()) << "no built-in word vectors: the build makes them from WordNet "
                          "(wordnet-base, installed by scripts/bootstrap)";
  const WordVectors& w = *Words();
  auto known = [&](const std::string& text) { return w.KnownWords(text::Terms(text)); };
  const std::vector<long> query = known("What music and which dish did she like?");
  ASSERT_GE(query.size(), 3u);
  std::vector<long> terms = query;
  terms.push_back(-1);  // an unknown query word
  std::vector<double> weights;
  for (std::size_t k = 0; k < terms.size(); ++k)
    weights.push_back(0.5 + 0.25 * static_cast<double>(k));
  ExpansionMatcher matcher(w, terms, weights);
  const std::vector<std::string> texts = {
      "We listened to jazz all night",  "I cooked a curry with rice",
      "jazz and curry, then more jazz", "The music was loud and the curry hot",
      "Nothing about either here",      "a saxophone solo and a stew",
      "We listened to jazz all night"};
  bool some = false;
  for (const auto& t : texts) {
    std::vector<long> own = known(t);
    const double want = w.ExpansionMatch(terms, weights, own);
    EXPECT_EQ(matcher.Match(own), want) << t;
    some = some || want > 0;
    own.push_back(-5);
    own.push_back(static_cast<long>(w.terms()) + 3);
    EXPECT_EQ(matcher.Match(own), w.ExpansionMatch(terms, weights, own)) << t;
  }
  EXPECT_TRUE(some);
  EXPECT_EQ(matcher.Match({}), 0.0);
}

TEST(WordVectors, ANameWrittenApartIsTheName) {
  ASSERT_TRUE(Words()) << "no built-in word vectors: the build makes them from WordNet "
                          "(wordnet-base, installed by scripts/bootstrap)";
  const WordVectors& w = *Words();
  EXPECT_EQ(w.JoinNames("I run Home Assistant on a Raspberry Pi 4"),
            "I run homeassistant on a raspberrypi 4");
  EXPECT_EQ(w.JoinNames("We ate a raspberry pie"), "We ate a raspberry pie");
  EXPECT_GT(w.Similarity(w.JoinNames("Raspberry Pi"), "computer"),
            w.Similarity("raspberry", "computer") + 0.1f);
}

TEST(WordVectors, TextsWithoutKnownWordsHaveNoVector) {
  ASSERT_TRUE(Words()) << "no built-in word vectors: the build makes them from WordNet (wordnet-base, installed by scripts/bootstrap)";
  EXPECT_TRUE(Words()->TextVector("").empty());
  EXPECT_TRUE(Words()->TextVector("qwzx vbnq").empty());
  EXPECT_TRUE(Words()->TextVector("the of and").empty());  // stopwords only
  auto v = Words()->TextVector("Priya is vegetarian");  // the unknown name is left out
  ASSERT_EQ(v.size(), 256u);
  double ss = 0;
  for (float x : v) ss += static_cast<double>(x) * x;
  EXPECT_NEAR(ss, 1.0, 1e-4);
  EXPECT_EQ(Words()->Similarity("qwzx", "car"), 0.0f);
}

TEST(WordVectors, QuantisedVectorsKeepTheCosine) {
  ASSERT_TRUE(Words()) << "no built-in word vectors: the build makes them from WordNet (wordnet-base, installed by scripts/bootstrap)";
  auto a = Words()->TextVector("my sister is a nurse in Toronto");
  auto b = Words()->TextVector("what does her sibling do for work");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  float exact = 0;
  for (std::size_t i = 0; i < a.size(); ++i) exact += a[i] * b[i];
  EXPECT_NEAR(Dot(a, Quantize(b)), exact, 0.01f);
  EXPECT_NEAR(Dot(a, Quantize(a)), 1.0f, 0.01f);
  EXPECT_EQ(Dot(a, QuantizedVector{}), 0.0f);
  // Both sides quantised (a question's vector against a memory's).
  EXPECT_NEAR(Dot(Quantize(a), Quantize(b)), exact, 0.02f);
  EXPECT_NEAR(Dot(Quantize(a), Quantize(a)), 1.0f, 0.01f);
  EXPECT_EQ(Dot(Quantize(a), QuantizedVector{}), 0.0f);
  std::vector<float> odd(37, 0.0f);  // a length that is no multiple of the blocks
  odd[36] = 1.0f;
  EXPECT_NEAR(Dot(Quantize(odd), Quantize(odd)), 1.0f, 1e-6f);
}

TEST(WordVectors, IrregularFormsFindTheirBaseForm) {
  ASSERT_TRUE(Words()) << "no built-in word vectors: the build makes them from WordNet (wordnet-base, installed by scripts/bootstrap)";
  const WordVectors& w = *Words();
  // Index terms are stems (text::Terms); these forms' stems are no index term
  // of their own: they find their base form's.
  for (const auto& [form, base] : {std::pair{"children", "child"}, {"went", "go"}, {"mice", "mouse"}, {"women", "woman"}}) {
    const std::string f = text::Terms(form).at(0), b = text::Terms(base).at(0);
    const long i = w.Find(b);
    ASSERT_GE(i, 0) << base;
    EXPECT_EQ(w.Find(f), i) << form;
    EXPECT_EQ(w.Term(w.Find(f)), b);
    EXPECT_NEAR(w.Similarity(form, base), 1.0f, 1e-3f) << form;
  }
  EXPECT_EQ(w.Find("qwzx"), -1);
}

TEST(WordVectors, UnknownCompoundsStandForTheirParts) {
  ASSERT_TRUE(Words()) << "no built-in word vectors: the build makes them from WordNet (wordnet-base, installed by scripts/bootstrap)";
  const WordVectors& w = *Words();
  auto lookup = [&](const std::string& word) {
    std::vector<long> out;
    w.Lookup(text::Terms(word).at(0), out);
    return out;
  };
  auto find = [&](const std::string& word) { return w.Find(text::Terms(word).at(0)); };
  ASSERT_EQ(find("dog-sitter"), -1);
  EXPECT_EQ(lookup("dog-sitter"), (std::vector<long>{find("dog"), find("sitter")}));
  EXPECT_NEAR(w.Similarity("dog-sitter", "dog sitter"), 1.0f, 1e-3f);
  ASSERT_GE(find("part-time"), 0);  // a compound WordNet holds stays whole
  EXPECT_EQ(lookup("part-time"), std::vector<long>{find("part-time")});
  EXPECT_EQ(lookup("car"), std::vector<long>{find("car")});
  EXPECT_EQ(lookup("children"), std::vector<long>{find("child")});
  EXPECT_TRUE(lookup("qwzx-vbnq").empty());
  EXPECT_TRUE(lookup("qwzx").empty());
}

// A number in figures has no meaning here: numbers lie near one another, so
// "42" would be near any text saying a number. A name that starts with one
// keeps its vector.
TEST(WordVectors, FiguresStandForNoWord) {
  ASSERT_TRUE(Words()) << "no built-in word vectors: the build makes them from WordNet "
                          "(wordnet-base, installed by scripts/bootstrap)";
  const WordVectors& w = *Words();
  auto lookup = [&](const std::string& word) {
    std::vector<long> out;
    w.Lookup(text::Terms(word).at(0), out);
    return out;
  };
  for (const char* figure : {"42", "2027", "40th", "1st", "50"})
    EXPECT_TRUE(lookup(figure).empty()) << figure;
  EXPECT_EQ(lookup("42-kilometre"), std::vector<long>{w.Find(text::Terms("kilometre").at(0))});
  EXPECT_FLOAT_EQ(w.Similarity("42", "50"), 0.0f);
  EXPECT_TRUE(w.TextVector("18 90 2027").empty());
  EXPECT_FALSE(lookup("forty").empty());      // a number's word is a word
  EXPECT_FALSE(lookup("1password").empty());  // a name (names.tsv)
}

TEST(WordVectors, WordsWithDiacriticsAreTheWordsWithout) {
  ASSERT_TRUE(Words()) << "no built-in word vectors: the build makes them from WordNet (wordnet-base, installed by scripts/bootstrap)";
  const WordVectors& w = *Words();
  auto find = [&](const std::string& word) { return w.Find(text::Terms(word).at(0)); };
  ASSERT_GE(find("cafe"), 0);
  EXPECT_EQ(find("café"), find("cafe"));
  EXPECT_EQ(find("Café"), find("cafe"));
  EXPECT_EQ(find("résumé"), find("resume"));
  EXPECT_EQ(find("jalapeño"), find("jalapeno"));
  EXPECT_NEAR(w.Similarity("a café near the station", "a cafe near the station"), 1.0f, 1e-3f);
  EXPECT_EQ(find("qwzé"), -1);
}

// A file of two terms ("bar", "foo"; dim 4, no expansions) and the given
// irregular forms (sorted; each with its target index), raw offsets allowed.
std::string TinyFile(const std::vector<std::pair<std::string, std::uint32_t>>& aliases,
                     std::vector<std::uint32_t> alias_offsets = {}) {
  std::string out = "ENGWVEC2";
  auto u32 = [&](std::uint32_t x) { out.append(reinterpret_cast<const char*>(&x), 4); };
  auto f32 = [&](float x) { out.append(reinterpret_cast<const char*>(&x), 4); };
  std::string alias_strings;
  if (alias_offsets.empty()) {
    alias_offsets.push_back(0);
    for (const auto& [form, target] : aliases) {
      alias_strings += form;
      alias_offsets.push_back(static_cast<std::uint32_t>(alias_strings.size()));
    }
  } else {
    for (const auto& [form, target] : aliases) alias_strings += form;
  }
  while (alias_strings.size() % 4) alias_strings.push_back('\0');
  for (std::uint32_t x : {4u, 2u, 8u, 0u, static_cast<std::uint32_t>(aliases.size()),
                          static_cast<std::uint32_t>(alias_strings.size())})
    u32(x);
  for (std::uint32_t x : {0u, 3u, 6u}) u32(x);  // term offsets
  out.append("barfoo\0\0", 8);
  f32(1.0f), f32(1.0f);  // weights
  f32(0.5f), f32(0.5f);  // scales: codes * scale has unit length
  for (int k = 0; k < 8; ++k) out.push_back(k < 4 ? 1 : (k % 2 ? 1 : -1));
  if (!aliases.empty()) {
    for (std::uint32_t x : alias_offsets) u32(x);
    for (const auto& [form, target] : aliases) u32(target);
    out += alias_strings;
  }
  return out;
}

TEST(WordVectors, IrregularFormTablesAreChecked) {
  testing::TempDir dir;
  auto open = [&](const std::string& bytes) {
    const std::string path = dir.File("tiny.bin");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return WordVectors::Open(path);
  };
  auto plain = open(TinyFile({}));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->Find("foo"), 1);
  EXPECT_EQ(plain->Find("baz"), -1);
  auto w = open(TinyFile({{"baz", 1}, {"qux", 7}}));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->Find("bar"), 0);
  EXPECT_EQ(w->Find("baz"), 1);   // -> "foo"
  EXPECT_EQ(w->Find("qux"), -1);  // a target out of range is no term
  EXPECT_EQ(w->Find("zzz"), -1);
  EXPECT_NEAR(w->Similarity("baz", "foo"), 1.0f, 1e-6f);
  // Offsets out of order or past the strings; a cut table.
  EXPECT_EQ(open(TinyFile({{"baz", 1}, {"qux", 1}}, {0, 4, 3})), nullptr);
  EXPECT_EQ(open(TinyFile({{"baz", 1}, {"qux", 1}}, {0, 3, 64})), nullptr);
  const std::string whole = TinyFile({{"baz", 1}});
  EXPECT_EQ(open(whole.substr(0, whole.size() - 4)), nullptr);
}

TEST(WordVectors, DamagedOrMissingFilesAreRefused) {
  testing::TempDir dir;
  EXPECT_EQ(WordVectors::Open(dir.File("missing.bin")), nullptr);
  {
    std::ofstream out(dir.File("junk.bin"), std::ios::binary);
    out << "not a vector file at all, just some bytes";
  }
  EXPECT_EQ(WordVectors::Open(dir.File("junk.bin")), nullptr);
  if (!Words()) return;
  // A truncated copy of the real file.
  std::ifstream in(WordVectors::DefaultPath(), std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  {
    std::ofstream out(dir.File("cut.bin"), std::ios::binary);
    out.write(head.data(), in.gcount());
  }
  EXPECT_EQ(WordVectors::Open(dir.File("cut.bin")), nullptr);
}

}  // namespace
}  // namespace engram::wordvec
