// The REST routes of `engram serve` (server/api*.cpp), driven in-process
// through HttpServer::Dispatch: no socket, the same route table, wrappers and
// handlers as a connection gets, over a real engine (a SQLite store in a
// scratch folder, recreated every hundred inputs so it stays small).
// Authentication is off (every request is an admin of tenant "default").
// The memory proxy's model endpoint is an in-process fake that answers every
// request (both APIs, streamed or not) with a text naming the body's size, so
// the proxy's checks, memory insertion and admission run.
//
// Input: a request line "METHOD /path?query", optional header lines
// "Name: value", an optional blank line, then the body. The query is split and
// percent-decoded as httplib does. Invariants: no request is answered 500 (an
// escaped exception or an internal error); every status is a real one; a JSON
// response parses, and a /v1 error carries the envelope with the request id;
// a streamed body can be produced to its end.
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engram/engine.hpp"
#include "fuzz_support.hpp"
#include "models/llm.hpp"
#include "server/api.hpp"
#include "server/api_keys.hpp"
#include "server/http_server.hpp"
#include "server/metrics.hpp"

namespace {

using engram::server::HttpRequest;
using engram::server::HttpResponse;
using nlohmann::json;

constexpr int kInputsPerStore = 100;

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The model endpoint of the memory proxy: a well-formed answer to anything.
class FakeUpstream final : public engram::ChatPassthrough {
 public:
  std::string DefaultModel() const override { return "fake-model"; }
  engram::Result<engram::PassthroughReply> Forward(const engram::PassthroughRequest& request) override {
    const bool responses = request.api == engram::PassthroughApi::kResponses;
    engram::PassthroughReply out;
    out.status = 200;
    out.complete = true;
    out.result.content = "An answer to " + std::to_string(request.body.size()) + " bytes.";
    const json text = {{"type", "output_text"}, {"text", out.result.content}};
    const json message = {{"type", "message"}, {"role", "assistant"}, {"content", json::array({text})}};
    const json whole = responses ? json{{"status", "completed"}, {"output", json::array({message})}}
                                 : json{{"choices", json::array({{{"message", message}, {"finish_reason", "stop"}}})}};
    if (!request.stream) {
      out.content_type = "application/json";
      out.body = whole.dump();
      return out;
    }
    out.content_type = "text/event-stream";
    const std::string event = responses ? "data: " + json{{"type", "response.completed"}, {"response", whole}}.dump()
                                        : "data: " + whole.dump() + "\n\ndata: [DONE]";
    if (request.on_chunk && !request.on_chunk(event + "\n\n")) return engram::Status::Aborted("client gone");
    return out;
  }
};

class Harness {
 public:
  Harness() {
    engram::server::ApiOptions o;
    o.auth = false;
    o.upstream = [this] { return &upstream_; };
    api_ = std::make_unique<engram::server::Api>(o, metrics_);
    api_->Register(server_);
    server_.SetErrorResponder([this](int status, const std::string& id, const std::string& detail) {
      return api_->TransportError(status, id, detail);
    });
    Open();
  }

  HttpResponse Answer(HttpRequest req) {
    if (++inputs_ > kInputsPerStore) Open();
    return server_.Dispatch(std::move(req));
  }

 private:
  void Open() {
    api_->SetReady(nullptr, nullptr, false);
    keys_.reset();
    engine_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_.path() + "/store", ec);
    const std::string db = dir_.path() + "/store/engram.db";
    engram::EngineOptions eo;
    eo.db_path = db;
    eo.durability = engram::EngineOptions::Durability::kNormal;
    eo.verify_on_open = false;
    auto e = engram::Engine::Open(eo);
    FUZZ_CHECK(e.ok(), e.status().ToString());
    engine_ = std::move(*e);
    auto k = engram::server::ApiKeys::Open(db);
    FUZZ_CHECK(k.ok(), k.status().ToString());
    keys_ = std::move(*k);
    api_->SetReady(engine_.get(), keys_.get(), false);
    inputs_ = 0;
  }

  engram::fuzz::ScratchDir dir_;
  FakeUpstream upstream_;
  engram::server::Metrics metrics_;
  engram::server::HttpServer server_{engram::server::HttpServerOptions{}};
  std::unique_ptr<engram::server::Api> api_;
  std::unique_ptr<engram::Engine> engine_;
  std::unique_ptr<engram::server::ApiKeys> keys_;
  int inputs_ = 0;
};

// Splits the input into a request (false when there is no request line).
bool ReadRequest(std::string_view in, HttpRequest* req) {
  std::size_t eol = in.find('\n');
  std::string_view line = in.substr(0, eol);
  in = eol == std::string_view::npos ? std::string_view() : in.substr(eol + 1);
  const std::size_t sp = line.find(' ');
  if (sp == std::string_view::npos || sp == 0) return false;
  req->method = std::string(line.substr(0, sp));
  std::string_view target = line.substr(sp + 1);
  if (!target.empty() && target.back() == '\r') target.remove_suffix(1);
  const std::size_t q = target.find('?');
  req->path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) {
    std::string_view query = target.substr(q + 1);
    while (!query.empty()) {
      const std::size_t amp = query.find('&');
      const std::string_view pair = query.substr(0, amp);
      const std::size_t eq = pair.find('=');
      if (!pair.empty()) {
        req->query.emplace(PercentDecode(pair.substr(0, eq)),
                           eq == std::string_view::npos ? std::string() : PercentDecode(pair.substr(eq + 1)));
      }
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    }
  }
  // Header lines: "Name: value" with a name of letters, digits and '-'.
  while (!in.empty()) {
    eol = in.find('\n');
    std::string_view h = in.substr(0, eol);
    if (!h.empty() && h.back() == '\r') h.remove_suffix(1);
    if (h.empty()) {
      in = eol == std::string_view::npos ? std::string_view() : in.substr(eol + 1);
      break;
    }
    const std::size_t colon = h.find(": ");
    bool is_header = colon != std::string_view::npos && colon > 0;
    for (std::size_t i = 0; is_header && i < colon; ++i) {
      const char c = h[i];
      is_header = std::isalnum(static_cast<unsigned char>(c)) || c == '-';
    }
    if (!is_header) break;
    std::string name(h.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (req->headers.count(name)) req->repeated_headers.insert(name);
    else req->headers.emplace(name, std::string(h.substr(colon + 2)));
    in = eol == std::string_view::npos ? std::string_view() : in.substr(eol + 1);
  }
  req->body = std::string(in);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Harness harness;
  HttpRequest req;
  if (!ReadRequest(engram::fuzz::AsText(data, size), &req)) return 0;
  req.remote_addr = "127.0.0.1";
  req.request_id = "fuzz000000000001";
  const std::string label = req.method + " " + req.path;
  HttpResponse res = harness.Answer(req);
  FUZZ_CHECK(res.status != 500, label + " answered 500: " + res.body);
  FUZZ_CHECK(res.status >= 100 && res.status <= 599, label + " answered " + std::to_string(res.status));
  std::string body = res.body;
  if (res.stream) {
    res.stream([&body](std::string_view piece) {
      body += piece;
      return body.size() < (64u << 20);
    });
  }
  if (res.content_type == "application/json" && !res.stream) {
    const json j = json::parse(body, nullptr, false);
    FUZZ_CHECK(!j.is_discarded(), label + ": the JSON response does not parse: " + body);
    const bool v1 = req.path.rfind("/v1/", 0) == 0 && req.path != "/v1/chat/completions" &&
                    req.path != "/v1/responses" && req.path != "/v1/models";
    if (v1 && res.status >= 400) {
      FUZZ_CHECK(j.is_object() && j.contains("error") && j["error"].is_object() && j["error"].contains("code") &&
                     j["error"].value("request_id", "") == req.request_id,
                 label + ": an error without its envelope: " + body);
    }
  }
  return 0;
}
