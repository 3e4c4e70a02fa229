#include "mcp/server.hpp"

#include <exception>
#include <istream>
#include <ostream>

#include "core/json_keys.hpp"
#include "core/json_limits.hpp"
#include "mcp/protocol.hpp"

namespace engram::mcp {

namespace {

using nlohmann::json;

// A protocol error raised inside request handling (becomes an error response).
struct RpcError {
  int code;
  std::string message;
  json data = nullptr;
};

bool ValidId(const json& id) { return id.is_string() || id.is_number_integer() || id.is_number_unsigned(); }

}  // namespace

std::string Instructions(const std::string& user, bool read_only) {
  if (read_only) {
    return "Long-term memory of the conversation with user '" + user +
           "' (read only). Call retrieve_memory with the user's message before answering; use "
           "search_memories/list_memories to find memories and get_user_profile for what is known of the user.";
  }
  return "Long-term memory of the conversation with user '" + user +
         "'. Call retrieve_memory with the user's message before answering and add_memory with the exchange "
         "after answering. Use add_fact for explicit facts or preferences, search_memories/list_memories to "
         "find memories, update_memory/delete_memory to correct them.";
}

json Server::Capabilities() const { return {{"tools", {{"listChanged", false}}}}; }

json Server::Initialize(const json& params) {
  if (!params.contains("protocolVersion") || !params["protocolVersion"].is_string()) {
    throw RpcError{kInvalidParams, "Invalid params: initialize needs a string 'protocolVersion'"};
  }
  const std::string requested = params["protocolVersion"].get<std::string>();
  negotiated_ = IsHandshakeVersion(requested) ? requested : HandshakeVersions().back();
  json result = {{"protocolVersion", negotiated_},
                 {"capabilities", Capabilities()},
                 {"serverInfo", {{"name", info_.name}, {"version", info_.version}}}};
  if (!info_.instructions.empty()) result["instructions"] = info_.instructions;
  std::string client = "unknown client";
  if (params.contains("clientInfo") && params["clientInfo"].is_object()) {
    client = params["clientInfo"].value("name", client);
  }
  log_ << "engram mcp: initialize from " << client << " (protocol " << requested << " -> " << negotiated_ << ")\n";
  return result;
}

json Server::Request(const json& id, const std::string& method, const json& params) {
  // The stateless revision: the protocol version travels in each request.
  bool stateless = false;
  if (params.contains("_meta") && params["_meta"].is_object() && params["_meta"].contains(kMetaProtocolVersion)) {
    const json& v = params["_meta"][kMetaProtocolVersion];
    if (!v.is_string() || !IsSupportedVersion(v.get<std::string>())) {
      throw RpcError{kInvalidParams, "Unsupported protocol version",
                     {{"supported", SupportedVersions()}, {"requested", v}}};
    }
    stateless = v.get<std::string>() == kStatelessVersion;
  }
  json result;
  if (method == "initialize") {
    result = Initialize(params);
  } else if (method == "ping") {
    result = json::object();
  } else if (method == "server/discover") {
    result = {{"supportedVersions", SupportedVersions()},
              {"capabilities", Capabilities()},
              {"serverInfo", {{"name", info_.name}, {"version", info_.version}}}};
    if (!info_.instructions.empty()) result["instructions"] = info_.instructions;
  } else if (method == "tools/list") {
    result = {{"tools", tools_.Definitions()}};
  } else if (method == "tools/call") {
    if (!params.contains("name") || !params["name"].is_string()) {
      throw RpcError{kInvalidParams, "Invalid params: tools/call needs a string 'name'"};
    }
    const std::string name = params["name"].get<std::string>();
    if (!tools_.Has(name)) throw RpcError{kInvalidParams, "Unknown tool: " + name, {{"name", name}}};
    json args = params.contains("arguments") ? params["arguments"] : json::object();
    if (args.is_null()) args = json::object();
    if (!args.is_object()) throw RpcError{kInvalidParams, "Invalid params: 'arguments' must be an object"};
    result = wrapper_ ? wrapper_(name, args, [&] { return tools_.Call(name, args); }) : tools_.Call(name, args);
  } else {
    throw RpcError{kMethodNotFound, "Method not found: " + method};
  }
  if (stateless) result["resultType"] = "complete";
  (void)id;
  return result;
}

std::optional<json> Server::Handle(std::string_view line) {
  try {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;
    if (!IsValidUtf8(line)) return ErrorResponse(nullptr, kParseError, "Parse error: the message is not valid UTF-8");
    // Refused before parsing: copying or printing such a document would
    // exhaust the stack. The id is not read, so the response's id is null.
    if (!json_limits::WithinDepth(line)) {
      log_ << "engram mcp: refused a message with " << json_limits::TooDeepMessage() << "\n";
      return ErrorResponse(nullptr, kInvalidRequest, "Invalid Request: " + json_limits::TooDeepMessage(),
                           {{"limit", json_limits::kMaxDepth}});
    }
    json_limits::DuplicateKeys keys;
    json msg = json::parse(line.begin(), line.end(), std::ref(keys), /*allow_exceptions=*/false);
    if (msg.is_discarded()) return ErrorResponse(nullptr, kParseError, "Parse error: the message is not valid JSON");
    if (keys.found()) return ErrorResponse(nullptr, kInvalidRequest, "Invalid Request: " + keys.Message());
    if (msg.is_array()) return ErrorResponse(nullptr, kInvalidRequest, "Invalid Request: batches are not supported");
    if (!msg.is_object()) return ErrorResponse(nullptr, kInvalidRequest, "Invalid Request: expected a JSON object");
    const bool has_id = msg.contains("id");
    if (!msg.contains("method")) {
      if (has_id && (msg.contains("result") || msg.contains("error"))) return std::nullopt;  // a client's response
      return ErrorResponse(has_id && ValidId(msg["id"]) ? msg["id"] : json(nullptr), kInvalidRequest,
                           "Invalid Request: missing 'method'");
    }
    if (!has_id) {  // a notification: never answered
      if (msg["method"] == "notifications/initialized") initialized_ = true;
      return std::nullopt;
    }
    const json& id = msg["id"];
    if (!ValidId(id)) {
      return ErrorResponse(nullptr, kInvalidRequest, "Invalid Request: 'id' must be a string or an integer");
    }
    if (!msg.contains("jsonrpc") || msg["jsonrpc"] != "2.0") {
      return ErrorResponse(id, kInvalidRequest, "Invalid Request: 'jsonrpc' must be \"2.0\"");
    }
    if (!msg["method"].is_string()) return ErrorResponse(id, kInvalidRequest, "Invalid Request: 'method' must be a string");
    json params = msg.contains("params") ? msg["params"] : json::object();
    if (params.is_null()) params = json::object();
    if (!params.is_object()) return ErrorResponse(id, kInvalidParams, "Invalid params: 'params' must be an object");
    try {
      return ResultResponse(id, Request(id, msg["method"].get<std::string>(), params));
    } catch (const RpcError& e) {
      return ErrorResponse(id, e.code, e.message, e.data);
    } catch (const std::exception& e) {
      log_ << "engram mcp: internal error: " << e.what() << "\n";
      return ErrorResponse(id, kInternalError, std::string("Internal error: ") + e.what());
    } catch (...) {
      return ErrorResponse(id, kInternalError, "Internal error");
    }
  } catch (const std::exception& e) {
    log_ << "engram mcp: internal error: " << e.what() << "\n";
    return ErrorResponse(nullptr, kInternalError, std::string("Internal error: ") + e.what());
  } catch (...) {
    return ErrorResponse(nullptr, kInternalError, "Internal error");
  }
}

int Server::Serve(std::istream& in, std::ostream& out) {
  LineReader reader(in);
  std::string line;
  for (;;) {
    const auto kind = reader.Next(&line);
    if (kind == LineReader::Kind::kEof) return 0;
    std::optional<json> response;
    if (kind == LineReader::Kind::kOversized) {
      log_ << "engram mcp: dropped a message longer than " << kMaxLineBytes << " bytes\n";
      response = ErrorResponse(nullptr, kInvalidRequest,
                               "Invalid Request: message longer than " + std::to_string(kMaxLineBytes) + " bytes",
                               {{"limit", kMaxLineBytes}});
    } else {
      response = Handle(line);
    }
    if (!response) continue;
    out << Serialize(*response) << '\n';
    out.flush();
    if (!out) return 1;
  }
}

}  // namespace engram::mcp
