// The WordNet database as the word-vector builder reads it: synsets with
// their pointers (resolved to synset indexes), lexicographer file and gloss
// terms, and for every lemma its senses in frequency order. Reads the files
// of Debian's `wordnet-base` (/usr/share/wordnet: data.* and index.*).
// Build-time tool code: not part of the engine.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace engram::wordvec_tool {

struct Synset {
  int pos = 0;  // 0 noun, 1 verb, 2 adjective (and satellite), 3 adverb
  int lexfile = 0;
  std::vector<std::uint32_t> hypernyms, hyponyms, related, parts;
  std::vector<std::string> gloss_terms;  // distinct index terms of the definition
};

class WordNetGraph {
 public:
  // Reads DIR/data.{noun,verb,adj,adv} and DIR/index.*; false (with a message
  // in `error`) when a data file is missing. `examples`: the gloss keeps its
  // quoted usage examples too.
  bool Load(const std::string& dir, bool examples, std::string* error);

  const std::vector<Synset>& synsets() const { return syn_; }
  // Lemma (lower case, '_' between words) -> its senses, most frequent first
  // within each part of speech.
  const std::map<std::string, std::vector<std::uint32_t>>& lemma_senses() const { return lemma_senses_; }
  // Index term -> the single-word lemmas it is the stem of.
  const std::unordered_map<std::string, std::vector<std::string>>& stem_lemmas() const { return stem_lemmas_; }
  // The largest sense count of the lemmas of a stem (0 when unknown).
  int SenseCount(const std::string& stem) const;
  // The first sense of each part of speech of the lemmas of a stem.
  std::vector<std::uint32_t> FirstSenses(const std::string& stem) const;

  // The one index term of a single-word lemma ("" for collocations and stopwords).
  static std::string StemOf(const std::string& lemma);

 private:
  bool LoadData(const std::string& path, int pos, bool examples);
  void LoadIndex(const std::string& path, int pos);
  void Resolve();

  std::vector<Synset> syn_;
  std::unordered_map<std::uint64_t, std::uint32_t> by_key_;
  std::vector<std::vector<std::pair<std::string, std::uint64_t>>> raw_ptrs_;
  std::map<std::string, std::vector<std::uint32_t>> lemma_senses_;
  std::unordered_map<std::string, int> sense_count_;
  std::unordered_map<std::string, std::vector<std::string>> stem_lemmas_;
};

}  // namespace engram::wordvec_tool
