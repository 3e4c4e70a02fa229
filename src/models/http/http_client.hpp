// HttpClient: the one seam through which engram talks to model endpoints.
// CurlHttpClient is the real implementation (libcurl); tests point it at a
// loopback server or replace the interface altogether.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engram/result.hpp"

namespace engram {

struct HttpRequest {
  std::string url;  // absolute http:// or https:// URL
  // Extra request headers as (name, value). Values may hold secrets (an
  // Authorization header); implementations never log or echo them.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;              // sent as-is (POST)
  int connect_timeout_ms = 5000;  // establishing the connection
  int total_timeout_ms = 120000;  // the whole exchange, streaming included
  // Streaming: when set, the body of a 2xx reply is handed to this callback
  // chunk by chunk as it arrives (and HttpResponse::body stays empty);
  // returning false cancels the transfer (Post then returns kAborted). The
  // body of a non-2xx reply is still collected into HttpResponse::body.
  std::function<bool(std::string_view chunk)> on_chunk;
  // The most reply body bytes accepted, streamed or collected: a reply that
  // grows past it is cut off and Post returns kUnavailable ("reply larger
  // than ..."), so no endpoint can make the process hold unbounded memory.
  // The reply's headers are capped at kMaxReplyHeaderBytes the same way.
  std::size_t max_reply_bytes = std::size_t{64} << 20;
};

inline constexpr std::size_t kMaxReplyHeaderBytes = std::size_t{1} << 20;

struct HttpResponse {
  int status = 0;                              // HTTP status code of the final reply
  std::map<std::string, std::string> headers;  // names lower-cased; the last value wins
  std::string body;

  // The header's value, or "" when absent. `lower_name` must be lower-case.
  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Sends one POST and waits for the complete reply. Any HTTP status is a
  // successful exchange (the caller interprets it). Transport failures are
  // statuses: kUnavailable for timeouts, refused or broken connections and
  // DNS failures (the message says "timed out" for timeouts); kAborted when
  // on_chunk cancelled; kInvalidArgument for a malformed or unsupported URL.
  // Messages never contain header values or the request body. Thread-safe.
  [[nodiscard]] virtual Result<HttpResponse> Post(const HttpRequest& request) = 0;
};

// libcurl over HTTP/1.1 with connection reuse: finished easy handles (each
// keeping its connection cache) go back to a small pool and are reused by the
// next request on any thread. Uses CURLOPT_NOSIGNAL (safe in threaded
// processes); honours the usual proxy environment variables. Thread-safe.
class CurlHttpClient final : public HttpClient {
 public:
  static constexpr std::size_t kMaxIdleHandles = 8;

  CurlHttpClient();
  ~CurlHttpClient() override;
  CurlHttpClient(const CurlHttpClient&) = delete;
  CurlHttpClient& operator=(const CurlHttpClient&) = delete;

  [[nodiscard]] Result<HttpResponse> Post(const HttpRequest& request) override;

 private:
  void* Acquire();             // a CURL* from the pool or a new one (nullptr on failure)
  void Release(void* handle);  // back to the pool, or freed when the pool is full

  std::mutex mu_;
  std::vector<void*> idle_;  // CURL* handles, guarded by mu_
};

}  // namespace engram
