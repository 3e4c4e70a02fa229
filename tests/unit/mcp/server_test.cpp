// Unit tests of the MCP layer: UTF-8 checking, line framing, and the server's
// dispatch on a real engine in a temporary store.
#include <gtest/gtest.h>

#include <sstream>

#include "mcp/protocol.hpp"
#include "mcp/server.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram::mcp {
namespace {

using nlohmann::json;

TEST(McpProtocol, Utf8) {
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // > U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // truncated
}

TEST(McpProtocol, LineReaderDropsOversizedLinesAndKeepsGoing) {
  std::istringstream in("short\r\n" + std::string(100, 'x') + "\nnext\nlast");
  LineReader r(in, 10);
  std::string line;
  EXPECT_EQ(r.Next(&line), LineReader::Kind::kLine);
  EXPECT_EQ(line, "short");
  EXPECT_EQ(r.Next(&line), LineReader::Kind::kOversized);
  EXPECT_EQ(r.Next(&line), LineReader::Kind::kLine);
  EXPECT_EQ(line, "next");
  EXPECT_EQ(r.Next(&line), LineReader::Kind::kLine);
  EXPECT_EQ(line, "last");
  EXPECT_EQ(r.Next(&line), LineReader::Kind::kEof);
}

class McpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = Engine::Open({.db_path = testing::StoreAt(dir_.File("mcp.db"))});
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    tools_ = std::make_unique<Tools>(*engine_, Scope{"default", "u", "a"});
    server_ = std::make_unique<Server>(*tools_, ServerInfo{"engram", "test", ""}, log_);
  }
  json Handle(const std::string& line) {
    auto r = server_->Handle(line);
    return r ? *r : json();
  }
  engram::testing::TempDir dir_;
  std::ostringstream log_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Tools> tools_;
  std::unique_ptr<Server> server_;
};

TEST_F(McpServerTest, Dispatch) {
  EXPECT_EQ(Handle(R"({"jsonrpc":"2.0","id":1,"method":"ping"})")["result"], json::object());
  EXPECT_EQ(Handle(R"({"jsonrpc":"2.0","id":2,"method":"nope"})")["error"]["code"], kMethodNotFound);
  EXPECT_FALSE(server_->Handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  EXPECT_TRUE(server_->initialized());
  EXPECT_EQ(Handle("{")["error"]["code"], kParseError);
  json r = Handle(R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})");
  EXPECT_EQ(r["result"]["resultType"], "complete");
  EXPECT_EQ(r["result"]["tools"].size(), 9u);
  r = Handle(R"({"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2026-07-28"}})");
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25");
}

// A message naming a key twice in one object ("id", or an argument) could be
// read one way by a client or a proxy and another way here: refused with
// -32600 naming the key; the next line is served.
TEST_F(McpServerTest, AKeyRepeatedInOneObjectIsAnInvalidRequest) {
  json r = Handle(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add_memory",)"
                  R"("arguments":{"user_input":"hi","user_input":"I am someone else"}}})");
  EXPECT_EQ(r["error"]["code"], kInvalidRequest) << r;
  EXPECT_EQ(r["error"]["message"], "Invalid Request: key \"user_input\" appears twice in one object");
  EXPECT_TRUE(r["id"].is_null());
  r = Handle(R"({"jsonrpc":"2.0","id":5,"id":6,"method":"ping"})");
  EXPECT_EQ(r["error"]["code"], kInvalidRequest) << r;
  EXPECT_EQ(Handle(R"({"jsonrpc":"2.0","id":8,"method":"ping"})")["result"], json::object());
}

// A line nested 100,000 deep crashed `engram mcp` (recursive copy and
// printing): refused unparsed with -32600 naming the limit; the next line is
// served.
TEST_F(McpServerTest, DeepNestingIsAnInvalidRequestAndServingGoesOn) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  json r = Handle(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add_memory","arguments":{"user_input":"x","meta_data":{"k":)" +
                  deep + "}}}}");
  EXPECT_EQ(r["error"]["code"], kInvalidRequest) << r;
  EXPECT_EQ(r["error"]["message"], "Invalid Request: JSON nested deeper than 128 levels");
  EXPECT_EQ(r["error"]["data"]["limit"], 128);
  EXPECT_TRUE(r["id"].is_null());
  EXPECT_NE(log_.str().find("nested deeper than 128"), std::string::npos) << log_.str();
  EXPECT_EQ(Handle(R"({"jsonrpc":"2.0","id":8,"method":"ping"})")["result"], json::object());
  // 128 levels are served (params and _meta count too).
  std::string at_limit = R"({"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":)" + std::string(126, '[') +
                         std::string(126, ']') + "}}";
  EXPECT_EQ(Handle(at_limit)["result"], json::object()) << Handle(at_limit);
  // Nothing was admitted by the refused line.
  auto stats = engine_->GetStats(nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->turns_admitted, 0);
}

TEST_F(McpServerTest, ToolCallsReturnStructuredContentOrIsError) {
  json r = Handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_fact","arguments":{"text":"Likes tea"}}})");
  EXPECT_EQ(r["result"]["isError"], false);
  EXPECT_EQ(r["result"]["structuredContent"]["results"][0]["event"], "ADD");
  r = Handle(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_fact","arguments":{}}})");
  EXPECT_EQ(r["result"]["isError"], true);
  EXPECT_FALSE(r["result"].contains("structuredContent"));
  r = Handle(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}})");
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
}

TEST_F(McpServerTest, ReadOnlyToolsListAndRunOnlyTheToolsThatRead) {
  Tools reader(*engine_, Scope{"default", "u", "a"}, "this server was started with --read-only");
  Server server(reader, ServerInfo{"engram", "test", Instructions("u", true)}, log_);
  json r = *server.Handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  std::vector<std::string> names;
  for (const json& t : r["result"]["tools"]) {
    names.push_back(t["name"]);
    EXPECT_TRUE(t["annotations"]["readOnlyHint"].get<bool>()) << t["name"];
  }
  EXPECT_EQ(names, (std::vector<std::string>{"retrieve_memory", "get_user_profile", "search_memories",
                                             "list_memories", "memory_health"}));
  // A writing tool is an error that says why, and writes nothing.
  r = *server.Handle(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_fact","arguments":{"text":"Likes tea"}}})");
  EXPECT_EQ(r["result"]["isError"], true);
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("--read-only"), std::string::npos) << r;
  r = *server.Handle(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_memories","arguments":{}}})");
  EXPECT_EQ(r["result"]["isError"], false);
  EXPECT_TRUE(r["result"]["structuredContent"]["results"].empty());
  EXPECT_EQ(Instructions("u", true).find("add_memory"), std::string::npos);
  EXPECT_TRUE(ToolWrites("add_memory") && ToolWrites("delete_memory") && !ToolWrites("search_memories"));
  EXPECT_FALSE(ToolWrites("no_such_tool"));
}

TEST_F(McpServerTest, AToolWrapperSeesEveryCallAndMayAnswerInstead) {
  std::vector<std::string> seen;
  server_->WrapTools([&seen](const std::string& name, const json& args, const std::function<json()>& call) {
    seen.push_back(name);
    if (args.value("text", "") == "refuse me") return ToolErrorResult("refused by the wrapper");
    return call();
  });
  json r = Handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_fact","arguments":{"text":"refuse me"}}})");
  EXPECT_EQ(r["result"]["isError"], true);
  EXPECT_EQ(r["result"]["content"][0]["text"], "refused by the wrapper");
  r = Handle(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_fact","arguments":{"text":"Likes tea"}}})");
  EXPECT_EQ(r["result"]["isError"], false);
  r = Handle(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_memories","arguments":{}}})");
  EXPECT_EQ(r["result"]["structuredContent"]["results"].size(), 1u) << r;  // only the tea
  // An unknown tool is refused before the wrapper.
  r = Handle(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}})");
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
  EXPECT_EQ(seen, (std::vector<std::string>{"add_fact", "add_fact", "list_memories"}));
}

}  // namespace
}  // namespace engram::mcp
