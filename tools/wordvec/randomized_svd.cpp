#include "randomized_svd.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <thread>

namespace engram::wordvec_tool {

namespace {

// Runs fn(begin, end, worker) over [0, n) split between `threads` workers.
void ParallelFor(std::size_t n, int threads, const std::function<void(std::size_t, std::size_t, int)>& fn) {
  threads = std::max(1, threads);
  if (threads == 1 || n < 1024) {
    fn(0, n, 0);
    return;
  }
  std::vector<std::thread> pool;
  const std::size_t step = (n + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
  for (int t = 0; t < threads; ++t) {
    const std::size_t b = std::min(n, step * static_cast<std::size_t>(t));
    const std::size_t e = std::min(n, b + step);
    pool.emplace_back(fn, b, e, t);
  }
  for (auto& th : pool) th.join();
}

SparseMatrix Transpose(const SparseMatrix& a) {
  SparseMatrix t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.ptr.assign(static_cast<std::size_t>(t.rows) + 1, 0);
  for (std::int32_t c : a.col) ++t.ptr[static_cast<std::size_t>(c) + 1];
  for (std::size_t i = 1; i < t.ptr.size(); ++i) t.ptr[i] += t.ptr[i - 1];
  t.col.resize(a.col.size());
  t.val.resize(a.val.size());
  std::vector<std::int64_t> next(t.ptr.begin(), t.ptr.end() - 1);
  for (int r = 0; r < a.rows; ++r) {
    for (std::int64_t p = a.ptr[static_cast<std::size_t>(r)]; p < a.ptr[static_cast<std::size_t>(r) + 1]; ++p) {
      const auto q = static_cast<std::size_t>(next[static_cast<std::size_t>(a.col[static_cast<std::size_t>(p)])]++);
      t.col[q] = r;
      t.val[q] = a.val[static_cast<std::size_t>(p)];
    }
  }
  return t;
}

// y (a.rows x l) = a * x (a.cols x l); dense matrices row-major.
void Multiply(const SparseMatrix& a, const std::vector<float>& x, int l, std::vector<float>& y, int threads) {
  y.assign(static_cast<std::size_t>(a.rows) * static_cast<std::size_t>(l), 0.0f);
  ParallelFor(static_cast<std::size_t>(a.rows), threads, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t r = b; r < e; ++r) {
      float* out = &y[r * static_cast<std::size_t>(l)];
      for (std::int64_t p = a.ptr[r]; p < a.ptr[r + 1]; ++p) {
        const float v = a.val[static_cast<std::size_t>(p)];
        const float* in = &x[static_cast<std::size_t>(a.col[static_cast<std::size_t>(p)]) * static_cast<std::size_t>(l)];
        for (int j = 0; j < l; ++j) out[j] += v * in[j];
      }
    }
  });
}

// g (l x l, full) = y^T y for y (n x l).
std::vector<double> Gram(const std::vector<float>& y, std::size_t n, int l, int threads) {
  const auto ll = static_cast<std::size_t>(l);
  std::vector<std::vector<double>> part(static_cast<std::size_t>(std::max(1, threads)), std::vector<double>(ll * ll, 0.0));
  ParallelFor(n, threads, [&](std::size_t b, std::size_t e, int t) {
    std::vector<float> acc(ll * ll, 0.0f);
    std::size_t since = 0;
    auto flush = [&] {
      auto& g = part[static_cast<std::size_t>(t)];
      for (std::size_t i = 0; i < ll * ll; ++i) g[i] += acc[i];
      std::fill(acc.begin(), acc.end(), 0.0f);
      since = 0;
    };
    for (std::size_t r = b; r < e; ++r) {
      const float* row = &y[r * ll];
      for (std::size_t i = 0; i < ll; ++i) {
        const float ri = row[i];
        float* gi = &acc[i * ll];
        for (std::size_t j = i; j < ll; ++j) gi[j] += ri * row[j];
      }
      if (++since == 256) flush();  // float sums of a few rows, double beyond
    }
    flush();
  });
  std::vector<double> g(ll * ll, 0.0);
  for (const auto& p : part)
    for (std::size_t i = 0; i < ll * ll; ++i) g[i] += p[i];
  for (std::size_t i = 0; i < ll; ++i)
    for (std::size_t j = 0; j < i; ++j) g[i * ll + j] = g[j * ll + i];
  return g;
}

// Orthonormal columns spanning y's (n x l), in place: Cholesky QR, `passes`
// times (twice restores orthogonality lost to rounding). Columns that are
// numerically dependent become zero.
void Orthonormalise(std::vector<float>& y, std::size_t n, int l, int threads, int passes) {
  const auto ll = static_cast<std::size_t>(l);
  for (int pass = 0; pass < passes; ++pass) {
    std::vector<double> g = Gram(y, n, l, threads);
    // g = r^T r, r upper triangular.
    std::vector<double> r(ll * ll, 0.0);
    double top = 0;
    for (std::size_t i = 0; i < ll; ++i) top = std::max(top, g[i * ll + i]);
    for (std::size_t i = 0; i < ll; ++i) {
      double d = g[i * ll + i];
      for (std::size_t k = 0; k < i; ++k) d -= r[k * ll + i] * r[k * ll + i];
      if (d <= top * 1e-12) {
        r[i * ll + i] = 0.0;  // dependent: the column is dropped
        continue;
      }
      const double rii = std::sqrt(d);
      r[i * ll + i] = rii;
      for (std::size_t j = i + 1; j < ll; ++j) {
        double s = g[i * ll + j];
        for (std::size_t k = 0; k < i; ++k) s -= r[k * ll + i] * r[k * ll + j];
        r[i * ll + j] = s / rii;
      }
    }
    // y <- y r^{-1}: per row, x r = y solved by forward substitution.
    ParallelFor(n, threads, [&](std::size_t b, std::size_t e, int) {
      std::vector<double> x(ll);
      for (std::size_t row = b; row < e; ++row) {
        float* yr = &y[row * ll];
        for (std::size_t j = 0; j < ll; ++j) {
          if (r[j * ll + j] == 0.0) {
            x[j] = 0.0;
            continue;
          }
          double s = yr[j];
          for (std::size_t k = 0; k < j; ++k) s -= x[k] * r[k * ll + j];
          x[j] = s / r[j * ll + j];
        }
        for (std::size_t j = 0; j < ll; ++j) yr[j] = static_cast<float>(x[j]);
      }
    });
  }
}

}  // namespace

void SymmetricEigen(std::vector<double> a, int n, std::vector<double>& values, std::vector<double>& vectors) {
  const auto nn = static_cast<std::size_t>(n);
  vectors.assign(nn * nn, 0.0);
  for (std::size_t i = 0; i < nn; ++i) vectors[i * nn + i] = 1.0;
  auto at = [nn](std::vector<double>& m, std::size_t r, std::size_t c) -> double& { return m[r * nn + c]; };
  double scale = 0;
  for (double x : a) scale += x * x;
  for (int sweep = 0; sweep < 50; ++sweep) {
    double off = 0;
    for (std::size_t p = 0; p < nn; ++p)
      for (std::size_t q = p + 1; q < nn; ++q) off += at(a, p, q) * at(a, p, q);
    if (off <= scale * 1e-24) break;
    for (std::size_t p = 0; p < nn; ++p) {
      for (std::size_t q = p + 1; q < nn; ++q) {
        const double apq = at(a, p, q);
        if (std::fabs(apq) < 1e-300) continue;
        const double theta = (at(a, q, q) - at(a, p, p)) / (2 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (std::size_t k = 0; k < nn; ++k) {
          const double akp = at(a, k, p), akq = at(a, k, q);
          at(a, k, p) = c * akp - s * akq;
          at(a, k, q) = s * akp + c * akq;
        }
        for (std::size_t k = 0; k < nn; ++k) {
          const double apk = at(a, p, k), aqk = at(a, q, k);
          at(a, p, k) = c * apk - s * aqk;
          at(a, q, k) = s * apk + c * aqk;
        }
        for (std::size_t k = 0; k < nn; ++k) {
          const double vkp = at(vectors, k, p), vkq = at(vectors, k, q);
          at(vectors, k, p) = c * vkp - s * vkq;
          at(vectors, k, q) = s * vkp + c * vkq;
        }
      }
    }
  }
  values.resize(nn);
  for (std::size_t i = 0; i < nn; ++i) values[i] = at(a, i, i);
}

SvdResult TruncatedSvd(const SparseMatrix& a, int k, int oversample, int power, int threads) {
  SvdResult out;
  const int l = std::min(k + oversample, std::min(a.rows, a.cols));
  k = std::min(k, l);
  const auto ll = static_cast<std::size_t>(l);
  const SparseMatrix at = Transpose(a);
  // The range of a: y = a * omega (Gaussian), then power iterations.
  std::vector<float> omega(static_cast<std::size_t>(a.cols) * ll);
  std::mt19937_64 rng(0x5eed2024);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& x : omega) x = normal(rng);
  std::vector<float> y, z;
  Multiply(a, omega, l, y, threads);
  std::vector<float>().swap(omega);
  Orthonormalise(y, static_cast<std::size_t>(a.rows), l, threads, 1);
  for (int i = 0; i < power; ++i) {
    Multiply(at, y, l, z, threads);
    Orthonormalise(z, static_cast<std::size_t>(a.cols), l, threads, 1);
    Multiply(a, z, l, y, threads);
    Orthonormalise(y, static_cast<std::size_t>(a.rows), l, threads, 2);
  }
  // b = q^T a; b b^T = (a^T q)^T (a^T q) (l x l); its eigenvectors rotate q
  // into the left singular vectors.
  Multiply(at, y, l, z, threads);
  std::vector<double> g = Gram(z, static_cast<std::size_t>(a.cols), l, threads);
  std::vector<float>().swap(z);
  std::vector<double> values, vectors;
  SymmetricEigen(std::move(g), l, values, vectors);
  std::vector<int> order(ll);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int x, int w) { return values[static_cast<std::size_t>(x)] > values[static_cast<std::size_t>(w)]; });
  out.k = k;
  const auto kk = static_cast<std::size_t>(k);
  for (std::size_t j = 0; j < kk; ++j) out.singular.push_back(std::sqrt(std::max(0.0, values[static_cast<std::size_t>(order[j])])));
  out.u.assign(static_cast<std::size_t>(a.rows) * kk, 0.0f);
  ParallelFor(static_cast<std::size_t>(a.rows), threads, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t r = b; r < e; ++r) {
      const float* q = &y[r * ll];
      float* u = &out.u[r * kk];
      for (std::size_t j = 0; j < kk; ++j) {
        const auto c = static_cast<std::size_t>(order[j]);
        double s = 0;
        for (std::size_t i = 0; i < ll; ++i) s += static_cast<double>(q[i]) * vectors[i * ll + c];
        u[j] = static_cast<float>(s);
      }
    }
  });
  return out;
}

}  // namespace engram::wordvec_tool
