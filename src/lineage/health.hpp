// The memory health classifier (docs/LINEAGE.md): eight states in precedence
// order, per memory item, per scope and overall. Pure: it reads an Evidence
// snapshot and a policy and never touches the store, so fixtures can test
// every state without an engine.
#pragma once

#include <string>

#include "engram/lineage.hpp"
#include "lineage/evidence.hpp"

namespace engram::lineage {

struct Policy {
  TimeMs now = 0;
  std::int64_t horizon_ms = 0;         // receipts older than this prove nothing; 0 = never expire
  std::int64_t promotion_wait_ms = 0;  // grace beyond capacity before a promotion is missing
  int stm_capacity = 10;
  std::string tenant, user;            // report filter; "" = all
  int max_findings = 200;
};

// Classifies every item and event of the evidence and reports those in the
// policy's filter. Items: turns, segments, facts, jobs, generations; events
// (retrievals, runs spanning scopes) appear only when they are not green.
HealthReport Classify(const Evidence& evidence, const Policy& policy);

}  // namespace engram::lineage
