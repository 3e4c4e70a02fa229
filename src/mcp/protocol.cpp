#include "mcp/protocol.hpp"

#include <algorithm>

namespace engram::mcp {

const std::vector<std::string>& HandshakeVersions() {
  static const std::vector<std::string> v = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};
  return v;
}

const std::vector<std::string>& SupportedVersions() {
  static const std::vector<std::string> v = [] {
    auto all = HandshakeVersions();
    all.push_back(kStatelessVersion);
    return all;
  }();
  return v;
}

bool IsHandshakeVersion(std::string_view v) {
  const auto& h = HandshakeVersions();
  return std::find(h.begin(), h.end(), v) != h.end();
}

bool IsSupportedVersion(std::string_view v) { return IsHandshakeVersion(v) || v == kStatelessVersion; }

bool IsValidUtf8(std::string_view s) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len = 0;
    unsigned cp = 0;
    if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1Fu;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0Fu;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07u;
    else return false;
    if (i + static_cast<std::size_t>(len) > n) return false;
    for (int k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((cc & 0xC0u) != 0x80u) return false;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += static_cast<std::size_t>(len);
  }
  return true;
}

nlohmann::json ErrorResponse(const nlohmann::json& id, int code, const std::string& message,
                             const nlohmann::json& data) {
  nlohmann::json err = {{"code", code}, {"message", message}};
  if (!data.is_null()) err["data"] = data;
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}};
}

nlohmann::json ResultResponse(const nlohmann::json& id, nlohmann::json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

std::string Serialize(const nlohmann::json& message) {
  return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

LineReader::Kind LineReader::Next(std::string* line) {
  line->clear();
  std::streambuf* sb = in_.rdbuf();
  if (sb == nullptr) return Kind::kEof;
  bool oversized = false, any = false;
  for (;;) {
    const int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      if (!any) return Kind::kEof;
      break;  // a last line without a newline
    }
    any = true;
    if (c == '\n') break;
    if (oversized) continue;
    if (line->size() >= max_) {
      oversized = true;
      line->clear();
      line->shrink_to_fit();
      continue;
    }
    line->push_back(static_cast<char>(c));
  }
  if (oversized) return Kind::kOversized;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return Kind::kLine;
}

}  // namespace engram::mcp
