#include "lineage/receipts.hpp"

#include <cstdio>
#include <random>

namespace engram::lineage {

Status Write(sql::Db* db, const Receipt& r) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO receipts(run_id, tenant, user_scope, assistant_scope, memory_kind, "
                  "memory_id, version, source_version, from_tier, to_tier, status, at_utc, "
                  "depends_on_version, outcome_receipt) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  return st->Bind(1, r.run_id)
      .Bind(2, r.tenant)
      .Bind(3, r.user_scope)
      .Bind(4, r.assistant_scope)
      .Bind(5, r.memory_kind)
      .Bind(6, r.memory_id)
      .Bind(7, r.version)
      .Bind(8, r.source_version)
      .Bind(9, r.from_tier)
      .Bind(10, r.to_tier)
      .Bind(11, r.status)
      .Bind(12, r.at_utc)
      .Bind(13, r.depends_on_version)
      .Bind(14, r.outcome_receipt)
      .Run();
}

std::string NewRunId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[32];
  std::snprintf(buf, sizeof buf, "run-%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

}  // namespace engram::lineage
