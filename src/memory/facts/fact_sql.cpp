#include "memory/facts/fact_sql.hpp"

#include "memory/facts/fact_store.hpp"

namespace engram::memory::facts {

store::FactScopeKey ScopeKey(const MemoryScope& s) {
  return store::FactScopeKey{RowScope(s), s.user, s.agent, s.run, s.include_narrower};
}

store::FactSelector Selector(const MemoryScope& scope, store::FactStates states, TimeMs now) {
  store::FactSelector sel;
  sel.scope = ScopeKey(scope);
  sel.states = states;
  sel.now = now;
  return sel;
}

store::FactSelector VisibleSelector(const MemoryScope& scope, TimeMs now, bool include_expired,
                                    const std::optional<store::FactFilter>& filter) {
  store::FactSelector sel =
      Selector(scope, include_expired ? store::FactStates::kLive : store::FactStates::kVisible, now);
  if (filter) sel.filter = &*filter;
  return sel;
}

}  // namespace engram::memory::facts
