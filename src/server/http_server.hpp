// The HTTP transport of `engram serve`: cpp-httplib hidden behind one small
// class, so that its types never reach the API handlers. Handlers never throw
// through it: an escaping exception becomes a 500 with the request id.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engram/result.hpp"

namespace engram::server {

struct HttpRequest {
  std::string method;
  std::string path;
  std::string body;
  std::string remote_addr;
  std::string request_id;                       // X-Request-Id (given or generated)
  std::vector<std::string> params;              // the route pattern's captures
  std::multimap<std::string, std::string> query;
  std::map<std::string, std::string> headers;   // names in lower case

  // The first query parameter `key` ("" and false when absent).
  bool Query(const std::string& key, std::string* value) const;
  std::string Header(const std::string& lower_name) const;
};

// Writes one piece of a streamed body; false when the client went away.
using StreamWriter = std::function<bool(std::string_view)>;

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the body is produced by this function after the handler
  // returned (chunked transfer; e.g. server-sent events).
  std::function<void(const StreamWriter&)> stream;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  int threads = 8;                       // worker threads (one per open connection)
  std::size_t max_body_bytes = 32u << 20;
  int read_timeout_s = 30;
  int write_timeout_s = 30;
  int keep_alive_timeout_s = 5;          // an idle keep-alive connection frees its thread after this
  int keep_alive_max_requests = 1000;
};

// What the observer hears of each answered request.
struct RequestRecord {
  const std::string& route;       // the route template, or "unmatched"
  const std::string& method;
  const std::string& path;        // as requested (without the query)
  const std::string& request_id;  // the X-Request-Id of the response
  int status;
  double seconds;                 // from routing to the end of the response
};
// Called once per answered request, after its response was written.
using RequestObserver = std::function<void(const RequestRecord&)>;
// Produces the response for a status the transport decided itself (404 with
// no route, 405 for a known path with another method (the Allow header is
// set), 413 over the payload limit, 400 for an unreadable request, 500).
using ErrorResponder = std::function<HttpResponse(int status, const std::string& request_id)>;

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // `path` is a template such as "/v1/memories/{id}": each {name} matches one
  // non-empty path segment and becomes an entry of HttpRequest::params, in
  // order. The template is also the route's label for the observer.
  // Register every route before Bind.
  void Route(const std::string& method, const std::string& path, HttpHandler handler);
  void SetObserver(RequestObserver observer);
  void SetErrorResponder(ErrorResponder responder);

  // Binds the listening socket; port 0 picks a free port. Returns the port.
  Result<int> Bind(const std::string& host, int port);
  // Serves until Stop(); in-flight requests are finished before it returns.
  Status Run();
  // Stops accepting connections; safe from any thread (not from a signal
  // handler).
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A random 16-hex-digit request id.
std::string NewRequestId();

}  // namespace engram::server
