#include "core/json_lists.hpp"

#include <nlohmann/json.hpp>

namespace engram::json_lists {

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

}  // namespace engram::json_lists
