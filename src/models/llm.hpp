// Llm: a chat-completion model, the seam where OpenAI-compatible endpoints
// (and test fakes) plug in for maintenance and answers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engram/result.hpp"

namespace engram {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

struct ChatRequest {
  std::vector<ChatMessage> messages;
  // Ask for a JSON object reply (response_format {"type":"json_object"}).
  // The reply text is returned as-is: parsing it is the caller's job.
  bool json_object = false;
  // Streaming: when set, the reply is requested as a server-sent event stream
  // and every text delta outside <think> blocks is passed here as it arrives
  // (on the calling thread). A stream that fails after a delta was delivered
  // is not retried (the caller has seen partial text).
  std::function<void(std::string_view delta)> on_delta;
  double temperature = -1;  // >= 0 overrides the configured temperature
  int max_tokens = 0;       // > 0 overrides the configured max_tokens
};

struct ChatResult {
  std::string content;        // reply text with any <think>...</think> removed
  std::string finish_reason;  // "stop", "length", ... ("" when not reported)
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
};

class Llm {
 public:
  virtual ~Llm() = default;
  // The model's identity for receipts and reports, e.g. "openai:gpt-4o-mini".
  virtual std::string Name() const = 0;
  // One completion (with the implementation's retries). Errors never carry
  // the reply body or credentials. Thread-safe.
  [[nodiscard]] virtual Result<ChatResult> Chat(const ChatRequest& request) = 0;
};

// Which of the endpoint's APIs a passed-through request is for.
enum class PassthroughApi {
  kChatCompletions,  // POST {base}/chat/completions
  kResponses,        // POST {base}/responses
};

// One request passed through unchanged (the memory proxy of `engram serve`):
// the caller's JSON body goes to the endpoint as it is, and the reply comes
// back as it is, streamed chunk by chunk when asked.
struct PassthroughRequest {
  PassthroughApi api = PassthroughApi::kChatCompletions;
  std::string body;  // the whole request body (JSON text)
  bool stream = false;
  // Streaming: each chunk of a 2xx reply's body as it arrives; false cancels
  // the exchange (Forward returns kAborted).
  std::function<bool(std::string_view chunk)> on_chunk;
};

struct PassthroughReply {
  int status = 0;             // the endpoint's HTTP status
  std::string content_type;   // of the reply
  std::string body;           // non-streamed replies and every non-2xx reply
  ChatResult result;          // the assistant text (and usage) of a 2xx reply
  bool complete = false;      // a 2xx reply that ended properly (a finish_reason other than
                              // "length" or "content_filter", or [DONE]; a Responses reply:
                              // status "completed")
};

class ChatPassthrough {
 public:
  virtual ~ChatPassthrough() = default;
  // The model a request without "model" gets.
  virtual std::string DefaultModel() const = 0;
  // One exchange, without retries (the caller's client retries). Transport
  // failures are statuses (kUnavailable; "timed out" for timeouts).
  [[nodiscard]] virtual Result<PassthroughReply> Forward(const PassthroughRequest& request) = 0;
};

}  // namespace engram
