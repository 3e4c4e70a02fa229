// OpenAI wire format: bodies, replies, SSE stream and the <think> filter.
#include "models/openai/openai_wire.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <exception>

#include <nlohmann/json.hpp>

#include "core/json_limits.hpp"

namespace engram::openai_wire {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

std::int64_t IntField(const Json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return 0;
  // A count no reply can mean (beyond 2^53, where doubles stop being exact
  // integers; converting past the int64 range would be undefined) is ignored
  // like a missing one.
  const double v = it->get<double>();
  return std::isfinite(v) && v > 0 && v < 9007199254740992.0 ? static_cast<std::int64_t>(v) : 0;
}

std::string StringField(const Json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A reply from the endpoint, parsed; discarded (like malformed JSON) when it
// nests deeper than any reply means (json_limits::kMaxDepth).
Json ParseReply(std::string_view body) {
  if (!json_limits::WithinDepth(body)) return Json(Json::value_t::discarded);
  return Json::parse(body.begin(), body.end(), nullptr, false);
}

// The text of a Responses API response object: the "output_text" parts of
// its output messages, joined.
std::string OutputText(const Json& response) {
  std::string text;
  auto output = response.find("output");
  if (output == response.end() || !output->is_array()) return text;
  for (const Json& item : *output) {
    if (!item.is_object() || StringField(item, "type") != "message") continue;
    auto content = item.find("content");
    if (content == item.end() || !content->is_array()) continue;
    for (const Json& part : *content) {
      if (StringField(part, "type") == "output_text") text += StringField(part, "text");
    }
  }
  return text;
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Length of the longest proper prefix of `tag` that `s` ends with.
std::size_t PartialTagSuffix(const std::string& s, std::string_view tag) {
  const std::size_t max = std::min(s.size(), tag.size() - 1);
  for (std::size_t n = max; n > 0; --n) {
    if (std::string_view(s).substr(s.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

Result<std::string> BuildChatBody(const std::string& model, const ChatRequest& request,
                                  const ChatBodyOptions& options) {
  try {
    Json body = Json::object();
    body["model"] = model;
    Json messages = Json::array();
    for (const auto& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    body["messages"] = std::move(messages);
    if (request.json_object) body["response_format"] = {{"type", "json_object"}};
    if (options.temperature >= 0) body["temperature"] = options.temperature;
    if (options.max_tokens > 0)
      body[options.use_max_completion_tokens ? "max_completion_tokens" : "max_tokens"] = options.max_tokens;
    if (options.stream) {
      body["stream"] = true;
      if (options.stream_usage) body["stream_options"] = {{"include_usage", true}};
    }
    return Dump(body);
  } catch (const std::exception&) {
    return Status::Internal("cannot build the chat request");
  }
}

Result<ChatResult> ParseChatReply(const std::string& body) {
  try {
    const Json j = ParseReply(body);
    if (j.is_discarded() || !j.is_object()) return Status::Unavailable("malformed reply (not JSON)");
    auto choices = j.find("choices");
    if (choices == j.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object())
      return Status::Unavailable("malformed reply (no choices)");
    const Json& first = (*choices)[0];
    ChatResult out;
    auto message = first.find("message");
    if (message != first.end()) out.content = StringField(*message, "content");
    out.finish_reason = StringField(first, "finish_reason");
    if (auto usage = j.find("usage"); usage != j.end()) {
      out.prompt_tokens = IntField(*usage, "prompt_tokens");
      out.completion_tokens = IntField(*usage, "completion_tokens");
    }
    return out;
  } catch (const std::exception&) {
    return Status::Unavailable("malformed reply");
  }
}

Result<ChatResult> ParseResponsesReply(const std::string& body) {
  try {
    const Json j = ParseReply(body);
    if (j.is_discarded() || !j.is_object()) return Status::Unavailable("malformed reply (not JSON)");
    auto output = j.find("output");
    if (output == j.end() || !output->is_array()) return Status::Unavailable("malformed reply (no output)");
    ChatResult out;
    out.content = OutputText(j);
    out.finish_reason = StringField(j, "status");
    if (out.finish_reason.empty()) out.finish_reason = "completed";
    if (auto usage = j.find("usage"); usage != j.end()) {
      out.prompt_tokens = IntField(*usage, "input_tokens");
      out.completion_tokens = IntField(*usage, "output_tokens");
    }
    return out;
  } catch (const std::exception&) {
    return Status::Unavailable("malformed reply");
  }
}

Result<std::string> BuildEmbedBody(const std::string& model, const std::vector<std::string>& inputs,
                                   std::size_t begin, std::size_t end) {
  try {
    Json input = Json::array();
    for (std::size_t i = begin; i < end && i < inputs.size(); ++i) input.push_back(inputs[i]);
    return Dump(Json{{"model", model}, {"input", std::move(input)}});
  } catch (const std::exception&) {
    return Status::Internal("cannot build the embeddings request");
  }
}

Result<std::vector<Vector>> ParseEmbedReply(const std::string& body, std::size_t expected, std::int64_t* tokens) {
  try {
    const Json j = ParseReply(body);
    if (j.is_discarded() || !j.is_object()) return Status::Unavailable("malformed reply (not JSON)");
    auto data = j.find("data");
    if (data == j.end() || !data->is_array()) return Status::Unavailable("malformed reply (no data)");
    if (data->size() != expected)
      return Status::Unavailable("reply has " + std::to_string(data->size()) + " vectors for " +
                                 std::to_string(expected) + " inputs");
    std::vector<Vector> out(expected);
    std::vector<bool> seen(expected, false);
    std::size_t dim = 0;
    for (std::size_t pos = 0; pos < data->size(); ++pos) {
      const Json& item = (*data)[pos];
      if (!item.is_object()) return Status::Unavailable("malformed reply (bad item)");
      std::size_t index = pos;
      if (auto it = item.find("index"); it != item.end()) {
        if (!it->is_number_integer() || it->get<std::int64_t>() < 0) return Status::Unavailable("malformed reply (bad index)");
        index = static_cast<std::size_t>(it->get<std::int64_t>());
      }
      if (index >= expected || seen[index]) return Status::Unavailable("malformed reply (bad index)");
      seen[index] = true;
      auto emb = item.find("embedding");
      if (emb != item.end() && emb->is_string())
        return Status::Unavailable("base64 embeddings are not supported");
      if (emb == item.end() || !emb->is_array() || emb->empty())
        return Status::Unavailable("malformed reply (no embedding)");
      Vector& v = out[index];
      v.reserve(emb->size());
      for (const Json& x : *emb) {
        if (!x.is_number()) return Status::Unavailable("malformed reply (non-numeric embedding)");
        const float f = static_cast<float>(x.get<double>());
        if (!std::isfinite(f)) return Status::Unavailable("malformed reply (non-finite embedding)");
        v.push_back(f);
      }
      if (dim == 0) dim = v.size();
      if (v.size() != dim) return Status::Unavailable("reply vectors differ in dimension");
    }
    if (tokens) {
      if (auto usage = j.find("usage"); usage != j.end()) {
        const std::int64_t t = IntField(*usage, "prompt_tokens");
        *tokens += t > 0 ? t : IntField(*usage, "total_tokens");
      }
    }
    return out;
  } catch (const std::exception&) {
    return Status::Unavailable("malformed reply");
  }
}

std::string ErrorIdentifier(const std::string& body) {
  try {
    const Json j = ParseReply(body);
    if (j.is_discarded() || !j.is_object()) return {};
    auto err = j.find("error");
    if (err == j.end() || !err->is_object()) return {};
    for (const char* key : {"code", "type"}) {
      const std::string id = StringField(*err, key);
      if (id.empty() || id.size() > 64) continue;
      const bool clean = std::all_of(id.begin(), id.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '_' || c == '.' || c == '-';
      });
      if (clean) return id;
    }
  } catch (const std::exception&) {
  }
  return {};
}

bool MentionsUnsupported(const std::string& body, std::string_view param) {
  std::string lower(body);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.find(param) == std::string::npos) return false;
  for (std::string_view phrase : {"unsupported", "not supported", "does not support", "unrecognized",
                                  "unknown parameter", "not permitted", "not allowed"}) {
    if (lower.find(phrase) != std::string::npos) return true;
  }
  return false;
}

std::int64_t RetryAfterMs(const HttpResponse& reply) {
  auto parse = [](const std::string& text, double scale) -> std::int64_t {
    if (text.empty()) return -1;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    while (end && *end == ' ') ++end;
    if (!end || *end != '\0' || !std::isfinite(v) || v < 0 || v > 1e9) return -1;
    return static_cast<std::int64_t>(std::llround(v * scale));
  };
  const std::int64_t ms = parse(reply.Header("retry-after-ms"), 1.0);
  return ms >= 0 ? ms : parse(reply.Header("retry-after"), 1000.0);
}

std::string ThinkFilter::Emit(std::string_view text) {
  if (after_block_) {
    while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
    if (!text.empty()) after_block_ = false;
  }
  return std::string(text);
}

std::string ThinkFilter::Feed(std::string_view piece) {
  pending_.append(piece);
  std::string out;
  for (;;) {
    const std::string_view tag = in_think_ ? kClose : kOpen;
    const std::size_t at = pending_.find(tag);
    if (at != std::string::npos) {
      if (!in_think_) out += Emit(std::string_view(pending_).substr(0, at));
      pending_.erase(0, at + tag.size());
      in_think_ = !in_think_;
      if (!in_think_) after_block_ = true;
      continue;
    }
    // Hold back a possible beginning of the tag; the rest is final.
    const std::size_t keep = PartialTagSuffix(pending_, tag);
    if (!in_think_) out += Emit(std::string_view(pending_).substr(0, pending_.size() - keep));
    pending_.erase(0, pending_.size() - keep);
    return out;
  }
}

std::string ThinkFilter::Finish() {
  std::string out = in_think_ ? std::string() : Emit(pending_);
  pending_.clear();
  return out;
}

bool SseChatStream::Feed(std::string_view chunk) {
  try {
    buffer_.append(chunk);
    // Only the bytes not searched before are searched for a line break, so a
    // long line arriving in small chunks costs linear time, not quadratic.
    std::size_t start = 0;
    std::size_t from = scanned_;
    for (std::size_t nl; (nl = buffer_.find('\n', from)) != std::string::npos; start = from = nl + 1) {
      std::string_view line(buffer_.data() + start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      Line(line);
      if (callback_failed_) break;
    }
    buffer_.erase(0, std::min(start, buffer_.size()));
    scanned_ = callback_failed_ ? 0 : buffer_.size();
  } catch (const std::exception&) {
    malformed_ = true;  // reported by Finish()
  }
  return !callback_failed_;
}

void SseChatStream::Line(std::string_view line) {
  if (line.empty() || line.front() == ':' || line.rfind("data:", 0) != 0) return;  // comments, event:, id:
  line.remove_prefix(5);
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  while (!line.empty() && IsSpace(line.back())) line.remove_suffix(1);
  if (line == "[DONE]") {
    done_ = done_ || wire_ == StreamWire::kChat;  // a Responses answer ends with response.completed alone
    return;
  }
  const Json j = ParseReply(line);
  if (j.is_discarded() || !j.is_object()) {
    malformed_ = true;
    return;
  }
  if (wire_ == StreamWire::kResponses) {
    ResponsesEvent(j);
  } else {
    ChatEvent(j);
  }
}

void SseChatStream::ChatEvent(const Json& j) {
  if (j.contains("error")) {
    error_event_ = true;
    return;
  }
  if (auto choices = j.find("choices"); choices != j.end() && choices->is_array() && !choices->empty()) {
    const Json& first = (*choices)[0];
    if (first.is_object()) {
      if (auto delta = first.find("delta"); delta != first.end()) {
        const std::string text = StringField(*delta, "content");
        if (!text.empty()) {
          result_.content += text;
          Deliver(filter_.Feed(text));
        }
      }
      const std::string reason = StringField(first, "finish_reason");
      if (!reason.empty()) result_.finish_reason = reason;
    }
  }
  if (auto usage = j.find("usage"); usage != j.end() && usage->is_object()) {
    result_.prompt_tokens = IntField(*usage, "prompt_tokens");
    result_.completion_tokens = IntField(*usage, "completion_tokens");
  }
}

void SseChatStream::ResponsesEvent(const Json& j) {
  const std::string type = StringField(j, "type");
  if (type == "response.output_text.delta") {
    const std::string text = StringField(j, "delta");
    if (!text.empty()) {
      result_.content += text;
      Deliver(filter_.Feed(text));
    }
  } else if (type == "response.completed") {
    done_ = true;
    result_.finish_reason = "completed";
    if (auto response = j.find("response"); response != j.end() && response->is_object()) {
      // The whole answer, for an endpoint that sent no text deltas.
      if (result_.content.empty()) {
        result_.content = OutputText(*response);
        Deliver(filter_.Feed(result_.content));
      }
      if (auto usage = response->find("usage"); usage != response->end() && usage->is_object()) {
        result_.prompt_tokens = IntField(*usage, "input_tokens");
        result_.completion_tokens = IntField(*usage, "output_tokens");
      }
    }
  } else if (type == "response.incomplete") {
    incomplete_ = true;
  } else if (type == "response.failed" || type == "error" || (type.empty() && j.contains("error"))) {
    error_event_ = true;
  }
}

void SseChatStream::Deliver(const std::string& text) {
  if (text.empty() || on_delta_ == nullptr || !*on_delta_ || callback_failed_) return;
  try {
    (*on_delta_)(text);
    delivered_ = true;
  } catch (...) {
    callback_failed_ = true;
  }
}

Status SseChatStream::Finish() {
  try {
    if (!buffer_.empty()) {
      std::string last;
      last.swap(buffer_);
      Line(last);
    }
    Deliver(filter_.Finish());
  } catch (const std::exception&) {
    malformed_ = true;
  }
  if (callback_failed_) return Status::Internal("stream callback failed");
  if (error_event_) return Status::Unavailable("stream reported an error");
  if (malformed_) return Status::Unavailable("malformed stream");
  if (incomplete_) return Status::Unavailable("the answer is incomplete");
  if (!done_ && (wire_ == StreamWire::kResponses || result_.finish_reason.empty()))
    return Status::Unavailable("stream ended early");
  return Status::Ok();
}

}  // namespace engram::openai_wire
