// The MCP server: JSON-RPC 2.0 messages, one at a time (Handle), over
// newline-delimited stdio for `engram mcp` (Serve) or over HTTP for
// `engram serve` (server/api_mcp.cpp).
// Speaks the initialize lifecycle (2024-11-05 .. 2025-11-25) and the stateless
// 2026-07-28 revision (server/discover, protocol version in each request's
// params._meta). Advertises tools only (listChanged: false). Nothing but
// protocol messages is written to `out`; notifications are never answered.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "mcp/tools.hpp"

namespace engram::mcp {

struct ServerInfo {
  std::string name = "engram";
  std::string version;
  std::string instructions;
};

// The instructions a client's model gets for the memory of `user`; without
// the writing tools when `read_only`.
std::string Instructions(const std::string& user, bool read_only);

class Server {
 public:
  // `tools` and `log` must outlive the server.
  Server(Tools& tools, ServerInfo info, std::ostream& log) : tools_(tools), info_(std::move(info)), log_(log) {}

  // Runs around every tools/call whose name and arguments were checked:
  // given the tool, its arguments and the call, it returns the
  // CallToolResult (the call's, or its own, e.g. ToolErrorResult). The HTTP
  // transport checks a tenant's quotas this way.
  using ToolWrapper = std::function<nlohmann::json(const std::string& name, const nlohmann::json& arguments,
                                                   const std::function<nlohmann::json()>& call)>;
  void WrapTools(ToolWrapper wrapper) { wrapper_ = std::move(wrapper); }

  // The response to one message line, or nullopt when none is due (a
  // notification, a client's response, a blank line). Never throws. A line
  // nested deeper than json_limits::kMaxDepth is refused unparsed (-32600,
  // data {"limit": 128}, id null).
  std::optional<nlohmann::json> Handle(std::string_view line);
  // Reads messages until EOF, writing one response line per request.
  // Returns 0 at EOF, 1 when the output fails.
  int Serve(std::istream& in, std::ostream& out);

  bool initialized() const { return initialized_; }

 private:
  nlohmann::json Request(const nlohmann::json& id, const std::string& method, const nlohmann::json& params);
  nlohmann::json Initialize(const nlohmann::json& params);
  nlohmann::json Capabilities() const;

  Tools& tools_;
  ToolWrapper wrapper_;
  ServerInfo info_;
  std::ostream& log_;
  bool initialized_ = false;
  std::string negotiated_;
};

}  // namespace engram::mcp
