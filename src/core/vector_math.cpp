#include "core/vector_math.hpp"

#include <bit>

namespace engram::vec {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define ENGRAM_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#define ENGRAM_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define ENGRAM_TARGET_CLONES
#define ENGRAM_POPCNT_CLONES
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

ENGRAM_POPCNT_CLONES
void CodeScores(const std::uint64_t* query, const std::uint64_t* codes, std::size_t rows, int words,
                float* out) {
  const std::uint64_t* qp = query;
  const std::uint64_t* qn = query + words;
  for (std::size_t r = 0; r < rows; ++r, codes += 2 * static_cast<std::size_t>(words)) {
    int s = 0;
    for (int i = 0; i < words; ++i) {
      const std::uint64_t rp = codes[i], rn = codes[words + i];
      s += std::popcount(qp[i] & rp) + std::popcount(qn[i] & rn) - std::popcount(qp[i] & rn) -
           std::popcount(qn[i] & rp);
    }
    out[r] = static_cast<float>(s);
  }
}

}  // namespace engram::vec
