// OpenAiClient: chat completions and embeddings against OpenAI-compatible
// endpoints (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio, ...), with
// retries, reasoning-model adaptations and call counters.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "engram/result.hpp"
#include "models/embedder.hpp"
#include "models/http/http_client.hpp"
#include "models/llm.hpp"
#include "models/openai/provider_config.hpp"

namespace engram {

// ChatMessage, ChatRequest and ChatResult are the Llm seam's (models/llm.hpp).

// Counters since construction. A "call" is one logical request (one Chat, or
// one embeddings batch), whatever its number of attempts.
struct ClientStats {
  std::int64_t calls = 0;        // chat_calls + embed_calls
  std::int64_t chat_calls = 0;
  std::int64_t embed_calls = 0;
  std::int64_t failures = 0;     // calls that ended in an error
  std::int64_t retries = 0;      // extra HTTP attempts (backoff retries and adapted resends)
  std::int64_t prompt_tokens = 0;      // chat usage as reported by the server
  std::int64_t completion_tokens = 0;
  std::int64_t embed_tokens = 0;       // embeddings usage
};

struct OpenAiClientOptions {
  // Waits between attempts; the real clock when null. Tests record instead.
  std::function<void(std::chrono::milliseconds)> sleeper;
  std::uint64_t jitter_seed = 0;    // 0: seeded from std::random_device
  int backoff_base_ms = 500;        // full jitter: uniform [0, min(max, base * 2^retry)]
  int backoff_max_ms = 20000;
  int retry_after_max_ms = 60000;   // cap on a server's Retry-After
  int embed_batch_size = 64;        // inputs per embeddings request (1..64)
};

// Removes <think>...</think> blocks (an unterminated one runs to the end; a
// "</think>" with no opening tag drops everything before it) and, when
// something was removed, the whitespace that follows. Other text is unchanged.
std::string StripThinkBlocks(std::string_view text);

// True for model names that want max_completion_tokens (o1/o3/o4/gpt-5
// families, also after a "vendor/" prefix).
bool IsReasoningModelName(std::string_view model);

// The Llm seam over an OpenAI-compatible endpoint, plus embeddings (used by
// OpenAiEmbedder). Thread-safe: Chat and Embed may run concurrently.
class OpenAiClient final : public Llm, public ChatPassthrough {
 public:
  static constexpr int kMaxEmbedBatch = 64;

  // Chat uses the llm_* settings, Embed the embed_* ones. `http` is shared
  // between clients; when null every call fails with kInternal.
  OpenAiClient(ProviderConfig config, std::shared_ptr<HttpClient> http, OpenAiClientOptions options = {});

  // POST {llm_base_url}/chat/completions. Retries 408, 429, 5xx, timeouts and
  // connection failures up to max_retries times (exponential backoff with full
  // jitter, or the server's Retry-After / retry-after-ms capped at
  // retry_after_max_ms). A 400 naming max_tokens or temperature as
  // unsupported switches to max_completion_tokens / drops temperature, resends
  // once and is remembered for later calls. Errors: kInvalidArgument for an
  // empty request or missing llm settings; otherwise kUnavailable
  // "llm endpoint: HTTP 503 after 5 attempts" and the like - never the reply
  // body, never the key.
  [[nodiscard]] Result<ChatResult> Chat(const ChatRequest& request) override;
  // "openai:" + the chat model name.
  std::string Name() const override { return "openai:" + config_.llm_model; }

  // POST {embed_base_url}/embeddings in batches of embed_batch_size inputs;
  // one vector per input in input order (as the server returned them,
  // not normalised). Inputs are sent as given (servers reject empty strings:
  // callers filter them). Same retries and error forms as Chat
  // ("embed endpoint: ..."), plus kUnavailable for a reply whose vectors are
  // missing, duplicated or of unequal dimension.
  [[nodiscard]] Result<std::vector<Vector>> Embed(const std::vector<std::string>& texts);

  // The memory proxy's exchange: POST {llm_base_url}/chat/completions with
  // the caller's body, no retries and no adaptations; counted as a chat call.
  [[nodiscard]] Result<PassthroughReply> Forward(const PassthroughRequest& request) override;
  std::string DefaultModel() const override { return config_.llm_model; }

  ClientStats Stats() const;
  const ProviderConfig& config() const { return config_; }
  // The adaptations learnt so far (also true from the start for reasoning models).
  bool UsesMaxCompletionTokens() const { return use_max_completion_tokens_.load(); }
  bool OmitsTemperature() const { return omit_temperature_.load(); }

 private:
  struct Endpoint {
    const char* label;  // "llm endpoint" / "embed endpoint"
    std::string url;
    const std::string* api_key;
  };
  // One logical call: runs `attempt` until a 2xx reply, a final failure or the
  // retry budget is spent. `adapt` (may be null) sees every 400 and returns
  // true when it changed the request so that one more attempt is worthwhile.
  // `may_retry` (may be null) vetoes backoff retries (a stream that already
  // delivered text).
  Result<HttpResponse> Exchange(const Endpoint& ep, const std::function<Result<HttpResponse>()>& attempt,
                                const std::function<bool(const HttpResponse&)>& adapt,
                                const std::function<bool()>& may_retry);
  HttpRequest BaseRequest(const Endpoint& ep, std::string body) const;
  std::chrono::milliseconds BackoffDelay(int retry, const HttpResponse* reply);
  // Removes the keys from a message (defence in depth).
  std::string Scrub(std::string message) const;

  ProviderConfig config_;
  std::shared_ptr<HttpClient> http_;
  OpenAiClientOptions options_;

  std::atomic<bool> use_max_completion_tokens_{false};
  std::atomic<bool> omit_temperature_{false};
  std::atomic<bool> omit_stream_options_{false};

  std::mutex rng_mu_;
  std::mt19937_64 rng_;  // guarded by rng_mu_

  std::atomic<std::int64_t> chat_calls_{0}, embed_calls_{0}, failures_{0}, retries_{0};
  std::atomic<std::int64_t> prompt_tokens_{0}, completion_tokens_{0}, embed_tokens_{0};
};

}  // namespace engram
