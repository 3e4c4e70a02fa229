// Inner-product search over a contiguous matrix of normalised vectors.
//
// Below kApproxMinRows rows the search is an exact scan (per-user scopes hold
// hundreds to tens of thousands of vectors, where a scan costs microseconds to
// a millisecond). From kApproxMinRows on, a two-stage search runs: every row
// also keeps a ternary sign code (positive and negative bit masks), candidates
// are chosen by the code similarity (popcounts: about 1/60 of the cost of a
// float scan) and the best kRerank * k of them are re-scored exactly. Codes
// are built as rows are added: there is no index build step.
// Thread-safety: const methods may run concurrently; Add is not thread-safe.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace engram {

class FlatIndex {
 public:
  static constexpr std::size_t kApproxMinRows = 20000;
  static constexpr int kRerank = 12;            // candidates re-scored per result wanted
  static constexpr int kMinCandidates = 2000;

  explicit FlatIndex(int dim = 0) : dim_(dim) {}

  // Appends a vector of dimension dim() (the first Add fixes dim when 0).
  // Vectors of another dimension are ignored and false is returned.
  bool Add(std::int64_t id, const std::vector<float>& v);
  // Copies `other` (same rows, codes and dimension) with room for `rows`
  // rows in all, so that appending up to that many rows never reallocates.
  void AssignWithRoom(const FlatIndex& other, std::size_t rows);
  // The k best (id, score) pairs by inner product, best first; approximate
  // from kApproxMinRows rows on (see above).
  std::vector<std::pair<std::int64_t, float>> Search(const std::vector<float>& q, int k) const;
  // Always exact (for measuring the approximate search).
  std::vector<std::pair<std::int64_t, float>> SearchExact(const std::vector<float>& q, int k) const;
  // Inner product with the vector of row `row`.
  float ScoreRow(std::size_t row, const std::vector<float>& q) const;
  std::size_t size() const { return ids_.size(); }
  int dim() const { return dim_; }
  std::int64_t id(std::size_t row) const { return ids_[row]; }
  std::size_t MemoryBytes() const;

 private:
  int words() const { return (dim_ + 63) / 64; }
  void Encode(const float* v, std::uint64_t* pos, std::uint64_t* neg) const;
  std::vector<std::pair<std::int64_t, float>> TopK(std::vector<std::pair<float, std::size_t>>& scored,
                                                   int k) const;

  int dim_;
  std::vector<std::int64_t> ids_;
  std::vector<float> data_;
  std::vector<std::uint64_t> codes_;  // per row: words() positive masks, then words() negative
};

}  // namespace engram
