#include "retrieval/retriever.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/answer_class.hpp"
#include "core/text.hpp"
#include "core/time.hpp"
#include "core/word_vectors.hpp"
#include "core/wordnet.hpp"
#include "memory/facts/fact_query.hpp"
#include "memory/facts/fact_text.hpp"
#include "memory/lpm.hpp"
#include "memory/stm.hpp"
#include "retrieval/context.hpp"
#include "retrieval/expansion.hpp"
#include "retrieval/ranking.hpp"
#include "store/fulltext.hpp"

namespace engram::retrieval {

namespace {

constexpr double kRrfK = 60.0;
constexpr int kVectorCandidates = 200;
// The built-in engine's meaning of a fact that shares no word with the
// question (QueryMeaning): the facts whose word-vector cosine is among the
// best kMeaningRescored are scored as fact search scores them, but for the
// weight of the expansion (the cosine plus kContextExpansionWeight x the
// share of the question's words in the fact's WordNet neighbourhoods), and
// at most kMeaningFacts of those reaching kFactMeaning join the lexical
// matches. See docs/PERFORMANCE.md (the eleven paraphrase sets' context_hit
// summed 5.45 / 6.39 / 6.52 / 6.52 re-scoring 8 / 32 / 64 / 128; at 686
// memories 64 cost 0.05 ms a retrieval).
constexpr std::size_t kMeaningRescored = 64;
// Fact search weighs the expansion share 0.6 (memory::facts::kExpansionWeight:
// more costs the direct questions their first place); a context takes the
// few facts that reach kFactMeaning, and a fact holding a rare word of the
// question in its neighbourhood ("incidents" for PagerDuty) is worth more
// there than a diffuse cosine. Sixteen paraphrase sets, context_hit summed,
// questions / keywords: 9.693 / 7.650 at 0.6, 9.904 / 7.966 at 0.7, 10.199 /
// 8.079 at 0.8, 10.428 / 8.273 at 1.0, 10.601 / 8.479 at 1.3 (search figures
// the same); at 1.0 "What sport does she watch?" takes "The database runs on
// PostgreSQL" into its context (MeaningTest.AContextHoldsTheMemoriesThat...),
// at 0.8 a question about nothing stored gets at most one more fact.
constexpr double kContextExpansionWeight = 0.8;
constexpr std::size_t kMeaningFacts = 3;
// The fewest messages an expansion term may be held by and still count as
// rare (ExpansionParams::max_df_share of a scope of under 200 messages is
// less).
constexpr double kMinExpansionDf = 2.0;
// What a fact naming a thing of the kind the question asks for
// (answer::AnswerClass: "parrot" for "What bird ...?") adds to that score.
constexpr double kFactClass = 0.1;
constexpr double kFactMeaning = 0.25;
constexpr int kStmForRanking = 256;   // newest STM turns ranked with the pages
constexpr int kStmForContext = 64;    // newest STM turns offered as recent conversation
constexpr int kOldStmMatches = 32;    // older STM turns found by FTS when STM is larger
constexpr std::size_t kRankedLimit = 100;
constexpr int kRankedWithText = 100;

// Lexical ranking of the scope's rows of a full-text index for the query,
// best first (store::SearchText: bm25 on SQLite, ts_rank on PostgreSQL), from
// the snapshot's copy of the rows when it has one (the same ranking).
// `terms`: store::QueryTerms of the query. With `other_scope_id` (not 0)
// the rows of that scope too (the copy holds both): two searches, merged by
// score. With `held`, which of the terms each row holds (TextIndex::Search;
// left empty when the store's search answered).
Result<std::vector<std::int64_t>> Lexical(sql::Db* db, store::FullText table, std::int64_t scope_id,
                                          const std::vector<std::string>& terms, int limit,
                                          const TextIndex* copy = nullptr,
                                          std::int64_t other_scope_id = 0,
                                          std::vector<std::uint64_t>* held = nullptr) {
  if (held) held->clear();
  if (copy && copy->CanSearch(terms)) return copy->Search(terms, limit, held);
  ENGRAM_ASSIGN_OR_RETURN(auto hits, store::SearchText(db, table, store::ScopeToken(scope_id), terms, limit));
  if (other_scope_id != 0) {
    ENGRAM_ASSIGN_OR_RETURN(auto more,
                            store::SearchText(db, table, store::ScopeToken(other_scope_id), terms, limit));
    hits.insert(hits.end(), more.begin(), more.end());
    std::stable_sort(hits.begin(), hits.end(),
                     [](const store::TextHit& a, const store::TextHit& b) { return a.score > b.score; });
    if (hits.size() > static_cast<std::size_t>(limit)) hits.resize(static_cast<std::size_t>(limit));
  }
  std::vector<std::int64_t> out;
  out.reserve(hits.size());
  for (const auto& h : hits) out.push_back(h.rowid);
  return out;
}

std::vector<std::int64_t> Ids(const std::vector<std::pair<std::int64_t, float>>& hits) {
  std::vector<std::int64_t> out;
  for (const auto& h : hits) out.push_back(h.first);
  return out;
}

// 1 / (kRrfK + rank + 1), the term of a rank in the fusion: from a table for
// the first ranks (the same doubles, without a division each).
double RrfTerm(std::size_t r) {
  constexpr std::size_t kTable = 512;
  static const auto table = [] {
    std::array<double, kTable> t{};
    for (std::size_t i = 0; i < kTable; ++i) t[i] = 1.0 / (kRrfK + static_cast<double>(i) + 1.0);
    return t;
  }();
  return r < kTable ? table[r] : 1.0 / (kRrfK + static_cast<double>(r) + 1.0);
}

// Reciprocal-rank fusion of two rankings (weight 1 each), best first (ties:
// an id of the first ranking before one of the second only, which the
// callers give their lexical ranking, the words a question and a text share
// being the surer evidence; else the smaller id first): an id's score is the
// sum of its terms in both. Each
// ranking holds an id at most once. Without a sort of all ids: the ids of
// only one ranking are already in score order (1 / (61 + rank)), those of
// both (found through a small open-addressing table of the first ranking's
// ids) are summed and sorted, and the three lists merged.
std::vector<std::pair<std::int64_t, double>> FusedRrf(const std::vector<std::int64_t>& a,
                                                      const std::vector<std::int64_t>& b) {
  using Scored = std::pair<std::int64_t, double>;
  // Slots hold rank + 1 of an id of `a` (0: empty), at least twice as many
  // slots as ids.
  std::size_t slots = 16;
  while (slots < 2 * a.size()) slots *= 2;
  std::vector<std::uint32_t> table(slots, 0);
  auto slot_of = [&](std::int64_t id) {
    std::uint64_t h = static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h >> 32) & (slots - 1);
  };
  for (std::size_t r = 0; r < a.size(); ++r) {
    std::size_t i = slot_of(a[r]);
    while (table[i] != 0) i = (i + 1) & (slots - 1);
    table[i] = static_cast<std::uint32_t>(r + 1);
  }
  auto rank_in_a = [&](std::int64_t id) -> std::int64_t {
    for (std::size_t i = slot_of(id); table[i] != 0; i = (i + 1) & (slots - 1)) {
      if (a[table[i] - 1] == id) return static_cast<std::int64_t>(table[i] - 1);
    }
    return -1;
  };
  std::vector<bool> a_in_both(a.size(), false);
  std::vector<Scored> only_b, both;
  only_b.reserve(b.size());
  for (std::size_t r = 0; r < b.size(); ++r) {
    const std::int64_t ra = rank_in_a(b[r]);
    if (ra >= 0) {
      a_in_both[static_cast<std::size_t>(ra)] = true;
      // 0 + x + y, as a map of sums starting at 0 adds them (x + y == y + x).
      both.emplace_back(b[r], (0.0 + RrfTerm(static_cast<std::size_t>(ra))) + RrfTerm(r));
    } else {
      only_b.emplace_back(b[r], RrfTerm(r));
    }
  }
  std::vector<Scored> only_a;
  only_a.reserve(a.size());
  for (std::size_t r = 0; r < a.size(); ++r) {
    if (!a_in_both[r]) only_a.emplace_back(a[r], RrfTerm(r));
  }
  auto better = [](const Scored& x, const Scored& y) {
    return x.second > y.second || (x.second == y.second && x.first < y.first);
  };
  std::sort(both.begin(), both.end(), better);
  std::vector<Scored> ab, out;
  ab.reserve(only_a.size() + only_b.size());
  // (std::merge takes from the first range on a tie: `a`'s ids first.)
  std::merge(only_a.begin(), only_a.end(), only_b.begin(), only_b.end(), std::back_inserter(ab),
             [](const Scored& x, const Scored& y) { return x.second > y.second; });
  out.reserve(ab.size() + both.size());
  std::merge(both.begin(), both.end(), ab.begin(), ab.end(), std::back_inserter(out), better);
  return out;
}

// True when the query's vector carries meaning: the built-in embedder's
// vectors hash words, which the lexical scores already count.
bool Semantic(const RetrievalInput& in) { return in.embedder && !in.embedder->IsBuiltin(); }

// A question's meaning for the built-in engine (wordvec::WordVectors): the
// word-vector mean of the words it means (`meant`: facts::QuestionMeant),
// and those known words with their weights
// (each term's weight shared by the indexes it stands for); `words` null
// without vectors or when no word of it is known.
struct QueryMeaning {
  const wordvec::WordVectors* words = nullptr;
  wordvec::QuantizedVector vector;
  std::vector<long> terms;
  std::vector<double> weights;
  answer::AnswerClass asked;  // what kind of thing the question asks for
};

QueryMeaning MeaningOf(const std::string& query, const std::string& meant) {
  QueryMeaning m;
  const wordvec::WordVectors* words = wordvec::WordVectors::Default();
  if (words == nullptr) return m;
  m.asked = answer::AnswerClass::Of(query, wordnet::WordNet::Default());
  // A question about work in other words ("What does she do for a living?")
  // means an occupation: fact search counts one more term for it, which
  // this ranking has not, so the word says it here.
  const bool work = m.asked.occupation() && (m.asked.focus().empty() || m.asked.focus() == "living");
  std::vector<long> known;
  const std::string named = words->JoinNames(meant);  // "Raspberry Pi" is one name
  for (const auto& t : text::Terms(work ? named + " occupation" : named)) {
    known.clear();
    words->Lookup(t, known);
    for (long i : known) {
      if (std::find(m.terms.begin(), m.terms.end(), i) != m.terms.end()) continue;
      m.terms.push_back(i);
      m.weights.push_back(static_cast<double>(words->Weight(i)) / static_cast<double>(known.size()));
    }
  }
  m.vector = wordvec::Quantize(words->MeanOf(m.terms));
  if (!m.vector.empty()) m.words = words;
  return m;
}

// Facts of one kind ranked by lexical + vector fusion, as context items.
std::vector<FactCandidate> RankFacts(const RetrievalInput& in, const FlatIndex& index,
                                     const std::vector<std::int64_t>& lexical, ItemKind kind,
                                     const QueryMeaning& meaning) {
  // The facts of this kind: those in `index` (FactEntry::in_vectors).
  const std::uint8_t mine = &index == &in.index->user_facts ? 1 : 2;
  // Expired facts are left out of both rankings (the snapshot keeps them: an
  // expiry passing does not change data_version); the vector search asks for
  // as many more.
  std::vector<std::int64_t> expired;  // sorted
  for (const auto& [id, at] : in.index->expiring_facts) {
    if (at <= in.now) expired.push_back(id);
  }
  std::sort(expired.begin(), expired.end());
  auto is_expired = [&](std::int64_t id) { return std::binary_search(expired.begin(), expired.end(), id); };
  std::vector<std::int64_t> lex, vec;
  for (auto id : lexical) {
    auto fact = in.index->facts.find(id);
    if (fact != in.index->facts.end() && fact->second.in_vectors == mine && !is_expired(id)) lex.push_back(id);
  }
  // The built-in embedder's nearest facts are those sharing the most words
  // (mostly the speakers' names) or chance ones, which the lexical search
  // already orders; only a semantic embedder adds facts.
  if (Semantic(in)) {
    for (const auto& hit : index.Search(in.query_embedding, kVectorCandidates + static_cast<int>(expired.size()))) {
      if (!is_expired(hit.first) && vec.size() < static_cast<std::size_t>(kVectorCandidates)) vec.push_back(hit.first);
    }
  } else if (meaning.words != nullptr) {
    // The built-in engine: a fact that says what the question asks in other
    // words ("User is allergic to penicillin" for "any allergies to
    // medicines?"), by the meaning fact search gives it; only a fact drawn
    // from no page (a memory added through the fact API): one drawn from
    // pages restates their messages, which the message ranking reaches.
    std::vector<std::pair<double, std::int64_t>> near;
    std::vector<std::int64_t> matched = lex;  // sorted
    std::sort(matched.begin(), matched.end());
    for (const auto& [id, f] : in.index->facts) {
      if (f.in_vectors != mine || f.meaning.empty() || !f.source_pages.empty() || is_expired(id)) continue;
      if (std::binary_search(matched.begin(), matched.end(), id)) continue;
      near.emplace_back(wordvec::Dot(meaning.vector, f.meaning), id);
    }
    auto better = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
    const std::size_t rescored = std::min(near.size(), kMeaningRescored);
    std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(rescored), near.end(), better);
    near.resize(rescored);
    for (auto& [score, id] : near) {
      const FactEntry& f = in.index->facts.at(id);
      score += kContextExpansionWeight *
               meaning.words->ExpansionMatch(meaning.terms, meaning.weights, f.known);
    }
    std::sort(near.begin(), near.end(), better);
    // The class (a pass over the fact's words) only where it could change
    // which facts are kept: a fact whose score with it would reach the floor
    // and the last kept score without it.
    if (!meaning.asked.empty() && !near.empty()) {
      const double last = near.size() >= kMeaningFacts ? near[kMeaningFacts - 1].first : 0.0;
      bool raised = false;
      for (auto& [score, id] : near) {
        if (score + kFactClass < std::max(kFactMeaning, last)) continue;
        if (meaning.asked.HeldBy(in.index->facts.at(id).text)) {
          score += kFactClass;
          raised = true;
        }
      }
      if (raised) std::sort(near.begin(), near.end(), better);
    }
    for (const auto& [score, id] : near) {
      if (score < kFactMeaning || vec.size() >= kMeaningFacts) break;
      vec.push_back(id);
    }
  }
  const auto fused = FusedRrf(lex, vec);
  std::vector<FactCandidate> out;
  out.reserve(std::min(fused.size(), 2 * static_cast<std::size_t>(std::max(0, in.options.max_facts))));
  for (const auto& [id, score] : fused) {
    auto it = in.index->facts.find(id);
    if (it == in.index->facts.end()) continue;
    FactCandidate& c = out.emplace_back();
    c.item.kind = kind;
    c.item.tier = Tier::kLpm;
    c.item.id = id;
    c.item.score = score;
    c.item.version = it->second.version;
    c.item.event_time = it->second.event_time;
    c.item.tokens = it->second.tokens;
    c.text = it->second.line;
    c.body = it->second.text;
    c.words = it->second.words;
    c.pages = it->second.source_pages;
    // Some may be skipped as already covered by messages; the rest never fit.
    if (static_cast<int>(out.size()) >= 2 * in.options.max_facts) break;
  }
  return out;
}

// Words with which a request asks about someone rather than about a thing
// ("Tell me about Evan", "What do you know about Evan?").
bool AsksAbout(std::string_view token) {
  static const std::array<std::string_view, 14> kWords = {
      "tell", "know", "knows", "remember", "remind", "recall", "describe", "say", "talk",
      "anything", "everything", "something", "information", "info"};
  return std::find(kWords.begin(), kWords.end(), token) != kWords.end();
}

// Whether `term` (a stem) is a term of a speaker's name in one of `indexes`.
bool InNames(const std::vector<const MessageIndex*>& indexes, const std::string& term) {
  return std::any_of(indexes.begin(), indexes.end(),
                     [&](const MessageIndex* ix) { return ix->InNames(ix->TermId(term)); });
}

// The terms a fact must share with the query to enter its context: the
// query's terms (store::QueryTerms) but those of the speakers' names, which
// most facts of a speaker hold ("Evan will keep you posted" is not about
// what "What did Evan buy?" asks), unless the query asks about no more than
// the speaker ("Tell me about Evan", "And what about Evan?"); `tokens`:
// text::Tokenize of the query.
std::vector<std::string> FactTerms(const std::vector<std::string>& tokens, const std::vector<std::string>& fts_terms,
                                   const std::vector<const MessageIndex*>& indexes) {
  std::vector<std::string> names;
  bool other = false;  // a word besides the names and the request's
  for (const auto& token : tokens) {
    if (text::IsStopword(token)) continue;
    const std::string t = text::Stem(token);  // a term of text::Terms
    const bool name = InNames(indexes, t);
    if (name) names.push_back(text::FtsTerm(t));
    if (!name && !AsksAbout(token)) other = true;
  }
  if (names.empty() || !other) return fts_terms;
  std::vector<std::string> out;
  for (const auto& f : fts_terms) {
    if (std::find(names.begin(), names.end(), f) == names.end()) out.push_back(f);
  }
  return out;
}

// The speakers' names that are stopwords ("What does Will like?", "Did Can
// call?"): a capitalised word inside a sentence of the query
// (ForEachNamedWord) that is a stopword (not an article: "What did The
// Oracle bot say?") and a term of a speaker's name in one of `indexes` (the
// texts never hold a stopword), added to `terms` with weight 1.
void AddStopwordNames(std::string_view query, const std::vector<const MessageIndex*>& indexes,
                      std::vector<QueryTerm>& terms) {
  std::vector<std::string> added;  // at most the stopwords (a long query holds many terms)
  ForEachNamedWord(query, [&](std::string_view word) {
    std::string lower(word);
    for (char& c : lower) c = c <= 'Z' ? static_cast<char>(c + 32) : c;
    if (!text::IsStopword(lower) || lower == "a" || lower == "an" || lower == "the") return true;
    const std::string t = text::Stem(lower);
    if (InNames(indexes, t) && std::find(added.begin(), added.end(), t) == added.end()) {
      added.push_back(t);
      terms.push_back({t, 1.0});
    }
    return true;
  });
}

// The facts of `lexical` a question asks about: a fact drawn from pages
// (one that restates messages, which the message ranking weighs for the
// question itself) enters the context by its words only when it holds at
// least `need` of the idf weight of the question's own terms (`terms`, the
// first `own` of them: those of FactTerms; a word held by no message or
// fact weighs most), a word of a superior standing for any other when the
// question asks for one (AsksForSuperior: "report" for "boss"). A fact the
// user stated (drawn from no page) or changed since (version > 1) is kept
// on any word: only fact search and this context reach what it says. Idf
// over the scope's messages (`messages`) and facts (the snapshot's copy of
// their rows, when it has one), log(1 + (N + 1) / (df + 1)). `held`: which
// of `terms` each fact of `lexical` holds (bits, from the copy's search),
// or empty (each fact's terms are read then).
// (RankingOptions::fact_cover; docs/PERFORMANCE.md.)
std::vector<std::int64_t> FactsAsked(const ScopeIndex& idx,
                                     const std::vector<const MessageIndex*>& messages,
                                     const std::vector<std::string>& terms, std::size_t own,
                                     bool asks_superior, const std::vector<std::int64_t>& lexical,
                                     const std::vector<std::uint64_t>& held, double need) {
  if (need <= 0 || own == 0) return lexical;
  const auto& superior = memory::facts::SuperiorTerms();
  auto is_superior = [&](const std::string& t) {
    return asks_superior && std::find(superior.begin(), superior.end(), t) != superior.end();
  };
  double rows = static_cast<double>(idx.fact_text.size());
  for (const MessageIndex* m : messages) rows += static_cast<double>(m->size());
  std::vector<double> idf(own);
  double total = 0.0;
  for (std::size_t i = 0; i < own; ++i) {
    double df = static_cast<double>(idx.fact_text.Df(terms[i]));
    for (const MessageIndex* m : messages) df += static_cast<double>(m->Df(terms[i]));
    idf[i] = std::log(1.0 + (rows + 1.0) / (df + 1.0));
    total += idf[i];
  }
  // Which terms a fact holds: what the search of the snapshot's copy said,
  // else the fact's own terms.
  const bool known = held.size() == lexical.size();
  std::vector<std::int64_t> out;
  out.reserve(lexical.size());
  std::vector<std::string> words;
  for (std::size_t f = 0; f < lexical.size(); ++f) {
    auto it = idx.facts.find(lexical[f]);
    if (it == idx.facts.end() || it->second.source_pages.empty() || it->second.version > 1) {
      out.push_back(lexical[f]);
      continue;
    }
    if (!known) words = memory::facts::LexicalTerms(it->second.text);
    auto holds = [&](std::size_t i) {
      return known ? (held[f] >> i & 1) != 0
                   : std::find(words.begin(), words.end(), terms[i]) != words.end();
    };
    bool any_superior = false;
    for (std::size_t i = 0; i < terms.size() && asks_superior && !any_superior; ++i) {
      any_superior = is_superior(terms[i]) && holds(i);
    }
    double have = 0.0;
    for (std::size_t i = 0; i < own; ++i) {
      if (holds(i) || (any_superior && is_superior(terms[i]))) have += idf[i];
    }
    if (have >= need * total) out.push_back(lexical[f]);
  }
  return out;
}

TurnEntry EntryFromTurn(const Turn& t) {
  TurnEntry e;
  e.turn_id = t.id;
  e.seq = t.seq;
  e.event_time = t.event_time;
  e.tier = Tier::kStm;
  e.names[0] = t.user_name;
  e.names[1] = t.assistant_name;
  e.texts[0] = t.user_text;
  e.texts[1] = t.assistant_text;
  e.refs[0] = t.user_source_ref;
  e.refs[1] = t.assistant_source_ref;
  e.source_ref = t.source_ref;
  return e;
}

// The newest STM turns as context items ("recent conversation").
std::vector<RetrievedItem> RecentItems(const std::vector<Turn>& stm_turns) {
  std::vector<RetrievedItem> out;
  const std::size_t first_recent =
      stm_turns.size() > static_cast<std::size_t>(kStmForContext) ? stm_turns.size() - kStmForContext : 0;
  for (std::size_t i = first_recent; i < stm_turns.size(); ++i) {
    const Turn& t = stm_turns[i];
    RetrievedItem item;
    item.kind = ItemKind::kStmTurn;
    item.tier = Tier::kStm;
    item.id = t.id;
    item.turn_id = t.id;
    item.event_time = t.event_time;
    item.part = t.user_text.empty() ? "assistant" : (t.assistant_text.empty() ? "user" : "both");
    item.source_ref = t.source_ref;
    // (Each side's further lines indented, names on one line: as messages are
    // rendered, RenderLine of retrieval/scope_index.cpp.)
    item.text = "[" + FormatHumanDateTime(t.event_time) + "] " +
                memory::RenderExchange(text::OneLine(t.user_name), text::IndentContinuation(t.user_text),
                                       text::OneLine(t.assistant_name), text::IndentContinuation(t.assistant_text));
    item.tokens = text::EstimateTokens(item.text);
    out.push_back(std::move(item));
  }
  return out;
}

// STM turns to rank: the newest ones, plus older ones that match the query
// lexically when STM holds more (promotion behind).
Result<std::vector<Turn>> LoadStmForRanking(sql::Db* db, const RetrievalInput& in) {
  ENGRAM_ASSIGN_OR_RETURN(auto turns, memory::LoadStmNewest(db, in.scope->id, kStmForRanking));
  if (in.scope->stm_count <= static_cast<std::int64_t>(turns.size())) return turns;
  ENGRAM_ASSIGN_OR_RETURN(auto hits,
                          Lexical(db, store::FullText::kTurns, in.scope->id, store::QueryTerms(in.query),
                                  4 * kOldStmMatches));
  std::unordered_set<std::int64_t> have;
  for (const auto& t : turns) have.insert(t.id);
  std::vector<Turn> older;
  for (auto id : hits) {
    if (static_cast<int>(older.size()) >= kOldStmMatches) break;
    if (have.count(id) || in.index->turn_page.count(id)) continue;
    auto t = memory::LoadTurn(db, id);
    if (t.ok() && t->page_id == 0) older.push_back(std::move(*t));
  }
  std::sort(older.begin(), older.end(), [](const Turn& a, const Turn& b) { return a.seq < b.seq; });
  older.insert(older.end(), turns.begin(), turns.end());
  return older;
}

// The STM turns to rank with their messages indexed: from the cache while the
// scope's STM is unchanged and small enough not to depend on the query.
Result<std::shared_ptr<const StmSnapshot>> StmFor(sql::Db* db, const RetrievalInput& in) {
  const bool cacheable = in.stm_cache && in.scope->stm_count <= kStmForRanking;
  const StmCache::Key key{in.scope->generation, in.scope->data_version, in.scope->next_seq, in.scope->stm_count};
  std::uint64_t epoch = 0;
  if (cacheable) {
    if (auto hit = in.stm_cache->Find(in.scope->id, key, &epoch)) return hit;
  }
  ENGRAM_ASSIGN_OR_RETURN(auto turns, LoadStmForRanking(db, in));
  auto stm = std::make_shared<StmSnapshot>();
  stm->turns = std::move(turns);
  for (const auto& t : stm->turns) stm->messages.entries.push_back(EntryFromTurn(t));
  IndexMessages(stm->messages.entries, stm->messages.index, stm->messages.docs);
  stm->recent = RecentItems(stm->turns);
  std::shared_ptr<const StmSnapshot> out = std::move(stm);
  if (cacheable) in.stm_cache->Put(in.scope->id, key, out, epoch);
  return out;
}

RetrievedItem MessageItem(const RankedMessage& m, bool with_text) {
  const TurnEntry& e = *m.entry;
  RetrievedItem item;
  item.kind = e.page_id != 0 ? ItemKind::kPage : ItemKind::kStmTurn;
  item.tier = e.tier;
  item.id = e.page_id != 0 ? e.page_id : e.turn_id;
  item.turn_id = e.turn_id;
  item.segment_id = e.segment_id;
  item.score = m.score;
  item.event_time = e.event_time;
  item.part = m.side == 0 ? "user" : "assistant";
  item.source_ref = e.refs[m.side].empty() ? e.source_ref : e.refs[m.side];
  item.why = m.why;
  if (with_text) {
    item.text = MessageLine(e, m.side);
    item.tokens = e.tokens[m.side];
  }
  return item;
}

}  // namespace

Result<RetrievalResult> Retrieve(sql::Db* db, const RetrievalInput& in, memory::AccessLog* access) {
  const ScopeIndex& idx = *in.index;
  const std::int64_t scope_id = in.scope->id;
  const RetrieveOptions& opt = in.options;
  ENGRAM_RETURN_IF_ERROR(CheckRetrieveOptions(opt));
  const RankParams params = RankParamsFrom(opt.ranking);

  // Segments: vector + lexical over summaries and keywords; their hits feed
  // heat. (As evidence for their messages they cost recall: measured -0.002.)
  const std::vector<std::string> fts_terms = store::QueryTerms(in.query);
  ENGRAM_ASSIGN_OR_RETURN(auto lex_segs, Lexical(db, store::FullText::kSegments, scope_id, fts_terms, 50,
                                                   idx.text_in_memory ? &idx.segment_text : nullptr));
  auto seg_ranked = FusedRrf(lex_segs, Ids(idx.segments.Search(in.query_embedding, 50)));
  if (static_cast<int>(seg_ranked.size()) > opt.max_segments) seg_ranked.resize(opt.max_segments);
  for (const auto& [id, s] : seg_ranked) {
    auto arch = idx.segment_archived.find(id);
    if (arch != idx.segment_archived.end() && !arch->second) {
      auto& e = (*access)[id];
      e.first += 1;
      e.second = std::max(e.second, in.now);
    }
  }

  // STM turns, indexed on the fly, rank with the pages.
  ENGRAM_ASSIGN_OR_RETURN(auto stm_snapshot, StmFor(db, in));
  const std::vector<Turn>& stm_turns = stm_snapshot->turns;
  const StmMessages* stm_messages = &stm_snapshot->messages;
  StmMessages with_vectors;
  // Vectors only with a semantic embedder (see RankParams::vector).
  const bool use_vectors = Semantic(in) && params.vector > 0;
  if (use_vectors && !stm_turns.empty()) {
    std::vector<std::string> texts;
    for (const auto& t : stm_turns) texts.push_back(memory::RenderExchange(t));
    auto vecs = in.embedder->Embed(texts);
    if (vecs.ok() && vecs->size() == texts.size()) {
      with_vectors = *stm_messages;
      with_vectors.vectors = std::move(*vecs);
      stm_messages = &with_vectors;
    }
  }
  const StmMessages& stm = *stm_messages;

  RankQuery rq;
  // The query's terms, then WordNet expansions that the scope's messages hold
  // and that are rare enough to discriminate (see retrieval/expansion.hpp).
  const ExpansionParams expansion = ExpansionParamsFrom(opt.ranking);
  // (At least kMinExpansionDf messages: in a scope of a few dozen messages,
  // a word two of them hold is still rare, and a share alone would take none.)
  const double expansion_df_cap =
      std::max(kMinExpansionDf, expansion.max_df_share *
                                    static_cast<double>(idx.messages.size() + stm.index.size()));
  // The question's tokens, made once for its terms, expansions, time cue and dates.
  const std::vector<std::string> tokens = text::Tokenize(in.query);
  rq.terms = QueryTerms(tokens, [&](const std::string& t) { return idx.messages.Df(t) + stm.index.Df(t); });
  if (expansion.synonym > 0 && expansion.max_df_share > 0) {
    // (A speaker's name is no common noun to expand: "John" is no toilet,
    // "Mark" no grade. Replaced by a stopword, it joins no pair either.)
    const std::vector<const MessageIndex*> indexes = {&idx.messages, &stm.index};
    std::vector<std::string> words = tokens;
    for (std::string& w : words) {
      if (InNames(indexes, text::Stem(w))) w = "the";
    }
    rq.terms = ExpandQueryTerms(
        words, rq.terms,
        [&](const std::string& t) {
          const std::uint64_t hash = MessageIndex::Hash(t);
          const std::size_t df = idx.messages.Df(t, hash) + stm.index.Df(t, hash);
          return df > 0 && static_cast<double>(df) <= expansion_df_cap;
        },
        expansion);
  }
  AddStopwordNames(in.query, {&idx.messages, &stm.index}, rq.terms);
  rq.asks_when = AsksWhen(tokens);
  if (opt.ranking.answer_type > 0) {
    AnswerType answer = QuestionAnswerType(in.query);
    rq.answer_kind = answer.kind;
    if (answer.kind != 0) rq.answer_term = text::Stem(answer.word);
  }
  if (opt.ranking.date > 0) {
    // A date named without its year is the latest one by the scope's last
    // message (messages are in order of admission).
    std::optional<TimeMs> latest;
    auto later = [&](TimeMs t) { latest = latest ? std::max(*latest, t) : t; };
    if (!idx.entries.empty()) later(idx.entries.back().event_time);
    if (!stm.entries.empty()) later(stm.entries.back().event_time);
    rq.dates = QueryDateWindow(tokens, static_cast<int>(opt.ranking.date_slack_days), latest);
  }
  rq.explain = opt.explain;
  rq.vector = use_vectors ? &in.query_embedding : nullptr;
  // What the question means (built-in engine): for the facts, and for the
  // messages where its words say little (RankParams::meaning), made once
  // when the first of them needs it. (The facts are searched for what the
  // question means: "for a living" asks for an occupation, and no fact about
  // a "living room".)
  const std::string meant = memory::facts::QuestionMeant(in.query);
  std::optional<QueryMeaning> meaning;
  auto meaning_of = [&]() -> const QueryMeaning& {
    if (!meaning) meaning = MeaningOf(in.query, meant);
    return *meaning;
  };
  QuestionMeaning asked;
  if (!Semantic(in)) {
    rq.meaning_of = [&]() -> const QuestionMeaning* {
      const QueryMeaning& m = meaning_of();
      if (m.words == nullptr) return nullptr;
      asked = {m.words, m.terms, m.words->MeanOf(m.terms)};
      return &asked;
    };
  }
  auto ranked = RankMessages(idx, stm, rq, params, kRankedLimit);

  ContextInput ctx;
  ctx.options = opt;
  ctx.ranked.reserve(ranked.size());
  ctx.ranked_words.reserve(ranked.size());
  ctx.chain.reserve(ranked.size());
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const bool with_text = static_cast<int>(i) < kRankedWithText;
    const TurnEntry& e = *ranked[i].entry;
    ctx.ranked.push_back(MessageItem(ranked[i], with_text));
    ctx.ranked_words.push_back(with_text ? e.words[ranked[i].side] : 0);
    ctx.chain.push_back(PreparedChain(e));
  }
  ctx.recent = stm_snapshot->recent;
  ctx.now = in.now;
  if (opt.include_profile) ctx.profile = idx.profile;
  std::vector<std::string> fact_terms =
      meant == in.query
          ? FactTerms(tokens, fts_terms, {&idx.messages, &stm.index})
          : FactTerms(text::Tokenize(meant), store::QueryTerms(meant), {&idx.messages, &stm.index});
  // (A question about someone's superior asks for any word of one: "My
  // manager is Karen" for "Who do I report to?", as fact search does.)
  const std::size_t own_fact_terms = fact_terms.size();
  const bool asks_superior = memory::facts::AsksForSuperior(tokens);
  if (asks_superior) {
    for (const auto& t : memory::facts::SuperiorTerms()) {
      if (std::find(fact_terms.begin(), fact_terms.end(), t) == fact_terms.end())
        fact_terms.push_back(t);
    }
  }
  std::vector<std::uint64_t> held;  // the terms each fact holds (the copy's search only)
  ENGRAM_ASSIGN_OR_RETURN(
      auto lex_facts,
      Lexical(db, store::FullText::kFacts, scope_id, fact_terms, 100,
              idx.text_in_memory ? &idx.fact_text : nullptr, idx.user_scope_id, &held));
  lex_facts = FactsAsked(idx, {&idx.messages, &stm.index}, fact_terms, own_fact_terms,
                         asks_superior, lex_facts, held, opt.ranking.fact_cover);
  // (The facts by meaning only when theirs is kept: facts_with_meaning.)
  const QueryMeaning none;
  const QueryMeaning& of_facts = !Semantic(in) && idx.facts_with_meaning > 0 ? meaning_of() : none;
  ctx.user_facts = RankFacts(in, idx.user_facts, lex_facts, ItemKind::kUserFact, of_facts);
  ctx.assistant_facts =
      RankFacts(in, idx.assistant_facts, lex_facts, ItemKind::kAssistantFact, of_facts);
  return AssembleContext(std::move(ctx));
}

}  // namespace engram::retrieval
