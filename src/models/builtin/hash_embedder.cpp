// HashEmbedder: signed feature hashing of terms, bigrams and character n-grams.
#include "models/builtin/hash_embedder.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <string_view>
#include <vector>

#include "core/text.hpp"

namespace engram {
namespace {

// One seed per feature kind, so a term and an n-gram with the same text land
// in unrelated buckets.
constexpr XXH64_hash_t kTermSeed = 0x7465726dULL;
constexpr XXH64_hash_t kBigramSeed = 0x6269677261ULL;
constexpr XXH64_hash_t kNgramSeed = 0x6e6772616dULL;

// Features with repeats; Accumulate sorts them and counts each distinct one
// (byte order, as std::map<std::string, int> kept them: a fixed summation
// order). Views into the caller's strings: no allocation per feature.
using Counts = std::vector<std::string_view>;

// Start offsets of the code points of s (s is valid UTF-8 from Tokenize),
// plus s.size() at the end.
std::vector<std::size_t> CodePointStarts(std::string_view s) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  starts.push_back(s.size());
  return starts;
}

// `padded` is "<term>" and must outlive `ngrams`.
void AddNgrams(std::string_view padded, Counts& ngrams) {
  const std::vector<std::size_t> cps = CodePointStarts(padded);
  const std::size_t n_cp = cps.size() - 1;
  for (std::size_t n = 3; n <= 4; ++n) {
    for (std::size_t i = 0; i + n <= n_cp; ++i) {
      ngrams.push_back(padded.substr(cps[i], cps[i + n] - cps[i]));
    }
  }
}

void Accumulate(Counts& features, XXH64_hash_t seed, float weight, Vector& v) {
  const auto dim = static_cast<std::uint64_t>(v.size());
  std::sort(features.begin(), features.end());
  for (std::size_t i = 0; i < features.size();) {
    const std::string_view feature = features[i];
    std::size_t j = i + 1;
    while (j < features.size() && features[j] == feature) ++j;
    const int count = static_cast<int>(j - i);
    i = j;
    const XXH64_hash_t h = XXH3_64bits_withSeed(feature.data(), feature.size(), seed);
    const float sign = (h >> 63) != 0 ? -1.0f : 1.0f;
    // (log 1 is exactly 0: most features occur once, and skip the call)
    const float tf = count == 1 ? 1.0f : 1.0f + std::log(static_cast<float>(count));
    v[static_cast<std::size_t>((h & 0xFFFFFFFFULL) % dim)] += sign * weight * tf;
  }
}

}  // namespace

HashEmbedder::HashEmbedder(int dimension)
    : dimension_(dimension < 1 ? kDefaultDimension : dimension) {}

std::string HashEmbedder::Name() const { return "builtin-hash-v1"; }

Vector HashEmbedder::EmbedOne(const std::string& text) const {
  Vector v(static_cast<std::size_t>(dimension_), 0.0f);
  std::vector<std::string> terms = text::Terms(text);
  if (terms.empty()) {  // e.g. "how are you": fall back to every token
    for (const std::string& token : text::Tokenize(text)) terms.push_back(text::Stem(token));
  }
  if (terms.empty()) return v;
  // The texts the features view (reserved: views into them stay valid).
  std::vector<std::string> pairs, padded;
  pairs.reserve(terms.size());
  padded.reserve(terms.size());
  Counts unigrams, bigrams, ngrams;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    unigrams.push_back(terms[i]);
    if (i + 1 < terms.size()) bigrams.push_back(pairs.emplace_back(terms[i] + ' ' + terms[i + 1]));
    AddNgrams(padded.emplace_back("<" + terms[i] + ">"), ngrams);
  }
  Accumulate(unigrams, kTermSeed, kTermWeight, v);
  Accumulate(bigrams, kBigramSeed, kBigramWeight, v);
  Accumulate(ngrams, kNgramSeed, kNgramWeight, v);
  Normalize(v);
  return v;
}

Result<std::vector<Vector>> HashEmbedder::Embed(const std::vector<std::string>& texts) {
  try {
    std::vector<Vector> out;
    out.reserve(texts.size());
    for (const std::string& text : texts) out.push_back(EmbedOne(text));
    return out;
  } catch (const std::exception& e) {
    return Status::Internal(std::string("hash embedder: ") + e.what());
  }
}

}  // namespace engram
