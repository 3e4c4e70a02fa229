// The HTTP transport on loopback: route params, the exception backstop, the
// transport's own errors, the observer, a stop before Run, per-route body
// limits, engine permits against light routes, header deadlines, and a port
// that is never shared.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "testing/loopback_socket.hpp"
#include "server/http_server.hpp"

namespace engram::server {
namespace {

HttpResponse Text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain";
  r.body = std::move(body);
  return r;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpServerOptions o;
    o.threads = 2;
    o.max_body_bytes = 1024;
    server_ = std::make_unique<HttpServer>(o);
    server_->Route("GET", "/items/{id}/parts/{part}", [](const HttpRequest& r) {
      std::string q;
      r.Query("q", &q);
      return Text(200, r.params.at(0) + "|" + r.params.at(1) + "|" + q + "|" + r.request_id);
    });
    server_->Route("POST", "/echo", [](const HttpRequest& r) { return Text(200, r.body); });
    server_->Route("GET", "/boom", [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); });
    server_->Route("GET", "/stream", [](const HttpRequest&) {
      HttpResponse r;
      r.content_type = "text/event-stream";
      r.stream = [](const StreamWriter& write) {
        write("a");
        write("b");
      };
      return r;
    });
    server_->SetErrorResponder([](int status, const std::string& id, const std::string&) {
      return Text(status, "E" + std::to_string(status) + ":" + id);
    });
    server_->SetObserver([this](const RequestRecord& r) {
      if (r.route == "/items/{id}/parts/{part}" && r.status == 200 && r.request_id == "req-1") ++observed_;
    });
    auto port = server_->Bind("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    port_ = *port;
    runner_ = std::thread([this] { (void)server_->Run(); });
  }
  void TearDown() override {
    server_->Stop();
    runner_.join();
  }
  std::unique_ptr<HttpServer> server_;
  std::thread runner_;
  int port_ = 0;
  std::atomic<int> observed_{0};
};

TEST_F(HttpServerTest, RoutesBackstopAndTransportErrors) {
  httplib::Client c("127.0.0.1", port_);
  auto ok = c.Get("/items/42/parts/x?q=z", {{"X-Request-Id", "req-1"}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "42|x|z|req-1");
  EXPECT_EQ(ok->get_header_value("X-Request-Id"), "req-1");

  auto boom = c.Get("/boom");
  ASSERT_TRUE(boom);
  EXPECT_EQ(boom->status, 500);
  const std::string id = boom->get_header_value("X-Request-Id");
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(boom->body, "E500:" + id);

  auto missing = c.Get("/nowhere");
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->body.rfind("E404:", 0), 0u);
  auto big = c.Post("/echo", std::string(4096, 'x'), "text/plain");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_EQ(big->body.rfind("E413:", 0), 0u);
  EXPECT_EQ(c.Post("/echo", "hello", "text/plain")->body, "hello");
  auto streamed = c.Get("/stream");
  EXPECT_EQ(streamed->body, "ab");
  for (int i = 0; i < 100 && observed_ == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(observed_, 1);
}

int Connect(int port) { return engram::testing::ConnectLoopback(port); }

// What arrives until the peer closes or `wait` passes.
std::string ReadUntilClose(int fd, std::chrono::seconds wait, bool* closed) {
  std::string out;
  *closed = false;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (!*closed && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
    else *closed = true;
  }
  return out;
}

// A server on a free loopback port, run on a thread of its own.
class Running {
 public:
  explicit Running(HttpServerOptions o, const std::function<void(HttpServer&)>& routes) : server_(o) {
    routes(server_);
    server_.SetErrorResponder([](int status, const std::string&, const std::string& detail) {
      return Text(status, std::to_string(status) + " " + detail);
    });
    auto port = server_.Bind("127.0.0.1", 0);
    if (port.ok()) port_ = *port;
    runner_ = std::thread([this] { (void)server_.Run(); });
  }
  ~Running() {
    server_.Stop();
    runner_.join();
  }
  int port() const { return port_; }
  HttpServer& server() { return server_; }

 private:
  HttpServer server_;
  int port_ = 0;
  std::thread runner_;
};

TEST(HttpServerLimits, EachRouteHasItsBodyLimitAndALargerDeclaredBodyIsRefusedUnread) {
  HttpServerOptions o;
  o.max_body_bytes = 1 << 20;
  Running s(o, [](HttpServer& server) {
    RouteOptions small;
    small.max_body_bytes = 16;
    server.Route("POST", "/small", [](const HttpRequest& r) { return Text(200, r.body); }, small);
    server.Route("POST", "/large", [](const HttpRequest& r) { return Text(200, std::to_string(r.body.size())); });
  });
  httplib::Client c("127.0.0.1", s.port());
  EXPECT_EQ(c.Post("/small", "0123456789", "text/plain")->body, "0123456789");
  auto refused = c.Post("/small", std::string(17, 'x'), "text/plain");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 413);
  EXPECT_NE(refused->body.find("limit of 16 bytes"), std::string::npos) << refused->body;
  EXPECT_EQ(c.Post("/large", std::string(100000, 'x'), "text/plain")->body, "100000");
  // Declared over the limit: answered from the headers, the body never sent.
  const int fd = Connect(s.port());
  ASSERT_GE(fd, 0);
  const std::string head = "POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n";
  ASSERT_EQ(send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
  bool closed = false;
  const std::string answer = ReadUntilClose(fd, std::chrono::seconds(10), &closed);
  close(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
  EXPECT_TRUE(closed);
}

TEST(HttpServerLimits, LightRoutesAnswerWhileEveryEnginePermitIsBusy) {
  HttpServerOptions o;
  o.threads = 1;
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, release = false;
  std::atomic<int> fast_entered{0};
  Running s(o, [&](HttpServer& server) {
    server.Route("GET", "/slow", [&](const HttpRequest&) {
      std::unique_lock<std::mutex> lock(mu);
      entered = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
      return Text(200, "slow");
    });
    server.Route("GET", "/fast", [&](const HttpRequest&) {
      ++fast_entered;
      return Text(200, "fast");
    });
    RouteOptions light;
    light.light = true;
    server.Route("GET", "/light", [](const HttpRequest&) { return Text(200, "light"); }, light);
  });
  std::thread slow([&] { httplib::Client("127.0.0.1", s.port()).Get("/slow"); });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return entered; }));
  }
  std::thread fast([&] { httplib::Client("127.0.0.1", s.port()).Get("/fast"); });
  httplib::Client c("127.0.0.1", s.port());
  c.set_read_timeout(10, 0);
  auto light = c.Get("/light");  // its own connection thread, no permit
  ASSERT_TRUE(light);
  EXPECT_EQ(light->body, "light");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(fast_entered, 0);  // waits for the one permit
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  slow.join();
  fast.join();
  EXPECT_EQ(fast_entered, 1);
}

TEST(HttpServerLimits, HeadersMustArriveInTimeAndConnectionsBeyondTheCapAreRefused) {
  HttpServerOptions o;
  o.header_timeout_s = 1;
  o.max_connections = 2;
  Running s(o, [](HttpServer& server) {
    server.Route("GET", "/x", [](const HttpRequest&) { return Text(200, "x"); });
  });
  const int a = Connect(s.port()), b = Connect(s.port());
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  ASSERT_EQ(send(a, "GET /x HT", 9, MSG_NOSIGNAL), 9);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int c = Connect(s.port());  // the third: over the cap
  bool closed = false;
  const std::string refused = ReadUntilClose(c, std::chrono::seconds(10), &closed);
  close(c);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  // The server closes both (the partial request line and the silent one)
  // once their headers are overdue.
  for (int fd : {a, b}) {
    ReadUntilClose(fd, std::chrono::seconds(10), &closed);
    EXPECT_TRUE(closed);
    close(fd);
  }
  // Their threads are free again a moment after they closed.
  std::string body;
  for (int i = 0; i < 100 && body != "x"; ++i) {
    auto r = httplib::Client("127.0.0.1", s.port()).Get("/x");
    body = r ? r->body : "";
    if (body != "x") std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(body, "x");
}

TEST(HttpServerLimits, KeepAliveConnectionsServeManyRequests) {
  Running s(HttpServerOptions{}, [](HttpServer& server) {
    server.Route("POST", "/echo", [](const HttpRequest& r) { return Text(200, r.body); });
    server.Route("GET", "/x", [](const HttpRequest&) { return Text(200, "x"); });
  });
  httplib::Client c("127.0.0.1", s.port());
  c.set_keep_alive(true);
  for (int i = 0; i < 20; ++i) {
    auto r = i % 2 ? c.Get("/x") : c.Post("/echo", std::to_string(i), "text/plain");
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->body, i % 2 ? "x" : std::to_string(i));
  }
  // Two requests in one write (pipelined): both answered in order.
  const int fd = Connect(s.port());
  const std::string two = "GET /x HTTP/1.1\r\nHost: a\r\n\r\nPOST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n"
                          "Connection: close\r\n\r\nok";
  ASSERT_EQ(send(fd, two.data(), two.size(), MSG_NOSIGNAL), static_cast<ssize_t>(two.size()));
  bool closed = false;
  const std::string both = ReadUntilClose(fd, std::chrono::seconds(10), &closed);
  close(fd);
  EXPECT_EQ(both.rfind("HTTP/1.1 200", 0), 0u) << both;
  EXPECT_NE(both.find("\r\n\r\nok"), std::string::npos) << both;
  EXPECT_TRUE(closed);
}

TEST(HttpServerBind, APortInUseIsNeverShared) {
  HttpServer first(HttpServerOptions{});
  auto port = first.Bind("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  HttpServer second(HttpServerOptions{});
  auto again = second.Bind("127.0.0.1", *port);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("already in use"), std::string::npos) << again.status().message();
}

TEST(HttpServerStop, StopBeforeRunReturnsAtOnce) {
  HttpServer server(HttpServerOptions{});
  ASSERT_TRUE(server.Bind("127.0.0.1", 0).ok());
  server.Stop();
  std::thread runner([&] { (void)server.Run(); });
  runner.join();  // would hang if the stop were lost
  EXPECT_EQ(server.Bind("127.0.0.1", -5).ok(), false);
}

// The in-process seam of the fuzz targets: the same route table, captures,
// exception backstop and transport errors as a connection, without a socket.
TEST(HttpServerDispatch, AnswersInProcessAsAConnectionWould) {
  HttpServer server(HttpServerOptions{});
  server.Route("GET", "/items/{id}/parts/{part}", [](const HttpRequest& req) {
    return Text(200, req.params.at(0) + "|" + req.params.at(1) + "|" + req.body);
  });
  server.Route("POST", "/boom", [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); });
  server.SetErrorResponder([](int status, const std::string& id, const std::string&) {
    return Text(status, "error " + id);
  });
  HttpRequest req;
  req.method = "GET";
  req.path = "/items/a%20b/parts/7";
  req.params = {"stale"};
  req.body = "x";
  req.request_id = "r1";
  HttpResponse r = server.Dispatch(req);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "a b|7|x");
  req.path = "/items/a%2Fb/parts/%2F%zz";  // an encoded '/' is part of a capture; a bad escape stays
  r = server.Dispatch(req);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "a/b|/%zz|x");
  req.path = "/items//parts/7";  // a capture is one non-empty segment
  EXPECT_EQ(server.Dispatch(req).status, 404);
  req.path = "/items/a/b/parts/7";
  EXPECT_EQ(server.Dispatch(req).status, 404);
  req.method = "POST";
  req.path = "/items/a/parts/7";
  r = server.Dispatch(req);
  EXPECT_EQ(r.status, 405);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0], (std::pair<std::string, std::string>("Allow", "GET")));
  req.path = "/boom";
  r = server.Dispatch(req);
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "error r1");
}

}  // namespace
}  // namespace engram::server
