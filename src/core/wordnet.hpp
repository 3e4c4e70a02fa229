// WordNet (Princeton database files, as Debian's `wordnet-base` installs them
// under /usr/share/wordnet): synonyms, derivationally related words and
// hyponyms of an English word, for query expansion.
//
// Two ways in, one form: Load() parses data.noun, data.verb, data.adj, the
// index files and the *.exc morphology exceptions into a compact image (flat
// arrays of 32-bit ids and sorted string tables, with each word's index term:
// about 8.1 MB for WordNet 3.0, with its names and the parts of named
// places);
// Open() memory-maps an image that WriteImage() saved (made at build time by
// tools/wordnet, `engram-wordnet.bin` beside the binary): no parsing, no
// allocation, and the pages are shared by every process on the machine. Both
// answer identically. Immutable after loading: thread-safe. No exceptions
// escape.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/name_senses.hpp"

namespace engram::wordnet {

// How a related word relates to the query word.
enum class Relation : std::uint8_t { kSynonym, kDerivation, kHyponym, kPart };

struct RelatedWord {
  std::string word;  // lower-case; words of a collocation joined by ' '
  Relation relation = Relation::kSynonym;
  int depth = 0;  // hyponyms and parts: 1 = direct; otherwise 0
  // The sense it was reached by is the most frequent one of that part of
  // speech of the word and of each of its base forms (ExpandOptions::
  // first_senses): "Spain" from "European country"; not "heat" (a
  // temperature first) from "basketball team", nor "five" (a number first),
  // nor "Kings" (a plural of "king" as written).
  bool first_sense = false;
};

struct ExpandOptions {
  int hyponym_depth = 2;       // 0: no hyponyms
  std::size_t max_words = 400;  // at most this many related words (shallow first)
  int max_senses = 2;            // the most frequent senses of each part of speech
  bool nouns = true, verbs = false, adjectives = false;
  // The places within a place (kPart): the part meronyms of the word's
  // location senses that name one place (WordNet's instances: "Portugal",
  // not "city") to this depth ("Portugal": "Lisbon" at 1), at most
  // max_parts words besides max_words. 0: none.
  int part_depth = 0;
  std::size_t max_parts = 0;
  // Fill RelatedWord::first_sense (a look-up of each related word's base
  // forms; off, it is false).
  bool first_senses = false;
};

class WordNet {
 public:
  ~WordNet();
  WordNet(const WordNet&) = delete;
  WordNet& operator=(const WordNet&) = delete;

  // Parses the database in a directory; nullptr when its files are missing
  // or unreadable.
  static std::unique_ptr<WordNet> Load(const std::string& dir);
  // The same with name senses added (core/name_senses.hpp: the build's
  // image carries tools/wordvec/names.tsv); nullptr, with why in `error`,
  // also when a name's kind is no noun of the database.
  static std::unique_ptr<WordNet> Load(const std::string& dir, const std::vector<names::NameSense>& names,
                                       std::string* error);
  // Maps an image written by WriteImage; nullptr when the file is missing or
  // not a valid image.
  static std::unique_ptr<WordNet> Open(const std::string& path);
  // Writes this database's image to `path`; false on an I/O error.
  bool WriteImage(const std::string& path) const;

  // The process's database, made on the first call: the image named by
  // $ENGRAM_WORDNET ("off" or empty: none at all), else `engram-wordnet.bin`
  // beside the executable (or in ../share/engram), else parsed from
  // $WNSEARCHDIR or /usr/share/wordnet; nullptr when there is none.
  static const WordNet* Default();
  // Where Default() came from: the image's path, "parsed from <dir>", or ""
  // when there is none (a report says which database its figures used).
  static std::string DefaultSource();
  // Maps the default image now when there is one (the engine calls this when
  // it opens, so no request pays for it); without an image, the database is
  // parsed at the first Default() as before.
  static void PreloadDefault();

  // Base forms of a lower-case word for each part of speech ("cities" ->
  // "city", "went" -> "go"); collocations use '_' or ' ' between words.
  std::vector<std::string> BaseForms(std::string_view word) const;

  // The index terms (as ExpandTerms gives them) of the base forms that the
  // exception lists give an irregular noun or verb form of a lower-case word
  // ("went" -> "go", "made" -> "make", "children" -> "child"); empty for a
  // regular form. No stemmer runs here.
  std::vector<std::string> IrregularBaseTerms(std::string_view word) const;

  // The lexicographer file of the most frequent noun sense of a lower-case
  // word's first noun base form: what kind of thing it names ("activities",
  // "camping" and "swimming": 4, noun.act; "city" and "Boston": 15,
  // noun.location; "guitar": 6, noun.artifact). Nouns are files 3 to 28;
  // -1 when the word is no noun WordNet knows.
  int NounClass(std::string_view word) const;
  // Whether some base form of a lower-case word is a verb WordNet knows
  // ("lives", "wants", "went"; not "appointment").
  bool IsVerb(std::string_view word) const;
  // The parts of speech of a lower-case word as written (no base form
  // taken): kLemmaNoun, kLemmaVerb and kLemmaAdjective or'ed; 0 when WordNet
  // does not know it ("meditate": a verb; "dog": a noun and a verb;
  // "swimming": a noun and an adjective, its verb being "swim").
  static constexpr unsigned kLemmaNoun = 1, kLemmaVerb = 2, kLemmaAdjective = 4;
  unsigned LemmaPos(std::string_view word) const;
  // How many verb senses a lower-case word as written has (no base form
  // taken; a collocation's words joined by '_' or ' '): "pop the question"
  // 1, "pass away" 2, "break up" 19; 0 when it is no verb WordNet knows.
  int VerbSenses(std::string_view word) const;
  // Whether some collocation WordNet knows begins with this lower-case word
  // as written ("pop": "pop_the_question"; not "popped").
  bool StartsCollocation(std::string_view word) const;

  // Words related to every sense of the word's base forms: synonyms,
  // derivations, then hyponyms by depth (transitive, instances included),
  // then, when asked for, the places within its location senses by depth.
  // Deterministic order; the word itself and duplicates are left out.
  std::vector<RelatedWord> Expand(std::string_view word, const ExpandOptions& opt = {}) const;
  // The same related words as their index terms (text::Terms of the word,
  // one term; made when the image is, so no stemmer runs here), in the same
  // order; a word that is not one term (a collocation, a stopword) is left
  // out, though it counts towards opt.max_words as in Expand.
  std::vector<RelatedWord> ExpandTerms(std::string_view word, const ExpandOptions& opt = {}) const;

  // Whether two lower-case words share their most frequent sense: for some
  // base form of each, the first synset of one of its parts of speech is the
  // same ("car" and "automobile", "kids" and "children", "hate" and
  // "detest"; not "nurse" and "nanny", which share only the second sense of
  // "nurse", nor a word and its hypernym). False when either is unknown.
  bool ShareFirstSense(std::string_view a, std::string_view b) const;

  // A set of synsets, one bit each (NounsUnder makes it).
  struct SynsetSet {
    std::vector<std::uint64_t> bits;
    std::size_t count = 0;
    bool Has(std::uint32_t s) const { return s / 64 < bits.size() && ((bits[s / 64] >> (s % 64)) & 1) != 0; }
    bool empty() const { return count == 0; }
    // Adds a synset below `bits.size() * 64`; false when it was there.
    bool Add(std::uint32_t s) {
      if (Has(s)) return false;
      bits[s / 64] |= std::uint64_t{1} << (s % 64);
      ++count;
      return true;
    }
  };
  // The noun senses of some lower-case words (the `max_senses` most frequent
  // of each base form; only those of lexicographer file `lexfile` when it is
  // >= 0) and every synset below them (hyponyms and instances,
  // transitively): what is a kind of those words ("bird": "parrot",
  // "sibling": "brother", "instrument": "guitar"). A sense with more than
  // `limit` synsets below it is left out: a class so wide ("food",
  // "entity") tells little.
  SynsetSet NounsUnder(const std::vector<std::string>& words, int max_senses, int lexfile,
                       std::size_t limit) const;
  // Every noun synset of some lexicographer files (bit f of `files` for file
  // f: 1u << 15 for noun.location).
  SynsetSet NounsInFiles(std::uint32_t files) const;
  // The most frequent noun sense of a lower-case word (of its first base
  // form that is a noun, as NounClass finds it); -1 when it is no noun.
  long FirstNoun(std::string_view word) const;
  // Its noun sense of the given rank (0: FirstNoun's, 1: the next one ...), of
  // the same base form; -1 when it has no such sense.
  long NounSense(std::string_view word, int rank) const;
  // Whether that sense is in the set: "parrot" is under "bird", "head" (a
  // body part first) is not under "leader".
  bool FirstNounIn(std::string_view word, const SynsetSet& set) const {
    const long s = FirstNoun(word);
    return s >= 0 && set.Has(static_cast<std::uint32_t>(s));
  }

  // The index terms (as ExpandTerms gives them: a collocation or a stopword
  // has none) of the words of the synsets of a set whose most frequent noun
  // sense is in the set (FirstNounIn: "Berlin" names Irving Berlin, a
  // composer, but is a city first), each once, at most `max`.
  std::vector<std::string> TermsIn(const SynsetSet& set, std::size_t max) const;

  std::size_t synsets() const { return n_synsets_; }
  // Bytes of the image (mapped or owned).
  std::size_t ImageBytes() const { return size_; }
  bool mapped() const { return mapped_; }

 private:
  WordNet() = default;
  // A list of ids: [begin, end).
  struct Ids {
    const std::uint32_t* b;
    const std::uint32_t* e;
    const std::uint32_t* begin() const { return b; }
    const std::uint32_t* end() const { return e; }
  };
  // Sorted strings (offsets into chars).
  struct Strings {
    std::uint32_t n = 0;
    const std::uint32_t* off = nullptr;
    const char* chars = nullptr;
    std::string_view at(std::uint32_t i) const { return {chars + off[i], off[i + 1] - off[i]}; }
    long Find(std::string_view s) const;
  };
  // Lists per key (offsets into data).
  struct Lists {
    const std::uint32_t* off = nullptr;
    const std::uint32_t* data = nullptr;
    Ids at(std::uint32_t i) const { return {data + off[i], data + off[i + 1]}; }
  };
  struct Related {
    std::uint32_t word;
    Relation relation;
    int depth;
    bool first_sense;
  };
  // The part meronyms of a synset (none for most).
  Ids PartsOf(std::uint32_t synset) const;
  // Expand's traversal, as word ids.
  std::vector<Related> ExpandIds(std::string_view word, const ExpandOptions& opt) const;
  // Points the views at an image; false when it is not a valid one.
  bool Attach(const std::uint8_t* base, std::size_t size);
  int FindWord(std::string_view w) const;
  // The candidate base forms of a normalised word for one part of speech,
  // in morphy's order (the exception list's, the word itself, the suffix
  // rules'), known to WordNet or not, until `fn` returns false; false then.
  bool ForEachCandidate(const std::string& w, std::uint8_t pos,
                        const std::function<bool(const std::string&)>& fn) const;
  // The first synset of each part of speech of each base form of a word.
  std::vector<std::uint32_t> FirstSenses(std::string_view word) const;
  bool HasPos(int word, std::uint8_t pos) const;

  std::vector<std::uint8_t> owned_;  // the image when parsed
  const std::uint8_t* base_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;

  Strings words_;
  Lists word_synsets_;  // per word, its synsets by sense
  std::uint32_t n_synsets_ = 0;
  const std::uint8_t* synset_pos_ = nullptr;  // 0 noun, 1 verb, 2 adjective
  const std::uint8_t* synset_lex_ = nullptr;  // lexicographer file, 0-44
  Lists synset_words_, synset_hyponyms_, synset_derivations_;
  // The part meronyms of the few synsets that have some (PartsOf): those
  // synsets ascending, and a list for each.
  std::uint32_t n_parted_ = 0;
  const std::uint32_t* parted_ = nullptr;
  Lists synset_parts_;
  Strings exception_keys_[3];  // inflected forms per part of speech
  Lists exception_bases_[3];   // their base forms (word ids)
  const std::uint8_t* term_keep_ = nullptr;  // per word: bytes of it its index term keeps (255: none)
  Strings term_tails_;                        // per word: the rest of its index term
};

// Whether `lemma` (lower-case, as the data files write it) is an
// abbreviation that a synset of time (lexicographer file noun.time) lists
// beside its full name, a strict prefix of another of its `lemmas` ("wed"
// of "wednesday", "sat", "sun", "mar", "sept", "min"): such a lemma is
// another word's far more often ("wed" is to marry, "sat" of sitting) and
// would make "wedding" near Wednesday; both builders leave it out of the
// synset.
bool IsTimeAbbreviation(int lexfile, std::string_view lemma,
                        const std::vector<std::string>& lemmas);

}  // namespace engram::wordnet
