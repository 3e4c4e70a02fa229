// The OpenAI wire format, kept apart from the transport and retry logic:
// request bodies, reply parsing, the SSE chat stream and the <think> filter.
// Internal to models/openai. Nothing here throws; nothing quotes a reply body
// or a key in an error message.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engram/result.hpp"
#include "models/openai/openai_client.hpp"

namespace engram::openai_wire {

struct ChatBodyOptions {
  bool stream = false;
  bool stream_usage = true;  // stream_options {"include_usage": true}
  bool use_max_completion_tokens = false;
  double temperature = -1;   // < 0: not sent
  int max_tokens = 0;        // 0: not sent
};

// The JSON body of a chat completion request (invalid UTF-8 is replaced).
[[nodiscard]] Result<std::string> BuildChatBody(const std::string& model, const ChatRequest& request,
                                                const ChatBodyOptions& options);

// content (raw, <think> kept), finish_reason and usage of a non-streamed reply.
// Errors are short texts such as "malformed reply (no choices)".
[[nodiscard]] Result<ChatResult> ParseChatReply(const std::string& body);

// The answer of a non-streamed reply of the Responses API (POST /responses):
// content is the text of its output messages' "output_text" parts, joined;
// finish_reason its "status" ("completed", "incomplete", "failed", ...;
// "completed" when a reply says none); usage from input_tokens and
// output_tokens. Errors are short texts such as "malformed reply (no output)".
[[nodiscard]] Result<ChatResult> ParseResponsesReply(const std::string& body);

// The JSON body of an embeddings request for inputs[begin, end).
[[nodiscard]] Result<std::string> BuildEmbedBody(const std::string& model, const std::vector<std::string>& inputs,
                                                 std::size_t begin, std::size_t end);

// Vectors of an embeddings reply ordered by their "index" field; exactly
// `expected` of them, all of one non-zero dimension. Adds usage to *tokens.
[[nodiscard]] Result<std::vector<Vector>> ParseEmbedReply(const std::string& body, std::size_t expected,
                                                          std::int64_t* tokens);

// A short identifier from an error reply ({"error": {"code"|"type": ...}}),
// only when it looks like one ([A-Za-z0-9_.-], at most 64 chars); else "".
std::string ErrorIdentifier(const std::string& body);

// True when a 400 body names `param` and says it is not supported.
bool MentionsUnsupported(const std::string& body, std::string_view param);

// Seconds from Retry-After or milliseconds from retry-after-ms; -1 if absent
// or unparsable (HTTP dates are not supported).
std::int64_t RetryAfterMs(const HttpResponse& reply);

// Drops <think>...</think> blocks from text that arrives in pieces (tags may
// be split across pieces). Feed returns the text that is safe to show now.
class ThinkFilter {
 public:
  std::string Feed(std::string_view piece);
  std::string Finish();  // what is still held back (a partial tag outside a block)

 private:
  std::string Emit(std::string_view text);
  std::string pending_;
  bool in_think_ = false;
  bool after_block_ = false;  // drop whitespace right after a block until text appears
};

// Which API a stream answers: chat completions ("data: {choices...}" lines
// ending with "data: [DONE]" or a finish_reason) or the Responses API (typed
// events: "response.output_text.delta" pieces, ending with
// "response.completed"; "response.incomplete", "response.failed" and
// "error" end it without an answer).
enum class StreamWire { kChat, kResponses };

// Parses a streamed reply of either API.
class SseChatStream {
 public:
  explicit SseChatStream(const std::function<void(std::string_view)>* on_delta, StreamWire wire = StreamWire::kChat)
      : on_delta_(on_delta), wire_(wire) {}
  // Consumes one network chunk. False cancels the transfer (the callback threw).
  bool Feed(std::string_view chunk);
  // Call once the transfer ended: handles a last unterminated line and
  // flushes the filter. An error when the stream was malformed, reported an
  // error event, or ended before [DONE] or a finish_reason (a Responses
  // stream: before "response.completed").
  [[nodiscard]] Status Finish();
  // Raw content (with <think>), finish_reason and usage assembled so far.
  const ChatResult& result() const { return result_; }
  bool delivered() const { return delivered_; }
  bool callback_failed() const { return callback_failed_; }

 private:
  void Line(std::string_view line);
  void ChatEvent(const nlohmann::json& event);
  void ResponsesEvent(const nlohmann::json& event);
  void Deliver(const std::string& text);

  const std::function<void(std::string_view)>* on_delta_;
  StreamWire wire_;
  std::string buffer_;
  std::size_t scanned_ = 0;  // bytes of buffer_ already searched for a line break
  ChatResult result_;
  ThinkFilter filter_;
  bool done_ = false;
  bool incomplete_ = false;  // a Responses stream that ended without its whole answer
  bool malformed_ = false;
  bool error_event_ = false;
  bool delivered_ = false;
  bool callback_failed_ = false;
};

}  // namespace engram::openai_wire
