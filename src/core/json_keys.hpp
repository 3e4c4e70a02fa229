// Keys an object of outside JSON repeats. The JSON library keeps the last of
// two equal keys silently, so {"user": "a", "user": "b"} would be read one
// way by a proxy or a client library and another way here (another tenant, a
// different filter): such a document is refused instead.
#pragma once

#include <functional>  // (std::ref, to pass a DuplicateKeys to json::parse)
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

namespace engram::json_limits {

// A parse callback (json::parse(text, std::ref(keys))) that notes the first
// key an object repeats; keys are compared as parsed (escapes decoded, so
// "a" and "\u0061" are the same key). The parse itself goes on: the caller
// checks `found()` afterwards and refuses the document.
class DuplicateKeys {
 public:
  bool operator()(int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed);
  bool found() const { return found_; }
  // "key \"user\" appears twice in one object" (the key cut to 64 bytes).
  std::string Message() const;

 private:
  std::vector<std::unordered_set<std::string>> open_;  // the keys of each open object
  bool found_ = false;
  std::string first_;
};

}  // namespace engram::json_limits
