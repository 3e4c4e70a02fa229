// The scopes repository: one row per (tenant, user, assistant), with the
// dialogue chain's tail, the turn sequence, and two counters that caches key
// on: data_version (bumped by every commit that changes what retrieval reads)
// and generation (bumped, with data_version, by every erasure inside the
// scope). Scope ids are never reused, on either backend, so a cache keyed by
// scope id can never hand one scope's content to another.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/db.hpp"

namespace engram::store {

struct ScopeRow {
  std::int64_t id = 0;
  Scope scope;
  std::int64_t next_seq = 1;
  std::int64_t stm_count = 0;
  std::int64_t chain_page_id = 0;
  std::string chain_summary;
  std::int64_t data_version = 0;
  std::int64_t generation = 0;
};

// The scope's row id, creating the row with an id never used before.
// REQUIRES: inside a write transaction.
Result<std::int64_t> EnsureScope(sql::Db* db, const Scope& scope, TimeMs now);
// The scope's row, or nullopt when it was never written (or was erased).
Result<std::optional<ScopeRow>> FindScope(sql::Db* db, const Scope& scope);
// NotFound when there is no such row.
Result<ScopeRow> LoadScope(sql::Db* db, std::int64_t scope_id);
Result<std::vector<ScopeRow>> ListScopes(sql::Db* db);
// The rows of a tenant's scopes (of one user's when `user` is not empty), by id.
Result<std::vector<ScopeRow>> ListTenantScopes(sql::Db* db, const std::string& tenant,
                                               const std::string& user);
// One page of a tenant's users (ListTenantUsers).
struct TenantUserRows {
  std::vector<std::pair<std::string, std::vector<std::string>>> users;  // user, its assistants
  std::int64_t matched = 0;
  bool more = false;
};
// The tenant's users after `after` (ids in byte order, whatever the
// database's collation), "-" (no user: an agent's own memories) aside,
// whose id folded to ASCII lower case contains `contains` (lower case; ""
// for all), at most `limit`, each with its assistants in the order their
// scopes were made ("-", a user's own memories, aside); `matched`: how many
// users contain `contains`, before `after` too; `more`: more follow. Two
// statements by the unique index on tenant, user, assistant; the page's
// rows only are read into memory.
Result<TenantUserRows> ListTenantUsers(sql::Db* db, const std::string& tenant,
                                       const std::string& contains, const std::string& after,
                                       int limit);
// Marks the scope's indexes as changed (readers reload their caches).
Status BumpDataVersion(sql::Db* db, std::int64_t scope_id);
// Every scope's generation and data_version (after a re-embedding changed
// the vectors of existing pages).
Status BumpAllGenerations(sql::Db* db);
// Marks content of the scope as erased: generation and data_version move on,
// so no snapshot from before is served or extended. REQUIRES: inside the
// erasing write transaction.
Status BumpGeneration(sql::Db* db, std::int64_t scope_id);

struct ScopeVersion {
  std::int64_t generation = 0;
  std::int64_t data_version = 0;
};
// The cache key of a scope now; nullopt when the scope no longer exists.
Result<std::optional<ScopeVersion>> GetScopeVersion(sql::Db* db, std::int64_t scope_id);

}  // namespace engram::store
