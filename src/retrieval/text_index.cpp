#include "retrieval/text_index.hpp"

#include <algorithm>
#include <cmath>

namespace engram::retrieval {

namespace {

// unicode61 with tokenchars '_' on ASCII: letters, digits and '_' make
// tokens, upper case folds to lower case, anything else separates.
bool TokenChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (c >= 'A' && c <= 'Z');
}

bool Ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

}  // namespace

void TextIndex::Add(std::int64_t rowid, std::string_view terms) {
  const auto row = static_cast<std::uint32_t>(rowids_.size());
  if (!Ascii(terms)) exact_ = false;
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < terms.size();) {
    if (!TokenChar(terms[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < terms.size() && TokenChar(terms[j])) ++j;
    std::string t(terms.substr(i, j - i));
    for (char& c : t) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    }
    tokens.push_back(std::move(t));
    i = j;
  }
  std::sort(tokens.begin(), tokens.end());
  for (std::size_t i = 0; i < tokens.size();) {
    std::size_t j = i;
    while (j < tokens.size() && tokens[j] == tokens[i]) ++j;
    postings_[tokens[i]].push_back({row, static_cast<std::uint32_t>(j - i)});
    i = j;
  }
  rowids_.push_back(rowid);
  const auto length = static_cast<std::uint32_t>(tokens.size() + 1);  // + the scope token
  lengths_.push_back(length);
  total_tokens_ += length;
}

bool TextIndex::CanSearch(const std::vector<std::string>& terms) const {
  if (!exact_) return false;
  return std::all_of(terms.begin(), terms.end(), [](const std::string& t) {
    return !t.empty() && Ascii(t) && std::all_of(t.begin(), t.end(), [](char c) {
      return TokenChar(c) && !(c >= 'A' && c <= 'Z');
    });
  });
}

std::vector<std::int64_t> TextIndex::Search(const std::vector<std::string>& terms, int limit,
                                            std::vector<std::uint64_t>* held) const {
  std::vector<std::int64_t> out;
  if (held) held->clear();
  if (terms.empty() || rowids_.empty() || limit <= 0) return out;
  // FTS5's bm25(): the same constants and the same arithmetic, in the same
  // order (phrase by phrase; the scope phrase adds 0: its column weighs 0).
  const double k1 = 1.2;
  const double b = 0.75;
  const auto n_row = static_cast<std::int64_t>(rowids_.size());
  const double avgdl = static_cast<double>(total_tokens_) / static_cast<double>(n_row);
  // Scores per row, kept per thread and zero between calls (a call resets
  // the rows it hit): an index of thousands of facts is not allocated and
  // zeroed for the few rows a query hits.
  thread_local std::vector<double> score;
  thread_local std::vector<std::uint32_t> hit_rows;
  thread_local std::vector<std::uint8_t> hit;
  if (score.size() < rowids_.size()) {
    score.resize(rowids_.size(), 0.0);
    hit.resize(rowids_.size(), 0);
  }
  hit_rows.clear();
  struct Reset {
    ~Reset() {
      for (const std::uint32_t r : hit_rows) {
        score[r] = 0.0;
        hit[r] = 0;
      }
    }
  } reset;
  for (const auto& t : terms) {
    auto it = postings_.find(t);
    if (it == postings_.end()) continue;
    const auto n_hit = static_cast<std::int64_t>(it->second.size());
    double idf = std::log((n_row - n_hit + 0.5) / (n_hit + 0.5));
    if (idf <= 0.0) idf = 1e-6;
    for (const Posting& p : it->second) {
      const double f = static_cast<double>(p.tf);
      const double d = static_cast<double>(lengths_[p.row]);
      score[p.row] += idf * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + b * d / avgdl)));
      if (!hit[p.row]) {
        hit[p.row] = 1;
        hit_rows.push_back(p.row);
      }
    }
  }
  // ORDER BY score DESC LIMIT n over rows scanned in rowid order: equal
  // scores keep rowid order.
  auto better = [&](std::uint32_t a, std::uint32_t c) {
    return score[a] > score[c] || (score[a] == score[c] && rowids_[a] < rowids_[c]);
  };
  const std::size_t keep = std::min(hit_rows.size(), static_cast<std::size_t>(limit));
  std::partial_sort(hit_rows.begin(), hit_rows.begin() + static_cast<std::ptrdiff_t>(keep),
                    hit_rows.end(), better);
  out.reserve(keep);
  for (std::size_t i = 0; i < keep; ++i) out.push_back(rowids_[hit_rows[i]]);
  if (held && terms.size() <= 64) {
    // A term's postings are in row order (rows are appended): one binary
    // search per kept row and term.
    std::vector<const std::vector<Posting>*> lists;
    lists.reserve(terms.size());
    for (const auto& t : terms) {
      auto it = postings_.find(t);
      lists.push_back(it == postings_.end() ? nullptr : &it->second);
    }
    held->reserve(keep);
    for (std::size_t i = 0; i < keep; ++i) {
      const std::uint32_t row = hit_rows[i];
      std::uint64_t bits = 0;
      for (std::size_t k = 0; k < lists.size(); ++k) {
        if (lists[k] == nullptr) continue;
        auto at = std::lower_bound(lists[k]->begin(), lists[k]->end(), row,
                                   [](const Posting& p, std::uint32_t r) { return p.row < r; });
        if (at != lists[k]->end() && at->row == row) bits |= std::uint64_t{1} << k;
      }
      held->push_back(bits);
    }
  }
  return out;
}

std::size_t TextIndex::MemoryBytes() const {
  std::size_t n = rowids_.size() * 12 + postings_.size() * 64;
  for (const auto& [term, list] : postings_) n += term.size() + list.size() * sizeof(Posting);
  return n;
}

}  // namespace engram::retrieval
