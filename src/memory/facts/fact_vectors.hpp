// FactVectors: an immutable in-memory snapshot of the live fact embeddings of
// one scope row (ids + FlatIndex per exact identity), keyed by the scope's
// data_version (every fact write bumps it). Search takes its vector
// candidates from it and the add path its near-duplicate check, instead of
// reading and scoring every embedding of the scope from the store.
//
// A snapshot is a shared base (loaded from the store) plus a small delta (rows
// added and removed by the writes since): a writer publishes the next version by
// Apply() in O(delta), and the delta is folded into a fresh base (one reload)
// once it grows past a share of the base. Expiry is evaluated at query time
// (an expiry passing does not bump data_version), from expires_at kept per row.
// Thread-safety: a published snapshot is read-only; share it freely.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engram/facts.hpp"
#include "engram/result.hpp"
#include "core/word_vectors.hpp"
#include "index/flat_index.hpp"
#include "memory/scope_store.hpp"
#include "models/embedder.hpp"
#include "store/sqlite.hpp"

namespace engram::memory::facts {

inline constexpr TimeMs kNoExpiry = INT64_MAX;

// The memory's own ids inside a scope row (facts.user_id, agent_id, run_id).
struct FactIdentity {
  std::string user, agent, run;
  bool operator<(const FactIdentity& o) const {
    return std::tie(user, agent, run) < std::tie(o.user, o.agent, o.run);
  }
};

// One live facts row.
struct FactVecRow {
  std::int64_t id = 0;  // facts.id
  std::string memory_id;
  TimeMs expires_at = kNoExpiry;
};

// A row written after the base was loaded (with its identity and vector).
struct AddedFactVec {
  FactVecRow row;
  FactIdentity identity;
  Vector embedding;
  wordvec::QuantizedVector semantic;  // when the snapshot keeps word-vector means
  std::vector<long> known;            // ... its known words (word-vector indexes: the expansion match)
  std::vector<std::string> terms;     // ... and its distinct index terms (document frequencies)
  std::uint64_t shape = 0;            // ... and its TextShape (paraphrase candidates)
};

// Changes of one write operation, recorded by InsertFact / NewVersion /
// DeleteFact when WriteContext::changes is set.
struct FactChanges {
  std::vector<std::shared_ptr<const AddedFactVec>> added;
  std::vector<std::int64_t> removed;  // facts.id rows no longer live
  bool Empty() const { return added.empty() && removed.empty(); }
};

// Live rows of one identity. For the near-duplicate check, each index row
// also keeps the first kPrefixDims components of its vector and the norm of
// the rest: prefix dot + |q_rest| * |v_rest| bounds the cosine, so rows that
// cannot reach the threshold are skipped after 1/8 of the work (exact).
struct FactGroup {
  static constexpr int kPrefixDims = 64;
  FlatIndex index;  // ids are facts.id
  std::unordered_map<std::int64_t, FactVecRow> rows;
  std::vector<std::pair<std::int64_t, TimeMs>> expiring;  // rows with an expiry
  std::vector<float> prefix;     // per index row: min(dim, kPrefixDims) components
  std::vector<float> tail_norm;  // per index row
  // Word-vector means of the rows' texts and their known words
  // (FactVectors::words set; rows whose text has no known word have none), by
  // facts.id.
  struct Meaning {
    wordvec::QuantizedVector mean;
    std::vector<long> known;  // word-vector indexes
  };
  std::vector<std::pair<std::int64_t, Meaning>> semantic;
  // The same: the rows by the TextShape of their texts (rows of shape 0 left out).
  std::unordered_multimap<std::uint64_t, std::int64_t> shapes;
};

struct FactVectorBase {
  std::map<FactIdentity, FactGroup> groups;
  std::size_t rows = 0;
  // With word vectors: in how many rows each index term occurs (the query's
  // terms are weighted by their inverse document frequency in the scope).
  std::unordered_map<std::string, std::uint32_t> term_rows;
};

struct FactVectors {
  std::int64_t scope_id = 0;
  std::int64_t data_version = -1;
  Scope row_scope;  // identity of the scope row (guards against reused ids)
  // The word vectors the rows' semantic vectors come from (null: none kept).
  const wordvec::WordVectors* words = nullptr;
  std::shared_ptr<const FactVectorBase> base;
  std::vector<std::shared_ptr<const AddedFactVec>> added;  // since base, oldest first
  std::vector<std::int64_t> removed;                        // since base, sorted

  std::size_t MemoryBytes() const;
};

// Which identities a search sees: exactly one, or (narrower) the user's with
// any agent / run id when those are empty in the scope.
struct IdentityMatch {
  FactIdentity id;
  bool narrower = false;
  bool Accepts(const FactIdentity& x) const;
};
IdentityMatch MatchFor(const MemoryScope& scope);

// Loads the snapshot of a scope row at its current data_version; with
// `words`, it also keeps each row's word-vector mean (semantic search of the
// built-in engine). REQUIRES: `db` in a transaction in which the scope row
// read `data_version`.
Result<std::shared_ptr<const FactVectors>> LoadFactVectors(sql::Db* db, std::int64_t scope_id,
                                                           std::int64_t data_version, const Scope& row_scope,
                                                           const wordvec::WordVectors* words = nullptr);

// The snapshot after `changes` at `data_version`; nullptr when the delta has
// outgrown the base (the caller then drops it, and the next reader reloads).
std::shared_ptr<const FactVectors> ApplyChanges(const FactVectors& before, const FactChanges& changes,
                                                std::int64_t data_version);

// The k best (facts.id, cosine) live rows of the accepted identities, best
// first (ties: higher id first), unexpired at `now` unless include_expired,
// cosine > min_score. `overlay` (the current operation's own changes, not yet
// in the snapshot) is applied on top when given.
std::vector<std::pair<std::int64_t, float>> TopVectors(const FactVectors& v, const IdentityMatch& match,
                                                       const Vector& q, std::size_t k, TimeMs now,
                                                       bool include_expired, float min_score = 0.0f,
                                                       const FactChanges* overlay = nullptr);

// The distinct index terms of a text, sorted (AddedFactVec::terms).
std::vector<std::string> DistinctTerms(std::string_view text);

// How many rows of these snapshots hold an index term (the snapshots must
// keep word vectors: FactVectors::words set).
std::size_t TermRows(const std::vector<std::shared_ptr<const FactVectors>>& snaps, const std::string& term);

// The terms of `sorted` (sorted, distinct) that rows of these snapshots hold,
// with how many rows hold each: by the snapshots' terms or by `sorted`,
// whichever is shorter.
std::vector<std::pair<std::size_t, std::string>> TermsHeld(const std::vector<std::shared_ptr<const FactVectors>>& snaps,
                                                           const std::vector<std::string>& sorted);

// The inverse document frequency of an index term among the live rows of
// these snapshots, log(1 + (rows + 1) / (TermRows + 1)).
std::function<float(const std::string&)> TermIdf(const std::vector<std::shared_ptr<const FactVectors>>& snaps);

// The query's word-vector mean for semantic search in these snapshots (each
// term weighted by log(1 + (rows + 1) / (rows with the term + 1)) over them);
// empty without word vectors or known words.
std::vector<float> SemanticQuery(const std::vector<std::shared_ptr<const FactVectors>>& snaps,
                                 const wordvec::WordVectors& words, const std::string& query);

// The query's words for the expansion match of TopSemantic: word-vector
// indexes (-1: unknown), their weights, and the weight of the match.
struct ExpansionQuery {
  std::vector<long> terms;
  std::vector<double> weights;
  double weight = 0.0;
};

// The k best (facts.id, score) live rows of the accepted identities by the
// cosine of their word-vector means with q, plus, with `expansion`, its weight
// times the share of the query's words among the WordNet neighbourhoods of
// the row's words (WordVectors::ExpansionMatch: "I love sushi" for "food",
// whose mean the other words pull away); v.words set, empty otherwise; as
// TopVectors.
std::vector<std::pair<std::int64_t, float>> TopSemantic(const FactVectors& v, const IdentityMatch& match,
                                                        const std::vector<float>& q, std::size_t k, TimeMs now,
                                                        bool include_expired, float min_score = 0.0f,
                                                        const ExpansionQuery* expansion = nullptr);

// The live rows of exactly `identity`, unexpired at `now`, whose texts have
// this TextShape and whose word-vector means have a cosine above
// `min_score` with `q` (v.words set; empty otherwise), in the snapshot plus
// `overlay`: the k best (facts.id, cosine), best first. The candidates of a
// paraphrase check: texts of one shape are many, a paraphrase's meaning is
// close (a synonym for a word moves the mean by little).
std::vector<std::pair<std::int64_t, float>> SameShape(const FactVectors& v, const FactIdentity& identity,
                                                      std::uint64_t shape, const std::vector<float>& q,
                                                      float min_score, std::size_t k, TimeMs now,
                                                      const FactChanges* overlay = nullptr);

// The best (facts.id, cosine) row of exactly `identity` with cosine >=
// threshold, live and unexpired at `now`, in the snapshot plus `overlay`;
// nullopt when none. Exact (bounded scan, see FactGroup).
std::optional<std::pair<std::int64_t, float>> NearestAbove(const FactVectors& v, const FactIdentity& identity,
                                                           const Vector& q, float threshold, TimeMs now,
                                                           const FactChanges* overlay);

// The memory id of a facts row of the snapshot or the overlay ("" when unknown).
std::string MemoryIdOf(const FactVectors& v, const FactChanges* overlay, std::int64_t fact_id);

// Where searches and writes get the snapshot of a scope row (the engine's
// cache, else LoadFactVectors); may be empty (then the store scans the rows).
using FactVectorSource =
    std::function<Result<std::shared_ptr<const FactVectors>>(sql::Db* db, const ScopeRow& row)>;

}  // namespace engram::memory::facts
