// The term x context matrix the word vectors are factorised from. Rows are
// index terms (the engine's stems); columns are WordNet synsets (plus one per
// lexicographer file). A term meets a synset when the synset is:
//   - one of its senses (weighted 1/rank: frequent senses count most);
//   - a hypernym of a sense, up to `hyper_levels` up, decayed per level;
//   - a direct hyponym, a related synset (derivation, attribute, similar, also,
//     pertainym, domain, cause, entailment) or a part/member/substance;
//   - the first sense (and its hypernyms) of a word of a sense's gloss;
//   - a synset whose gloss uses the term ("inverse gloss": "pollen" meets
//     hay_fever), or a collocation with the term as one of its words.
// Then positive pointwise mutual information with context-distribution
// smoothing (Levy, Goldberg and Dagan 2015) turns weights into association.
// Build-time tool code: not part of the engine.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "randomized_svd.hpp"
#include "wordnet_graph.hpp"

namespace engram::wordvec_tool {

struct CooccurrenceWeights {
  double hyper_decay = 0.7;
  int hyper_levels = 5;
  double hyponym = 0.3;
  double related = 0.5;
  double part = 0.3;
  double lexfile = 0.3;
  double gloss = 0.8;          // a sense's gloss words' first senses
  double inverse_gloss = 0.8;  // synsets whose gloss uses the term
  double collocation = 0.5;    // collocations with the term as a word
  int max_rank = 8;            // senses beyond this rank are ignored
  double smoothing = 0.75;     // context-distribution smoothing exponent of PPMI
};

// The index terms that get a vector: the stems of WordNet's single-word
// lemmas and the terms used in at least two glosses, sorted.
std::vector<std::string> VectorTerms(const WordNetGraph& wn);

// The PPMI-weighted matrix, rows in the order of `terms`.
SparseMatrix BuildCooccurrence(const WordNetGraph& wn, const std::vector<std::string>& terms,
                               const CooccurrenceWeights& w);

}  // namespace engram::wordvec_tool
