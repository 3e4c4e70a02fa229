// Filters of list and search (JSON, Mem0 syntax; see engram/facts.hpp),
// compiled into one SQL condition on the facts alias "f", so that they are
// evaluated inside the query and never after it.
#pragma once

#include <string>

#include "engram/result.hpp"
#include "memory/facts/fact_sql.hpp"

namespace engram::memory::facts {

// Compiles filter JSON text ("" = no filter). InvalidArgument names the path
// and the reason ("filters.rating.gte: expected a number or an ISO-8601
// time"); identity keys are refused.
Result<SqlCond> CompileFilter(const std::string& filters);

// Validates metadata JSON text for a write: an object ("" = {}), at most
// 64 KiB, without identity keys. Returns the compact form.
Result<std::string> CheckMetadata(const std::string& metadata);

}  // namespace engram::memory::facts
