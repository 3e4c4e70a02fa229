// Limits on JSON from outside the process (HTTP bodies, MCP lines, import
// files, stored metadata). JSON nested deeper than a caller could mean is
// refused before it is parsed: the library that parses and prints it recurses
// when printing and destroying, so depth is a stack-exhaustion hazard.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace engram::json_limits {

// The deepest nesting of arrays and objects accepted anywhere ({"a":[1]} is 2).
inline constexpr int kMaxDepth = 128;

// The deepest nesting of `text`, scanning brackets outside strings in one
// pass without parsing (so it is safe on any input, valid JSON or not). Stops
// counting once `stop_above` is exceeded and returns that depth.
int NestingDepth(std::string_view text, int stop_above = kMaxDepth);

// True when `text` nests no deeper than `max_depth`.
inline bool WithinDepth(std::string_view text, int max_depth = kMaxDepth) {
  return NestingDepth(text, max_depth) <= max_depth;
}

// "JSON nested deeper than 128 levels" (the message every surface uses).
std::string TooDeepMessage(int max_depth = kMaxDepth);

}  // namespace engram::json_limits
