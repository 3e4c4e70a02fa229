// WordNet (Princeton database files, as Debian's `wordnet-base` installs them
// under /usr/share/wordnet): synonyms, derivationally related words and
// hyponyms of an English word, for query expansion. Parses data.noun,
// data.verb, data.adj and the *.exc morphology exceptions itself; loaded
// lazily, once per process, and only when the files are present. Immutable
// after loading: thread-safe. No exceptions escape.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace engram::wordnet {

// How a related word relates to the query word.
enum class Relation : std::uint8_t { kSynonym, kDerivation, kHyponym };

struct RelatedWord {
  std::string word;  // lower-case; words of a collocation joined by ' '
  Relation relation = Relation::kSynonym;
  int depth = 0;     // hyponyms: 1 = direct hyponym; otherwise 0
};

struct ExpandOptions {
  int hyponym_depth = 2;       // 0: no hyponyms
  std::size_t max_words = 400;  // at most this many related words (shallow first)
  int max_senses = 2;            // the most frequent senses of each part of speech
  bool nouns = true, verbs = false, adjectives = false;
};

class WordNet {
 public:
  // Loads the database from a directory; nullptr when its files are missing
  // or unreadable.
  static std::unique_ptr<WordNet> Load(const std::string& dir);
  // The database under /usr/share/wordnet (or $WNSEARCHDIR when set), loaded
  // on the first call; nullptr when absent.
  static const WordNet* Default();

  // Base forms of a lower-case word for each part of speech ("cities" ->
  // "city", "went" -> "go"); collocations use '_' or ' ' between words.
  std::vector<std::string> BaseForms(std::string_view word) const;

  // Words related to every sense of the word's base forms: synonyms,
  // derivations, then hyponyms by depth (transitive, instances included).
  // Deterministic order; the word itself and duplicates are left out.
  std::vector<RelatedWord> Expand(std::string_view word, const ExpandOptions& opt = {}) const;

  std::size_t synsets() const { return synsets_.size(); }

 private:
  struct Synset {
    std::vector<std::uint32_t> words;
    std::vector<std::uint32_t> hyponyms;     // synset indexes
    std::vector<std::uint32_t> derivations;  // word ids
    std::uint8_t pos = 0;                    // 0 noun, 1 verb, 2 adjective
  };
  bool LoadData(const std::string& path, std::uint8_t pos);
  bool LoadIndex(const std::string& path, std::uint8_t pos);
  bool LoadExceptions(const std::string& path, std::uint8_t pos);
  std::uint32_t WordId(std::string_view w);
  int FindWord(std::string_view w) const;
  bool HasPos(int word, std::uint8_t pos) const;
  void Resolve();

  std::unordered_map<std::string, std::uint32_t> word_ids_;
  std::vector<std::string> words_;
  std::vector<std::vector<std::uint32_t>> word_synsets_;  // per word id, by sense (index.*)
  std::vector<Synset> synsets_;
  std::unordered_map<std::uint64_t, std::uint32_t> by_offset_;  // pos << 32 | offset
  // Pointers by offset until Resolve() maps them to indexes.
  std::vector<std::vector<std::uint64_t>> pending_hyponyms_;
  std::vector<std::vector<std::pair<std::uint64_t, int>>> pending_derivations_;
  std::unordered_map<std::string, std::vector<std::string>> exceptions_[3];
};

}  // namespace engram::wordnet
