#include "memory/facts/fact_query.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "memory/facts/fact_filter.hpp"
#include "memory/facts/fact_sql.hpp"
#include "memory/facts/fact_store.hpp"
#include "memory/facts/fact_text.hpp"
#include "memory/scope_store.hpp"

namespace engram::memory::facts {

namespace {

constexpr int kMaxLimit = 1000;
constexpr int kMaxEntityRows = 2000;

Result<SqlCond> Conditions(const MemoryScope& scope, const std::string& filters, TimeMs now,
                           bool include_expired) {
  ENGRAM_RETURN_IF_ERROR(ValidateMemoryScope(scope, false));
  ENGRAM_ASSIGN_OR_RETURN(SqlCond filter, CompileFilter(filters));
  SqlCond c = ScopeCondition(scope);
  c.And(VisibleCondition(now, include_expired));
  c.And(filter);
  return c;
}

std::string Cursor(const MemoryItem& m) { return std::to_string(m.created_at) + ":" + m.id; }

Status ParseCursor(const std::string& cursor, std::int64_t* at, std::string* id) {
  auto colon = cursor.find(':');
  if (colon == std::string::npos || colon == 0) return Status::InvalidArgument("cursor: malformed");
  try {
    std::size_t used = 0;
    *at = std::stoll(cursor.substr(0, colon), &used);
    if (used != colon) return Status::InvalidArgument("cursor: malformed");
  } catch (...) {
    return Status::InvalidArgument("cursor: malformed");
  }
  *id = cursor.substr(colon + 1);
  if (id->empty()) return Status::InvalidArgument("cursor: malformed");
  return Status::Ok();
}

}  // namespace

Result<MemoryPage> ListMemories(sql::Db* db, const MemoryScope& scope, const MemoryListOptions& o,
                                TimeMs now) {
  if (o.limit < 1 || o.limit > kMaxLimit) return Status::InvalidArgument("limit: must be 1..1000");
  ENGRAM_ASSIGN_OR_RETURN(SqlCond c, Conditions(scope, o.filters, now, o.include_expired));
  if (!o.cursor.empty()) {
    std::int64_t at = 0;
    std::string id;
    ENGRAM_RETURN_IF_ERROR(ParseCursor(o.cursor, &at, &id));
    SqlCond after;
    after.sql = "f.created_at < ? OR (f.created_at = ? AND f.memory_id < ?)";
    after.args = {SqlArg::Int(at), SqlArg::Int(at), SqlArg::Text(id)};
    c.And(after);
  }
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare(std::string("SELECT ") + kFactColumns + " FROM facts f WHERE " + c.sql +
                                  " ORDER BY f.created_at DESC, f.memory_id DESC LIMIT ?"));
  BindArgs(st, c.args);
  st->Bind(static_cast<int>(c.args.size()) + 1, o.limit + 1);
  MemoryPage page;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    page.items.push_back(ReadRow(st, now).item);
  }
  st->Reset();
  if (static_cast<int>(page.items.size()) > o.limit) {
    page.items.pop_back();
    page.next_cursor = Cursor(page.items.back());
  }
  return page;
}

Result<std::vector<MemoryHistoryEvent>> MemoryHistory(sql::Db* db, const MemoryScope& scope,
                                                      const std::string& memory_id, TimeMs now) {
  ENGRAM_RETURN_IF_ERROR(ValidateMemoryScope(scope, false));
  ENGRAM_ASSIGN_OR_RETURN(auto row, FindMemory(db, scope, memory_id, now));
  if (!row) return Status::NotFound("memory " + memory_id + " (in this scope)");
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare("SELECT version, event, old_text, new_text, actor, role, at FROM fact_history "
                                  "WHERE memory_id = ? ORDER BY id"));
  st->Bind(1, memory_id);
  std::vector<MemoryHistoryEvent> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool r, st->Step());
    if (!r) break;
    MemoryHistoryEvent e;
    e.id = memory_id;
    e.version = st->Int(0);
    e.event = st->Text(1);
    if (!st->IsNull(2)) e.old_text = st->Text(2);
    if (!st->IsNull(3)) e.new_text = st->Text(3);
    e.actor = st->Text(4);
    e.role = st->Text(5);
    e.at = st->Int(6);
    out.push_back(std::move(e));
  }
  st->Reset();
  return out;
}

Result<std::vector<MemoryItem>> SearchMemories(sql::Db* db, const MemoryScope& scope, const std::string& query,
                                               const Vector& qv, const MemorySearchOptions& o, TimeMs now) {
  if (o.top_k < 1 || o.top_k > kMaxLimit) return Status::InvalidArgument("top_k: must be 1..1000");
  if (!(o.threshold >= 0.0 && o.threshold <= 1.0)) return Status::InvalidArgument("threshold: must be in [0, 1]");
  ENGRAM_ASSIGN_OR_RETURN(SqlCond c, Conditions(scope, o.filters, now, o.include_expired));
  const std::size_t n = static_cast<std::size_t>(std::max(4 * o.top_k, 60));

  // 1. Vector similarity of every candidate row (filters applied in SQL).
  std::unordered_map<std::int64_t, double> cosine;
  std::vector<std::pair<double, std::int64_t>> by_vector;
  {
    ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                            db->Prepare("SELECT f.id, f.embedding FROM facts f WHERE " + c.sql));
    BindArgs(st, c.args);
    for (;;) {
      ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
      if (!row) break;
      Vector v = st->Floats(1);
      double cos = v.size() == qv.size() && !qv.empty() ? std::clamp<double>(Dot(v, qv), 0.0, 1.0) : 0.0;
      cosine[st->Int(0)] = cos;
      by_vector.emplace_back(cos, st->Int(0));
    }
    st->Reset();
  }
  if (cosine.empty()) return std::vector<MemoryItem>{};
  std::sort(by_vector.begin(), by_vector.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second > b.second);
  });
  std::map<std::int64_t, MemoryScoreDetails> cand;
  for (std::size_t i = 0; i < by_vector.size() && i < n; ++i) {
    if (by_vector[i].first > 0) cand[by_vector[i].second].from_vector = true;
  }

  // 2. Lexical: FTS5 bm25 (within the scope's token when the scope is exact).
  // CROSS JOIN keeps the FTS match as the outer loop (else SQLite may probe
  // the match once per filtered row).
  std::string token;
  if (!scope.include_narrower) {
    Scope rs = RowScope(scope);
    ENGRAM_ASSIGN_OR_RETURN(auto row, FindScope(db, rs));
    if (row) token = ScopeToken(row->id);
  }
  const std::string match = LexicalMatch(query, token);
  if (!match.empty()) {
    ENGRAM_ASSIGN_OR_RETURN(
        sql::Stmt * st,
        db->Prepare("SELECT f.id, bm25(facts_fts, 0.0, 1.0) AS s FROM facts_fts CROSS JOIN facts f ON f.id = "
                    "facts_fts.rowid WHERE facts_fts MATCH ? AND " + c.sql + " ORDER BY s LIMIT ?"));
    st->Bind(1, match);
    BindArgs(st, c.args, 2);
    st->Bind(static_cast<int>(c.args.size()) + 2, static_cast<std::int64_t>(n));
    for (;;) {
      ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
      if (!row) break;
      auto& d = cand[st->Int(0)];
      d.from_lexical = true;
      d.bm25 = -st->Double(1);
    }
    st->Reset();
  }

  // 3. Entities the query names, linked to candidate rows.
  std::vector<std::string> names = QueryEntityNames(query);
  std::set<std::string> matched_names;
  if (!names.empty()) {
    std::string list;
    for (std::size_t i = 0; i < names.size(); ++i) list += i ? ",?" : "?";
    ENGRAM_ASSIGN_OR_RETURN(
        sql::Stmt * st,
        db->Prepare("SELECT fe.fact_id, e.name FROM entities e CROSS JOIN fact_entities fe ON fe.entity_id = e.id "
                    "CROSS JOIN facts f ON f.id = fe.fact_id WHERE e.name IN (" + list + ") AND " + c.sql +
                    " LIMIT " + std::to_string(kMaxEntityRows)));
    std::vector<SqlArg> args;
    for (const auto& nm : names) args.push_back(SqlArg::Text(nm));
    args.insert(args.end(), c.args.begin(), c.args.end());
    BindArgs(st, args);
    for (;;) {
      ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
      if (!row) break;
      auto& d = cand[st->Int(0)];
      d.from_entity = true;
      d.entities.push_back(st->Text(1));
      matched_names.insert(st->Text(1));
    }
    st->Reset();
  }

  // 4. Every component for every candidate, fused.
  const auto qterms = LexicalTerms(query);
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * load,
                          db->Prepare(std::string("SELECT ") + kFactColumns + " FROM facts f WHERE f.id = ?"));
  std::vector<MemoryItem> out;
  for (auto& [id, d] : cand) {
    load->Bind(1, id);
    ENGRAM_ASSIGN_OR_RETURN(bool row, load->Step());
    if (!row) {
      load->Reset();
      continue;
    }
    MemoryItem m = ReadRow(load, now).item;
    load->Reset();
    d.vector = cosine.count(id) ? cosine[id] : 0.0;
    if (!qterms.empty()) {
      auto doc = LexicalTerms(m.memory);
      std::unordered_set<std::string> have(doc.begin(), doc.end());
      int hit = 0;
      for (const auto& t : qterms) hit += have.count(t) ? 1 : 0;
      d.lexical = static_cast<double>(hit) / static_cast<double>(qterms.size());
    }
    std::sort(d.entities.begin(), d.entities.end());
    d.entities.erase(std::unique(d.entities.begin(), d.entities.end()), d.entities.end());
    d.entity = matched_names.empty() ? 0.0
                                     : static_cast<double>(d.entities.size()) / static_cast<double>(matched_names.size());
    m.score = std::clamp(kVectorWeight * d.vector + kLexicalWeight * d.lexical + kEntityWeight * d.entity, 0.0, 1.0);
    if (m.score < o.threshold || m.score <= 0.0) continue;
    if (o.explain) m.score_details = d;
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const MemoryItem& a, const MemoryItem& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.created_at != b.created_at) return a.created_at > b.created_at;
    return a.id > b.id;
  });
  if (out.size() > static_cast<std::size_t>(o.top_k)) out.resize(static_cast<std::size_t>(o.top_k));
  return out;
}

}  // namespace engram::memory::facts
