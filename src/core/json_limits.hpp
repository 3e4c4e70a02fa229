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

// Walks JSON text character by character without parsing, telling strings
// apart from structure (escapes included), so that scans of outside input
// (depth, value counts, where a limit was crossed) share one state machine.
class Scanner {
 public:
  enum class Char {
    kStructure,   // outside strings: brackets, braces, commas, colons, scalars, space
    kOpenQuote,   // the quote that starts a string
    kString,      // inside a string (escapes included)
    kCloseQuote,  // the quote that ends a string
  };
  Char Next(char c) {
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
        return Char::kCloseQuote;
      }
      return Char::kString;
    }
    if (c == '"') {
      in_string_ = true;
      return Char::kOpenQuote;
    }
    return Char::kStructure;
  }

 private:
  bool in_string_ = false;
  bool escaped_ = false;
};

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
