// MCP over stdio: JSON-RPC 2.0 framing helpers (newline-delimited messages),
// protocol versions and error codes.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace engram::mcp {

// JSON-RPC 2.0 error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// The stateless revision (no initialize; every request carries its version in
// params._meta["io.modelcontextprotocol/protocolVersion"]).
inline constexpr const char* kStatelessVersion = "2026-07-28";
inline constexpr const char* kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
// Versions negotiated by `initialize`, oldest first (the last is the newest).
const std::vector<std::string>& HandshakeVersions();
// Every version the server speaks (handshake versions and the stateless one).
const std::vector<std::string>& SupportedVersions();
bool IsHandshakeVersion(std::string_view v);
bool IsSupportedVersion(std::string_view v);

// Longest accepted message line in bytes (without the newline).
inline constexpr std::size_t kMaxLineBytes = 4u << 20;

// True when `s` is well-formed UTF-8 (no overlongs, surrogates or code points
// above U+10FFFF).
bool IsValidUtf8(std::string_view s);

// An error response; `id` is null when the request's id is unknown.
nlohmann::json ErrorResponse(const nlohmann::json& id, int code, const std::string& message,
                             const nlohmann::json& data = nullptr);
nlohmann::json ResultResponse(const nlohmann::json& id, nlohmann::json result);

// One line of output: compact JSON, invalid UTF-8 replaced, no newline.
std::string Serialize(const nlohmann::json& message);

// Reads newline-delimited messages from a stream without ever holding more
// than kMaxLineBytes (+ one read buffer) of one line in memory.
class LineReader {
 public:
  explicit LineReader(std::istream& in, std::size_t max_bytes = kMaxLineBytes) : in_(in), max_(max_bytes) {}
  enum class Kind { kLine, kOversized, kEof };
  // The next line (a trailing "\r" removed); kOversized when the line was
  // longer than the limit (its bytes are discarded up to the newline).
  Kind Next(std::string* line);

 private:
  std::istream& in_;
  std::size_t max_;
};

}  // namespace engram::mcp
