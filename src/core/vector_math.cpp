#include "core/vector_math.hpp"

namespace engram::vec {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ENGRAM_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ENGRAM_TARGET_CLONES
#endif

ENGRAM_TARGET_CLONES
float Dot(const float* a, const float* b, int dim) {
  // Sixteen independent partial sums: the fixed inner loop vectorises without
  // -ffast-math (no reassociation needed), and the result is deterministic.
  float acc[16] = {};
  int i = 0;
  for (; i + 16 <= dim; i += 16) {
    for (int k = 0; k < 16; ++k) acc[k] += a[i + k] * b[i + k];
  }
  for (int k = 0; k < 8; ++k) acc[k] += acc[k + 8];
  float sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < dim; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace engram::vec
