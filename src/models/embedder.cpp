// Vector helpers shared by embedders and the vector index.
#include "models/embedder.hpp"

#include "core/vector_math.hpp"

#include <cmath>

namespace engram {

float Dot(const float* a, const float* b, int dim) { return vec::Dot(a, b, dim); }

float Dot(const Vector& a, const Vector& b) {
  // Sizes should match; a mismatch only compares the common prefix.
  const std::size_t n = a.size() < b.size() ? a.size() : b.size();
  return Dot(a.data(), b.data(), static_cast<int>(n));
}

void Normalize(Vector& v) {
  double sum = 0.0;
  for (float x : v) sum += static_cast<double>(x) * x;
  if (sum <= 0.0 || !std::isfinite(sum)) return;
  const float inv = static_cast<float>(1.0 / std::sqrt(sum));
  for (float& x : v) x *= inv;
}

}  // namespace engram
