// MCP over HTTP: POST /mcp is the Streamable HTTP transport of the Model
// Context Protocol, stateless (no Mcp-Session-Id: every message stands alone,
// so any process of a deployment can answer it). The same server and tools
// as `engram mcp` (mcp/), for the memory of one user of the key's tenant:
// the user and assistant come from X-Engram-User / X-Engram-Assistant or
// from ?user= / ?assistant= on the URL, for clients that cannot send
// headers. A key that may only read gets the reading tools alone; the tools
// that write are held to the tenant's quotas like any other write.
//
// A request is answered with one JSON message (application/json), a
// notification or a client's response with 202 and no body; GET and DELETE
// are 405 (the server sends nothing unasked and keeps no session).
#include <ostream>
#include <streambuf>
#include <string>

#include "mcp/protocol.hpp"
#include "mcp/server.hpp"
#include "mcp/tools.hpp"
#include "server/api.hpp"

namespace engram::server {

using nlohmann::json;

namespace {

// Where the MCP server's log goes: nowhere (the access log records each
// request).
class Discard final : public std::streambuf {
  int overflow(int c) override { return c; }
};

// A refusal before any message is handled: HTTP status and a JSON-RPC error
// without an id.
HttpResponse RpcRefusal(int status, int code, const std::string& message) {
  HttpResponse r;
  r.status = status;
  r.body = mcp::Serialize(mcp::ErrorResponse(nullptr, code, message));
  return r;
}

std::string Text(const json& args, const char* key) {
  auto it = args.find(key);
  return it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

void Api::RegisterMcp(HttpServer& s) {
  Add(s, "POST", "/mcp", Role::kRead, false, [this](Call& c) -> HttpResponse {
    // The revision a client names after initialize must be one spoken here.
    const std::string version = c.req.Header("mcp-protocol-version");
    if (!version.empty() && !mcp::IsSupportedVersion(version)) {
      std::string supported;
      for (const auto& v : mcp::SupportedVersions()) supported += (supported.empty() ? "" : ", ") + v;
      return RpcRefusal(400, mcp::kInvalidRequest,
                        "MCP-Protocol-Version: " + version + " is not supported (supported: " + supported + ")");
    }
    for (const auto& [k, v] : c.body.items()) {
      if (k != "user" && k != "assistant") {
        return RpcRefusal(400, mcp::kInvalidRequest,
                          "parameter '" + k + "': /mcp takes only user and assistant on its URL");
      }
    }
    std::string user = c.req.Header("x-engram-user");
    if (user.empty()) user = Text(c.body, "user");
    std::string assistant = c.req.Header("x-engram-assistant");
    if (assistant.empty()) assistant = Text(c.body, "assistant");
    if (assistant.empty()) assistant = "assistant";
    if (user.empty()) {
      return RpcRefusal(400, mcp::kInvalidRequest,
                        "user: name whose memory this is, with an X-Engram-User header or ?user= on the MCP URL");
    }
    const Scope scope{c.who.tenant, user, assistant};
    if (Status st = Engine::ValidateScope(scope); !st.ok()) {
      return RpcRefusal(400, mcp::kInvalidRequest, st.message());
    }
    if (!c.who.AllowsUser(user)) {
      return RpcRefusal(403, mcp::kInvalidRequest, "this API key may not access user '" + user + "'");
    }

    const bool writes = c.who.Can(Role::kWrite);
    mcp::Tools tools(engine(), scope, writes ? "" : "this API key may only read (role read)");
    mcp::ServerInfo info;
    info.version = Version();
    info.instructions = mcp::Instructions(user, !writes);
    Discard discard;
    std::ostream log(&discard);
    mcp::Server server(tools, info, log);
    // A tool that stores something claims its share of the tenant's quotas
    // first; over a quota, the model reads why.
    server.WrapTools([this, &c](const std::string& name, const json& args, const std::function<json()>& call) {
      QuotaAsk ask;
      if (name == "add_memory") {
        ask = {1, 0, static_cast<std::int64_t>(Text(args, "user_input").size() + Text(args, "agent_response").size())};
      } else if (name == "add_fact") {
        ask = {0, 1, static_cast<std::int64_t>(Text(args, "text").size())};
      } else if (name == "update_memory") {
        ask = {0, 0, static_cast<std::int64_t>(Text(args, "text").size())};
      } else {
        return call();
      }
      QuotaHold hold;
      try {
        hold = CheckQuota(c, ask, false);
      } catch (const ApiError& e) {
        return mcp::ToolErrorResult(e.message);
      }
      json result = call();
      if (!result.value("isError", false)) hold.Charge();
      return result;
    });

    std::optional<json> answer = server.Handle(c.req.body);
    if (!answer) {  // a notification or a client's response
      HttpResponse r;
      r.status = 202;
      r.content_type = "text/plain; charset=utf-8";
      return r;
    }
    HttpResponse r;
    // A message that could not be read at all (no id to answer) is a bad request.
    const bool unread = answer->contains("error") && (*answer)["id"].is_null();
    r.status = unread ? 400 : 200;
    r.body = mcp::Serialize(*answer);
    return r;
  }, mcp::kMaxLineBytes);
}

}  // namespace engram::server
