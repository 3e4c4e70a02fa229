#include "models/llm/model_json.hpp"

#include "core/json_limits.hpp"

namespace engram::llmjson {

namespace {

using nlohmann::json;

// Replies nested deeper than json_limits::kMaxDepth are not JSON a caller can
// mean (and the parsed value would be a hazard to print).
bool TryParse(std::string_view text, json* out) {
  if (!json_limits::WithinDepth(text)) return false;
  auto j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) return false;
  *out = std::move(j);
  return true;
}

Status TypeError(const std::string& path, const char* what) {
  return Status::InvalidArgument(path + ": expected " + what);
}

}  // namespace

Result<json> Extract(std::string_view reply) {
  json out;
  if (TryParse(reply, &out)) return out;
  // A fenced block: ```json ... ``` or ``` ... ```.
  if (auto open = reply.find("```"); open != std::string_view::npos) {
    auto body_start = reply.find('\n', open);
    auto close = body_start == std::string_view::npos ? std::string_view::npos
                                                      : reply.find("```", body_start);
    if (close != std::string_view::npos &&
        TryParse(reply.substr(body_start + 1, close - body_start - 1), &out)) {
      return out;
    }
  }
  // The outermost object or array.
  for (auto [o, c] : {std::pair{'{', '}'}, std::pair{'[', ']'}}) {
    auto a = reply.find(o);
    auto b = reply.rfind(c);
    if (a != std::string_view::npos && b != std::string_view::npos && b > a &&
        TryParse(reply.substr(a, b - a + 1), &out)) {
      return out;
    }
  }
  return Status::InvalidArgument("reply: no JSON object found");
}

Result<const json*> ArrayField(const json& doc, const char* key) {
  if (doc.is_array()) return &doc;
  if (!doc.is_object()) return TypeError("reply", "a JSON object");
  auto it = doc.find(key);
  if (it == doc.end()) return Status::InvalidArgument(std::string(key) + ": missing");
  if (!it->is_array()) return TypeError(key, "an array");
  return &*it;
}

Result<std::string> String(const json& obj, const char* key, const std::string& path,
                           bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return Status::InvalidArgument(path + "." + key + ": missing");
    return std::string();
  }
  if (!it->is_string()) return TypeError(path + "." + key, "a string");
  return it->get<std::string>();
}

Result<bool> Bool(const json& obj, const char* key, const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::InvalidArgument(path + "." + key + ": missing");
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_string()) {
    const std::string s = it->get<std::string>();
    if (s == "true" || s == "yes") return true;
    if (s == "false" || s == "no") return false;
  }
  return TypeError(path + "." + key, "true or false");
}

Result<std::vector<std::string>> Strings(const json& obj, const char* key, const std::string& path) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return out;
  if (!it->is_array()) return TypeError(path + "." + key, "an array of strings");
  for (const auto& e : *it) {
    if (!e.is_string()) return TypeError(path + "." + key, "an array of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<std::vector<std::int64_t>> Ints(const json& obj, const char* key, const std::string& path) {
  std::vector<std::int64_t> out;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return out;
  if (!it->is_array()) return TypeError(path + "." + key, "an array of integers");
  for (const auto& e : *it) {
    if (e.is_number_integer()) {
      out.push_back(e.get<std::int64_t>());
    } else if (e.is_string()) {
      try {
        out.push_back(std::stoll(e.get<std::string>()));
      } catch (...) {
        return TypeError(path + "." + key, "an array of integers");
      }
    } else {
      return TypeError(path + "." + key, "an array of integers");
    }
  }
  return out;
}

}  // namespace engram::llmjson
