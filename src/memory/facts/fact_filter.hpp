// Filters of list and search (JSON, Mem0 syntax; see engram/facts.hpp):
// parsed, validated and normalised here into a store::FactFilter tree, which
// the data layer turns into one SQL condition (store/facts_filter_sql.hpp),
// so that filters are evaluated inside the query and never after it.
#pragma once

#include <optional>
#include <string>

#include "engram/result.hpp"
#include "store/facts_filter_sql.hpp"

namespace engram::memory::facts {

// Parses filter JSON text ("" = no filter: nullopt). InvalidArgument names
// the path and the reason ("filters.rating.gte: expected a number or an
// ISO-8601 time"); identity keys are refused; at most 16 levels of nesting
// and 200 conditions.
Result<std::optional<store::FactFilter>> ParseFilter(const std::string& filters);

// Validates metadata JSON text for a write: an object ("" = {}), at most
// 64 KiB, without identity keys. Returns the compact form.
Result<std::string> CheckMetadata(const std::string& metadata);

}  // namespace engram::memory::facts
