// Query expansion with WordNet (core/wordnet.hpp): synonyms, derivations and
// hyponyms of the query's nouns ("instruments" -> violin, clarinet; "martial
// arts" -> taekwondo; "kids" -> child, toddler), kept only when the scope's
// messages hold them, weighted well below the query's own terms. Without the
// WordNet files the query is left as it is. Pure apart from the process-wide
// WordNet and a bounded per-process cache of word expansions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engram/types.hpp"

#include "retrieval/lexical.hpp"

namespace engram::wordnet {
class WordNet;
}

namespace engram::retrieval {

// Measured on LoCoMo (docs/PERFORMANCE.md): weights of 0.5 or verbs and
// adjectives (very polysemous) cost recall; nouns only, the two most frequent
// senses, weight 0.25 and rare terms only gain a little everywhere.
struct ExpansionParams {
  double synonym = 0.25;        // weight of a synonym against a query term
  double derivation = 0.25;     // ... of a derivationally related word
  double hyponym = 0.25;        // ... of a direct hyponym
  double hyponym_decay = 0.6;   // per further level
  // Four levels: "computer" reaches "laptop" (a portable, personal, digital
  // computer); two reached no narrow kind far below its class.
  int hyponym_depth = 4;
  int senses = 2;               // the most frequent senses of a word
  // The places within a place the question names ("Portugal": "Lisbon",
  // "Porto"), to this depth, at most max_parts of them looked at per word.
  double part = 0.25;       // ... of a place within it
  double part_decay = 0.6;  // per further level
  // The weight of each relation above, for the expansions of two adjacent
  // words WordNet names as one thing ("martial_art"): one sense, so no
  // dilution by the others.
  double compound = 1.0;
  // A verb idiom of two to four words ("pass away", "pop the question",
  // "get married") of at most this many senses asks for the words of its
  // most frequent sense at `compound` ("die"; "propose"; "marry", "wed") and
  // their derivations at `derivation` ("death"; "proposal"). 0: none.
  int idiom_senses = 2;
  int part_depth = 2;
  std::size_t max_parts = 512;
  std::size_t max_per_word = 24;    // expansions kept per query word (accepted ones)
  // WordNet words looked at per query word, nearest first (on LoCoMo 2,048
  // and 4,096 find the same as 1,024).
  std::size_t max_candidates = 1024;
  // Callers accept only terms held by at most this share of the messages:
  // common ones add little evidence and cost time.
  double max_df_share = 0.01;
  bool operator==(const ExpansionParams&) const = default;
};
const ExpansionParams& DefaultExpansionParams();

// The expansion a caller's ranking options give: DefaultExpansionParams()
// with the weights and the df share of the options.
ExpansionParams ExpansionParamsFrom(const RankingOptions& o);

// `base` (the query's own terms, from QueryTerms) followed by the expansions
// of the query's words and adjacent word pairs ("martial arts") that `accept`
// accepts (index terms: stemmed), each once with its best weight; a term of
// `base` is never added again. `wn` null: wordnet::WordNet::Default().
std::vector<QueryTerm> ExpandQueryTerms(const std::string& query, const std::vector<QueryTerm>& base,
                                        const std::function<bool(const std::string&)>& accept,
                                        const ExpansionParams& p = DefaultExpansionParams(),
                                        const wordnet::WordNet* wn = nullptr);
// The same from the query's tokens (text::Tokenize), made once per query.
std::vector<QueryTerm> ExpandQueryTerms(const std::vector<std::string>& tokens, const std::vector<QueryTerm>& base,
                                        const std::function<bool(const std::string&)>& accept,
                                        const ExpansionParams& p = DefaultExpansionParams(),
                                        const wordnet::WordNet* wn = nullptr);

// The kind of thing a lower-case word names, as a bit of MessageIndex::Kinds:
// NounKindBit of WordNet's lexicographer file of its most frequent noun
// sense (wordnet::WordNet::NounClass: "camping", "swimming" and "pottery"
// are acts, "Boston" a location). 0 for a word of fewer than four letters,
// a stopword, a verb that is seldom the thing asked for ("made", "going",
// "like") or a word WordNet does not know as a noun, and without WordNet.
std::uint32_t NounKindOf(std::string_view word, const wordnet::WordNet* wn = nullptr);

// What kind of thing a question asks for: the first noun WordNet knows among
// the four words after its first "what" ("what's") or "which" (short ones
// too: "art", "pet"; not a single letter), skipping stopwords, "kind",
// "type", "sort", verbs as in NounKindOf, and names (words written
// capitalised, possessives): "What activities does Melanie partake in?"
// asks for an act, "Which city did Jon visit?" for a location, "What did
// Caroline research?" for what "research" is. `kind` 0 when there is none.
struct AnswerType {
  std::uint32_t kind = 0;  // NounKindBit
  std::string word;        // the question's noun, lower-cased
};
AnswerType QuestionAnswerType(std::string_view question, const wordnet::WordNet* wn = nullptr);

}  // namespace engram::retrieval
