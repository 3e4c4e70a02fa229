// Mid-term memory: segments (topic groups of pages) and pages, heat, and the
// reads the promotion and retrieval paths share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "store/segments.hpp"
#include "engram/types.hpp"
#include "models/embedder.hpp"
#include "models/maintainer.hpp"
#include "store/sqlite.hpp"

namespace engram::memory {

using store::SegmentRow;

// Heat = visits + interaction + exp(-hours since last access / tau), computed
// at read time so that it decays without rewriting anything.
double Heat(std::int64_t visits, std::int64_t interaction, TimeMs last_access, TimeMs now,
            double tau_hours);
inline double Heat(const SegmentRow& s, TimeMs now, double tau_hours) {
  return Heat(s.visits, s.interaction, s.last_access, now, tau_hours);
}

// Keyword Jaccard similarity (case-insensitive exact keywords).
double Jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b);

Result<std::vector<SegmentRow>> LoadSegments(sql::Db* db, std::int64_t scope_id,
                                             bool include_archived);

// Inverse document frequency over a scope's pages, read once for a set of
// terms. Unknown terms get the maximum idf.
class ScopeIdf {
 public:
  static Result<ScopeIdf> Load(sql::Db* db, std::int64_t scope_id,
                               const std::vector<std::string>& texts);
  double operator()(const std::string& term) const;
  IdfFn AsFn() const;

 private:
  std::int64_t docs_ = 0;
  std::vector<std::pair<std::string, std::int64_t>> df_;  // sorted by term
};

// Adds one page's distinct terms to the scope's document frequencies.
// REQUIRES: inside a write transaction.
Status AddTermsToScope(sql::Db* db, std::int64_t scope_id, const std::string& page_text);

}  // namespace engram::memory
