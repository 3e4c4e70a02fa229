// The MCP tools of `engram mcp`: their definitions (input and output JSON
// Schemas, annotations) and their handlers over the engine, for one scope.
#pragma once

#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "engram/engine.hpp"
#include "wire/args.hpp"

namespace engram::mcp {

// What a handler produces: structured content, or a tool-level error (a
// message the model can act on; the call result gets isError: true).
struct ToolOutcome {
  nlohmann::json structured = nlohmann::json::object();
  bool is_error = false;
  std::string error;

  static ToolOutcome Ok(nlohmann::json j) { return {std::move(j), false, ""}; }
  static ToolOutcome Error(std::string message) { return {nlohmann::json::object(), true, std::move(message)}; }
};

// The tool list (name, title, description, inputSchema, outputSchema,
// annotations), in a stable order.
const nlohmann::json& ToolDefinitions();
// True when the tool changes memory (its readOnlyHint is false).
bool ToolWrites(const std::string& name);

// A CallToolResult that reports a tool-level error (isError: true).
nlohmann::json ToolErrorResult(const std::string& message);

class Tools {
 public:
  // `engine` must outlive the tools. Turn tools use `scope`; fact tools use
  // the memory scope {tenant, user, agent = assistant}, where consolidation
  // writes the user and assistant facts. With a `read_only` reason, the
  // tools that write are not listed, and calling one is a tool error that
  // gives the reason.
  Tools(Engine& engine, Scope scope, std::string read_only = "");

  bool Has(const std::string& name) const { return handlers_.count(name) > 0; }
  // The definitions of the tools this client may call (ToolDefinitions(),
  // without the writing ones when read-only).
  nlohmann::json Definitions() const;
  // A CallToolResult: content [{type: text, text}] plus structuredContent, or
  // isError: true with the message. REQUIRES: Has(name). May throw (the
  // server turns exceptions into internal errors).
  nlohmann::json Call(const std::string& name, const nlohmann::json& arguments);

 private:
  using Handler = std::function<ToolOutcome(const nlohmann::json&)>;
  ToolOutcome AddMemory(const nlohmann::json& a);
  ToolOutcome RetrieveMemory(const nlohmann::json& a);
  ToolOutcome GetUserProfile(const nlohmann::json& a);
  ToolOutcome MemoryHealth(const nlohmann::json& a);
  ToolOutcome SearchMemories(const nlohmann::json& a);
  ToolOutcome AddFact(const nlohmann::json& a);
  ToolOutcome ListMemories(const nlohmann::json& a);
  ToolOutcome UpdateMemory(const nlohmann::json& a);
  ToolOutcome DeleteMemory(const nlohmann::json& a);
  MemoryScope FactScope() const;

  Engine& engine_;
  Scope scope_;
  std::string read_only_;
  std::map<std::string, Handler> handlers_;
};

// Tool arguments are read with the shared checker (messages name the "argument").
using wire::Args;

// A failed engine call as a tool error with a hint for the model.
ToolOutcome FromStatus(const Status& st, const std::string& hint = "");

}  // namespace engram::mcp
