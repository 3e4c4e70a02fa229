#include "core/word_vectors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <unordered_set>

#include "core/process.hpp"
#include "core/text.hpp"

namespace engram::wordvec {

namespace {

// A number written in figures, or an ordinal ("42", "2027", "40th", "1st"):
// no word of meaning (Lookup).
bool IsFigure(std::string_view t) {
  std::size_t n = 0;
  while (n < t.size() && t[n] >= '0' && t[n] <= '9') ++n;
  if (n == 0) return false;
  const std::string_view rest = t.substr(n);
  return rest.empty() || rest == "st" || rest == "nd" || rest == "rd" || rest == "th";
}

constexpr char kMagic[8] = {'E', 'N', 'G', 'W', 'V', 'E', 'C', '2'};
constexpr std::size_t kHeader = 8 + 24;

// Binary search of a sorted string table (offsets: count + 1); -1 when absent.
long FindIn(const std::uint32_t* offsets, const char* strings, std::size_t count, std::string_view term) {
  std::size_t lo = 0, hi = count;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const std::string_view s(strings + offsets[mid], offsets[mid + 1] - offsets[mid]);
    const int c = s.compare(term);
    if (c == 0) return static_cast<long>(mid);
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

// Whether a table's offsets (count + 1) are ordered and end inside `bytes`.
bool OrderedWithin(const std::uint32_t* offsets, std::size_t count, std::size_t bytes) {
  for (std::size_t i = 0; i < count; ++i) {
    if (offsets[i] > offsets[i + 1]) return false;
  }
  return offsets[count] <= bytes;
}

void Normalise(std::vector<float>& v) {
  double ss = 0;
  for (float x : v) ss += static_cast<double>(x) * x;
  if (ss <= 0) {
    v.clear();
    return;
  }
  const float inv = static_cast<float>(1.0 / std::sqrt(ss));
  for (float& x : v) x *= inv;
}

std::string FindDefault() { return process::FindDataFile("ENGRAM_WORD_VECTORS", "engram-words.bin"); }

}  // namespace

QuantizedVector Quantize(const std::vector<float>& unit) {
  QuantizedVector q;
  if (unit.empty()) return q;
  float mx = 0;
  for (float x : unit) mx = std::max(mx, std::fabs(x));
  if (mx <= 0) return q;
  const float step = mx / 127.0f;
  q.codes.resize(unit.size());
  double ss = 0;
  for (std::size_t i = 0; i < unit.size(); ++i) {
    const long c = std::clamp<long>(std::lround(unit[i] / step), -127, 127);
    q.codes[i] = static_cast<std::int8_t>(c);
    ss += static_cast<double>(c) * static_cast<double>(c);
  }
  q.scale = ss > 0 ? static_cast<float>(1.0 / std::sqrt(ss)) : 0.0f;
  return q;
}

namespace {

// Dot(float, codes) keeps 16 running sums, one per lane of a block of 16
// dimensions (one running sum is a chain of dependent additions a compiler
// may not reorder), each summed in the order of the blocks, then added up
// in lane order: the baseline loop and the AVX2 one below give the same
// bits.
constexpr std::size_t kLanes = 16;

void DotLanes(const float* x, const std::int8_t* y, std::size_t blocks, float* lane) {
  for (std::size_t b = 0; b < blocks; ++b, x += kLanes, y += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) lane[j] += x[j] * static_cast<float>(y[j]);
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The same with the codes widened to floats eight at a time (compilers turn
// the loop above into one conversion per code, where the meaning pass over
// a large scope spent a third of its time); a multiplication then an
// addition, as above, not a fused one.
__attribute__((target("avx2"))) void DotLanesAvx2(const float* x, const std::int8_t* y,
                                                  std::size_t blocks, float* lane) {
  __m256 lo = _mm256_loadu_ps(lane), hi = _mm256_loadu_ps(lane + 8);
  for (std::size_t b = 0; b < blocks; ++b, x += kLanes, y += kLanes) {
    const __m128i codes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(y));
    const __m256 c0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(codes));
    const __m256 c1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(codes, 8)));
    lo = _mm256_add_ps(lo, _mm256_mul_ps(_mm256_loadu_ps(x), c0));
    hi = _mm256_add_ps(hi, _mm256_mul_ps(_mm256_loadu_ps(x + 8), c1));
  }
  _mm256_storeu_ps(lane, lo);
  _mm256_storeu_ps(lane + 8, hi);
}
const bool kHaveAvx2 = [] {
  __builtin_cpu_init();  // (a static initialiser may run before the runtime's)
  return __builtin_cpu_supports("avx2") != 0;
}();
#endif

}  // namespace

float Dot(const std::vector<float>& a, const QuantizedVector& b) {
  if (a.size() != b.codes.size() || a.empty()) return 0.0f;
  float lane[kLanes] = {};
  const std::size_t n = a.size(), blocks = n / kLanes;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (kHaveAvx2) {
    DotLanesAvx2(a.data(), b.codes.data(), blocks, lane);
  } else {
    DotLanes(a.data(), b.codes.data(), blocks, lane);
  }
#else
  DotLanes(a.data(), b.codes.data(), blocks, lane);
#endif
  float s = 0;
  for (std::size_t i = blocks * kLanes; i < n; ++i) s += a[i] * static_cast<float>(b.codes[i]);
  for (float v : lane) s += v;
  return s * b.scale;
}

float Dot(const QuantizedVector& a, const QuantizedVector& b) {
  if (a.codes.size() != b.codes.size() || a.empty()) return 0.0f;
  // (At most 127 * 127 * dim: no overflow below 133,000 dimensions.) Blocks
  // of 16 lanes, which the compiler turns into vector instructions.
  std::int32_t lane[kLanes] = {};
  const std::int8_t* x = a.codes.data();
  const std::int8_t* y = b.codes.data();
  const std::size_t n = a.codes.size();
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) lane[j] += static_cast<std::int32_t>(x[i + j]) * y[i + j];
  }
  std::int32_t s = 0;
  for (; i < n; ++i) s += static_cast<std::int32_t>(x[i]) * y[i];
  for (std::int32_t v : lane) s += v;
  return static_cast<float>(s) * a.scale * b.scale;
}

WordVectors::~WordVectors() {
  if (base_) ::munmap(const_cast<std::uint8_t*>(base_), size_);
}

std::unique_ptr<WordVectors> WordVectors::Open(const std::string& path) {
  std::size_t size = 0;
  const unsigned char* m = process::MapReadOnly(path, kHeader, &size);
  if (!m) return nullptr;
  std::unique_ptr<WordVectors> wv(new WordVectors());
  wv->base_ = m;
  wv->size_ = size;
  if (std::memcmp(wv->base_, kMagic, 8) != 0) return nullptr;
  std::uint32_t head[6];
  std::memcpy(head, wv->base_ + 8, sizeof head);
  const std::size_t dim = head[0], count = head[1], strings = head[2], expansions = head[3];
  const std::size_t aliases = head[4], alias_strings = head[5];
  if (dim == 0 || dim > 4096 || count == 0 || strings % 4 != 0 || alias_strings % 4 != 0) return nullptr;
  // The expansion and alias tables are 4-byte aligned.
  if ((expansions > 0 || aliases > 0) && (dim * count) % 4 != 0) return nullptr;
  const std::size_t base_size = kHeader + 4 * (count + 1) + strings + 8 * count + dim * count;
  const std::size_t exp_size = expansions > 0 ? 4 * (count + 1) + 4 * expansions : 0;
  const std::size_t alias_size = aliases > 0 ? 4 * (aliases + 1) + 4 * aliases + alias_strings : 0;
  if (base_size + exp_size + alias_size != size) return nullptr;
  wv->dim_ = static_cast<int>(dim);
  wv->count_ = count;
  wv->offsets_ = reinterpret_cast<const std::uint32_t*>(wv->base_ + kHeader);
  wv->strings_ = reinterpret_cast<const char*>(wv->base_ + kHeader + 4 * (count + 1));
  wv->weights_ = reinterpret_cast<const float*>(wv->strings_ + strings);
  wv->scales_ = wv->weights_ + count;
  wv->codes_ = reinterpret_cast<const std::int8_t*>(wv->scales_ + count);
  // Offsets must be ordered and inside the string table.
  if (!OrderedWithin(wv->offsets_, count, strings)) return nullptr;
  if (expansions > 0) {
    wv->exp_offsets_ = reinterpret_cast<const std::uint32_t*>(wv->base_ + base_size);
    wv->exp_entries_ = wv->exp_offsets_ + count + 1;
    if (wv->exp_offsets_[0] != 0 || wv->exp_offsets_[count] != expansions) return nullptr;
    // Entries are checked when read (an index out of range is skipped), so
    // opening touches no more pages than before.
    for (std::size_t i = 0; i < count; ++i) {
      if (wv->exp_offsets_[i] > wv->exp_offsets_[i + 1]) return nullptr;
    }
    wv->exp_count_ = expansions;
  }
  if (aliases > 0) {
    wv->alias_offsets_ = reinterpret_cast<const std::uint32_t*>(wv->base_ + base_size + exp_size);
    wv->alias_targets_ = wv->alias_offsets_ + aliases + 1;
    wv->alias_strings_ = reinterpret_cast<const char*>(wv->alias_targets_ + aliases);
    if (!OrderedWithin(wv->alias_offsets_, aliases, alias_strings)) return nullptr;
    wv->alias_count_ = aliases;
  }
  ::madvise(const_cast<unsigned char*>(m), size, MADV_WILLNEED);  // read ahead now, off the request path
  return wv;
}

std::string WordVectors::DefaultPath() {
  static const std::string path = FindDefault();
  return path;
}

const WordVectors* WordVectors::Default() {
  static const std::unique_ptr<WordVectors> instance = [] {
    const std::string path = DefaultPath();
    return path.empty() ? nullptr : Open(path);
  }();
  return instance.get();
}

long WordVectors::Find(std::string_view term) const {
  const long i = FindIn(offsets_, strings_, count_, term);
  if (i >= 0) return i;
  // A word written with its diacritics ("café", "résumé") is the word without
  // them, as WordNet writes it: its own stem, or the stem of the folded word.
  if (std::any_of(term.begin(), term.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    const std::string folded = text::FoldLatin(term);
    if (!folded.empty()) {
      const long f = Find(folded);
      return f >= 0 ? f : Find(text::Stem(folded));
    }
  }
  if (alias_count_ == 0) return i;
  const long a = FindIn(alias_offsets_, alias_strings_, alias_count_, term);
  if (a < 0) return -1;
  const std::uint32_t target = alias_targets_[a];
  return target < count_ ? static_cast<long>(target) : -1;  // checked when read, like the expansions
}

void WordVectors::Lookup(std::string_view term, std::vector<long>& out) const {
  if (IsFigure(term)) return;
  const long i = Find(term);
  if (i >= 0) {
    out.push_back(i);
    return;
  }
  if (term.find('-') == std::string_view::npos) return;
  std::string parts(term);
  std::replace(parts.begin(), parts.end(), '-', ' ');
  for (const auto& t : text::Terms(parts)) {
    if (IsFigure(t)) continue;  // "42-kilometre": the kilometre
    const long p = Find(t);
    if (p >= 0) out.push_back(p);
  }
}

float WordVectors::Weight(long index) const {
  if (index < 0 || static_cast<std::size_t>(index) >= count_) return 0.0f;
  return weights_[index];
}

void WordVectors::AddTo(long index, float weight, std::vector<float>& acc) const {
  if (index < 0 || static_cast<std::size_t>(index) >= count_ || acc.size() != static_cast<std::size_t>(dim_)) return;
  const std::int8_t* c = codes_ + static_cast<std::size_t>(index) * static_cast<std::size_t>(dim_);
  const float f = weight * scales_[index];
  for (int i = 0; i < dim_; ++i) acc[static_cast<std::size_t>(i)] += f * static_cast<float>(c[i]);
}

double WordVectors::ExpansionMatch(const std::vector<long>& query_terms, const std::vector<double>& query_weights,
                                   const std::vector<long>& own) const {
  double all = 0;
  for (double w : query_weights) all += w;
  if (all <= 0 || !has_expansions()) return 0.0;
  // One pass over each word's neighbourhood, looking for every query term
  // (the neighbourhoods are long, the queries short). Without allocating for
  // a query of a few terms (the candidates of a search; the thousands of
  // messages of dialogue retrieval go through an ExpansionMatcher).
  const std::size_t n = std::min(query_terms.size(), query_weights.size());
  constexpr std::size_t kFew = 16;
  float best_few[kFew];
  long wanted_few[kFew];
  std::vector<float> best_many;
  std::vector<long> wanted_many;
  if (n > kFew) {
    best_many.resize(n);
    wanted_many.resize(n);
  }
  float* best = n > kFew ? best_many.data() : best_few;
  long* wanted = n > kFew ? wanted_many.data() : wanted_few;
  for (std::size_t k = 0; k < n; ++k) {
    best[k] = 0.0f;
    // (A query word the text holds itself is not looked for: its words match
    // it, and its neighbourhoods would count it twice.)
    const long t = query_terms[k];
    wanted[k] = t >= 0 && std::find(own.begin(), own.end(), t) != own.end() ? -1 : t;
  }
  std::uint64_t mask[4];
  LowBits(wanted, n, mask);
  for (long index : own) MaxExpansionWeights(index, wanted, n, mask, best);
  double hit = 0;
  for (std::size_t k = 0; k < n; ++k) hit += query_weights[k] * best[k];
  return hit / all;
}

void WordVectors::LowBits(const long* wanted, std::size_t n, std::uint64_t mask[4]) {
  mask[0] = mask[1] = mask[2] = mask[3] = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (wanted[k] < 0) continue;
    const auto bit = static_cast<std::uint64_t>(wanted[k]) & 255;
    mask[bit >> 6] |= std::uint64_t{1} << (bit & 63);
  }
}

void WordVectors::MaxExpansionWeights(long index, const long* wanted, std::size_t n,
                                      const std::uint64_t mask[4], float* best) const {
  if (index < 0 || static_cast<std::size_t>(index) >= count_ || !has_expansions()) return;
  const auto i = static_cast<std::size_t>(index);
  for (std::uint32_t e = exp_offsets_[i]; e < exp_offsets_[i + 1]; ++e) {
    const std::uint32_t neighbour = exp_entries_[e] >> 8;
    if ((mask[(neighbour & 255) >> 6] >> (neighbour & 63) & 1) == 0) continue;  // most miss
    for (std::size_t k = 0; k < n; ++k) {
      if (wanted[k] >= 0 && static_cast<std::uint32_t>(wanted[k]) == neighbour) {
        best[k] = std::max(best[k], static_cast<float>(exp_entries_[e] & 0xFF) / 255.0f);
      }
    }
  }
}

void WordVectors::ExpansionWeights(long index, const long* wanted, std::size_t n,
                                   float* best) const {
  for (std::size_t k = 0; k < n; ++k) best[k] = 0.0f;
  std::uint64_t mask[4];
  LowBits(wanted, n, mask);
  MaxExpansionWeights(index, wanted, n, mask, best);
}

ExpansionMatcher::ExpansionMatcher(const WordVectors& words, std::vector<long> query_terms,
                                   std::vector<double> query_weights)
    : words_(words), terms_(std::move(query_terms)), weights_(std::move(query_weights)) {
  for (double w : weights_) all_ += w;
  n_ = std::min(terms_.size(), weights_.size());
  best_.resize(n_);
  if (n_ > 0 && words_.has_expansions()) row_of_.assign(words_.terms(), 0);
}

const float* ExpansionMatcher::Row(long index) {
  std::uint32_t& slot = row_of_[static_cast<std::size_t>(index)];
  if (slot == 0) {
    const std::size_t at = rows_.size();
    rows_.resize(at + n_);
    words_.ExpansionWeights(index, terms_.data(), n_, rows_.data() + at);
    if (std::all_of(rows_.begin() + static_cast<std::ptrdiff_t>(at), rows_.end(),
                    [](float w) { return w == 0.0f; })) {
      rows_.resize(at);
      slot = 1;
    } else {
      slot = static_cast<std::uint32_t>(at / std::max<std::size_t>(n_, 1) + 2);
    }
  }
  return slot == 1 ? nullptr : rows_.data() + static_cast<std::size_t>(slot - 2) * n_;
}

double ExpansionMatcher::Match(const std::vector<long>& own) {
  if (all_ <= 0 || !words_.has_expansions()) return 0.0;
  for (std::size_t k = 0; k < n_; ++k) best_[k] = 0.0f;
  for (long index : own) {
    if (index < 0 || static_cast<std::size_t>(index) >= words_.terms()) continue;
    const float* row = Row(index);
    if (row == nullptr) continue;
    for (std::size_t k = 0; k < n_; ++k) best_[k] = std::max(best_[k], row[k]);
  }
  double hit = 0;
  for (std::size_t k = 0; k < n_; ++k) {
    // (A query word the text holds itself is not looked for, as ExpansionMatch.)
    const long t = terms_[k];
    if (t >= 0 && std::find(own.begin(), own.end(), t) != own.end()) continue;
    hit += weights_[k] * best_[k];
  }
  return hit / all_;
}

std::string WordVectors::JoinNames(std::string_view text) const {
  return text::JoinNamesWrittenApart(text, [this](const std::string& joined) {
    const std::vector<std::string> t = text::Terms(joined);
    return t.size() == 1 && Find(t[0]) >= 0;
  });
}

std::string WordVectors::Meant(std::string_view text) const {
  return JoinNames(text::UserAsPronoun(text));
}

std::vector<long> WordVectors::KnownWords(const std::vector<std::string>& terms) const {
  std::vector<long> out, known;
  for (const auto& t : terms) {
    known.clear();
    Lookup(t, known);
    for (long i : known) {
      if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
    }
  }
  return out;
}

std::vector<float> WordVectors::MeanOf(const std::vector<long>& known) const {
  if (known.empty()) return {};
  std::vector<float> acc(static_cast<std::size_t>(dim_), 0.0f);
  for (long i : known) AddTo(i, weights_[i], acc);
  Normalise(acc);
  return acc;
}

std::vector<float> WordVectors::TextVector(std::string_view text) const { return TextVector(text, nullptr); }

std::vector<float> WordVectors::TextVector(std::string_view text,
                                           const std::function<float(const std::string&)>& idf) const {
  std::vector<float> acc(static_cast<std::size_t>(dim_), 0.0f);
  std::unordered_set<long> seen;
  std::vector<long> known;
  for (const auto& t : text::Terms(text)) {
    known.clear();
    Lookup(t, known);
    for (long i : known) {
      if (seen.insert(i).second) AddTo(i, idf ? weights_[i] * idf(t) : weights_[i], acc);
    }
  }
  if (seen.empty()) return {};
  Normalise(acc);
  return acc;
}

std::string_view WordVectors::Term(long index) const {
  if (index < 0 || static_cast<std::size_t>(index) >= count_) return {};
  const auto i = static_cast<std::size_t>(index);
  return {strings_ + offsets_[i], offsets_[i + 1] - offsets_[i]};
}

std::vector<std::pair<long, float>> WordVectors::Expansions(long index) const {
  std::vector<std::pair<long, float>> out;
  if (exp_count_ == 0 || index < 0 || static_cast<std::size_t>(index) >= count_) return out;
  const auto i = static_cast<std::size_t>(index);
  for (std::uint32_t e = exp_offsets_[i]; e < exp_offsets_[i + 1]; ++e) {
    const std::uint32_t x = exp_entries_[e];
    if ((x >> 8) >= count_) continue;
    out.emplace_back(static_cast<long>(x >> 8), static_cast<float>(x & 0xFF) / 255.0f);
  }
  return out;
}

float WordVectors::ExpansionWeight(long index, long neighbour) const {
  if (exp_count_ == 0 || index < 0 || neighbour < 0 || static_cast<std::size_t>(index) >= count_) return 0.0f;
  const auto i = static_cast<std::size_t>(index);
  const auto want = static_cast<std::uint32_t>(neighbour);
  for (std::uint32_t e = exp_offsets_[i]; e < exp_offsets_[i + 1]; ++e) {
    if ((exp_entries_[e] >> 8) == want) return static_cast<float>(exp_entries_[e] & 0xFF) / 255.0f;
  }
  return 0.0f;
}

float WordVectors::Similarity(std::string_view a, std::string_view b) const {
  const auto va = TextVector(a), vb = TextVector(b);
  if (va.empty() || vb.empty()) return 0.0f;
  float s = 0;
  for (std::size_t i = 0; i < va.size(); ++i) s += va[i] * vb[i];
  return s;
}

}  // namespace engram::wordvec
