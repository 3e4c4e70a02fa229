#include "server/api_keys.hpp"

#include <sodium.h>

#include <algorithm>

#include "engram/engine.hpp"
#include "store/api_keys.hpp"

namespace engram::server {

namespace {

constexpr const char* kPrefix = "egk_";
constexpr std::size_t kIdBytes = 6;       // 12 hex digits
constexpr std::size_t kSecretBytes = 32;  // 256 bits

std::string Hex(const unsigned char* p, std::size_t n) {
  std::string out(n * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), p, n);
  out.pop_back();
  return out;
}

std::string HashKey(const std::string& key_text) {
  unsigned char h[crypto_generichash_BYTES];
  crypto_generichash(h, sizeof h, reinterpret_cast<const unsigned char*>(key_text.data()), key_text.size(), nullptr, 0);
  return Hex(h, sizeof h);
}

// "egk_<12 hex>_<secret>" -> the id, or "" when malformed.
std::string KeyId(const std::string& key_text) {
  const std::size_t id_len = kIdBytes * 2, prefix = 4;
  if (key_text.size() < prefix + id_len + 2 || key_text.compare(0, prefix, kPrefix) != 0 ||
      key_text[prefix + id_len] != '_')
    return "";
  std::string id = key_text.substr(prefix, id_len);
  if (id.find_first_not_of("0123456789abcdef") != std::string::npos) return "";
  return id;
}

ApiKeyInfo InfoFrom(const store::ApiKeyRow& row) {
  ApiKeyInfo k;
  k.id = row.id;
  k.tenant = row.tenant;
  k.users = row.users;
  auto role = ParseRole(row.role);  // the table's CHECK allows only valid names
  k.role = role.ok() ? *role : Role::kRead;
  k.name = row.name;
  k.created_at = row.created_at;
  k.revoked_at = row.revoked_at;
  k.expires_at = row.expires_at;
  k.last_used_at = row.last_used_at;
  return k;
}

}  // namespace

const char* RoleName(Role role) {
  switch (role) {
    case Role::kRead: return "read";
    case Role::kWrite: return "write";
    case Role::kAdmin: return "admin";
    case Role::kOperator: return "operator";
  }
  return "read";
}

Result<Role> ParseRole(const std::string& name) {
  if (name == "read") return Role::kRead;
  if (name == "write") return Role::kWrite;
  if (name == "admin") return Role::kAdmin;
  if (name == "operator") return Role::kOperator;
  return Status::InvalidArgument("role: expected read, write, admin or operator, got \"" + name + "\"");
}

bool Principal::AllowsUser(const std::string& user) const {
  return users.empty() || std::find(users.begin(), users.end(), user) != users.end();
}

ApiKeys::ApiKeys(std::unique_ptr<sql::Db> db, std::unique_ptr<sql::Db> touch_db)
    : db_(std::move(db)), touch_db_(std::move(touch_db)) {}
ApiKeys::~ApiKeys() = default;

Result<std::unique_ptr<ApiKeys>> ApiKeys::Open(const std::string& db_path) {
  if (sodium_init() < 0) return Status::Internal("libsodium could not be initialised");
  sql::OpenOptions o;
  o.create = false;
  ENGRAM_ASSIGN_OR_RETURN(auto db, sql::Db::Open(db_path, o));
  // Fails when the store has no key table (not opened by this engram).
  ENGRAM_RETURN_IF_ERROR(store::CountActiveApiKeys(db.get()).status());
  // Last-use records wait at most 50 ms for the write lock (best effort).
  o.busy_timeout_ms = 50;
  auto touch_db = sql::Db::Open(db_path, o);
  return std::unique_ptr<ApiKeys>(
      new ApiKeys(std::move(db), touch_db.ok() ? std::move(*touch_db) : std::unique_ptr<sql::Db>()));
}

Result<std::pair<ApiKeyInfo, std::string>> ApiKeys::Create(const std::string& tenant,
                                                           const std::vector<std::string>& users, Role role,
                                                           const std::string& name, TimeMs now,
                                                           std::optional<TimeMs> expires_at) {
  if (tenant.empty()) return Status::InvalidArgument("tenant: must not be empty");
  if (expires_at && *expires_at <= now) return Status::InvalidArgument("expires_at: must be in the future");
  ENGRAM_RETURN_IF_ERROR(Engine::ValidateScope(Scope{tenant, "u", "a"}));
  std::vector<std::string> distinct;  // each user once, in the order given ("a,b,a": a, b)
  for (const auto& u : users) {
    Status st = Engine::ValidateScope(Scope{tenant, u, "a"});
    if (!st.ok()) return Status::InvalidArgument("users: " + st.message());
    if (std::find(distinct.begin(), distinct.end(), u) == distinct.end()) distinct.push_back(u);
  }
  if (name.size() > 200) return Status::InvalidArgument("name: at most 200 bytes");
  unsigned char id_bytes[kIdBytes], secret[kSecretBytes];
  randombytes_buf(id_bytes, sizeof id_bytes);
  randombytes_buf(secret, sizeof secret);
  char b64[sodium_base64_ENCODED_LEN(kSecretBytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
  sodium_bin2base64(b64, sizeof b64, secret, sizeof secret, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  sodium_memzero(secret, sizeof secret);
  ApiKeyInfo info;
  info.id = Hex(id_bytes, sizeof id_bytes);
  info.tenant = tenant;
  info.users = distinct;
  info.role = role;
  info.name = name;
  info.created_at = now;
  info.expires_at = expires_at;
  std::string key_text = std::string(kPrefix) + info.id + "_" + b64;
  sodium_memzero(b64, sizeof b64);
  store::ApiKeyRow row;
  row.id = info.id;
  row.tenant = tenant;
  row.users = distinct;
  row.role = RoleName(role);
  row.name = name;
  row.hash = HashKey(key_text);
  row.created_at = now;
  row.expires_at = expires_at;
  std::lock_guard<std::mutex> lock(mu_);
  // In a transaction: one that finds the connection lost connects again and
  // begins at once (PostgreSQL), where a lone INSERT would fail.
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db_.get()));
  ENGRAM_RETURN_IF_ERROR(store::InsertApiKey(db_.get(), row));
  ENGRAM_RETURN_IF_ERROR(txn->Commit());
  return std::make_pair(std::move(info), std::move(key_text));
}

Result<std::vector<ApiKeyInfo>> ApiKeys::List(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  ENGRAM_ASSIGN_OR_RETURN(std::vector<store::ApiKeyRow> rows, store::ListApiKeys(db_.get(), tenant));
  std::vector<ApiKeyInfo> out;
  out.reserve(rows.size());
  for (const auto& row : rows) out.push_back(InfoFrom(row));
  return out;
}

Status ApiKeys::Revoke(const std::string& id, TimeMs now) {
  std::lock_guard<std::mutex> lock(mu_);
  ENGRAM_ASSIGN_OR_RETURN(bool found, store::RevokeApiKey(db_.get(), id, now));
  if (!found) return Status::NotFound("no API key with id \"" + id + "\"");
  return Status::Ok();
}

Result<std::optional<Principal>> ApiKeys::Authenticate(const std::string& key_text, TimeMs now) {
  const std::string id = KeyId(key_text);
  const std::string presented = HashKey(key_text);  // computed for every key, so timing does not tell much
  if (id.empty()) return std::optional<Principal>();
  std::optional<store::ApiKeyRow> row;
  bool record_use = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ENGRAM_ASSIGN_OR_RETURN(row, store::FindApiKey(db_.get(), id));
    if (!row) return std::optional<Principal>();
    const std::string& stored = row->hash;
    if (stored.size() != presented.size() || sodium_memcmp(stored.data(), presented.data(), stored.size()) != 0 ||
        row->revoked_at || (row->expires_at && now >= *row->expires_at)) {
      return std::optional<Principal>();
    }
    // The last use, to the minute: one small write a minute per key at most.
    constexpr TimeMs kUseResolutionMs = 60'000;
    auto [it, first_use] = recorded_use_.try_emplace(row->id, row->last_used_at.value_or(0));
    TimeMs& recorded = it->second;
    if ((first_use && !row->last_used_at) || now - std::max(recorded, row->last_used_at.value_or(0)) >= kUseResolutionMs) {
      recorded = now;
      record_use = true;
    }
  }
  // Outside mu_, on a connection of its own that waits at most briefly for
  // the store's write lock: a busy store never delays authentication (the
  // use is then recorded by a later request).
  if (record_use) {
    std::unique_lock<std::mutex> touch(touch_mu_, std::try_to_lock);
    Status st = touch.owns_lock() && touch_db_ ? store::TouchApiKey(touch_db_.get(), row->id, now)
                                               : Status::Unavailable("busy");
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      recorded_use_.erase(row->id);  // the next request tries again
    }
  }
  ApiKeyInfo info = InfoFrom(*row);
  return std::optional<Principal>(Principal{info.id, info.tenant, info.users, info.role});
}

Result<std::int64_t> ApiKeys::CountActive() {
  std::lock_guard<std::mutex> lock(mu_);
  return store::CountActiveApiKeys(db_.get());
}

}  // namespace engram::server
