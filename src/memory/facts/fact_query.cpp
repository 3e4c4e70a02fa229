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
#include "store/facts_history.hpp"

namespace engram::memory::facts {

namespace {

constexpr int kMaxLimit = 1000;

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
  ENGRAM_RETURN_IF_ERROR(ValidateMemoryScope(scope, false));
  ENGRAM_ASSIGN_OR_RETURN(std::optional<store::FactFilter> filter, ParseFilter(o.filters));
  const store::FactSelector sel = VisibleSelector(scope, now, o.include_expired, filter);
  std::optional<store::FactCursor> after;
  if (!o.cursor.empty()) {
    after.emplace();
    ENGRAM_RETURN_IF_ERROR(ParseCursor(o.cursor, &after->created_at, &after->memory_id));
  }
  ENGRAM_ASSIGN_OR_RETURN(std::vector<FactRow> rows, store::ListFactRows(db, sel, after, o.limit + 1));
  MemoryPage page;
  for (auto& r : rows) page.items.push_back(std::move(r.item));
  if (static_cast<int>(page.items.size()) > o.limit) {
    page.items.pop_back();
    page.next_cursor = Cursor(page.items.back());
  }
  return page;
}

Result<std::vector<FactRow>> SelectFacts(sql::Db* db, const store::FactSelector& selector) {
  return store::SelectFactRows(db, selector);
}

Result<std::vector<MemoryHistoryEvent>> MemoryHistory(sql::Db* db, const MemoryScope& scope,
                                                      const std::string& memory_id, TimeMs now) {
  ENGRAM_RETURN_IF_ERROR(ValidateMemoryScope(scope, false));
  ENGRAM_ASSIGN_OR_RETURN(auto row, FindMemory(db, scope, memory_id, now));
  if (!row) return Status::NotFound("memory " + memory_id + " (in this scope)");
  ENGRAM_ASSIGN_OR_RETURN(std::vector<store::FactHistoryRow> rows, store::ListFactHistory(db, memory_id));
  std::vector<MemoryHistoryEvent> out;
  for (auto& h : rows) {
    MemoryHistoryEvent e;
    e.id = memory_id;
    e.version = h.version;
    e.event = std::move(h.event);
    e.old_text = std::move(h.old_text);
    e.new_text = std::move(h.new_text);
    e.actor = std::move(h.actor);
    e.role = std::move(h.role);
    e.at = h.at;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace engram::memory::facts
