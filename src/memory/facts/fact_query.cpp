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

Result<std::vector<FactRow>> SelectFacts(sql::Db* db, const SqlCond& c, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(std::string("SELECT ") + kFactColumns +
                                                      " FROM facts f WHERE " + c.sql + " ORDER BY f.id"));
  BindArgs(st, c.args);
  std::vector<FactRow> rows;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool r, st->Step());
    if (!r) break;
    rows.push_back(ReadRow(st, now));
  }
  st->Reset();
  return rows;
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

}  // namespace engram::memory::facts
