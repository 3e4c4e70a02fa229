// SQL fragments of the fact store: bound arguments, the scope condition and
// the visibility condition, on the facts alias "f".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/facts.hpp"
#include "store/sqlite.hpp"

namespace engram::memory::facts {

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
  // Appends " AND (<other>)" (or sets it when empty).
  void And(const SqlCond& other);
};

// Binds args to ?first, ?first+1, ...
void BindArgs(sql::Stmt* st, const std::vector<SqlArg>& args, int first = 1);

// Facts of exactly the scope (or of it and its narrower scopes when
// scope.include_narrower: other agent/run ids, never another user).
SqlCond ScopeCondition(const MemoryScope& scope);
// Live, and unexpired at `now` unless include_expired.
SqlCond VisibleCondition(TimeMs now, bool include_expired);

}  // namespace engram::memory::facts
