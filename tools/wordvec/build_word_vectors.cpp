// Build-time generator of the built-in word vectors (core/word_vectors.hpp):
// reads the WordNet database that Debian's `wordnet-base` installs
// (/usr/share/wordnet) and writes one compact binary file of int8 vectors,
// one per index term (the engine's own stem of a WordNet lemma or gloss word).
//
//   build_word_vectors WORDNET_DIR OUT_FILE [--probe w,w,...] [--pairs a:b,c:d,...]
//
// How a vector is made (deterministic: a fixed seed):
//  1. A term x context matrix from WordNet (cooccurrence.hpp): a term meets
//     its senses, their hypernyms (decayed), hyponyms, related synsets,
//     lexicographer files, its glosses' words' senses, and the synsets whose
//     gloss or collocations use it; weighted by PPMI.
//  2. A truncated SVD (randomized_svd.hpp) of that matrix: a term's vector is
//     its row of U * S^p (p = 0.5), so terms that meet the same synsets, or
//     synsets that meet the same terms, end up close.
//  3. The mean vector and the strongest principal component (what every word
//     shares) are removed; vectors are normalised and quantised to int8.
// A per-term weight (1/sqrt(senses): generic words count less) goes with it.
// The WV_* environment variables override the parameters (for measurements
// only; the build uses the defaults). --probe prints the nearest terms of
// some words, --pairs the cosine of word pairs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cooccurrence.hpp"
#include "core/text.hpp"
#include "randomized_svd.hpp"
#include "wordnet_graph.hpp"

namespace {

using namespace engram::wordvec_tool;

double Param(const char* name, double def) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : def;
}

std::vector<std::string> SplitCsv(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string w; std::getline(ss, w, ',');) out.push_back(w);
  return out;
}

void Normalise(float* v, int dim) {
  double ss = 0;
  for (int i = 0; i < dim; ++i) ss += static_cast<double>(v[i]) * v[i];
  if (ss <= 0) return;
  const auto inv = static_cast<float>(1.0 / std::sqrt(ss));
  for (int i = 0; i < dim; ++i) v[i] *= inv;
}

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Random indexing of the sparse rows: each column has a fixed signature of
// kNonZeros entries +-1 in `dim` dimensions; a row's vector is the weighted
// sum of its columns' signatures (a sparse random projection that keeps
// cosines of the rows up to noise), normalised.
std::vector<float> RandomIndex(const SparseMatrix& m, int dim) {
  constexpr int kNonZeros = 12;
  const auto d = static_cast<std::size_t>(dim);
  std::vector<float> out(static_cast<std::size_t>(m.rows) * d, 0.0f);
  for (int r = 0; r < m.rows; ++r) {
    float* v = &out[static_cast<std::size_t>(r) * d];
    for (auto p = m.ptr[static_cast<std::size_t>(r)]; p < m.ptr[static_cast<std::size_t>(r) + 1]; ++p) {
      const auto c = static_cast<std::uint64_t>(m.col[static_cast<std::size_t>(p)]);
      const float x = m.val[static_cast<std::size_t>(p)];
      std::uint64_t h = Mix(0x51ed2701ULL ^ (c * 0x100000001b3ULL));
      for (int k = 0; k < kNonZeros; ++k) {
        h = Mix(h + static_cast<std::uint64_t>(k));
        v[h % d] += (h >> 32) & 1 ? x : -x;
      }
    }
    Normalise(v, dim);
  }
  return out;
}

// Second order: each term's vector plus `share` times the mean vector of the
// gloss words of its first senses, normalised.
void MixGloss(const WordNetGraph& wn, const std::vector<std::string>& terms, int dim, double share,
              std::vector<float>& vec) {
  const auto d = static_cast<std::size_t>(dim);
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < terms.size(); ++i) index[terms[i]] = i;
  std::vector<float> out(vec.size(), 0.0f), g(d);
  for (std::size_t i = 0; i < terms.size(); ++i) {
    std::fill(g.begin(), g.end(), 0.0f);
    int used = 0;
    for (std::uint32_t s : wn.FirstSenses(terms[i])) {
      for (const auto& w : wn.synsets()[s].gloss_terms) {
        auto it = index.find(w);
        if (it == index.end() || it->second == i) continue;
        for (std::size_t k = 0; k < d; ++k) g[k] += vec[it->second * d + k];
        ++used;
      }
    }
    float* o = &out[i * d];
    for (std::size_t k = 0; k < d; ++k) o[k] = vec[i * d + k];
    if (used > 0) {
      Normalise(g.data(), dim);
      for (std::size_t k = 0; k < d; ++k) o[k] += static_cast<float>(share) * g[k];
    }
    Normalise(o, dim);
  }
  vec.swap(out);
}

// Removes the mean and the `drop` strongest principal components of the rows
// (n x dim), then normalises each row.
void RemoveCommon(std::vector<float>& v, std::size_t n, int dim, int drop) {
  const auto d = static_cast<std::size_t>(dim);
  std::vector<double> mean(d, 0.0);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t k = 0; k < d; ++k) mean[k] += v[r * d + k];
  for (auto& m : mean) m /= static_cast<double>(n);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t k = 0; k < d; ++k) v[r * d + k] -= static_cast<float>(mean[k]);
  if (drop > 0) {
    std::vector<double> cov(d * d, 0.0);
    for (std::size_t r = 0; r < n; ++r) {
      const float* x = &v[r * d];
      for (std::size_t a = 0; a < d; ++a)
        for (std::size_t b = a; b < d; ++b) cov[a * d + b] += static_cast<double>(x[a]) * x[b];
    }
    for (std::size_t a = 0; a < d; ++a)
      for (std::size_t b = 0; b < a; ++b) cov[a * d + b] = cov[b * d + a];
    std::vector<double> values, vecs;
    SymmetricEigen(std::move(cov), dim, values, vecs);
    std::vector<int> order(d);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return values[static_cast<std::size_t>(a)] > values[static_cast<std::size_t>(b)]; });
    for (int j = 0; j < drop && j < dim; ++j) {
      const auto c = static_cast<std::size_t>(order[static_cast<std::size_t>(j)]);
      for (std::size_t r = 0; r < n; ++r) {
        float* x = &v[r * d];
        double proj = 0;
        for (std::size_t k = 0; k < d; ++k) proj += x[k] * vecs[k * d + c];
        for (std::size_t k = 0; k < d; ++k) x[k] -= static_cast<float>(proj * vecs[k * d + c]);
      }
    }
  }
  for (std::size_t r = 0; r < n; ++r) Normalise(&v[r * d], dim);
}

bool Write(const std::string& out_path, const std::vector<std::string>& terms, const std::vector<float>& weights,
           const std::vector<float>& vec, int dim) {
  const std::size_t n = terms.size();
  const auto d = static_cast<std::size_t>(dim);
  std::string strings;
  std::vector<std::uint32_t> offsets;
  std::vector<float> scales;
  std::vector<std::int8_t> codes;
  codes.reserve(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    offsets.push_back(static_cast<std::uint32_t>(strings.size()));
    strings += terms[i];
    const float* x = &vec[i * d];
    float mx = 0;
    for (std::size_t k = 0; k < d; ++k) mx = std::max(mx, std::fabs(x[k]));
    const float scale = mx > 0 ? mx / 127.0f : 1.0f;
    // Quantise, then record the factor that makes the int8 vector unit length.
    double ss = 0;
    for (std::size_t k = 0; k < d; ++k) {
      const int q = static_cast<int>(std::lround(x[k] / scale));
      codes.push_back(static_cast<std::int8_t>(std::clamp(q, -127, 127)));
      ss += static_cast<double>(q) * q;
    }
    scales.push_back(ss > 0 ? static_cast<float>(1.0 / std::sqrt(ss)) : 0.0f);
  }
  offsets.push_back(static_cast<std::uint32_t>(strings.size()));
  while (strings.size() % 4) strings.push_back('\0');
  const std::string tmp = out_path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return false;
  const char magic[8] = {'E', 'N', 'G', 'W', 'V', 'E', 'C', '1'};
  const std::uint32_t head[4] = {static_cast<std::uint32_t>(dim), static_cast<std::uint32_t>(n),
                                 static_cast<std::uint32_t>(strings.size()), 0};
  bool ok = std::fwrite(magic, 1, 8, f) == 8 && std::fwrite(head, 4, 4, f) == 4 &&
            std::fwrite(offsets.data(), 4, offsets.size(), f) == offsets.size() &&
            std::fwrite(strings.data(), 1, strings.size(), f) == strings.size() &&
            std::fwrite(weights.data(), 4, n, f) == n && std::fwrite(scales.data(), 4, n, f) == n &&
            std::fwrite(codes.data(), 1, codes.size(), f) == codes.size();
  ok = std::fclose(f) == 0 && ok;
  return ok && std::rename(tmp.c_str(), out_path.c_str()) == 0;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: build_word_vectors WORDNET_DIR OUT_FILE [--probe w1,w2,...] [--pairs a:b,...]\n";
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string dir = argv[1], out_path = argv[2];
  std::vector<std::string> probes, pairs;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--probe") probes = SplitCsv(argv[i + 1]);
    else if (flag == "--pairs") pairs = SplitCsv(argv[i + 1]);
  }
  WordNetGraph wn;
  std::string error;
  if (!wn.Load(dir, std::getenv("WV_EXAMPLES") != nullptr, &error)) {
    std::cerr << "build_word_vectors: " << error << "\n";
    return 1;
  }
  const std::vector<std::string> terms = VectorTerms(wn);
  CooccurrenceWeights cw;
  cw.hyper_decay = Param("WV_HYPER", cw.hyper_decay);
  cw.hyper_levels = static_cast<int>(Param("WV_LEVELS", cw.hyper_levels));
  cw.hyponym = Param("WV_HYPO", cw.hyponym);
  cw.related = Param("WV_REL", cw.related);
  cw.lexfile = Param("WV_LEX", cw.lexfile);
  cw.gloss = Param("WV_GLOSS", cw.gloss);
  cw.inverse_gloss = Param("WV_IGLOSS", cw.inverse_gloss);
  cw.collocation = Param("WV_COLLOC", cw.collocation);
  cw.smoothing = Param("WV_CDS", cw.smoothing);
  const SparseMatrix m = BuildCooccurrence(wn, terms, cw);
  std::cerr << "build_word_vectors: " << m.rows << " x " << m.cols << " matrix, " << m.col.size()
            << " non-zeros (" << Seconds(start) << " s)\n";
  const int dim = static_cast<int>(Param("WV_DIM", 256));
  const int threads = static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1u, 2u));
  std::vector<float> vec;
  int out_dim = dim;
  const std::size_t n = terms.size();
  if (Param("WV_METHOD_RI", 1) > 0) {
    vec = RandomIndex(m, dim);
    const double second = Param("WV_SECOND", 0.6);
    if (second > 0) MixGloss(wn, terms, dim, second, vec);
  } else {
  SvdResult svd;
    const char* cache = std::getenv("WV_SVD_CACHE");  // measurements: reuse one factorisation
    if (std::FILE* cf = cache ? std::fopen(cache, "rb") : nullptr) {
      int k = 0;
      bool ok = std::fread(&k, sizeof k, 1, cf) == 1;
      svd.k = k;
      svd.singular.resize(static_cast<std::size_t>(k));
      svd.u.resize(static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(k));
      ok = ok && std::fread(svd.singular.data(), sizeof(double), svd.singular.size(), cf) == svd.singular.size() &&
           std::fread(svd.u.data(), sizeof(float), svd.u.size(), cf) == svd.u.size();
      std::fclose(cf);
      if (!ok) return 1;
    } else {
      svd = TruncatedSvd(m, dim, static_cast<int>(Param("WV_OVERSAMPLE", 16)),
                         static_cast<int>(Param("WV_POWER_ITER", 2)), threads);
      if (std::FILE* out = cache ? std::fopen(cache, "wb") : nullptr) {
        std::fwrite(&svd.k, sizeof svd.k, 1, out);
        std::fwrite(svd.singular.data(), sizeof(double), svd.singular.size(), out);
        std::fwrite(svd.u.data(), sizeof(float), svd.u.size(), out);
        std::fclose(out);
      }
    }
    std::cerr << "build_word_vectors: SVD, singular values " << svd.singular.front() << " .. " << svd.singular.back()
              << " (" << Seconds(start) << " s)\n";
      const auto d = static_cast<std::size_t>(svd.k);
    std::vector<float> vec = svd.u;
    const double p = Param("WV_EIG", 0.5);
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t k = 0; k < d; ++k) vec[r * d + k] *= static_cast<float>(std::pow(svd.singular[k], p));
      Normalise(&vec[r * d], svd.k);
    }
    out_dim = svd.k;
  }
  RemoveCommon(vec, n, out_dim, static_cast<int>(Param("WV_DROP", 1)));
  const auto d = static_cast<std::size_t>(out_dim);

  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index[terms[i]] = i;
  auto find = [&](const std::string& word) -> long {
    auto t = engram::text::Terms(word);
    if (t.empty()) return -1;
    auto it = index.find(t[0]);
    return it == index.end() ? -1 : static_cast<long>(it->second);
  };
  auto cosine = [&](std::size_t a, std::size_t b) {
    double s = 0;
    for (std::size_t k = 0; k < d; ++k) s += static_cast<double>(vec[a * d + k]) * vec[b * d + k];
    return s;
  };
  for (const auto& pr : pairs) {
    const auto colon = pr.find(':');
    const long a = find(pr.substr(0, colon)), b = colon == std::string::npos ? -1 : find(pr.substr(colon + 1));
    std::cout << pr << " " << (a < 0 || b < 0 ? std::string("unknown") : std::to_string(cosine(static_cast<std::size_t>(a), static_cast<std::size_t>(b)))) << "\n";
  }
  for (const auto& word : probes) {
    const long q = find(word);
    if (q < 0) {
      std::cout << word << ": unknown\n";
      continue;
    }
    std::vector<std::pair<double, std::size_t>> best;
    for (std::size_t i = 0; i < n; ++i) best.emplace_back(cosine(static_cast<std::size_t>(q), i), i);
    std::partial_sort(best.begin(), best.begin() + 15, best.end(), std::greater<>());
    std::cout << word << ":";
    for (int k = 0; k < 15; ++k) std::cout << " " << terms[best[static_cast<std::size_t>(k)].second] << "(" << static_cast<int>(100 * best[static_cast<std::size_t>(k)].first) << ")";
    std::cout << "\n";
  }

  const double sense_power = Param("WV_SENSE_POWER", 0.5);
  std::vector<float> weights(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int senses = wn.SenseCount(terms[i]);
    weights[i] = senses > 0 ? static_cast<float>(std::pow(senses, -sense_power)) : 0.5f;
  }
  if (!Write(out_path, terms, weights, vec, out_dim)) {
    std::cerr << "build_word_vectors: cannot write " << out_path << "\n";
    return 1;
  }
  std::cerr << "build_word_vectors: " << n << " terms, " << out_dim << " dimensions -> " << out_path << " ("
            << Seconds(start) << " s)\n";
  return 0;
}
