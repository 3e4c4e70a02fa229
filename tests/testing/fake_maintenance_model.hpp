// A stand-in for a chat model that answers engram's maintenance prompts with
// valid JSON (built from the prompt itself) and anything else with a fixed
// answer. Used with FakeOpenAiServer::SetChatResponder, so the real HTTP
// client and the real LLM maintenance engine run against it.
#pragma once

#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace engram::testing {

inline std::string LastUserMessage(const nlohmann::json& request) {
  std::string out;
  if (!request.is_object() || !request.contains("messages")) return out;
  for (const auto& m : request["messages"]) {
    if (m.value("role", "") == "user") out = m.value("content", "");
  }
  return out;
}

inline std::string MaintenanceReply(const nlohmann::json& request, const std::string& answer) {
  const std::string prompt = LastUserMessage(request);
  using nlohmann::json;
  if (prompt.find("{\"pages\": [") != std::string::npos) {
    std::regex item(R"(\n\[(\d+)\] )");
    json pages = json::array();
    for (std::sregex_iterator it(prompt.begin(), prompt.end(), item), end; it != end; ++it) {
      int n = std::stoi((*it)[1]);
      pages.push_back({{"page", n}, {"continues_previous", n > 1}, {"chain_summary", "A conversation."},
                       {"keywords", {"conversation", "page" + std::to_string(n)}}});
    }
    return json({{"pages", pages}}).dump();
  }
  if (prompt.find("{\"segments\": [") != std::string::npos) {
    std::regex item(R"(Topic (\d+)\n)");
    json segs = json::array();
    for (std::sregex_iterator it(prompt.begin(), prompt.end(), item), end; it != end; ++it) {
      segs.push_back({{"segment", std::stoi((*it)[1])}, {"summary", "A topic of the conversation."},
                      {"keywords", {"topic"}}});
    }
    return json({{"segments", segs}}).dump();
  }
  if (prompt.find("\"user_facts\"") != std::string::npos) {
    std::regex item(R"(\[page (\d+)\])");
    std::set<long long> ids;
    for (std::sregex_iterator it(prompt.begin(), prompt.end(), item), end; it != end; ++it) {
      ids.insert(std::stoll((*it)[1]));
    }
    json facts = json::array();
    if (!ids.empty()) {
      facts.push_back({{"text", "The user talked about " + std::to_string(ids.size()) + " things."},
                       {"pages", {*ids.begin()}}});
    }
    return json({{"profile", json::array()}, {"user_facts", facts}, {"assistant_facts", json::array()}}).dump();
  }
  return answer;
}

}  // namespace engram::testing
