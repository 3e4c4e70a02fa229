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

// The cache key of a verb idiom's expansions (IdiomAt), apart from a noun
// pair's of the same words.
constexpr std::string_view kIdiomKey = "v:";

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
  // A verb idiom: the words of its most frequent sense, of one meaning as a
  // two-word name's kinds are, so at `compound`, and their derivations ("pass
  // away": "die"; "death") as any word's.
  const bool idiom = word.starts_with(kIdiomKey);
  if (idiom) {
    opt.nouns = false;
    opt.verbs = true;
    opt.max_senses = 1;
    opt.hyponym_depth = 0;
    opt.part_depth = 0;
    opt.first_senses = false;
  }
  std::vector<Candidate> out;
  std::unordered_map<std::string, std::size_t> at;  // index in `out` by term
  // (Index terms made with the image; words that are not one term, such as
  // collocations, whose words alone say something else, are left out.)
  std::vector<wordnet::RelatedWord> related;
  if (idiom) {
    // (Only its single words: "hook up with", a synonym of "get married",
    // would be its one term "hook".)
    for (auto& r : wn.Expand(std::string_view(word).substr(kIdiomKey.size()), opt)) {
      if (r.word.find(' ') != std::string::npos) continue;
      std::vector<std::string> terms = text::Terms(r.word);
      if (terms.size() != 1) continue;
      r.word = std::move(terms[0]);
      related.push_back(std::move(r));
    }
  } else {
    related = wn.ExpandTerms(word, opt);
  }
  for (auto& r : related) {
    const bool kind = (compound && r.first_sense) || idiom;
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

// A process-wide cache of values made from a word (bounded: cleared at
// 20,000 words), each kind of value its own (`Tag`); `make` runs outside the
// lock, so two threads may make the same value once each.
template <typename Tag, typename T, typename Make>
std::shared_ptr<const T> CachedPerWord(const std::string& word, Make make) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const T>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(word);
    if (it != cache.end()) return it->second;
  }
  auto made = std::make_shared<const T>(make());
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 20000) cache.clear();  // bounded
  cache.emplace(word, made);
  return made;
}

// Index-term expansions of one word (or "a_b" pair), cached per process for
// the default WordNet and parameters: they do not depend on the scope.
Candidates WordExpansions(const wordnet::WordNet& wn, const std::string& word,
                          const ExpansionParams& p) {
  auto make = [&] { return Compute(wn, word, p); };
  if (&wn != wordnet::WordNet::Default() || !(p == DefaultExpansionParams()))
    return std::make_shared<const std::vector<Candidate>>(make());
  struct Tag;
  return CachedPerWord<Tag, std::vector<Candidate>>(word, make);
}

// Of a word and its base forms ("popped": "pop"), those that begin a
// collocation of WordNet's: cached per process for the default WordNet (a
// look-up of each form of each part of speech; most words begin none).
std::shared_ptr<const std::vector<std::string>> FirstWords(const wordnet::WordNet& wn,
                                                           const std::string& word) {
  auto make = [&] {
    std::vector<std::string> out;
    auto add = [&](std::string w) {
      if (std::find(out.begin(), out.end(), w) == out.end() && wn.StartsCollocation(w))
        out.push_back(std::move(w));
    };
    add(word);
    for (std::string& b : wn.BaseForms(word)) add(std::move(b));
    return out;
  };
  if (&wn != wordnet::WordNet::Default())
    return std::make_shared<const std::vector<std::string>>(make());
  struct Tag;
  return CachedPerWord<Tag, std::vector<std::string>>(word, make);
}

// Adverb particles that end a verb idiom ("pass away", "grow up", "live
// together"); other stopwords end none: "make for", "go to" and "work on"
// are a verb and the question's preposition far more often than the idioms
// WordNet names by those words.
bool IdiomEnd(const std::string& token) {
  static constexpr std::string_view kParticles[] = {"up",   "down", "out",      "away", "off",
                                                    "back", "over", "together", "apart"};
  return !text::IsStopword(token) ||
         std::find(std::begin(kParticles), std::end(kParticles), token) != std::end(kParticles);
}

// The verb idiom of two to four words that begins at token i (no stopword:
// "be given"), as WordNet writes it ("pop_the_question" for "popped the
// question": its first word in any inflection, one of `firsts`, FirstWords
// of the token), when WordNet knows it as a verb of at most max_senses
// senses (a "break up" of nineteen says nothing in particular); its length
// in tokens in `n`. "" when there is none.
std::string IdiomAt(const wordnet::WordNet& wn, const std::vector<std::string>& tokens,
                    std::size_t i, const std::vector<std::string>& firsts, int max_senses,
                    std::size_t& n) {
  if (max_senses <= 0 || i + 1 >= tokens.size() || firsts.empty()) return {};
  for (n = std::min<std::size_t>(4, tokens.size() - i); n >= 2; --n) {
    if (!IdiomEnd(tokens[i + n - 1])) continue;
    std::string rest;
    for (std::size_t k = i + 1; k < i + n; ++k) rest += "_" + tokens[k];
    for (const std::string& first : firsts) {
      const std::string idiom = first + rest;
      const int senses = wn.VerbSenses(idiom);
      if (senses > 0 && senses <= max_senses) return idiom;
    }
  }
  return {};
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
  // The base term (its bit) a word is, 0 when none.
  auto word_term = [&](const std::string& token) {
    const std::string stem = text::Stem(token);
    for (std::size_t k = 0; k < base.size() && k < 32; ++k) {
      if (base[k].term == stem) return std::uint32_t{1} << k;
    }
    return std::uint32_t{0};
  };
  // Each word to expand with the base terms (bits of their indexes) it is;
  // a pair or an idiom is several words, which its kinds stand for.
  struct Word {
    std::string text;
    std::uint32_t of;
    bool phrase;
  };
  std::vector<Word> words;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (text::IsStopword(tokens[i])) continue;
    // An idiom or a pair WordNet names as one thing begins with the word or a
    // base form of it, as some collocation of WordNet's does: most words
    // begin none, and the look-ups of both are left out.
    static const std::vector<std::string> kNone;
    const auto firsts = i + 1 < tokens.size() ? FirstWords(*wn, tokens[i]) : nullptr;
    std::size_t n = 0;
    const std::string idiom = IdiomAt(*wn, tokens, i, firsts ? *firsts : kNone, p.idiom_senses, n);
    if (!idiom.empty()) {
      std::uint32_t of = 0;
      for (std::size_t k = i; k < i + n; ++k) of |= word_term(tokens[k]);
      words.push_back({std::string(kIdiomKey) + idiom, of, true});
    }
    words.push_back({tokens[i], word_term(tokens[i]), false});
    if (firsts && !firsts->empty() && !text::IsStopword(tokens[i + 1])) {
      words.push_back(
          {tokens[i] + "_" + tokens[i + 1], word_term(tokens[i]) | word_term(tokens[i + 1]), true});
    }
  }
  for (const Word& wd : words) {
    const std::string& word = wd.text;
    const std::uint32_t of = wd.of;
    // (A pair's kinds stand for its words in the coverage share too.)
    const auto covers = [&](const Candidate& c) {
      return c.kind && wd.phrase ? of : std::uint32_t{0};
    };
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
