// Fact extraction for add(infer = true): by a chat model (our own prompt; the
// reply is JSON, validated, and retried with the reason when invalid), or by
// the built-in extractive rules (degraded). Outside any transaction.
#pragma once

#include <string>
#include <vector>

#include "engram/facts.hpp"
#include "engram/result.hpp"
#include "memory/facts/fact_store.hpp"
#include "models/llm.hpp"

namespace engram::memory::facts {

// The longest text a memory or a message's content may have (bytes).
inline constexpr std::size_t kMaxMemoryTextBytes = 64 * 1024;

struct InferredFact {
  std::string text;
  std::string attributed_to;  // "user", "assistant" or ""
  // "ADD", or "UPDATE" of target (an existing memory id the model says this
  // fact corrects or replaces).
  std::string event = "ADD";
  std::string target;
  std::vector<EntityRef> entities;
};

// A typed edge the model proposes: from fact index `from` (of this batch) to
// an existing memory id or to another fact index of this batch.
struct InferredLink {
  std::size_t from = 0;
  std::string to_id;
  long to_index = -1;
  std::string relation;
};

struct Inference {
  std::vector<InferredFact> facts;
  std::vector<InferredLink> links;
  int model_calls = 0;
  bool degraded = false;
  std::string note;  // built-in: statements kept as said, or why nothing was extracted
};

// An existing memory shown to the model as context.
struct KnownMemory {
  std::string id;
  std::string text;
};

// Built-in: first-person statements of user and assistant messages rewritten
// as third-person facts (models/builtin/fact_rules.hpp); a user's statement
// the rules cannot rewrite (third person, instructions, schedules) is kept as
// said; questions and contentless sentences are not stored. `note` says what
// was kept as said, or why nothing was. A time said relative to the moment
// of saying is written as its date, against `observed` ("I went to the
// dentist yesterday" -> "User went to the dentist on 5 December 2026";
// core/relative_time.hpp). Never fails.
Inference InferBuiltin(const std::vector<MemoryMessage>& messages, TimeMs observed);

// One model call (plus at most two retries for invalid replies). `recent` are
// earlier messages of the scope ("Name: text", oldest first), `known` the
// nearest existing memories; `observed_at` makes relative dates absolute.
// procedural: one summary of an agent's execution history. Unavailable when
// the reply stays invalid (nothing is written then).
Result<Inference> InferWithLlm(Llm& llm, const std::vector<MemoryMessage>& messages,
                               const std::vector<std::string>& recent, const std::vector<KnownMemory>& known,
                               TimeMs observed_at, bool procedural);

}  // namespace engram::memory::facts
