// The MCP line handler of `engram mcp` (mcp/server, mcp/protocol): every line
// of the input is one message to Server::Handle over a real engine (SQLite in
// memory, recreated every hundred inputs); the whole input is also read
// by the LineReader with a small line limit. Invariants: a response is a
// JSON-RPC 2.0 object with an id and exactly one of result and error; error
// codes are the protocol's and never -32603 (internal: an escaped exception);
// a response prints as one line of valid UTF-8 that parses back.
#include <cstdint>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engram/engine.hpp"
#include "fuzz_support.hpp"
#include "mcp/protocol.hpp"
#include "mcp/server.hpp"
#include "mcp/tools.hpp"

namespace {

using nlohmann::json;
namespace mcp = engram::mcp;

constexpr int kInputsPerStore = 100;

class Harness {
 public:
  Harness() { Open(); }
  mcp::Server& server() {
    if (++inputs_ > kInputsPerStore) Open();
    return *server_;
  }

 private:
  void Open() {
    server_.reset();
    tools_.reset();
    engine_.reset();
    auto e = engram::Engine::Open({.db_path = ":memory:", .verify_on_open = false});
    FUZZ_CHECK(e.ok(), e.status().ToString());
    engine_ = std::move(*e);
    tools_ = std::make_unique<mcp::Tools>(*engine_, engram::Scope{"default", "u", "a"});
    server_ = std::make_unique<mcp::Server>(*tools_, mcp::ServerInfo{"engram", "fuzz", ""}, log_);
    inputs_ = 0;
  }
  std::ostringstream log_;
  std::unique_ptr<engram::Engine> engine_;
  std::unique_ptr<mcp::Tools> tools_;
  std::unique_ptr<mcp::Server> server_;
  int inputs_ = 0;
};

void CheckResponse(const json& r, std::string_view line) {
  const std::string where = "for the line " + std::string(line.substr(0, 300)) + "\n";
  FUZZ_CHECK(r.is_object() && r.value("jsonrpc", "") == "2.0", where + r.dump(-1, ' ', false, json::error_handler_t::replace));
  FUZZ_CHECK(r.contains("id"), where + "a response without an id");
  FUZZ_CHECK(r.contains("result") != r.contains("error"), where + "result and error");
  if (r.contains("error")) {
    static const std::set<int> kCodes = {mcp::kParseError, mcp::kInvalidRequest, mcp::kMethodNotFound,
                                         mcp::kInvalidParams};
    const json& e = r["error"];
    FUZZ_CHECK(e.is_object() && e.contains("code") && e["code"].is_number_integer() && e.contains("message"),
               where + "a malformed error");
    FUZZ_CHECK(kCodes.count(e["code"].get<int>()) == 1,
               where + "error " + e.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  const std::string out = mcp::Serialize(r);
  FUZZ_CHECK(out.find('\n') == std::string::npos, where + "a response of several lines");
  FUZZ_CHECK(mcp::IsValidUtf8(out), where + "a response that is not UTF-8");
  const json back = json::parse(out, nullptr, false);
  FUZZ_CHECK(!back.is_discarded(), where + "a response that does not parse: " + out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Harness harness;
  const std::string text(engram::fuzz::AsText(data, size));
  mcp::Server& server = harness.server();
  std::istringstream in(text);
  mcp::LineReader reader(in, 1024);
  std::string line;
  for (;;) {
    const auto kind = reader.Next(&line);
    if (kind == mcp::LineReader::Kind::kEof) break;
    if (kind == mcp::LineReader::Kind::kOversized) continue;
    FUZZ_CHECK(line.size() <= 1024, "a line over the reader's limit");
  }
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    std::string_view one = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    if (auto r = server.Handle(one)) CheckResponse(*r, one);
  }
  return 0;
}
