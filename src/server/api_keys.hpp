// API keys of `engram serve`. A key belongs to one tenant, may be limited to
// some of its users, has a role, and may expire. The key text is shown once at creation;
// the store keeps only its BLAKE2b hash (libsodium), compared in constant
// time. Revocation takes effect on the next request: every request reads the
// key's row (no cache), so `engram keys revoke` in another process works.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"

namespace engram::sql {
class Db;
}

namespace engram::server {

// read: every read (retrieve, search, list, get, export, profile, stats);
// write: read + admission, chat, memory writes, import, maintenance;
// admin: write + purge, forgetting a user, job retries, lineage verify,
// /metrics of its own tenant;
// operator: admin of its tenant + /metrics of the whole store (every
// tenant's series). The first key `engram serve` creates is an operator key.
enum class Role { kRead = 0, kWrite = 1, kAdmin = 2, kOperator = 3 };
const char* RoleName(Role role);
Result<Role> ParseRole(const std::string& name);

struct ApiKeyInfo {
  std::string id;
  std::string tenant;
  std::vector<std::string> users;  // empty: every user of the tenant
  Role role = Role::kRead;
  std::string name;
  TimeMs created_at = 0;
  std::optional<TimeMs> revoked_at;
  std::optional<TimeMs> expires_at;
  std::optional<TimeMs> last_used_at;  // to the minute (Authenticate records it)
};

// Who a request acts as.
struct Principal {
  std::string key_id;  // "" with --no-auth
  std::string tenant;
  std::vector<std::string> users;  // empty: every user
  Role role = Role::kRead;

  bool AllowsUser(const std::string& user) const;
  bool AllUsers() const { return users.empty(); }
  bool Can(Role needed) const { return static_cast<int>(role) >= static_cast<int>(needed); }
};

class ApiKeys {
 public:
  // Opens the key table of the engram store at `db_path` (the engine must
  // have opened or created the store first: the table is part of its schema).
  static Result<std::unique_ptr<ApiKeys>> Open(const std::string& db_path);
  ~ApiKeys();

  // Creates a key; returns its record and the key text (shown only now).
  // `expires_at` (optional) must be after `now`.
  Result<std::pair<ApiKeyInfo, std::string>> Create(const std::string& tenant, const std::vector<std::string>& users,
                                                    Role role, const std::string& name, TimeMs now,
                                                    std::optional<TimeMs> expires_at = std::nullopt);
  // Keys of a tenant ("" = all), revoked ones included, oldest first.
  Result<std::vector<ApiKeyInfo>> List(const std::string& tenant);
  // NotFound when no such key; revoking twice is fine.
  Status Revoke(const std::string& id, TimeMs now);
  // The principal of a presented key text at `now`; nullopt when the key is
  // unknown, malformed, revoked or expired. Records the key's last use in the
  // store at most once a minute per key (a failure to record is ignored: it
  // never fails the request).
  Result<std::optional<Principal>> Authenticate(const std::string& key_text, TimeMs now);
  // Keys not revoked.
  Result<std::int64_t> CountActive();

 private:
  ApiKeys(std::unique_ptr<sql::Db> db, std::unique_ptr<sql::Db> touch_db);
  std::mutex mu_;
  std::unique_ptr<sql::Db> db_;  // guarded by mu_
  std::map<std::string, TimeMs> recorded_use_;  // last use written per key id, guarded by mu_
  std::mutex touch_mu_;
  std::unique_ptr<sql::Db> touch_db_;  // last-use writes (may be null), guarded by touch_mu_
};

}  // namespace engram::server
