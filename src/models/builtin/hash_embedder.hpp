// HashEmbedder: the deterministic, offline built-in embedder. It needs no
// model files: text features are hashed into a fixed-size signed vector.
#pragma once

#include <string>
#include <vector>

#include "models/embedder.hpp"

namespace engram {

// Features of a text (all from text::Terms, i.e. stemmed non-stopword terms;
// when a text has only stopwords, its stemmed tokens are used instead):
//   - each term, weight kTermWeight * (1 + ln tf);
//   - each bigram of consecutive terms, kBigramWeight * (1 + ln tf);
//   - character 3- and 4-grams of each term padded with boundary markers,
//     kNgramWeight * (1 + ln tf), so morphological variants and typos land nearby.
// Each feature is hashed with xxh3 (one seed per feature kind) to a bucket in
// [0, dimension) with a sign taken from the hash's top bit; the sum is
// L2-normalised. The same text gives the same vector on every run and
// platform. Thread-safe: no mutable state.
class HashEmbedder final : public Embedder {
 public:
  static constexpr int kDefaultDimension = 512;
  static constexpr float kTermWeight = 1.0f;
  static constexpr float kBigramWeight = 0.5f;
  static constexpr float kNgramWeight = 0.25f;

  // dimension < 1 is replaced by kDefaultDimension.
  explicit HashEmbedder(int dimension = kDefaultDimension);

  // "builtin-hash-v1" (the dimension is reported separately by Dimension()).
  std::string Name() const override;
  int Dimension() const override { return dimension_; }
  bool IsBuiltin() const override { return true; }
  // One normalised vector per text; an empty or featureless text gives a zero
  // vector. Never fails except on allocation failure (kInternal).
  [[nodiscard]] Result<std::vector<Vector>> Embed(const std::vector<std::string>& texts) override;

  // The vector of one text (same as Embed({text})[0]).
  Vector EmbedOne(const std::string& text) const;

 private:
  int dimension_;
};

}  // namespace engram
