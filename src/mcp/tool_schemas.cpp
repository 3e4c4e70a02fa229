// Definitions of the tools: JSON Schemas (draft 2020-12 subset every client
// understands), annotations and descriptions written for a model.
#include "mcp/tools.hpp"

namespace engram::mcp {

namespace {

using nlohmann::json;

json Str(const char* description) { return {{"type", "string"}, {"description", description}}; }
json Int(const char* description, int min, int max) {
  return {{"type", "integer"}, {"minimum", min}, {"maximum", max}, {"description", description}};
}
json Obj(json properties, json required = json::array(), bool closed = true) {
  json j = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) j["required"] = std::move(required);
  if (closed) j["additionalProperties"] = false;
  return j;
}
json Annotations(bool read_only, bool destructive, bool idempotent) {
  return {{"readOnlyHint", read_only}, {"destructiveHint", destructive}, {"idempotentHint", idempotent},
          {"openWorldHint", false}};
}
json Tool(const char* name, const char* title, const char* description, json input, json output, json annotations) {
  annotations["title"] = title;
  return {{"name", name},       {"title", title},          {"description", description}, {"inputSchema", input},
          {"outputSchema", output}, {"annotations", annotations}};
}

// The structured form of one memory (fact) as the fact tools return it.
json MemorySchema() {
  return Obj({{"id", Str("Stable memory id (m_ + 16 hex digits)")},
              {"memory", Str("The text")},
              {"kind", Str("user, assistant (consolidated facts), memory or procedural")},
              {"version", {{"type", "integer"}}},
              {"metadata", {{"type", "object"}}},
              {"created_at", Str("ISO-8601 UTC")},
              {"updated_at", Str("ISO-8601 UTC")},
              {"event_time", Str("ISO-8601 UTC")},
              {"score", {{"type", "number"}, {"description", "Search relevance in [0, 1]"}}},
              {"expired", {{"type", "boolean"}}},
              {"degraded", {{"type", "boolean"}}}},
             {"id", "memory", "kind", "version"}, false);
}
json ItemSchema() {
  return Obj({{"kind", Str("stm_turn, page, user_fact, assistant_fact or profile")},
              {"id", {{"type", "integer"}}},
              {"version", {{"type", "integer"}}},
              {"score", {{"type", "number"}}},
              {"text", Str("Rendered text")},
              {"tokens", {{"type", "integer"}}},
              {"event_time", Str("ISO-8601 UTC")},
              {"source_ref", Str("Caller reference of the source")}},
             {"kind", "id", "text"}, false);
}
json ArrayOf(json items) { return {{"type", "array"}, {"items", std::move(items)}}; }

json Build() {
  json tools = json::array();
  tools.push_back(Tool(
      "add_memory", "Add a conversation turn",
      "Store one exchange of the conversation (what the user said and what the assistant answered) in "
      "long-term memory. Call it after every turn worth remembering.",
      Obj({{"user_input", Str("What the user said")},
           {"agent_response", Str("What the assistant answered")},
           {"timestamp", Str("When it was said, ISO-8601 (default: now)")},
           {"meta_data", {{"type", "object"}, {"description", "Optional metadata stored with the turn"}}}},
          {"user_input", "agent_response"}),
      Obj({{"turn_id", {{"type", "integer"}}}, {"seq", {{"type", "integer"}}},
           {"promotion_pending", {{"type", "boolean"}}}},
          {"turn_id", "seq", "promotion_pending"}, false),
      Annotations(false, false, false)));
  tools.push_back(Tool(
      "retrieve_memory", "Retrieve memory context",
      "Read-only. Assemble the memory context for a query within a token budget: recent turns, relevant "
      "past conversation pages, the user profile and facts about the user and the assistant. Use the "
      "'context' text in your prompt.",
      Obj({{"query", Str("What to remember, e.g. the user's latest message")},
           {"max_results", Int("Pages and facts (per kind) at most (default 10)", 1, 100)},
           {"budget", Int("Context budget in tokens (default 2000)", 50, 100000)}},
          {"query"}),
      Obj({{"query", Str("The query")},
           {"context", Str("The assembled context, ready for a prompt")},
           {"context_tokens", {{"type", "integer"}}},
           {"truncated", {{"type", "boolean"}}},
           {"recent_turns", ArrayOf(ItemSchema())},
           {"pages", ArrayOf(ItemSchema())},
           {"profile", ArrayOf(ItemSchema())},
           {"user_facts", ArrayOf(ItemSchema())},
           {"assistant_facts", ArrayOf(ItemSchema())}},
          {"query", "context", "context_tokens", "truncated", "recent_turns", "pages", "profile", "user_facts",
           "assistant_facts"},
          false),
      Annotations(true, false, true)));
  tools.push_back(Tool(
      "get_user_profile", "Get the user profile",
      "Read-only. The user's profile (stable traits and preferences learned from the conversation) and "
      "the facts known about the user and the assistant.",
      Obj(json::object()),
      Obj({{"profile", ArrayOf(Obj({{"dimension", Str("")}, {"value", Str("")}, {"updated_at", Str("")}},
                                   {"dimension", "value"}, false))},
           {"text", Str("The profile as text")},
           {"user_facts", ArrayOf(Str("A fact"))},
           {"assistant_facts", ArrayOf(Str("A fact"))}},
          {"profile", "text", "user_facts", "assistant_facts"}, false),
      Annotations(true, false, true)));
  tools.push_back(Tool(
      "search_memories", "Search memories",
      "Read-only. Search the stored facts and memories of this user and assistant; results have a "
      "relevance score in [0, 1] and an id for update_memory and delete_memory.",
      Obj({{"query", Str("What to look for")},
           {"top_k", Int("Results at most (default 10)", 1, 100)},
           {"threshold", {{"type", "number"}, {"minimum", 0}, {"maximum", 1},
                          {"description", "Minimum score (default 0)"}}}},
          {"query"}),
      Obj({{"results", ArrayOf(MemorySchema())}}, {"results"}, false), Annotations(true, false, true)));
  tools.push_back(Tool(
      "add_fact", "Add a fact",
      "Store one fact or instruction about the user verbatim (e.g. 'Prefers metric units'). Exact and "
      "near duplicates of a stored fact are not stored twice (event NOOP).",
      Obj({{"text", Str("The fact, one sentence")},
           {"metadata", {{"type", "object"}, {"description", "Optional metadata, e.g. {\"category\": \"food\"}"}}}},
          {"text"}),
      Obj({{"results", ArrayOf(Obj({{"id", Str("")}, {"memory", Str("")}, {"event", Str("ADD, UPDATE or NOOP")},
                                    {"version", {{"type", "integer"}}}},
                                   {"id", "memory", "event"}, false))}},
          {"results"}, false),
      Annotations(false, false, true)));
  tools.push_back(Tool(
      "list_memories", "List memories",
      "Read-only. List the stored facts and memories, newest first, a page at a time.",
      Obj({{"limit", Int("Items per page (default 50)", 1, 1000)},
           {"cursor", Str("next_cursor of the previous page")}}),
      Obj({{"results", ArrayOf(MemorySchema())},
           {"next_cursor", {{"type", json::array({"string", "null"})}, {"description", "null on the last page"}}}},
          {"results", "next_cursor"}, false),
      Annotations(true, false, true)));
  tools.push_back(Tool(
      "update_memory", "Update a memory",
      "Change the text (a new version; history keeps the old one) or the metadata of a memory by id.",
      Obj({{"id", Str("Memory id from search_memories or list_memories")},
           {"text", Str("The new text")},
           {"metadata", {{"type", "object"}, {"description", "Replaces the metadata"}}}},
          {"id"}),
      MemorySchema(), Annotations(false, true, true)));
  tools.push_back(Tool(
      "delete_memory", "Delete a memory",
      "Delete a memory by id: it is no longer retrieved or listed (its history is kept).",
      Obj({{"id", Str("Memory id from search_memories or list_memories")}}, {"id"}),
      Obj({{"id", Str("")}, {"deleted", {{"type", "boolean"}}}}, {"id", "deleted"}, false),
      Annotations(false, true, true)));
  tools.push_back(Tool(
      "memory_health", "Memory health",
      "Read-only. Whether this user's memory is healthy: every turn promoted in time, no stale or "
      "unverified retrievals; counts per state and the items that need attention.",
      Obj(json::object()),
      Obj({{"overall", Str("healthy, waiting, uncertain, ...")},
           {"green", {{"type", "boolean"}}},
           {"items", {{"type", "integer"}}},
           {"counts", {{"type", "object"}}},
           {"findings_total", {{"type", "integer"}}},
           {"findings", ArrayOf({{"type", "object"}})},
           {"stats", {{"type", "object"}}}},
          {"overall", "green", "items", "counts", "findings_total", "findings"}, false),
      Annotations(true, false, true)));
  return tools;
}

}  // namespace

const nlohmann::json& ToolDefinitions() {
  static const nlohmann::json tools = Build();
  return tools;
}

bool ToolWrites(const std::string& name) {
  for (const json& t : ToolDefinitions()) {
    if (t["name"] == name) return !t["annotations"].value("readOnlyHint", false);
  }
  return false;
}

}  // namespace engram::mcp
