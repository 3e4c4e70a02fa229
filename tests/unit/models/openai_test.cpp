// OpenAiClient::Chat against the scripted loopback server.
#include "models/openai/openai_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/http/http_client.hpp"
#include "models/openai/openai_wire.hpp"
#include "testing/fake_openai_server.hpp"

namespace engram {
namespace {

using testing::FakeOpenAiServer;
using testing::FakeReply;
using Json = nlohmann::json;

constexpr const char* kKey = "sk-test-SECRET-0123456789";

class OpenAiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    setenv("no_proxy", "127.0.0.1,localhost", 1);
    ASSERT_TRUE(server_.ok());
  }
  ProviderConfig Config() const {
    ProviderConfig c;
    c.llm_base_url = c.embed_base_url = server_.base_url();
    c.llm_model = "test-model";
    c.embed_model = "test-embed";
    c.llm_api_key = c.embed_api_key = kKey;
    c.connect_timeout_ms = 2000;
    c.total_timeout_ms = 5000;
    return c;
  }
  std::unique_ptr<OpenAiClient> Client(ProviderConfig c) {
    OpenAiClientOptions o;
    o.sleeper = [this](std::chrono::milliseconds d) { sleeps_.push_back(d); };
    o.jitter_seed = 42;
    return std::make_unique<OpenAiClient>(std::move(c), http_, o);
  }
  std::unique_ptr<OpenAiClient> Client() { return Client(Config()); }
  static ChatRequest Ask(const std::string& text) {
    ChatRequest r;
    r.messages = {{"system", "be brief"}, {"user", text}};
    return r;
  }

  FakeOpenAiServer server_;
  std::shared_ptr<HttpClient> http_ = std::make_shared<CurlHttpClient>();
  std::vector<std::chrono::milliseconds> sleeps_;
};

TEST_F(OpenAiTest, GoodReplyReturnsContentUsageAndCounts) {
  server_.QueueChat(FakeOpenAiServer::ChatReply("Hello there.", "stop", 12, 4));
  std::shared_ptr<OpenAiClient> client = Client();
  std::shared_ptr<Llm> llm = client;  // the seam the engine holds
  EXPECT_EQ(llm->Name(), "openai:test-model");
  auto r = llm->Chat(Ask("hi"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, "Hello there.");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->prompt_tokens, 12);
  EXPECT_EQ(r->completion_tokens, 4);
  const Json body = Json::parse(server_.last_chat_body());
  EXPECT_EQ(body["model"], "test-model");
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][1]["role"], "user");
  EXPECT_EQ(body["messages"][1]["content"], "hi");
  EXPECT_FALSE(body.contains("temperature"));
  EXPECT_FALSE(body.contains("stream"));
  EXPECT_EQ(server_.last_authorization(), std::string("Bearer ") + kKey);
  const ClientStats s = client->Stats();
  EXPECT_EQ(s.calls, 1);
  EXPECT_EQ(s.chat_calls, 1);
  EXPECT_EQ(s.failures, 0);
  EXPECT_EQ(s.retries, 0);
  EXPECT_EQ(s.prompt_tokens, 12);
  EXPECT_EQ(s.completion_tokens, 4);
}

TEST_F(OpenAiTest, FencedJsonContentPassesThroughUnchanged) {
  const std::string fenced = "```json\n{\"facts\": [\"likes tea\"]}\n```\n";
  server_.QueueChat(FakeOpenAiServer::ChatReply(fenced));
  auto client = Client();
  ChatRequest req = Ask("extract");
  req.json_object = true;
  auto r = client->Chat(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, fenced);
  EXPECT_EQ(Json::parse(server_.last_chat_body())["response_format"]["type"], "json_object");
}

TEST_F(OpenAiTest, RetriesAfter429HonouringRetryAfter) {
  server_.QueueChat(FakeOpenAiServer::Error(429, R"({"error":{"type":"rate_limit"}})", {{"Retry-After", "2"}}));
  auto client = Client();
  auto r = client->Chat(Ask("hi"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, "fake reply");
  EXPECT_EQ(server_.chat_requests(), 2);
  ASSERT_EQ(sleeps_.size(), 1u);
  EXPECT_EQ(sleeps_[0], std::chrono::milliseconds(2000));
  EXPECT_EQ(client->Stats().retries, 1);
  EXPECT_EQ(client->Stats().failures, 0);
}

TEST_F(OpenAiTest, RetryAfterIsCapped) {
  server_.QueueChat(FakeOpenAiServer::Error(503, "{}", {{"Retry-After", "86400"}}));
  OpenAiClientOptions o;
  o.sleeper = [this](std::chrono::milliseconds d) { sleeps_.push_back(d); };
  o.retry_after_max_ms = 1500;
  OpenAiClient client(Config(), http_, o);
  ASSERT_TRUE(client.Chat(Ask("hi")).ok());
  ASSERT_EQ(sleeps_.size(), 1u);
  EXPECT_EQ(sleeps_[0], std::chrono::milliseconds(1500));
}

TEST_F(OpenAiTest, PersistentServerErrorsBecomeUnavailable) {
  ProviderConfig c = Config();
  c.max_retries = 2;
  for (int i = 0; i < 3; ++i) server_.QueueChat(FakeOpenAiServer::Error(500));
  auto client = Client(c);
  auto r = client->Chat(Ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "llm endpoint: HTTP 500 after 3 attempts");
  EXPECT_EQ(server_.chat_requests(), 3);
  ASSERT_EQ(sleeps_.size(), 2u);
  for (auto d : sleeps_) EXPECT_LE(d.count(), 20000);
  const ClientStats s = client->Stats();
  EXPECT_EQ(s.calls, 1);
  EXPECT_EQ(s.failures, 1);
  EXPECT_EQ(s.retries, 2);
}

TEST_F(OpenAiTest, ClientErrorsAreNotRetried) {
  server_.QueueChat(FakeOpenAiServer::Error(404, R"({"error":{"code":"model_not_found","message":"no"}})"));
  auto client = Client();
  auto r = client->Chat(Ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "llm endpoint: HTTP 404 (model_not_found)");
  EXPECT_EQ(server_.chat_requests(), 1);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(OpenAiTest, StalledReplyTimesOutAfterRetries) {
  ProviderConfig c = Config();
  c.total_timeout_ms = 300;
  c.max_retries = 1;
  for (int i = 0; i < 2; ++i) {
    FakeReply stall = FakeOpenAiServer::ChatReply("late");
    stall.delay_ms = 3000;
    server_.QueueChat(stall);
  }
  auto client = Client(c);
  const auto start = std::chrono::steady_clock::now();
  auto r = client->Chat(Ask("hi"));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "llm endpoint: timed out after 2 attempts");
  EXPECT_LT(elapsed, std::chrono::milliseconds(2500));
  EXPECT_EQ(sleeps_.size(), 1u);
  EXPECT_EQ(client->Stats().failures, 1);
}

TEST_F(OpenAiTest, ConnectionRefusedIsUnavailable) {
  int dead_port;
  {
    FakeOpenAiServer gone;
    dead_port = gone.port();
  }
  ProviderConfig c = Config();
  c.llm_base_url = "http://127.0.0.1:" + std::to_string(dead_port) + "/v1";
  c.max_retries = 1;
  auto r = Client(c)->Chat(Ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("after 2 attempts"), std::string::npos) << r.status().message();
}

TEST_F(OpenAiTest, StreamingAssemblesDeltasAndCallsBack) {
  server_.QueueChat(FakeOpenAiServer::ChatStream({"Hel", "lo ", "world"}, "stop", 9, 3));
  auto client = Client();
  std::vector<std::string> deltas;
  ChatRequest req = Ask("hi");
  req.on_delta = [&](std::string_view d) { deltas.emplace_back(d); };
  auto r = client->Chat(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, "Hello world");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->prompt_tokens, 9);
  EXPECT_EQ(r->completion_tokens, 3);
  std::string joined;
  for (const auto& d : deltas) joined += d;
  EXPECT_EQ(joined, "Hello world");
  EXPECT_GE(deltas.size(), 1u);
  const Json body = Json::parse(server_.last_chat_body());
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(client->Stats().completion_tokens, 3);
}

TEST_F(OpenAiTest, ThinkBlocksAreStripped) {
  server_.QueueChat(FakeOpenAiServer::ChatReply("<think>\nThe user wants X.\n</think>\n\nAnswer: X"));
  auto client = Client();
  auto r = client->Chat(Ask("q"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content, "Answer: X");

  // Tags split across stream deltas never reach the callback.
  server_.QueueChat(FakeOpenAiServer::ChatStream({"<thi", "nk>secret plan</th", "ink>\n", "Visible", " text"}));
  std::string shown;
  ChatRequest req = Ask("q");
  req.on_delta = [&](std::string_view d) { shown += d; };
  auto s = client->Chat(req);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->content, "Visible text");
  EXPECT_EQ(shown, "Visible text");
}

TEST_F(OpenAiTest, RepliesLargerThanTheLimitAreCutOff) {
  // Collected and streamed bodies past HttpRequest::max_reply_bytes abort the
  // transfer with a clear error instead of growing without bound.
  const std::string big(100000, 'x');
  server_.QueueChat(FakeOpenAiServer::ChatReply(big));
  HttpRequest req;
  req.url = server_.base_url() + "/chat/completions";
  req.body = "{}";
  req.max_reply_bytes = 10000;
  auto r = http_->Post(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("reply larger than 10000 bytes"), std::string::npos) << r.status().ToString();

  server_.QueueChat(FakeOpenAiServer::ChatStream(std::vector<std::string>(200, std::string(500, 'y'))));
  std::size_t streamed = 0;
  req.on_chunk = [&streamed](std::string_view chunk) {
    streamed += chunk.size();
    return true;
  };
  auto s = http_->Post(req);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("reply larger than"), std::string::npos) << s.status().ToString();
  EXPECT_LE(streamed, 10000u);

  // Under the limit, the same exchange succeeds.
  server_.QueueChat(FakeOpenAiServer::ChatReply("short"));
  req.on_chunk = nullptr;
  auto fine = http_->Post(req);
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ(fine->status, 200);
}

TEST(StripThinkBlocks, Forms) {
  EXPECT_EQ(StripThinkBlocks("no tags <b>here</b>"), "no tags <b>here</b>");
  EXPECT_EQ(StripThinkBlocks("  keep leading space"), "  keep leading space");
  EXPECT_EQ(StripThinkBlocks("reasoning only</think>\nfinal"), "final");
  EXPECT_EQ(StripThinkBlocks("a <think>x</think> b"), "a b");
  EXPECT_EQ(StripThinkBlocks("<think>x</think>a<think>y</think>b"), "ab");
  EXPECT_EQ(StripThinkBlocks("text <think>cut off by max tokens"), "text ");
  EXPECT_EQ(StripThinkBlocks(""), "");
}

TEST(ReasoningModels, NamesNeedingMaxCompletionTokens) {
  EXPECT_TRUE(IsReasoningModelName("o3-mini"));
  EXPECT_TRUE(IsReasoningModelName("o1"));
  EXPECT_TRUE(IsReasoningModelName("openai/o4-mini"));
  EXPECT_TRUE(IsReasoningModelName("GPT-5-nano"));
  EXPECT_FALSE(IsReasoningModelName("gpt-4o-mini"));
  EXPECT_FALSE(IsReasoningModelName("qwen3-8b"));
}

TEST_F(OpenAiTest, ReasoningModelGetsMaxCompletionTokens) {
  ProviderConfig c = Config();
  c.llm_model = "o3-mini";
  c.max_tokens = 256;
  auto client = Client(c);
  ASSERT_TRUE(client->Chat(Ask("q")).ok());
  const Json body = Json::parse(server_.last_chat_body());
  EXPECT_EQ(body["max_completion_tokens"], 256);
  EXPECT_FALSE(body.contains("max_tokens"));
}

TEST_F(OpenAiTest, AdaptsToMaxTokensRejectionOnceAndRemembers) {
  ProviderConfig c = Config();
  c.max_tokens = 100;
  server_.QueueChat(FakeOpenAiServer::Error(
      400, R"({"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. )"
           R"(Use 'max_completion_tokens' instead.","type":"invalid_request_error"}})"));
  auto client = Client(c);
  auto r = client->Chat(Ask("q"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto bodies = server_.chat_bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(Json::parse(bodies[0])["max_tokens"], 100);
  EXPECT_EQ(Json::parse(bodies[1])["max_completion_tokens"], 100);
  EXPECT_FALSE(Json::parse(bodies[1]).contains("max_tokens"));
  EXPECT_TRUE(client->UsesMaxCompletionTokens());
  EXPECT_TRUE(sleeps_.empty());
  // Remembered: the next call goes right with one request.
  ASSERT_TRUE(client->Chat(Ask("again")).ok());
  EXPECT_EQ(server_.chat_requests(), 3);
  EXPECT_TRUE(Json::parse(server_.last_chat_body()).contains("max_completion_tokens"));
}

TEST_F(OpenAiTest, OmitsTemperatureAfterRejection) {
  ProviderConfig c = Config();
  c.temperature = 0.3;
  server_.QueueChat(FakeOpenAiServer::Error(
      400, R"({"error":{"message":"Unsupported value: 'temperature' does not support 0.3 with this model.",)"
           R"("code":"unsupported_value"}})"));
  auto client = Client(c);
  ASSERT_TRUE(client->Chat(Ask("q")).ok());
  auto bodies = server_.chat_bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_DOUBLE_EQ(Json::parse(bodies[0])["temperature"].get<double>(), 0.3);
  EXPECT_FALSE(Json::parse(bodies[1]).contains("temperature"));
  EXPECT_TRUE(client->OmitsTemperature());
  ASSERT_TRUE(client->Chat(Ask("again")).ok());
  EXPECT_FALSE(Json::parse(server_.last_chat_body()).contains("temperature"));
}

TEST_F(OpenAiTest, UnrelatedBadRequestFailsWithoutAdapting) {
  ProviderConfig c = Config();
  c.temperature = 0.3;
  server_.QueueChat(FakeOpenAiServer::Error(400, R"({"error":{"code":"context_length_exceeded"}})"));
  auto r = Client(c)->Chat(Ask("q"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "llm endpoint: HTTP 400 (context_length_exceeded)");
  EXPECT_EQ(server_.chat_requests(), 1);
}

TEST_F(OpenAiTest, ApiKeyNeverAppearsInErrors) {
  const std::string echo = std::string(R"({"error":{"message":"Incorrect API key provided: )") + kKey +
                           R"(","type":"invalid_request_error","code":")" + kKey + R"("}})";
  server_.QueueChat(FakeOpenAiServer::Error(401, echo));
  server_.QueueEmbed(FakeOpenAiServer::Error(401, echo));
  server_.QueueChat(FakeOpenAiServer::Error(400, echo));
  ProviderConfig c = Config();
  c.max_retries = 1;
  auto client = Client(c);
  auto chat = client->Chat(Ask("q"));
  auto embed = client->Embed({"text"});
  auto bad = client->Chat(Ask("q"));
  for (const Status* st : {&chat.status(), &embed.status(), &bad.status()}) {
    EXPECT_FALSE(st->ok());
    EXPECT_EQ(st->ToString().find(kKey), std::string::npos) << st->ToString();
    EXPECT_EQ(st->ToString().find("SECRET"), std::string::npos) << st->ToString();
  }
  // The echoed key even sat in the identifier field: scrubbed as a last defence.
  EXPECT_EQ(chat.status().message(), "llm endpoint: HTTP 401 ([redacted])");
  EXPECT_EQ(client->Stats().failures, 3);
}

TEST_F(OpenAiTest, MalformedReplyIsUnavailable) {
  server_.QueueChat(FakeReply{200, {}, "<html>proxy error</html>", "text/html"});
  auto r = Client()->Chat(Ask("q"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "llm endpoint: malformed reply (not JSON)");
}

TEST_F(OpenAiTest, BrokenStreamIsRetriedOnlyBeforeTextWasShown) {
  // Fails before any text: retried, and the second stream succeeds.
  server_.QueueChat(FakeOpenAiServer::Error(502));
  server_.QueueChat(FakeOpenAiServer::ChatStream({"ok"}));
  auto client = Client();
  std::string shown;
  ChatRequest req = Ask("q");
  req.on_delta = [&](std::string_view d) { shown += d; };
  auto r = client->Chat(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(shown, "ok");
  EXPECT_EQ(client->Stats().retries, 1);

  // Ends early after text was shown: not retried (the caller saw a prefix).
  FakeReply cut = FakeOpenAiServer::ChatStream({"partial"});
  cut.sse_events.resize(1);
  server_.QueueChat(cut);
  shown.clear();
  auto broken = client->Chat(req);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().message(), "llm endpoint: stream ended early");
  EXPECT_EQ(shown, "partial");
  EXPECT_EQ(server_.chat_requests(), 3);
}

TEST_F(OpenAiTest, ConcurrentCallsShareTheClient) {
  auto client = Client();
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) good += client->Chat(Ask("hi")).ok() ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 30);
  EXPECT_EQ(client->Stats().calls, 30);
  EXPECT_EQ(client->Stats().completion_tokens, 30 * 7);
}


// Found by fuzz_model_reply: a usage count beyond the int64 range was
// converted (undefined behaviour). Counts no reply can mean are ignored.
TEST(OpenAiWire, UsageCountsBeyondAnyRealReplyAreIgnored) {
  auto r = openai_wire::ParseChatReply(
      R"({"choices":[{"message":{"content":"Hi"},"finish_reason":"stop"}],)"
      R"("usage":{"prompt_tokens":277777777777777777777777777777777777777777,"completion_tokens":1e300}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, "Hi");
  EXPECT_EQ(r->prompt_tokens, 0);
  EXPECT_EQ(r->completion_tokens, 0);
  auto fine = openai_wire::ParseChatReply(
      R"({"choices":[{"message":{"content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3}})");
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(fine->prompt_tokens, 12);
  EXPECT_EQ(fine->completion_tokens, 3);

  std::function<void(std::string_view)> ignore = [](std::string_view) {};
  openai_wire::SseChatStream stream(&ignore);
  EXPECT_TRUE(stream.Feed("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}],"
                          "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2.8e41}}\n\ndata: [DONE]\n\n"));
  ASSERT_TRUE(stream.Finish().ok());
  EXPECT_EQ(stream.result().completion_tokens, 0);
  EXPECT_EQ(stream.result().prompt_tokens, 1);
}


TEST(OpenAiWire, StreamLinesSplitIntoSingleBytesAreReassembled) {
  // Every byte of the stream its own chunk (what a slow endpoint may send):
  // the events come out whole, in order, and a line break split from its
  // carriage return still ends the line.
  std::string delivered;
  std::function<void(std::string_view)> collect = [&delivered](std::string_view d) { delivered.append(d); };
  openai_wire::SseChatStream stream(&collect);
  const std::string text(20000, 'z');
  const std::string wire = "data: {\"choices\":[{\"delta\":{\"content\":\"" + text + "\"}}]}\r\n\r\n" +
                           "data: {\"choices\":[{\"delta\":{\"content\":\"!\"},\"finish_reason\":\"stop\"}]}\n\n" +
                           "data: [DONE]\n\n";
  for (char c : wire) ASSERT_TRUE(stream.Feed(std::string_view(&c, 1)));
  ASSERT_TRUE(stream.Finish().ok());
  EXPECT_EQ(delivered, text + "!");
  EXPECT_EQ(stream.result().content, text + "!");
}

TEST(OpenAiWire, ResponsesReplyGivesItsOutputTextStatusAndUsage) {
  // The text of the output messages' output_text parts (reasoning items,
  // refusals and tool calls aside), the status, input/output token counts.
  auto r = openai_wire::ParseResponsesReply(
      R"({"id":"resp_1","object":"response","status":"completed","output":[)"
      R"({"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"thinking"}]},)"
      R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello "},)"
      R"({"type":"refusal","refusal":"no"},{"type":"output_text","text":"there."}]}],)"
      R"("usage":{"input_tokens":21,"output_tokens":4,"total_tokens":25}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, "Hello there.");
  EXPECT_EQ(r->finish_reason, "completed");
  EXPECT_EQ(r->prompt_tokens, 21);
  EXPECT_EQ(r->completion_tokens, 4);
  auto cut = openai_wire::ParseResponsesReply(
      R"({"status":"incomplete","output":[{"type":"message","content":[{"type":"output_text","text":"Hel"}]}]})");
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->finish_reason, "incomplete");
  // A reply without a status is taken as completed; one without output, or
  // a chat completion, is malformed.
  EXPECT_EQ(openai_wire::ParseResponsesReply(R"({"output":[]})")->finish_reason, "completed");
  EXPECT_FALSE(openai_wire::ParseResponsesReply(R"({"choices":[{"message":{"content":"Hi"}}]})").ok());
  EXPECT_FALSE(openai_wire::ParseResponsesReply("not json").ok());
  EXPECT_FALSE(openai_wire::ParseResponsesReply(R"({"output":)" + std::string(100000, '[') + "}").ok());
}

// One event of a streamed Responses reply, as OpenAI sends it.
std::string ResponsesEvent(const std::string& type, const std::string& fields) {
  return "event: " + type + "\ndata: {\"type\":\"" + type + "\",\"sequence_number\":1" +
         (fields.empty() ? "" : "," + fields) + "}\n\n";
}

TEST(OpenAiWire, ResponsesStreamAssemblesDeltasAndEndsWithCompleted) {
  std::string delivered;
  std::function<void(std::string_view)> collect = [&delivered](std::string_view d) { delivered.append(d); };
  const std::string start = ResponsesEvent("response.created", R"("response":{"status":"in_progress","output":[]})") +
                            ResponsesEvent("response.output_text.delta", R"("delta":"Hello")") +
                            ResponsesEvent("response.output_text.delta", R"("delta":" there")");
  const std::string completed = ResponsesEvent(
      "response.completed",
      R"("response":{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hello there"}]}],)"
      R"("usage":{"input_tokens":9,"output_tokens":2}})");
  {
    openai_wire::SseChatStream stream(&collect, openai_wire::StreamWire::kResponses);
    for (char c : start + completed) ASSERT_TRUE(stream.Feed(std::string_view(&c, 1)));
    ASSERT_TRUE(stream.Finish().ok());
    EXPECT_EQ(delivered, "Hello there");
    EXPECT_EQ(stream.result().content, "Hello there");
    EXPECT_EQ(stream.result().prompt_tokens, 9);
    EXPECT_EQ(stream.result().completion_tokens, 2);
  }
  {
    // An endpoint that sends the answer only in the completed event.
    openai_wire::SseChatStream stream(nullptr, openai_wire::StreamWire::kResponses);
    ASSERT_TRUE(stream.Feed(completed));
    ASSERT_TRUE(stream.Finish().ok());
    EXPECT_EQ(stream.result().content, "Hello there");
  }
  // Cut off, failed, an error event, or ended before completed: no answer.
  for (const std::string& end :
       {ResponsesEvent("response.incomplete", R"("response":{"status":"incomplete","output":[]})"),
        ResponsesEvent("response.failed", R"("response":{"status":"failed","error":{"code":"server_error"}})"),
        ResponsesEvent("error", R"("code":"rate_limit_exceeded","message":"slow down")"), std::string(),
        std::string("data: [DONE]\n\n")}) {
    openai_wire::SseChatStream stream(nullptr, openai_wire::StreamWire::kResponses);
    ASSERT_TRUE(stream.Feed(start + end));
    EXPECT_FALSE(stream.Finish().ok()) << end;
  }
  // A chat stream is not a Responses stream.
  openai_wire::SseChatStream chat(nullptr, openai_wire::StreamWire::kResponses);
  ASSERT_TRUE(chat.Feed("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n"));
  EXPECT_FALSE(chat.Finish().ok());
  EXPECT_EQ(chat.result().content, "");
}

TEST(OpenAiWire, RepliesNestedBeyondTheLimitAreMalformed) {
  // An endpoint that answers with 100,000 nested arrays inside the usage
  // object gets the same answer as malformed JSON, without being parsed.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto r = openai_wire::ParseChatReply(R"({"choices":[{"message":{"content":"Hi"}}],"usage":)" + deep + "}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("malformed"), std::string::npos) << r.status().ToString();
  EXPECT_FALSE(openai_wire::ParseEmbedReply(R"({"data":[{"embedding":[1]}],"x":)" + deep + "}", 1, nullptr).ok());
  // Nesting a reply can mean is parsed as before.
  const std::string shallow = std::string(20, '[') + std::string(20, ']');
  EXPECT_TRUE(openai_wire::ParseChatReply(R"({"choices":[{"message":{"content":"Hi"}}],"usage":)" + shallow + "}").ok());
}

}  // namespace
}  // namespace engram
