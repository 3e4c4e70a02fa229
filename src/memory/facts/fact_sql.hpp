// How the fact store names its rows to the data layer: the store key of a
// memory scope and selectors of its facts (store/facts_filter_sql.hpp, which
// turns them into SQL).
#pragma once

#include <optional>

#include "engram/facts.hpp"
#include "store/facts_filter_sql.hpp"

namespace engram::memory::facts {

// The store key of a memory scope: its scope row (RowScope) and its own ids;
// narrower when scope.include_narrower (other agent/run ids, never another
// user).
store::FactScopeKey ScopeKey(const MemoryScope& scope);

// The facts of `scope` in `states`, read at `now` (every memory, no filter).
store::FactSelector Selector(const MemoryScope& scope, store::FactStates states, TimeMs now);

// The facts of `scope` that list and search see: live, unexpired at `now`
// unless include_expired, passing `filter` (which must outlive the selector).
store::FactSelector VisibleSelector(const MemoryScope& scope, TimeMs now, bool include_expired,
                                    const std::optional<store::FactFilter>& filter);

}  // namespace engram::memory::facts
