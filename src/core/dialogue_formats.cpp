// Dialogue import formats: jsonl (and engram export lines), MemoryOS, LoCoMo.
#include "core/dialogue_formats.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/json_keys.hpp"
#include "core/json_limits.hpp"
#include "core/time.hpp"

namespace engram {
namespace {

using Json = nlohmann::json;

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }
Status Bad(std::string message) { return Status::InvalidArgument(std::move(message)); }

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// True when `s` is well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF);
// otherwise sets *bad_at to the offset of the first bad sequence.
bool ValidUtf8(std::string_view s, size_t* bad_at) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;                   // continuation bytes
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the first continuation byte
    if (c < 0x80) n = 0;
    else if (c >= 0xC2 && c <= 0xDF) n = 1;
    else if (c >= 0xE0 && c <= 0xEF) n = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) n = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return *bad_at = i, false;
    if (i + n >= s.size()) return *bad_at = i, false;
    for (size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return *bad_at = i, false;
    }
    i += n + 1;
  }
  return true;
}

// Parses JSON without letting an exception escape. Nesting deeper than the
// limit is refused before parsing (printing and copying such a document would
// exhaust the stack).
Result<Json> ParseJson(std::string_view text) {
  if (!json_limits::WithinDepth(text)) return Bad(json_limits::TooDeepMessage());
  json_limits::DuplicateKeys keys;
  try {
    Json j = Json::parse(text.begin(), text.end(), std::ref(keys));
    if (keys.found()) return Bad(keys.Message());
    return j;
  } catch (const std::exception& e) {
    return Bad(std::string("invalid JSON: ") + e.what());
  }
}

// Where a whole-file document first nests deeper than the limit: its 1-based
// line and the 0-based index of the top-level array element it is in (-1 when
// the document is not an array). Call only when the document is too deep.
struct DeepSpot {
  size_t line = 1;
  long element = -1;
};

DeepSpot LocateTooDeep(std::string_view text) {
  DeepSpot spot;
  json_limits::Scanner scan;
  int depth = 0;
  bool array = false;
  for (const char c : text) {
    if (c == '\n') ++spot.line;
    if (scan.Next(c) != json_limits::Scanner::Char::kStructure) continue;
    if (c == '[' || c == '{') {
      if (depth == 0 && c == '[') array = true, spot.element = 0;
      if (++depth > json_limits::kMaxDepth) return spot;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == ',' && depth == 1 && array) {
      ++spot.element;
    }
  }
  return spot;
}

std::string_view StripBom(std::string_view s) {
  if (s.size() >= 3 && s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);
  return s;
}

bool IsBlank(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

// Field readers: on error they return a message like `field "user": expected a string`.
Result<std::string> StringField(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::string();
  if (!it->is_string()) return Bad("field " + Quote(key) + ": expected a string");
  return it->get<std::string>();
}

// A time given as text (ParseTime) or as a number of ms since the epoch.
Result<std::optional<TimeMs>> TimeField(const Json& obj, const char* key) {
  auto it = obj.find(key);
  const std::string prefix = "field " + Quote(key) + ": ";
  if (it == obj.end() || it->is_null()) return std::optional<TimeMs>();
  if (it->is_string()) {
    auto t = ParseTime(it->get<std::string>());
    if (!t.ok()) return Bad(prefix + t.status().message());
    return std::optional<TimeMs>(*t);
  }
  if (it->is_number_unsigned() &&
      it->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<TimeMs>::max())) {
    return Bad(prefix + "number out of range");
  }
  if (it->is_number_integer()) return std::optional<TimeMs>(it->get<std::int64_t>());
  if (it->is_number_float()) {
    const double v = it->get<double>();
    if (!std::isfinite(v) || v != std::floor(v) || std::fabs(v) > 9.0e15) {
      return Bad(prefix + "expected whole milliseconds since the epoch");
    }
    return std::optional<TimeMs>(static_cast<TimeMs>(v));
  }
  return Bad(prefix + "expected a string or a number");
}

// Metadata as JSON object text: an object, or a string holding one.
Result<std::string> MetadataField(const Json& obj, const char* key) {
  auto it = obj.find(key);
  const std::string err = "field " + Quote(key) + ": expected a JSON object";
  if (it == obj.end() || it->is_null()) return std::string();
  if (it->is_object()) return Dump(*it);
  if (it->is_string()) {
    const auto& s = it->get_ref<const std::string&>();
    if (s.empty()) return std::string();
    if (!json_limits::WithinDepth(s)) return Bad("field " + Quote(key) + ": " + json_limits::TooDeepMessage());
    auto parsed = ParseJson(s);
    if (parsed.ok() && parsed->is_object()) return Dump(*parsed);
  }
  return Bad(err);
}

Status Prefixed(const std::string& where, const Status& st) {
  return Status(st.code(), where + ": " + st.message());
}

// ---------------------------------------------------------------- jsonl

// One jsonl record (plain or export "turn" form) into `turn`.
Status ReadJsonlRecord(const Json& obj, bool export_form, TurnInput& turn) {
  const char* user_key = export_form ? "user_text" : "user";
  const char* asst_key = export_form ? "assistant_text" : "assistant";
  ENGRAM_ASSIGN_OR_RETURN(turn.user_text, StringField(obj, user_key));
  ENGRAM_ASSIGN_OR_RETURN(turn.assistant_text, StringField(obj, asst_key));
  if (turn.user_text.empty() && turn.assistant_text.empty()) {
    return Bad("fields " + Quote(user_key) + " and " + Quote(asst_key) + ": both empty");
  }
  ENGRAM_ASSIGN_OR_RETURN(turn.event_time, TimeField(obj, export_form ? "event_time" : "time"));
  ENGRAM_ASSIGN_OR_RETURN(turn.metadata, MetadataField(obj, "metadata"));
  ENGRAM_ASSIGN_OR_RETURN(turn.source_ref, StringField(obj, "source_ref"));
  ENGRAM_ASSIGN_OR_RETURN(turn.user_name, StringField(obj, "user_name"));
  ENGRAM_ASSIGN_OR_RETURN(turn.assistant_name, StringField(obj, "assistant_name"));
  ENGRAM_ASSIGN_OR_RETURN(turn.user_source_ref, StringField(obj, "user_source_ref"));
  ENGRAM_ASSIGN_OR_RETURN(turn.assistant_source_ref, StringField(obj, "assistant_source_ref"));
  return Status::Ok();
}

// The scope an export line names ("user", optional "tenant" and
// "assistant"); nullopt when it names none.
Result<std::optional<Scope>> ExportScope(const Json& obj) {
  if (auto user = obj.find("user"); user == obj.end() || user->is_null()) return std::optional<Scope>();
  Scope scope;
  ENGRAM_ASSIGN_OR_RETURN(scope.user, StringField(obj, "user"));
  ENGRAM_ASSIGN_OR_RETURN(std::string tenant, StringField(obj, "tenant"));
  ENGRAM_ASSIGN_OR_RETURN(std::string assistant, StringField(obj, "assistant"));
  if (!tenant.empty()) scope.tenant = std::move(tenant);
  if (!assistant.empty()) scope.assistant = std::move(assistant);
  return std::optional<Scope>(std::move(scope));
}

Result<std::vector<ParsedDialogue>> ParseJsonl(std::string_view content, const DialogueParseOptions& options) {
  std::vector<ParsedDialogue> out(1);  // [0]: the records that name no scope
  std::map<std::tuple<std::string, std::string, std::string>, size_t> scoped;  // scope -> index in out
  int line_no = 0;
  size_t pos = 0;
  while (pos <= content.size()) {
    size_t end = content.find('\n', pos);
    if (end == std::string_view::npos) end = content.size();
    std::string_view line = content.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (IsBlank(line)) continue;
    const std::string where = "line " + std::to_string(line_no);
    size_t bad = 0;
    if (!ValidUtf8(line, &bad)) return Bad(where + ": invalid UTF-8 at column " + std::to_string(bad + 1));
    auto parsed = ParseJson(line);
    if (!parsed.ok()) return Prefixed(where, parsed.status());
    const Json& obj = *parsed;
    if (!obj.is_object()) return Bad(where + ": expected a JSON object");
    bool export_form = false;
    if (auto type = obj.find("type"); type != obj.end()) {
      if (!(type->is_string() && type->get_ref<const std::string&>() == "turn")) continue;
      export_form = true;
    }
    ParsedDialogue* d = &out[0];
    if (export_form && options.export_scopes) {
      auto scope = ExportScope(obj);
      if (!scope.ok()) return Prefixed(where, scope.status());
      if (*scope) {
        const Scope& sc = **scope;
        auto [it, added] = scoped.try_emplace({sc.tenant, sc.user, sc.assistant}, out.size());
        if (added) {
          ParsedDialogue& fresh = out.emplace_back();
          fresh.scope = sc;
          fresh.first_line = line_no;
        }
        d = &out[it->second];
      }
    }
    Status st = ReadJsonlRecord(obj, export_form, d->turns.emplace_back());
    if (!st.ok()) return Prefixed(where, st);
    ++d->source_utterances;
  }
  if (out.size() > 1 && out[0].turns.empty()) out.erase(out.begin());
  return out;
}

// ---------------------------------------------------------------- memoryos

Status ReadMemoryOsRecord(const Json& e, TurnInput& turn) {
  if (!e.is_object()) return Bad("expected a JSON object");
  ENGRAM_ASSIGN_OR_RETURN(turn.user_text, StringField(e, "user_input"));
  ENGRAM_ASSIGN_OR_RETURN(turn.assistant_text, StringField(e, "agent_response"));
  if (turn.user_text.empty() && turn.assistant_text.empty()) {
    return Bad("fields \"user_input\" and \"agent_response\": both empty");
  }
  ENGRAM_ASSIGN_OR_RETURN(turn.event_time, TimeField(e, "timestamp"));
  return Status::Ok();
}

Result<std::vector<ParsedDialogue>> ParseMemoryOs(const Json& doc) {
  if (!doc.is_array()) return Bad("memoryos: expected a JSON array");
  std::vector<ParsedDialogue> out(1);
  for (size_t i = 0; i < doc.size(); ++i) {
    Status st = ReadMemoryOsRecord(doc[i], out[0].turns.emplace_back());
    if (!st.ok()) return Prefixed("element " + std::to_string(i), st);
    ++out[0].source_utterances;
  }
  return out;
}

// ---------------------------------------------------------------- locomo

struct Utterance {
  std::string text;
  std::string dia_id;
};

// "session_12" -> 12; -1 for other keys (including "session_12_date_time").
int SessionNumber(const std::string& key) {
  constexpr std::string_view kPrefix = "session_";
  if (key.size() <= kPrefix.size() || key.size() > kPrefix.size() + 6 ||
      key.compare(0, kPrefix.size(), kPrefix) != 0) {
    return -1;
  }
  int n = 0;
  for (size_t i = kPrefix.size(); i < key.size(); ++i) {
    if (key[i] < '0' || key[i] > '9') return -1;
    n = n * 10 + (key[i] - '0');
  }
  return n;
}

// One LoCoMo utterance; a blip caption is appended to its text.
Status ReadUtterance(const Json& u, const ParsedDialogue& d, std::string& speaker, Utterance& utt) {
  if (!u.is_object()) return Bad("expected a JSON object");
  for (const char* f : {"speaker", "dia_id", "text"}) {
    if (!u.contains(f) || !u[f].is_string()) return Bad("field " + Quote(f) + ": expected a string");
  }
  speaker = u["speaker"].get<std::string>();
  utt.dia_id = u["dia_id"].get<std::string>();
  utt.text = u["text"].get<std::string>();
  auto cap = u.find("blip_caption");
  if (cap != u.end() && cap->is_string() && !cap->get_ref<const std::string&>().empty()) {
    utt.text += " [shares a photo: " + cap->get<std::string>() + "]";
  }
  if (speaker != d.user_name && speaker != d.assistant_name) {
    return Bad("utterance " + utt.dia_id + ": speaker " + Quote(speaker) +
               " is neither speaker_a nor speaker_b");
  }
  return Status::Ok();
}

// Reads the session under `key` (number `n`) and pairs its utterances into
// turns of `d` (see the header for the pairing and timing rules).
Status ReadLocomoSession(const Json& conv, const std::string& key, int n, ParsedDialogue& d) {
  const std::string date_key = key + "_date_time";
  ENGRAM_ASSIGN_OR_RETURN(const std::optional<TimeMs> start, TimeField(conv, date_key.c_str()));
  const std::string metadata = Dump(Json{{"session", n}});
  int turn_index = 0;
  auto emit = [&](const Utterance* user, const Utterance* asst) {
    TurnInput& t = d.turns.emplace_back();
    if (user) t.user_text = user->text;
    if (asst) t.assistant_text = asst->text;
    t.source_ref = user && asst ? user->dia_id + "," + asst->dia_id : (user ? user : asst)->dia_id;
    if (user) t.user_source_ref = user->dia_id;
    if (asst) t.assistant_source_ref = asst->dia_id;
    if (start) t.event_time = *start + static_cast<TimeMs>(turn_index++) * 1000;
    t.metadata = metadata;
    t.user_name = d.user_name;
    t.assistant_name = d.assistant_name;
  };
  std::optional<Utterance> pending;  // a speaker_a utterance awaiting its reply
  const Json& list = conv.at(key);
  for (size_t i = 0; i < list.size(); ++i) {
    Utterance utt;
    std::string speaker;
    Status st = ReadUtterance(list[i], d, speaker, utt);
    if (!st.ok()) return Prefixed(key + "[" + std::to_string(i) + "]", st);
    ++d.source_utterances;
    if (speaker == d.user_name) {
      if (pending) emit(&*pending, nullptr);
      pending = std::move(utt);
    } else {
      emit(pending ? &*pending : nullptr, &utt);
      pending.reset();
    }
  }
  if (pending) emit(&*pending, nullptr);
  return Status::Ok();
}

Status ReadLocomoSample(const Json& sample, ParsedDialogue& d) {
  if (!sample.is_object()) return Bad("expected a JSON object");
  if (auto id = sample.find("sample_id"); id != sample.end() && !id->is_null()) {
    d.id = id->is_string() ? id->get<std::string>() : Dump(*id);
  }
  auto conv = sample.find("conversation");
  if (conv == sample.end() || !conv->is_object()) return Bad("field \"conversation\": expected a JSON object");
  ENGRAM_ASSIGN_OR_RETURN(d.user_name, StringField(*conv, "speaker_a"));
  ENGRAM_ASSIGN_OR_RETURN(d.assistant_name, StringField(*conv, "speaker_b"));
  if (d.user_name.empty() || d.assistant_name.empty()) {
    return Bad("fields \"speaker_a\" and \"speaker_b\" must be non-empty");
  }
  std::vector<std::pair<int, std::string>> sessions;  // numeric order, not lexical
  for (auto it = conv->begin(); it != conv->end(); ++it) {
    const int n = SessionNumber(it.key());
    if (n < 0) continue;
    if (!it->is_array()) return Bad("field " + Quote(it.key()) + ": expected an array");
    sessions.emplace_back(n, it.key());
  }
  std::sort(sessions.begin(), sessions.end());
  for (const auto& [n, key] : sessions) ENGRAM_RETURN_IF_ERROR(ReadLocomoSession(*conv, key, n, d));
  return Status::Ok();
}

std::string SampleWhere(size_t i, const Json& sample) {
  std::string where = "sample " + std::to_string(i);
  if (sample.is_object()) {
    auto id = sample.find("sample_id");
    if (id != sample.end() && id->is_string()) where += " (" + Quote(id->get<std::string>()) + ")";
  }
  return where;
}

Result<std::vector<ParsedDialogue>> ParseLocomo(const Json& doc) {
  if (!doc.is_array()) return Bad("locomo: expected a JSON array");
  std::vector<ParsedDialogue> out;
  for (size_t i = 0; i < doc.size(); ++i) {
    ParsedDialogue d;
    Status st = ReadLocomoSample(doc[i], d);
    if (!st.ok()) return Prefixed(SampleWhere(i, doc[i]), st);
    out.push_back(std::move(d));
  }
  return out;
}

// One LoCoMo "qa" entry.
Status ReadQuestion(const Json& q, LocomoQuestion& out) {
  if (!q.is_object()) return Bad("expected a JSON object");
  ENGRAM_ASSIGN_OR_RETURN(out.question, StringField(q, "question"));
  if (auto a = q.find("answer"); a != q.end() && !a->is_null()) {
    if (!a->is_primitive()) return Bad("field \"answer\": expected a string or a number");
    out.answer = a->is_string() ? a->get<std::string>() : Dump(*a);
  }
  if (auto ev = q.find("evidence"); ev != q.end() && !ev->is_null()) {
    const bool strings = ev->is_array() && std::all_of(ev->begin(), ev->end(),
                                                        [](const Json& e) { return e.is_string(); });
    if (!strings) return Bad("field \"evidence\": expected an array of strings");
    for (const Json& e : *ev) out.evidence.push_back(e.get<std::string>());
  }
  auto cat = q.find("category");
  // LoCoMo's five categories; anything else (negative, 0, beyond int) would be
  // counted under a category no report has.
  if (cat == q.end() || !cat->is_number_integer()) return Bad("field \"category\": expected an integer");
  const bool in_range = cat->is_number_unsigned()
                            ? cat->get<std::uint64_t>() >= 1 && cat->get<std::uint64_t>() <= 5
                            : cat->get<std::int64_t>() >= 1 && cat->get<std::int64_t>() <= 5;
  if (!in_range) return Bad("field \"category\": expected 1 to 5");
  out.category = cat->get<int>();
  return Status::Ok();
}

// A whole-file document; `unit` names its top-level elements in errors
// ("element", "sample").
Result<Json> ParseWholeJson(std::string_view content, const char* unit) {
  size_t bad = 0;
  if (!ValidUtf8(content, &bad)) return Bad("invalid UTF-8 at byte " + std::to_string(bad));
  if (!json_limits::WithinDepth(content)) {
    const DeepSpot spot = LocateTooDeep(content);
    return Bad((spot.element >= 0 ? std::string(unit) + " " + std::to_string(spot.element) + " (line " +
                                        std::to_string(spot.line) + ")"
                                  : "line " + std::to_string(spot.line)) +
               ": " + json_limits::TooDeepMessage());
  }
  return ParseJson(content);
}

Result<std::vector<ParsedDialogue>> ParseText(std::string_view content, DialogueFormat format,
                                              const DialogueParseOptions& options) {
  content = StripBom(content);
  if (format == DialogueFormat::kJsonl) return ParseJsonl(content, options);
  if (format == DialogueFormat::kAuto) {
    const size_t first = content.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || content[first] != '[') return ParseJsonl(content, options);
  }
  ENGRAM_ASSIGN_OR_RETURN(Json doc, ParseWholeJson(content, format == DialogueFormat::kLocomo ? "sample" : "element"));
  if (format == DialogueFormat::kMemoryOs) return ParseMemoryOs(doc);
  if (format == DialogueFormat::kLocomo) return ParseLocomo(doc);
  // kAuto with a JSON array: decide by the first element.
  if (!doc.is_array()) return Bad("expected a JSON array");
  if (doc.empty()) return std::vector<ParsedDialogue>();
  const Json& e = doc.front();
  if (e.is_object() && e.contains("user_input")) return ParseMemoryOs(doc);
  if (e.is_object() && e.contains("conversation")) return ParseLocomo(doc);
  return Bad("cannot detect the dialogue format: a JSON array of neither memoryos records "
             "(user_input) nor locomo samples (conversation)");
}

}  // namespace

Result<DialogueFormat> ParseDialogueFormatName(std::string_view name) {
  if (name == "auto") return DialogueFormat::kAuto;
  if (name == "jsonl") return DialogueFormat::kJsonl;
  if (name == "memoryos") return DialogueFormat::kMemoryOs;
  if (name == "locomo") return DialogueFormat::kLocomo;
  return Bad("unknown dialogue format " + Quote(name) + " (expected auto, jsonl, memoryos or locomo)");
}

Result<std::vector<ParsedDialogue>> ParseDialogueText(std::string_view content,
                                                      DialogueFormat format,
                                                      const DialogueParseOptions& options) {
  try {
    return ParseText(content, format, options);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("dialogue parsing failed: ") + e.what());
  }
}

Result<std::vector<ParsedDialogue>> ParseDialogueFile(const std::string& path,
                                                      DialogueFormat format,
                                                      const DialogueParseOptions& options) {
  std::string content;
  try {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return Status::NotFound("no such dialogue file " + Quote(path));
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::IoError("cannot open dialogue file " + Quote(path));
    std::ostringstream buf;
    buf << in.rdbuf();
    if (in.bad()) return Status::IoError("cannot read dialogue file " + Quote(path));
    content = std::move(buf).str();
  } catch (const std::exception& e) {
    return Status::IoError("cannot read dialogue file " + Quote(path) + ": " + e.what());
  }
  auto r = ParseDialogueText(content, format, options);
  if (!r.ok()) return Prefixed(path, r.status());
  return r;
}

Result<std::vector<std::vector<LocomoQuestion>>> ParseLocomoQuestions(std::string_view content) {
  try {
    ENGRAM_ASSIGN_OR_RETURN(Json doc, ParseWholeJson(StripBom(content), "sample"));
    if (!doc.is_array()) return Bad("locomo: expected a JSON array");
    std::vector<std::vector<LocomoQuestion>> out;
    for (size_t i = 0; i < doc.size(); ++i) {
      const std::string where = SampleWhere(i, doc[i]);
      if (!doc[i].is_object()) return Bad(where + ": expected a JSON object");
      std::vector<LocomoQuestion>& qs = out.emplace_back();
      auto qa = doc[i].find("qa");
      if (qa == doc[i].end() || qa->is_null()) continue;
      if (!qa->is_array()) return Bad(where + ": field \"qa\": expected an array");
      for (size_t k = 0; k < qa->size(); ++k) {
        Status st = ReadQuestion((*qa)[k], qs.emplace_back());
        if (!st.ok()) return Prefixed(where + ": qa[" + std::to_string(k) + "]", st);
      }
    }
    return out;
  } catch (const std::exception& e) {
    return Status::Internal(std::string("locomo question parsing failed: ") + e.what());
  }
}

}  // namespace engram
