// JSON arrays of ids and of strings, as the store keeps keyword and evidence
// lists in one text column. Readers are lenient: anything that is not an
// array of the right type reads as empty (or skips the odd element).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace engram::json_lists {

std::string IdsToJson(const std::vector<std::int64_t>& ids);
std::vector<std::int64_t> IdsFromJson(const std::string& json);
// Invalid UTF-8 is replaced, never thrown on.
std::string StringsToJson(const std::vector<std::string>& v);
std::vector<std::string> StringsFromJson(const std::string& json);

}  // namespace engram::json_lists
