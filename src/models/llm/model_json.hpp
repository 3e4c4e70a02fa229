// Reading JSON out of model replies: fence- and prose-tolerant extraction,
// and small typed accessors whose errors name the path ("pages[2].keywords:
// expected an array of strings") but never quote the reply.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engram/result.hpp"

namespace engram::llmjson {

// The JSON value in a reply: the whole text, or the content of a ``` fence,
// or the outermost {...} / [...] span. InvalidArgument when none parses.
Result<nlohmann::json> Extract(std::string_view reply);

// The array under `key` of an object; a bare array is accepted as that array
// (models sometimes drop the wrapper object).
Result<const nlohmann::json*> ArrayField(const nlohmann::json& doc, const char* key);

Result<std::string> String(const nlohmann::json& obj, const char* key, const std::string& path,
                           bool required);
Result<bool> Bool(const nlohmann::json& obj, const char* key, const std::string& path);
Result<std::vector<std::string>> Strings(const nlohmann::json& obj, const char* key,
                                         const std::string& path);
Result<std::vector<std::int64_t>> Ints(const nlohmann::json& obj, const char* key,
                                       const std::string& path);

}  // namespace engram::llmjson
