#include "index/flat_index.hpp"

#include <algorithm>

#include "core/vector_math.hpp"

namespace engram {

bool FlatIndex::Add(std::int64_t id, const std::vector<float>& v) {
  if (dim_ == 0) dim_ = static_cast<int>(v.size());
  if (static_cast<int>(v.size()) != dim_ || dim_ == 0) return false;
  ids_.push_back(id);
  data_.insert(data_.end(), v.begin(), v.end());
  return true;
}

float FlatIndex::ScoreRow(std::size_t row, const std::vector<float>& q) const {
  return vec::Dot(data_.data() + row * static_cast<std::size_t>(dim_), q.data(), dim_);
}

std::vector<std::pair<std::int64_t, float>> FlatIndex::Search(const std::vector<float>& q,
                                                              int k) const {
  std::vector<std::pair<std::int64_t, float>> out;
  if (static_cast<int>(q.size()) != dim_ || k <= 0 || ids_.empty()) return out;
  std::vector<std::pair<float, std::size_t>> scored(ids_.size());
  for (std::size_t r = 0; r < ids_.size(); ++r) scored[r] = {ScoreRow(r, q), r};
  std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(k), scored.size());
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

}  // namespace engram
