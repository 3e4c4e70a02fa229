// In-memory lexical index over messages (one document per message: the text
// of one side of an exchange plus its speaker's name as a separate field) and
// BM25F scoring. Built once per scope snapshot (immutable afterwards, shared
// by readers) or on the fly for the few STM turns of one retrieval. Copying
// an index shares its posting lists and per-document arrays (SharedList): a
// copy appends to a shared list in place while the list has room and no
// other copy has appended to it, else it copies that list once.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/shared_list.hpp"
#include "core/text.hpp"

namespace engram::retrieval {

// The index terms of one message: text::Terms of the text and of the name.
struct MessageTerms {
  std::vector<std::string> text;
  std::vector<std::string> name;
};

// WordNet's noun lexicographer files are 3 (noun.Tops) to 28 (noun.time):
// the bit of a document's kinds (MessageIndex::Kinds) for one of them, 0
// for anything else.
inline constexpr int kFirstNounFile = 3, kLastNounFile = 28;
constexpr std::uint32_t NounKindBit(int lexfile) {
  return lexfile >= kFirstNounFile && lexfile <= kLastNounFile ? std::uint32_t{1} << (lexfile - kFirstNounFile) : 0;
}

class MessageIndex {
 public:
  struct Posting {
    std::uint32_t doc;
    std::uint16_t tf;       // occurrences in the text
    std::uint16_t name_tf;  // occurrences in the speaker name
  };

  // Appends one document (doc ids are 0, 1, 2 ... in call order).
  void Add(const MessageTerms& terms);
  // The same with the terms as ids from Intern (a builder that remembers
  // the ids of the words it has seen looks each word up once).
  // `kinds`: what kinds of things the text names (bit k: a noun of
  // WordNet's lexicographer file kFirstNounFile + k; see NounKindBit).
  void AddIds(const std::vector<int>& text, const std::vector<int>& name, std::uint32_t kinds = 0);
  // The id of a term, made when no document holds it yet.
  int Intern(const std::string& term);

  std::size_t size() const { return lengths_.size(); }
  // The id of a term, or -1 when no document holds it.
  int TermId(std::string_view term) const { return TermId(term, Hash(term)); }
  // ... with the term's Hash, made once for several indexes.
  int TermId(std::string_view term, std::uint64_t hash) const;
  static std::uint64_t Hash(std::string_view term);
  std::span<const Posting> Postings(int term) const {
    const auto& list = lists_[static_cast<std::size_t>(term)];
    return {list.data(), list.size()};
  }
  std::size_t Df(std::string_view term) const { return Df(term, Hash(term)); }
  std::size_t Df(std::string_view term, std::uint64_t hash) const;
  // Text terms of a document (its length for BM25).
  std::uint32_t Length(std::uint32_t doc) const { return lengths_[doc]; }
  std::uint32_t Kinds(std::uint32_t doc) const { return kinds_[doc]; }
  std::uint64_t TotalLength() const { return total_length_; }
  const std::string& Term(int id) const { return terms_[static_cast<std::size_t>(id)]; }
  // True when a speaker name of some document holds the term.
  bool InNames(int term) const {
    return term >= 0 && static_cast<std::size_t>(term) < in_names_.size() && in_names_[static_cast<std::size_t>(term)];
  }
  std::size_t MemoryBytes() const;

  // The documents' speaker names, each kept once with a small id, so that
  // ranking compares the speakers of two documents without reading their
  // turns. kNoSpeaker: a name beyond the first 65,535 of the index (its
  // documents are compared by their turns' names).
  static constexpr std::uint16_t kNoSpeaker = 0xFFFF;
  std::uint16_t SpeakerId(const std::string& name);
  const std::string& Speaker(std::uint16_t id) const { return speakers_[id]; }

 private:
  text::StringMap<int> vocab_;
  text::StringMap<std::uint16_t> speaker_ids_;
  std::vector<std::string> speakers_;
  std::vector<std::string> terms_;
  // A term's postings and the documents' lengths and kinds: lists that the
  // copies of the index (a snapshot and the ones made from it) share
  // (SharedList), so that an update of a snapshot copies a list once per
  // doubling instead of at every update.
  std::vector<SharedList<Posting>> lists_;
  SharedList<std::uint32_t> lengths_;
  SharedList<std::uint32_t> kinds_;
  std::vector<bool> in_names_;  // by term id (InNames)
  std::uint64_t total_length_ = 0;
  // A filter of the terms the vocabulary holds (two bits of each term's hash
  // among 16 or more bits per term, a power of two): most look-ups are of
  // terms no message holds (WordNet's expansions of a question's words, a
  // few hundred per question), answered here without a probe of the map.
  std::vector<std::uint64_t> filter_;
  void FilterAdd(std::uint64_t hash);
  bool MayHold(std::uint64_t hash) const;
};

// One query term with its weight (1 for the query's own terms, less for a
// guessed word and most expansions). An expansion is no word of the query,
// whatever its weight: a two-word name's kinds weigh 1 (ExpansionParams).
struct QueryTerm {
  std::string term;
  double weight = 1.0;
  bool expansion = false;
  // The query's own terms (bits of their indexes, under 32) this expansion
  // stands for in the share of them a message holds: a two-word name's kind
  // ("taekwondo") holds both of its words ("martial", "art").
  std::uint32_t covers = 0;
  // The query's own terms (bits of their indexes, under 32) this expansion
  // says in other words (a synonym, derivation, kind or part of one: "badminton"
  // of "sport"): a message holding it holds them for the meaning gate
  // (RankingOptions::meaning_gate), not for the coverage share.
  std::uint32_t of = 0;
  // The clause of a question of several ("How old was Biscuit when Iris got
  // him, and where did he race?": 0, then 1) that first says the word.
  std::uint8_t clause = 0;
  // A word of the query itself, at full weight.
  bool Own() const { return !expansion && weight >= 1.0; }
};

struct Bm25Params {
  double k1 = 1.2;
  double b = 0.75;
  double name_weight = 0.5;  // a name occurrence counts this much of a text occurrence
};

// Collection statistics over one or more indexes (a snapshot and the STM).
struct CollectionStats {
  double docs = 0;
  double avg_length = 1;
  std::vector<double> idf;  // per query term
};

CollectionStats Stats(const std::vector<QueryTerm>& query,
                      const std::vector<const MessageIndex*>& indexes);

// The id of each query term in an index (MessageIndex::TermId, -1 when the
// index does not hold it): a ranking looks each term up once, not once per
// use.
std::vector<int> TermIds(const MessageIndex& index, const std::vector<QueryTerm>& query);
// Stats from the terms' ids in each index (ids[k] for indexes[k]).
CollectionStats Stats(const std::vector<QueryTerm>& query, const std::vector<const MessageIndex*>& indexes,
                      const std::vector<const std::vector<int>*>& ids);

// Adds the BM25F score of every document of `index` for `query` into
// scores[doc] (scores has index.size() entries).
void ScoreBm25(const MessageIndex& index, const std::vector<QueryTerm>& query,
               const CollectionStats& stats, const Bm25Params& p, std::vector<double>& scores);
// The largest score, at least 0. (Out of line on purpose: a running maximum
// written inside RankMessages was compiled with the maximum kept in memory,
// a store and a load per message: 15-19% of the ranking at 10k pages in
// `perf annotate`.)
double MaxScore(const std::vector<double>& scores);

// The same into scores[0 .. index.size()); `ids` (optional): TermIds of the
// query in `index`.
void ScoreBm25(const MessageIndex& index, const std::vector<QueryTerm>& query,
               const CollectionStats& stats, const Bm25Params& p, double* scores,
               const std::vector<int>* ids = nullptr);

}  // namespace engram::retrieval
