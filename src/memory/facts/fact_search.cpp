// Search of the fact store (declared in fact_query.hpp): the best vector
// matches from the in-memory snapshots (FactVectors) and the best FTS5 bm25
// matches of the index, checked against the scope, visibility and filter
// conditions inside the store's query (the ids among the candidates that pass:
// the heads first, then the rest when the filter removed too many, then the
// exact filtered queries, so results are never short because of filters);
// entity matches joined with the conditions; then ONE fetch of the candidate
// rows.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/answer_class.hpp"
#include "core/text.hpp"
#include "core/time.hpp"
#include "core/wordnet.hpp"
#include "memory/facts/fact_filter.hpp"
#include "memory/facts/fact_query.hpp"
#include "memory/facts/fact_sql.hpp"
#include "memory/facts/fact_store.hpp"
#include "memory/facts/fact_text.hpp"
#include "memory/scope_store.hpp"
#include "store/facts_entities.hpp"
#include "store/facts_fts.hpp"

namespace engram::memory::facts {

namespace {

constexpr int kMaxLimit = 1000;
constexpr int kMaxEntityRows = 2000;
// Candidates checked against the conditions per one wanted: first (the head),
// and at most (the head, then the rest, when the filter removed too many).
constexpr std::size_t kFilteredFirst = 2;
constexpr std::size_t kFilteredWide = 16;
// The class's words (answer::AnswerClass) a search looks for in the full-text
// index at most, the rarest in the scope first.
constexpr std::size_t kClassTerms = 32;

// Whether a memory's text holds a time or schedule word (engram::IsScheduleWord)
// or a time of day or date in figures (engram::HoldsClockTime: "at 7:40").
bool HoldsTimeWord(std::string_view text) {
  if (HoldsClockTime(text)) return true;
  bool found = false;
  text::ForEachToken(text, [&](std::string_view t) { found = found || IsScheduleWord(t); });
  return found;
}

using Scored = std::vector<std::pair<std::int64_t, float>>;
using Rows = std::unordered_map<std::int64_t, FactRow>;

void SortScored(Scored& v) {
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first > b.first);
  });
}

// The scope rows the search reads: the exact one, or every row of the user.
Result<std::vector<ScopeRow>> ScopeRowsOf(sql::Db* db, const MemoryScope& scope) {
  std::vector<ScopeRow> out;
  const Scope rs = RowScope(scope);
  if (!scope.include_narrower) {
    ENGRAM_ASSIGN_OR_RETURN(auto row, FindScope(db, rs));
    if (row) out.push_back(std::move(*row));
    return out;
  }
  ENGRAM_ASSIGN_OR_RETURN(std::vector<std::int64_t> ids, store::UserScopeIds(db, rs.tenant, rs.user));
  for (auto id : ids) {
    ENGRAM_ASSIGN_OR_RETURN(ScopeRow row, LoadScope(db, id));
    out.push_back(std::move(row));
  }
  return out;
}

// The rows among `ids` that the selector sees.
Result<Rows> Fetch(sql::Db* db, const store::FactSelector& sel, const std::vector<std::int64_t>& ids) {
  ENGRAM_ASSIGN_OR_RETURN(std::vector<FactRow> found, store::FetchFactRows(db, sel, ids));
  Rows rows;
  for (auto& r : found) {
    const std::int64_t id = r.id;
    rows.emplace(id, std::move(r));
  }
  return rows;
}

// Adds to `pass` the ids among `ids` that the selector sees.
Status AddPassing(sql::Db* db, const store::FactSelector& sel, const std::vector<std::int64_t>& ids,
                  std::unordered_set<std::int64_t>& pass) {
  ENGRAM_ASSIGN_OR_RETURN(std::vector<std::int64_t> passed, store::FilterFactIds(db, sel, ids));
  pass.insert(passed.begin(), passed.end());
  return Status::Ok();
}

// The first n of `all` that passed.
Scored Take(const Scored& all, const std::unordered_set<std::int64_t>& pass, std::size_t n) {
  Scored out;
  for (const auto& x : all) {
    if (out.size() >= n) break;
    if (pass.count(x.first)) out.push_back(x);
  }
  return out;
}

// The exact filtered scan: the n best rows the selector sees by cosine (> 0).
Result<Scored> ScanVectors(sql::Db* db, const store::FactSelector& sel, const Vector& qv, std::size_t n) {
  Scored out;
  ENGRAM_RETURN_IF_ERROR(store::ScanFactVectors(db, sel, [&](store::FactVectorRow& row) {
    float cos = row.embedding.size() == qv.size() && !qv.empty() ? Dot(row.embedding, qv) : 0.0f;
    if (cos > 0) out.emplace_back(row.id, cos);
    return true;
  }));
  SortScored(out);
  if (out.size() > n) out.resize(n);
  return out;
}

// A memory's distinct index terms that the word vectors know (their indexes,
// in the order of DistinctTerms): all of them, and those the query does not
// contain. Looked up once per candidate for both uses below.
struct KnownWords {
  std::vector<std::string> terms;  // the memory's distinct terms (sorted)
  std::vector<long> all, unshared;
};

KnownWords KnownWordsOf(const wordvec::WordVectors& words, std::string_view memory,
                        const std::unordered_set<long>& query_words) {
  KnownWords out;
  // ("children" and "child" are one word; "User likes jazz" holds no word
  // "user"; "Raspberry Pi" is one name: WordVectors::Meant)
  out.terms = DistinctTerms(words.Meant(memory));
  out.all = words.KnownWords(out.terms);
  for (long i : out.all) {
    if (!query_words.count(i)) out.unshared.push_back(i);
  }
  return out;
}

// The word-vector mean of the memory's known words that the query does not
// contain (`unshared`; unit length, empty when none is left): the semantic
// component scores the meaning beyond the words the query and the memory
// share, which the lexical and vector components already count. Without this
// a memory sharing one frequent word with the query ("user") took a
// near-full semantic score from that word alone and passed the memories that
// answer in other words.
std::vector<float> UnsharedMeaning(const wordvec::WordVectors& words, const std::vector<long>& unshared) {
  std::vector<float> acc(static_cast<std::size_t>(words.dim()), 0.0f);
  double ss = 0;
  for (long i : unshared) words.AddTo(i, words.Weight(i), acc);
  for (float x : acc) ss += static_cast<double>(x) * x;
  if (ss <= 0) return {};
  const float inv = static_cast<float>(1.0 / std::sqrt(ss));
  for (float& x : acc) x *= inv;
  return acc;
}

// Whether a memory holds every word of the query the vectors know itself
// (`known_query`: their indexes; `held`: how many of the memory's known words
// are among them). Such a memory says all of the question's meaning the
// vectors see, in the question's own words, and no memory saying it in other
// words may pass it by meaning ("Our team tracks tasks in Jira" for "Where
// do I work?", above "I work as a backend engineer at a fintech startup";
// "Bongani prefers hiking trails" for "Who raised Bongani?", "hike" being
// "raise"): its semantic component is full. (The words the vectors do not
// know, names mostly, are the other components'.)
bool HoldsEveryKnownWord(const std::unordered_set<long>& known_query, std::size_t held) {
  return !known_query.empty() && held >= known_query.size();
}

// Whether a memory's terms (KnownWords::terms, sorted) hold each of `terms`.
bool HoldsTerms(const std::vector<std::string>& terms, const std::vector<std::string>& mine) {
  return std::all_of(terms.begin(), terms.end(), [&](const std::string& t) {
    return std::binary_search(mine.begin(), mine.end(), t);
  });
}

// Text matches as (id, -bm25): higher is better.
Scored Lexical(const std::vector<store::FactTextHit>& hits) {
  Scored out;
  for (const auto& h : hits) out.emplace_back(h.fact_id, static_cast<float>(-h.bm25));
  return out;
}

}  // namespace

Result<std::vector<MemoryItem>> SearchMemories(sql::Db* db, const MemoryScope& scope,
                                               const std::string& asked_as, const Vector& qv,
                                               const MemorySearchOptions& o, TimeMs now,
                                               const FactVectorSource& source,
                                               const wordvec::WordVectors* words) {
  // "the user" said as a pronoun ("What does they eat?"): the person, not the
  // word (text::UserAsPronoun); whom the question asks about is read from it
  // as asked.
  const std::string query = text::UserAsPronoun(asked_as);
  if (o.top_k < 1 || o.top_k > kMaxLimit) return Status::InvalidArgument("top_k: must be 1..1000");
  if (!(o.threshold >= 0.0 && o.threshold <= 1.0)) return Status::InvalidArgument("threshold: must be in [0, 1]");
  ENGRAM_RETURN_IF_ERROR(ValidateMemoryScope(scope, false));
  ENGRAM_ASSIGN_OR_RETURN(std::optional<store::FactFilter> filter, ParseFilter(o.filters));
  const store::FactSelector c = VisibleSelector(scope, now, o.include_expired, filter);
  const bool filtered = filter.has_value();
  const std::size_t n = static_cast<std::size_t>(std::max(4 * o.top_k, 60));
  std::map<std::int64_t, MemoryScoreDetails> cand;

  // 1. The snapshots of the scope rows; FTS5 within the scope's token when
  // the scope is exact.
  ENGRAM_ASSIGN_OR_RETURN(std::vector<ScopeRow> scope_rows, ScopeRowsOf(db, scope));
  if (scope_rows.empty()) return std::vector<MemoryItem>{};
  const std::string token = scope.include_narrower ? std::string() : ScopeToken(scope_rows.front().id);
  // (the words that frame the question aside: "kind" of "what kind of")
  const std::vector<std::string> lexical_terms = LexicalTerms(QuestionWords(query));
  std::vector<std::shared_ptr<const FactVectors>> snaps;
  if (source) {
    for (const auto& row : scope_rows) {
      ENGRAM_ASSIGN_OR_RETURN(auto snap, source(db, row));
      if (snap) snaps.push_back(std::move(snap));
    }
  }
  const IdentityMatch im = MatchFor(scope);
  auto top = [&](std::size_t k) {
    Scored all;
    for (const auto& sn : snaps) {
      auto part = TopVectors(*sn, im, qv, k, now, o.include_expired);
      all.insert(all.end(), part.begin(), part.end());
    }
    SortScored(all);
    if (all.size() > k) all.resize(k);
    return all;
  };
  // 2. The best vector (snapshot) and lexical (index alone) matches, checked
  // against the conditions in the store: the heads first, then (when the filter
  // removed too many) the rest, then the exact queries decide.
  const std::size_t cap_v = filtered ? kFilteredWide * n : n;
  const std::size_t cap_l = (filtered ? kFilteredWide : kFilteredFirst) * n;
  const std::size_t head_v = filtered ? kFilteredFirst * n : n;
  const std::size_t head_l = kFilteredFirst * n;
  Scored vec_all = source ? top(cap_v) : Scored{};
  // Meaning (built-in engine): the best word-vector matches of the snapshots.
  std::vector<std::shared_ptr<const FactVectors>> sem_snaps;
  for (const auto& sn : snaps) {
    if (words && sn->words == words) sem_snaps.push_back(sn);
  }
  const answer::AnswerClass asked =
      words ? answer::AnswerClass::Of(query, wordnet::WordNet::Default()) : answer::AnswerClass();
  // "What does she do for a living?": "living" is the idiom's, neither a word
  // a memory matches ("lives in Lisbon") nor a meaning ("living room"); only
  // a memory naming an occupation holds it (step 5).
  const bool idiom = asked.occupation() && asked.focus() == "living";
  // (A name written apart, "Raspberry Pi", means the name: WordVectors::JoinNames.)
  const std::string meant = words ? words->JoinNames(QuestionMeant(query)) : QuestionMeant(query);
  const std::vector<float> qsem =
      words ? (sem_snaps.empty() ? words->TextVector(meant) : SemanticQuery(sem_snaps, *words, meant))
            : std::vector<float>{};
  // The query's distinct index terms (their word-vector indexes, -1 when
  // unknown; an unknown hyphenated compound as its known parts, sharing its
  // weight) and idf weights, for the expansion match; the known ones as a set,
  // for the memory's words the query lacks (by index: "children" is "child").
  // Each term counts by its inverse document frequency among the scope's
  // memories when the snapshots keep term counts.
  const auto idf = sem_snaps.empty() ? std::function<float(const std::string&)>() : TermIdf(sem_snaps);
  ExpansionQuery expansion;
  expansion.weight = kExpansionWeight;
  std::vector<long>& qidx = expansion.terms;
  std::vector<double>& qidf = expansion.weights;
  std::unordered_set<long> qset;
  std::vector<std::string> unknown_terms;  // the query's terms the vectors do not know
  if (!qsem.empty()) {
    std::vector<long> known;
    for (const auto& t : DistinctTerms(meant)) {
      known.clear();
      words->Lookup(t, known);
      const double w = idf ? idf(t) : 1.0;
      if (known.empty()) {
        unknown_terms.push_back(t);
        known.push_back(-1);
      }
      for (long i : known) {
        qidx.push_back(i);
        qidf.push_back(w / static_cast<double>(known.size()));
        if (i >= 0) qset.insert(i);
      }
    }
  }
  Scored sem_all;
  if (!qsem.empty()) {
    for (const auto& sn : sem_snaps) {
      auto part = TopSemantic(*sn, im, qsem, cap_v, now, o.include_expired, static_cast<float>(kSemanticFloor),
                              &expansion);
      sem_all.insert(sem_all.end(), part.begin(), part.end());
    }
    SortScored(sem_all);
    if (sem_all.size() > cap_v) sem_all.resize(cap_v);
  }
  // What kind of thing the question asks for (built-in meaning only): a
  // memory naming a thing of that kind ("parrot" for "What bird ...?",
  // "architect" for "What is her profession?") holds the question's noun in
  // other words, and matches it as if it held it (step 5); a question about
  // work in other words ("What does he do for a living?") holds one more
  // term, of the mean weight of its others, that such a memory matches. Such
  // memories are candidates too, found by the full-text index through the
  // class's words the scope's memories hold (the rarest first).
  Scored class_all;
  if (!asked.empty() && !sem_snaps.empty()) {
    // (rows holding it, term), the rarest first
    std::vector<std::pair<std::size_t, std::string>> held = TermsHeld(sem_snaps, asked.Terms());
    std::sort(held.begin(), held.end());
    // The rarest, while the rows holding them stay within what is taken: then
    // every match is, whatever order the index gives them in (PostgreSQL's
    // ts_rank weighs no word by its rarity).
    std::vector<std::string> terms;
    std::size_t rows_held = 0;
    for (auto& [df, t] : held) {
      if (terms.size() >= kClassTerms || (!terms.empty() && rows_held + df > n)) break;
      std::string f = text::FtsTerm(t);
      if (f.empty()) continue;
      rows_held += df;
      terms.push_back(std::move(f));
    }
    if (!terms.empty()) {
      ENGRAM_ASSIGN_OR_RETURN(auto hits, store::FindFactText(db, terms, token, n));
      class_all = Lexical(hits);
    }
  }
  const std::vector<std::string> query_tokens = text::Tokenize(query);
  // A question about someone's superior: the memories saying a word of one
  // are candidates as the class's are ("My manager is Karen" shares no word
  // and little meaning with "Who do I report to?").
  if (AsksForSuperior(query_tokens)) {
    ENGRAM_ASSIGN_OR_RETURN(auto hits, store::FindFactText(db, SuperiorTerms(), token, n));
    for (const auto& h : Lexical(hits)) class_all.push_back(h);
  }
  Scored lex_all;
  if (!lexical_terms.empty()) {
    ENGRAM_ASSIGN_OR_RETURN(auto hits, store::FindFactText(db, lexical_terms, token, cap_l));
    lex_all = Lexical(hits);
  }
  std::unordered_set<std::int64_t> pass;
  auto ids_of = [](const Scored& v, std::size_t from, std::size_t to, std::vector<std::int64_t>& out) {
    for (std::size_t i = from; i < std::min(to, v.size()); ++i) out.push_back(v[i].first);
  };
  std::vector<std::int64_t> check;
  ids_of(vec_all, 0, head_v, check);
  ids_of(lex_all, 0, head_l, check);
  ids_of(sem_all, 0, cap_v, check);
  ids_of(class_all, 0, n, check);
  ENGRAM_RETURN_IF_ERROR(AddPassing(db, c, check, pass));
  Scored vec = Take(vec_all, pass, n), lex = Take(lex_all, pass, n);
  const Scored sem = Take(sem_all, pass, n), of_class = Take(class_all, pass, n);
  const bool more_v = vec.size() < n && vec_all.size() > head_v;
  const bool more_l = lex.size() < n && lex_all.size() > head_l;
  if (more_v || more_l) {
    check.clear();
    if (more_v) ids_of(vec_all, head_v, cap_v, check);
    if (more_l) ids_of(lex_all, head_l, cap_l, check);
    ENGRAM_RETURN_IF_ERROR(AddPassing(db, c, check, pass));
    vec = Take(vec_all, pass, n);
    lex = Take(lex_all, pass, n);
  }
  if (!source || (vec.size() < n && vec_all.size() == cap_v)) {
    ENGRAM_ASSIGN_OR_RETURN(vec, ScanVectors(db, c, qv, n));
  }
  if (lex.size() < n && lex_all.size() == cap_l) {
    ENGRAM_ASSIGN_OR_RETURN(auto hits, store::FindFactTextWhere(db, lexical_terms, token, c, n));
    lex = Lexical(hits);
  }
  for (const auto& [id, bm25] : lex) {
    auto& d = cand[id];
    d.from_lexical = true;
    d.bm25 = bm25;
  }
  // 3. Entities the query names, linked to visible rows passing the filter.
  std::vector<std::string> names = QueryEntityNames(query);
  std::set<std::string> matched_names;
  ENGRAM_ASSIGN_OR_RETURN(std::vector<store::EntityMatch> linked,
                          store::FindEntityMatches(db, c, names, kMaxEntityRows));
  for (const auto& e : linked) {
    auto& d = cand[e.fact_id];
    d.from_entity = true;
    d.entities.push_back(e.name);
    matched_names.insert(e.name);
  }

  // 4. One fetch of every candidate row, the conditions applied again.
  std::vector<std::int64_t> ids;
  for (const auto& [id, d] : cand) ids.push_back(id);
  for (const auto& [id, s] : vec) {
    if (!cand.count(id)) ids.push_back(id);
  }
  for (const auto& [id, s] : sem) {
    if (!cand.count(id)) ids.push_back(id);
  }
  for (const auto& [id, s] : of_class) {
    if (!cand.count(id)) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  ENGRAM_ASSIGN_OR_RETURN(Rows rows, Fetch(db, c, ids));
  for (const auto& [id, s] : vec) {
    if (rows.count(id)) cand[id].from_vector = true;
  }
  for (const auto& [id, s] : sem) {
    if (rows.count(id)) cand[id].from_semantic = true;
  }
  for (const auto& [id, s] : of_class) {
    if (rows.count(id)) cand[id].from_lexical = true;  // by the full-text index
  }

  // 5. Every component for every candidate, fused.
  const std::vector<std::string> qterms = ScoringTerms(lexical_terms, query);
  // Each query term counts by its inverse document frequency among the
  // scope's memories when the snapshots keep term counts (word vectors), so
  // a match on a word most memories use ("user", "likes") counts little.
  std::vector<double> qweight(qterms.size(), 1.0);
  if (idf) {
    for (std::size_t k = 0; k < qterms.size(); ++k) qweight[k] = idf(qterms[k]);
  }
  const bool asks_when = AsksWhen(query_tokens);
  const bool asks_number = AsksHowMany(query_tokens);
  // A season the question names ("Where am I going in the spring?"): a
  // memory naming one of its months ("next April") holds it. ("fall" only
  // after a word that says a time: "fall off" is the verb.)
  std::vector<int> season(qterms.size(), 0);
  for (std::size_t i = 0; i < query_tokens.size(); ++i) {
    const int first = SeasonFromWord(query_tokens[i]);
    if (first == 0) continue;
    if (query_tokens[i] == "fall" &&
        (i == 0 || !(query_tokens[i - 1] == "the" || query_tokens[i - 1] == "this" ||
                     query_tokens[i - 1] == "last" || query_tokens[i - 1] == "next" ||
                     query_tokens[i - 1] == "in" || query_tokens[i - 1] == "during"))) {
      continue;
    }
    const std::string stem = text::Stem(query_tokens[i]);
    for (std::size_t k = 0; k < qterms.size(); ++k) {
      if (qterms[k] == stem) season[k] = first;
    }
  }
  const wordnet::WordNet* wn = words ? wordnet::WordNet::Default() : nullptr;
  const std::vector<std::string> asked_tokens = text::Tokenize(asked_as);
  const bool about_user = wn && AsksAboutUser(asked_as, asked_tokens, wn);
  const bool about_other = wn && !about_user && AsksAboutOther(asked_tokens);
  // The stance each query term says (StancesIn's bits; "like" in "What
  // music does she like?"): a memory saying another word of it holds it.
  std::vector<int> query_stance(qterms.size(), 0);
  std::string prev;  // ("Who do I report to?" asks for a superior by the verb's term)
  text::ForEachToken(query, [&](std::string_view token) {
    if (ReportsTo(prev, token)) {
      const auto at = std::find(qterms.begin(), qterms.end(), text::FtsTerm(text::Stem(prev)));
      if (at != qterms.end())
        query_stance[static_cast<std::size_t>(at - qterms.begin())] |= StanceBit(kSuperior);
    }
    const int st = StanceAfter(prev, token);
    prev.assign(token);
    if (st != 0) {
      const std::string_view full = text::FullForm(token);  // ("fave": its term is "favorite"'s)
      const auto at = std::find(qterms.begin(), qterms.end(), text::FtsTerm(text::Stem(full.empty() ? token : full)));
      if (at != qterms.end())
        query_stance[static_cast<std::size_t>(at - qterms.begin())] = StanceBit(st);
    }
  });
  if (std::all_of(query_stance.begin(), query_stance.end(), [](int b) { return b == 0; })) query_stance.clear();
  std::size_t focus_at = qterms.size();
  if (!asked.empty() && !asked.focus().empty()) {
    const auto ft = LexicalTerms(asked.focus());
    if (ft.size() == 1) focus_at = static_cast<std::size_t>(std::find(qterms.begin(), qterms.end(), ft[0]) - qterms.begin());
  }
  // The focus word's indexes among the query's known words: a memory naming a
  // thing of the class holds it (step below), and with it maybe every known
  // word of the question.
  std::unordered_set<long> focus_known;
  if (!qsem.empty() && !asked.empty() && !asked.focus().empty()) {
    std::vector<long> idx;
    for (const auto& t : DistinctTerms(asked.focus())) words->Lookup(t, idx);
    for (long i : idx) {
      if (qset.count(i)) focus_known.insert(i);
    }
  }
  // Each candidate scored without the class first; `gain` is what naming a
  // thing of the class would add to its lexical hits; `whole_with_class`:
  // the memory holds every known word of the question but the focus's.
  struct Scored {
    MemoryItem m;
    MemoryScoreDetails* d;
    double hit = 0, all = 0, gain = 0, rest = 0;  // rest: the score's other components
    bool whole_with_class = false;
    double cos = 0;        // the semantic cosine before clamping: it orders equal scores
    std::int64_t row = 0;  // the fact row (a later row was written later)
  };
  // The unit of a question asking for a time ("What day ...?", "Which days
  // ...?", "What year ...?"): a memory saying a time holds it
  // ("Physiotherapy ... is on Mondays" holds every known word of "Which
  // days is physiotherapy?"), as the lexical time term below does.
  std::unordered_set<long> when_unit;
  if (!qsem.empty() && asks_when) {
    std::vector<long> idx;
    for (std::size_t i = 1; i < query_tokens.size(); ++i) {
      if (IsTimeUnit(query_tokens[i]) &&
          (query_tokens[i - 1] == "what" || query_tokens[i - 1] == "which")) {
        words->Lookup(text::Stem(query_tokens[i]), idx);
      }
    }
    for (long i : idx) {
      if (qset.count(i)) when_unit.insert(i);
    }
  }
  std::vector<Scored> scored;
  scored.reserve(cand.size());
  for (auto& [id, d] : cand) {
    auto it = rows.find(id);
    if (it == rows.end()) continue;
    const FactRow& r = it->second;
    Scored x{r.item, &d};
    x.row = id;
    const MemoryItem& m = x.m;
    // (What the memory says of a time or a number, for a question asking for one.)
    const bool says_time = asks_when && HoldsTimeWord(m.memory);
    const bool says_number = asks_number && HoldsNumber(m.memory);
    d.vector = r.embedding.size() == qv.size() && !qv.empty()
                   ? std::clamp<double>(Dot(r.embedding, qv), 0.0, 1.0)
                   : 0.0;
    if (!qterms.empty()) {
      auto doc = LexicalTerms(m.memory);
      std::unordered_set<std::string> have(doc.begin(), doc.end());
      const int stances = query_stance.empty() ? 0 : StancesIn(m.memory);
      for (std::size_t k = 0; k < qterms.size(); ++k) {
        x.all += qweight[k];
        if ((have.count(qterms[k]) && !(idiom && k == focus_at)) ||
            (!query_stance.empty() && (query_stance[k] & stances) != 0) ||
            (season[k] != 0 && NamesMonthOfSeason(m.memory, season[k]))) {
          x.hit += qweight[k];
        } else if (k == focus_at) {
          x.gain = qweight[k];
        }
      }
      const double mean = x.all / static_cast<double>(qterms.size());
      if (!asked.empty() && focus_at == qterms.size()) {
        x.all += mean;
        x.gain = mean;
      }
      if (asks_when) {
        // A question asking for a time ("when", "what time", "how often")
        // holds one more term, of the mean weight of its others, that any
        // time word of the memory matches ("Friday", "8th", "pm", "daily").
        x.all += mean;
        if (says_time) x.hit += mean;
      }
      if (asks_number) {
        // So does one asking for a number ("how many", "how old"): any
        // number the memory says matches it ("two", "12", "dozen").
        x.all += mean;
        if (says_number) x.hit += mean;
      }
      if (about_user && MemorySubject(m.memory, wn) == Subject::kOther) {
        // A question about the user alone ("Where do I live?") holds one
        // more term, of the mean weight of its others, that a memory about
        // someone else ("My sister lives in Lisbon") does not match.
        x.all += mean;
      } else if (about_other && SaidByUserOfThemselves(m.memory, wn)) {
        // So does one about someone else by a pronoun ("What is her
        // occupation?") for the user's own words about themselves ("I'm a
        // civil engineer").
        x.all += mean;
      }
      d.lexical = x.all > 0 ? x.hit / x.all : 0.0;
    }
    std::sort(d.entities.begin(), d.entities.end());
    d.entities.erase(std::unique(d.entities.begin(), d.entities.end()), d.entities.end());
    d.entity = matched_names.empty() ? 0.0
                                     : static_cast<double>(d.entities.size()) / static_cast<double>(matched_names.size());
    if (!qsem.empty()) {
      const KnownWords known = KnownWordsOf(*words, m.memory, qset);
      const auto msem = UnsharedMeaning(*words, known.unshared);
      double cos = 0;
      for (std::size_t i = 0; i < msem.size() && i < qsem.size(); ++i) cos += static_cast<double>(qsem[i]) * msem[i];
      cos += kExpansionWeight * words->ExpansionMatch(qidx, qidf, known.all);
      d.semantic = std::clamp((cos - kSemanticFloor) / (kSemanticCeiling - kSemanticFloor), 0.0, 1.0);
      std::size_t held = known.all.size() - known.unshared.size();
      if (!when_unit.empty() && says_time) {
        for (long i : when_unit)
          held += std::find(known.all.begin(), known.all.end(), i) == known.all.end();
      }
      // (Holding every word the vectors know is all of the question only
      // with the words they do not know held too: "Uses a wheelchair ..."
      // holds the "use" of "What multimeter does the user use?", and the
      // memory naming the multimeter is the one meant.)
      if (HoldsEveryKnownWord(qset, held) && HoldsTerms(unknown_terms, known.terms)) {
        d.semantic = 1.0;
      } else if (!focus_known.empty()) {
        x.whole_with_class = std::all_of(qset.begin(), qset.end(),
                                         [&](long i) {
                                           return focus_known.count(i) > 0 ||
                                                  std::find(known.all.begin(), known.all.end(),
                                                            i) != known.all.end();
                                         }) &&
                             HoldsTerms(unknown_terms, known.terms);
      }
      x.cos = cos;
      // A question asking for a number is answered only by a memory saying
      // one: any other keeps kNumberUnheld of its meaning ("Book club meets
      // the first Sunday of each month" is near "raise" by "place", and no
      // answer to "How much did our startup raise?").
      if (asks_number && !says_number) d.semantic *= kNumberUnheld;
      if (asks_when && !says_time) d.semantic *= kTimeUnheld;  // (likewise for a time)
    }
    x.rest = kVectorWeight * std::max(d.vector, d.semantic) + kEntityWeight * d.entity;
    x.m.score = x.rest + kLexicalWeight * d.lexical;
    scored.push_back(std::move(x));
  }
  // The class: only where it could change the first top_k (a score only
  // grows with it, so the top_k-th score without it is a floor). A question
  // asking for someone's occupation ("What is her job?", "What does he do
  // for a living?") is answered only by a memory saying one of someone, so
  // every other memory keeps kOccupationUnheld of its meaning: "draw" is
  // "inhale" by meaning, and "Mateo keeps an inhaler" is no answer to "What
  // does she draw for a living?".
  if (!asked.empty()) {
    const bool unheld_lose = asked.occupation() && !asked.yes_no();
    double floor = -1;
    if (!unheld_lose && scored.size() >= static_cast<std::size_t>(o.top_k)) {
      std::vector<double> s0;
      s0.reserve(scored.size());
      for (const auto& x : scored) s0.push_back(x.m.score);
      std::nth_element(s0.begin(), s0.begin() + (o.top_k - 1), s0.end(), std::greater<>());
      floor = s0[static_cast<std::size_t>(o.top_k - 1)];
    }
    for (auto& x : scored) {
      // (naming a thing of the class in place of the focus word, a memory
      // holding the question's other known words holds all of its meaning)
      const double meaning_gain =
          x.whole_with_class ? kVectorWeight * (1.0 - std::max(x.d->vector, x.d->semantic)) : 0.0;
      if (x.gain <= 0 || x.all <= 0 ||
          x.m.score + kLexicalWeight * x.gain / x.all + meaning_gain < floor) {
        continue;
      }
      if (asked.HeldBy(x.m.memory)) {
        x.hit += x.gain;
        x.d->lexical = x.hit / x.all;
        if (x.whole_with_class) {
          x.d->semantic = 1.0;
          x.rest = kVectorWeight + kEntityWeight * x.d->entity;
        }
      } else if (unheld_lose) {
        x.d->semantic *= kOccupationUnheld;
        x.rest = kVectorWeight * std::max(x.d->vector, x.d->semantic) + kEntityWeight * x.d->entity;
      } else {
        continue;
      }
      x.m.score = x.rest + kLexicalWeight * x.d->lexical;
    }
  }
  std::erase_if(scored, [&](Scored& x) {
    x.m.score = std::clamp(x.m.score, 0.0, 1.0);
    return x.m.score < o.threshold || x.m.score <= 0.0;
  });
  // Equal scores by the unclamped cosine, then newer first: by creation, then
  // by the row written later (memories added within one millisecond keep the
  // order they were added in, not that of their random ids).
  std::sort(scored.begin(), scored.end(), [&](const Scored& x, const Scored& y) {
    const MemoryItem &a = x.m, &b = y.m;
    if (a.score != b.score) return a.score > b.score;
    if (x.cos != y.cos) return x.cos > y.cos;
    if (a.created_at != b.created_at) return a.created_at > b.created_at;
    return x.row > y.row;
  });
  if (scored.size() > static_cast<std::size_t>(o.top_k))
    scored.resize(static_cast<std::size_t>(o.top_k));
  std::vector<MemoryItem> out;
  out.reserve(scored.size());
  for (auto& x : scored) {
    if (o.explain) x.m.score_details = *x.d;
    out.push_back(std::move(x.m));
  }

  return out;
}

}  // namespace engram::memory::facts
