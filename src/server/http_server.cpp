// cpp-httplib lives in this file only.
//
// How connections are served (cpp-httplib 0.11, Debian's): httplib accepts
// connections and parses requests; this file owns everything about time,
// threads and bytes, so that slow or hostile clients cannot starve the server.
//
// - Threads. Connections and engine work are separate resources. Every open
//   connection gets a thread of its own from a pool that grows on demand up
//   to `max_connections` (a blocked thread costs a little memory and no CPU);
//   a connection beyond that is answered 503 and closed at once, from the
//   accept loop, instead of waiting in a queue. Handlers that touch the engine
//   run under a semaphore of `threads` permits, taken after the request was
//   read and released before the response is written (a streamed response
//   takes one while it produces). /healthz, /readyz and /v1/version need no
//   permit: they answer while every permit is busy.
// - Time. Each connection is read through our own Stream (ConnStream) with
//   deadlines instead of httplib's per-read timeout (which a client resets
//   with every byte): the request line and headers must arrive within
//   `header_timeout_s` of the request's first byte (of the connection's
//   start for its first request), the body within `body_timeout_s` plus one
//   second per 256 KiB it declares; an idle keep-alive connection is closed
//   after `keep_alive_timeout_s`. A server that is stopping closes idle and
//   half-received connections at once and finishes the requests in flight.
// - Bytes. Request line and headers together are capped (`max_header_bytes`,
//   431 beyond); each route has its own body limit (RouteOptions), and a
//   body declared larger is refused with 413 before any of it is read; a
//   chunked body is cut off at the limit. Bodies being read reserve their
//   size from a budget of max(2, threads) x max_body_bytes, so many
//   concurrent uploads cannot hold more than that (503 when it stays full).
// - Framing. Content-Length must be a plain byte count, sent once;
//   Transfer-Encoding may only be "chunked", and not together with
//   Content-Length; a header line needs a colon after a name that is a
//   token, and may not be folded or hold a NUL or a CR alone; an HTTP/1.1
//   request names one Host; anything else is a prompt 400 (httplib would
//   drop or keep such lines, where a proxy in front may read them
//   otherwise). After a response to a
//   request whose body was not read to its end (refused, malformed, or sent
//   to a route that takes none) the connection is closed.
// - The listening socket never shares its port (SO_REUSEADDR only; httplib's
//   default adds SO_REUSEPORT, which lets a second server bind the same port
//   and silently split the requests), and its backlog is raised from 5.
#include "server/http_server.hpp"

#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "core/text.hpp"

namespace engram::server {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kNoBodyRouteLimit = 64u << 10;  // GET / DELETE routes, and paths with no route
constexpr int kListenBacklog = 1024;
constexpr int kPollSliceMs = 200;                      // how often waits look at a stop
constexpr std::size_t kMaxLineRun = 4096;              // a chunk-size line
constexpr std::size_t kBodyBytesPerSecond = 256u << 10;

// What the current worker thread is answering (one connection per thread,
// one request of it at a time): the observer's route label and start.
thread_local std::string t_route;
thread_local Clock::time_point t_start;
thread_local bool t_started = false;
// Set by the connection pool, on the accept thread, for a connection over
// the cap: ServeConnection answers 503 and closes it.
thread_local bool t_refuse = false;

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

std::string Size(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// A path split at '/' ("/v1/memories/x" -> "", "v1", "memories", "x").
std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> out;
  for (std::size_t start = 0;;) {
    const std::size_t slash = path.find('/', start);
    out.emplace_back(path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

// Percent-decodes a path segment (%XX; a '%' not followed by two hex digits
// stays as it is, and so does '+').
std::string DecodeSegment(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int hi = i + 2 < s.size() ? text::HexDigitValue(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? text::HexDigitValue(s[i + 2]) : -1;
    if (s[i] == '%' && hi >= 0 && lo >= 0) {
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The path of a request target as sent: percent-encoded, without the query.
std::string_view RawPath(std::string_view target) { return target.substr(0, target.find('?')); }

// The segments of a request's path as sent (before the query), each
// percent-decoded on its own: routing sees an encoded '/' ("%2F") inside
// a segment, never as a separator, so "/mem0/v1/entities/user/org%2Fann/"
// names the user "org/ann".
std::vector<std::string> RequestSegments(std::string_view target) {
  std::vector<std::string> segments = SplitPath(RawPath(target));
  for (auto& seg : segments) {
    if (seg.find('%') != std::string::npos) seg = DecodeSegment(seg);
  }
  return segments;
}

int MsUntil(Clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return ms <= 0 ? 0 : static_cast<int>(std::min<long long>(ms, kPollSliceMs));
}

// A counting semaphore: the engine permits (`threads`).
class Permits {
 public:
  explicit Permits(int n) : free_(std::max(1, n)) {}
  void Acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return free_ > 0; });
    --free_;
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++free_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
};

class Permit {
 public:
  explicit Permit(Permits* p) : p_(p) {
    if (p_) p_->Acquire();
  }
  ~Permit() {
    if (p_) p_->Release();
  }
  Permit(const Permit&) = delete;
  Permit& operator=(const Permit&) = delete;

 private:
  Permits* p_;
};

// The bytes of request bodies being held; a body reserves its size before it
// is read.
class BodyBudget {
 public:
  explicit BodyBudget(std::size_t capacity) : free_(capacity) {}
  bool Reserve(std::size_t n, Clock::time_point until) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_until(lock, until, [&] { return free_ >= n; })) return false;
    free_ -= n;
    return true;
  }
  void Release(std::size_t n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      free_ += n;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t free_;
};

// A connection's socket as httplib's Stream, read against deadlines (see the
// top of the file) and capped in bytes. Single-threaded: one connection, one
// thread.
class ConnStream final : public httplib::Stream {
 public:
  enum class Phase { kHead, kBody, kNoReads };

  ConnStream(int fd, int write_timeout_s, std::size_t max_head, const std::atomic<bool>& stopping)
      : fd_(fd), write_timeout_s_(write_timeout_s), max_head_(max_head), stopping_(stopping) {}

  // A new request: its line and headers must arrive by `deadline`.
  void BeginHead(Clock::time_point deadline) {
    phase_ = Phase::kHead;
    deadline_ = deadline;
    head_bytes_ = 0;
    head_timed_out_ = head_overflow_ = body_timed_out_ = failed_ = false;
    head_ = HeadScan{};
  }
  // The headers were read: at most `max_bytes` of body follow, by `deadline`.
  void BeginBody(Clock::time_point deadline, std::uint64_t max_bytes) {
    phase_ = Phase::kBody;
    deadline_ = deadline;
    body_bytes_ = 0;
    body_cap_ = max_bytes;
    line_run_ = 0;
  }
  // Nothing more is read from this request (it is refused from its headers).
  void StopReading() { phase_ = Phase::kNoReads; }

  bool buffered() const { return off_ < len_; }
  bool head_timed_out() const { return head_timed_out_; }
  bool head_overflow() const { return head_overflow_; }
  bool body_timed_out() const { return body_timed_out_; }
  // What is wrong with the request line and headers as they were sent, ""
  // when nothing: httplib drops a header line without a colon and keeps a
  // folded one or one holding a NUL or a lone CR, which a proxy in front
  // may read otherwise (and so pass on a request this server reads as
  // another).
  const char* head_problem() const { return head_.problem; }
  // A read failed (timeout, cap, error): where the next request starts is unknown.
  bool failed() const { return failed_; }

  bool is_readable() const override {
    if (off_ < len_) return true;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
  bool is_writable() const override {
    pollfd p{fd_, POLLOUT, 0};
    return ::poll(&p, 1, write_timeout_s_ * 1000) > 0 && !(p.revents & (POLLERR | POLLHUP | POLLNVAL));
  }

  ssize_t read(char* ptr, std::size_t size) override {
    if (phase_ == Phase::kNoReads || failed_) return -1;
    if (off_ == len_) {
      const ssize_t got = Fill();
      if (got <= 0) {
        if (got < 0) failed_ = true;
        return got;
      }
    }
    std::size_t n = std::min(size, len_ - off_);
    if (phase_ == Phase::kHead) {
      if (head_bytes_ + n > max_head_) return Fail(&head_overflow_);
      head_bytes_ += n;
      head_.Scan(buf_ + off_, n);
    } else {
      if (body_bytes_ + n > body_cap_) return Fail(nullptr);
      body_bytes_ += n;
      // httplib reads the lines of a chunked body one byte at a time: a
      // chunk-size line may not run on without end.
      if (size == 1) {
        line_run_ = buf_[off_] == '\n' ? 0 : line_run_ + 1;
        if (line_run_ > kMaxLineRun) return Fail(nullptr);
      }
    }
    std::memcpy(ptr, buf_ + off_, n);
    off_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, std::size_t size) override {
    const auto deadline = Clock::now() + std::chrono::seconds(write_timeout_s_);
    for (;;) {
      const ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
      if (Clock::now() >= deadline) return -1;
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, std::max(1, MsUntil(deadline))) < 0 && errno != EINTR) return -1;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { Address(true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { Address(false, ip, port); }
  int socket() const override { return fd_; }

 private:
  ssize_t Fail(bool* reason) {
    if (reason) *reason = true;
    failed_ = true;
    return -1;
  }

  // Waits for bytes until the deadline; the count read, 0 at the end of
  // the stream, -1 on timeout, error or (before a request's body) a stop.
  ssize_t Fill() {
    for (;;) {
      if (phase_ == Phase::kHead && stopping_) return -1;
      if (Clock::now() >= deadline_) {
        (phase_ == Phase::kHead ? head_timed_out_ : body_timed_out_) = true;
        return -1;
      }
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, std::max(1, MsUntil(deadline_)));
      if (r < 0 && errno != EINTR) return -1;
      if (r <= 0) continue;
      const ssize_t n = ::recv(fd_, buf_, sizeof buf_, 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      off_ = 0;
      len_ = n > 0 ? static_cast<std::size_t>(n) : 0;
      return n;
    }
  }

  // The request line and header lines as they arrive (RFC 9112 2.2, 5):
  // the first problem found, and where the headers end (an empty line).
  struct HeadScan {
    const char* problem = "";
    bool headers = false;  // past the request line
    std::size_t len = 0;   // bytes of the current line (CR aside)
    bool colon = false, cr = false, done = false;
    void Scan(const char* p, std::size_t n) {
      for (std::size_t i = 0; i < n && !done && *problem == '\0'; ++i) Byte(p[i]);
    }
    void Byte(char b) {
      if (cr && b != '\n') {
        problem = "the request line or a header holds a CR not followed by LF";
        return;
      }
      cr = b == '\r';
      if (cr) return;
      if (b == '\0') {
        problem = "the request line or a header holds a NUL byte";
      } else if (b == '\n') {
        if (headers && len > 0 && !colon) problem = "a header line holds no \":\" between a name and a value";
        done = headers && len == 0;
        headers = true;
        len = 0;
        colon = false;
      } else {
        if (len == 0 && headers && (b == ' ' || b == '\t')) {
          problem = "a header line starts with a space or a tab (folded lines are not accepted)";
        }
        colon = colon || b == ':';
        ++len;
      }
    }
  };

  void Address(bool remote, std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    auto* sa = reinterpret_cast<sockaddr*>(&addr);
    if ((remote ? ::getpeername(fd_, sa, &len) : ::getsockname(fd_, sa, &len)) != 0) return;
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (::getnameinfo(sa, len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0) return;
    ip = host;
    port = std::atoi(serv);
  }

  int fd_;
  int write_timeout_s_;
  std::size_t max_head_;
  const std::atomic<bool>& stopping_;
  Phase phase_ = Phase::kHead;
  Clock::time_point deadline_;
  std::size_t head_bytes_ = 0;
  std::uint64_t body_bytes_ = 0, body_cap_ = 0;
  std::size_t line_run_ = 0;
  bool head_timed_out_ = false, head_overflow_ = false, body_timed_out_ = false, failed_ = false;
  HeadScan head_;
  char buf_[16384];
  std::size_t off_ = 0, len_ = 0;
};

// The request being answered on a connection, as far as the transport knows
// it from the headers.
struct Exchange {
  int route = -1;              // index of the matched route, -1 for none
  std::vector<std::string> params;  // its captures, percent-decoded
  bool body_present = false;   // Content-Length > 0, or chunked
  bool chunked = false;
  std::uint64_t content_length = 0;
  std::size_t limit = 0;       // the route's body limit
  Clock::time_point body_deadline;
  int error_status = 0;        // refused from its headers (answered before routing)
  std::string error_detail;
  bool body_consumed = false;  // the body was read to its end
  bool close_after = false;
};

struct Connection {
  Connection(int fd, const HttpServerOptions& o, const std::atomic<bool>& stopping)
      : stream(fd, std::max(1, o.write_timeout_s), o.max_header_bytes, stopping) {}
  // Whether the connection must close after the current response.
  bool WillClose() const { return x.close_after || stream.failed() || (x.body_present && !x.body_consumed); }
  ConnStream stream;
  Exchange x;
};
thread_local Connection* t_conn = nullptr;

// httplib's task queue: one thread per connection, created on demand up to
// `max`; beyond, the connection is refused on the accept thread.
class ConnectionPool final : public httplib::TaskQueue {
 public:
  explicit ConnectionPool(std::size_t max) : max_(std::max<std::size_t>(1, max)) {}
  ~ConnectionPool() override = default;

  void enqueue(std::function<void()> fn) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (active_ < max_) {
        ++active_;
        jobs_.push_back(std::move(fn));
        if (threads_.size() < active_) threads_.emplace_back([this] { Work(); });
        cv_.notify_one();
        return;
      }
    }
    t_refuse = true;  // fn answers 503 and closes the socket, without blocking
    fn();
    t_refuse = false;
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      shutdown_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

 private:
  void Work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // shutting down, nothing left
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      fn();
      std::lock_guard<std::mutex> lock(mu_);
      --active_;
    }
  }

  const std::size_t max_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t active_ = 0;  // queued or being served
  bool shutdown_ = false;
};

// httplib's server with our connection loop (see the top of the file).
class Transport final : public httplib::Server {
 public:
  std::function<bool(int)> serve_connection;

  bool ProcessRequest(httplib::Stream& strm, bool close_connection, bool& connection_closed,
                      const std::function<void(httplib::Request&)>& setup) {
    return process_request(strm, close_connection, connection_closed, setup);
  }
  bool Listening() const { return svr_sock_ != INVALID_SOCKET; }
  int ListenSocket() const { return svr_sock_; }

 private:
  bool process_and_close_socket(int sock) override { return serve_connection(sock); }
};

// Lets the peer read the response before the socket closes: a close with
// unread input would reset the connection and could destroy the response.
// Reads and discards for at most 2 s, until 300 ms pass without input.
void LingeringClose(int fd) {
  ::shutdown(fd, SHUT_WR);
  const auto end = Clock::now() + std::chrono::seconds(2);
  char sink[16384];
  while (Clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 300) <= 0) break;
    const ssize_t n = ::recv(fd, sink, sizeof sink, 0);
    if (n <= 0 && !(n < 0 && errno == EINTR)) break;
  }
  ::close(fd);
}

// Why binding host:port failed, tried again with the socket options the
// server uses ("" when it now works).
std::string BindFailure(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) return std::string("cannot resolve the host (") + ::gai_strerror(rc) + ")";
  std::string why = "unknown error";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int s = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (s < 0) {
      why = std::strerror(errno);
      continue;
    }
    int yes = 1;
    ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    const int bound = ::bind(s, a->ai_addr, a->ai_addrlen);
    const int err = errno;
    ::close(s);
    if (bound == 0) {
      why.clear();
      break;
    }
    if (err == EADDRINUSE) {
      why = "the address is already in use (is another server listening there?)";
      break;
    }
    why = err == EADDRNOTAVAIL ? "not an address of this machine" : std::strerror(err);
  }
  ::freeaddrinfo(found);
  return why;
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
  struct RouteEntry {
    std::string method, label;
    std::vector<std::string> segments;  // of the template; "{name}" is a capture
    HttpHandler handler;
    std::size_t limit;  // body bytes
    bool reads_body;    // POST, PUT, PATCH: the route reads its body itself
    bool light;
  };

  explicit Impl(const HttpServerOptions& o)
      : options(o),
        permits(o.threads),
        budget(std::max<std::size_t>(2, static_cast<std::size_t>(std::max(1, o.threads))) * o.max_body_bytes) {}

  HttpServerOptions options;
  Transport svr;
  RequestObserver observer;
  ErrorResponder error_responder;
  Permits permits;
  BodyBudget budget;
  bool bound = false;
  // Stop() may come before Run() is listening (a signal right after Bind):
  // Run() then returns at once instead of serving forever.
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> running{false};
  std::vector<RouteEntry> routes;

  // The methods a path is served with ("" when the path matches no route).
  std::string AllowedMethods(const std::vector<std::string>& path) const {
    std::string allow;
    for (const auto& r : routes) {
      if (Matches(r, path, nullptr) && allow.find(r.method) == std::string::npos) {
        allow += (allow.empty() ? "" : ", ") + r.method;
      }
    }
    return allow;
  }

  // Whether the route's template matches the (decoded) path segments; its
  // captures (each one whole, non-empty segment) go to `params`.
  static bool Matches(const RouteEntry& r, const std::vector<std::string>& path, std::vector<std::string>* params) {
    auto capture = [](const std::string& t) { return t.size() > 2 && t.front() == '{' && t.back() == '}'; };
    if (r.segments.size() != path.size()) return false;
    for (std::size_t i = 0; i < path.size(); ++i) {
      if (capture(r.segments[i]) ? path[i].empty() : r.segments[i] != path[i]) return false;
    }
    if (params) {
      params->clear();
      for (std::size_t i = 0; i < path.size(); ++i) {
        if (capture(r.segments[i])) params->push_back(path[i]);
      }
    }
    return true;
  }

  // The route a request goes to (-1 for none), with its captures.
  int MatchRoute(const std::string& method, const std::vector<std::string>& path,
                 std::vector<std::string>* params) const {
    const std::string m = method == "HEAD" ? "GET" : method;
    for (std::size_t i = 0; i < routes.size(); ++i) {
      if (routes[i].method == m && Matches(routes[i], path, params)) return static_cast<int>(i);
    }
    return -1;
  }

  HttpResponse ErrorFor(int status, const std::string& id, const std::string& detail = "") const {
    if (error_responder) return error_responder(status, id, detail);
    HttpResponse r;
    r.status = status;
    r.content_type = "text/plain";
    r.body = "error " + std::to_string(status) + (detail.empty() ? "" : ": " + detail) + "\n";
    return r;
  }

  void Apply(const HttpResponse& r, const std::string& request_id, httplib::Response& res, Permits* permits) {
    res.status = r.status;
    for (const auto& [k, v] : r.headers) res.set_header(k, v);
    res.set_header("X-Request-Id", request_id);
    if (!r.stream) {
      res.set_content(r.body, r.content_type);
      return;
    }
    auto stream = r.stream;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(r.content_type, [stream, request_id, permits](std::size_t, httplib::DataSink& sink) {
      try {
        Permit permit(permits);  // producing the stream is engine work
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

  // Answers a transport error decided after routing (the body could not be read).
  void Refuse(int status, const std::string& detail, httplib::Response& res) {
    if (t_conn) t_conn->x.close_after = true;
    const std::string id = NewRequestId();
    Apply(ErrorFor(status, id, detail), id, res, nullptr);
  }

  // The route of a request httplib hands over (-1 for none) and its
  // captures: as matched from the headers on a connection.
  int Routed(const httplib::Request& req, std::vector<std::string>* params) const {
    if (t_conn) {
      *params = std::move(t_conn->x.params);  // matched once per request
      return t_conn->x.route;
    }
    return MatchRoute(req.method, RequestSegments(req.target), params);
  }

  // Every request of a method comes here (httplib's own routing would see the
  // path with "%2F" decoded into a separator): the route matched on the
  // path as sent answers, or 404/405 through the error handler.
  void Serve(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* read) {
    std::vector<std::string> params;
    const int index = Routed(req, &params);
    if (index < 0) {  // (a body was refused with the headers)
      res.status = 404;
      return;
    }
    if (read) return HandleWithBody(index, std::move(params), req, res, *read);
    // httplib has read a DELETE's body (within the no-body limit); a GET's it never reads.
    if (t_conn && req.method == "DELETE") t_conn->x.body_consumed = true;
    Handle(index, std::move(params), req, req.body, res);
  }

  void Handle(int index, std::vector<std::string> params, const httplib::Request& req, std::string body,
              httplib::Response& res) {
    const RouteEntry& route = routes[static_cast<std::size_t>(index)];
    t_route = route.label;
    HttpRequest r;
    r.method = req.method;
    r.path = RawPath(req.target);
    r.body = std::move(body);
    r.remote_addr = req.remote_addr;
    r.params = std::move(params);
    for (const auto& [k, v] : req.params) r.query.emplace(k, v);
    for (const auto& [k, v] : req.headers) {
      std::string name = Lower(k);
      if (r.headers.count(name)) r.repeated_headers.insert(name);
      else r.headers.emplace(std::move(name), v);
    }
    std::string given = r.Header("x-request-id");
    r.request_id = ValidRequestId(given) ? given : NewRequestId();
    Permits* engine = route.light ? nullptr : &permits;
    HttpResponse out;
    try {
      Permit permit(engine);
      out = route.handler(r);
    } catch (const std::exception& e) {
      std::cerr << "engram serve: internal error on " << route.label << " (request " << r.request_id
                << "): " << e.what() << "\n";
      out = ErrorFor(500, r.request_id);
    } catch (...) {
      std::cerr << "engram serve: internal error on " << route.label << " (request " << r.request_id << ")\n";
      out = ErrorFor(500, r.request_id);
    }
    Apply(out, r.request_id, res, engine);
  }

  // A POST, PUT or PATCH route: reads the body within the route's limit
  // (httplib would otherwise parse a body typed application/x-www-form-
  // urlencoded, curl -d's default, into query parameters, and refuse one
  // over 8 KiB), then handles the request.
  void HandleWithBody(int index, std::vector<std::string> params, const httplib::Request& req,
                      httplib::Response& res, const httplib::ContentReader& read) {
    Connection* c = t_conn;
    if (!c || !c->x.body_present) {  // no Content-Length, or 0, and not chunked: no body (RFC 9112 6.3)
      if (c) c->x.body_consumed = true;
      Handle(index, std::move(params), req, std::string(), res);
      return;
    }
    Exchange& x = c->x;
    const std::size_t expected = x.chunked ? x.limit : static_cast<std::size_t>(x.content_length);
    if (!budget.Reserve(expected, std::min(x.body_deadline, Clock::now() + std::chrono::seconds(10)))) {
      Refuse(503, "the server is receiving too many large bodies at once; retry shortly", res);
      return;
    }
    struct Release {
      BodyBudget& b;
      std::size_t n;
      ~Release() { b.Release(n); }
    } release{budget, expected};
    std::string body;
    if (!x.chunked) body.reserve(expected);
    bool too_large = false;
    const bool ok = read([&](const char* data, std::size_t n) {
      if (body.size() + n > x.limit) return !(too_large = true);
      body.append(data, n);
      return true;
    });
    if (!ok) {
      if (too_large) {
        Refuse(413, "body: larger than this route's limit of " + Size(x.limit), res);
      } else if (c->stream.body_timed_out()) {
        Refuse(408, "body: not received within the time allowed; send it at once", res);
      } else {
        Refuse(400, "body: malformed (chunked encoding, or shorter than its Content-Length)", res);
      }
      return;
    }
    x.body_consumed = true;
    Handle(index, std::move(params), req, std::move(body), res);
  }

  // Called by httplib once a request's line and headers are read: matches
  // the route, checks the framing, and sets the body's deadline and cap.
  void OnHeaders(httplib::Request& req, Connection& conn) {
    Exchange& x = conn.x;
    const auto now = Clock::now();
    t_start = now;
    t_started = true;
    x.route = MatchRoute(req.method, RequestSegments(req.target), &x.params);
    t_route = x.route >= 0 ? routes[static_cast<std::size_t>(x.route)].label : "unmatched";
    const RouteEntry* route = x.route >= 0 ? &routes[static_cast<std::size_t>(x.route)] : nullptr;
    x.limit = route && route->reads_body ? route->limit : kNoBodyRouteLimit;
    auto refuse = [&](int status, std::string detail) {
      x.error_status = status;
      x.error_detail = std::move(detail);
      x.close_after = true;  // whatever follows the headers is not read
      conn.stream.StopReading();
    };
    if (*conn.stream.head_problem() != '\0') return refuse(400, conn.stream.head_problem());
    // HTTP/1.1 names its host once (RFC 9112 3.2).
    if (req.version == "HTTP/1.1") {
      const std::size_t hosts = req.get_header_value_count("Host");
      if (hosts == 0) return refuse(400, "Host: missing (an HTTP/1.1 request names its host)");
      if (hosts > 1) return refuse(400, "Host: sent more than once");
    }
    // A header name is a token (RFC 9110): "Transfer-Encoding : chunked"
    // is no Transfer-Encoding to httplib, whose body would then be read as
    // the next request (smuggled past a proxy that reads it as one).
    for (const auto& [name, value] : req.headers) {
      const bool token = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
        const auto c = static_cast<unsigned char>(ch);
        return std::isalnum(c) || (c != 0 && std::strchr("!#$%&'*+-.^_`|~", ch) != nullptr);
      });
      if (!token) return refuse(400, "a header name holds a space or a character no header name may hold");
    }
    const std::size_t lengths = req.get_header_value_count("Content-Length");
    const std::size_t encodings = req.get_header_value_count("Transfer-Encoding");
    if (lengths > 1) return refuse(400, "Content-Length: sent more than once");
    if (encodings > 0) {
      if (lengths > 0) return refuse(400, "send Content-Length or Transfer-Encoding, not both");
      if (encodings > 1 || ::strcasecmp(req.get_header_value("Transfer-Encoding").c_str(), "chunked") != 0) {
        return refuse(400, "Transfer-Encoding: only \"chunked\" is accepted");
      }
      x.chunked = x.body_present = true;
    } else if (lengths == 1) {
      const std::string cl = req.get_header_value("Content-Length");
      if (cl.empty() || cl.size() > 18 || cl.find_first_not_of("0123456789") != std::string::npos) {
        return refuse(400, "Content-Length: \"" + cl.substr(0, 40) + "\" is not a byte count");
      }
      x.content_length = std::stoull(cl);
      x.body_present = x.content_length > 0;
    }
    if (!x.body_present) {
      conn.stream.BeginBody(now, 0);
      return;
    }
    if (!x.chunked && x.content_length > x.limit) {
      return refuse(413, "body: larger than this route's limit of " + Size(x.limit));
    }
    if (!route) return refuse(404, "");  // answered (404 or 405) without reading the body
    const std::uint64_t expected = x.chunked ? x.limit : x.content_length;
    x.body_deadline = now + std::chrono::seconds(options.body_timeout_s) +
                      std::chrono::seconds(expected / kBodyBytesPerSecond);
    // A chunked body carries its framing too: tiny chunks cost up to 6 bytes a byte.
    conn.stream.BeginBody(x.body_deadline, x.chunked ? expected * 8 + (64u << 10) : expected);
  }

  // Waits until the connection has a request to read: false when it ends
  // (peer closed is seen by httplib as an empty read), idles past `until`,
  // or the server stops.
  bool WaitForRequest(int fd, const ConnStream& s, Clock::time_point until) {
    if (s.buffered()) return true;
    for (;;) {
      if (!svr.Listening()) return false;
      pollfd p{fd, POLLIN, 0};
      const int r = ::poll(&p, 1, MsUntil(until));
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) return false;
      if (r == 0 && Clock::now() >= until) return false;
    }
  }

  // Answers 503 on a connection over the cap and closes it, without waiting.
  void RefuseConnection(int fd) {
    const std::string id = NewRequestId();
    const HttpResponse r = ErrorFor(503, id,
                                    "the server has its maximum of " + std::to_string(options.max_connections) +
                                        " connections open; retry shortly");
    const std::string text = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: " + r.content_type +
                             "\r\nContent-Length: " + std::to_string(r.body.size()) +
                             "\r\nConnection: close\r\nRetry-After: 1\r\nX-Request-Id: " + id + "\r\n\r\n" + r.body;
    (void)::send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
  }

  bool ServeConnection(int fd) {
    if (t_refuse) {
      RefuseConnection(fd);
      return false;
    }
    Connection conn(fd, options, stop_requested);
    t_conn = &conn;
    bool ret = false, linger = false;
    const auto head_time = std::chrono::seconds(std::max(1, options.header_timeout_s));
    // The first request's headers are due from the connection's start; a
    // later one's from its first byte, which may take the keep-alive time.
    auto until = Clock::now() + head_time;
    for (int left = std::max(1, options.keep_alive_max_requests); left > 0; --left) {
      if (!WaitForRequest(fd, conn.stream, until)) break;
      conn.x = Exchange{};
      conn.stream.BeginHead(left == std::max(1, options.keep_alive_max_requests) ? until : Clock::now() + head_time);
      bool closed = false;
      ret = svr.ProcessRequest(conn.stream, left == 1, closed,
                               [this, &conn](httplib::Request& req) { OnHeaders(req, conn); });
      t_started = false;
      if (conn.WillClose()) {
        linger = ret;  // a response went out: let the peer read it
        break;
      }
      if (!ret || closed) break;
      until = Clock::now() + std::chrono::seconds(std::max(1, options.keep_alive_timeout_s));
    }
    t_conn = nullptr;
    if (linger) {
      LingeringClose(fd);
    } else {
      ::shutdown(fd, SHUT_RDWR);
      ::close(fd);
    }
    return ret;
  }
};

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>(options)) {
  auto& svr = impl_->svr;
  const std::size_t max_connections = static_cast<std::size_t>(std::max(1, options.max_connections));
  svr.new_task_queue = [max_connections] { return new ConnectionPool(max_connections); };
  svr.serve_connection = [this](int fd) { return impl_->ServeConnection(fd); };
  svr.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  svr.set_payload_max_length(options.max_body_bytes);  // every route's limit is checked before httplib reads
  svr.set_write_timeout(options.write_timeout_s, 0);
  svr.set_keep_alive_timeout(options.keep_alive_timeout_s);
  svr.set_keep_alive_max_count(static_cast<std::size_t>(std::max(1, options.keep_alive_max_requests)));
  svr.set_tcp_nodelay(true);
  // Routing is the server's own, on the path as sent (Impl::Serve): every
  // path of a method reaches it.
  const std::string any = "[\\s\\S]*";
  auto plain = [this](const httplib::Request& req, httplib::Response& res) { impl_->Serve(req, res, nullptr); };
  auto with_body = [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
    impl_->Serve(req, res, &read);
  };
  svr.Get(any, plain);
  svr.Delete(any, plain);
  svr.Post(any, with_body);
  svr.Put(any, with_body);
  svr.Patch(any, with_body);
  // A request refused from its headers is answered here, before httplib
  // would read its body.
  svr.set_pre_routing_handler([](const httplib::Request&, httplib::Response& res) {
    if (t_conn && t_conn->x.error_status) {
      res.status = t_conn->x.error_status;
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // A client that waits for 100 Continue hears the refusal instead.
  svr.set_expect_100_continue_handler([](const httplib::Request&, httplib::Response& res) {
    if (t_conn && t_conn->x.error_status) return res.status = t_conn->x.error_status;
    return 100;
  });
  svr.set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    if (t_conn && t_conn->WillClose()) {
      res.headers.erase("Keep-Alive");
      if (res.get_header_value("Connection") != "close") {
        res.headers.erase("Connection");
        res.set_header("Connection", "close");
      }
    }
  });
  // Statuses the transport sets itself (no route, payload too large, an
  // unreadable request) get the API's error body; handler bodies are kept.
  svr.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.is_chunked_content_provider_) return httplib::Server::HandlerResponse::Unhandled;
    std::string id = res.get_header_value("X-Request-Id");
    if (id.empty()) id = NewRequestId();
    std::string detail;
    if (Connection* c = t_conn) {
      if (c->stream.head_timed_out()) {
        res.status = 408;
        detail = "the request's headers did not arrive within " + std::to_string(impl_->options.header_timeout_s) + " s";
      } else if (c->stream.head_overflow()) {
        res.status = 431;
        detail = "the request line and headers are larger than " + Size(impl_->options.max_header_bytes);
      } else if (c->x.error_status == res.status) {
        detail = c->x.error_detail;
      }
    }
    if (res.status == 404) {  // a known path with another method is 405 with Allow
      const std::string allow = impl_->AllowedMethods(RequestSegments(req.target));
      if (!allow.empty()) {
        res.status = 405;
        res.set_header("Allow", allow);
      }
    }
    impl_->Apply(impl_->ErrorFor(res.status, id, detail), id, res, nullptr);
    return httplib::Server::HandlerResponse::Handled;
  }));
  svr.set_exception_handler([this](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    const std::string id = NewRequestId();
    std::cerr << "engram serve: internal error (request " << id << ")\n";
    impl_->Apply(impl_->ErrorFor(500, id), id, res, nullptr);
  });
  svr.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    double seconds = t_started ? std::chrono::duration<double>(Clock::now() - t_start).count() : 0.0;
    if (impl_->observer) {
      const std::string route = t_started ? t_route : "unmatched";
      const std::string id = res.get_header_value("X-Request-Id");
      const std::string path(RawPath(req.target));  // as sent: no decoded line breaks
      impl_->observer(RequestRecord{route, req.method, path, id, res.status, seconds});
    }
    t_started = false;
  });
}

HttpServer::~HttpServer() = default;

void HttpServer::Route(const std::string& method, const std::string& path, HttpHandler handler,
                       RouteOptions options) {
  const bool reads_body = method == "POST" || method == "PUT" || method == "PATCH";
  const std::size_t max = impl_->options.max_body_bytes;
  const std::size_t limit = options.max_body_bytes == 0 ? max : std::min(options.max_body_bytes, max);
  impl_->routes.push_back({method, path, SplitPath(path), std::move(handler), limit, reads_body, options.light});
}

HttpResponse HttpServer::Dispatch(HttpRequest req) const {
  const std::vector<std::string> path = RequestSegments(req.path);
  const int index = impl_->MatchRoute(req.method, path, &req.params);
  if (index < 0) {
    const std::string allow = impl_->AllowedMethods(path);
    HttpResponse r = impl_->ErrorFor(allow.empty() ? 404 : 405, req.request_id);
    if (!allow.empty()) r.headers.emplace_back("Allow", allow);
    return r;
  }
  const Impl::RouteEntry& route = impl_->routes[static_cast<std::size_t>(index)];
  try {
    return route.handler(req);
  } catch (const std::exception& e) {
    std::cerr << "engram serve: internal error on " << route.label << " (request " << req.request_id
              << "): " << e.what() << "\n";
  } catch (...) {
    std::cerr << "engram serve: internal error on " << route.label << " (request " << req.request_id << ")\n";
  }
  return impl_->ErrorFor(500, req.request_id);
}

void HttpServer::SetObserver(RequestObserver observer) { impl_->observer = std::move(observer); }
void HttpServer::SetErrorResponder(ErrorResponder responder) { impl_->error_responder = std::move(responder); }

Result<int> HttpServer::Bind(const std::string& host, int port) {
  if (port < 0 || port > 65535) return Status::InvalidArgument("cannot listen on port " + std::to_string(port));
  int bound = port == 0 ? impl_->svr.bind_to_any_port(host) : (impl_->svr.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    std::string why = BindFailure(host, port);
    if (why.empty()) why = "the address could not be bound";
    return Status::IoError("cannot listen on " + host + ":" + std::to_string(port) + ": " + why);
  }
  // httplib listens with a backlog of 5: a burst of connections would wait
  // for SYN retransmits.
  (void)::listen(impl_->svr.ListenSocket(), kListenBacklog);
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
