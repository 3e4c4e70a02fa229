#include "index/flat_index.hpp"

#include <algorithm>
#include <cmath>

#include "core/vector_math.hpp"

namespace engram {

namespace {

// Components smaller than this fraction of the vector's RMS count as zero in
// the sign code, so sparse (hashed) vectors do not match on their zeros.
constexpr float kZeroBand = 0.25f;

}  // namespace

void FlatIndex::Encode(const float* v, std::uint64_t* pos, std::uint64_t* neg) const {
  double ss = 0;
  for (int d = 0; d < dim_; ++d) ss += static_cast<double>(v[d]) * v[d];
  const float band = kZeroBand * static_cast<float>(std::sqrt(ss / std::max(1, dim_)));
  for (int w = 0; w < words(); ++w) pos[w] = neg[w] = 0;
  for (int d = 0; d < dim_; ++d) {
    const std::uint64_t bit = std::uint64_t{1} << (d % 64);
    if (v[d] > band) pos[d / 64] |= bit;
    if (v[d] < -band) neg[d / 64] |= bit;
  }
}

bool FlatIndex::Add(std::int64_t id, const std::vector<float>& v) {
  if (dim_ == 0) dim_ = static_cast<int>(v.size());
  if (static_cast<int>(v.size()) != dim_ || dim_ == 0) return false;
  ids_.push_back(id);
  data_.insert(data_.end(), v.begin(), v.end());
  const std::size_t at = codes_.size();
  codes_.resize(at + 2 * static_cast<std::size_t>(words()));
  Encode(v.data(), codes_.data() + at, codes_.data() + at + words());
  return true;
}

void FlatIndex::AssignWithRoom(const FlatIndex& other, std::size_t rows) {
  dim_ = other.dim_;
  const std::size_t d = static_cast<std::size_t>(dim_), w = 2 * static_cast<std::size_t>(words());
  ids_.reserve(rows);
  data_.reserve(rows * d);
  codes_.reserve(rows * w);
  ids_.assign(other.ids_.begin(), other.ids_.end());
  data_.assign(other.data_.begin(), other.data_.end());
  codes_.assign(other.codes_.begin(), other.codes_.end());
}

std::size_t FlatIndex::MemoryBytes() const {
  return data_.capacity() * sizeof(float) + ids_.capacity() * sizeof(std::int64_t) +
         codes_.capacity() * sizeof(std::uint64_t);
}

float FlatIndex::ScoreRow(std::size_t row, const std::vector<float>& q) const {
  return vec::Dot(data_.data() + row * static_cast<std::size_t>(dim_), q.data(), dim_);
}

std::vector<std::pair<std::int64_t, float>> FlatIndex::TopK(
    std::vector<std::pair<float, std::size_t>>& scored, int k) const {
  std::vector<std::pair<std::int64_t, float>> out;
  std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(std::max(k, 0)), scored.size());
  auto better = [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  auto nth = scored.begin() + static_cast<std::ptrdiff_t>(n);
  if (nth != scored.end()) std::nth_element(scored.begin(), nth, scored.end(), better);
  std::sort(scored.begin(), nth, better);
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.emplace_back(ids_[scored[i].second], scored[i].first);
  return out;
}

std::vector<std::pair<std::int64_t, float>> FlatIndex::SearchExact(const std::vector<float>& q,
                                                                   int k) const {
  if (static_cast<int>(q.size()) != dim_ || k <= 0 || ids_.empty()) return {};
  std::vector<std::pair<float, std::size_t>> scored(ids_.size());
  for (std::size_t r = 0; r < ids_.size(); ++r) scored[r] = {ScoreRow(r, q), r};
  return TopK(scored, k);
}

std::vector<std::pair<std::int64_t, float>> FlatIndex::Search(const std::vector<float>& q,
                                                              int k) const {
  if (ids_.size() < kApproxMinRows) return SearchExact(q, k);
  if (static_cast<int>(q.size()) != dim_ || k <= 0) return {};
  const int w = words();
  std::vector<std::uint64_t> qc(2 * static_cast<std::size_t>(w));
  Encode(q.data(), qc.data(), qc.data() + w);
  // Stage 1: code similarity, agreements minus disagreements of signs.
  std::vector<float> code_scores(ids_.size());
  vec::CodeScores(qc.data(), codes_.data(), ids_.size(), w, code_scores.data());
  std::vector<std::pair<float, std::size_t>> coarse(ids_.size());
  for (std::size_t r = 0; r < ids_.size(); ++r) coarse[r] = {code_scores[r], r};
  std::size_t keep = std::min(ids_.size(), static_cast<std::size_t>(std::max(kMinCandidates, kRerank * k)));
  auto better = [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::nth_element(coarse.begin(), coarse.begin() + static_cast<std::ptrdiff_t>(keep), coarse.end(), better);
  coarse.resize(keep);
  // Stage 2: exact scores of the candidates.
  for (auto& [score, row] : coarse) score = ScoreRow(row, q);
  return TopK(coarse, k);
}

}  // namespace engram
