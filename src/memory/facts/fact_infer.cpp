#include "memory/facts/fact_infer.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <utility>

#include "core/relative_time.hpp"
#include "core/text.hpp"
#include "core/time.hpp"
#include "models/builtin/english.hpp"
#include "models/builtin/fact_rules.hpp"
#include "models/llm/model_json.hpp"

namespace engram::memory::facts {

namespace {

using nlohmann::json;

constexpr int kMaxAttempts = 3;
constexpr std::size_t kMaxFactBytes = 2000;
// A user's sentence the rules cannot rewrite is kept as said from this many
// content words ("Bob's birthday is on 4 July": bob, birthday, 4, july;
// "我对花生过敏": three words of two letters).
constexpr std::size_t kMinVerbatimWords = 2;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string Speaker(const MemoryMessage& m) {
  if (!m.name.empty()) return m.name;
  return m.role == "assistant" ? "Assistant" : "User";
}

std::string SystemPrompt(bool procedural) {
  if (procedural) {
    return "You keep the procedural memory of an AI agent. You receive the agent's execution history. "
           "Write ONE summary that lets the agent continue the task later: the task goal, then every "
           "action in order with its exact result or output (copy outputs verbatim, do not paraphrase "
           "numbers, paths, identifiers or errors), what was found, errors met, and the current state "
           "and next step. Reply with a JSON object only: {\"summary\": \"...\"}.";
  }
  return "You maintain a long-term memory of facts about a conversation's participants. From the NEW "
         "messages, extract durable facts worth remembering (preferences, plans, biography, "
         "relationships, decisions, commitments of the assistant). Each fact is one self-contained "
         "sentence of 5 to 80 words: resolve pronouns to names, make relative dates absolute using the "
         "observation date, keep the language of the messages, never invent anything the messages do "
         "not say. Facts about both speakers count; say whom each is about in \"attributed_to\" "
         "(\"user\" or \"assistant\"). Compare with EXISTING memories: when a new fact corrects, "
         "contradicts or refines one, give \"event\": \"UPDATE\" and its \"id\"; when it only repeats "
         "one, leave it out; otherwise \"event\": \"ADD\". Name the entities of each fact (people, "
         "places, organisations, products, identifiers) with a type. You may link facts with typed "
         "relations (\"from\" a fact index, \"to\" a fact index or an existing id). Earlier messages "
         "are context only: extract facts from the NEW messages. Reply with a JSON object only: "
         "{\"facts\": [{\"text\": \"...\", \"attributed_to\": \"user\", \"event\": \"ADD\", \"id\": "
         "\"\", \"entities\": [{\"name\": \"...\", \"type\": \"...\"}]}], \"links\": [{\"from\": 0, "
         "\"to\": \"m_... or 1\", \"relation\": \"...\"}]}. An empty list is fine.";
}

std::string UserPrompt(const std::vector<MemoryMessage>& messages, const std::vector<std::string>& recent,
                       const std::vector<KnownMemory>& known, TimeMs observed_at) {
  std::string s = "Observation date: " + FormatIso8601(observed_at) + "\n\n";
  if (!recent.empty()) {
    s += "EARLIER messages (context):\n";
    for (const auto& r : recent) s += r + "\n";
    s += "\n";
  }
  if (!known.empty()) {
    s += "EXISTING memories:\n";
    for (const auto& k : known) s += "- id " + k.id + ": " + k.text + "\n";
    s += "\n";
  }
  s += "NEW messages:\n";
  for (const auto& m : messages) {
    if (m.role == "system") continue;
    s += Speaker(m) + " (" + m.role + "): " + m.content + "\n";
  }
  return s;
}

Result<Inference> Validate(const json& doc, const std::vector<KnownMemory>& known, bool procedural) {
  Inference out;
  if (!doc.is_object()) return Status::InvalidArgument("reply: expected a JSON object");
  if (procedural) {
    ENGRAM_ASSIGN_OR_RETURN(std::string summary, llmjson::String(doc, "summary", "reply", true));
    if (summary.empty()) return Status::InvalidArgument("summary: empty");
    out.facts.push_back({summary, "assistant", "ADD", "", {}});
    return out;
  }
  std::set<std::string> ids;
  for (const auto& k : known) ids.insert(k.id);
  ENGRAM_ASSIGN_OR_RETURN(const json* arr, llmjson::ArrayField(doc, "facts"));
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const json& f = (*arr)[i];
    const std::string path = "facts[" + std::to_string(i) + "]";
    if (!f.is_object()) return Status::InvalidArgument(path + ": expected an object");
    InferredFact fact;
    ENGRAM_ASSIGN_OR_RETURN(fact.text, llmjson::String(f, "text", path, true));
    ENGRAM_ASSIGN_OR_RETURN(fact.attributed_to, llmjson::String(f, "attributed_to", path, false));
    ENGRAM_ASSIGN_OR_RETURN(std::string event, llmjson::String(f, "event", path, false));
    ENGRAM_ASSIGN_OR_RETURN(fact.target, llmjson::String(f, "id", path, false));
    if (fact.text.empty() || fact.text.size() > kMaxFactBytes || text::StorableTextProblem(fact.text)) {
      return Status::InvalidArgument(path + ".text: empty, too long, not UTF-8 or holding a NUL");
    }
    if (fact.attributed_to != "user" && fact.attributed_to != "assistant") fact.attributed_to.clear();
    for (auto& c : event) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (event == "UPDATE") {
      if (!ids.count(fact.target)) return Status::InvalidArgument(path + ".id: not one of the existing memories");
      fact.event = "UPDATE";
    } else if (event.empty() || event == "ADD") {
      fact.target.clear();
    } else {
      return Status::InvalidArgument(path + ".event: expected ADD or UPDATE");
    }
    auto ents = f.find("entities");
    if (ents != f.end() && ents->is_array()) {
      for (const auto& e : *ents) {
        if (e.is_object() && e.contains("name") && e["name"].is_string()) {
          std::string type = e.contains("type") && e["type"].is_string() ? e["type"].get<std::string>() : "";
          fact.entities.push_back({e["name"].get<std::string>(), type});
        }
      }
    }
    out.facts.push_back(std::move(fact));
  }
  auto links = doc.find("links");
  if (links != doc.end() && links->is_array()) {
    for (const auto& l : *links) {
      if (!l.is_object() || !l.contains("from") || !l["from"].is_number_integer()) continue;
      InferredLink link;
      long from = l["from"].get<long>();
      if (from < 0 || static_cast<std::size_t>(from) >= out.facts.size()) continue;
      link.from = static_cast<std::size_t>(from);
      link.relation = l.contains("relation") && l["relation"].is_string() ? l["relation"].get<std::string>() : "related";
      if (link.relation.empty() || link.relation.size() > 64) continue;
      if (l.contains("to") && l["to"].is_number_integer()) {
        link.to_index = l["to"].get<long>();
        if (link.to_index < 0 || static_cast<std::size_t>(link.to_index) >= out.facts.size()) continue;
      } else if (l.contains("to") && l["to"].is_string()) {
        link.to_id = l["to"].get<std::string>();
        if (!ids.count(link.to_id)) {
          // A digit string names a fact of this batch.
          try {
            link.to_index = std::stol(link.to_id);
          } catch (...) {
            continue;
          }
          link.to_id.clear();
          if (link.to_index < 0 || static_cast<std::size_t>(link.to_index) >= out.facts.size()) continue;
        }
      } else {
        continue;
      }
      out.links.push_back(std::move(link));
    }
  }
  return out;
}

// An assistant's report of its own failure or an apology ("Sorry, I
// encountered an internal error while processing your request", "I'm unable
// to help with that"): a first-person sentence, but what a failed turn
// said, never a fact about the assistant (a provider failure is no memory).
bool IsFailureReport(std::string_view sentence) {
  static const std::array<std::string_view, 12> kWords = {
      "sorry", "apologize", "apologise", "apologies", "error", "errors", "unable", "failed",
      "exception", "timeout", "unavailable", "cannot"};
  bool found = false;
  text::ForEachToken(sentence, [&](std::string_view t) {
    if (!found && std::find(kWords.begin(), kWords.end(), t) != kWords.end()) found = true;
  });
  return found;
}

}  // namespace

Inference InferBuiltin(const std::vector<MemoryMessage>& messages, TimeMs observed) {
  Inference out;
  out.degraded = true;
  std::set<std::string> seen;
  std::string user = "User", assistant = "Assistant";
  for (const auto& m : messages) {
    if (m.role == "user" && !m.name.empty()) user = m.name;
    if (m.role == "assistant" && !m.name.empty()) assistant = m.name;
  }
  std::size_t verbatim = 0, questions = 0, empty = 0, skipped = 0, failures = 0;
  for (const auto& m : messages) {
    if (m.role != "user" && m.role != "assistant") continue;
    const bool is_user = m.role == "user";
    for (const auto& s : text::SplitSentences(m.content)) {
      if (!is_user && IsFailureReport(s)) {
        ++failures;
        continue;
      }
      std::string f = builtin::ExtractFact(s, is_user ? builtin::Role::kUser : builtin::Role::kAssistant,
                                           is_user ? user : assistant, is_user ? assistant : user);
      if (f.empty() && is_user) {
        // Not a first-person statement ("Bob's birthday is on 4 July", an
        // instruction, a schedule): a user's statement with some content is
        // kept as said rather than dropped; questions and bare words are not.
        std::string said(builtin::WithoutQuestionTag(Trim(s)));  // "..., right?" states
        if (builtin::IsQuestion(said)) {
          ++questions;
          continue;
        }
        if (text::ContentWords(said) < kMinVerbatimWords) {
          ++empty;
          continue;
        }
        // (Dates are longer than "tonight": a statement near the limit stays as said.)
        if (std::string dated = WithAbsoluteTimes(said, observed);
            dated.size() <= kMaxMemoryTextBytes) {
          said = std::move(dated);
        }
        if (!seen.insert(text::NormalizeForHash(said)).second) continue;
        out.facts.push_back({said, m.role, "ADD", "", {}});
        ++verbatim;
        continue;
      }
      if (f.empty()) {
        ++skipped;
        continue;
      }
      f = WithAbsoluteTimes(f, observed);
      if (!seen.insert(text::NormalizeForHash(f)).second) continue;
      out.facts.push_back({f, m.role, "ADD", "", {}});
    }
  }
  if (verbatim > 0) {
    out.note = std::to_string(verbatim) + (verbatim == 1 ? " statement" : " statements") +
               " kept as said: the built-in engine rewrites as a fact only a first-person statement of a kind "
               "it knows (\"I live in ...\", \"I love ...\", \"my sister is ...\"); configure a model for extraction";
  } else if (out.facts.empty()) {
    std::string why;
    if (questions > 0) why = "questions are not stored";
    if (empty > 0) why += std::string(why.empty() ? "" : "; ") + "nothing to remember in greetings or single words";
    if (skipped > 0) why += std::string(why.empty() ? "" : "; ") + "assistant messages keep only first-person statements";
    if (failures > 0) why += std::string(why.empty() ? "" : "; ") + "an assistant's apology or error report is not a fact";
    if (why.empty()) why = "no user or assistant message with text";
    out.note = "nothing stored: " + why;
  }
  return out;
}

Result<Inference> InferWithLlm(Llm& llm, const std::vector<MemoryMessage>& messages,
                               const std::vector<std::string>& recent, const std::vector<KnownMemory>& known,
                               TimeMs observed_at, bool procedural) {
  ChatRequest req;
  req.json_object = true;
  req.temperature = 0.0;
  req.messages = {{"system", SystemPrompt(procedural)}, {"user", UserPrompt(messages, recent, known, observed_at)}};
  Status last = Status::Internal("no attempt");
  int calls = 0;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    ++calls;
    auto reply = llm.Chat(req);
    if (!reply.ok()) return reply.status();
    auto doc = llmjson::Extract(reply->content);
    Result<Inference> parsed = doc.ok() ? Validate(*doc, known, procedural) : Result<Inference>(doc.status());
    if (parsed.ok()) {
      parsed->model_calls = calls;
      return parsed;
    }
    last = parsed.status();
    req.messages.resize(2);
    req.messages.push_back({"assistant", reply->content});
    req.messages.push_back({"user", "That reply was not usable (" + last.message() +
                                        "). Reply again with only the JSON object described."});
  }
  return Status::Unavailable("memory extraction: reply invalid after " + std::to_string(kMaxAttempts) +
                             " attempts (" + last.message() + ")");
}

}  // namespace engram::memory::facts
