#include "core/json_keys.hpp"

#include "core/text.hpp"

namespace engram::json_limits {

bool DuplicateKeys::operator()(int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
  using E = nlohmann::json::parse_event_t;
  switch (event) {
    case E::object_start:
      open_.emplace_back();
      break;
    case E::object_end:
      if (!open_.empty()) open_.pop_back();
      break;
    case E::key:
      if (!open_.empty() && parsed.is_string() && !open_.back().insert(parsed.get_ref<const std::string&>()).second &&
          !found_) {
        found_ = true;
        first_ = parsed.get_ref<const std::string&>();
      }
      break;
    default:
      break;
  }
  return true;
}

std::string DuplicateKeys::Message() const {
  return "key \"" + text::Truncate(first_, 64) + "\" appears twice in one object";
}

}  // namespace engram::json_limits
