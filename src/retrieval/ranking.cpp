#include "retrieval/ranking.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>

#include "core/text.hpp"
#include "core/wordnet.hpp"

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
  p.speaker_rival = o.speaker_rival;
  p.coverage = o.coverage;
  p.coverage_clause = o.coverage_clause;
  p.date = o.date;
  p.said_date = o.said_date;
  p.answer_type = o.answer_type;
  p.meaning = o.meaning;
  p.meaning_gate = o.meaning_gate;
  p.meaning_gate_unnamed = o.meaning_gate_unnamed;
  p.meaning_top = o.meaning_top;
  p.self_reference = o.self_reference;
  p.question = o.question;
  p.opener = o.opener;
  p.names = o.names;
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
      {"speaker_rival", &R::speaker_rival, 0, 1, false},
      {"coverage", &R::coverage, 0, 10, false},
      {"coverage_clause", &R::coverage_clause, 0, 1, false},
      {"date", &R::date, 0, 10, false},
      {"date_slack_days", &R::date_slack_days, 0, 366, false},
      {"said_date", &R::said_date, 0, 10, false},
      {"answer_type", &R::answer_type, 0, 10, false},
      {"meaning", &R::meaning, 0, 10, false},
      {"meaning_gate", &R::meaning_gate, 0, 1, false},
      {"meaning_gate_unnamed", &R::meaning_gate_unnamed, 0, 1, false},
      {"meaning_top", &R::meaning_top, 0, 1000, false},
      {"self_reference", &R::self_reference, 0, 1, false},
      {"question", &R::question, 0, 1, false},
      {"opener", &R::opener, 0, 10, false},
      {"names", &R::names, 0, 10, false},
      {"expansion", &R::expansion, 0, 1, false},
      {"expansion_max_df_share", &R::expansion_max_df_share, 0, 1, false},
      {"expansion_compound", &R::expansion_compound, 0, 1, false},
      {"stm_share", &R::stm_share, 0, 1, false},
      {"profile_share", &R::profile_share, 0, 1, false},
      {"facts_share", &R::facts_share, 0, 1, false},
      {"fact_cover", &R::fact_cover, 0, 1, false},
      {"recent_hours", &R::recent_hours, 0, 87600, false},
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

namespace {

constexpr std::size_t kMinMisspelt = 6;
// A guessed word weighs less than the question's own (a word the messages do
// not hold may be meant as it is). Measured on LoCoMo 0-4 when every unknown
// word was guessed: recall@10 0.8094 without the guess, 0.8090 at weight 1
// (adversarial 0.842 -> 0.838: "snakes" read as "snacks"), 0.8101 at 0.25
// and 0.5.
constexpr double kMisspeltWeight = 0.5;
// The clauses of a question QueryTerms tells apart at most (QueryTerm::clause).
constexpr std::uint8_t kMaxClauses = 4;
// A term's clause, within them whoever made the term.
std::size_t ClauseOf(const QueryTerm& t) {
  return std::min<std::size_t>(t.clause, kMaxClauses - 1);
}

// The term `held` holds that is one edit from `term` (a letter deleted,
// swapped with the next, changed or inserted), the one most messages hold
// (the first of those in that order); "" when none.
std::string NearestHeld(const std::string& term, const std::function<std::size_t(const std::string&)>& held) {
  std::string best, v;
  std::size_t best_df = 0;
  auto consider = [&](const std::string& c) {
    const std::size_t df = held(c);
    if (df > best_df) best = c, best_df = df;
  };
  for (std::size_t i = 0; i < term.size(); ++i) {
    v = term;
    v.erase(i, 1);
    consider(v);
    if (i + 1 < term.size()) {
      v = term;
      std::swap(v[i], v[i + 1]);
      consider(v);
    }
  }
  for (std::size_t i = 0; i <= term.size(); ++i) {
    for (char c = 'a'; c <= 'z'; ++c) {
      if (i < term.size() && c != term[i]) {
        v = term;
        v[i] = c;
        consider(v);
      }
      v = term;
      v.insert(v.begin() + static_cast<std::ptrdiff_t>(i), c);
      consider(v);
    }
  }
  return best;
}

// The particles of phrasal verbs that English also writes joined to the verb
// as a noun ("workout", "setup", "signup", "checkin", "hangout").
bool IsParticle(std::string_view w) {
  return w == "up" || w == "out" || w == "in" || w == "off" || w == "on" || w == "down" ||
         w == "over" || w == "back" || w == "away";
}

// A question word that begins a question's next clause after "and" ("...,
// and where did he race?").
bool IsQuestionWord(std::string_view w) {
  return w == "what" || w == "where" || w == "when" || w == "how" || w == "who" || w == "which" ||
         w == "why" || w == "whose";
}

}  // namespace

std::vector<QueryTerm> QueryTerms(const std::vector<std::string>& tokens,
                                  const std::function<std::size_t(const std::string&)>& held) {
  std::vector<QueryTerm> out;
  std::uint8_t clause = 0;
  auto add = [&](std::string t, double weight = 1.0) {
    if (std::none_of(out.begin(), out.end(), [&](const QueryTerm& q) { return q.term == t; })) {
      out.push_back({std::move(t), weight});
      out.back().clause = clause;
    }
  };
  auto plain = [](const std::string& t) {
    return std::all_of(t.begin(), t.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  };
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    if (i > 0 && tokens[i - 1] == "and" && IsQuestionWord(token) && clause < kMaxClauses - 1)
      ++clause;
    if (text::IsStopword(token)) continue;
    // (A short form asks for its full word, "fave" for "favorite": the
    // index holds that beside every short form, ForEachOtherTerm.)
    const std::string_view full = text::FullForm(token);
    const std::string whole = text::Stem(full.empty() ? token : full);
    const bool unknown = held && !held(whole);
    add(whole);
    if (!held) continue;
    // A word the messages never wrote stands for its parts: a hyphenated
    // one's ("dairy-free" for "dairy free"; one written whole is not split,
    // its parts would match every "free") and the word they make ("e-mail"
    // for "email"), or two words they hold that make it ("roadtrip" for
    // "road trip"; each of three letters or more).
    if (unknown && token.find('-') != std::string::npos) {
      text::ForEachHyphenPart(token, [&](std::string_view part) { add(text::Stem(part)); });
      std::string closed = token;  // "e-mail" for "email"
      closed.erase(std::remove(closed.begin(), closed.end(), '-'), closed.end());
      closed = text::Stem(closed);
      if (held(closed)) add(std::move(closed));
    } else if (unknown && plain(token)) {
      bool split = false;
      for (std::size_t k = 3; k + 3 <= token.size() && !split; ++k) {
        const std::string_view head = std::string_view(token).substr(0, k), tail = std::string_view(token).substr(k);
        if (text::IsStopword(head) || text::IsStopword(tail)) continue;
        std::string a = text::Stem(head), b = text::Stem(tail);
        if (held(a) && held(b)) {
          add(std::move(a));
          add(std::move(b));
          split = true;
        }
      }
      // Else, for a word of six letters or more that is no English word
      // either (WordNet's), a misspelling of a word they hold: one letter
      // left out, added, changed or two swapped ("funraiser", "persue").
      const wordnet::WordNet* wn = wordnet::WordNet::Default();
      if (!split && token.size() >= kMinMisspelt && (wn == nullptr || wn->BaseForms(token).empty())) {
        std::string near = NearestHeld(whole, held);
        if (!near.empty()) add(std::move(near), kMisspeltWeight);
      }
    }
    // Two words the messages also write as one ("ice cream" for "icecream"),
    // a verb and its particle too ("work out" for "workout", "sign up" for
    // "signup").
    if (i + 1 < tokens.size() && plain(token) && plain(tokens[i + 1]) &&
        (!text::IsStopword(tokens[i + 1]) || IsParticle(tokens[i + 1]))) {
      std::string joined = text::Stem(token + tokens[i + 1]);
      if (held(joined)) add(std::move(joined));
    }
  }
  return out;
}

std::vector<QueryTerm> QueryTerms(const std::string& query) { return QueryTerms(text::Tokenize(query)); }

namespace {

// Paged messages (documents 0 .. n_page-1) followed by STM messages, and
// the query's term ids in both indexes (looked up once).
struct Corpus {
  const ScopeIndex& idx;
  const StmMessages& stm;
  const std::vector<QueryTerm>& terms;
  std::size_t n_page = idx.message_docs.size();
  std::size_t n = n_page + stm.docs.size();
  std::vector<int> ids[2] = {TermIds(idx.messages, terms), TermIds(stm.index, terms)};
  // Each index with the offset of its documents and the query's ids in it.
  struct Part {
    const MessageIndex* index;
    std::size_t offset;
    const std::vector<int>* ids;
  };
  std::array<Part, 2> Parts() const { return {Part{&idx.messages, 0, &ids[0]}, Part{&stm.index, n_page, &ids[1]}}; }
  const TurnEntry& Entry(std::size_t d) const {
    return d < n_page ? idx.entries[idx.message_docs[d].entry] : stm.entries[stm.docs[d - n_page].entry];
  }
  int Side(std::size_t d) const { return d < n_page ? idx.message_docs[d].side : stm.docs[d - n_page].side; }
  const MessageDoc& Doc(std::size_t d) const { return d < n_page ? idx.message_docs[d] : stm.docs[d - n_page]; }
  std::uint32_t Kinds(std::size_t d) const {
    return d < n_page ? idx.messages.Kinds(static_cast<std::uint32_t>(d))
                      : stm.index.Kinds(static_cast<std::uint32_t>(d - n_page));
  }
};

// The documents holding `term`, ascending (postings are in document order).
std::vector<std::uint32_t> Holding(const Corpus& c, const std::string& term) {
  std::vector<std::uint32_t> out;
  for (const Corpus::Part& part : c.Parts()) {
    const int id = part.index->TermId(term);
    if (id < 0) continue;
    for (const auto& posting : part.index->Postings(id)) out.push_back(static_cast<std::uint32_t>(part.offset + posting.doc));
  }
  return out;
}

// Dense arrays over the corpus's documents, kept per thread and all zero
// between calls (a call resets what it wrote): a retrieval costs the
// messages that hold a query term and their neighbours, not every message of
// the scope (at 100k pages, zeroing and scanning 200,000 scores per array
// was most of the ranking).
struct Scratch {
  std::vector<double> lex, held;
  std::vector<std::uint8_t> seen;
  std::vector<std::uint32_t> said;  // own terms (bits) a message holds in words or in other words
  std::vector<std::uint32_t> touched;  // documents of the query terms' postings
  // Buffers of one call, kept for their capacity: at 100k pages a fresh
  // array of 200,000 entries per call came from new pages (page faults).
  std::vector<std::uint32_t> docs;
  std::vector<double> nb;
  std::vector<std::pair<double, std::size_t>> scored;
  std::vector<double> kept;  // (KeepBest)
  // (With room: a snapshot grows by a batch at a time, and growing these
  // arrays, 17 bytes a message, cost a retrieval after an update at 100k
  // pages 11 ms of fresh zeroed memory. Entries past `touched` are zero, so
  // growing needs no copy.)
  void Reserve(std::size_t n) {
    if (lex.size() >= n) return;
    const std::size_t room = n + n / 4;
    for (auto* v : {&lex, &held}) {
      v->clear();
      v->resize(room, 0.0);
    }
    said.clear();
    said.resize(room, 0);
    seen.clear();
    seen.resize(room, 0);
  }
  void Clear() {
    for (const std::uint32_t d : touched) {
      lex[d] = 0.0;
      held[d] = 0.0;
      seen[d] = 0;
      said[d] = 0;
    }
    touched.clear();
  }
};

// BM25F of every message for the query into lex (zero for the messages that
// hold no query term), and the messages holding one into s.touched.
// With `said`, the own terms (bits) each message holds in words or in other
// words into s.said: a term's own bit, and those it expands (QueryTerm::of).
void LexicalScores(const Corpus& c, const RankParams& p, bool said, Scratch& s) {
  const std::vector<QueryTerm>& terms = c.terms;
  CollectionStats stats = Stats(terms, {&c.idx.messages, &c.stm.index}, {&c.ids[0], &c.ids[1]});
  ScoreBm25(c.idx.messages, terms, stats, p.bm25, s.lex.data(), &c.ids[0]);
  ScoreBm25(c.stm.index, terms, stats, p.bm25, s.lex.data() + c.n_page, &c.ids[1]);
  for (std::size_t qi = 0; qi < terms.size(); ++qi) {
    const std::uint32_t bits =
        said ? (qi < 32 && terms[qi].Own() ? std::uint32_t{1} << qi : 0) | terms[qi].of : 0;
    for (const auto& [ix, offset, ids] : c.Parts()) {
      const int id = (*ids)[qi];
      if (id < 0) continue;
      for (const auto& post : ix->Postings(id)) {
        const auto d = static_cast<std::uint32_t>(offset + post.doc);
        s.said[d] |= bits;
        if (s.seen[d]) continue;
        s.seen[d] = 1;
        s.touched.push_back(d);
      }
    }
  }
}

// Scales each message's lexical score by 1 + weight x the share of the
// query's own words (by idf; expansions aside) that it holds: a message that
// holds "Anna", "pottery" and "class" beats one that repeats "class". A
// message holding an expansion that stands for own words (QueryTerm::covers:
// "taekwondo" for "martial arts") holds those words. In a question of
// several clauses (QueryTerm::clause) the share is at least clause_weight x
// the share of one clause's own words. Returns the largest
// share a message holds, its own words' expansions counted as the words
// (s.said; 0 when the query has no own word, or without `gate`): what the
// meaning gate reads.
double ApplyCoverage(const Corpus& c, double weight, double clause_weight, bool gate, Scratch& s) {
  std::vector<QueryTerm> own;
  std::vector<std::size_t> own_at;  // index in c.terms
  std::vector<int> own_ids[2];
  for (std::size_t qi = 0; qi < c.terms.size(); ++qi) {
    if (!c.terms[qi].Own()) continue;
    own.push_back(c.terms[qi]);
    own_at.push_back(qi);
    for (int k = 0; k < 2; ++k) own_ids[k].push_back(c.ids[k][qi]);
  }
  if (own.empty()) return 0.0;
  const CollectionStats stats = Stats(own, {&c.idx.messages, &c.stm.index}, {&own_ids[0], &own_ids[1]});
  double total = 0;
  for (double idf : stats.idf) total += idf;
  if (total <= 0) return 0.0;
  double* held = s.held.data();
  std::uint32_t covered = 0;  // the own words (bits) an expansion stands for
  for (const QueryTerm& t : c.terms) covered |= t.covers;
  std::vector<std::uint32_t> docs;  // of an own word with expansions standing for it
  // A question of several clauses: a message's share is at least
  // clause_weight x the share of one clause's own words it holds (a message
  // that answers one clause holds all of it and little of the others): the
  // own words (bits, the first 32) each message holds.
  std::size_t clauses = 1;
  double clause_total[kMaxClauses] = {};
  for (std::size_t qi = 0; qi < own.size() && qi < 32 && clause_weight > 0; ++qi) {
    clauses = std::max(clauses, ClauseOf(own[qi]) + 1);
    clause_total[ClauseOf(own[qi])] += stats.idf[qi];
  }
  std::vector<std::uint32_t> holds(clauses > 1 ? c.n : 0, 0);
  auto hold = [&](std::size_t qi, std::size_t d) {
    held[d] += stats.idf[qi];
    if (clauses > 1 && qi < 32) holds[d] |= std::uint32_t{1} << qi;
  };
  for (std::size_t qi = 0; qi < own.size(); ++qi) {
    const std::uint32_t bit = own_at[qi] < 32 ? std::uint32_t{1} << own_at[qi] : 0;
    if ((covered & bit) == 0) {
      int k = 0;
      for (const auto& [ix, offset, ids] : c.Parts()) {
        const int id = own_ids[k++][qi];
        if (id < 0) continue;
        for (const auto& post : ix->Postings(id)) hold(qi, offset + post.doc);
      }
      continue;
    }
    // (Each message once, however many of the terms it holds.)
    docs.clear();
    for (std::size_t ti = 0; ti < c.terms.size(); ++ti) {
      if (ti != own_at[qi] && (c.terms[ti].covers & bit) == 0) continue;
      for (const auto& [ix, offset, ids] : c.Parts()) {
        const int id = (*ids)[ti];
        if (id < 0) continue;
        for (const auto& post : ix->Postings(id))
          docs.push_back(static_cast<std::uint32_t>(offset + post.doc));
      }
    }
    std::sort(docs.begin(), docs.end());
    docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
    for (const std::uint32_t d : docs) hold(qi, d);
  }
  for (const std::uint32_t d : s.touched) {  // held is zero elsewhere
    if (held[d] <= 0) continue;
    double share = held[d] / total;
    if (clauses > 1) {
      double in[kMaxClauses] = {};
      for (std::size_t qi = 0; qi < own.size() && qi < 32; ++qi) {
        if ((holds[d] >> qi & 1) != 0) in[ClauseOf(own[qi])] += stats.idf[qi];
      }
      for (std::size_t k = 0; k < clauses; ++k) {
        if (clause_total[k] > 0) share = std::max(share, clause_weight * in[k] / clause_total[k]);
      }
    }
    s.lex[d] *= 1.0 + weight * share;
  }
  if (!gate) return 0.0;
  // The largest share a message holds in words or in other words (s.said,
  // made by LexicalScores).
  double best = 0.0;
  for (const std::uint32_t d : s.touched) {
    double share = 0.0;
    for (std::size_t qi = 0; qi < own.size(); ++qi) {
      if (own_at[qi] < 32 && (s.said[d] >> own_at[qi] & 1) != 0) share += stats.idf[qi];
    }
    best = std::max(best, share / total);
  }
  return best;
}

// The messages whose meaning a ranking reads at most, the newest (each
// costs a pass over its words' neighbourhoods and a dot product; made once
// per message and kept: MeaningOfTurn).
constexpr std::size_t kMeaningScan = 20000;
// The scopes, by messages, where a question naming no speaker has its own
// gate (RankingOptions::meaning_gate_unnamed): that gate opens for most such
// questions, and the meaning pass reads every message (about 0.4 us each
// with everyday words; 8 ms at 20,000 messages), which a larger scope's
// retrieval cannot afford on every question; there the one gate holds.
constexpr std::size_t kUnnamedScope = 2000;
// A cosine of word-vector means at or below this says nothing: unrelated
// texts' means lie about this near (the built-in vectors share what all
// words share).
constexpr double kMeaningFloor = 0.2;

// What a message means of the question (RankParams::meaning), over the words
// it does not share with it (the lexical score counts those): the share of
// the question's known words its words' WordNet neighbourhoods hold
// (WordVectors::ExpansionMatch: "curry" holds "dish"; through `matcher`,
// which searches each word's neighbourhood once per question), plus the cosine of
// the two means rescaled from [kMeaningFloor, 1] to [0, 1].
double MeaningScore(const QuestionMeaning& q, const MessageMeaning& m,
                    wordvec::ExpansionMatcher& matcher, std::vector<long>& unshared) {
  if (m.known.empty()) return 0.0;
  unshared.clear();
  for (const std::int32_t i : m.known) {
    if (std::find(q.terms.begin(), q.terms.end(), i) == q.terms.end()) unshared.push_back(i);
  }
  if (unshared.empty()) return 0.0;
  const double match = matcher.Match(unshared);
  double cosine = 0.0;
  if (unshared.size() == m.known.size()) {
    cosine = wordvec::Dot(q.mean, m.mean);
  } else {  // (a message sharing a word: the mean of the others, made here)
    const std::vector<float> mean = q.words->MeanOf(unshared);
    for (std::size_t k = 0; k < mean.size() && k < q.mean.size(); ++k)
      cosine += static_cast<double>(mean[k]) * q.mean[k];
  }
  return match + std::max(0.0, (cosine - kMeaningFloor) / (1.0 - kMeaningFloor));
}

// Zeroes all but the `top` largest positive values of `v` among the
// documents from `from` on without evidence of their own or their
// neighbours' (`nb`, per document: their meaning is all they have; ties at
// the last kept value are kept; 0 = all kept), with `work` as scratch space.
// (Before `from` every value is zero: the meaning pass reads the newest.)
void KeepBest(std::vector<double>& v, const std::vector<double>& nb, std::size_t from,
              std::size_t top, std::vector<double>& work) {
  if (top == 0) return;
  work.clear();
  for (std::size_t d = from; d < v.size(); ++d) {
    if (v[d] > 0 && nb[d] == 0.0) work.push_back(v[d]);
  }
  if (work.size() <= top) return;
  const auto nth = work.begin() + static_cast<std::ptrdiff_t>(top - 1);
  std::nth_element(work.begin(), nth, work.end(), std::greater<>());
  const double least = *nth;
  for (std::size_t d = from; d < v.size(); ++d) {
    if (v[d] < least && nb[d] == 0.0) v[d] = 0.0;
  }
}

// The documents whose score can be positive without vectors: those with
// lexical evidence and their neighbours up to `reach` steps away, ascending.
std::vector<std::uint32_t> Candidates(const Scratch& s, std::size_t n, std::size_t reach) {
  std::vector<std::uint32_t> hits;
  for (const std::uint32_t d : s.touched) {
    if (s.lex[d] != 0.0) hits.push_back(d);
  }
  std::sort(hits.begin(), hits.end());
  std::vector<std::uint32_t> out;
  out.reserve(hits.size() * (1 + 2 * reach));
  for (const std::uint32_t h : hits) {
    std::size_t from = h >= reach ? h - reach : 0;
    if (!out.empty() && from <= out.back()) from = out.back() + std::size_t{1};
    const std::size_t to = std::min(n - 1, h + reach);
    for (std::size_t d = from; d <= to; ++d) out.push_back(static_cast<std::uint32_t>(d));
  }
  return out;
}

// Lexical evidence plus a share of the best neighbouring messages' (1, 2 and
// 3 steps away in the dialogue, within the time gap), for each document of
// `docs`: topics span several consecutive messages.
void WithNeighbours(const Corpus& c, const double* lex, const std::vector<std::uint32_t>& docs,
                    const RankParams& p, std::vector<double>& nb) {
  nb.resize(docs.size());
  const double w[4] = {0.0, p.neighbour, p.neighbour2, p.neighbour3};
  const double gap_ms = p.gap_minutes * 60000.0;
  auto near = [&](std::size_t a, std::size_t b) {
    if (gap_ms <= 0) return true;
    double dt = static_cast<double>(c.Doc(a).time - c.Doc(b).time);
    return dt <= gap_ms && -dt <= gap_ms;
  };
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const std::size_t d = docs[i];
    nb[i] = lex[d];
    for (std::size_t k = 1; k <= 3; ++k) {
      if (w[k] <= 0) continue;
      // (near() only for a neighbour with evidence: most messages have none)
      double prev = d >= k && lex[d - k] != 0.0 && near(d, d - k) ? lex[d - k] : 0.0;
      double next = d + k < c.n && lex[d + k] != 0.0 && near(d, d + k) ? lex[d + k] : 0.0;
      nb[i] += w[k] * (p.neighbour_sum > 0 ? prev + next : std::max(prev, next));
    }
  }
}

// Whether a word of the query is a speaker's name of the scope (one or more
// speakers: "What did Caroline and Melanie ...?" names two).
bool NamesASpeaker(const Corpus& c) {
  for (std::size_t qi = 0; qi < c.terms.size(); ++qi) {
    if (!c.terms[qi].Own()) continue;
    for (const auto& [ix, offset, ids] : c.Parts()) {
      const int id = (*ids)[qi];
      if (id >= 0 && ix->InNames(id)) return true;
    }
  }
  return false;
}

// The messages written by the one speaker the query names, as a mask over the
// corpus: a query term is a name when messages hold it in their name field.
// Empty when the query names no speaker, or names several (its terms are in
// the names of different speakers: "what do Anna and Ben both like?").
std::vector<bool> NamedSpeakerMessages(const Corpus& c) {
  std::vector<bool> mask;
  const std::string* speaker = nullptr;
  // The speaker's id in each index (kNoSpeaker: not known there yet).
  std::uint16_t speaker_id[2] = {MessageIndex::kNoSpeaker, MessageIndex::kNoSpeaker};
  for (std::size_t qi = 0; qi < c.terms.size(); ++qi) {
    if (!c.terms[qi].Own()) continue;  // an expansion or a guess, not a word of the query
    int part = 0;
    for (const auto& [ix, offset, ids] : c.Parts()) {
      const int k = part++;
      const int id = (*ids)[qi];
      if (id < 0) continue;
      for (const auto& post : ix->Postings(id)) {
        if (post.name_tf == 0) continue;
        const std::size_t d = offset + post.doc;
        const std::uint16_t sid = c.Doc(d).speaker;
        if (speaker && sid != MessageIndex::kNoSpeaker && sid == speaker_id[k]) {
          mask[d] = true;  // the same speaker, by id
          continue;
        }
        const std::string& name = sid != MessageIndex::kNoSpeaker ? ix->Speaker(sid) : SpeakerName(c.Entry(d), c.Side(d));
        if (!speaker) {
          speaker = &name;
          mask.assign(c.n, false);
        } else if (name != *speaker) {
          return {};
        }
        if (sid != MessageIndex::kNoSpeaker) speaker_id[k] = sid;
        mask[d] = true;
      }
    }
  }
  return mask;
}

// The query terms each ranked message holds (text or speaker name) and the
// idf share of the question's own words among them, an own word held by an
// expansion that stands for it too, and in a question of several clauses at
// least clause_weight x one clause's (explanations only; ApplyCoverage's).
void ExplainTerms(const Corpus& c, std::vector<RankedMessage>& out, double clause_weight) {
  const std::vector<QueryTerm>& terms = c.terms;
  const CollectionStats stats = Stats(terms, {&c.idx.messages, &c.stm.index}, {&c.ids[0], &c.ids[1]});
  double own_total = 0;
  double clause_total[kMaxClauses] = {};
  for (std::size_t qi = 0; qi < terms.size(); ++qi) {
    if (!terms[qi].Own()) continue;
    own_total += stats.idf[qi];
    clause_total[ClauseOf(terms[qi])] += stats.idf[qi];
  }
  for (auto& m : out) {
    std::set<std::string> held;  // as the index has them (scope_index's TermMaker)
    const std::string_view texts[2] = {m.entry->texts[m.side], SpeakerName(*m.entry, m.side)};
    for (const std::string_view said : texts) {
      text::ForEachToken(said, [&](std::string_view token) {
        if (!text::IsStopword(token)) held.insert(text::Stem(token));
        ForEachOtherTerm(token, [&](std::string t) { held.insert(std::move(t)); });
      });
    }
    double own = 0;
    double in[kMaxClauses] = {};
    std::uint32_t covered =
        0;  // own words (bits of their indexes) held by an expansion standing for them
    for (std::size_t qi = 0; qi < terms.size(); ++qi) {
      if (held.count(terms[qi].term)) covered |= terms[qi].covers;
    }
    for (std::size_t qi = 0; qi < terms.size(); ++qi) {
      const bool is_held = held.count(terms[qi].term) > 0;
      if (is_held)
        m.why.matched_terms.push_back({terms[qi].term, terms[qi].weight, terms[qi].expansion});
      if (terms[qi].Own() && (is_held || (qi < 32 && ((covered >> qi) & 1) != 0))) {
        own += stats.idf[qi];
        in[ClauseOf(terms[qi])] += stats.idf[qi];
      }
    }
    m.why.coverage = own_total > 0 ? own / own_total : 0.0;
    for (std::size_t k = 0; k < kMaxClauses && clause_weight > 0; ++k) {
      if (clause_total[k] > 0 && clause_total[k] < own_total)
        m.why.coverage = std::max(m.why.coverage, clause_weight * in[k] / clause_total[k]);
    }
  }
}

// The factor of a message's own cues (RankParams::question, opener, names),
// for each combination of them, made once per ranking: a multiplication per
// scored message.
class CueFactors {
 public:
  explicit CueFactors(const RankParams& p) {
    for (int asks = 0; asks < 2; ++asks) {
      for (int opens = 0; opens < 2; ++opens) {
        for (int names = 0; names <= kMaxNamedWords; ++names) {
          f_[asks][opens][names] = (asks ? 1.0 - p.question : 1.0) * (opens ? 1.0 + p.opener : 1.0) *
                                   (1.0 + p.names * names / kMaxNamedWords);
        }
      }
    }
  }
  double Of(const Corpus& c, std::size_t d) const {
    const MessageDoc& doc = c.Doc(d);
    bool opens = doc.opens;
    // (The first STM message was indexed without the pages before it.)
    if (d == c.n_page && d > 0) opens = doc.time - c.Doc(d - 1).time > kSessionGapMs;
    return f_[doc.asks][opens ? 1 : 0][doc.names];
  }

 private:
  double f_[2][2][kMaxNamedWords + 1];
};

}  // namespace

std::vector<RankedMessage> RankMessages(const ScopeIndex& idx, const StmMessages& stm,
                                        const RankQuery& q, const RankParams& p, std::size_t limit) {
  const Corpus c{idx, stm, q.terms};
  const std::size_t n_page = c.n_page, n = c.n;
  thread_local Scratch scratch;
  scratch.Reserve(n);
  struct Reset {
    Scratch& s;
    ~Reset() { s.Clear(); }
  } reset{scratch};
  const double* lex = scratch.lex.data();

  // Meaning, where no message holds meaning_gate of the question's own words
  // in words or in other words (the less they hold, the more it counts), or
  // meaning_gate_unnamed for a question naming no speaker in a scope of
  // kUnnamedScope messages at most; the question's meaning is made only
  // then.
  const double gate =
      p.meaning_gate_unnamed != p.meaning_gate && n <= kUnnamedScope && !NamesASpeaker(c)
          ? p.meaning_gate_unnamed
          : p.meaning_gate;
  const bool meaning_on = q.meaning_of != nullptr && p.meaning > 0 && gate > 0;
  LexicalScores(c, p, meaning_on, scratch);
  const double best_share =
      p.coverage > 0 || meaning_on
          ? ApplyCoverage(c, p.coverage, p.coverage_clause, meaning_on, scratch)
          : 0.0;
  const double opening = meaning_on ? std::max(0.0, 1.0 - best_share / gate) : 0.0;
  const QuestionMeaning* asked = opening > 0 ? q.meaning_of() : nullptr;
  const bool have_meaning = asked != nullptr && asked->words != nullptr && !asked->mean.empty();
  const double meaning_weight = have_meaning ? p.meaning * opening : 0.0;
  // The time cue and the named date, in one pass (lex is zero outside `touched`).
  const bool time_cue = q.asks_when && p.temporal > 0, named_date = !q.dates.empty() && p.date > 0;
  if (time_cue || named_date) {
    for (const std::uint32_t d : scratch.touched) {
      const MessageDoc& doc = c.Doc(d);
      if (time_cue && doc.dated) scratch.lex[d] *= 1.0 + p.temporal;
      if (named_date && q.dates.contains(doc.time)) scratch.lex[d] *= 1.0 + p.date;
    }
  }
  const bool have_vec = q.vector && !q.vector->empty() && p.vector > 0;
  // Without vectors only the documents with lexical evidence and their
  // neighbours can score above 0; with vectors every document can.
  std::vector<std::uint32_t>& docs = scratch.docs;
  docs.clear();
  // (Every document too when the query's postings cover much of the corpus,
  // as in a small scope: a pass over all is then cheaper than sorting hits.)
  if (have_vec || have_meaning || scratch.touched.size() * 8 >= n) {
    docs.resize(n);
    for (std::size_t d = 0; d < n; ++d) docs[d] = static_cast<std::uint32_t>(d);
  } else if (n > 0) {
    const std::size_t reach = p.neighbour3 > 0 ? 3 : p.neighbour2 > 0 ? 2 : p.neighbour > 0 ? 1 : 0;
    docs = Candidates(scratch, n, reach);
  }
  std::vector<double>& nb = scratch.nb;  // per docs[i]
  WithNeighbours(c, lex, docs, p, nb);
  const double max_nb = MaxScore(nb);

  // Vector similarity of each message's exchange.
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

  std::vector<double> meaning(have_meaning ? n : 0, 0.0);
  if (have_meaning) {
    wordvec::ExpansionMatcher matcher(*asked->words, asked->terms,
                                      std::vector<double>(asked->terms.size(), 1.0));
    std::vector<long> unshared;
    const std::size_t scan_from = n > kMeaningScan ? n - kMeaningScan : 0;
    for (std::size_t d = scan_from; d < n; ++d) {
      const TurnMeaning& t = MeaningOfTurn(c.Entry(d), *asked->words);
      meaning[d] = meaning_weight * MeaningScore(*asked, t.side[c.Side(d)], matcher, unshared);
    }
    // (nb is per document here: docs is every document.)
    KeepBest(meaning, nb, scan_from, static_cast<std::size_t>(p.meaning_top), scratch.kept);
  }
  std::vector<bool> by_speaker = p.speaker > 0 ? NamedSpeakerMessages(c) : std::vector<bool>{};
  double speaker = p.speaker;
  if (!by_speaker.empty()) {
    // Lexical scores are not negative, and zero outside `touched`.
    double named = 0.0, other = 0.0;  // the best of the named speaker's messages and of the others'
    for (const std::uint32_t d : scratch.touched) {
      double& best = by_speaker[d] ? named : other;
      best = std::max(best, lex[d]);
    }
    const double max_lex = std::max(named, other);
    if (other > named) speaker *= 1.0 - p.speaker_rival * (1.0 - named / other);
    for (const std::uint32_t d : scratch.touched) {
      if (lex[d] > 0 && lex[d] >= p.speaker_keep * max_lex) by_speaker[d] = true;
    }
  }
  const CueFactors cues(p);
  const bool said_date = !q.dates.empty() && p.said_date > 0;
  auto says_date = [&](std::size_t d) {
    return said_date && c.Doc(d).said && c.Entry(d).said[c.Side(d)].Meets(q.dates);
  };
  // The kind of thing the question asks for: a message naming one counts
  // more, unless it holds the question's noun itself (its words say so).
  const bool answer = q.answer_kind != 0 && p.answer_type > 0;
  const std::vector<std::uint32_t> naming = answer ? Holding(c, q.answer_term) : std::vector<std::uint32_t>{};
  auto of_answer_type = [&](std::size_t d) {
    return answer && (c.Kinds(d) & q.answer_kind) != 0 &&
           !std::binary_search(naming.begin(), naming.end(), static_cast<std::uint32_t>(d));
  };
  std::vector<std::pair<double, std::size_t>>& scored = scratch.scored;  // score, index into docs
  scored.clear();
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const std::size_t d = docs[i];
    double s = max_nb > 0 ? nb[i] / max_nb : 0.0;
    if (have_vec) s += p.vector * cos[d];
    if (have_meaning) s += meaning[d];
    if (!by_speaker.empty() && by_speaker[d]) {
      s *= 1.0 + speaker * (1.0 + p.self_reference * c.Doc(d).person / 100.0);
    }
    if (says_date(d)) s *= 1.0 + p.said_date;
    if (of_answer_type(d)) s *= 1.0 + p.answer_type;
    if (s > 0) scored.emplace_back(s * cues.Of(c, d), i);
  }
  // Best first; ties: newer first.
  auto better = [](const std::pair<double, std::size_t>& a, const std::pair<double, std::size_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second > b.second);
  };
  const std::size_t keep = std::min(scored.size(), limit);
  // The order is total (documents are unique): selecting the best `keep`
  // and sorting them gives what a partial sort gives, in linear time rather
  // than a heap over every scored document.
  const auto kept = scored.begin() + static_cast<std::ptrdiff_t>(keep);
  if (kept != scored.end()) std::nth_element(scored.begin(), kept, scored.end(), better);
  std::sort(scored.begin(), kept, better);
  std::vector<RankedMessage> out;
  out.reserve(keep);
  for (std::size_t i = 0; i < keep; ++i) {
    const std::size_t d = docs[scored[i].second];
    out.push_back({&c.Entry(d), c.Side(d), scored[i].first, {}});
    if (q.explain) {
      RankReasons& why = out.back().why;
      why.filled = true;
      why.lexical = lex[d];
      why.neighbour = nb[scored[i].second] - lex[d];
      why.vector = have_vec ? cos[d] : 0.0;
      why.time_cue = q.asks_when && p.temporal > 0 && c.Doc(d).dated;
      why.named_date = !q.dates.empty() && p.date > 0 && q.dates.contains(c.Doc(d).time);
      why.said_date = says_date(d);
      why.answer_type = of_answer_type(d);
      why.meaning = have_meaning ? meaning[d] : 0.0;
      why.speaker = !by_speaker.empty() && by_speaker[d];
      why.self_reference = c.Doc(d).person / 100.0;
      why.cues = cues.Of(c, d);
    }
  }
  if (q.explain) ExplainTerms(c, out, p.coverage_clause);
  return out;
}

}  // namespace engram::retrieval
