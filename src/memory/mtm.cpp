#include "memory/mtm.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <set>

#include "core/text.hpp"
#include "memory/scope_store.hpp"
#include "store/segments.hpp"

namespace engram::memory {

double Heat(std::int64_t visits, std::int64_t interaction, TimeMs last_access, TimeMs now,
            double tau_hours) {
  double hours = std::max<double>(0.0, static_cast<double>(now - last_access) / 3.6e6);
  return static_cast<double>(visits) + static_cast<double>(interaction) +
         std::exp(-hours / tau_hours);
}

double Jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::set<std::string> sa, sb;
  for (const auto& s : a) sa.insert(lower(s));
  for (const auto& s : b) sb.insert(lower(s));
  if (sa.empty() && sb.empty()) return 0.0;
  std::size_t inter = 0;
  for (const auto& s : sa) inter += sb.count(s);
  return static_cast<double>(inter) / static_cast<double>(sa.size() + sb.size() - inter);
}

Result<std::vector<SegmentRow>> LoadSegments(sql::Db* db, std::int64_t scope_id,
                                             bool include_archived) {
  return store::LoadSegmentRows(db, scope_id, include_archived);
}

Result<ScopeIdf> ScopeIdf::Load(sql::Db* db, std::int64_t scope_id,
                                const std::vector<std::string>& texts) {
  ScopeIdf idf;
  ENGRAM_ASSIGN_OR_RETURN(idf.docs_, store::CountPages(db, scope_id));
  std::set<std::string> distinct;
  for (const auto& t : texts) {
    for (auto& term : text::Terms(t)) distinct.insert(std::move(term));
  }
  const std::vector<std::string> terms(distinct.begin(), distinct.end());
  ENGRAM_ASSIGN_OR_RETURN(auto df, store::TermFrequencies(db, scope_id, terms));
  for (std::size_t i = 0; i < terms.size(); ++i) idf.df_.emplace_back(terms[i], df[i]);
  return idf;
}

double ScopeIdf::operator()(const std::string& term) const {
  auto it = std::lower_bound(df_.begin(), df_.end(), term,
                             [](const auto& p, const std::string& t) { return p.first < t; });
  std::int64_t df = (it != df_.end() && it->first == term) ? it->second : 0;
  // Smoothed idf; a scope with few pages still ranks rare words above common ones.
  return std::log((static_cast<double>(docs_) + 1.0) / (static_cast<double>(df) + 0.5)) + 1.0;
}

IdfFn ScopeIdf::AsFn() const {
  auto self = std::make_shared<ScopeIdf>(*this);
  return [self](const std::string& term) { return (*self)(term); };
}

Status AddTermsToScope(sql::Db* db, std::int64_t scope_id, const std::string& page_text) {
  auto terms = text::Terms(page_text);
  std::set<std::string> distinct(terms.begin(), terms.end());
  return store::AddScopeTerms(db, scope_id, std::vector<std::string>(distinct.begin(), distinct.end()));
}

}  // namespace engram::memory
