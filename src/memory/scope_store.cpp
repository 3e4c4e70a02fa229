#include "memory/scope_store.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/text.hpp"

namespace engram::memory {

namespace {

constexpr std::size_t kMaxIdBytes = 128;

Status ValidateId(const std::string& value, const char* field) {
  if (value.empty()) return Status::InvalidArgument(std::string(field) + ": must not be empty");
  if (value.size() > kMaxIdBytes) {
    return Status::InvalidArgument(std::string(field) + ": longer than 128 bytes");
  }
  if (!text::IsValidUtf8(value)) {
    return Status::InvalidArgument(std::string(field) + ": not valid UTF-8");
  }
  for (unsigned char c : value) {
    if (c < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(std::string(field) + ": contains a control character");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateScope(const Scope& scope) {
  ENGRAM_RETURN_IF_ERROR(ValidateId(scope.tenant, "tenant"));
  ENGRAM_RETURN_IF_ERROR(ValidateId(scope.user, "user"));
  return ValidateId(scope.assistant, "assistant");
}

std::string ScopeToken(std::int64_t scope_id) { return "s" + std::to_string(scope_id); }

std::string FtsDocument(const std::string& s) {
  std::string out;
  for (const auto& t : text::Terms(s)) {
    std::string f = text::FtsTerm(t);
    if (f.empty()) continue;
    if (!out.empty()) out.push_back(' ');
    out += f;
  }
  return out;
}

std::string FtsQuery(std::int64_t scope_id, const std::string& query) {
  std::vector<std::string> seen;
  std::string terms;
  for (const auto& t : text::Terms(query)) {
    std::string f = text::FtsTerm(t);
    if (f.empty() || std::find(seen.begin(), seen.end(), f) != seen.end()) continue;
    seen.push_back(f);
    if (!terms.empty()) terms += " OR ";
    terms += "terms:\"" + f + "\"";
  }
  if (terms.empty()) return {};
  return "scope:" + ScopeToken(scope_id) + " AND (" + terms + ")";
}

std::string IdsToJson(const std::vector<std::int64_t>& ids) { return nlohmann::json(ids).dump(); }

std::vector<std::int64_t> IdsFromJson(const std::string& s) {
  std::vector<std::int64_t> out;
  auto j = nlohmann::json::parse(s, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& e : j) {
    if (e.is_number_integer()) out.push_back(e.get<std::int64_t>());
  }
  return out;
}

std::string StringsToJson(const std::vector<std::string>& v) {
  return nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<std::string> StringsFromJson(const std::string& s) {
  std::vector<std::string> out;
  auto j = nlohmann::json::parse(s, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& e : j) {
    if (e.is_string()) out.push_back(e.get<std::string>());
  }
  return out;
}

Result<std::int64_t> QueryInt(sql::Db* db, std::string_view q, std::int64_t a, std::int64_t b,
                              int nbind) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(q));
  if (nbind >= 1) st->Bind(1, a);
  if (nbind >= 2) st->Bind(2, b);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::int64_t v = row && !st->IsNull(0) ? st->Int(0) : 0;
  st->Reset();
  return v;
}

}  // namespace engram::memory
