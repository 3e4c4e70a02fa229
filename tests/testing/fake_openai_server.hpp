// A scripted OpenAI-compatible server on 127.0.0.1 (ephemeral port) for
// tests: POST /v1/chat/completions and /v1/embeddings answer from a queue of
// replies, then from a default (configurable chat text; deterministic
// embeddings from the built-in hashed embedder, so similar texts get similar
// vectors). Records request counts and bodies. Header-only; needs
// cpp-httplib (linked into unit_models only).
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <functional>

#include <nlohmann/json.hpp>

#include "models/builtin/hash_embedder.hpp"

namespace engram::testing {

struct FakeReply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string content_type = "application/json";
  int delay_ms = 0;  // stall this long before answering (simulates a hung server)
  // When non-empty the reply is a chunked text/event-stream: one
  // "data: <event>\n\n" per element (pass "[DONE]" explicitly); body ignored.
  std::vector<std::string> sse_events;
  // ... and the stream stays open this long after its last event (an
  // endpoint slow to close its connection after "[DONE]").
  int linger_ms = 0;
  // What each event's line begins with ("data:" without the space is as
  // valid a field).
  std::string sse_prefix = "data: ";
};

class FakeOpenAiServer {
 public:
  FakeOpenAiServer() {
    server_.Post("/v1/chat/completions",
                 [this](const httplib::Request& req, httplib::Response& res) { Handle(true, req, res); });
    server_.Post(
        "/v1/responses",  // the chat queue's replies, as they are
        [this](const httplib::Request& req, httplib::Response& res) { Handle(true, req, res); });
    server_.Post("/v1/embeddings",
                 [this](const httplib::Request& req, httplib::Response& res) { Handle(false, req, res); });
    server_.set_tcp_nodelay(true);  // no Nagle delay on small replies
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ > 0) {
      thread_ = std::thread([this] { server_.listen_after_bind(); });
      for (int i = 0; i < 500 && !server_.is_running(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  ~FakeOpenAiServer() {
    stopping_ = true;
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  FakeOpenAiServer(const FakeOpenAiServer&) = delete;
  FakeOpenAiServer& operator=(const FakeOpenAiServer&) = delete;

  bool ok() const { return port_ > 0 && server_.is_running(); }
  int port() const { return port_; }
  // What ProviderConfig's base URLs should be: "http://127.0.0.1:<port>/v1".
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

  void QueueChat(FakeReply r) { std::lock_guard<std::mutex> l(mu_); chat_queue_.push_back(std::move(r)); }
  void QueueEmbed(FakeReply r) { std::lock_guard<std::mutex> l(mu_); embed_queue_.push_back(std::move(r)); }
  void SetChatText(std::string text) { std::lock_guard<std::mutex> l(mu_); chat_text_ = std::move(text); }
  // When set, computes the reply text of chat requests that have no queued
  // reply, from the parsed request body.
  void SetChatResponder(std::function<std::string(const nlohmann::json& request)> f) {
    std::lock_guard<std::mutex> l(mu_);
    responder_ = std::move(f);
  }
  void SetEmbedDimension(int dim) { std::lock_guard<std::mutex> l(mu_); embed_dim_ = dim; }
  // Default embeddings replies list their items in reverse (index still right).
  void SetReverseEmbedOrder(bool on) { std::lock_guard<std::mutex> l(mu_); reverse_embed_ = on; }

  int chat_requests() const { return chat_requests_.load(); }
  int embed_requests() const { return embed_requests_.load(); }
  std::vector<std::string> chat_bodies() const { std::lock_guard<std::mutex> l(mu_); return chat_bodies_; }
  std::vector<std::string> embed_bodies() const { std::lock_guard<std::mutex> l(mu_); return embed_bodies_; }
  std::string last_chat_body() const { auto b = chat_bodies(); return b.empty() ? "" : b.back(); }
  std::string last_embed_body() const { auto b = embed_bodies(); return b.empty() ? "" : b.back(); }
  std::string last_authorization() const { std::lock_guard<std::mutex> l(mu_); return last_auth_; }

  // A complete chat completion with the given text and usage.
  static FakeReply ChatReply(const std::string& text, const std::string& finish = "stop", int prompt = 11,
                             int completion = 7) {
    nlohmann::json j = {{"id", "chatcmpl-fake"},
                        {"object", "chat.completion"},
                        {"choices", {{{"index", 0},
                                      {"message", {{"role", "assistant"}, {"content", text}}},
                                      {"finish_reason", finish}}}},
                        {"usage", {{"prompt_tokens", prompt}, {"completion_tokens", completion}}}};
    FakeReply r;
    r.body = j.dump();
    return r;
  }
  // A streamed chat completion: one event per delta, a finish event, a usage
  // event and [DONE].
  static FakeReply ChatStream(const std::vector<std::string>& deltas, const std::string& finish = "stop",
                              int prompt = 5, int completion = 3) {
    FakeReply r;
    r.content_type = "text/event-stream";
    for (const auto& d : deltas)
      r.sse_events.push_back(nlohmann::json({{"choices", {{{"index", 0}, {"delta", {{"content", d}}}}}}}).dump());
    r.sse_events.push_back(
        nlohmann::json({{"choices", {{{"index", 0}, {"delta", nlohmann::json::object()}, {"finish_reason", finish}}}}})
            .dump());
    r.sse_events.push_back(
        nlohmann::json({{"choices", nlohmann::json::array()},
                        {"usage", {{"prompt_tokens", prompt}, {"completion_tokens", completion}}}})
            .dump());
    r.sse_events.push_back("[DONE]");
    return r;
  }
  // A Responses stream as an endpoint that sends no "event:" lines writes
  // it: each event's type in its data.
  static FakeReply ResponsesStream(const std::vector<std::string>& deltas) {
    FakeReply r;
    r.content_type = "text/event-stream";
    std::string text;
    for (const auto& d : deltas) {
      r.sse_events.push_back(
          nlohmann::json({{"type", "response.output_text.delta"}, {"delta", d}}).dump());
      text += d;
    }
    const nlohmann::json message = {{"type", "message"},
                                    {"role", "assistant"},
                                    {"content", {{{"type", "output_text"}, {"text", text}}}}};
    r.sse_events.push_back(
        nlohmann::json({{"type", "response.completed"},
                        {"response",
                         {{"status", "completed"},
                          {"output", {message}},
                          {"usage", {{"input_tokens", 5}, {"output_tokens", 3}}}}}})
            .dump());
    return r;
  }
  static FakeReply Error(int status, const std::string& body = R"({"error":{"message":"fake failure"}})",
                         std::vector<std::pair<std::string, std::string>> headers = {}) {
    FakeReply r;
    r.status = status;
    r.body = body;
    r.headers = std::move(headers);
    return r;
  }
  // The deterministic default vector of a text (not normalised by the server
  // beyond what the hashed embedder does).
  static Vector VectorFor(const std::string& text, int dim) { return HashEmbedder(dim).EmbedOne(text); }

 private:
  void Handle(bool chat, const httplib::Request& req, httplib::Response& res) {
    FakeReply reply;
    {
      std::lock_guard<std::mutex> l(mu_);
      (chat ? chat_bodies_ : embed_bodies_).push_back(req.body);
      last_auth_ = req.get_header_value("Authorization");
      auto& queue = chat ? chat_queue_ : embed_queue_;
      if (!queue.empty()) {
        reply = std::move(queue.front());
        queue.pop_front();
      } else {
        if (chat && responder_) {
          reply = ChatReply(responder_(nlohmann::json::parse(req.body, nullptr, false)));
        } else {
          reply = chat ? ChatReply(chat_text_) : DefaultEmbedReply(req.body, embed_dim_, reverse_embed_);
        }
      }
    }
    ++(chat ? chat_requests_ : embed_requests_);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(reply.delay_ms);
    while (!stopping_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    res.status = reply.status;
    for (const auto& [k, v] : reply.headers) res.set_header(k.c_str(), v);
    if (reply.sse_events.empty()) {
      res.set_content(reply.body, reply.content_type.c_str());
      return;
    }
    auto events = std::make_shared<std::vector<std::string>>(std::move(reply.sse_events));
    const int linger_ms = reply.linger_ms;
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, events, linger_ms, prefix = reply.sse_prefix](std::size_t, httplib::DataSink& sink) {
          for (const auto& e : *events) {
            const std::string frame = prefix + e + "\n\n";
            if (!sink.write(frame.data(), frame.size())) return false;
          }
          const auto until =
              std::chrono::steady_clock::now() + std::chrono::milliseconds(linger_ms);
          while (!stopping_ && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          sink.done();
          return true;
        });
  }

  static FakeReply DefaultEmbedReply(const std::string& body, int dim, bool reverse) {
    const auto req = nlohmann::json::parse(body, nullptr, false);
    std::vector<std::string> inputs;
    if (!req.is_discarded() && req.is_object() && req.contains("input")) {
      const auto& in = req["input"];
      if (in.is_string()) inputs.push_back(in.get<std::string>());
      if (in.is_array())
        for (const auto& x : in) inputs.push_back(x.is_string() ? x.get<std::string>() : std::string());
    }
    for (const auto& s : inputs)  // like OpenAI: empty inputs are rejected
      if (s.empty()) return Error(400, R"({"error":{"message":"'$.input' is invalid","type":"invalid_request_error"}})");
    if (inputs.empty()) return Error(400, R"({"error":{"message":"no input","type":"invalid_request_error"}})");
    nlohmann::json data = nlohmann::json::array();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::size_t k = reverse ? inputs.size() - 1 - i : i;
      data.push_back({{"object", "embedding"}, {"index", k}, {"embedding", VectorFor(inputs[k], dim)}});
    }
    FakeReply r;
    r.body = nlohmann::json({{"object", "list"},
                             {"data", data},
                             {"usage", {{"prompt_tokens", 3 * inputs.size()}, {"total_tokens", 3 * inputs.size()}}}})
                 .dump();
    return r;
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<int> chat_requests_{0}, embed_requests_{0};
  mutable std::mutex mu_;
  std::deque<FakeReply> chat_queue_, embed_queue_;
  std::vector<std::string> chat_bodies_, embed_bodies_;
  std::string last_auth_;
  std::function<std::string(const nlohmann::json&)> responder_;
  std::string chat_text_ = "fake reply";
  int embed_dim_ = 64;
  bool reverse_embed_ = false;
};

}  // namespace engram::testing
