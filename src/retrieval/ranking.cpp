#include "retrieval/ranking.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <cstdlib>
#include <sstream>

#include "core/text.hpp"

namespace engram::retrieval {

namespace {

RankParams Tuned() {
  RankParams p;
  const char* env = std::getenv("ENGRAM_RANK");  // TUNING ONLY (removed before release)
  if (!env) return p;
  std::stringstream ss(env);
  std::string kv;
  while (std::getline(ss, kv, ',')) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string k = kv.substr(0, eq);
    double v = std::atof(kv.c_str() + eq + 1);
    if (k == "k1") p.bm25.k1 = v;
    if (k == "b") p.bm25.b = v;
    if (k == "name") p.bm25.name_weight = v;
    if (k == "nb") p.neighbour = v;
    if (k == "nb2") p.neighbour2 = v;
    if (k == "nbsum") p.neighbour_sum = v;
    if (k == "nb3") p.neighbour3 = v;
    if (k == "gap") p.gap_minutes = v;
    if (k == "prfd") p.prf_docs = v;
    if (k == "prft") p.prf_terms = v;
    if (k == "prfw") p.prf_weight = v;
    if (k == "vec") p.vector = v;
    if (k == "seg") p.segment = v;
    if (k == "short") p.short_len = v;
  }
  return p;
}

}  // namespace

const RankParams& DefaultRankParams() {
  static const RankParams p = Tuned();
  return p;
}

std::vector<QueryTerm> QueryTerms(const std::string& query) {
  std::vector<QueryTerm> out;
  for (auto& t : text::Terms(query)) {
    if (std::none_of(out.begin(), out.end(), [&](const QueryTerm& q) { return q.term == t; })) {
      out.push_back({std::move(t), 1.0});
    }
  }
  return out;
}

namespace {

// Paged messages (documents 0 .. n_page-1) followed by STM messages.
struct Corpus {
  const ScopeIndex& idx;
  const StmMessages& stm;
  std::size_t n_page = idx.message_docs.size();
  std::size_t n = n_page + stm.docs.size();
  const TurnEntry& Entry(std::size_t d) const {
    return d < n_page ? idx.entries[idx.message_docs[d].entry] : stm.entries[stm.docs[d - n_page].entry];
  }
  int Side(std::size_t d) const { return d < n_page ? idx.message_docs[d].side : stm.docs[d - n_page].side; }
  std::uint32_t Length(std::size_t d) const {
    return d < n_page ? idx.messages.Length(static_cast<std::uint32_t>(d))
                      : stm.index.Length(static_cast<std::uint32_t>(d - n_page));
  }
  const MessageIndex& Index(std::size_t d) const { return d < n_page ? idx.messages : stm.index; }
  std::uint32_t Local(std::size_t d) const {
    return static_cast<std::uint32_t>(d < n_page ? d : d - n_page);
  }
};

// BM25F of every message for the query.
std::vector<double> LexicalScores(const Corpus& c, const std::vector<QueryTerm>& terms, const RankParams& p) {
  std::vector<double> lex(c.n, 0.0);
  CollectionStats stats = Stats(terms, {&c.idx.messages, &c.stm.index});
  std::vector<double> part(c.n_page, 0.0);
  ScoreBm25(c.idx.messages, terms, stats, p.bm25, part);
  std::copy(part.begin(), part.end(), lex.begin());
  std::vector<double> s(c.stm.docs.size(), 0.0);
  ScoreBm25(c.stm.index, terms, stats, p.bm25, s);
  std::copy(s.begin(), s.end(), lex.begin() + static_cast<std::ptrdiff_t>(c.n_page));
  return lex;
}

// Lexical evidence plus a share of the best neighbouring messages' (1, 2 and
// 3 steps away in the dialogue, within the time gap): topics span several
// consecutive messages.
std::vector<double> WithNeighbours(const Corpus& c, const std::vector<double>& lex, const RankParams& p) {
  std::vector<double> nb(lex);
  const double w[4] = {0.0, p.neighbour, p.neighbour2, p.neighbour3};
  const double gap_ms = p.gap_minutes * 60000.0;
  auto near = [&](std::size_t a, std::size_t b) {
    if (gap_ms <= 0) return true;
    double dt = static_cast<double>(c.Entry(a).event_time - c.Entry(b).event_time);
    return dt <= gap_ms && -dt <= gap_ms;
  };
  for (std::size_t d = 0; d < c.n; ++d) {
    for (std::size_t k = 1; k <= 3; ++k) {
      if (w[k] <= 0) continue;
      double prev = d >= k && near(d, d - k) ? lex[d - k] : 0.0;
      double next = d + k < c.n && near(d, d + k) ? lex[d + k] : 0.0;
      nb[d] += w[k] * (p.neighbour_sum > 0 ? prev + next : std::max(prev, next));
    }
  }
  return nb;
}

// Pseudo-relevance feedback: the query plus the terms that weigh most (idf)
// in its best messages, at a reduced weight.
std::vector<QueryTerm> Expand(const Corpus& c, const std::vector<QueryTerm>& query,
                              const std::vector<double>& scores, const RankParams& p) {
  std::vector<std::size_t> top;
  for (std::size_t d = 0; d < c.n; ++d) {
    if (scores[d] > 0) top.push_back(d);
  }
  const std::size_t k = std::min<std::size_t>(top.size(), static_cast<std::size_t>(p.prf_docs));
  std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(k), top.end(),
                    [&](std::size_t a, std::size_t b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); });
  top.resize(k);
  std::unordered_map<std::string, double> weight;
  const double docs = static_cast<double>(c.n);
  for (std::size_t d : top) {
    const MessageIndex& ix = c.Index(d);
    for (int t : ix.DocTerms(c.Local(d))) {
      const std::string& term = ix.Term(t);
      double df = static_cast<double>(c.idx.messages.Df(term) + c.stm.index.Df(term));
      if (df < 2) continue;  // a term of one message only adds nothing
      weight[term] += std::log(1.0 + (docs - df + 0.5) / (df + 0.5)) * scores[d] / scores[top[0]];
    }
  }
  for (const auto& q : query) weight.erase(q.term);
  std::vector<std::pair<std::string, double>> cand(weight.begin(), weight.end());
  std::sort(cand.begin(), cand.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
  std::vector<QueryTerm> out = query;
  const std::size_t m = std::min<std::size_t>(cand.size(), static_cast<std::size_t>(p.prf_terms));
  for (std::size_t i = 0; i < m; ++i) {
    out.push_back({cand[i].first, p.prf_weight * cand[i].second / cand[0].second});
  }
  return out;
}

}  // namespace

std::vector<RankedMessage> RankMessages(const ScopeIndex& idx, const StmMessages& stm,
                                        const RankQuery& q, const RankParams& p, std::size_t limit) {
  const Corpus c{idx, stm};
  const std::size_t n_page = c.n_page, n = c.n;
  auto doc_entry = [&](std::size_t d) -> const TurnEntry& { return c.Entry(d); };
  auto doc_side = [&](std::size_t d) { return c.Side(d); };
  auto doc_len = [&](std::size_t d) { return c.Length(d); };

  std::vector<double> nb = WithNeighbours(c, LexicalScores(c, q.terms, p), p);
  if (p.prf_docs > 0 && p.prf_terms > 0 && p.prf_weight > 0) {
    nb = WithNeighbours(c, LexicalScores(c, Expand(c, q.terms, nb, p), p), p);
  }
  double max_nb = 0;
  for (double v : nb) max_nb = std::max(max_nb, v);

  // Vector similarity of each message's exchange.
  std::vector<double> cos(n, 0.0);
  const bool have_vec = q.vector && !q.vector->empty() && p.vector > 0;
  if (have_vec) {
    if (static_cast<int>(q.vector->size()) == idx.pages.dim()) {
      for (std::size_t r = 0; r < idx.pages.size(); ++r) {
        auto it = idx.page_entry.find(idx.pages.id(r));
        if (it == idx.page_entry.end()) continue;
        const TurnEntry& e = idx.entries[it->second];
        double c = idx.pages.ScoreRow(r, *q.vector);
        for (int side = 0; side < 2; ++side) {
          if (e.docs[side] >= 0) cos[static_cast<std::size_t>(e.docs[side])] = c;
        }
      }
    }
    for (std::size_t e = 0; e < stm.entries.size(); ++e) {
      if (e >= stm.vectors.size() || stm.vectors[e].size() != q.vector->size()) continue;
      double c = Dot(stm.vectors[e], *q.vector);
      for (int side = 0; side < 2; ++side) {
        int d = stm.entries[e].docs[side];
        if (d >= 0) cos[n_page + static_cast<std::size_t>(d)] = c;
      }
    }
  }

  std::vector<RankedMessage> out;
  for (std::size_t d = 0; d < n; ++d) {
    double s = max_nb > 0 ? nb[d] / max_nb : 0.0;
    if (have_vec) s += p.vector * cos[d];
    const TurnEntry& e = doc_entry(d);
    if (p.segment > 0 && e.segment_id != 0 && q.top_segments.count(e.segment_id)) s += p.segment;
    if (p.short_len > 0) {
      double len = doc_len(d);
      if (len < p.short_len) s *= 0.5 + 0.5 * len / p.short_len;
    }
    if (s <= 0) continue;
    out.push_back({&e, doc_side(d), s});
  }
  auto better = [](const RankedMessage& a, const RankedMessage& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.entry->seq != b.entry->seq) return a.entry->seq > b.entry->seq;
    return a.side > b.side;
  };
  if (out.size() > limit) {
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(limit), out.end(), better);
    out.resize(limit);
  } else {
    std::sort(out.begin(), out.end(), better);
  }
  return out;
}

}  // namespace engram::retrieval
