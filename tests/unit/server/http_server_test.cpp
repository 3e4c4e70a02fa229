// The HTTP transport on loopback: route params, the exception backstop, the
// transport's own errors, the observer, and a stop before Run.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <stdexcept>
#include <thread>

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
    server_->SetErrorResponder([](int status, const std::string& id) { return Text(status, "E" + std::to_string(status) + ":" + id); });
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

TEST(HttpServerStop, StopBeforeRunReturnsAtOnce) {
  HttpServer server(HttpServerOptions{});
  ASSERT_TRUE(server.Bind("127.0.0.1", 0).ok());
  server.Stop();
  std::thread runner([&] { (void)server.Run(); });
  runner.join();  // would hang if the stop were lost
  EXPECT_EQ(server.Bind("127.0.0.1", -5).ok(), false);
}

}  // namespace
}  // namespace engram::server
