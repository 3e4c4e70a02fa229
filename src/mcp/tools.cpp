// Tool dispatch and the dialogue tools: add_memory, retrieve_memory,
// get_user_profile, memory_health.
#include "mcp/tools.hpp"

#include "core/time.hpp"
#include "wire/json.hpp"

namespace engram::mcp {

namespace {

using nlohmann::json;

json ItemJson(const RetrievedItem& i) {
  json j = {{"kind", ItemKindName(i.kind)}, {"id", i.id},       {"version", i.version},
            {"score", i.score},             {"text", i.text},   {"tokens", i.tokens}};
  if (i.event_time) j["event_time"] = FormatIso8601(i.event_time);
  if (!i.source_ref.empty()) j["source_ref"] = i.source_ref;
  return j;
}

json Counts(const std::array<std::int64_t, kHealthStateCount>& c) {
  json j = json::object();
  for (int s = 0; s < kHealthStateCount; ++s) j[HealthStateName(static_cast<HealthState>(s))] = c[static_cast<std::size_t>(s)];
  return j;
}

}  // namespace

json ToolErrorResult(const std::string& message) {
  return {{"content", json::array({{{"type", "text"}, {"text", message}}})}, {"isError", true}};
}

Tools::Tools(Engine& engine, Scope scope, std::string read_only)
    : engine_(engine), scope_(std::move(scope)), read_only_(std::move(read_only)) {
  handlers_ = {
      {"add_memory", [this](const json& a) { return AddMemory(a); }},
      {"retrieve_memory", [this](const json& a) { return RetrieveMemory(a); }},
      {"get_user_profile", [this](const json& a) { return GetUserProfile(a); }},
      {"search_memories", [this](const json& a) { return SearchMemories(a); }},
      {"add_fact", [this](const json& a) { return AddFact(a); }},
      {"list_memories", [this](const json& a) { return ListMemories(a); }},
      {"update_memory", [this](const json& a) { return UpdateMemory(a); }},
      {"delete_memory", [this](const json& a) { return DeleteMemory(a); }},
      {"memory_health", [this](const json& a) { return MemoryHealth(a); }},
  };
}

MemoryScope Tools::FactScope() const {
  MemoryScope s;
  s.tenant = scope_.tenant;
  s.user = scope_.user;
  s.agent = scope_.assistant;
  return s;
}

json Tools::Definitions() const {
  if (read_only_.empty()) return ToolDefinitions();
  json tools = json::array();
  for (const json& t : ToolDefinitions()) {
    if (!ToolWrites(t["name"].get<std::string>())) tools.push_back(t);
  }
  return tools;
}

json Tools::Call(const std::string& name, const json& arguments) {
  if (!read_only_.empty() && ToolWrites(name)) return ToolErrorResult(name + " writes memory, and " + read_only_);
  ToolOutcome out = handlers_.at(name)(arguments);
  if (out.is_error) return ToolErrorResult(out.error);
  std::string text = wire::Dump(out.structured);
  return {{"content", json::array({{{"type", "text"}, {"text", text}}})},
          {"structuredContent", std::move(out.structured)},
          {"isError", false}};
}

ToolOutcome Tools::AddMemory(const json& a) {
  Args args(a);
  args.Only({"user_input", "agent_response", "timestamp", "meta_data"});
  TurnInput t;
  t.user_text = args.Str("user_input", true, false);
  t.assistant_text = args.Str("agent_response", true, false);
  t.event_time = args.Time("timestamp");
  t.metadata = args.Object("meta_data");
  if (args.ok() && t.user_text.empty() && t.assistant_text.empty()) {
    return ToolOutcome::Error("user_input and agent_response are both empty; give at least one of them");
  }
  if (!args.ok()) return ToolOutcome::Error(args.error());
  auto r = engine_.AddTurn(scope_, t);
  if (!r.ok()) return FromStatus(r.status());
  return ToolOutcome::Ok({{"turn_id", r->turn_id}, {"seq", r->seq}, {"promotion_pending", r->promotion_pending}});
}

ToolOutcome Tools::RetrieveMemory(const json& a) {
  Args args(a);
  args.Only({"query", "max_results", "budget"});
  std::string query = args.Str("query", true);
  auto max_results = args.Int("max_results", 1, 100);
  auto budget = args.Int("budget", 50, 100000);
  if (!args.ok()) return ToolOutcome::Error(args.error());
  RetrieveOptions o;
  if (max_results) o.max_pages = o.max_facts = static_cast<int>(*max_results);
  if (budget) o.budget_tokens = static_cast<int>(*budget);
  auto r = engine_.Retrieve(scope_, query, o);
  if (!r.ok()) return FromStatus(r.status());
  json turns = json::array(), pages = json::array(), profile = json::array(), user = json::array(),
       assistant = json::array();
  for (const auto& i : r->items) {
    switch (i.kind) {
      case ItemKind::kStmTurn: turns.push_back(ItemJson(i)); break;
      case ItemKind::kPage: pages.push_back(ItemJson(i)); break;
      case ItemKind::kProfile: profile.push_back(ItemJson(i)); break;
      case ItemKind::kUserFact: user.push_back(ItemJson(i)); break;
      case ItemKind::kAssistantFact: assistant.push_back(ItemJson(i)); break;
    }
  }
  return ToolOutcome::Ok({{"query", query},       {"context", r->context},   {"context_tokens", r->context_tokens},
                          {"truncated", r->truncated}, {"recent_turns", turns}, {"pages", pages},
                          {"profile", profile},   {"user_facts", user},      {"assistant_facts", assistant}});
}

ToolOutcome Tools::GetUserProfile(const json& a) {
  Args args(a);
  args.Only({});
  if (!args.ok()) return ToolOutcome::Error(args.error());
  auto p = engine_.GetProfile(scope_);
  if (!p.ok()) return FromStatus(p.status());
  json slots = json::array();
  for (const auto& s : p->slots) {
    json j = {{"dimension", s.dimension}, {"value", s.value}};
    if (s.updated_at) j["updated_at"] = FormatIso8601(s.updated_at);
    slots.push_back(std::move(j));
  }
  json facts[2] = {json::array(), json::array()};
  const char* kinds[2] = {"user", "assistant"};
  for (int k = 0; k < 2; ++k) {
    auto f = engine_.ListFacts(scope_, kinds[k]);
    if (!f.ok()) return FromStatus(f.status());
    for (const auto& fact : *f) facts[k].push_back(fact.text);
  }
  return ToolOutcome::Ok({{"profile", slots}, {"text", p->text}, {"user_facts", facts[0]}, {"assistant_facts", facts[1]}});
}

ToolOutcome Tools::MemoryHealth(const json& a) {
  Args args(a);
  args.Only({});
  if (!args.ok()) return ToolOutcome::Error(args.error());
  HealthOptions o;
  o.tenant = scope_.tenant;
  o.user = scope_.user;
  o.max_findings = 20;
  auto r = engine_.Health(o);
  if (!r.ok()) return FromStatus(r.status());
  json findings = json::array();
  for (const auto& f : r->findings) {
    findings.push_back({{"kind", f.kind}, {"id", f.id}, {"assistant", f.scope.assistant},
                        {"state", HealthStateName(f.state)}, {"reason", f.reason}});
  }
  json out = {{"overall", HealthStateName(r->overall)}, {"green", r->green()},
              {"items", r->items},                      {"counts", Counts(r->counts)},
              {"findings_total", r->findings_total},    {"findings", findings}};
  auto stats = engine_.GetStats(&scope_);
  if (stats.ok()) {
    out["stats"] = {{"stm_turns", stats->stm_turns},     {"mtm_pages", stats->mtm_pages},
                    {"user_facts", stats->user_facts},   {"assistant_facts", stats->assistant_facts},
                    {"profile_slots", stats->profile_slots}, {"pending_jobs", stats->pending_jobs},
                    {"failed_jobs", stats->failed_jobs}, {"turns_admitted", stats->turns_admitted}};
  }
  return ToolOutcome::Ok(std::move(out));
}

}  // namespace engram::mcp
