// `engram serve` against hostile or careless clients, on the real binary:
// JSON nested without end, bodies larger than their route takes (and bodies
// that would parse into trees many times their size), ambiguous credentials,
// a second server on a port in use, slow and malformed clients, and more
// connections than the server takes. Times appear only as generous bounds
// that fail when the server is starved or stuck, never as measurements.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "testing/loopback_socket.hpp"
#include "testing/server_process.hpp"
#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"

namespace et = engram::testing;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

int Connect(int port) { return engram::testing::ConnectLoopback(port); }

bool SendAll(int fd, const std::string& data) {
  for (std::size_t sent = 0; sent < data.size();) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// What arrives on `fd` until the peer closes it or `wait` passes; *closed
// says whether the peer closed it (end of stream or reset).
std::string ReadUntilClose(int fd, std::chrono::seconds wait, bool* closed = nullptr) {
  std::string out;
  const auto deadline = Clock::now() + wait;
  bool ended = false;
  while (!ended && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[16384];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
    else ended = true;
  }
  if (closed) *closed = ended;
  return out;
}

// The body of a raw response as JSON (null when there is none).
json RawBody(const std::string& response) {
  const auto at = response.find("\r\n\r\n");
  return at == std::string::npos ? json() : json::parse(response.substr(at + 4), nullptr, false);
}

// "[[[ ... ]]]" nested `depth` deep.
std::string Deep(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') + std::string(static_cast<std::size_t>(depth), ']');
}

class ServerHardeningTest : public ::testing::Test {
 protected:
  void Start(const std::vector<std::string>& extra = {}) {
    server_ = std::make_unique<et::ServerProcess>(ENGRAM_BINARY, dir_.path(), extra, et::kNoModelEnv);
    ASSERT_TRUE(server_->started()) << server_->output();
    key_ = server_->admin_key();
  }
  static json Body(const httplib::Result& r) { return r ? json::parse(r->body, nullptr, false) : json(); }
  static std::string Error(const httplib::Result& r, const std::string& what) {
    json j = Body(r);
    return j.is_object() && j.contains("error") && j["error"].contains(what) ? j["error"][what].get<std::string>() : "";
  }
  httplib::Result Post(const std::string& path, const std::string& body,
                       const std::string& type = "application/json") {
    return server_->Client(key_)->Post(path.c_str(), body, type.c_str());
  }
  // /healthz answers 200 (the server is alive and serving).
  void ExpectHealthy() {
    ASSERT_TRUE(server_->alive()) << server_->output();
    auto c = server_->Client();
    c->set_read_timeout(10, 0);
    auto h = c->Get("/healthz");
    ASSERT_TRUE(h) << "no answer from /healthz";
    EXPECT_EQ(h->status, 200);
  }
  std::string CreateKey(const std::string& role) {
    auto r = et::RunProcess({ENGRAM_BINARY, "--home", dir_.path(), "keys", "create", "--role", role, "--json"}, "",
                            et::kNoModelEnv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false).value("key", "");
  }

  et::TempDir dir_;
  std::unique_ptr<et::ServerProcess> server_;
  std::string key_;
};

// A NUL character (U+0000, "\u0000" in JSON) in a text: SQLite would keep it
// and PostgreSQL refuse it, so a store could not be copied from one to the
// other; every backend refuses it, naming the field, and nothing is stored.
TEST_F(ServerHardeningTest, TextHoldingANulCharacterIsRefusedNamingItsField) {
  Start();
  auto turn = Post("/v1/turns", R"({"user": "alice", "user_text": "I like tea\u0000 a lot", "assistant_text": "ok"})");
  ASSERT_TRUE(turn);
  EXPECT_EQ(turn->status, 400) << turn->body;
  EXPECT_EQ(Error(turn, "message"), "turn: user_text: holds a NUL character (U+0000)") << turn->body;
  auto memory = Post("/v1/memories", R"({"user": "alice", "text": "abc\u0000def", "infer": false})");
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->status, 400) << memory->body;
  EXPECT_NE(Error(memory, "message").find("NUL"), std::string::npos) << memory->body;
  auto named = Post("/v1/memories", R"({"user": "alice", "messages": [{"role": "user", "content": "I like tea",
                                        "name": "a\u0000b"}]})");
  ASSERT_TRUE(named);
  EXPECT_EQ(named->status, 400) << named->body;
  EXPECT_NE(Error(named, "message").find("messages[0].name"), std::string::npos) << named->body;
  auto listed = server_->Client(key_)->Get("/v1/memories?user=alice");
  ASSERT_TRUE(listed);
  EXPECT_TRUE(Body(listed).value("results", json::array()).empty()) << listed->body;
  auto turns = server_->Client(key_)->Get("/v1/turns?user=alice");
  ASSERT_TRUE(turns);
  EXPECT_EQ(turns->body.find("tea"), std::string::npos) << turns->body;
  ExpectHealthy();
}

// An idempotency key that could mean two (the header sent twice, or a header
// and a body field that differ) is refused, not guessed: a retry under the
// other key would admit the same turns again.
TEST_F(ServerHardeningTest, AnIdempotencyKeyThatCouldMeanTwoIsRefused) {
  Start();
  const std::string turn = R"({"user": "alice", "user_text": "I like tea", "assistant_text": "ok"})";
  auto twice = server_->Client(key_)->Post("/v1/turns", {{"Idempotency-Key", "a"}, {"Idempotency-Key", "b"}}, turn,
                                           "application/json");
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->status, 400) << twice->body;
  EXPECT_NE(Error(twice, "message").find("Idempotency-Key: sent more than once"), std::string::npos) << twice->body;
  const std::string keyed = R"({"user": "alice", "text": "I like tea", "infer": false, "idempotency_key": "a"})";
  auto differ = server_->Client(key_)->Post("/v1/memories", {{"Idempotency-Key", "b"}}, keyed, "application/json");
  ASSERT_TRUE(differ);
  EXPECT_EQ(differ->status, 400) << differ->body;
  EXPECT_EQ(Error(differ, "field"), "idempotency_key") << differ->body;
  auto imported = server_->Client(key_)->Post("/v1/import?user=alice", {{"Idempotency-Key", "a"}, {"Idempotency-Key", "a"}},
                                              "{\"user\": \"hi\", \"assistant\": \"hello\"}\n", "application/x-ndjson");
  ASSERT_TRUE(imported);
  EXPECT_EQ(imported->status, 400) << imported->body;
  auto turns = server_->Client(key_)->Get("/v1/turns?user=alice");
  ASSERT_TRUE(turns);
  EXPECT_EQ(turns->body.find("tea"), std::string::npos) << turns->body;
  EXPECT_EQ(turns->body.find("hello"), std::string::npos) << turns->body;
  // The same key in the header and the body is one key.
  auto same = server_->Client(key_)->Post("/v1/memories", {{"Idempotency-Key", "a"}}, keyed, "application/json");
  ASSERT_TRUE(same);
  EXPECT_EQ(same->status, 201) << same->body;
}

// A key an object names twice could be read as its first value by a proxy or
// a client library and as its last here (another user, another filter): the
// request is refused whole, naming the key, and nothing is stored.
TEST_F(ServerHardeningTest, AKeyRepeatedInOneObjectIsRefusedAndNothingIsStored) {
  Start();
  auto turn = Post("/v1/turns", R"({"user": "alice", "user": "mallory", "user_text": "hi", "assistant_text": "hello"})");
  ASSERT_TRUE(turn);
  EXPECT_EQ(turn->status, 400) << turn->body;
  EXPECT_EQ(Error(turn, "code"), "invalid_json");
  EXPECT_NE(Error(turn, "message").find("\"user\" appears twice"), std::string::npos) << turn->body;
  // Escapes are decoded before keys are compared; nested objects and the
  // objects of an array each have keys of their own.
  auto escaped = Post("/v1/memories", R"({"user": "alice", "\u0075ser": "bob", "text": "I like tea", "infer": false})");
  ASSERT_TRUE(escaped);
  EXPECT_EQ(escaped->status, 400) << escaped->body;
  auto nested = Post("/v1/memories", R"({"user": "alice", "text": "I like tea", "infer": false,
                                         "metadata": {"tag": "a", "tag": "b"}})");
  ASSERT_TRUE(nested);
  EXPECT_EQ(nested->status, 400) << nested->body;
  auto search = server_->Client(key_)->Get("/v1/memories?user=alice&filters=%7B%22a%22%3A1%2C%22a%22%3A2%7D");
  ASSERT_TRUE(search);
  EXPECT_EQ(search->status, 400) << search->body;
  EXPECT_EQ(Error(search, "field"), "filters");
  auto imported = Post("/v1/import?user=alice", "{\"user\": \"hi\", \"user\": \"ho\", \"assistant\": \"hello\"}\n",
                       "application/x-ndjson");
  ASSERT_TRUE(imported);
  EXPECT_EQ(imported->status, 400) << imported->body;
  for (const char* user : {"alice", "mallory", "bob"}) {
    auto turns = server_->Client(key_)->Get((std::string("/v1/turns?user=") + user).c_str());
    ASSERT_TRUE(turns);
    EXPECT_EQ(Body(turns).dump().find("hello"), std::string::npos) << user << ": " << turns->body;
    auto memories = server_->Client(key_)->Get((std::string("/v1/memories?user=") + user).c_str());
    ASSERT_TRUE(memories);
    EXPECT_EQ(memories->body.find("tea"), std::string::npos) << user << ": " << memories->body;
  }
  // The same keys in sibling objects are fine.
  auto fine = Post("/v1/turns", R"({"user": "alice", "turns": [
      {"user_text": "hi", "assistant_text": "hello", "metadata": {"a": {"x": 1}, "b": {"x": 2}}},
      {"user_text": "hi", "assistant_text": "again"}]})");
  ASSERT_TRUE(fine);
  EXPECT_EQ(fine->status, 201) << fine->body;
  ExpectHealthy();
}

TEST_F(ServerHardeningTest, JsonNestedBeyondTheLimitIsRefusedNamingItsFieldAndTheServerStaysUp) {
  Start();
  const std::string deep = Deep(100000);
  auto turn = Post("/v1/turns", R"({"user": "alice", "user_text": "hi", "assistant_text": "hello", "metadata": {"a": )" +
                                    deep + "}}");
  ASSERT_TRUE(turn) << "no answer: " << server_->output().substr(0, 2000);
  EXPECT_EQ(turn->status, 400) << turn->body.substr(0, 300);
  EXPECT_EQ(Error(turn, "code"), "invalid_json");
  EXPECT_EQ(Error(turn, "field"), "metadata");
  EXPECT_NE(Error(turn, "message").find("128"), std::string::npos) << turn->body;
  ExpectHealthy();

  auto batch = Post("/v1/turns", R"({"user": "alice", "turns": [{"user_text": "hi", "metadata": )" + deep + "}]}");
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->status, 400);
  EXPECT_EQ(Error(batch, "field"), "turns");
  ExpectHealthy();

  auto memory = Post("/v1/memories", R"({"user": "alice", "text": "x", "infer": false, "metadata": )" + deep + "}");
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->status, 400);
  EXPECT_EQ(Error(memory, "field"), "metadata");
  ExpectHealthy();

  auto imported = Post("/v1/import?user=alice", R"({"user": "hi", "assistant": "hello", "metadata": )" + deep + "}\n",
                       "application/x-ndjson");
  ASSERT_TRUE(imported);
  EXPECT_EQ(imported->status, 400);
  EXPECT_NE(Error(imported, "message").find("128"), std::string::npos) << imported->body.substr(0, 300);
  ExpectHealthy();

  // Filters: in a body, and as JSON text in a query parameter.
  auto search = Post("/v1/memories/search", R"({"user": "alice", "query": "x", "filters": )" + Deep(1000) + "}");
  ASSERT_TRUE(search);
  EXPECT_EQ(search->status, 400);
  EXPECT_EQ(Error(search, "field"), "filters");
  std::string encoded;
  for (int i = 0; i < 200; ++i) encoded += "%5B";
  for (int i = 0; i < 200; ++i) encoded += "%5D";
  auto listed = server_->Client(key_)->Get(("/v1/memories?user=alice&filters=" + encoded).c_str());
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->status, 400);
  EXPECT_EQ(Error(listed, "field"), "filters");
  EXPECT_NE(Error(listed, "message").find("128"), std::string::npos) << listed->body;

  // JSON as deep as the limit is fine.
  auto at_limit = Post("/v1/turns", R"({"user": "alice", "user_text": "hi", "assistant_text": "hello", "metadata": {"a": )" +
                                        Deep(126) + "}}");
  ASSERT_TRUE(at_limit);
  EXPECT_EQ(at_limit->status, 201) << at_limit->body;
  ExpectHealthy();
  EXPECT_EQ(Body(server_->Client(key_)->Get("/v1/stats"))["turns_admitted"], 1);
}

TEST_F(ServerHardeningTest, BodiesOverTheirRoutesLimitAre413AndParsingDoesNotAmplify) {
  Start();
  // Declared larger than the route takes: refused from the headers, before
  // any of the body is sent.
  int fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, "POST /v1/retrieve HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key_ +
                              "\r\nContent-Type: application/json\r\nContent-Length: 33554432\r\n\r\n"));
  const std::string declared = ReadUntilClose(fd, std::chrono::seconds(10));
  close(fd);
  EXPECT_EQ(declared.rfind("HTTP/1.1 413", 0), 0u) << declared;
  EXPECT_EQ(RawBody(declared)["error"]["code"], "payload_too_large") << declared;
  EXPECT_NE(declared.find("64 KiB"), std::string::npos) << declared;

  // 32 MiB of "[{},{},...]" chunked to /v1/retrieve: cut off at the limit.
  fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  std::thread sender([fd, this] {
    std::string head = "POST /v1/retrieve HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key_ +
                       "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    if (!SendAll(fd, head + "1\r\n[\r\n")) return;
    std::string piece;
    while (piece.size() < (64u << 10)) piece += "{},";
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
    const std::string chunk = size + piece + "\r\n";
    for (std::size_t sent = 0; sent < (32u << 20); sent += piece.size()) {
      if (!SendAll(fd, chunk)) return;
    }
    SendAll(fd, "2\r\n{}\r\n1\r\n]\r\n0\r\n\r\n");
  });
  const std::string chunked = ReadUntilClose(fd, std::chrono::seconds(30));
  sender.join();
  close(fd);
  EXPECT_EQ(chunked.rfind("HTTP/1.1 413", 0), 0u) << chunked.substr(0, 500);
  ExpectHealthy();

  // A bulk route takes 30 MiB, but not as a tree of millions of values.
  std::string many = "[";
  while (many.size() < (30u << 20)) many += "{},";
  many += "{}]";
  auto array = Post("/v1/turns", many);
  ASSERT_TRUE(array);
  EXPECT_EQ(array->status, 400);
  EXPECT_NE(Error(array, "message").find("expected a JSON object"), std::string::npos) << array->body;
  auto values = Post("/v1/turns", R"({"user": "alice", "turns": )" + many + "}");
  ASSERT_TRUE(values);
  EXPECT_EQ(values->status, 413) << values->body;
  EXPECT_EQ(Error(values, "code"), "payload_too_large");
  EXPECT_NE(Error(values, "message").find("JSON values"), std::string::npos) << values->body;
  ExpectHealthy();

  // The server never grew anywhere near the tree's size (about 1.2 GB for
  // 32 MiB of "{},"): its peak resident memory stays modest.
  // (AddressSanitizer's shadow memory and quarantine roughly double a
  // process's resident size; the bound is for the tree, not for them.)
#if defined(__SANITIZE_ADDRESS__)
  constexpr std::int64_t kPeakBoundKb = 600 * 1024;
#else
  constexpr std::int64_t kPeakBoundKb = 300 * 1024;
#endif
  const std::int64_t peak_kb = server_->MemoryKb("VmHWM");
  ASSERT_GT(peak_kb, 0);
  EXPECT_LT(peak_kb, kPeakBoundKb) << "peak resident memory " << peak_kb << " KiB";
}

TEST_F(ServerHardeningTest, AmbiguousCredentialsAre400AndTheSchemeIsCaseInsensitive) {
  Start();
  const std::string other = CreateKey("read");
  ASSERT_FALSE(other.empty());
  auto c = server_->Client();
  auto twice = c->Get("/v1/stats", {{"Authorization", "Bearer " + key_}, {"Authorization", "Bearer " + other}});
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->status, 400) << twice->body;
  EXPECT_NE(Error(twice, "message").find("more than once"), std::string::npos) << twice->body;
  auto same_twice = c->Get("/v1/stats", {{"Authorization", "Bearer " + key_}, {"authorization", "Bearer " + key_}});
  EXPECT_EQ(same_twice->status, 400) << same_twice->body;
  auto api_twice = c->Get("/v1/stats", {{"X-API-Key", key_}, {"X-API-Key", other}});
  EXPECT_EQ(api_twice->status, 400) << api_twice->body;
  auto both = c->Get("/v1/stats", {{"Authorization", "Bearer " + key_}, {"X-API-Key", other}});
  ASSERT_TRUE(both);
  EXPECT_EQ(both->status, 400) << both->body;
  EXPECT_NE(Error(both, "message").find("different keys"), std::string::npos) << both->body;
  EXPECT_EQ(Error(both, "code"), "invalid_argument");
  // The same key in both headers is not ambiguous.
  EXPECT_EQ(c->Get("/v1/stats", {{"Authorization", "Bearer " + key_}, {"X-API-Key", key_}})->status, 200);
  for (const std::string scheme : {"Bearer", "BEARER", "bearer", "bEaReR"}) {
    auto r = c->Get("/v1/stats", {{"Authorization", scheme + " " + key_}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << scheme << ": " << r->body;
  }
  // Another scheme is no key.
  EXPECT_EQ(c->Get("/v1/stats", {{"Authorization", "Basic " + key_}})->status, 401);
}

TEST_F(ServerHardeningTest, ASecondServerOnAPortInUseRefusesToStart) {
  Start();
  const std::string port = std::to_string(server_->port());
  et::TempDir other;
  auto second = et::RunProcess({ENGRAM_BINARY, "--home", other.path(), "serve", "--listen", "127.0.0.1:" + port}, "",
                               et::kNoModelEnv, std::chrono::seconds(20));
  EXPECT_FALSE(second.timed_out) << "the second server started: " << second.out;
  EXPECT_EQ(second.exit_code, 1) << second.out << second.err;
  const std::string said = second.out + second.err;
  EXPECT_NE(said.find("already in use"), std::string::npos) << said;
  EXPECT_NE(said.find("127.0.0.1:" + port), std::string::npos) << said;
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << "one line: " << said;
  // The first server still has the port, and every request.
  for (int i = 0; i < 20; ++i) ExpectHealthy();
  EXPECT_EQ(server_->Client(key_)->Get("/v1/stats")->status, 200);
}

TEST_F(ServerHardeningTest, SlowClientsDoNotStarveTheServer) {
  Start();
  constexpr int kSlow = 100;
  std::vector<int> slow;
  for (int i = 0; i < kSlow; ++i) {
    const int fd = Connect(server_->port());
    ASSERT_GE(fd, 0) << "connection " << i;
    slow.push_back(fd);
  }
  // Each slow client sends its request one byte a second (until the end of
  // the test, however it ends).
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(200, 'p') + "\r\n\r\n";
    for (std::size_t i = 0; i < request.size() && !stop; ++i) {
      for (int fd : slow) (void)send(fd, &request[i], 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      for (int t = 0; t < 10 && !stop; ++t) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  struct Finish {
    std::atomic<bool>& stop;
    std::thread& thread;
    std::vector<int>& fds;
    ~Finish() {
      stop = true;
      thread.join();
      for (int fd : fds) close(fd);
    }
  } finish{stop, trickle, slow};
  std::this_thread::sleep_for(std::chrono::seconds(2));
  // Normal clients are answered meanwhile: 10 s without an answer is starvation.
  for (int round = 0; round < 3; ++round) {
    auto c = server_->Client(key_);
    c->set_connection_timeout(10, 0);
    c->set_read_timeout(10, 0);
    auto health = c->Get("/healthz");
    ASSERT_TRUE(health) << "/healthz starved by " << kSlow << " slow clients";
    EXPECT_EQ(health->status, 200);
    auto retrieve = c->Post("/v1/retrieve", json({{"user", "alice"}, {"query", "anything"}}).dump(), "application/json");
    ASSERT_TRUE(retrieve) << "an authenticated request starved by " << kSlow << " slow clients";
    EXPECT_EQ(retrieve->status, 200) << retrieve->body;
  }
  // The server itself ends each slow request (its headers are overdue long
  // before 30 s).
  int closed_by_server = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  for (int fd : slow) {
    bool closed = false;
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline - Clock::now());
    ReadUntilClose(fd, std::max(std::chrono::seconds(1), left), &closed);
    closed_by_server += closed ? 1 : 0;
  }
  EXPECT_EQ(closed_by_server, kSlow);
  ExpectHealthy();
}

// The links of a Mem0 page are made of the Host header: only a host name
// (and port) of it is echoed, never markup or another scheme's text.
TEST_F(ServerHardeningTest, Mem0PageLinksEchoOnlyAHostName) {
  Start();
  for (const char* text : {"Priya likes tea", "Priya likes chess"}) {
    auto r = Post("/v1/memories", json{{"user", "priya"}, {"text", text}, {"infer", false}}.dump());
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
  }
  auto page = [&](const std::string& host) {
    auto c = server_->Client(key_);
    return c->Post("/mem0/v3/memories/?page=1&page_size=1", {{"Host", host}},
                   R"({"filters": {"user_id": "priya"}})", "application/json");
  };
  auto plain = page("memory.example:8080");
  ASSERT_TRUE(plain) << "no answer";
  ASSERT_EQ(plain->status, 200) << plain->body;
  EXPECT_EQ(Body(plain)["next"].get<std::string>().rfind("http://memory.example:8080/mem0/", 0), 0u) << plain->body;
  auto markup = page("evil\"><script>");
  ASSERT_TRUE(markup) << "no answer";
  ASSERT_EQ(markup->status, 200) << markup->body;
  EXPECT_EQ(markup->body.find("<script>"), std::string::npos) << markup->body;
  EXPECT_EQ(Body(markup)["next"].get<std::string>().rfind("http://localhost/mem0/", 0), 0u) << markup->body;
}

// Routing splits the path as sent: an encoded '/' belongs to its segment
// (it never reaches another route), and the access log shows the path as
// sent, so an encoded line break cannot forge a log line.
TEST_F(ServerHardeningTest, AnEncodedSlashStaysInsideItsSegment) {
  Start({"--access-log"});
  auto added = Post("/v1/memories", json{{"user", "priya"}, {"text", "Priya likes tea"}, {"infer", false}}.dump());
  ASSERT_TRUE(added && added->status == 201) << (added ? added->body : "no answer");
  const std::string id = Body(added)["results"][0]["id"].get<std::string>();
  auto c = server_->Client(key_);
  auto history = c->Get(("/v1/memories/" + id + "/history?user=priya").c_str());
  ASSERT_TRUE(history);
  EXPECT_EQ(history->status, 200) << history->body;
  for (const char* escaped : {"%2Fhistory", "%2fhistory", "%2F..%2Fhistory"}) {
    auto r = c->Get(("/v1/memories/" + id + escaped + "?user=priya").c_str());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404) << escaped << ": " << r->body;  // the memory "<id>/history" does not exist
  }
  // A user named with a '/' is one segment of the Mem0 entity route.
  ASSERT_EQ(Post("/v1/memories", json{{"user", "org/ann"}, {"text", "Ann likes tea"}, {"infer", false}}.dump())->status,
            201);
  auto gone = c->Delete("/mem0/v2/entities/user/org%2Fann/");
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->status, 200) << gone->body;
  EXPECT_EQ(Body(c->Get("/v1/memories?user=org%2Fann"))["results"].size(), 0u);
  EXPECT_EQ(Body(c->Get("/v1/memories?user=priya"))["results"].size(), 1u);
  // An encoded literal segment still routes; a path with no route is 404, a known one with another method 405.
  EXPECT_EQ(c->Get("/v1/%73tats")->status, 200);
  EXPECT_EQ(c->Get("/v1/nothing%0Aengram serve: GET /forged 200")->status, 404);
  EXPECT_EQ(c->Put("/v1/stats", "{}", "application/json")->status, 405);
  EXPECT_EQ(server_->Stop(), 0);  // every log line is out
  EXPECT_NE(server_->output().find("GET /v1/nothing%0Aengram"), std::string::npos) << server_->output();
  EXPECT_EQ(server_->output().find("\nengram serve: GET /forged"), std::string::npos) << server_->output();
}

// A number in the query is decimal, as in JSON: "0x10", "inf", "nan", " 5"
// and "1e400" are refused naming the parameter, never read as something else.
TEST_F(ServerHardeningTest, NumbersInTheQueryAreDecimal) {
  Start();
  auto c = server_->Client(key_);
  for (const char* bad : {"0x10", "inf", "nan", "%205", "1e400", "5abc", "-", "1.", ".5"}) {
    auto r = c->Get((std::string("/v1/memories?user=priya&limit=") + bad).c_str());
    ASSERT_TRUE(r) << bad;
    EXPECT_EQ(r->status, 400) << bad << ": " << r->body;
    EXPECT_EQ(Error(r, "field"), "limit") << bad << ": " << r->body;
  }
  for (const char* good : {"16", "1e1", "2.0"}) {
    auto r = c->Get((std::string("/v1/memories?user=priya&limit=") + good).c_str());
    ASSERT_TRUE(r) << good;
    EXPECT_EQ(r->status, 200) << good << ": " << r->body;
  }
}

// A memory's text over 64 KiB is refused naming the field the caller sent.
TEST_F(ServerHardeningTest, AnOversizedMemoryIsRefusedNamingItsField) {
  Start();
  std::string big;
  while (big.size() <= (64u << 10)) big += "tea ";
  auto text = Post("/v1/memories", json{{"user", "priya"}, {"text", big}, {"infer", false}}.dump());
  ASSERT_TRUE(text);
  EXPECT_EQ(text->status, 400) << text->body;
  EXPECT_EQ(Error(text, "field"), "text") << text->body;
  auto messages = Post("/v1/memories", json{{"user", "priya"},
                                            {"messages", json::array({{{"role", "user"}, {"content", "hi"}},
                                                                      {{"role", "user"}, {"content", big}}})},
                                            {"infer", false}}.dump());
  ASSERT_TRUE(messages);
  EXPECT_EQ(messages->status, 400) << messages->body;
  EXPECT_EQ(Error(messages, "field"), "messages[1].content") << messages->body;
}

TEST_F(ServerHardeningTest, MalformedFramingIsAPrompt400AndTheConnectionCloses) {
  Start();
  const std::string post = "POST /v1/retrieve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
  const std::vector<std::string> requests = {
      post + "Content-Length: -1\r\n\r\n",
      post + "Content-Length: 12abc\r\n\r\n",
      post + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
      post + "Transfer-Encoding: gzip\r\n\r\n",
      post + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello",
      post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n",
      post + "Transfer-Encoding: chunked\r\n\r\n" + std::string(10000, '1'),
      "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
      // A space before the colon: no Transfer-Encoding to the parser, whose
      // body would be read as a second (smuggled) request.
      "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n"
      "2c\r\nDELETE /v1/memories/m_0123456789abcdef HTTP/1.1\r\n\r\n0\r\n\r\n",
      post + "Content-Length : 5\r\n\r\nhello",
      // Lines a parser drops or keeps and a proxy may read otherwise: a line
      // without a colon, a folded line, a NUL, a CR alone; and an HTTP/1.1
      // request naming no host, or two.
      "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding chunked\r\n\r\n",
      post + "Content-Length: 5\r\nX-Note: a\r\n Transfer-Encoding: chunked\r\n\r\nhello",
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Note: a\tb\r\n\tc\r\n\r\n",
      std::string("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Note: a") + '\0' + "b\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Note: a\rContent-Length: 5\r\n\r\nhello",
      "GET /healthz HTTP/1.1\r\nConnection: keep-alive\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
  };
  auto exchange = [&](const std::string& request, bool* closed = nullptr) {
    const int fd = Connect(server_->port());
    EXPECT_TRUE(fd >= 0 && SendAll(fd, request));
    std::string response = ReadUntilClose(fd, std::chrono::seconds(10), closed);
    close(fd);
    return response;
  };
  for (const auto& request : requests) {
    bool closed = false;
    const std::string response = exchange(request, &closed);
    const std::string shown = request.substr(0, 160);
    EXPECT_EQ(response.rfind("HTTP/1.1 400", 0), 0u) << shown << "\n-> " << response;
    EXPECT_TRUE(closed) << "the connection stayed open after: " << shown;
    EXPECT_TRUE(RawBody(response).contains("error")) << response;
  }
  // The answer says what was wrong; an HTTP/1.0 request may leave out its
  // host.
  const std::pair<std::string, std::string> said[] = {
      {"GET /healthz HTTP/1.1\r\nHost: x\r\nBogus\r\n\r\n", "no \\\":\\\" between a name and a value"},
      {"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Note: a\r\n b\r\n\r\n", "folded lines are not accepted"},
      {"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Note: a\rb\r\n\r\n", "a CR not followed by LF"},
      {"GET /healthz HTTP/1.1\r\n\r\n", "Host: missing"},
      {"GET /healthz HTTP/1.1\r\nHost: x\r\nhost: x\r\n\r\n", "Host: sent more than once"},
  };
  for (const auto& [request, detail] : said) {
    const std::string response = exchange(request);
    EXPECT_EQ(response.rfind("HTTP/1.1 400", 0), 0u) << request << "\n-> " << response;
    EXPECT_NE(response.find(detail), std::string::npos) << request << "\n-> " << response;
  }
  const std::string old = exchange("GET /healthz HTTP/1.0\r\n\r\n");
  EXPECT_EQ(old.rfind("HTTP/1.1 200", 0), 0u) << old;
  ExpectHealthy();
}

TEST_F(ServerHardeningTest, ConnectionsBeyondTheCapAreRefusedAtOnce) {
  Start({"--max-connections", "4"});
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(Connect(server_->port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const int fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  bool closed = false;
  const std::string refused = ReadUntilClose(fd, std::chrono::seconds(10), &closed);
  close(fd);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_EQ(RawBody(refused)["error"]["code"], "overloaded") << refused;
  EXPECT_TRUE(closed);
  for (int i : idle) close(i);
  // Once they are gone the server takes connections again.
  int status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) {
    auto h = server_->Client()->Get("/healthz");
    status = h ? h->status : 0;
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(status, 200);
}

// Another process holds SQLite's write lock beyond the busy timeout: a
// writer gets a prompt, retryable 503 with Retry-After (never a hang, never
// "model unavailable"), reads go on, and writes work again once it lets go.
TEST_F(ServerHardeningTest, AWriteLockHeldElsewhereIsARetryable503AndReadsGoOn) {
  Start();
  ASSERT_EQ(Post("/v1/turns", R"({"user": "alice", "user_text": "I live in Porto", "assistant_text": "Nice"})")->status,
            201);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open_v2((dir_.path() + "/engram.db").c_str(), &other, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);

  const auto t0 = std::chrono::steady_clock::now();
  auto blocked = Post("/v1/turns", R"({"user": "alice", "user_text": "And I work at the port", "assistant_text": "Ok"})");
  const auto waited = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(blocked) << "no answer while the lock was held";
  EXPECT_EQ(blocked->status, 503) << blocked->body;
  EXPECT_EQ(Error(blocked, "code"), "store_unavailable") << blocked->body;
  EXPECT_EQ(blocked->get_header_value("Retry-After"), "1");
  EXPECT_LT(waited, std::chrono::seconds(60)) << "the writer hung";  // a hang bound, not a timing
  auto read = server_->Client(key_)->Get("/v1/turns?user=alice");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, 200) << read->body;
  EXPECT_EQ(Body(read)["turns"].size(), 1u) << read->body;
  ExpectHealthy();

  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  auto retried = Post("/v1/turns", R"({"user": "alice", "user_text": "And I work at the port", "assistant_text": "Ok"})");
  ASSERT_TRUE(retried);
  EXPECT_EQ(retried->status, 201) << retried->body;
  EXPECT_EQ(Body(server_->Client(key_)->Get("/v1/turns?user=alice"))["turns"].size(), 2u);
}

// --rate-limit: a key over its rate gets 429 with Retry-After, other keys
// are not slowed by it, the refusals are counted per tenant in /metrics, and
// nothing is written by a refused request.
TEST_F(ServerHardeningTest, AKeyOverItsRateLimitGets429AndOthersGoOn) {
  Start({"--rate-limit", "1"});
  const std::string writer = CreateKey("write");
  ASSERT_FALSE(writer.empty());
  auto c = server_->Client(writer);
  int limited = 0, admitted = 0;
  std::string retry_after;
  for (int i = 0; i < 10; ++i) {
    auto r = c->Post("/v1/turns",
                     json{{"user", "alice"}, {"user_text", "note " + std::to_string(i)}, {"assistant_text", "ok"}}.dump(),
                     "application/json");
    ASSERT_TRUE(r);
    if (r->status == 429) {
      ++limited;
      EXPECT_EQ(Error(r, "code"), "rate_limited") << r->body;
      retry_after = r->get_header_value("Retry-After");
    } else {
      EXPECT_EQ(r->status, 201) << r->body;
      ++admitted;
    }
  }
  EXPECT_GE(limited, 1) << "ten requests at once never met a limit of one a second";
  EXPECT_GE(std::atoi(retry_after.c_str()), 1) << retry_after;
  // Another key has its own bucket; what was refused was not written.
  auto other = server_->Client(key_)->Get("/v1/turns?user=alice&limit=100");
  ASSERT_TRUE(other);
  ASSERT_EQ(other->status, 200) << other->body;
  EXPECT_EQ(Body(other)["turns"].size(), static_cast<std::size_t>(admitted));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // the admin key's own bucket refills
  auto metrics = server_->Client(key_)->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("engram_rate_limited_total{tenant=\"default\"}"), std::string::npos) << metrics->body;
  ExpectHealthy();
}

}  // namespace
