// Tenant-wide reads of the fact memory for clients that name a memory by id
// alone, or ask which users, agents and runs hold memories (the Mem0-style
// routes of the server). Never across tenants: every query is bound to one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "store/db.hpp"
#include "store/facts.hpp"

namespace engram::store {

// The own ids (user, agent, run) of the memory `memory_id` of `tenant`, from
// its current (not superseded) row; nullopt when the tenant has no such
// memory, or (`live_only`) it is deleted or purged.
Result<std::optional<FactIds>> LocateFact(sql::Db* db, const std::string& tenant, const std::string& memory_id,
                                          bool live_only);

// One identity that holds live memories.
struct FactEntityRow {
  std::string type;  // "user", "agent" or "run"
  std::string name;
  std::int64_t memories = 0;
  std::int64_t first_at = 0;  // oldest created_at of its memories (ms)
  std::int64_t last_at = 0;   // newest updated_at (ms)
};
// Every user, agent and run id of `tenant` with live memories, by type then name.
Result<std::vector<FactEntityRow>> ListFactEntities(sql::Db* db, const std::string& tenant);

}  // namespace engram::store
