#include "index/flat_index.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

namespace engram {
namespace {

std::vector<float> Unit(std::vector<float> v) {
  double s = 0;
  for (float x : v) s += x * x;
  for (float& x : v) x = static_cast<float>(x / std::sqrt(s));
  return v;
}

// Clustered vectors: `clusters` centres, points scattered around them.
std::vector<std::vector<float>> Clustered(int n, int dim, int clusters, bool sparse, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::vector<std::vector<float>> centres(clusters, std::vector<float>(dim));
  for (auto& c : centres)
    for (auto& x : c) x = g(rng);
  std::vector<std::vector<float>> out;
  for (int i = 0; i < n; ++i) {
    std::vector<float> v(dim, 0.0f);
    const auto& c = centres[rng() % clusters];
    for (int d = 0; d < dim; ++d) {
      if (sparse && rng() % 6 != 0) continue;  // about 1/6 of dimensions non-zero
      v[d] = c[d] + 0.8f * g(rng);
    }
    out.push_back(Unit(v));
  }
  return out;
}

TEST(FlatIndex, ExactSearchOrdersByInnerProduct) {
  FlatIndex idx;
  idx.Add(1, Unit({1, 0, 0}));
  idx.Add(2, Unit({1, 1, 0}));
  idx.Add(3, Unit({0, 0, 1}));
  auto r = idx.Search(Unit({1, 0.2f, 0}), 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].first, 1);
  EXPECT_EQ(r[1].first, 2);
  EXPECT_FALSE(idx.Add(4, {1, 2}));  // wrong dimension
  EXPECT_TRUE(idx.Search({1, 0}, 3).empty());
}

// The approximate path must find most of what the exact scan finds, on dense
// and on sparse (hashed) vectors.
TEST(FlatIndex, ApproximateSearchRecallAgainstExact) {
  for (bool sparse : {false, true}) {
    const int n = static_cast<int>(FlatIndex::kApproxMinRows) + 5000;
    auto data = Clustered(n, 256, 200, sparse, 5);
    FlatIndex idx;
    for (int i = 0; i < n; ++i) idx.Add(i, data[static_cast<std::size_t>(i)]);
    auto queries = Clustered(100, 256, 200, sparse, 6);
    double hit = 0, total = 0;
    for (const auto& q : queries) {
      auto exact = idx.SearchExact(q, 10);
      auto approx = idx.Search(q, 10);
      std::set<std::int64_t> a;
      for (auto& p : approx) a.insert(p.first);
      for (auto& p : exact) hit += a.count(p.first);
      total += static_cast<double>(exact.size());
    }
    // Dense clusters are easy; the sparse case (random 1/6 of dimensions, so
    // neighbours share few of them) is a deliberately hard floor. Recall on
    // real text embeddings is measured by `engram bench`.
    EXPECT_GE(hit / total, sparse ? 0.7 : 0.9) << (sparse ? "sparse" : "dense");
  }
}

}  // namespace
}  // namespace engram
