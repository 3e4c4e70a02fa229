#include "cooccurrence.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "core/text.hpp"

namespace engram::wordvec_tool {

namespace {

constexpr int kLexFiles = 64;  // WordNet 3.0 has 45

// Accumulates one row in a dense scratch array (touched columns listed).
class RowAccumulator {
 public:
  explicit RowAccumulator(std::size_t cols) : acc_(cols, 0.0f) {}
  void Add(std::uint32_t c, double w) {
    if (acc_[c] == 0.0f) touched_.push_back(c);
    acc_[c] += static_cast<float>(w);
  }
  // Appends the row to m (sorted columns) and clears.
  void Emit(SparseMatrix& m) {
    std::sort(touched_.begin(), touched_.end());
    for (std::uint32_t c : touched_) {
      if (acc_[c] > 0.0f) {
        m.col.push_back(static_cast<std::int32_t>(c));
        m.val.push_back(acc_[c]);
      }
      acc_[c] = 0.0f;
    }
    touched_.clear();
    m.ptr.push_back(static_cast<std::int64_t>(m.col.size()));
  }

 private:
  std::vector<float> acc_;
  std::vector<std::uint32_t> touched_;
};

}  // namespace

std::vector<std::string> VectorTerms(const WordNetGraph& wn) {
  std::unordered_map<std::string, int> gloss_uses;
  for (const auto& s : wn.synsets())
    for (const auto& t : s.gloss_terms) ++gloss_uses[t];
  std::unordered_set<std::string> all;
  for (const auto& [stem, lemmas] : wn.stem_lemmas()) all.insert(stem);
  for (const auto& [t, n] : gloss_uses) {
    if (n >= 2) all.insert(t);
  }
  std::vector<std::string> out(all.begin(), all.end());
  std::sort(out.begin(), out.end());
  return out;
}

SparseMatrix BuildCooccurrence(const WordNetGraph& wn, const std::vector<std::string>& terms,
                               const CooccurrenceWeights& w) {
  const auto& syn = wn.synsets();
  const std::size_t nsyn = syn.size();
  std::unordered_map<std::string, std::uint32_t> row_of;
  for (std::size_t i = 0; i < terms.size(); ++i) row_of[terms[i]] = static_cast<std::uint32_t>(i);

  // Contributions keyed by synset: inverse gloss and collocation words.
  std::vector<std::vector<std::pair<std::uint32_t, float>>> extra(terms.size());
  for (std::size_t s = 0; s < nsyn; ++s) {
    const auto& g = syn[s].gloss_terms;
    if (g.empty()) continue;
    const double gw = w.inverse_gloss / std::sqrt(static_cast<double>(g.size()));
    for (const auto& t : g) {
      auto it = row_of.find(t);
      if (it != row_of.end()) extra[it->second].emplace_back(static_cast<std::uint32_t>(s), static_cast<float>(gw));
    }
  }
  for (const auto& [lemma, senses] : wn.lemma_senses()) {
    if (lemma.find('_') == std::string::npos || senses.empty()) continue;
    std::string words = lemma;
    std::replace(words.begin(), words.end(), '_', ' ');
    const auto parts = text::Terms(words);
    int rank = 0;
    for (std::uint32_t s : senses) {
      if (++rank > 3) break;
      for (const auto& p : parts) {
        auto it = row_of.find(p);
        if (it != row_of.end()) extra[it->second].emplace_back(s, static_cast<float>(w.collocation / rank));
      }
    }
  }

  SparseMatrix m;
  m.rows = static_cast<int>(terms.size());
  m.cols = static_cast<int>(nsyn) + kLexFiles;
  m.ptr.push_back(0);
  RowAccumulator acc(static_cast<std::size_t>(m.cols));
  std::vector<std::uint32_t> level, next;
  std::unordered_set<std::uint32_t> seen;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    auto lemmas = wn.stem_lemmas().find(terms[i]);
    if (lemmas != wn.stem_lemmas().end()) {
      for (const auto& lemma : lemmas->second) {
        int rank[4] = {0, 0, 0, 0};
        for (std::uint32_t s : wn.lemma_senses().at(lemma)) {
          const Synset& x = syn[s];
          const int r = ++rank[x.pos];
          if (r > w.max_rank) continue;
          const double base = 1.0 / r;
          acc.Add(s, base);
          acc.Add(static_cast<std::uint32_t>(nsyn + static_cast<std::size_t>(x.lexfile % kLexFiles)), base * w.lexfile);
          // Hypernyms, decayed per level.
          seen.clear();
          seen.insert(s);
          level = x.hypernyms;
          double d = w.hyper_decay;
          for (int depth = 1; depth <= w.hyper_levels && !level.empty(); ++depth, d *= w.hyper_decay) {
            next.clear();
            for (std::uint32_t h : level) {
              if (!seen.insert(h).second) continue;
              acc.Add(h, base * d);
              next.insert(next.end(), syn[h].hypernyms.begin(), syn[h].hypernyms.end());
            }
            level.swap(next);
          }
          const double hw = w.hyponym / std::sqrt(std::max(1.0, static_cast<double>(x.hyponyms.size()) / 4.0));
          for (std::uint32_t h : x.hyponyms) acc.Add(h, base * hw);
          for (std::uint32_t rel : x.related) {
            acc.Add(rel, base * w.related);
            for (std::uint32_t h : syn[rel].hypernyms) acc.Add(h, base * w.related * w.hyper_decay);
          }
          for (std::uint32_t p : x.parts) acc.Add(p, base * w.part);
          if (r <= 2 && !x.gloss_terms.empty()) {
            const double gw = base * w.gloss / std::sqrt(static_cast<double>(x.gloss_terms.size()));
            for (const auto& g : x.gloss_terms) {
              for (std::uint32_t gs : wn.FirstSenses(g)) {
                acc.Add(gs, gw);
                for (std::uint32_t h : syn[gs].hypernyms) acc.Add(h, gw * w.hyper_decay);
              }
            }
          }
        }
      }
    }
    for (const auto& [s, v] : extra[i]) acc.Add(s, v);
    acc.Emit(m);
  }

  // PPMI with smoothed context probabilities.
  std::vector<double> row_sum(static_cast<std::size_t>(m.rows), 0.0), col_sum(static_cast<std::size_t>(m.cols), 0.0);
  double total = 0;
  for (int r = 0; r < m.rows; ++r) {
    for (auto p = m.ptr[static_cast<std::size_t>(r)]; p < m.ptr[static_cast<std::size_t>(r) + 1]; ++p) {
      const double v = m.val[static_cast<std::size_t>(p)];
      row_sum[static_cast<std::size_t>(r)] += v;
      col_sum[static_cast<std::size_t>(m.col[static_cast<std::size_t>(p)])] += v;
      total += v;
    }
  }
  double smoothed_total = 0;
  std::vector<double> col_p(col_sum.size());
  for (std::size_t c = 0; c < col_sum.size(); ++c) {
    col_p[c] = std::pow(col_sum[c], w.smoothing);
    smoothed_total += col_p[c];
  }
  for (double& p : col_p) p /= smoothed_total;
  SparseMatrix out;
  out.rows = m.rows;
  out.cols = m.cols;
  out.ptr.push_back(0);
  for (int r = 0; r < m.rows; ++r) {
    const double pr = row_sum[static_cast<std::size_t>(r)] / total;
    for (auto p = m.ptr[static_cast<std::size_t>(r)]; p < m.ptr[static_cast<std::size_t>(r) + 1]; ++p) {
      const auto c = static_cast<std::size_t>(m.col[static_cast<std::size_t>(p)]);
      const double pmi = std::log((m.val[static_cast<std::size_t>(p)] / total) / (pr * col_p[c]));
      if (pmi > 0) {
        out.col.push_back(static_cast<std::int32_t>(c));
        out.val.push_back(static_cast<float>(pmi));
      }
    }
    out.ptr.push_back(static_cast<std::int64_t>(out.col.size()));
  }
  return out;
}

}  // namespace engram::wordvec_tool
