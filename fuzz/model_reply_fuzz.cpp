// What comes back from a model endpoint (models/llm/model_json and
// models/openai/openai_wire): the JSON extractor of maintenance replies and
// its typed accessors, chat, Responses and embedding replies, error bodies,
// the SSE streams of both APIs and the <think> filter. Invariants: an extracted value prints and
// parses back to itself; an identifier from an error body looks like one; the
// SSE stream and the <think> filter give the same text whatever the chunking
// of the bytes (the first input byte picks the chunk size).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "models/llm/model_json.hpp"
#include "models/openai/openai_wire.hpp"

namespace {

using nlohmann::json;
namespace wire = engram::openai_wire;

void ReadFields(const json& doc) {
  for (const char* key : {"pages", "segments", "facts", "profile"}) {
    auto arr = engram::llmjson::ArrayField(doc, key);
    if (!arr.ok()) continue;
    int i = 0;
    for (const json& e : **arr) {
      if (!e.is_object()) continue;
      const std::string path = std::string(key) + "[" + std::to_string(i++) + "]";
      (void)engram::llmjson::String(e, "summary", path, true);
      (void)engram::llmjson::String(e, "text", path, false);
      (void)engram::llmjson::Bool(e, "continues", path);
      (void)engram::llmjson::Strings(e, "keywords", path);
      (void)engram::llmjson::Ints(e, "pages", path);
    }
  }
}

struct StreamOutcome {
  std::string deltas;
  bool ok = false;
  std::string content, finish;
};

StreamOutcome RunStream(std::string_view body, std::size_t chunk, wire::StreamWire kind) {
  StreamOutcome out;
  std::function<void(std::string_view)> on_delta = [&out](std::string_view d) { out.deltas += d; };
  wire::SseChatStream stream(&on_delta, kind);
  for (std::size_t at = 0; at < body.size(); at += chunk) {
    if (!stream.Feed(body.substr(at, chunk))) break;
  }
  out.ok = stream.Finish().ok();
  out.content = stream.result().content;
  out.finish = stream.result().finish_reason;
  return out;
}

std::string RunThink(std::string_view text, std::size_t chunk) {
  wire::ThinkFilter f;
  std::string out;
  for (std::size_t at = 0; at < text.size(); at += chunk) out += f.Feed(text.substr(at, chunk));
  return out + f.Finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 16;
  const std::string body(engram::fuzz::AsText(data + 1, size - 1));

  auto doc = engram::llmjson::Extract(body);
  if (doc.ok()) {
    const std::string printed = doc->dump(-1, ' ', false, json::error_handler_t::replace);
    const json again = json::parse(printed, nullptr, false);
    FUZZ_CHECK(!again.is_discarded(), "an extracted value does not parse once printed: " + printed);
    if (printed.find("\xEF\xBF\xBD") == std::string::npos) {
      FUZZ_CHECK(again == *doc || printed.find("NaN") != std::string::npos, "printed and parsed, it changed");
    }
    ReadFields(*doc);
  } else {
    FUZZ_CHECK(doc.status().code() == engram::StatusCode::kInvalidArgument, doc.status().ToString());
  }

  (void)wire::ParseChatReply(body);
  (void)wire::ParseResponsesReply(body);
  std::int64_t tokens = 0;
  (void)wire::ParseEmbedReply(body, 2, &tokens);
  const std::string id = wire::ErrorIdentifier(body);
  FUZZ_CHECK(id.size() <= 64, "identifier of " + std::to_string(id.size()) + " bytes");
  for (const char c : id) {
    FUZZ_CHECK((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                   c == '-',
               "identifier " + id);
  }
  (void)wire::MentionsUnsupported(body, "temperature");

  for (const auto kind : {wire::StreamWire::kChat, wire::StreamWire::kResponses}) {
    const StreamOutcome whole = RunStream(body, body.size() + 1, kind);
    const StreamOutcome pieces = RunStream(body, chunk, kind);
    FUZZ_CHECK(whole.deltas == pieces.deltas, "the SSE deltas depend on the chunking");
    FUZZ_CHECK(whole.ok == pieces.ok && whole.content == pieces.content && whole.finish == pieces.finish,
               "the SSE outcome depends on the chunking");
  }
  FUZZ_CHECK(RunThink(body, body.size() + 1) == RunThink(body, chunk), "the <think> filter depends on the chunking");
  return 0;
}
