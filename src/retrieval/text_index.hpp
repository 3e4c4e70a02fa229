// An in-memory copy of one scope's rows of a full-text table (segments_fts,
// facts_fts) that answers store::SearchText without a statement: the same
// rows, the same scores, the same order, as FTS5's bm25 gives them when the
// table holds this scope only (one store per scope, as the LoCoMo evaluation
// runs it). FTS5 takes its collection statistics (row count, average length,
// document frequencies) over the whole table, every scope of the store; this
// index takes them over the scope, so with several scopes in one store its
// scores are the scope's own bm25 (the ranking within the scope, as the
// store's other users no longer weigh in). Immutable once built; thread-safe
// for readers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace engram::retrieval {

class TextIndex {
 public:
  // Appends a row: its rowid and the text of its `terms` column (index terms
  // separated by spaces). Rows may come in any order.
  void Add(std::int64_t rowid, std::string_view terms);

  // True when every row was tokenised as FTS5's unicode61 tokenizer would
  // (ASCII text; a byte of a multi-byte character may fold or split there).
  bool exact() const { return exact_; }
  // True when Search gives what store::SearchText gives for these query
  // terms (store::QueryTerms): the index is exact and the terms are ASCII.
  bool CanSearch(const std::vector<std::string>& terms) const;

  // The rowids of the best `limit` rows holding any of `terms`, best first
  // (FTS5 bm25 with k1 1.2, b 0.75; the scope column counts one token and
  // weighs nothing; ties in rowid order). With `held` (and at most 64
  // terms), which of the terms each of those rows holds: bit i for terms[i].
  std::vector<std::int64_t> Search(const std::vector<std::string>& terms, int limit,
                                   std::vector<std::uint64_t>* held = nullptr) const;

  std::size_t size() const { return rowids_.size(); }
  // How many rows hold an index term.
  std::size_t Df(const std::string& term) const {
    auto it = postings_.find(term);
    return it == postings_.end() ? 0 : it->second.size();
  }
  std::size_t MemoryBytes() const;

 private:
  struct Posting {
    std::uint32_t row;
    std::uint32_t tf;
  };
  std::vector<std::int64_t> rowids_;
  std::vector<std::uint32_t> lengths_;  // tokens of the row, scope column included
  std::uint64_t total_tokens_ = 0;
  std::unordered_map<std::string, std::vector<Posting>> postings_;
  bool exact_ = true;
};

}  // namespace engram::retrieval
