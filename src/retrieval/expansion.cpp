#include "retrieval/expansion.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/answer_class.hpp"
#include "core/text.hpp"
#include "core/wordnet.hpp"

namespace engram::retrieval {

namespace {

struct Candidate {
  std::string term;  // index term (stemmed)
  double weight;
  bool kind;  // of a two-word name, in its most frequent sense: stands for the name's words
};
using Candidates = std::shared_ptr<const std::vector<Candidate>>;

std::vector<Candidate> Compute(const wordnet::WordNet& wn, const std::string& word, const ExpansionParams& p) {
  wordnet::ExpandOptions opt;
  opt.hyponym_depth = p.hyponym_depth;
  opt.max_words = p.max_candidates;
  opt.max_senses = p.senses;
  opt.part_depth = p.part_depth;
  opt.max_parts = p.max_parts;
  // (A two-word name's related words weigh `compound` where it is their
  // most frequent sense: "Spain" is a European country first, "Kings" is no
  // basketball team first.)
  const bool compound = word.find('_') != std::string::npos;
  opt.first_senses = compound;
  std::vector<Candidate> out;
  std::unordered_map<std::string, std::size_t> at;  // index in `out` by term
  // (Index terms made with the image; words that are not one term, such as
  // collocations, whose words alone say something else, are left out.)
  for (auto& r : wn.ExpandTerms(word, opt)) {
    const bool kind = compound && r.first_sense;
    double w = kind ? p.compound : p.synonym;
    if (r.relation == wordnet::Relation::kDerivation) w = p.derivation;
    if (r.relation == wordnet::Relation::kHyponym) {
      w = kind ? p.compound : p.hyponym;
      for (int d = 1; d < r.depth; ++d) w *= p.hyponym_decay;
    }
    if (r.relation == wordnet::Relation::kPart) {
      w = kind ? p.compound : p.part;
      for (int d = 1; d < r.depth; ++d) w *= p.part_decay;
    }
    auto [same, fresh] = at.try_emplace(r.word, out.size());
    if (fresh) {
      out.push_back({std::move(r.word), w, kind});
    } else {
      out[same->second].weight = std::max(out[same->second].weight, w);
      out[same->second].kind = out[same->second].kind || kind;
    }
  }
  return out;
}

// Index-term expansions of one word (or "a_b" pair), cached per process for
// the default WordNet and parameters: they do not depend on the scope.
Candidates WordExpansions(const wordnet::WordNet& wn, const std::string& word, const ExpansionParams& p) {
  const bool cacheable = &wn == wordnet::WordNet::Default() && p == DefaultExpansionParams();
  if (!cacheable) return std::make_shared<const std::vector<Candidate>>(Compute(wn, word, p));
  static std::mutex mu;
  static std::unordered_map<std::string, Candidates> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(word);
    if (it != cache.end()) return it->second;
  }
  auto shared = std::make_shared<const std::vector<Candidate>>(Compute(wn, word, p));
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 20000) cache.clear();  // bounded
  cache.emplace(word, shared);
  return shared;
}

}  // namespace

const ExpansionParams& DefaultExpansionParams() {
  static const ExpansionParams p;
  return p;
}

ExpansionParams ExpansionParamsFrom(const RankingOptions& o) {
  ExpansionParams p = DefaultExpansionParams();
  p.synonym = p.derivation = p.hyponym = p.part = o.expansion;
  p.max_df_share = o.expansion_max_df_share;
  p.compound = o.expansion_compound;
  return p;
}

std::vector<QueryTerm> ExpandQueryTerms(const std::string& query, const std::vector<QueryTerm>& base,
                                        const std::function<bool(const std::string&)>& accept,
                                        const ExpansionParams& p, const wordnet::WordNet* wn) {
  return ExpandQueryTerms(text::Tokenize(query), base, accept, p, wn);
}

std::vector<QueryTerm> ExpandQueryTerms(const std::vector<std::string>& tokens, const std::vector<QueryTerm>& base,
                                        const std::function<bool(const std::string&)>& accept,
                                        const ExpansionParams& p, const wordnet::WordNet* wn) {
  std::vector<QueryTerm> out = base;
  if (!wn) wn = wordnet::WordNet::Default();
  if (!wn) return out;
  std::vector<std::string> words;
  std::vector<std::size_t> pair_at;  // of each word: its first token when it is a pair, else npos
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (text::IsStopword(tokens[i])) continue;
    words.push_back(tokens[i]);
    pair_at.push_back(std::string::npos);
    if (i + 1 < tokens.size() && !text::IsStopword(tokens[i + 1])) {
      words.push_back(tokens[i] + "_" + tokens[i + 1]);
      pair_at.push_back(i);
    }
  }
  // The base term (its bit) a word is, 0 when none.
  auto word_term = [&](const std::string& token) {
    const std::string stem = text::Stem(token);
    for (std::size_t k = 0; k < base.size() && k < 32; ++k) {
      if (base[k].term == stem) return std::uint32_t{1} << k;
    }
    return std::uint32_t{0};
  };
  // The base terms (bits of their indexes) a pair's two words are, which its
  // kinds stand for.
  auto pair_terms = [&](std::size_t i) { return word_term(tokens[i]) | word_term(tokens[i + 1]); };
  for (std::size_t wi = 0; wi < words.size(); ++wi) {
    const std::string& word = words[wi];
    const bool pair = pair_at[wi] != std::string::npos;
    const std::uint32_t of = pair ? pair_terms(pair_at[wi]) : word_term(word);
    // (A pair's kinds stand for its words in the coverage share too.)
    const auto covers = [&](const Candidate& c) { return c.kind && pair ? of : std::uint32_t{0}; };
    std::size_t kept = 0;
    const Candidates candidates = WordExpansions(*wn, word, p);
    for (const auto& c : *candidates) {
      if (kept >= p.max_per_word) break;
      // (Most candidates are words the scope does not hold: the look-up
      // comes first. A term `accept` refuses is in `out` only as a query
      // term, which keeps its own weight anyway.)
      if (!accept(c.term)) continue;
      auto have = std::find_if(out.begin(), out.end(), [&](const QueryTerm& q) { return q.term == c.term; });
      if (have != out.end()) {
        // A query term keeps its own weight; an expansion its best one.
        if (have - out.begin() >= static_cast<std::ptrdiff_t>(base.size())) {
          have->weight = std::max(have->weight, c.weight);
          have->covers |= covers(c);
          have->of |= of;
        }
        continue;
      }
      out.push_back({c.term, c.weight, true, covers(c), of});
      ++kept;
    }
  }
  return out;
}

namespace {

std::uint32_t KindOf(std::string_view word, const wordnet::WordNet& wn) {
  if (text::IsStopword(word) || answer::IsVerbNotThing(word)) return 0;
  return NounKindBit(wn.NounClass(word));
}

}  // namespace

std::uint32_t NounKindOf(std::string_view word, const wordnet::WordNet* wn) {
  if (wn == nullptr) wn = wordnet::WordNet::Default();
  // (Short words are mostly function words and names: "say", "fun", "Jon".)
  return wn == nullptr || word.size() < 4 ? 0 : KindOf(word, *wn);
}

AnswerType QuestionAnswerType(std::string_view question, const wordnet::WordNet* wn) {
  if (wn == nullptr) wn = wordnet::WordNet::Default();
  AnswerType out;
  if (wn == nullptr) return out;
  out.word = answer::QuestionFocus(question, *wn);
  out.kind = out.word.empty() ? 0 : KindOf(out.word, *wn);
  if (out.kind == 0) out.word.clear();
  return out;
}

}  // namespace engram::retrieval
