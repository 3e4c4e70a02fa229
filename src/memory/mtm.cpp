#include "memory/mtm.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <set>

#include "core/text.hpp"
#include "memory/scope_store.hpp"

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
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(include_archived
                      ? "SELECT id, summary, keywords, embedding, emb_sum, page_count, interaction, "
                        "visits, last_access, created_at, version, archived_at FROM segments "
                        "WHERE scope_id = ? ORDER BY id"
                      : "SELECT id, summary, keywords, embedding, emb_sum, page_count, interaction, "
                        "visits, last_access, created_at, version, archived_at FROM segments "
                        "WHERE scope_id = ? AND archived_at IS NULL ORDER BY id"));
  st->Bind(1, scope_id);
  std::vector<SegmentRow> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    SegmentRow s;
    s.id = st->Int(0);
    s.summary = st->Text(1);
    s.keywords = StringsFromJson(st->Text(2));
    s.embedding = st->Floats(3);
    s.emb_sum = st->Floats(4);
    s.page_count = st->Int(5);
    s.interaction = st->Int(6);
    s.visits = st->Int(7);
    s.last_access = st->Int(8);
    s.created_at = st->Int(9);
    s.version = st->Int(10);
    s.archived = !st->IsNull(11);
    out.push_back(std::move(s));
  }
  st->Reset();
  return out;
}

Result<ScopeIdf> ScopeIdf::Load(sql::Db* db, std::int64_t scope_id,
                                const std::vector<std::string>& texts) {
  ScopeIdf idf;
  ENGRAM_ASSIGN_OR_RETURN(idf.docs_,
                          QueryInt(db, "SELECT count(*) FROM pages WHERE scope_id = ?", scope_id, 0, 1));
  std::set<std::string> terms;
  for (const auto& t : texts) {
    for (auto& term : text::Terms(t)) terms.insert(std::move(term));
  }
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT df FROM scope_terms WHERE scope_id = ? AND term = ?"));
  for (const auto& term : terms) {
    st->Reset();
    st->Bind(1, scope_id).Bind(2, term);
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    idf.df_.emplace_back(term, row ? st->Int(0) : 0);
  }
  st->Reset();
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
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO scope_terms(scope_id, term, df) VALUES(?, ?, 1) "
                  "ON CONFLICT(scope_id, term) DO UPDATE SET df = df + 1"));
  for (const auto& t : distinct) {
    ENGRAM_RETURN_IF_ERROR(st->Bind(1, scope_id).Bind(2, t).Run());
  }
  return Status::Ok();
}

}  // namespace engram::memory
