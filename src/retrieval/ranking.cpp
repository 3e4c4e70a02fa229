#include "retrieval/ranking.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "core/text.hpp"

namespace engram::retrieval {

const RankParams& DefaultRankParams() {
  static const RankParams p = RankParamsFrom(RankingOptions{});
  return p;
}

RankParams RankParamsFrom(const RankingOptions& o) {
  RankParams p;
  p.bm25 = {o.bm25_k1, o.bm25_b, o.name_weight};
  p.neighbour = o.neighbour;
  p.neighbour2 = o.neighbour2;
  p.neighbour3 = o.neighbour3;
  p.gap_minutes = o.neighbour_gap_minutes;
  p.vector = o.vector;
  p.temporal = o.temporal;
  p.speaker = o.speaker;
  p.speaker_keep = o.speaker_keep;
  p.coverage = o.coverage;
  p.date = o.date;
  return p;
}

const std::vector<RankingField>& RankingFields() {
  using R = RankingOptions;
  static const std::vector<RankingField> fields = {
      {"bm25_k1", &R::bm25_k1, 0, 10, true},
      {"bm25_b", &R::bm25_b, 0, 1, false},
      {"name_weight", &R::name_weight, 0, 10, false},
      {"neighbour", &R::neighbour, 0, 10, false},
      {"neighbour2", &R::neighbour2, 0, 10, false},
      {"neighbour3", &R::neighbour3, 0, 10, false},
      {"neighbour_gap_minutes", &R::neighbour_gap_minutes, 0, 525600, false},
      {"vector", &R::vector, 0, 10, false},
      {"temporal", &R::temporal, 0, 10, false},
      {"speaker", &R::speaker, 0, 10, false},
      {"speaker_keep", &R::speaker_keep, 0, 1, false},
      {"coverage", &R::coverage, 0, 10, false},
      {"date", &R::date, 0, 10, false},
      {"date_slack_days", &R::date_slack_days, 0, 366, false},
      {"expansion", &R::expansion, 0, 1, false},
      {"expansion_max_df_share", &R::expansion_max_df_share, 0, 1, false},
      {"stm_share", &R::stm_share, 0, 1, false},
      {"profile_share", &R::profile_share, 0, 1, false},
      {"facts_share", &R::facts_share, 0, 1, false},
  };
  return fields;
}

std::string RankingValueError(const RankingField& f, double v) {
  const bool low = f.open_lo ? !(v > f.lo) : !(v >= f.lo);
  if (std::isfinite(v) && !low && v <= f.hi) return "";
  std::ostringstream range;
  range << "must be a number in " << (f.open_lo ? "(" : "[") << f.lo << ", " << f.hi << "]";
  return range.str();
}

Status CheckRetrieveOptions(const RetrieveOptions& o) {
  if (o.budget_tokens < 0) return Status::InvalidArgument("budget: must not be negative");
  if (o.max_pages < 0) return Status::InvalidArgument("max_pages: must not be negative");
  if (o.max_segments < 0) return Status::InvalidArgument("max_segments: must not be negative");
  if (o.max_facts < 0) return Status::InvalidArgument("max_facts: must not be negative");
  const RankingOptions& r = o.ranking;
  for (const RankingField& f : RankingFields()) {
    std::string why = RankingValueError(f, r.*f.member);
    if (!why.empty()) return Status::InvalidArgument(std::string("ranking.") + f.name + ": " + why);
  }
  if (r.stm_share + r.profile_share + r.facts_share > 1.0 + 1e-9) {
    return Status::InvalidArgument("ranking: stm_share + profile_share + facts_share must not exceed 1");
  }
  return Status::Ok();
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
  const MessageDoc& Doc(std::size_t d) const { return d < n_page ? idx.message_docs[d] : stm.docs[d - n_page]; }
};

// BM25F of every message for the query.
std::vector<double> LexicalScores(const Corpus& c, const std::vector<QueryTerm>& terms, const RankParams& p) {
  std::vector<double> lex(c.n, 0.0);
  CollectionStats stats = Stats(terms, {&c.idx.messages, &c.stm.index});
  ScoreBm25(c.idx.messages, terms, stats, p.bm25, lex.data());
  ScoreBm25(c.stm.index, terms, stats, p.bm25, lex.data() + c.n_page);
  return lex;
}

// Scales each message's lexical score by 1 + weight x the share of the
// query's own words (by idf; expansions aside) that it holds: a message that
// holds "Anna", "pottery" and "class" beats one that repeats "class".
void ApplyCoverage(const Corpus& c, const std::vector<QueryTerm>& terms, double weight, std::vector<double>& lex) {
  std::vector<QueryTerm> own;
  for (const auto& t : terms) {
    if (t.weight >= 1.0) own.push_back(t);
  }
  if (own.empty()) return;
  const CollectionStats stats = Stats(own, {&c.idx.messages, &c.stm.index});
  double total = 0;
  for (double idf : stats.idf) total += idf;
  if (total <= 0) return;
  std::vector<double> held(c.n, 0.0);
  for (std::size_t qi = 0; qi < own.size(); ++qi) {
    for (const auto& [ix, offset] : {std::pair{&c.idx.messages, std::size_t{0}}, {&c.stm.index, c.n_page}}) {
      const int id = ix->TermId(own[qi].term);
      if (id < 0) continue;
      for (const auto& post : ix->Postings(id)) held[offset + post.doc] += stats.idf[qi];
    }
  }
  for (std::size_t d = 0; d < c.n; ++d) {
    if (held[d] > 0) lex[d] *= 1.0 + weight * held[d] / total;
  }
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
    double dt = static_cast<double>(c.Doc(a).time - c.Doc(b).time);
    return dt <= gap_ms && -dt <= gap_ms;
  };
  for (std::size_t d = 0; d < c.n; ++d) {
    for (std::size_t k = 1; k <= 3; ++k) {
      if (w[k] <= 0) continue;
      // (near() only for a neighbour with evidence: most messages have none)
      double prev = d >= k && lex[d - k] != 0.0 && near(d, d - k) ? lex[d - k] : 0.0;
      double next = d + k < c.n && lex[d + k] != 0.0 && near(d, d + k) ? lex[d + k] : 0.0;
      nb[d] += w[k] * (p.neighbour_sum > 0 ? prev + next : std::max(prev, next));
    }
  }
  return nb;
}

// The messages written by the one speaker the query names, as a mask over the
// corpus: a query term is a name when messages hold it in their name field.
// Empty when the query names no speaker, or names several (its terms are in
// the names of different speakers: "what do Anna and Ben both like?").
std::vector<bool> NamedSpeakerMessages(const Corpus& c, const std::vector<QueryTerm>& terms) {
  std::vector<bool> mask;
  const std::string* speaker = nullptr;
  for (const auto& t : terms) {
    if (t.weight < 1.0) continue;  // an expansion (weighted below 1), not a word of the query
    for (const auto& [ix, offset] : {std::pair{&c.idx.messages, std::size_t{0}}, {&c.stm.index, c.n_page}}) {
      const int id = ix->TermId(t.term);
      if (id < 0) continue;
      for (const auto& post : ix->Postings(id)) {
        if (post.name_tf == 0) continue;
        const std::size_t d = offset + post.doc;
        const std::string& name = SpeakerName(c.Entry(d), c.Side(d));
        if (!speaker) {
          speaker = &name;
          mask.assign(c.n, false);
        } else if (name != *speaker) {
          return {};
        }
        mask[d] = true;
      }
    }
  }
  return mask;
}

// The query terms each ranked message holds (text or speaker name) and the
// idf share of the question's own words among them (explanations only).
void ExplainTerms(const Corpus& c, const std::vector<QueryTerm>& terms, std::vector<RankedMessage>& out) {
  const CollectionStats stats = Stats(terms, {&c.idx.messages, &c.stm.index});
  double own_total = 0;
  for (std::size_t qi = 0; qi < terms.size(); ++qi) {
    if (terms[qi].weight >= 1.0) own_total += stats.idf[qi];
  }
  for (auto& m : out) {
    std::set<std::string> held;
    for (auto& t : text::Terms(m.entry->texts[m.side])) held.insert(std::move(t));
    for (auto& t : text::Terms(SpeakerName(*m.entry, m.side))) held.insert(std::move(t));
    double own = 0;
    for (std::size_t qi = 0; qi < terms.size(); ++qi) {
      if (!held.count(terms[qi].term)) continue;
      m.why.matched_terms.emplace_back(terms[qi].term, terms[qi].weight);
      if (terms[qi].weight >= 1.0) own += stats.idf[qi];
    }
    m.why.coverage = own_total > 0 ? own / own_total : 0.0;
  }
}

}  // namespace

bool AsksWhen(const std::string& query) {
  const auto tokens = text::Tokenize(query);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t == "when") return true;
    if ((t == "what" || t == "which") && i + 1 < tokens.size()) {
      const std::string& n = tokens[i + 1];
      if (n == "year" || n == "month" || n == "day" || n == "date" || n == "time" || n == "week") return true;
    }
    if (t == "how" && i + 1 < tokens.size() && tokens[i + 1] == "long") return true;
  }
  return false;
}

std::vector<RankedMessage> RankMessages(const ScopeIndex& idx, const StmMessages& stm,
                                        const RankQuery& q, const RankParams& p, std::size_t limit) {
  const Corpus c{idx, stm};
  const std::size_t n_page = c.n_page, n = c.n;

  std::vector<double> lex = LexicalScores(c, q.terms, p);
  if (p.coverage > 0) ApplyCoverage(c, q.terms, p.coverage, lex);
  if (q.asks_when && p.temporal > 0) {
    for (std::size_t d = 0; d < n; ++d) {
      if (c.Doc(d).dated) lex[d] *= 1.0 + p.temporal;
    }
  }
  if (!q.dates.empty() && p.date > 0) {
    for (std::size_t d = 0; d < n; ++d) {
      if (lex[d] != 0.0 && q.dates.contains(c.Doc(d).time)) lex[d] *= 1.0 + p.date;
    }
  }
  std::vector<double> nb = WithNeighbours(c, lex, p);
  const double max_nb = MaxScore(nb);

  // Vector similarity of each message's exchange.
  const bool have_vec = q.vector && !q.vector->empty() && p.vector > 0;
  std::vector<double> cos(have_vec ? n : 0, 0.0);
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

  std::vector<bool> by_speaker = p.speaker > 0 ? NamedSpeakerMessages(c, q.terms) : std::vector<bool>{};
  if (!by_speaker.empty()) {
    const double max_lex = *std::max_element(lex.begin(), lex.end());
    for (std::size_t d = 0; d < n; ++d) {
      if (lex[d] > 0 && lex[d] >= p.speaker_keep * max_lex) by_speaker[d] = true;
    }
  }
  std::vector<std::pair<double, std::size_t>> scored;  // score, doc
  for (std::size_t d = 0; d < n; ++d) {
    double s = max_nb > 0 ? nb[d] / max_nb : 0.0;
    if (have_vec) s += p.vector * cos[d];
    if (!by_speaker.empty() && by_speaker[d]) s *= 1.0 + p.speaker;
    if (s > 0) scored.emplace_back(s, d);
  }
  // Best first; ties: newer first.
  auto better = [](const std::pair<double, std::size_t>& a, const std::pair<double, std::size_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second > b.second);
  };
  const std::size_t keep = std::min(scored.size(), limit);
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(keep), scored.end(), better);
  std::vector<RankedMessage> out;
  for (std::size_t i = 0; i < keep; ++i) {
    const std::size_t d = scored[i].second;
    out.push_back({&c.Entry(d), c.Side(d), scored[i].first, {}});
    if (q.explain) {
      RankReasons& why = out.back().why;
      why.filled = true;
      why.lexical = lex[d];
      why.neighbour = nb[d] - lex[d];
      why.vector = have_vec ? cos[d] : 0.0;
      why.time_cue = q.asks_when && p.temporal > 0 && c.Doc(d).dated;
      why.speaker = !by_speaker.empty() && by_speaker[d];
    }
  }
  if (q.explain) ExplainTerms(c, q.terms, out);
  return out;
}

}  // namespace engram::retrieval
