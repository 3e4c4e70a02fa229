// Dense float vector kernels shared by the embedders and the vector indexes.
#pragma once

namespace engram::vec {

// Inner product of two float arrays of length dim. Deterministic for a given
// machine; uses AVX2 where the processor has it (chosen at load time).
float Dot(const float* a, const float* b, int dim);

}  // namespace engram::vec
