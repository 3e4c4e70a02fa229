#include "core/name_senses.hpp"

#include <algorithm>
#include <fstream>
#include <unordered_set>

namespace engram::names {
namespace {

bool NameChars(const std::string& s) {
  if (s.empty() || s.size() > 40) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

bool KindChars(const std::string& s) {
  if (s.empty() || s.size() > 80) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '\'' || c == '.')) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<std::vector<NameSense>> ReadNameSenses(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("names: cannot read " + path);
  std::vector<NameSense> out;
  std::unordered_set<std::string> seen;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    for (std::size_t at = 0;;) {
      const std::size_t tab = line.find('\t', at);
      f.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
      if (tab == std::string::npos) break;
      at = tab + 1;
    }
    const std::string where = path + ":" + std::to_string(n) + ": ";
    if (f.size() != 4) {
      return Status::InvalidArgument(where + "expected 4 tab-separated fields (name, kind, first|second, gloss), found " +
                                     std::to_string(f.size()));
    }
    NameSense s;
    s.name = f[0];
    s.gloss = f[3];
    s.file = path;
    s.line = n;
    if (!NameChars(s.name)) return Status::InvalidArgument(where + "name must be 1-40 lower-case letters or digits");
    for (std::size_t at = 0;;) {
      const std::size_t comma = f[1].find(',', at);
      std::string kind = f[1].substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      if (!KindChars(kind)) {
        return Status::InvalidArgument(where + "kind must be one to three WordNet noun lemmas (lower case, '_' for spaces, ',' between)");
      }
      if (std::find(s.kinds.begin(), s.kinds.end(), kind) != s.kinds.end()) {
        return Status::InvalidArgument(where + "kind \"" + kind + "\" is listed twice");
      }
      s.kinds.push_back(std::move(kind));
      if (s.kinds.size() > 3) return Status::InvalidArgument(where + "kind holds more than three lemmas");
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    if (f[2] == "first") s.first = true;
    else if (f[2] == "second") s.first = false;
    else if (f[2] == "also") s.also = true;
    else if (f[2] == "prefer") s.prefer = true;
    else if (f[2] == "same")
      s.same = true;
    else
      return Status::InvalidArgument(
          where + "order must be \"first\", \"second\", \"also\", \"prefer\" or \"same\"");
    if (s.prefer && s.kinds.size() != 1) return Status::InvalidArgument(where + "a preference names one kind");
    if (s.same && s.kinds.size() != 1)
      return Status::InvalidArgument(where + "a synonym names one kind");
    if (s.gloss.empty() || s.gloss.size() > 400) return Status::InvalidArgument(where + "gloss must be 1-400 characters");
    // (A word may have one entry of each order: preferred, then given kinds.)
    if (!seen.insert(s.name + (s.prefer ? "\t<" : s.also ? "\t+" : "")).second) {
      return Status::InvalidArgument(where + "name \"" + s.name + "\" is listed twice");
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string Where(const NameSense& n) {
  return (n.file.empty() ? "" : n.file + ": ") + "line " + std::to_string(n.line) + ": ";
}

}  // namespace engram::names
