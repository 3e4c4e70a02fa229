// cpp-httplib lives in this file only.
#include "server/http_server.hpp"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <iostream>
#include <random>
#include <regex>
#include <thread>

namespace engram::server {

namespace {

using Clock = std::chrono::steady_clock;

// What the current worker thread is answering (httplib serves one request of
// a connection at a time on one thread): the observer's route label and start.
thread_local std::string t_route;
thread_local Clock::time_point t_start;
thread_local bool t_started = false;

bool ValidRequestId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  return std::all_of(id.begin(), id.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// "/v1/memories/{id}" -> "/v1/memories/([^/]+)" (other characters literal).
std::string PathPattern(const std::string& path) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '{') {
      std::size_t end = path.find('}', i);
      if (end != std::string::npos) {
        out += "([^/]+)";
        i = end;
        continue;
      }
    }
    if (std::string_view(".[]()*+?^$|\\").find(path[i]) != std::string_view::npos) out += '\\';
    out += path[i];
  }
  return out;
}

void Apply(const HttpResponse& r, const std::string& request_id, httplib::Response& res) {
  res.status = r.status;
  for (const auto& [k, v] : r.headers) res.set_header(k, v);
  res.set_header("X-Request-Id", request_id);
  if (!r.stream) {
    res.set_content(r.body, r.content_type);
    return;
  }
  auto stream = r.stream;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(r.content_type, [stream, request_id](std::size_t, httplib::DataSink& sink) {
    try {
      stream([&sink](std::string_view piece) { return sink.write(piece.data(), piece.size()); });
    } catch (const std::exception& e) {
      std::cerr << "engram serve: error while streaming (request " << request_id << "): " << e.what() << "\n";
    } catch (...) {
      std::cerr << "engram serve: error while streaming (request " << request_id << ")\n";
    }
    sink.done();
    return true;
  });
}

}  // namespace

bool HttpRequest::Query(const std::string& key, std::string* value) const {
  auto it = query.find(key);
  if (it == query.end()) {
    value->clear();
    return false;
  }
  *value = it->second;
  return true;
}

std::string HttpRequest::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

std::string NewRequestId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t v = rng();
  std::string id(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) id[static_cast<std::size_t>(i)] = kHex[v & 0xf];
  return id;
}

struct HttpServer::Impl {
  HttpServerOptions options;
  httplib::Server svr;
  RequestObserver observer;
  ErrorResponder error_responder;
  bool bound = false;
  // Stop() may come before Run() is listening (a signal right after Bind):
  // Run() then returns at once instead of serving forever.
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> running{false};
  std::vector<std::pair<std::string, std::regex>> routes;  // method, pattern (for 405)

  // The methods a path is served with ("" when the path matches no route).
  std::string AllowedMethods(const std::string& path) const {
    std::string allow;
    for (const auto& [method, pattern] : routes) {
      if (std::regex_match(path, pattern) && allow.find(method) == std::string::npos) {
        allow += (allow.empty() ? "" : ", ") + method;
      }
    }
    return allow;
  }

  HttpResponse ErrorFor(int status, const std::string& id) const {
    if (error_responder) return error_responder(status, id);
    HttpResponse r;
    r.status = status;
    r.content_type = "text/plain";
    r.body = "error " + std::to_string(status) + "\n";
    return r;
  }

  void Handle(const std::string& pattern, const HttpHandler& handler, const httplib::Request& req, std::string body,
              httplib::Response& res) {
    t_route = pattern;
    HttpRequest r;
    r.method = req.method;
    r.path = req.path;
    r.body = std::move(body);
    r.remote_addr = req.remote_addr;
    for (std::size_t i = 1; i < req.matches.size(); ++i) r.params.push_back(req.matches[i].str());
    for (const auto& [k, v] : req.params) r.query.emplace(k, v);
    for (const auto& [k, v] : req.headers) r.headers.emplace(Lower(k), v);
    std::string given = r.Header("x-request-id");
    r.request_id = ValidRequestId(given) ? given : NewRequestId();
    HttpResponse out;
    try {
      out = handler(r);
    } catch (const std::exception& e) {
      std::cerr << "engram serve: internal error on " << pattern << " (request " << r.request_id << "): " << e.what()
                << "\n";
      out = ErrorFor(500, r.request_id);
    } catch (...) {
      std::cerr << "engram serve: internal error on " << pattern << " (request " << r.request_id << ")\n";
      out = ErrorFor(500, r.request_id);
    }
    Apply(out, r.request_id, res);
  }
};

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  auto& svr = impl_->svr;
  const std::size_t threads = static_cast<std::size_t>(std::max(1, options.threads));
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  svr.set_payload_max_length(options.max_body_bytes);
  svr.set_read_timeout(options.read_timeout_s, 0);
  svr.set_write_timeout(options.write_timeout_s, 0);
  svr.set_keep_alive_timeout(options.keep_alive_timeout_s);
  svr.set_keep_alive_max_count(static_cast<std::size_t>(std::max(1, options.keep_alive_max_requests)));
  svr.set_tcp_nodelay(true);
  svr.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    t_start = Clock::now();
    t_started = true;
    t_route = "unmatched";
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Statuses the transport sets itself (no route, payload too large, an
  // unreadable request) get the API's error body; handler bodies are kept.
  svr.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.is_chunked_content_provider_) return httplib::Server::HandlerResponse::Unhandled;
    std::string id = res.get_header_value("X-Request-Id");
    if (id.empty()) id = NewRequestId();
    if (res.status == 404) {  // a known path with another method is 405 with Allow
      const std::string allow = impl_->AllowedMethods(req.path);
      if (!allow.empty()) {
        res.status = 405;
        res.set_header("Allow", allow);
      }
    }
    Apply(impl_->ErrorFor(res.status, id), id, res);
    return httplib::Server::HandlerResponse::Handled;
  }));
  svr.set_exception_handler([this](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    const std::string id = NewRequestId();
    std::cerr << "engram serve: internal error (request " << id << ")\n";
    Apply(impl_->ErrorFor(500, id), id, res);
  });
  svr.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    double seconds = t_started ? std::chrono::duration<double>(Clock::now() - t_start).count() : 0.0;
    if (impl_->observer) {
      const std::string route = t_started ? t_route : "unmatched";
      const std::string id = res.get_header_value("X-Request-Id");
      impl_->observer(RequestRecord{route, req.method, req.path, id, res.status, seconds});
    }
    t_started = false;
  });
}

HttpServer::~HttpServer() = default;

void HttpServer::Route(const std::string& method, const std::string& path, HttpHandler handler) {
  const std::string pattern = PathPattern(path);
  impl_->routes.emplace_back(method, std::regex(pattern));
  auto h = [this, path, handler](const httplib::Request& req, httplib::Response& res) {
    impl_->Handle(path, handler, req, req.body, res);
  };
  // Bodies are read by the route itself: httplib would otherwise parse a body
  // sent as application/x-www-form-urlencoded (curl -d's default type) into
  // query parameters, and refuse one over 8 KiB with 413.
  auto with_body = [this, path, handler](const httplib::Request& req, httplib::Response& res,
                                         const httplib::ContentReader& read) {
    std::string body;
    // A request with neither header has no body (RFC 9112 6.3); httplib
    // would wait for the connection to close.
    if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) {
      impl_->Handle(path, handler, req, std::move(body), res);
      return;
    }
    const std::size_t max = impl_->options.max_body_bytes;
    bool too_large = false;
    const bool ok = read([&](const char* data, std::size_t n) {
      if (body.size() + n > max) return !(too_large = true);
      body.append(data, n);
      return true;
    });
    if (!ok) {
      const int status = too_large || res.status == 413 ? 413 : 400;
      const std::string id = NewRequestId();
      t_route = path;
      Apply(impl_->ErrorFor(status, id), id, res);
      return;
    }
    impl_->Handle(path, handler, req, std::move(body), res);
  };
  auto& svr = impl_->svr;
  if (method == "GET") svr.Get(pattern, h);
  else if (method == "POST") svr.Post(pattern, with_body);
  else if (method == "PUT") svr.Put(pattern, with_body);
  else if (method == "PATCH") svr.Patch(pattern, with_body);
  else if (method == "DELETE") svr.Delete(pattern, h);
}

void HttpServer::SetObserver(RequestObserver observer) { impl_->observer = std::move(observer); }
void HttpServer::SetErrorResponder(ErrorResponder responder) { impl_->error_responder = std::move(responder); }

Result<int> HttpServer::Bind(const std::string& host, int port) {
  int bound = port == 0 ? impl_->svr.bind_to_any_port(host) : (impl_->svr.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    return Status::IoError("cannot listen on " + host + ":" + std::to_string(port) +
                               " (address in use, or not an address of this machine)");
  }
  impl_->bound = true;
  return bound;
}

Status HttpServer::Run() {
  if (!impl_->bound) return Status::FailedPrecondition("HttpServer::Run before Bind");
  impl_->running = true;
  if (!impl_->stop_requested) impl_->svr.listen_after_bind();
  impl_->running = false;
  return Status::Ok();
}

void HttpServer::Stop() {
  impl_->stop_requested = true;
  // Run() either has not started (it will see the request) or is about to
  // listen: wait until httplib can be stopped.
  while (impl_->running && !impl_->svr.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->svr.stop();
}

}  // namespace engram::server
