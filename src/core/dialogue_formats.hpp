// Parsing of dialogue files offered for import: engram JSONL (and engram's own
// export), the MemoryOS playground format and the LoCoMo benchmark layout.
// All functions are pure and thread-safe; no exceptions escape.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"

namespace engram {

enum class DialogueFormat { kAuto, kJsonl, kMemoryOs, kLocomo };

// "auto", "jsonl", "memoryos", "locomo" (exact, lower case). InvalidArgument
// naming the text otherwise.
Result<DialogueFormat> ParseDialogueFormatName(std::string_view name);

struct ParsedDialogue {
  std::string id;              // LoCoMo sample_id; "" for other formats
  std::string user_name;       // LoCoMo speaker_a; "" otherwise
  std::string assistant_name;  // LoCoMo speaker_b; "" otherwise
  std::vector<TurnInput> turns;
  int source_utterances = 0;   // utterances read (LoCoMo), or turn records read
  // With DialogueParseOptions::export_scopes: the scope the turns were
  // exported from (the tenant, user and assistant of their export lines), and
  // the 1-based line where it first appears. Absent for other records.
  std::optional<Scope> scope;
  int first_line = 0;
};

struct DialogueParseOptions {
  // jsonl: export lines ({"type": "turn"}) that name their scope ("user", and
  // optionally "tenant" and "assistant", which default to "default" and
  // "assistant") give one dialogue per scope, in the order of first
  // appearance, with `scope` set; the other records form one dialogue without
  // a scope (left out when empty and there are scoped ones). Off: every
  // record goes into one dialogue and the scope ids are ignored.
  bool export_scopes = false;
};

// Parses dialogue text. A leading UTF-8 byte order mark is ignored.
//
// kAuto sniffs the content: a JSON array whose first object has "user_input"
// is memoryos; one whose first object has "conversation" is locomo; an empty
// array yields no dialogues; any other array is InvalidArgument; anything
// else is read as jsonl.
//
// jsonl: one JSON object per line, blank lines skipped; one dialogue results.
//   {"user": str, "assistant": str, "time"?: str|ms-epoch number,
//    "metadata"?: object, "source_ref"?: str, "user_name"?, "assistant_name"?,
//    "user_source_ref"?: str, "assistant_source_ref"?: str}
//   or an export line {"type": "turn", "user_text", "assistant_text",
//   "event_time", "metadata", "source_ref", "user_name"?, "assistant_name"?,
//   "user_source_ref"?, "assistant_source_ref"?};
//   lines whose "type" is anything else are skipped (see DialogueParseOptions
//   for the scope ids of export lines). A missing text counts as
//   "", both empty is an error. Unknown fields are ignored. Errors (wrong
//   type, bad JSON, invalid UTF-8, unparsable time) are InvalidArgument
//   naming the 1-based line and the field: `line 3: field "user": expected a string`.
//
// memoryos: a JSON array of {user_input, agent_response, timestamp?}; one
//   dialogue results. The timestamp is read with ParseTime (or as ms epoch
//   when a number). Errors name the 0-based element index and the field.
//
// locomo: a JSON array of samples; one dialogue per sample, in file order.
//   Sessions are read in numeric order (session_1, session_2, ..., session_10);
//   a session_N_date_time without a session_N list is ignored. Utterances are
//   paired without losing any: a speaker_a utterance followed by a speaker_b
//   utterance is one turn; a speaker_b utterance with no pending speaker_a
//   utterance becomes a turn with empty user_text, and a speaker_a utterance
//   followed by another speaker_a utterance (or the session end) becomes a
//   turn with empty assistant_text. An utterance with a blip_caption gets
//   " [shares a photo: <caption>]" appended. source_ref is the turn's dia_ids
//   joined by ","; user_source_ref / assistant_source_ref are the dia_id of
//   each side ("" for a missing side). event_time is session_N_date_time plus one second per turn
//   index within the session (0, 1, 2 ... seconds), so that turn order
//   survives sorting by time; absent when the session has no date_time key.
//   metadata is {"session":N}; user_name/assistant_name are the speakers.
//   An utterance by a speaker who is neither speaker_a nor speaker_b is an
//   error naming the sample and dia_id.
//
// Every format: JSON nested deeper than json_limits::kMaxDepth (128) is
// refused before it is parsed, InvalidArgument naming the limit and where:
// `line 3: JSON nested deeper than 128 levels` (jsonl), `element 2: ...` or
// `sample 2: ...` with the line (whole-file formats), `field "metadata": ...`
// for metadata given as a string holding JSON.
Result<std::vector<ParsedDialogue>> ParseDialogueText(std::string_view content,
                                                      DialogueFormat format,
                                                      const DialogueParseOptions& options = {});

// Reads the whole file and calls ParseDialogueText. NotFound when the file does
// not exist, IoError when it cannot be read; parse errors are prefixed with the path.
Result<std::vector<ParsedDialogue>> ParseDialogueFile(const std::string& path,
                                                      DialogueFormat format,
                                                      const DialogueParseOptions& options = {});

struct LocomoQuestion {
  std::string question;
  std::string answer;                 // numbers converted to text; "" when absent
  std::vector<std::string> evidence;  // dia_ids such as "D1:3"
  int category = 0;                   // 1..5 (5 = adversarial)
};

// The "qa" lists of a LoCoMo file: one vector per sample, in file order (a
// sample without "qa" gives an empty vector). Category-5 questions often carry
// only adversarial_answer; their answer is then "". InvalidArgument naming the
// sample and question index on malformed input.
Result<std::vector<std::vector<LocomoQuestion>>> ParseLocomoQuestions(std::string_view content);

}  // namespace engram
