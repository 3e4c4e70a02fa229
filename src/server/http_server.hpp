// The HTTP transport of `engram serve`: cpp-httplib hidden behind one small
// class, so that its types never reach the API handlers. Handlers never throw
// through it: an escaping exception becomes a 500 with the request id.
//
// Connections and engine work are separate resources (see http_server.cpp):
// every open connection has a cheap thread of its own (up to
// max_connections; beyond that a new connection is answered 503 and closed at
// once), and at most `threads` requests run their handlers at a time. A
// request's line and headers must arrive within header_timeout_s and its
// body within body_timeout_s (plus time for its size); each route has its
// own body limit, and a declared body over it is refused with 413 before it
// is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engram/result.hpp"

namespace engram::server {

struct HttpRequest {
  std::string method;
  std::string path;                             // as sent, percent-encoded (without the query)
  std::string body;
  std::string remote_addr;
  std::string request_id;                       // X-Request-Id (given or generated)
  std::vector<std::string> params;              // the route pattern's captures
  std::multimap<std::string, std::string> query;
  std::map<std::string, std::string> headers;   // names in lower case (the first of repeated ones)
  std::set<std::string> repeated_headers;       // names (lower case) the request sent more than once

  // The first query parameter `key` ("" and false when absent).
  bool Query(const std::string& key, std::string* value) const;
  std::string Header(const std::string& lower_name) const;
  // Whether the request sent the header more than once.
  bool Repeated(const std::string& lower_name) const { return repeated_headers.count(lower_name) > 0; }
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
  int threads = 8;                       // requests running their handlers at once (engine work)
  int max_connections = 512;             // open connections; a new one beyond is answered 503 and closed
  std::size_t max_body_bytes = 32u << 20;  // the largest body of any route (bulk routes use it)
  std::size_t max_header_bytes = 64u << 10;  // request line and headers together
  int header_timeout_s = 10;             // request line and headers must arrive within this
  int body_timeout_s = 30;               // the body must arrive within this, plus 1 s per 256 KiB
  int write_timeout_s = 30;              // one write of the response may wait this long
  int keep_alive_timeout_s = 5;          // an idle keep-alive connection is closed after this
  int keep_alive_max_requests = 1000;
};

// What one route accepts.
struct RouteOptions {
  // The largest body (0: HttpServerOptions::max_body_bytes); never above
  // max_body_bytes. Routes without a body (GET, DELETE) read at most 64 KiB.
  std::size_t max_body_bytes = 0;
  // Answers without the engine (health, readiness, version): not counted
  // against `threads`, so it is served while every engine slot is busy.
  bool light = false;
};

// What the observer hears of each answered request.
struct RequestRecord {
  const std::string& route;       // the route template, or "unmatched"
  const std::string& method;
  const std::string& path;        // as sent, percent-encoded (without the query)
  const std::string& request_id;  // the X-Request-Id of the response
  int status;
  double seconds;                 // from routing to the end of the response
};
// Called once per answered request, after its response was written.
using RequestObserver = std::function<void(const RequestRecord&)>;
// Produces the response for a status the transport decided itself (404 with
// no route, 405 for a known path with another method (the Allow header is
// set), 413 over the route's body limit, 400 for an unreadable request or
// malformed framing, 503 when connections or body memory are exhausted,
// 500). `detail` says why in a sentence when the transport knows ("" when not).
using ErrorResponder =
    std::function<HttpResponse(int status, const std::string& request_id, const std::string& detail)>;

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // `path` is a template such as "/v1/memories/{id}": each {name} matches one
  // non-empty path segment and becomes an entry of HttpRequest::params, in
  // order. A request's path is split at '/' as sent and each segment is then
  // percent-decoded, so "%2F" is part of a capture ("a%2Fb" is "a/b"), never
  // a separator. The template is also the route's label for the observer.
  // Register every route before Bind.
  void Route(const std::string& method, const std::string& path, HttpHandler handler,
             RouteOptions options = {});
  void SetObserver(RequestObserver observer);
  // Answers one request in-process, as a connection does once the request is
  // read, but without a socket, permits or the observer (fuzz targets and
  // tests): the route is matched on req.method and req.path (as sent) and its
  // decoded captures replace req.params; an escaping exception is a 500; no route is the
  // error responder's 404 (405 when the path has a route for another method).
  HttpResponse Dispatch(HttpRequest req) const;
  void SetErrorResponder(ErrorResponder responder);

  // Binds the listening socket; port 0 picks a free port. Returns the port.
  // An address already in use (by any process) is an error: the socket is
  // never shared (SO_REUSEADDR only, no SO_REUSEPORT).
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
