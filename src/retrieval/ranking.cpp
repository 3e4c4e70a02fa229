#include "retrieval/ranking.hpp"

#include <algorithm>
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

std::vector<RankedMessage> RankMessages(const ScopeIndex& idx, const StmMessages& stm,
                                        const RankQuery& q, const RankParams& p, std::size_t limit) {
  const std::size_t n_page = idx.message_docs.size();
  const std::size_t n = n_page + stm.docs.size();
  auto doc_entry = [&](std::size_t d) -> const TurnEntry& {
    return d < n_page ? idx.entries[idx.message_docs[d].entry] : stm.entries[stm.docs[d - n_page].entry];
  };
  auto doc_side = [&](std::size_t d) -> int {
    return d < n_page ? idx.message_docs[d].side : stm.docs[d - n_page].side;
  };
  auto doc_len = [&](std::size_t d) -> std::uint32_t {
    return d < n_page ? idx.messages.Length(static_cast<std::uint32_t>(d))
                      : stm.index.Length(static_cast<std::uint32_t>(d - n_page));
  };

  // Lexical evidence of each message.
  std::vector<double> lex(n, 0.0);
  CollectionStats stats = Stats(q.terms, {&idx.messages, &stm.index});
  {
    std::vector<double> part(n_page, 0.0);
    ScoreBm25(idx.messages, q.terms, stats, p.bm25, part);
    std::copy(part.begin(), part.end(), lex.begin());
    std::vector<double> s(stm.docs.size(), 0.0);
    ScoreBm25(stm.index, q.terms, stats, p.bm25, s);
    std::copy(s.begin(), s.end(), lex.begin() + static_cast<std::ptrdiff_t>(n_page));
  }
  // Neighbouring messages (the previous and next message of the dialogue).
  std::vector<double> nb(lex);
  if (p.neighbour > 0) {
    const double w[4] = {0.0, p.neighbour, p.neighbour2, p.neighbour3};
    const double gap_ms = p.gap_minutes * 60000.0;
    auto near = [&](std::size_t a, std::size_t b) {
      if (gap_ms <= 0) return true;
      double dt = static_cast<double>(doc_entry(a).event_time - doc_entry(b).event_time);
      return dt <= gap_ms && -dt <= gap_ms;
    };
    for (std::size_t d = 0; d < n; ++d) {
      for (std::size_t k = 1; k <= 3; ++k) {
        if (w[k] <= 0) continue;
        double prev = d >= k && near(d, d - k) ? lex[d - k] : 0.0;
        double next = d + k < n && near(d, d + k) ? lex[d + k] : 0.0;
        nb[d] += w[k] * (p.neighbour_sum > 0 ? prev + next : std::max(prev, next));
      }
    }
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
