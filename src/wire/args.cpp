#include "wire/args.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "core/time.hpp"
#include "retrieval/ranking.hpp"

namespace engram::wire {

std::string CompactNumber(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

void Args::Fail(const std::string& key, const std::string& message) {
  if (!error_.empty()) return;
  error_ = message;
  field_ = key;
}

void Args::Ranking(const char* key, RankingOptions* out) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) return;
  if (!it->is_object()) {
    Fail(key, Name(key) + " must be a JSON object of ranking options");
    return;
  }
  const auto& fields = retrieval::RankingFields();
  for (const auto& entry : it->items()) {
    const std::string& name = entry.key();
    const auto& value = entry.value();
    const std::string path = std::string(key) + "." + name;
    auto f = std::find_if(fields.begin(), fields.end(), [&](const retrieval::RankingField& x) { return name == x.name; });
    if (f == fields.end()) {
      std::string known;
      for (const auto& x : fields) known += std::string(known.empty() ? "" : ", ") + x.name;
      Fail(path, noun_ + " '" + path + "' is not a ranking option (known: " + known + ")");
      return;
    }
    if (!value.is_number()) {
      Fail(path, noun_ + " '" + path + "' must be a number");
      return;
    }
    const double v = value.get<double>();
    if (std::string why = retrieval::RankingValueError(*f, v); !why.empty()) {
      Fail(path, noun_ + " '" + path + "' " + why);
      return;
    }
    out->*(f->member) = v;
  }
}

void Args::Only(std::initializer_list<const char*> keys) {
  if (!a_.is_object()) {
    Fail("", "expected a JSON object of " + noun_ + "s");
    return;
  }
  std::set<std::string> allowed(keys.begin(), keys.end());
  for (const auto& [k, v] : a_.items()) {
    if (allowed.count(k)) continue;
    std::string names;
    for (const auto& n : allowed) names += (names.empty() ? "" : ", ") + n;
    // MCP's wording ("this tool takes no arguments") is part of its golden output.
    std::string none = noun_ == "argument" ? "; this tool takes no arguments" : "; no " + noun_ + "s are accepted";
    Fail(k, "unknown " + Name(k.c_str()) + (names.empty() ? none : "; expected: " + names));
  }
}

std::string Args::Str(const char* key, bool required, bool non_empty) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) {
    if (required) Fail(key, "missing required " + Name(key) + " (a string)");
    return "";
  }
  if (!it->is_string()) {
    Fail(key, Name(key) + " must be a string");
    return "";
  }
  std::string s = it->get<std::string>();
  if (non_empty && s.find_first_not_of(" \t\r\n") == std::string::npos) Fail(key, Name(key) + " must not be empty");
  return s;
}

std::optional<std::string> Args::OptStr(const char* key) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) return std::nullopt;
  return Str(key, true);
}

std::optional<long long> Args::Int(const char* key, long long min, long long max) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) return std::nullopt;
  long long v = 0;
  if (it->is_number_integer()) {
    v = it->get<long long>();
  } else if (it->is_number_float() && std::floor(it->get<double>()) == it->get<double>() &&
             std::fabs(it->get<double>()) < 9e15) {  // 3.0 from a JSON encoder is an integer
    v = static_cast<long long>(it->get<double>());
  } else {
    Fail(key, Name(key) + " must be an integer");
    return std::nullopt;
  }
  if (v < min || v > max) {
    Fail(key, Name(key) + " must be between " + std::to_string(min) + " and " + std::to_string(max));
    return std::nullopt;
  }
  return v;
}

std::optional<double> Args::Num(const char* key, double min, double max) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) {
    Fail(key, Name(key) + " must be a number");
    return std::nullopt;
  }
  double v = it->get<double>();
  if (!(v >= min && v <= max)) {
    Fail(key, Name(key) + " must be between " + CompactNumber(min) + " and " + CompactNumber(max));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> Args::Bool(const char* key) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) {
    Fail(key, Name(key) + " must be true or false");
    return std::nullopt;
  }
  return it->get<bool>();
}

std::string Args::Object(const char* key) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) return "";
  if (!it->is_object()) {
    Fail(key, Name(key) + " must be a JSON object, e.g. {\"topic\": \"travel\"}");
    return "";
  }
  return it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<TimeMs> Args::Time(const char* key) {
  auto it = a_.find(key);
  if (it == a_.end() || it->is_null()) return std::nullopt;
  if (it->is_number_integer()) {
    // (A number beyond int64 arrives unsigned and would wrap.)
    if (it->is_number_unsigned() ? it->get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxTimeMs)
                                 : !InTimeRange(it->get<TimeMs>())) {
      Fail(key, Name(key) + " is out of range (milliseconds of the years 1000..9999)");
      return std::nullopt;
    }
    return it->get<TimeMs>();
  }
  if (!it->is_string()) {
    Fail(key, Name(key) + " must be an ISO-8601 time such as \"2025-06-01T10:00:00Z\"");
    return std::nullopt;
  }
  auto t = ParseTime(it->get<std::string>());
  if (!t.ok()) {
    Fail(key, Name(key) + " is not a time; use ISO-8601 such as \"2025-06-01T10:00:00Z\"");
    return std::nullopt;
  }
  return *t;
}

}  // namespace engram::wire
