#include "server/api_keys.hpp"

#include <sodium.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "engram/engine.hpp"
#include "store/sqlite.hpp"

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

ApiKeyInfo ReadRow(sql::Stmt* st) {
  ApiKeyInfo k;
  k.id = st->Text(0);
  k.tenant = st->Text(1);
  auto users = nlohmann::json::parse(st->Text(2), nullptr, false);
  if (users.is_array()) {
    for (const auto& u : users) {
      if (u.is_string()) k.users.push_back(u.get<std::string>());
    }
  }
  auto role = ParseRole(st->Text(3));  // the table's CHECK allows only valid names
  k.role = role.ok() ? *role : Role::kRead;
  k.name = st->Text(4);
  k.created_at = st->Int(5);
  if (!st->IsNull(6)) k.revoked_at = st->Int(6);
  return k;
}

}  // namespace

const char* RoleName(Role role) {
  switch (role) {
    case Role::kRead: return "read";
    case Role::kWrite: return "write";
    case Role::kAdmin: return "admin";
  }
  return "read";
}

Result<Role> ParseRole(const std::string& name) {
  if (name == "read") return Role::kRead;
  if (name == "write") return Role::kWrite;
  if (name == "admin") return Role::kAdmin;
  return Status::InvalidArgument("role: expected read, write or admin, got \"" + name + "\"");
}

bool Principal::AllowsUser(const std::string& user) const {
  return users.empty() || std::find(users.begin(), users.end(), user) != users.end();
}

ApiKeys::ApiKeys(std::unique_ptr<sql::Db> db) : db_(std::move(db)) {}
ApiKeys::~ApiKeys() = default;

Result<std::unique_ptr<ApiKeys>> ApiKeys::Open(const std::string& db_path) {
  if (sodium_init() < 0) return Status::Internal("libsodium could not be initialised");
  sql::OpenOptions o;
  o.create = false;
  ENGRAM_ASSIGN_OR_RETURN(auto db, sql::Db::Open(db_path, o));
  // Fails when the store has no key table (not opened by this engram).
  if (auto probe = db->Prepare("SELECT count(*) FROM api_keys"); !probe.ok()) return probe.status();
  return std::unique_ptr<ApiKeys>(new ApiKeys(std::move(db)));
}

Result<std::pair<ApiKeyInfo, std::string>> ApiKeys::Create(const std::string& tenant,
                                                           const std::vector<std::string>& users, Role role,
                                                           const std::string& name, TimeMs now) {
  if (tenant.empty()) return Status::InvalidArgument("tenant: must not be empty");
  ENGRAM_RETURN_IF_ERROR(Engine::ValidateScope(Scope{tenant, "u", "a"}));
  for (const auto& u : users) {
    Status st = Engine::ValidateScope(Scope{tenant, u, "a"});
    if (!st.ok()) return Status::InvalidArgument("users: " + st.message());
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
  info.users = users;
  info.role = role;
  info.name = name;
  info.created_at = now;
  std::string key_text = std::string(kPrefix) + info.id + "_" + b64;
  sodium_memzero(b64, sizeof b64);
  std::lock_guard<std::mutex> lock(mu_);
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db_->Prepare("INSERT INTO api_keys(id, tenant, users, role, name, hash, created_at) "
                                   "VALUES(?, ?, ?, ?, ?, ?, ?)"));
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, info.id)
                             .Bind(2, tenant)
                             .Bind(3, nlohmann::json(users).dump())
                             .Bind(4, RoleName(role))
                             .Bind(5, name)
                             .Bind(6, HashKey(key_text))
                             .Bind(7, now)
                             .Run());
  return std::make_pair(std::move(info), std::move(key_text));
}

Result<std::vector<ApiKeyInfo>> ApiKeys::List(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db_->Prepare("SELECT id, tenant, users, role, name, created_at, revoked_at FROM api_keys "
                                       "WHERE ?1 = '' OR tenant = ?1 ORDER BY created_at, id"));
  st->Bind(1, tenant);
  std::vector<ApiKeyInfo> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back(ReadRow(st));
  }
  st->Reset();
  return out;
}

Status ApiKeys::Revoke(const std::string& id, TimeMs now) {
  std::lock_guard<std::mutex> lock(mu_);
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db_->Prepare("UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?"));
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, now).Bind(2, id).Run());
  if (db_->Changes() == 0) return Status::NotFound("no API key with id \"" + id + "\"");
  return Status::Ok();
}

Result<std::optional<Principal>> ApiKeys::Authenticate(const std::string& key_text) {
  const std::string id = KeyId(key_text);
  const std::string presented = HashKey(key_text);  // computed for every key, so timing does not tell much
  if (id.empty()) return std::optional<Principal>();
  std::lock_guard<std::mutex> lock(mu_);
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db_->Prepare("SELECT id, tenant, users, role, name, created_at, revoked_at, hash "
                                       "FROM api_keys WHERE id = ?"));
  st->Bind(1, id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) {
    st->Reset();
    return std::optional<Principal>();
  }
  ApiKeyInfo info = ReadRow(st);
  const std::string stored = st->Text(7);
  st->Reset();
  if (stored.size() != presented.size() || sodium_memcmp(stored.data(), presented.data(), stored.size()) != 0 ||
      info.revoked_at) {
    return std::optional<Principal>();
  }
  return std::optional<Principal>(Principal{info.id, info.tenant, info.users, info.role});
}

Result<std::int64_t> ApiKeys::CountActive() {
  std::lock_guard<std::mutex> lock(mu_);
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db_->Prepare("SELECT count(*) FROM api_keys WHERE revoked_at IS NULL"));
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::int64_t n = row ? st->Int(0) : 0;
  st->Reset();
  return n;
}

}  // namespace engram::server
