#include "core/json_limits.hpp"

namespace engram::json_limits {

int NestingDepth(std::string_view text, int stop_above) {
  Scanner scan;
  int depth = 0;
  int deepest = 0;
  for (const char c : text) {
    if (scan.Next(c) != Scanner::Char::kStructure) continue;
    if (c == '[' || c == '{') {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > stop_above) return deepest;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::string TooDeepMessage(int max_depth) {
  return "JSON nested deeper than " + std::to_string(max_depth) + " levels";
}

}  // namespace engram::json_limits
