// The API keys repository: the key rows of `engram serve` (server/api_keys.hpp
// owns the key texts, their hashing and the roles' meaning). A row holds a
// key's public id, its tenant, the users it is limited to, its role, a name,
// the hex hash of the whole key text, when it was created, expires, was
// revoked and was last used. Never the key text itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/db.hpp"

namespace engram::store {

struct ApiKeyRow {
  std::string id;                  // the key's public id (part of the key text)
  std::string tenant;
  std::vector<std::string> users;  // empty: every user of the tenant
  std::string role;                // "read", "write", "admin" or "operator" (the table allows no other)
  std::string name;
  std::string hash;                // hex hash of the whole key text
  TimeMs created_at = 0;
  std::optional<TimeMs> revoked_at;
  std::optional<TimeMs> expires_at;    // refused from then on
  std::optional<TimeMs> last_used_at;  // last authenticated request (TouchApiKey)
};

// Inserts a new key row; fails when the id exists or the role is not one of
// the three names.
Status InsertApiKey(sql::Db* db, const ApiKeyRow& key);

// The row of key `id` (hash included); nullopt when there is none.
Result<std::optional<ApiKeyRow>> FindApiKey(sql::Db* db, const std::string& id);

// The keys of `tenant` ("" = every tenant), revoked ones included, oldest
// first (by creation time, then id); `hash` is left empty.
Result<std::vector<ApiKeyRow>> ListApiKeys(sql::Db* db, const std::string& tenant);

// Records that key `id` was used at `now`.
Status TouchApiKey(sql::Db* db, const std::string& id, TimeMs now);

// Marks key `id` revoked at `now`, keeping an earlier revocation time.
// False when there is no such key.
Result<bool> RevokeApiKey(sql::Db* db, const std::string& id, TimeMs now);

// The keys not revoked. Fails when the store has no key table.
Result<std::int64_t> CountActiveApiKeys(sql::Db* db);

}  // namespace engram::store
