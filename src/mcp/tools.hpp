// The MCP tools of `engram mcp`: their definitions (input and output JSON
// Schemas, annotations) and their handlers over the engine, for one scope.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engram/engine.hpp"

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

class Tools {
 public:
  // `engine` must outlive the tools. Turn tools use `scope`; fact tools use
  // the memory scope {tenant, user, agent = assistant}, where consolidation
  // writes the user and assistant facts.
  Tools(Engine& engine, Scope scope);

  bool Has(const std::string& name) const { return handlers_.count(name) > 0; }
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
  std::map<std::string, Handler> handlers_;
};

// Reads and checks tool arguments; the first problem is kept in error() as a
// sentence naming the argument and what is expected.
class Args {
 public:
  explicit Args(const nlohmann::json& a) : a_(a) {}
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // Arguments not in the list are an error.
  void Only(std::initializer_list<const char*> keys);
  std::string Str(const char* key, bool required, bool non_empty = true);
  std::optional<std::string> OptStr(const char* key);
  std::optional<long long> Int(const char* key, long long min, long long max);
  std::optional<double> Num(const char* key, double min, double max);
  // A JSON object argument, as text ("" when absent).
  std::string Object(const char* key);
  // A time: ISO-8601 text or epoch milliseconds.
  std::optional<TimeMs> Time(const char* key);

 private:
  void Fail(const std::string& m) {
    if (error_.empty()) error_ = m;
  }
  const nlohmann::json& a_;
  std::string error_;
};

// A failed engine call as a tool error with a hint for the model.
ToolOutcome FromStatus(const Status& st, const std::string& hint = "");

}  // namespace engram::mcp
