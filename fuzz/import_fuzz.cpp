// The import formats (core/dialogue_formats and wire/exported_memories), one
// target per format: IMPORT_FORMAT is 1 (jsonl, engram's own export lines and
// the memories of an export), 2 (MemoryOS) or 3 (LoCoMo, and its questions).
// Every input is also parsed with format detection. Invariants: errors are
// InvalidArgument; parsed turns hold valid UTF-8 and metadata that is a JSON
// object within the depth limit; jsonl: the turns written back as jsonl parse
// to the same turns.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dialogue_formats.hpp"
#include "core/json_limits.hpp"
#include "core/text.hpp"
#include "fuzz_support.hpp"
#include "wire/exported_memories.hpp"

#ifndef IMPORT_FORMAT
#error "IMPORT_FORMAT must be 1 (jsonl), 2 (memoryos) or 3 (locomo)"
#endif

namespace {

using engram::DialogueFormat;
using engram::ParsedDialogue;
using engram::TurnInput;
using nlohmann::json;

void CheckTurns(const std::vector<ParsedDialogue>& dialogues) {
  for (const ParsedDialogue& d : dialogues) {
    for (const TurnInput& t : d.turns) {
      for (const std::string* s : {&t.user_text, &t.assistant_text, &t.source_ref, &t.user_name, &t.assistant_name,
                                   &t.user_source_ref, &t.assistant_source_ref}) {
        FUZZ_CHECK(engram::text::IsValidUtf8(*s), "a parsed field is not valid UTF-8");
      }
      if (!t.metadata.empty()) {
        FUZZ_CHECK(engram::json_limits::WithinDepth(t.metadata), "metadata deeper than the limit");
        json m = json::parse(t.metadata, nullptr, false);
        FUZZ_CHECK(!m.is_discarded() && m.is_object(), "metadata is not a JSON object: " + t.metadata);
      }
    }
  }
}

template <typename R>
void CheckError(const R& r) {
  if (!r.ok()) FUZZ_CHECK(r.status().code() == engram::StatusCode::kInvalidArgument, r.status().ToString());
}

#if IMPORT_FORMAT == 1
// The turns as jsonl records, every field given.
std::string ToJsonl(const std::vector<TurnInput>& turns) {
  std::string out;
  for (const TurnInput& t : turns) {
    json j = {{"user", t.user_text},           {"assistant", t.assistant_text},
              {"source_ref", t.source_ref},    {"user_name", t.user_name},
              {"assistant_name", t.assistant_name}, {"user_source_ref", t.user_source_ref},
              {"assistant_source_ref", t.assistant_source_ref}};
    if (t.event_time) j["time"] = *t.event_time;
    if (!t.metadata.empty()) j["metadata"] = json::parse(t.metadata);
    out += j.dump() + "\n";
  }
  return out;
}

std::string Canonical(const std::string& metadata) {
  return metadata.empty() ? std::string("{}") : json::parse(metadata).dump();
}

void CheckJsonlRoundTrip(const ParsedDialogue& d) {
  if (d.turns.empty()) return;
  const std::string text = ToJsonl(d.turns);
  auto again = engram::ParseDialogueText(text, DialogueFormat::kJsonl);
  FUZZ_CHECK(again.ok(), "written back, the turns do not parse: " + again.status().ToString() + "\n" + text);
  FUZZ_CHECK(again->size() == 1 && (*again)[0].turns.size() == d.turns.size(), "a different number of turns\n" + text);
  for (std::size_t i = 0; i < d.turns.size(); ++i) {
    const TurnInput& a = d.turns[i];
    const TurnInput& b = (*again)[0].turns[i];
    FUZZ_CHECK(a.user_text == b.user_text && a.assistant_text == b.assistant_text && a.event_time == b.event_time &&
                   a.source_ref == b.source_ref && a.user_name == b.user_name &&
                   a.assistant_name == b.assistant_name && a.user_source_ref == b.user_source_ref &&
                   a.assistant_source_ref == b.assistant_source_ref &&
                   Canonical(a.metadata) == Canonical(b.metadata),
               "turn " + std::to_string(i) + " changed in the round trip\n" + text);
  }
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = engram::fuzz::AsText(data, size);
  auto detected = engram::ParseDialogueText(text, DialogueFormat::kAuto);
  CheckError(detected);
  if (detected.ok()) CheckTurns(*detected);
#if IMPORT_FORMAT == 1
  auto plain = engram::ParseDialogueText(text, DialogueFormat::kJsonl);
  CheckError(plain);
  if (plain.ok()) {
    CheckTurns(*plain);
    FUZZ_CHECK(plain->size() <= 1, "jsonl without export scopes gave several dialogues");
    if (!plain->empty()) CheckJsonlRoundTrip((*plain)[0]);
  }
  auto scoped = engram::ParseDialogueText(text, DialogueFormat::kJsonl, {.export_scopes = true});
  CheckError(scoped);
  if (scoped.ok()) {
    CheckTurns(*scoped);
    std::size_t n = 0, m = 0;
    for (const auto& d : *scoped) n += d.turns.size();
    if (plain.ok()) {
      for (const auto& d : *plain) m += d.turns.size();
      FUZZ_CHECK(n == m, "export scopes changed the number of turns");
    }
  }
  auto memories = engram::wire::ParseExportedMemories(text, "fuzz");
  CheckError(memories);
  if (memories.ok()) {
    for (const auto& m : *memories) FUZZ_CHECK(m.line >= 1, "memory without its line");
  }
#elif IMPORT_FORMAT == 2
  auto r = engram::ParseDialogueText(text, DialogueFormat::kMemoryOs);
  CheckError(r);
  if (r.ok()) {
    CheckTurns(*r);
    FUZZ_CHECK(r->size() <= 1, "memoryos gave several dialogues");
  }
#elif IMPORT_FORMAT == 3
  auto r = engram::ParseDialogueText(text, DialogueFormat::kLocomo);
  CheckError(r);
  if (r.ok()) CheckTurns(*r);
  auto q = engram::ParseLocomoQuestions(text);
  CheckError(q);
  if (q.ok()) {
    for (const auto& sample : *q) {
      for (const auto& question : sample) {
        FUZZ_CHECK(question.category >= 0, "negative category");
      }
    }
  }
#endif
  return 0;
}
