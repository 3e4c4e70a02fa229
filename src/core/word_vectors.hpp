// Built-in word vectors: a meaning for words without a model. One int8 vector
// (256 dimensions) per index term (text::Terms: the engine's stem of a WordNet
// lemma), made at build time from Debian's WordNet by
// tools/wordvec/build_word_vectors.cpp (synsets, hypernyms, hyponyms,
// derivations, domains and glosses, random-indexed, then mixed with the mean
// of their gloss words): "vegetarian" lies near "diet" and "meat", "nurse"
// near "care" and "treatment", "vacation" near "holiday". With each term goes
// its WordNet neighbourhood (synonyms, hypernyms, related, part and gloss
// words: "jazz" -> music, "tea" -> beverage, "wrist" -> arm), which fact search uses to expand the
// memories' words.
//
// The file (engram-words.bin, about 22 MB) is memory-mapped read-only, so
// every process shares the same pages and the cost is what the page cache
// holds; opening it is a header check (no parsing, no allocation). Lookups
// are a binary search over the sorted terms (then over the irregular forms).
// Immutable: thread-safe. No exceptions escape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace engram::wordvec {

// A text vector quantised to int8 (the snapshots of the fact store keep these).
struct QuantizedVector {
  std::vector<std::int8_t> codes;
  float scale = 0;  // codes * scale has unit length
  bool empty() const { return codes.empty(); }
};
QuantizedVector Quantize(const std::vector<float>& unit);
// Inner product of a float vector and a quantised one (0 when the sizes differ).
float Dot(const std::vector<float>& a, const QuantizedVector& b);
// Inner product of two quantised vectors (0 when the sizes differ): integer
// products, which vectorise.
float Dot(const QuantizedVector& a, const QuantizedVector& b);

class WordVectors {
 public:
  ~WordVectors();
  WordVectors(const WordVectors&) = delete;
  WordVectors& operator=(const WordVectors&) = delete;

  // Maps a vector file; nullptr when it is missing or not a valid file.
  static std::unique_ptr<WordVectors> Open(const std::string& path);
  // The process's vectors, opened on the first call: $ENGRAM_WORD_VECTORS when
  // set (an empty value or "off" disables them), else engram-words.bin beside
  // the executable, else ../share/engram/engram-words.bin from it. nullptr
  // when none is found: callers then work without meaning.
  static const WordVectors* Default();
  // Where Default() found its file ("" when none).
  static std::string DefaultPath();

  int dim() const { return dim_; }
  std::size_t terms() const { return count_; }
  std::size_t file_bytes() const { return size_; }

  // Index of an index term, or -1. An irregular form of WordNet's exception
  // lists whose stem is no index term finds its base form's ("children" ->
  // the index of "child", "went" -> "go").
  long Find(std::string_view term) const;
  // The indexes an index term stands for, appended to `out`: Find's, or for a
  // hyphenated compound the vectors do not know, each known part's ("low-carb"
  // -> low, carb; "e-readers" -> reader); none when nothing is known. A
  // number in figures ("42", "2027", "40th", the "42" of "42-kilometre";
  // not a name such as "1password") stands for none: every number is near
  // every other in the vectors, so a question's "42" would be near any
  // memory that says a number ("50 mg"); figures are matched as written.
  void Lookup(std::string_view term, std::vector<long>& out) const;
  // The term's weight (generic words with many senses count less), in (0, 1].
  float Weight(long index) const;
  // Adds weight * the term's unit vector to `acc` (size dim()).
  void AddTo(long index, float weight, std::vector<float>& acc) const;

  // The weighted mean of the unit vectors of the text's known terms (each term
  // once), normalised to unit length; empty when the text has no known term.
  std::vector<float> TextVector(std::string_view text) const;
  // The same with each term's weight multiplied by idf(term) (e.g. the
  // inverse document frequency of the term among a user's memories).
  std::vector<float> TextVector(std::string_view text, const std::function<float(const std::string&)>& idf) const;
  // Cosine of two words' vectors (their index terms); 0 when one is unknown.
  float Similarity(std::string_view a, std::string_view b) const;

  // The index term at `index` ("" when out of range).
  std::string_view Term(long index) const;
  // The term's WordNet neighbourhood, for document expansion: the other words
  // of its three most frequent senses, their hypernyms' words up to four levels
  // (decayed), related words, what it is part of and its parts, and
  // first-sense gloss words, as (index, weight in
  // (0, 1]), strongest first, at most 64; empty when the file has none.
  std::vector<std::pair<long, float>> Expansions(long index) const;
  // The weight of `neighbour` in the expansions of `index` (0 when absent); no allocation.
  float ExpansionWeight(long index, long neighbour) const;
  // Document expansion: the share, by `query_weights`, of `query_terms`
  // (indexes; -1: unknown, skipped) that the WordNet neighbourhoods of the
  // words `own` contain, each counted by its strongest expansion weight
  // ("music" for a text holding "jazz"); 0 without expansions.
  double ExpansionMatch(const std::vector<long>& query_terms, const std::vector<double>& query_weights,
                        const std::vector<long>& own) const;
  // The indexes the index terms `terms` stand for (Lookup of each), each
  // once, in order: a text's known words.
  std::vector<long> KnownWords(const std::vector<std::string>& terms) const;
  // The text with the names written apart that are one index term here
  // written whole ("I run Home Assistant on a Raspberry Pi" -> "... homeassistant
  // ... raspberrypi": text::JoinNamesWrittenApart), for its meaning: the names
  // of tools/wordvec/names.tsv are written whole, and their parts alone mean
  // something else (a raspberry, pi).
  std::string JoinNames(std::string_view text) const;
  // A memory's text as its meaning is read: "the user" is the person, not a
  // word (text::UserAsPronoun), and a name written apart is the name
  // (JoinNames). What a fact's vector and known words are made from.
  std::string Meant(std::string_view text) const;
  // The weighted mean of the unit vectors of the words `known` (indexes,
  // each counted once as given), normalised to unit length: TextVector of a
  // text from its KnownWords(text::Terms(text)); empty when `known` is.
  std::vector<float> MeanOf(const std::vector<long>& known) const;
  // Whether the file carries expansions.
  bool has_expansions() const { return exp_count_ > 0; }
  // The strongest weight in the WordNet neighbourhood of `index` of each of
  // `wanted` (n indexes; -1: none), as ExpansionMatch weighs it, written to
  // best[k] (0 when absent).
  void ExpansionWeights(long index, const long* wanted, std::size_t n, float* best) const;

 private:
  WordVectors() = default;
  // The low eight bits of the wanted indexes (-1: none) as a 256-bit mask:
  // most neighbours miss them.
  static void LowBits(const long* wanted, std::size_t n, std::uint64_t mask[4]);
  // best[k] raised to the weight of wanted[k] in the neighbourhood of `index`.
  void MaxExpansionWeights(long index, const long* wanted, std::size_t n,
                           const std::uint64_t mask[4], float* best) const;
  const std::uint8_t* base_ = nullptr;
  std::size_t size_ = 0;
  int dim_ = 0;
  std::size_t count_ = 0;
  const std::uint32_t* offsets_ = nullptr;
  const char* strings_ = nullptr;
  const float* weights_ = nullptr;
  const float* scales_ = nullptr;
  const std::int8_t* codes_ = nullptr;
  std::size_t exp_count_ = 0;
  const std::uint32_t* exp_offsets_ = nullptr;  // count + 1
  const std::uint32_t* exp_entries_ = nullptr;  // neighbour index << 8 | weight * 255
  std::size_t alias_count_ = 0;                  // irregular forms
  const std::uint32_t* alias_offsets_ = nullptr;  // count + 1, into alias_strings_
  const std::uint32_t* alias_targets_ = nullptr;  // the base form's term index
  const char* alias_strings_ = nullptr;
};

// Document expansion of many texts against one query (dialogue retrieval
// scores every message for a question whose words say little): what
// WordVectors::ExpansionMatch gives, each distinct word's neighbourhood
// searched once per matcher instead of once per text holding it. Not
// thread-safe (its cache grows as texts are matched); the vectors must
// outlive it.
class ExpansionMatcher {
 public:
  ExpansionMatcher(const WordVectors& words, std::vector<long> query_terms,
                   std::vector<double> query_weights);
  // == words.ExpansionMatch(query_terms, query_weights, own).
  double Match(const std::vector<long>& own);

 private:
  // The row of a word in `rows_` (n_ floats: its weight for each query term),
  // nullptr when its neighbourhood holds none of them (most words).
  const float* Row(long index);
  const WordVectors& words_;
  std::vector<long> terms_;
  std::vector<double> weights_;
  double all_ = 0.0;
  std::size_t n_ = 0;
  // Per word index: 0 not yet searched, 1 none of the terms, r + 2 its row
  // r (an array, not a map: the matcher looks up every word of thousands
  // of messages).
  std::vector<std::uint32_t> row_of_;
  std::vector<float> rows_;
  std::vector<float> best_;
};

}  // namespace engram::wordvec
