// Vector helpers shared by embedders and the vector index.
#include "models/embedder.hpp"

#include <cmath>

namespace engram {

float Dot(const float* a, const float* b, int dim) {
  // Eight independent partial sums: the fixed inner loop is vectorised by the
  // compiler without -ffast-math, and the result is deterministic.
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int i = 0;
  for (; i + 8 <= dim; i += 8) {
    for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
  }
  float sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < dim; ++i) sum += a[i] * b[i];
  return sum;
}

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
