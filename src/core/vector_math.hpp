// Dense float vector kernels shared by the embedders and the vector indexes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace engram::vec {

// Inner product of two float arrays of length dim. Deterministic for a given
// machine; uses AVX2 where the processor has it (chosen at load time).
float Dot(const float* a, const float* b, int dim);

// Sign-code similarity of ternary codes: for each of `rows` codes of 2*words
// 64-bit words (positive masks, then negative masks), the number of agreeing
// signs minus disagreeing signs with the query code, written to out[row].
// Uses the processor's popcount instruction where available.
void CodeScores(const std::uint64_t* query, const std::uint64_t* codes, std::size_t rows, int words,
                float* out);

}  // namespace engram::vec
