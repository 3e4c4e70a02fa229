#include "retrieval/lexical.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace engram::retrieval {

namespace {

std::uint16_t Sat16(std::uint32_t v) {
  return static_cast<std::uint16_t>(std::min<std::uint32_t>(v, std::numeric_limits<std::uint16_t>::max()));
}

}  // namespace

// The vocabulary filter's hash of a term, eight bytes at a time (the filter
// takes its two 32-bit halves).
std::uint64_t MessageIndex::Hash(std::string_view term) {
  auto mix = [](std::uint64_t h) {
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
    return h;
  };
  std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ term.size();
  std::size_t i = 0;
  for (; i + 8 <= term.size(); i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, term.data() + i, 8);
    h = mix(h ^ w) * 0x94d049bb133111ebULL;
  }
  std::uint64_t w = 0;
  if (i < term.size()) std::memcpy(&w, term.data() + i, term.size() - i);
  return mix(mix(h ^ w) * 0x94d049bb133111ebULL);
}

void MessageIndex::FilterAdd(std::uint64_t hash) {
  const std::uint64_t mask = filter_.size() * 64 - 1;
  for (const std::uint64_t bit : {hash & mask, (hash >> 32) & mask})
    filter_[bit >> 6] |= std::uint64_t{1} << (bit & 63);
}

bool MessageIndex::MayHold(std::uint64_t hash) const {
  if (filter_.empty()) return false;
  const std::uint64_t mask = filter_.size() * 64 - 1;
  for (const std::uint64_t bit : {hash & mask, (hash >> 32) & mask}) {
    if ((filter_[bit >> 6] & (std::uint64_t{1} << (bit & 63))) == 0) return false;
  }
  return true;
}

int MessageIndex::Intern(const std::string& term) {
  auto [it, fresh] = vocab_.try_emplace(term, static_cast<int>(terms_.size()));
  if (fresh) {
    terms_.push_back(term);
    lists_.emplace_back();
    // (At 8 bits per term the filter is made again at twice the size: by
    // (1 - e^(-2 terms / bits))^2, about 1.4% of absent terms pass it at 16
    // bits per term, 4.9% at 8.)
    if (terms_.size() * 8 > filter_.size() * 64) {
      std::size_t words = 64;
      while (words * 64 < terms_.size() * 16) words *= 2;
      filter_.assign(words, 0);
      for (const std::string& t : terms_) FilterAdd(Hash(t));
    } else {
      FilterAdd(Hash(term));
    }
  }
  return it->second;
}

void MessageIndex::Add(const MessageTerms& t) {
  std::vector<int> text, name;
  text.reserve(t.text.size());
  name.reserve(t.name.size());
  for (const auto& s : t.text) text.push_back(Intern(s));
  for (const auto& s : t.name) name.push_back(Intern(s));
  AddIds(text, name);
}

void MessageIndex::AddIds(const std::vector<int>& text, const std::vector<int>& name, std::uint32_t kinds) {
  const auto doc = static_cast<std::uint32_t>(lengths_.size());
  // Term -> (text, name) occurrences, in order of first occurrence, with
  // where each term is in that list (valid when the entry there is the
  // term's: no clearing between documents). Kept by the thread for their
  // room: a fresh list per document was a tenth of a snapshot's first load.
  struct Tf {
    int id;
    std::uint32_t text, name;
  };
  thread_local std::vector<Tf> tf;
  thread_local std::vector<std::uint32_t> at;  // by term id
  tf.clear();
  if (at.size() < terms_.size()) at.resize(terms_.size() + terms_.size() / 2);
  auto count = [&](int id, bool is_name) {
    std::uint32_t& i = at[static_cast<std::size_t>(id)];
    if (i >= tf.size() || tf[i].id != id) {
      i = static_cast<std::uint32_t>(tf.size());
      tf.push_back({id, 0u, 0u});
    }
    ++(is_name ? tf[i].name : tf[i].text);
  };
  for (const int id : text) count(id, false);
  for (const int id : name) {
    count(id, true);
    if (static_cast<std::size_t>(id) >= in_names_.size()) in_names_.resize(terms_.size());
    in_names_[static_cast<std::size_t>(id)] = true;
  }
  for (const Tf& x : tf) lists_[static_cast<std::size_t>(x.id)].push_back({doc, Sat16(x.text), Sat16(x.name)});
  lengths_.push_back(static_cast<std::uint32_t>(text.size()));
  kinds_.push_back(kinds);
  total_length_ += text.size();
}

std::uint16_t MessageIndex::SpeakerId(const std::string& name) {
  if (auto it = speaker_ids_.find(name); it != speaker_ids_.end()) return it->second;
  if (speakers_.size() >= kNoSpeaker) return kNoSpeaker;
  const auto id = static_cast<std::uint16_t>(speakers_.size());
  speakers_.push_back(name);
  speaker_ids_.emplace(name, id);
  return id;
}

int MessageIndex::TermId(std::string_view term, std::uint64_t hash) const {
  if (!MayHold(hash)) return -1;
  auto it = vocab_.find(term);
  return it == vocab_.end() ? -1 : it->second;
}

std::size_t MessageIndex::Df(std::string_view term, std::uint64_t hash) const {
  int id = TermId(term, hash);
  return id < 0 ? 0 : lists_[static_cast<std::size_t>(id)].size();
}

std::size_t MessageIndex::MemoryBytes() const {
  std::size_t n = (lengths_.capacity() + kinds_.capacity()) * 4 + terms_.size() * 48;
  for (const auto& p : lists_) n += p.capacity() * sizeof(Posting) + sizeof(p) + 40;
  for (const auto& s : speakers_) n += 2 * (s.size() + 48);  // the name and its map entry
  n += in_names_.capacity() / 8 + filter_.capacity() * 8;
  return n;
}

std::vector<int> TermIds(const MessageIndex& index, const std::vector<QueryTerm>& query) {
  std::vector<int> ids;
  ids.reserve(query.size());
  for (const auto& q : query) ids.push_back(index.TermId(q.term));
  return ids;
}

CollectionStats Stats(const std::vector<QueryTerm>& query, const std::vector<const MessageIndex*>& indexes,
                      const std::vector<const std::vector<int>*>& ids) {
  CollectionStats s;
  double total = 0;
  for (const auto* ix : indexes) {
    s.docs += static_cast<double>(ix->size());
    total += static_cast<double>(ix->TotalLength());
  }
  s.avg_length = s.docs > 0 ? std::max(1.0, total / s.docs) : 1.0;
  for (std::size_t qi = 0; qi < query.size(); ++qi) {
    double df = 0;
    for (std::size_t k = 0; k < indexes.size(); ++k) {
      const int id = (*ids[k])[qi];
      if (id >= 0) df += static_cast<double>(indexes[k]->Postings(id).size());
    }
    // BM25 idf, floored so that very common terms still count a little.
    s.idf.push_back(std::max(0.05, std::log(1.0 + (s.docs - df + 0.5) / (df + 0.5))));
  }
  return s;
}

CollectionStats Stats(const std::vector<QueryTerm>& query,
                      const std::vector<const MessageIndex*>& indexes) {
  std::vector<std::vector<int>> ids;
  std::vector<const std::vector<int>*> ptrs;
  ids.reserve(indexes.size());
  for (const auto* ix : indexes) ptrs.push_back(&ids.emplace_back(TermIds(*ix, query)));
  return Stats(query, indexes, ptrs);
}

void ScoreBm25(const MessageIndex& index, const std::vector<QueryTerm>& query,
               const CollectionStats& stats, const Bm25Params& p, std::vector<double>& scores) {
  ScoreBm25(index, query, stats, p, scores.data());
}

void ScoreBm25(const MessageIndex& index, const std::vector<QueryTerm>& query,
               const CollectionStats& stats, const Bm25Params& p, double* scores, const std::vector<int>* ids) {
  for (std::size_t qi = 0; qi < query.size(); ++qi) {
    const int id = ids ? (*ids)[qi] : index.TermId(query[qi].term);
    if (id < 0) continue;
    const double w = query[qi].weight * stats.idf[qi];
    for (const auto& post : index.Postings(id)) {
      const double tf = post.tf + p.name_weight * post.name_tf;
      const double norm = p.k1 * (1.0 - p.b + p.b * index.Length(post.doc) / stats.avg_length);
      scores[post.doc] += w * tf * (p.k1 + 1.0) / (tf + norm);
    }
  }
}

double MaxScore(const std::vector<double>& scores) {
  double m = 0;
  for (const double x : scores) m = x > m ? x : m;
  return m;
}

}  // namespace engram::retrieval
