#include <cmath>
#include <set>
#include <sstream>

#include "core/time.hpp"
#include "mcp/tools.hpp"

namespace engram::mcp {

namespace {
std::string Compact(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

void Args::Only(std::initializer_list<const char*> keys) {
  std::set<std::string> allowed(keys.begin(), keys.end());
  for (const auto& [k, v] : a_.items()) {
    if (!allowed.count(k)) {
      std::string names;
      for (const auto& n : allowed) names += (names.empty() ? "" : ", ") + n;
      Fail("unknown argument '" + k + "'" + (names.empty() ? "; this tool takes no arguments" : "; expected: " + names));
    }
  }
}

std::string Args::Str(const char* key, bool required, bool non_empty) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) {
    if (required) Fail(std::string("missing required argument '") + key + "' (a string)");
    return "";
  }
  if (!it->is_string()) {
    Fail(std::string("argument '") + key + "' must be a string");
    return "";
  }
  std::string s = it->get<std::string>();
  if (non_empty && s.find_first_not_of(" \t\r\n") == std::string::npos) {
    Fail(std::string("argument '") + key + "' must not be empty");
  }
  return s;
}

std::optional<std::string> Args::OptStr(const char* key) {
  if (!a_.contains(key) || a_[key].is_null()) return std::nullopt;
  return Str(key, true);
}

std::optional<long long> Args::Int(const char* key, long long min, long long max) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) return std::nullopt;
  long long v = 0;
  if (it->is_number_integer()) {
    v = it->get<long long>();
  } else if (it->is_number_float() && std::floor(it->get<double>()) == it->get<double>() &&
             std::fabs(it->get<double>()) < 9e15) {
    v = static_cast<long long>(it->get<double>());
  } else {
    Fail(std::string("argument '") + key + "' must be an integer");
    return std::nullopt;
  }
  if (v < min || v > max) {
    Fail(std::string("argument '") + key + "' must be between " + std::to_string(min) + " and " + std::to_string(max));
    return std::nullopt;
  }
  return v;
}

std::optional<double> Args::Num(const char* key, double min, double max) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) {
    Fail(std::string("argument '") + key + "' must be a number");
    return std::nullopt;
  }
  double v = it->get<double>();
  if (!(v >= min && v <= max)) {
    Fail(std::string("argument '") + key + "' must be between " + Compact(min) + " and " + Compact(max));
    return std::nullopt;
  }
  return v;
}

std::string Args::Object(const char* key) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) return "";
  if (!it->is_object()) {
    Fail(std::string("argument '") + key + "' must be a JSON object, e.g. {\"topic\": \"travel\"}");
    return "";
  }
  return it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<TimeMs> Args::Time(const char* key) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) return std::nullopt;
  if (it->is_number_integer()) return it->get<TimeMs>();
  if (!it->is_string()) {
    Fail(std::string("argument '") + key + "' must be an ISO-8601 time such as \"2025-06-01T10:00:00Z\"");
    return std::nullopt;
  }
  auto t = ParseTime(it->get<std::string>());
  if (!t.ok()) {
    Fail(std::string("argument '") + key + "' is not a time; use ISO-8601 such as \"2025-06-01T10:00:00Z\"");
    return std::nullopt;
  }
  return *t;
}

ToolOutcome FromStatus(const Status& st, const std::string& hint) {
  std::string m = st.message();
  switch (st.code()) {
    case StatusCode::kInvalidArgument: m = "invalid argument: " + m; break;
    case StatusCode::kNotFound: m = "not found: " + m; break;
    case StatusCode::kUnavailable: m = "temporarily unavailable (retry later): " + m; break;
    default: m = st.ToString(); break;
  }
  if (!hint.empty()) m += ". " + hint;
  return ToolOutcome::Error(m);
}

}  // namespace engram::mcp
