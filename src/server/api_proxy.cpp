// The OpenAI-compatible memory proxy: POST /v1/chat/completions, POST
// /v1/responses and GET /v1/models in OpenAI's format, so that any OpenAI
// client gets memory by changing its base URL. For a request that names a
// user (the `user` field, or X-Engram-User), the context retrieved for the
// last user message is added to the prompt (a chat completion: as a system
// message; a Responses request: after its instructions); the request goes to
// the configured model endpoint otherwise untouched (tools, response_format,
// temperature, reasoning parameters, previous_response_id), and the answer
// comes back as it is, streamed as it arrives or not. Only a complete answer
// with text is admitted, with a generation receipt naming the memory
// versions that were in the prompt.
#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/api.hpp"
#include "wire/json.hpp"

namespace engram::server {

using nlohmann::json;

namespace {

// OpenAI's error shape, {"error": {"message", "type", "code", "param"}},
// with engram's request id alongside.
HttpResponse OpenAiError(const Call& c, int status, const std::string& type, const std::string& code,
                         const std::string& message, const std::string& param = "") {
  json err = {{"message", message},
              {"type", type},
              {"code", code},
              {"param", param.empty() ? json(nullptr) : json(param)},
              {"request_id", c.req.request_id}};
  return Json(status, {{"error", err}});
}

constexpr const char* kNoModel =
    "no model endpoint is configured: set ENGRAM_LLM_BASE_URL and ENGRAM_LLM_MODEL, or the [llm] table of engram.toml";

// A Responses stream's closing event types: its answer is over.
constexpr std::string_view kClosingTypes[] = {"response.completed", "response.incomplete",
                                              "response.failed"};
bool ClosesResponse(std::string_view type) {
  return std::find(std::begin(kClosingTypes), std::end(kClosingTypes), type) !=
         std::end(kClosingTypes);
}

// Whether a line of an event stream begins its end: "data: [DONE]" of a chat
// completion (the space after the colon optional, as in any SSE field), or a
// Responses stream's closing event, named by an "event:" line or, from an
// endpoint that sends no such lines, by its data's "type".
bool EndsStream(std::string_view line) {
  auto value = [&](std::size_t field) {
    std::string_view v = line.substr(field);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
  };
  if (line.starts_with("event:")) return ClosesResponse(value(6));
  if (!line.starts_with("data:")) return false;
  const std::string_view data = value(5);
  if (data == "[DONE]") return true;
  // Only a line naming a closing type is parsed, not every delta.
  if (std::none_of(std::begin(kClosingTypes), std::end(kClosingTypes),
                   [&](std::string_view t) { return data.find(t) != std::string_view::npos; })) {
    return false;
  }
  const json j = json::parse(data, nullptr, false);
  if (!j.is_object()) return false;
  const auto type = j.find("type");
  return type != j.end() && type->is_string() &&
         ClosesResponse(type->get_ref<const std::string&>());
}

// A relayed event stream's end, held back until the exchange is admitted:
// the stream goes to the client line by line as it arrives (an SSE client
// reads whole lines), up to the line that begins its end (EndsStream), which
// with all after it is written after the admission, so that a client that
// has read the whole stream finds the exchange in memory (GET /v1/turns, the
// context of its next request).
class HeldStreamEnd {
 public:
  // What of the stream, with `chunk` added, to write now.
  std::string Take(std::string_view chunk) {
    if (!held_.empty()) {
      held_.append(chunk);
      return {};
    }
    std::size_t line = 0;                // the first line not written yet
    std::size_t from = partial_.size();  // (the bytes before hold no line break)
    partial_.append(chunk);
    for (std::size_t eol; (eol = partial_.find('\n', from)) != std::string::npos;
         line = from = eol + 1) {
      std::string_view text(partial_.data() + line, eol - line);
      if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
      if (EndsStream(text)) {
        std::string now = partial_.substr(0, line);
        held_ = partial_.substr(line);
        partial_.clear();
        return now;
      }
    }
    std::string now = partial_.substr(0, line);
    partial_.erase(0, line);
    return now;
  }
  // The held end and whatever followed it, or an unfinished last line.
  std::string Rest() { return std::exchange(held_, {}) + std::exchange(partial_, {}); }

 private:
  std::string partial_;  // an unfinished line (never a line break)
  std::string held_;     // from the closing event on
};

// The text of a message's content: a string, or the text parts of an array
// (chat completions' "text", the Responses API's "input_text").
std::string ContentText(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array()) {
    for (const auto& part : content) {
      if (part.is_object() && part.contains("type") && (part["type"] == "text" || part["type"] == "input_text") &&
          part.contains("text") && part["text"].is_string()) {
        if (!out.empty()) out += "\n";
        out += part["text"].get<std::string>();
      }
    }
  }
  return out;
}

std::string Render(const std::string& tmpl, const std::string& memory) {
  std::string out = tmpl;
  const std::string mark = "{memory}";
  for (std::size_t at = 0; (at = out.find(mark, at)) != std::string::npos; at += memory.size()) {
    out.replace(at, mark.size(), memory);
  }
  return out;
}

std::string ItemIds(const std::vector<RetrievedItem>& items) {
  std::string out;
  for (const auto& i : items) {
    if (!out.empty()) out += ",";
    out += std::string(ItemKindName(i.kind)) + ":" + std::to_string(i.id) + "@" + std::to_string(i.version);
  }
  return out;
}

// The text of the last message with role "user" of an array of messages
// (or of a Responses request's input items).
std::string LastUserText(const json& messages) {
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    if (it->is_object() && it->value("role", json()) == "user") return ContentText(it->value("content", json()));
  }
  return {};
}

// A field that must be of one JSON type when present (null counts as absent
// where `null_ok`).
std::optional<std::string> WrongType(const json& body, const char* field, json::value_t type, const char* type_name,
                                     bool null_ok = false) {
  auto it = body.find(field);
  if (it == body.end() || it->type() == type || (null_ok && it->is_null())) return std::nullopt;
  return std::string(field) + ": must be " + type_name;
}

}  // namespace

// What differs between the proxied APIs: which endpoint, how a body is
// checked, where its question is and where memory goes, and how a stream
// says that the endpoint failed.
struct ProxyShape {
  PassthroughApi api;
  // An error message and its field, or nothing when the body is well formed.
  std::function<std::optional<std::pair<std::string, std::string>>(const json& body)> check;
  std::function<std::string(const json& body)> question;
  std::function<void(json& body, std::string note, const std::string& position)> add_memory;
  std::function<std::string(const std::string& error)> stream_error;  // one SSE event
};

void Api::RegisterProxy(HttpServer& s) {
  Add(s, "GET", "/v1/models", Role::kRead, false, [this](Call& c) {
    ChatPassthrough* upstream = options_.upstream ? options_.upstream() : nullptr;
    if (!upstream) {
      return OpenAiError(c, 409, "invalid_request_error", "failed_precondition", kNoModel);
    }
    json model = {{"id", upstream->DefaultModel()}, {"object", "model"}, {"created", 0},
                  {"owned_by", "engram"}};
    return Json(200, {{"object", "list"}, {"data", json::array({model})}});
  });

  // Chat completions: memory is a system message among the messages.
  static const ProxyShape kChat{
      PassthroughApi::kChatCompletions,
      [](const json& body) -> std::optional<std::pair<std::string, std::string>> {
        auto messages = body.find("messages");
        if (messages == body.end() || !messages->is_array() || messages->empty()) {
          return std::make_pair("messages: a non-empty array is required", "messages");
        }
        for (std::size_t i = 0; i < messages->size(); ++i) {
          const json& m = (*messages)[i];
          if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
            return std::make_pair("messages[" + std::to_string(i) + "]: an object with a string role is required",
                                  std::string("messages"));
          }
        }
        return std::nullopt;
      },
      [](const json& body) { return LastUserText(body["messages"]); },
      [](json& body, std::string note, const std::string& position) {
        json& messages = body["messages"];
        json message = {{"role", "system"}, {"content", std::move(note)}};
        if (position == "last") {
          messages.insert(messages.end() - 1, std::move(message));  // just before the last message
          return;
        }
        auto at = messages.begin();  // after the caller's leading system messages
        while (at != messages.end() && ((*at)["role"] == "system" || (*at)["role"] == "developer")) ++at;
        messages.insert(at, std::move(message));
      },
      [](const std::string& error) {
        json e = {{"error", {{"message", error}, {"type", "server_error"}, {"code", "upstream_error"}}}};
        return "data: " + wire::Dump(e) + "\n\n";
      }};

  // The Responses API: memory follows the request's instructions, which
  // apply to this request alone (a response chained by previous_response_id
  // does not inherit them), so memory never piles up in a conversation the
  // endpoint keeps.
  static const ProxyShape kResponses{
      PassthroughApi::kResponses,
      [](const json& body) -> std::optional<std::pair<std::string, std::string>> {
        auto input = body.find("input");
        if (input != body.end() && !input->is_string() && !input->is_array()) {
          return std::make_pair("input: must be a string or an array of input items", "input");
        }
        if (input != body.end() && input->is_array()) {
          for (std::size_t i = 0; i < input->size(); ++i) {
            const json& item = (*input)[i];
            if (!item.is_object() || (item.contains("role") && !item["role"].is_string())) {
              return std::make_pair("input[" + std::to_string(i) + "]: an object (with a string role, if any) is required",
                                    std::string("input"));
            }
          }
        }
        if (auto e = WrongType(body, "instructions", json::value_t::string, "a string", true)) {
          return std::make_pair(*e, "instructions");
        }
        return std::nullopt;
      },
      [](const json& body) {
        auto input = body.find("input");
        if (input == body.end()) return std::string();
        return input->is_string() ? input->get<std::string>() : LastUserText(*input);
      },
      [](json& body, std::string note, const std::string&) {
        auto instructions = body.find("instructions");
        if (instructions != body.end() && instructions->is_string() && !instructions->get<std::string>().empty()) {
          note = instructions->get<std::string>() + "\n\n" + note;
        }
        body["instructions"] = std::move(note);
      },
      [](const std::string& error) {
        json e = {{"type", "error"}, {"code", "upstream_error"}, {"message", error}, {"param", nullptr},
                  {"sequence_number", 0}};
        return "event: error\ndata: " + wire::Dump(e) + "\n\n";
      }};

  Add(s, "POST", "/v1/chat/completions", Role::kWrite, true, [this](Call& c) { return ProxyExchange(c, kChat); });
  Add(s, "POST", "/v1/responses", Role::kWrite, true, [this](Call& c) { return ProxyExchange(c, kResponses); });
}

HttpResponse Api::ProxyExchange(Call& c, const ProxyShape& shape) {
  ChatPassthrough* upstream = options_.upstream ? options_.upstream() : nullptr;
  if (!upstream) {
    return OpenAiError(c, 409, "invalid_request_error", "failed_precondition", kNoModel);
  }
  json body = c.body;  // an object (ParseBody)
  if (auto bad = shape.check(body)) {
    return OpenAiError(c, 400, "invalid_request_error", "invalid_value", bad->first, bad->second);
  }
  if (auto e = WrongType(body, "stream", json::value_t::boolean, "a boolean")) {
    return OpenAiError(c, 400, "invalid_request_error", "invalid_type", *e, "stream");
  }
  if (auto e = WrongType(body, "user", json::value_t::string, "a string")) {
    return OpenAiError(c, 400, "invalid_request_error", "invalid_type", *e, "user");
  }
  if (!body.contains("model")) body["model"] = upstream->DefaultModel();
  const bool stream = body.value("stream", false);

  // Who: the header, else the request's `user` field; the tenant from the key.
  std::string user = c.req.Header("x-engram-user");
  if (user.empty() && body.contains("user")) user = body["user"].get<std::string>();
  std::string assistant = c.req.Header("x-engram-assistant");
  if (assistant.empty()) assistant = "assistant";
  std::vector<std::pair<std::string, std::string>> headers;
  Scope scope;
  std::string question;
  RetrievalResult memory;
  // The exchange's claim on the quotas, held until it is admitted or not
  // (shared: the stream's function is copied).
  auto hold = std::make_shared<QuotaHold>();
  const bool with_memory = !user.empty();
  if (!with_memory) {
    headers.emplace_back("X-Engram-Memory", "off (no user: send the user field or X-Engram-User)");
  } else {
    scope = Scope{c.who.tenant, user, assistant};
    if (Status st = Engine::ValidateScope(scope); !st.ok()) {
      return OpenAiError(c, 400, "invalid_request_error", "invalid_value", st.message(), "user");
    }
    if (!c.who.AllowsUser(user)) {
      return OpenAiError(c, 403, "permission_error", "forbidden", "this API key may not access user '" + user + "'",
                         "user");
    }
    question = shape.question(body);
    // The exchange will be admitted: a tenant at its quota is refused
    // before the model is asked.
    try {
      *hold = CheckQuota(c, QuotaAsk{1, 0, static_cast<std::int64_t>(question.size())}, false);
    } catch (const ApiError& e) {
      HttpResponse r = OpenAiError(c, 429, "insufficient_quota", e.code, e.message);
      r.headers.emplace_back("Retry-After", "60");
      return r;
    }
    if (question.find_first_not_of(" \t\r\n") != std::string::npos) {
      RetrieveOptions ro;
      ro.budget_tokens = options_.proxy.budget_tokens;
      auto r = engine().Retrieve(scope, question, ro);
      if (!r.ok()) {
        const ApiError e = FromStatus(r.status());
        return OpenAiError(c, e.status, "invalid_request_error", e.code, e.message);
      }
      memory = std::move(r).value();
    }
    if (!memory.context.empty()) {
      shape.add_memory(body, Render(options_.proxy.template_text, memory.context), options_.proxy.position);
    }
    headers.emplace_back("X-Engram-Memory", memory.context.empty() ? "none found" : "added");
    headers.emplace_back("X-Engram-Memory-Tokens", std::to_string(memory.context.empty() ? 0 : memory.context_tokens));
    headers.emplace_back("X-Engram-Memory-Items", ItemIds(memory.items));
    proxy_memory_tokens_ += memory.context.empty() ? 0 : memory.context_tokens;
  }
  ++proxy_calls_;

  // After a complete answer with text: the exchange and its receipt.
  auto admit = [this, with_memory, scope, question, items = memory.items, upstream,
                hold](const PassthroughReply& reply) {
    if (!with_memory) return;
    if (!reply.complete || question.find_first_not_of(" \t\r\n") == std::string::npos ||
        reply.result.content.find_first_not_of(" \t\r\n") == std::string::npos) {
      ++proxy_skipped_;  // tool calls without text, empty answers, cut-off streams
      return;
    }
    TurnInput turn;
    turn.user_text = question;
    turn.assistant_text = reply.result.content;
    auto r = engine().AdmitAnswer(scope, turn, items, "proxy:" + upstream->DefaultModel(), "");
    if (!r.ok()) ++proxy_admit_failures_;
    else hold->Charge(TurnsAsk({turn}));
  };

  PassthroughRequest req;
  req.api = shape.api;
  req.body = wire::Dump(body);
  req.stream = stream;
  if (!stream) {
    auto reply = upstream->Forward(req);
    if (!reply.ok()) {
      ++proxy_upstream_failures_;
      const bool timeout = reply.status().message().find("timed out") != std::string::npos;
      return OpenAiError(c, timeout ? 504 : 502, "server_error", timeout ? "upstream_timeout" : "upstream_unavailable",
                         reply.status().message());
    }
    HttpResponse out;
    out.status = reply->status;
    out.content_type = reply->content_type.empty() ? "application/json" : reply->content_type;
    out.body = reply->body;
    out.headers = headers;
    if (reply->status < 200 || reply->status >= 300) {
      ++proxy_upstream_failures_;
      if (!json::accept(out.body)) {
        return OpenAiError(c, 502, "server_error", "upstream_error",
                           "the model endpoint answered HTTP " + std::to_string(reply->status));
      }
      return out;
    }
    admit(*reply);
    return out;
  }
  // Streamed: the endpoint's lines are relayed as they arrive, and its
  // closing event once the exchange is admitted (HeldStreamEnd); a client
  // that goes away cancels the exchange, and nothing is admitted.
  HttpResponse out;
  out.content_type = "text/event-stream";
  out.headers = headers;
  out.headers.emplace_back("Cache-Control", "no-cache");
  out.stream = [this, req, admit, upstream, stream_error = shape.stream_error](const StreamWriter& write) mutable {
    bool client_gone = false;
    HeldStreamEnd end;
    auto relay = [&](const std::string& text) {
      if (!text.empty() && !client_gone && !write(text)) client_gone = true;
    };
    req.on_chunk = [&](std::string_view chunk) {
      relay(end.Take(chunk));
      return !client_gone;
    };
    auto reply = upstream->Forward(req);
    if (client_gone) return;
    std::string error;
    if (!reply.ok()) {
      error = reply.status().message();
    } else if (reply->status < 200 || reply->status >= 300) {
      error = "the model endpoint answered HTTP " + std::to_string(reply->status);
    }
    if (!error.empty()) {
      ++proxy_upstream_failures_;
      relay(end.Rest());
      relay(stream_error(error));
      return;
    }
    admit(*reply);
    relay(end.Rest());
  };
  return out;
}

}  // namespace engram::server
