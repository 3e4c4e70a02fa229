// What the callers see of a storage fault: the HTTP server answers 507
// `storage_full` for a full disk and 503 `store_unavailable` with
// Retry-After for an I/O error or a failed fsync (the error envelope either
// way), /healthz and reads go on while writes fail, and writes work again
// once the fault clears, without a restart; an MCP tool call is a tool error
// naming the cause; the CLI exits 1 with one line.
#include <fcntl.h>
#include <httplib.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cli.hpp"
#include "faults/fault_support.hpp"
#include "mcp/server.hpp"
#include "server/api.hpp"
#include "server/http_server.hpp"
#include "server/metrics.hpp"

namespace engram::faults {
namespace {

using nlohmann::json;

constexpr TimeMs kStart = 1'700'000'000'000;

// The REST API over an engine, on a free loopback port, in this process.
class InProcessServer {
 public:
  InProcessServer(Engine* engine, server::ApiKeys* keys) : api_(Options(), metrics_), http_(server::HttpServerOptions{}) {
    api_.Register(http_);
    http_.SetErrorResponder([this](int status, const std::string& id, const std::string& detail) {
      return api_.TransportError(status, id, detail);
    });
    auto port = http_.Bind("127.0.0.1", 0);
    port_ = port.ok() ? *port : 0;
    runner_ = std::thread([this] { (void)http_.Run(); });
    api_.SetReady(engine, keys, false);
  }
  ~InProcessServer() {
    http_.Stop();
    runner_.join();
  }
  httplib::Client Client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(120, 0);
    return c;
  }
  int port() const { return port_; }

 private:
  static server::ApiOptions Options() {
    server::ApiOptions o;
    o.auth = false;  // every request acts as an admin of the default tenant
    return o;
  }
  server::Metrics metrics_;
  server::Api api_;
  server::HttpServer http_;
  int port_ = 0;
  std::thread runner_;
};

json Body(const httplib::Result& r) { return r ? json::parse(r->body, nullptr, false) : json(); }

std::string TurnBody(const std::string& text) {
  return json{{"user", "alice"}, {"user_text", text}, {"assistant_text", "ok"}}.dump();
}

class SurfaceFaults : public FaultVfsTest {};

TEST_F(SurfaceFaults, HttpAnswers507And503WithTheEnvelopeAndReadsGoOn) {
  testing::TempDir dir;
  Env env(dir.File("engram.db"), std::make_shared<FakeClock>(kStart));
  ASSERT_TRUE(env.Open().ok());
  InProcessServer server(env.engine.get(), env.keys.get());
  ASSERT_GT(server.port(), 0);
  auto c = server.Client();
  auto first = c.Post("/v1/turns", TurnBody("I live in Porto"), "application/json");
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 201) << first->body;
  auto memory = c.Post("/v1/memories", json{{"user", "alice"}, {"text", "I like green tea"}}.dump(), "application/json");
  ASSERT_TRUE(memory);
  ASSERT_EQ(memory->status, 201) << memory->body;  // created

  struct Case {
    FaultVfs::Fault fault;
    int status;
    const char* code;
  };
  for (const Case& k : {Case{FaultVfs::Fault::kNoSpace, 507, "storage_full"},
                        Case{FaultVfs::Fault::kIoError, 503, "store_unavailable"},
                        Case{FaultVfs::Fault::kShortWrite, 503, "store_unavailable"},
                        Case{FaultVfs::Fault::kFsyncFails, 503, "store_unavailable"}}) {
    SCOPED_TRACE(FaultVfs::FaultName(k.fault));
    FaultVfs::Get().Arm({k.fault, 1, 1, env.path});  // every call from now on fails
    for (const auto& [path, body] : {std::pair<std::string, std::string>{"/v1/turns", TurnBody("And I work at the port")},
                                     {"/v1/memories", json{{"user", "alice"}, {"text", "I own a boat"}}.dump()}}) {
      auto r = c.Post(path, body, "application/json");
      ASSERT_TRUE(r) << path;
      EXPECT_EQ(r->status, k.status) << path << ": " << r->body;
      json err = Body(r)["error"];
      EXPECT_EQ(err["code"], k.code) << r->body;
      EXPECT_TRUE(err["message"].is_string() && !err["message"].get<std::string>().empty()) << r->body;
      EXPECT_TRUE(err["request_id"].is_string()) << r->body;
      if (k.status == 503) {
        EXPECT_EQ(r->get_header_value("Retry-After"), "1");
      }
    }
    // Reads and health go on while writes fail.
    auto health = c.Get("/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    auto turns = c.Get("/v1/turns?user=alice");
    ASSERT_TRUE(turns);
    ASSERT_EQ(turns->status, 200) << turns->body;
    EXPECT_EQ(Body(turns)["turns"].size(), 1u) << "nothing of the refused write is visible";
    auto search = c.Post("/v1/memories/search", json{{"user", "alice"}, {"query", "tea"}}.dump(), "application/json");
    ASSERT_TRUE(search);
    EXPECT_EQ(search->status, 200) << search->body;
    FaultVfs::Get().Disarm();
  }
  // Once the fault is gone the same server writes again.
  auto again = c.Post("/v1/turns", TurnBody("And I work at the port"), "application/json");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 201) << again->body;
  EXPECT_EQ(Body(c.Get("/v1/turns?user=alice"))["turns"].size(), 2u);
}

TEST_F(SurfaceFaults, McpToolCallsAreToolErrorsNamingTheCauseAndReadsGoOn) {
  testing::TempDir dir;
  Env env(dir.File("engram.db"), std::make_shared<FakeClock>(kStart));
  ASSERT_TRUE(env.Open().ok());
  mcp::Tools tools(*env.engine, Scope{"default", "alice", "assistant"});
  std::ostringstream log;
  mcp::Server mcp(tools, mcp::ServerInfo{"engram", "test", ""}, log);
  auto call = [&](int id, const std::string& name, const json& args) {
    auto r = mcp.Handle(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
                             {"params", {{"name", name}, {"arguments", args}}}}
                            .dump());
    return r ? *r : json();
  };
  ASSERT_EQ(call(1, "add_fact", {{"text", "I like green tea"}})["result"]["isError"], false);
  FaultVfs::Get().Arm({FaultVfs::Fault::kNoSpace, 1, 1, env.path});
  json full = call(2, "add_fact", {{"text", "I own a boat"}});
  EXPECT_EQ(full["result"]["isError"], true) << full.dump();
  EXPECT_NE(full.dump().find("storage full"), std::string::npos) << full.dump();
  FaultVfs::Get().Arm({FaultVfs::Fault::kIoError, 1, 1, env.path});
  json eio = call(3, "add_fact", {{"text", "I own a boat"}});
  EXPECT_EQ(eio["result"]["isError"], true) << eio.dump();
  EXPECT_NE(eio.dump().find("temporarily unavailable (retry later)"), std::string::npos) << eio.dump();
  json read = call(4, "search_memories", {{"query", "tea"}});
  EXPECT_EQ(read["result"]["isError"], false) << read.dump();
  FaultVfs::Get().Disarm();
  EXPECT_EQ(call(5, "add_fact", {{"text", "I own a boat"}})["result"]["isError"], false);
}

// Runs the CLI in this process; returns the exit code and what it wrote on stderr.
std::pair<int, std::string> RunCli(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  char name[] = "/tmp/engram-cli-stderr-XXXXXX";
  const int fd = mkstemp(name);
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(fd, 2);
  std::cerr.flush();
  const int code = cli::Main(static_cast<int>(args.size()), argv.data());
  std::cerr.flush();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::string err = testing::ReadFile(name);
  unlink(name);
  return {code, err};
}

TEST_F(SurfaceFaults, CliExits1WithOneLine) {
  testing::TempDir dir;
  const std::string db = dir.File("engram.db");
  ASSERT_EQ(RunCli({"engram", "--db", db, "turn", "add", "I live in Porto", "Nice"}).first, 0);
  for (auto [fault, words] : {std::pair{FaultVfs::Fault::kNoSpace, "store full"},
                              std::pair{FaultVfs::Fault::kIoError, "store unavailable"},
                              std::pair{FaultVfs::Fault::kFsyncFails, "store unavailable"}}) {
    SCOPED_TRACE(FaultVfs::FaultName(fault));
    for (const std::vector<std::string>& cmd :
         {std::vector<std::string>{"turn", "add", "And I work at the port", "Ok"},
          std::vector<std::string>{"--user", "alice", "memory", "add", "I own a boat"},  // memories need a scope
          std::vector<std::string>{"keys", "create", "--name", "ci"}}) {
      std::vector<std::string> args = {"engram", "--db", db};
      args.insert(args.end(), cmd.begin(), cmd.end());
      FaultVfs::Get().Arm({fault, 1, 1, db});
      std::string what;
      for (const auto& a : cmd) what += a + " ";
      auto [code, err] = RunCli(args);
      FaultVfs::Get().Disarm();
      EXPECT_EQ(code, 1) << what << ": " << err;
      EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << what << ": " << err;
      EXPECT_NE(err.find(words), std::string::npos) << what << ": " << err;
    }
  }
  // Nothing of the refused writes is there; writing works again.
  EXPECT_EQ(testing::CountRows(db, "SELECT count(*) FROM turns"), 1);
  EXPECT_EQ(RunCli({"engram", "--db", db, "turn", "add", "And I work at the port", "Ok"}).first, 0);
  EXPECT_EQ(testing::CountRows(db, "SELECT count(*) FROM turns"), 2);
}

}  // namespace
}  // namespace engram::faults
