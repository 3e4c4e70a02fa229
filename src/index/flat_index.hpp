// Exact (brute-force) inner-product search over a contiguous matrix of
// normalised vectors. Per-user scopes hold hundreds to tens of thousands of
// vectors, where an exact scan costs microseconds to a millisecond.
// Thread-safety: const methods may run concurrently; Add is not thread-safe.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace engram {

class FlatIndex {
 public:
  explicit FlatIndex(int dim = 0) : dim_(dim) {}

  // Appends a vector of dimension dim() (the first Add fixes dim when 0).
  // Vectors of another dimension are ignored and false is returned.
  bool Add(std::int64_t id, const std::vector<float>& v);
  // The k best (id, score) pairs by inner product, best first.
  std::vector<std::pair<std::int64_t, float>> Search(const std::vector<float>& q, int k) const;
  // Inner product with the vector of row `row`.
  float ScoreRow(std::size_t row, const std::vector<float>& q) const;
  std::size_t size() const { return ids_.size(); }
  int dim() const { return dim_; }
  std::int64_t id(std::size_t row) const { return ids_[row]; }
  std::size_t MemoryBytes() const { return data_.capacity() * sizeof(float) + ids_.capacity() * 8; }

 private:
  int dim_;
  std::vector<std::int64_t> ids_;
  std::vector<float> data_;
};

}  // namespace engram
