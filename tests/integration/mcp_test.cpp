// Golden transcripts of `engram mcp`: tests/data/mcp/<name>.in.jsonl is fed to
// the real binary on stdin; its stdout must equal <name>.out.jsonl line by line
// after volatile fields are normalised (memory ids, times, scores, the server
// version). Placeholders in the input: @OVERSIZED@ (a 5 MiB line) and
// @MEMORY_ID@ (an id captured from an earlier transcript). Regenerate the
// expected files with ENGRAM_UPDATE_GOLDEN=1 (then review the diff).
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"

namespace {

namespace et = engram::testing;
using nlohmann::json;

const std::string kGoldenDir = std::string(ENGRAM_SOURCE_DIR) + "/tests/data/mcp/";

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
}

// Replaces what differs from run to run.
json Normalise(json j) {
  static const std::set<std::string> kTimes = {"created_at", "updated_at", "event_time", "record_time", "since", "now"};
  static const std::regex kMemoryId("m_[0-9a-f]{16}");
  if (j.is_object()) {
    for (auto& [k, v] : j.items()) {
      if (kTimes.count(k) && v.is_string()) v = "<time>";
      else if (k == "score" && v.is_number()) v = "<score>";
      else v = Normalise(v);
    }
    if (j.contains("serverInfo") && j["serverInfo"].is_object()) j["serverInfo"]["version"] = "<version>";
  } else if (j.is_array()) {
    for (auto& v : j) v = Normalise(v);
  } else if (j.is_string()) {
    std::string s = j.get<std::string>();
    json inner = json::parse(s, nullptr, false);
    if (inner.is_object()) return Normalise(inner).dump();  // a text content holding JSON
    return std::regex_replace(s, kMemoryId, "m_<id>");
  }
  return j;
}

struct Transcript {
  et::ProcessResult run;
  std::vector<json> responses;  // raw, in order
};

Transcript RunTranscript(const et::TempDir& home, const std::string& name, const std::string& memory_id = "") {
  std::string in = et::ReadFile(kGoldenDir + name + ".in.jsonl");
  EXPECT_FALSE(in.empty()) << "missing " << name << ".in.jsonl";
  ReplaceAll(in, "@OVERSIZED@", "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"ping\",\"params\":{\"pad\":\"" +
                                    std::string(5u << 20, 'x') + "\"}}");
  ReplaceAll(in, "@MEMORY_ID@", memory_id);
  Transcript t;
  t.run = et::RunProcess({ENGRAM_BINARY, "mcp", "--user", "alice"}, in,
                         {"ENGRAM_HOME=" + home.path(), "ENGRAM_DB=", "ENGRAM_USER="});
  std::istringstream out(t.run.out);
  for (std::string line; std::getline(out, line);) {
    json j = json::parse(line, nullptr, false);
    EXPECT_TRUE(j.is_object()) << name << ": stdout line is not a JSON object: " << line.substr(0, 300);
    t.responses.push_back(j);
  }
  return t;
}

// Runs a transcript and compares it with its golden output.
Transcript ExpectGolden(const et::TempDir& home, const std::string& name, const std::string& memory_id = "") {
  Transcript t = RunTranscript(home, name, memory_id);
  EXPECT_EQ(t.run.exit_code, 0) << name << (t.run.timed_out ? " timed out" : "") << "\nstderr: " << t.run.err;
  EXPECT_FALSE(t.run.out.empty() || t.run.out.back() != '\n') << name << ": output must end with a newline";
  std::string actual;
  for (const auto& r : t.responses) actual += Normalise(r).dump() + "\n";
  const std::string path = kGoldenDir + name + ".out.jsonl";
  if (const char* u = std::getenv("ENGRAM_UPDATE_GOLDEN"); u && *u == '1') {
    et::WriteFile(path, actual);
    return t;
  }
  std::vector<std::string> want, got;
  std::istringstream ws(et::ReadFile(path)), gs(actual);
  for (std::string l; std::getline(ws, l);) want.push_back(l);
  for (std::string l; std::getline(gs, l);) got.push_back(l);
  EXPECT_EQ(got.size(), want.size()) << name << ": response count\n" << actual;
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    EXPECT_EQ(json::parse(got[i]), json::parse(want[i])) << name << ": response " << i + 1;
  }
  return t;
}

TEST(McpGolden, InitializeLifecycle) { ExpectGolden(et::TempDir(), "lifecycle"); }
TEST(McpGolden, VersionNegotiation) { ExpectGolden(et::TempDir(), "versions"); }
TEST(McpGolden, StatelessRevision) { ExpectGolden(et::TempDir(), "stateless"); }
TEST(McpGolden, NotificationsGetNoReply) { ExpectGolden(et::TempDir(), "notifications"); }
TEST(McpGolden, ProtocolErrors) { ExpectGolden(et::TempDir(), "protocol_errors"); }
TEST(McpGolden, ToolErrorsAreResults) { ExpectGolden(et::TempDir(), "tool_errors"); }
TEST(McpGolden, InvalidUtf8) { ExpectGolden(et::TempDir(), "invalid_utf8"); }
TEST(McpGolden, EofWithoutTrailingNewline) { ExpectGolden(et::TempDir(), "eof"); }

TEST(McpGolden, OversizedLineIsRejectedAndServerKeepsWorking) {
  et::TempDir home;
  Transcript t = ExpectGolden(home, "oversized");
  ASSERT_EQ(t.responses.size(), 3u);
  EXPECT_EQ(t.responses[1]["error"]["code"], -32600);
  EXPECT_EQ(t.responses[2]["result"], json::object());
}

TEST(McpGolden, EveryToolThenEditById) {
  et::TempDir home;
  Transcript add = ExpectGolden(home, "tools_add");
  std::string id;
  for (const auto& r : add.responses) {
    if (r.value("id", json()) == 5) id = r["result"]["structuredContent"]["results"][0].value("id", "");
  }
  ASSERT_EQ(id.size(), 18u) << "no memory id from add_fact";
  Transcript edit = ExpectGolden(home, "tools_edit", id);
  ASSERT_GE(edit.responses.size(), 4u);
  EXPECT_EQ(edit.responses[3]["result"]["structuredContent"]["id"], id);
}

// `engram mcp --read-only`: the reading tools alone; a writing tool is a
// tool error naming the flag, and nothing is written.
TEST(McpServer, ReadOnlyOffersTheReadingToolsAlone) {
  et::TempDir home;
  const std::string in =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})" "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})" "\n"
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_fact","arguments":{"text":"Likes tea"}}})" "\n"
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_memories","arguments":{}}})" "\n";
  auto run = et::RunProcess({ENGRAM_BINARY, "mcp", "--user", "alice", "--read-only"}, in,
                            {"ENGRAM_HOME=" + home.path(), "ENGRAM_DB=", "ENGRAM_USER="});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<json> r;
  std::istringstream out(run.out);
  for (std::string line; std::getline(out, line);) r.push_back(json::parse(line));
  ASSERT_EQ(r.size(), 4u) << run.out;
  EXPECT_EQ(r[0]["result"]["instructions"].get<std::string>().find("add_memory"), std::string::npos);
  std::vector<std::string> names;
  for (const auto& t : r[1]["result"]["tools"]) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"retrieve_memory", "get_user_profile", "search_memories",
                                             "list_memories", "memory_health"}));
  EXPECT_EQ(r[2]["result"]["isError"], true);
  EXPECT_NE(r[2]["result"]["content"][0]["text"].get<std::string>().find("--read-only"), std::string::npos);
  EXPECT_TRUE(r[3]["result"]["structuredContent"]["results"].empty()) << r[3];
  EXPECT_NE(run.err.find("read only"), std::string::npos) << run.err;
}

// A line nested 100,000 deep (here in an add_memory's meta_data) crashed
// `engram mcp`: it is answered with -32600 naming the limit, nothing is
// admitted, and the next requests are served.
TEST(McpServer, DeepNestingIsRefusedAndTheServerKeepsServing) {
  et::TempDir home;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string in =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})" "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})" "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_memory","arguments":{"user_input":"deep","meta_data":{"k":)" +
      deep + "}}}}\n" +
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_memory","arguments":{"user_input":"I live in Porto.","agent_response":"Noted."}}})" "\n"
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"retrieve_memory","arguments":{"query":"where do I live?"}}})" "\n";
  auto run = et::RunProcess({ENGRAM_BINARY, "mcp", "--user", "alice"}, in,
                            {"ENGRAM_HOME=" + home.path(), "ENGRAM_DB=", "ENGRAM_USER="});
  ASSERT_EQ(run.exit_code, 0) << (run.timed_out ? "timed out" : "") << " signal " << run.signal << "\nstderr: " << run.err;
  std::vector<json> responses;
  std::istringstream out(run.out);
  for (std::string line; std::getline(out, line);) responses.push_back(json::parse(line, nullptr, false));
  ASSERT_EQ(responses.size(), 4u) << run.out;
  EXPECT_EQ(responses[0]["id"], 1);
  EXPECT_EQ(responses[1]["error"]["code"], -32600) << responses[1];
  EXPECT_NE(responses[1]["error"].value("message", "").find("nested deeper than 128 levels"), std::string::npos)
      << responses[1];
  EXPECT_EQ(responses[1]["error"]["data"]["limit"], 128);
  EXPECT_EQ(responses[2]["id"], 3);
  EXPECT_EQ(responses[2]["result"]["isError"], false) << responses[2];
  EXPECT_EQ(responses[2]["result"]["structuredContent"]["seq"], 1) << "the refused line admitted nothing";
  EXPECT_EQ(responses[3]["id"], 4);
  EXPECT_NE(responses[3]["result"]["structuredContent"].value("context", "").find("Porto"), std::string::npos)
      << responses[3];
  EXPECT_NE(run.err.find("nested deeper than 128 levels"), std::string::npos) << run.err;
}

TEST(McpServer, StdoutCarriesProtocolMessagesOnlyAndToolsAreDescribed) {
  et::TempDir home;
  Transcript t = RunTranscript(home, "tools_add");
  EXPECT_EQ(t.run.exit_code, 0);
  for (const auto& r : t.responses) EXPECT_EQ(r.value("jsonrpc", ""), "2.0");
  EXPECT_NE(t.run.err.find("engram mcp: serving default/alice/assistant"), std::string::npos) << t.run.err;
  // Every tool is listed with schemas and annotations.
  Transcript l = RunTranscript(home, "lifecycle");
  ASSERT_EQ(l.responses.size(), 3u);
  const json& tools = l.responses[2]["result"]["tools"];
  std::set<std::string> names;
  for (const auto& tool : tools) {
    names.insert(tool["name"].get<std::string>());
    EXPECT_EQ(tool["inputSchema"]["type"], "object");
    EXPECT_EQ(tool["outputSchema"]["type"], "object");
    for (const char* hint : {"readOnlyHint", "destructiveHint", "idempotentHint"}) {
      EXPECT_TRUE(tool["annotations"][hint].is_boolean()) << tool["name"] << " " << hint;
    }
    if (tool["name"] == "retrieve_memory") {
      EXPECT_EQ(tool["annotations"]["readOnlyHint"], true);
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"add_memory", "retrieve_memory", "get_user_profile", "search_memories",
                                          "add_fact", "list_memories", "update_memory", "delete_memory",
                                          "memory_health"}));
}

}  // namespace
