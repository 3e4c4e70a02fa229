// OpenAiClient: transport, retries and adaptations around the wire format.
#include "models/openai/openai_client.hpp"

#include <algorithm>
#include <cctype>
#include <exception>
#include <optional>
#include <thread>
#include <utility>

#include "models/openai/openai_wire.hpp"

namespace engram {
namespace {

constexpr std::string_view kOpenTag = "<think>";
constexpr std::string_view kCloseTag = "</think>";

void EraseSpaceAt(std::string& s, std::size_t at) {
  std::size_t end = at;
  while (end < s.size() && (s[end] == ' ' || s[end] == '\n' || s[end] == '\r' || s[end] == '\t')) ++end;
  s.erase(at, end - at);
}

std::string AttemptsSuffix(int attempts) {
  return attempts > 1 ? " after " + std::to_string(attempts) + " attempts" : std::string();
}

// "http: timed out" -> "timed out"
std::string TransportText(const std::string& message) {
  return message.rfind("http: ", 0) == 0 ? message.substr(6) : message;
}

}  // namespace

std::string StripThinkBlocks(std::string_view text) {
  std::string s(text);
  const std::size_t open = s.find(kOpenTag);
  const std::size_t close = s.find(kCloseTag);
  if (close != std::string::npos && (open == std::string::npos || close < open)) {
    // The opening tag was part of the prompt template: drop the reasoning before it.
    s.erase(0, close + kCloseTag.size());
    EraseSpaceAt(s, 0);
  }
  for (std::size_t at; (at = s.find(kOpenTag)) != std::string::npos;) {
    const std::size_t end = s.find(kCloseTag, at + kOpenTag.size());
    s.erase(at, end == std::string::npos ? std::string::npos : end + kCloseTag.size() - at);
    EraseSpaceAt(s, at);
  }
  return s;
}

bool IsReasoningModelName(std::string_view model) {
  const std::size_t slash = model.rfind('/');
  if (slash != std::string_view::npos) model.remove_prefix(slash + 1);
  std::string lower(model);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view prefix : {"o1", "o3", "o4", "gpt-5"}) {
    if (lower.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

OpenAiClient::OpenAiClient(ProviderConfig config, std::shared_ptr<HttpClient> http, OpenAiClientOptions options)
    : config_(std::move(config)), http_(std::move(http)), options_(std::move(options)) {
  std::uint64_t seed = options_.jitter_seed;
  if (seed == 0) {
    try {
      std::random_device rd;
      seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    } catch (...) {
      seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
  }
  rng_.seed(seed);
  options_.embed_batch_size = std::clamp(options_.embed_batch_size, 1, kMaxEmbedBatch);
  options_.backoff_base_ms = std::max(0, options_.backoff_base_ms);
  options_.backoff_max_ms = std::max(options_.backoff_base_ms, options_.backoff_max_ms);
  options_.retry_after_max_ms = std::max(0, options_.retry_after_max_ms);
  if (IsReasoningModelName(config_.llm_model)) use_max_completion_tokens_ = true;
}

ClientStats OpenAiClient::Stats() const {
  ClientStats s;
  s.chat_calls = chat_calls_.load();
  s.embed_calls = embed_calls_.load();
  s.calls = s.chat_calls + s.embed_calls;
  s.failures = failures_.load();
  s.retries = retries_.load();
  s.prompt_tokens = prompt_tokens_.load();
  s.completion_tokens = completion_tokens_.load();
  s.embed_tokens = embed_tokens_.load();
  return s;
}

std::string OpenAiClient::Scrub(std::string message) const {
  for (const std::string* key : {&config_.llm_api_key, &config_.embed_api_key}) {
    if (key->size() < 4) continue;  // too short to match meaningfully
    for (std::size_t at; (at = message.find(*key)) != std::string::npos;) message.replace(at, key->size(), "[redacted]");
  }
  return message;
}

HttpRequest OpenAiClient::BaseRequest(const Endpoint& ep, std::string body) const {
  HttpRequest req;
  req.url = ep.url;
  req.body = std::move(body);
  req.connect_timeout_ms = config_.connect_timeout_ms;
  req.total_timeout_ms = config_.total_timeout_ms;
  req.headers.emplace_back("Content-Type", "application/json");
  if (!ep.api_key->empty()) req.headers.emplace_back("Authorization", "Bearer " + *ep.api_key);
  return req;
}

std::chrono::milliseconds OpenAiClient::BackoffDelay(int retry, const HttpResponse* reply) {
  if (reply != nullptr) {
    const std::int64_t ms = openai_wire::RetryAfterMs(*reply);
    if (ms >= 0) return std::chrono::milliseconds(std::min<std::int64_t>(ms, options_.retry_after_max_ms));
  }
  std::int64_t cap = options_.backoff_base_ms;
  for (int i = 0; i < retry && cap < options_.backoff_max_ms; ++i) cap *= 2;
  cap = std::min<std::int64_t>(cap, options_.backoff_max_ms);
  std::lock_guard<std::mutex> lock(rng_mu_);
  return std::chrono::milliseconds(std::uniform_int_distribution<std::int64_t>(0, cap)(rng_));
}

Result<HttpResponse> OpenAiClient::Exchange(const Endpoint& ep, const std::function<Result<HttpResponse>()>& attempt,
                                            const std::function<bool(const HttpResponse&)>& adapt,
                                            const std::function<bool()>& may_retry) {
  const std::string label = ep.label;
  int attempts = 0;
  int backoff_retries = 0;
  try {
    for (;;) {
      ++attempts;
      Result<HttpResponse> r = attempt();
      std::string failure;  // what went wrong with this attempt, when retryable
      std::optional<HttpResponse> reply;
      if (!r.ok()) {
        if (r.status().code() != StatusCode::kUnavailable) {
          ++failures_;
          return Status(r.status().code(), Scrub(label + ": " + TransportText(r.status().message())));
        }
        failure = TransportText(r.status().message());
      } else {
        const int code = r->status;
        if (code >= 200 && code < 300) return r;
        if (code == 400 && adapt && adapt(*r)) {
          ++retries_;  // resend at once with the adapted request
          continue;
        }
        failure = "HTTP " + std::to_string(code);
        if (code != 408 && code != 429 && code < 500) {
          const std::string id = openai_wire::ErrorIdentifier(r->body);
          ++failures_;
          return Status::Unavailable(
              Scrub(label + ": " + failure + (id.empty() ? "" : " (" + id + ")") + AttemptsSuffix(attempts)));
        }
        reply = std::move(r).value();
      }
      if (backoff_retries >= config_.max_retries || (may_retry && !may_retry())) {
        ++failures_;
        return Status::Unavailable(Scrub(label + ": " + failure + AttemptsSuffix(attempts)));
      }
      const auto delay = BackoffDelay(backoff_retries, reply ? &*reply : nullptr);
      ++backoff_retries;
      ++retries_;
      if (options_.sleeper) {
        options_.sleeper(delay);
      } else {
        std::this_thread::sleep_for(delay);
      }
    }
  } catch (const std::exception&) {
    ++failures_;
    return Status::Internal(label + ": unexpected failure");
  } catch (...) {
    ++failures_;
    return Status::Internal(label + ": unexpected failure");
  }
}

namespace {
// A chat answer the model did not finish: cut off at its token limit, or
// stopped by the endpoint's content filter.
bool CutOff(const std::string& finish_reason) { return finish_reason == "length" || finish_reason == "content_filter"; }
}  // namespace

Result<PassthroughReply> OpenAiClient::Forward(const PassthroughRequest& request) {
  if (config_.llm_base_url.empty()) return Status::InvalidArgument("llm endpoint: not configured (base URL is needed)");
  if (!http_) return Status::Internal("llm endpoint: no HTTP client");
  ++chat_calls_;
  try {
    const bool responses = request.api == PassthroughApi::kResponses;
    const Endpoint ep{"llm endpoint", config_.llm_base_url + (responses ? "/responses" : "/chat/completions"),
                      &config_.llm_api_key};
    HttpRequest req = BaseRequest(ep, request.body);
    PassthroughReply out;
    std::unique_ptr<openai_wire::SseChatStream> sse;
    if (request.stream) {
      req.headers.emplace_back("Accept", "text/event-stream");
      sse = std::make_unique<openai_wire::SseChatStream>(
          nullptr, responses ? openai_wire::StreamWire::kResponses : openai_wire::StreamWire::kChat);
      req.on_chunk = [&](std::string_view chunk) {
        sse->Feed(chunk);
        return !request.on_chunk || request.on_chunk(chunk);
      };
    }
    Result<HttpResponse> r = http_->Post(req);
    if (!r.ok()) {
      if (r.status().code() != StatusCode::kAborted) ++failures_;
      return Status(r.status().code(), Scrub("llm endpoint: " + r.status().message()));
    }
    out.status = r->status;
    out.content_type = r->Header("content-type");
    out.body = std::move(r->body);
    if (out.status < 200 || out.status >= 300) {
      ++failures_;
      return out;
    }
    if (sse) {
      out.complete = sse->Finish().ok() && !CutOff(sse->result().finish_reason);
      out.result = sse->result();
    } else {
      Result<ChatResult> parsed =
          responses ? openai_wire::ParseResponsesReply(out.body) : openai_wire::ParseChatReply(out.body);
      out.complete = parsed.ok() && (responses ? parsed->finish_reason == "completed" : !CutOff(parsed->finish_reason));
      if (parsed.ok()) out.result = std::move(parsed).value();
    }
    out.result.content = StripThinkBlocks(out.result.content);
    prompt_tokens_ += out.result.prompt_tokens;
    completion_tokens_ += out.result.completion_tokens;
    return out;
  } catch (const std::exception&) {
    ++failures_;
    return Status::Internal("llm endpoint: unexpected failure");
  }
}

Result<ChatResult> OpenAiClient::Chat(const ChatRequest& request) {
  if (config_.llm_base_url.empty() || config_.llm_model.empty())
    return Status::InvalidArgument("llm endpoint: not configured (base URL and model are needed)");
  if (request.messages.empty()) return Status::InvalidArgument("llm endpoint: no messages");
  if (!http_) return Status::Internal("llm endpoint: no HTTP client");
  ++chat_calls_;
  try {
    const Endpoint ep{"llm endpoint", config_.llm_base_url + "/chat/completions", &config_.llm_api_key};
    const bool stream = static_cast<bool>(request.on_delta);
    const double temperature = request.temperature >= 0 ? request.temperature : config_.temperature;
    const int max_tokens = request.max_tokens > 0 ? request.max_tokens : config_.max_tokens;
    std::unique_ptr<openai_wire::SseChatStream> sse;

    auto attempt = [&]() -> Result<HttpResponse> {
      openai_wire::ChatBodyOptions o;
      o.stream = stream;
      o.stream_usage = !omit_stream_options_.load();
      o.use_max_completion_tokens = use_max_completion_tokens_.load();
      o.temperature = omit_temperature_.load() ? -1 : temperature;
      o.max_tokens = max_tokens;
      ENGRAM_ASSIGN_OR_RETURN(std::string body, openai_wire::BuildChatBody(config_.llm_model, request, o));
      HttpRequest req = BaseRequest(ep, std::move(body));
      if (stream) {
        req.headers.emplace_back("Accept", "text/event-stream");
        // A fresh parser per attempt; deltas already shown are never resent
        // (may_retry below stops retries once something was delivered).
        sse = std::make_unique<openai_wire::SseChatStream>(&request.on_delta);
        req.on_chunk = [&sse](std::string_view chunk) { return sse->Feed(chunk); };
      }
      Result<HttpResponse> r = http_->Post(req);
      if (stream && sse->callback_failed()) return Status::Internal("stream callback failed");
      if (r.ok() && stream && r->status >= 200 && r->status < 300) ENGRAM_RETURN_IF_ERROR(sse->Finish());
      return r;
    };
    bool adapted_tokens = false, adapted_temperature = false, adapted_stream = false;
    auto adapt = [&](const HttpResponse& reply) {
      if (!adapted_tokens && max_tokens > 0 && !use_max_completion_tokens_.load() &&
          openai_wire::MentionsUnsupported(reply.body, "max_tokens")) {
        adapted_tokens = true;
        use_max_completion_tokens_ = true;
        return true;
      }
      if (!adapted_temperature && temperature >= 0 && !omit_temperature_.load() &&
          openai_wire::MentionsUnsupported(reply.body, "temperature")) {
        adapted_temperature = true;
        omit_temperature_ = true;
        return true;
      }
      if (!adapted_stream && stream && !omit_stream_options_.load() &&
          openai_wire::MentionsUnsupported(reply.body, "stream_options")) {
        adapted_stream = true;
        omit_stream_options_ = true;
        return true;
      }
      return false;
    };
    auto may_retry = [&sse] { return !(sse && sse->delivered()); };

    ENGRAM_ASSIGN_OR_RETURN(HttpResponse reply, Exchange(ep, attempt, adapt, may_retry));
    ChatResult out;
    if (stream) {
      out = sse->result();
    } else {
      Result<ChatResult> parsed = openai_wire::ParseChatReply(reply.body);
      if (!parsed.ok()) {
        ++failures_;
        return Status::Unavailable(Scrub("llm endpoint: " + parsed.status().message()));
      }
      out = std::move(parsed).value();
    }
    out.content = StripThinkBlocks(out.content);
    prompt_tokens_ += out.prompt_tokens;
    completion_tokens_ += out.completion_tokens;
    return out;
  } catch (const std::exception&) {
    ++failures_;
    return Status::Internal("llm endpoint: unexpected failure");
  }
}

Result<std::vector<Vector>> OpenAiClient::Embed(const std::vector<std::string>& texts) {
  if (texts.empty()) return std::vector<Vector>{};
  if (config_.embed_base_url.empty() || config_.embed_model.empty())
    return Status::InvalidArgument("embed endpoint: not configured (base URL and model are needed)");
  if (!http_) return Status::Internal("embed endpoint: no HTTP client");
  try {
    const Endpoint ep{"embed endpoint", config_.embed_base_url + "/embeddings", &config_.embed_api_key};
    std::vector<Vector> all;
    all.reserve(texts.size());
    const std::size_t batch = static_cast<std::size_t>(options_.embed_batch_size);
    for (std::size_t begin = 0; begin < texts.size(); begin += batch) {
      const std::size_t end = std::min(texts.size(), begin + batch);
      ++embed_calls_;
      Result<std::string> body = openai_wire::BuildEmbedBody(config_.embed_model, texts, begin, end);
      if (!body.ok()) {
        ++failures_;
        return Status(body.status().code(), "embed endpoint: " + body.status().message());
      }
      auto attempt = [&]() { return http_->Post(BaseRequest(ep, *body)); };
      ENGRAM_ASSIGN_OR_RETURN(HttpResponse reply, Exchange(ep, attempt, nullptr, nullptr));
      std::int64_t tokens = 0;
      Result<std::vector<Vector>> vectors = openai_wire::ParseEmbedReply(reply.body, end - begin, &tokens);
      if (!vectors.ok()) {
        ++failures_;
        return Status::Unavailable(Scrub("embed endpoint: " + vectors.status().message()));
      }
      if (!all.empty() && !vectors->empty() && (*vectors)[0].size() != all[0].size()) {
        ++failures_;
        return Status::Unavailable("embed endpoint: reply vectors differ in dimension");
      }
      embed_tokens_ += tokens;
      for (Vector& v : *vectors) all.push_back(std::move(v));
    }
    return all;
  } catch (const std::exception&) {
    ++failures_;
    return Status::Internal("embed endpoint: unexpected failure");
  }
}

}  // namespace engram
