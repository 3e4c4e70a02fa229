#include "lineage/evidence.hpp"

namespace engram::lineage {

namespace {

constexpr char kSep = '\x1f';

}  // namespace

std::string ScopeKey(const std::string& tenant, const std::string& user, const std::string& assistant) {
  std::string k = tenant;
  k += kSep;
  k += user;
  k += kSep;
  k += assistant;
  return k;
}

Scope ScopeFromKey(const std::string& key) {
  Scope s;
  std::size_t a = key.find(kSep);
  std::size_t b = a == std::string::npos ? a : key.find(kSep, a + 1);
  if (b == std::string::npos) return Scope{key, "", ""};
  s.tenant = key.substr(0, a);
  s.user = key.substr(a + 1, b - a - 1);
  s.assistant = key.substr(b + 1);
  return s;
}

Result<Evidence> LoadEvidence(sql::Db* db) {
  ENGRAM_ASSIGN_OR_RETURN(store::EvidenceRows rows, store::LoadEvidenceRows(db));
  Evidence e;
  static_cast<store::EvidenceRows&>(e) = std::move(rows);
  for (const auto& c : e.compacted) e.compacted_through[ScopeKey(c.scope)] = c.last_at;
  return e;
}

Result<std::vector<PageRec>> LoadPages(sql::Db* db, std::int64_t scope_id) {
  return store::LoadScopePages(db, scope_id);
}

}  // namespace engram::lineage
