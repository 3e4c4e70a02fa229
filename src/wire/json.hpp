// JSON renderings of the public engine types, shared by the surfaces (CLI
// --json, HTTP API, MCP): one spelling of every field everywhere.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engram/engine.hpp"

namespace engram::wire {

// Serialises untrusted text safely (invalid UTF-8 replaced, never throws);
// indent < 0: compact.
std::string Dump(const nlohmann::json& j, int indent = -1);
// A stored metadata JSON object text as JSON ({} when empty or unreadable,
// nesting deeper than json_limits::kMaxDepth included).
nlohmann::json MetadataJson(const std::string& text);

nlohmann::json ToJson(const Stats& s);
nlohmann::json ToJson(const RetrievedItem& item);
nlohmann::json ToJson(const MaintainReport& r);
nlohmann::json ToJson(const Fact& f);
nlohmann::json ToJson(const Turn& t);
nlohmann::json ToJson(const JobInfo& j);
// A memory as the fact surface shows it (user_id, agent_id, run_id, score...).
nlohmann::json ToJson(const MemoryItem& m);
nlohmann::json ToJson(const MemoryHistoryEvent& e);
// A receipt as the HTTP API lists it: ids, tiers, status and versions
// (content-free, like the receipt).
nlohmann::json ToJson(const ReceiptInfo& r);
nlohmann::json ToJson(const MemoryAddResult& r);
nlohmann::json ToJson(const HealthItem& i);
// The health report (without the caller's own fields such as the store path).
nlohmann::json ToJson(const HealthReport& r);
// {user, assistant, profile: [slots], profile_text, user_facts, assistant_facts}.
nlohmann::json ProfileJson(const Scope& scope, const Profile& p, const std::vector<Fact>& facts);
// {query, budget, context_tokens, truncated, items, context}.
nlohmann::json RetrievalJson(const std::string& query, int budget, const RetrievalResult& r);

}  // namespace engram::wire
