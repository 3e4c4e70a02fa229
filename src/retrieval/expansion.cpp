#include "retrieval/expansion.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/text.hpp"
#include "core/wordnet.hpp"

namespace engram::retrieval {

namespace {

struct Candidate {
  std::string term;  // index term (stemmed)
  double weight;
};
using Candidates = std::shared_ptr<const std::vector<Candidate>>;

std::vector<Candidate> Compute(const wordnet::WordNet& wn, const std::string& word, const ExpansionParams& p) {
  wordnet::ExpandOptions opt;
  opt.hyponym_depth = p.hyponym_depth;
  opt.max_words = p.max_candidates;
  opt.max_senses = p.senses;
  std::vector<Candidate> out;
  // (Index terms made with the image; words that are not one term, such as
  // collocations, whose words alone say something else, are left out.)
  for (auto& r : wn.ExpandTerms(word, opt)) {
    double w = p.synonym;
    if (r.relation == wordnet::Relation::kDerivation) w = p.derivation;
    if (r.relation == wordnet::Relation::kHyponym) {
      w = p.hyponym;
      for (int d = 1; d < r.depth; ++d) w *= p.hyponym_decay;
    }
    auto same = std::find_if(out.begin(), out.end(), [&](const Candidate& c) { return c.term == r.word; });
    if (same == out.end()) {
      out.push_back({std::move(r.word), w});
    } else {
      same->weight = std::max(same->weight, w);
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
  p.synonym = p.derivation = p.hyponym = o.expansion;
  p.max_df_share = o.expansion_max_df_share;
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
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (text::IsStopword(tokens[i])) continue;
    words.push_back(tokens[i]);
    if (i + 1 < tokens.size() && !text::IsStopword(tokens[i + 1])) words.push_back(tokens[i] + "_" + tokens[i + 1]);
  }
  for (const auto& word : words) {
    std::size_t kept = 0;
    const Candidates candidates = WordExpansions(*wn, word, p);
    for (const auto& c : *candidates) {
      if (kept >= p.max_per_word) break;
      auto have = std::find_if(out.begin(), out.end(), [&](const QueryTerm& q) { return q.term == c.term; });
      if (have != out.end()) {
        // A query term keeps its own weight; an expansion its best one.
        if (have - out.begin() >= static_cast<std::ptrdiff_t>(base.size())) have->weight = std::max(have->weight, c.weight);
        continue;
      }
      if (!accept(c.term)) continue;
      out.push_back({c.term, c.weight});
      ++kept;
    }
  }
  return out;
}

namespace {

// Verbs that are nouns too but, after "what did Ana ...", are never the
// thing asked for, and in a message say nothing of what it names.
bool IsVerbNotThing(std::string_view w) {
  static constexpr std::string_view kWords[] = {"like", "likes", "liked", "going", "went", "make", "made",
                                                "makes", "gets", "got", "goes", "done"};
  return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}

std::uint32_t KindOf(std::string_view word, const wordnet::WordNet& wn) {
  if (text::IsStopword(word) || IsVerbNotThing(word)) return 0;
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
  // Words: letters and apostrophes.
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '\''; };
  std::vector<std::string_view> words;
  for (std::size_t i = 0; i < question.size();) {
    if (!letter(question[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < question.size() && letter(question[j])) ++j;
    words.push_back(question.substr(i, j - i));
    i = j;
  }
  auto lower = [](std::string_view w) {
    std::string s(w);
    for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return s;
  };
  std::size_t at = 0;
  auto opens = [&](std::string_view w) {
    const std::string l = lower(w);
    return l == "what" || l == "which" || l == "what's";
  };
  while (at < words.size() && !opens(words[at])) ++at;
  int seen = 0;
  for (std::size_t i = at + 1; i < words.size() && seen < 4; ++i) {
    const std::string_view w = words[i];
    // Names: capitalised, or possessive ("Caroline's"); a single letter is
    // what a typographic apostrophe leaves of one ("Caroline’s": "s").
    if ((w[0] >= 'A' && w[0] <= 'Z') || (w.size() > 2 && w.substr(w.size() - 2) == "'s") || w.size() < 2) continue;
    ++seen;
    const std::string l = lower(w);
    if (l == "kind" || l == "kinds" || l == "type" || l == "types" || l == "sort" || l == "sorts") continue;
    const std::uint32_t kind = KindOf(l, *wn);
    if (kind == 0) continue;
    out.kind = kind;
    out.word = l;
    return out;
  }
  return out;
}

}  // namespace engram::retrieval
