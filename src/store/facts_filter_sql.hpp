// The SQL side of fact selection: which facts rows a read of the fact store
// sees (scope, state, one memory, the caller's filter), turned into one WHERE
// condition with bound arguments on the facts alias "f", so that filters are
// evaluated inside the query and never after it.
//
// The caller's filter (JSON, Mem0 syntax) is parsed, validated and normalised
// in memory/facts/fact_filter.hpp into a FactFilter tree; this file only
// renders a valid tree, per dialect. Metadata is JSON object text: SQLite
// reads it with json_extract / json_type / json_each, PostgreSQL with jsonb
// operators on CAST(f.metadata AS jsonb) (so the column may be text or jsonb).
// The PostgreSQL forms follow SQLite's values: a JSON boolean compares as the
// integer 1 or 0, a string only equals a string, a number only a number; in
// `contains`, array elements and scalars compare as their text. Known gaps on
// PostgreSQL: arrays and objects never equal a string (SQLite compares their
// JSON text), numbers in `contains` are matched as jsonb writes them (1e3 is
// "1000", SQLite's "1000.0"), and an ISO-8601 time with an impossible day
// (2025-02-30) is an error instead of matching nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/db.hpp"

namespace engram::store {

// One bound argument.
struct SqlArg {
  enum Type { kInt, kReal, kText, kNull } type = kNull;
  std::int64_t i = 0;
  double d = 0;
  std::string s;
  static SqlArg Int(std::int64_t v) { return {kInt, v, 0, {}}; }
  static SqlArg Real(double v) { return {kReal, 0, v, {}}; }
  static SqlArg Text(std::string v) { return {kText, 0, 0, std::move(v)}; }
};

// A WHERE fragment with its positional ("?") arguments, in order.
struct SqlCond {
  std::string sql;
  std::vector<SqlArg> args;
  // Appends " AND (<other>)" (or sets "(<other>)" when empty); an empty
  // `other` changes nothing.
  void And(const SqlCond& other);
};

// Binds args to ?first, ?first+1, ...
void BindArgs(sql::Stmt* st, const std::vector<SqlArg>& args, int first = 1);

// What a filter compares: a built-in column of facts, or a metadata key.
struct FactFilterField {
  enum class Kind { kColumn, kMetadata };
  Kind kind = Kind::kColumn;
  // kColumn: kind, role, actor, attributed_to, status (text), created_at,
  // updated_at, event_time, expires_at (epoch ms), version (integer).
  std::string column;
  // kMetadata: the key's parts ("a.b" -> {"a", "b"}), none empty and none
  // holding quotes, backslashes or control characters.
  std::vector<std::string> path;
};

enum class FactFilterOp {
  kAll,        // every child (none: true)
  kAny,        // any child
  kNot,        // not the one child (a NULL child counts as false)
  kIsNull,     // the field is absent or null
  kNotNull,    // the field is present and not null
  kEq,         // = values[0]
  kNe,         // absent, null, or <> values[0]
  kGt, kGte, kLt, kLte,  // ordered against values[0]
  kIn,         // = one of values
  kNin,        // absent, null, or none of values
  kContains,   // text: a substring; metadata arrays: an element containing it
  kIContains,  // as kContains, ASCII case folded
};

// A validated, normalised filter. Values are typed for their field: text
// columns take text, time columns epoch ms (kInt), version an integer;
// metadata takes text, kInt (booleans as 1/0) or kReal.
struct FactFilter {
  FactFilterOp op = FactFilterOp::kAll;
  std::vector<FactFilter> children;  // kAll, kAny; kNot has exactly one
  FactFilterField field;             // the comparisons
  std::vector<SqlArg> values;
  // Metadata kGt..kLte only: values[0] is epoch ms (kReal) and the metadata
  // value an ISO-8601 time, compared as instants; else numbers compare with
  // numbers only.
  bool as_instant = false;
};

// Whose facts: the scope row and the memory's own ids. Exact: facts of the
// scope row `row` with exactly these user/agent/run ids. Narrower: facts of
// every scope row of (row.tenant, row.user) with this user id and, where not
// empty, this agent and run id (never another user's).
struct FactScopeKey {
  Scope row;
  std::string user, agent, run;  // "" = none
  bool narrower = false;
};

enum class FactStates {
  kVisible,   // live, and unexpired at the selector's `now`
  kLive,      // live, expired or not
  kCurrent,   // not superseded (live, deleted or purged)
  kUnpurged,  // neither superseded nor purged
};

// Which facts rows a read sees.
struct FactSelector {
  FactScopeKey scope;
  FactStates states = FactStates::kVisible;
  TimeMs now = 0;             // for kVisible, and MemoryItem::expired of rows read
  std::optional<std::string> memory_id;  // nullopt = every memory
  const FactFilter* filter = nullptr;  // null = no filter
};

// The selector as one condition on the facts alias "f" in the SQL of
// `dialect`. InvalidArgument for a malformed filter tree (an unknown column,
// a wrong value count); a tree built by memory::facts::ParseFilter is valid.
Result<SqlCond> FactCondition(sql::Dialect dialect, const FactSelector& selector);

}  // namespace engram::store
