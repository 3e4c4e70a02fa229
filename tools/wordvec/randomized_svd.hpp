// A truncated SVD of a large sparse matrix without a linear-algebra library:
// the randomised range finder (Halko, Martinsson and Tropp 2011) with power
// iterations, orthonormalised by Cholesky QR (twice), and the small dense
// eigenproblem solved by cyclic Jacobi rotations. Deterministic (a fixed
// seed). Build-time tool code: not part of the engine.
#pragma once

#include <cstdint>
#include <vector>

namespace engram::wordvec_tool {

// Compressed sparse rows.
struct SparseMatrix {
  int rows = 0, cols = 0;
  std::vector<std::int64_t> ptr;  // rows + 1
  std::vector<std::int32_t> col;
  std::vector<float> val;
};

// Eigen-decomposition of a symmetric n x n matrix `a` (row-major): eigenvalues
// in `values`, eigenvectors in the columns of `vectors` (row-major), unsorted.
void SymmetricEigen(std::vector<double> a, int n, std::vector<double>& values, std::vector<double>& vectors);

struct SvdResult {
  int k = 0;
  std::vector<double> singular;  // k, largest first
  std::vector<float> u;          // rows x k, row-major: the left singular vectors
};

// The k largest singular values of `a` and their left singular vectors, with
// `oversample` extra directions and `power` power iterations; `threads`
// worker threads share the products.
SvdResult TruncatedSvd(const SparseMatrix& a, int k, int oversample, int power, int threads);

}  // namespace engram::wordvec_tool
