// docs/openapi.yaml against the real `engram serve`: every documented
// (method, path) is served (a minimal valid request never meets the
// transport's "no_route" answer nor a 5xx, and errors carry the envelope),
// and every route registered in src/server/*.cpp is documented.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "testing/server_process.hpp"
#include "testing/temp_dir.hpp"

namespace engram {
namespace {

using nlohmann::json;
using Op = std::pair<std::string, std::string>;  // (METHOD, path template)

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

// The (method, path) lines under `paths:` of docs/openapi.yaml, in order:
// paths at 2 spaces ("  /v1/xyz:"), methods at 4 ("    get:").
std::vector<Op> DocumentedOps() {
  std::ifstream in(std::string(ENGRAM_SOURCE_DIR) + "/docs/openapi.yaml");
  static const std::regex path_re(R"(^  (/[^\s:]*):\s*$)");
  static const std::regex method_re(R"(^    (get|put|post|patch|delete|head|options):\s*$)");
  std::vector<Op> ops;
  std::string line, path;
  bool in_paths = false;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("paths:", 0) == 0) {
      in_paths = true;
      continue;
    }
    if (!in_paths) continue;
    if (!line.empty() && line[0] != ' ' && line[0] != '#') break;  // the next top-level key
    if (std::regex_match(line, m, path_re)) path = m[1];
    else if (std::regex_match(line, m, method_re) && !path.empty()) ops.emplace_back(Upper(m[1]), path);
  }
  return ops;
}

// The routes registered in src/server/*.cpp: `Add(s, "GET", "/path"` and
// `s.Route("GET", "/path"`.
std::set<Op> ServedOps() {
  static const std::regex re(R"re((?:\bAdd\(s,\s*|\bs\.Route\()"([A-Z]+)",\s*"(/[^"]*)")re");
  std::set<Op> ops;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ENGRAM_SOURCE_DIR) + "/src/server")) {
    if (entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
      for (auto it = line.cbegin(); std::regex_search(it, line.cend(), m, re); it = m.suffix().first) {
        ops.emplace(m[1], m[2]);
      }
    }
  }
  return ops;
}

httplib::Result Send(httplib::Client& c, const std::string& method, const std::string& target,
                     const std::string& body, const std::string& type) {
  if (method == "GET") return c.Get(target);
  if (method == "DELETE") return c.Delete(target);
  if (method == "PATCH") return c.Patch(target, body, type);
  if (method == "PUT") return c.Put(target, body, type);
  return c.Post(target, body, type);
}

// A minimal valid request for a documented route.
struct Request {
  std::string query;  // without '?'
  json body = json::object();
  std::string raw;    // a raw body instead of `body` (import)
  std::string type = "application/json";
  bool fresh_memory = false;  // {id} is a memory made for this request (it is deleted or purged)
};

std::map<Op, Request> KnownRequests() {
  const json alice = {{"user", "alice"}};
  std::map<Op, Request> r;
  for (const char* p : {"/healthz", "/readyz", "/v1/version", "/metrics"}) r[{"GET", p}] = {};
  for (const char* p : {"/v1/turns", "/v1/export", "/v1/memories", "/v1/memories/{id}", "/v1/memories/{id}/history",
                        "/v1/profile", "/v1/stats", "/v1/health", "/v1/jobs"}) {
    r[{"GET", p}] = {"user=alice"};
  }
  for (const char* p : {"/v1/whoami", "/v1/users", "/v1/activity", "/v1/requests"}) r[{"GET", p}] = {};
  for (const char* p : {"/v1/segments", "/v1/receipts"}) r[{"GET", p}] = {"user=alice"};
  r[{"POST", "/v1/turns"}] = {"", {{"user", "alice"}, {"user_text", "I also play the cello."}, {"assistant_text", "Lovely!"}}};
  r[{"POST", "/v1/retrieve"}] = {"", {{"user", "alice"}, {"query", "what food do I like?"}}};
  r[{"POST", "/v1/chat"}] = {"", {{"user", "alice"}, {"message", "What food do I like?"}}};
  // MCP over HTTP: its errors are JSON-RPC messages, so only a valid message is sent here.
  r[{"POST", "/mcp"}] = {"user=alice", {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}}};
  r[{"POST", "/v1/import"}] = {"user=alice", json::object(),
                               "{\"user\": \"Hi again\", \"assistant\": \"Welcome back!\"}\n", "application/x-ndjson"};
  r[{"POST", "/v1/maintain"}] = {"", alice};
  r[{"POST", "/v1/forget"}] = {"", {{"user", "bob"}}};
  r[{"POST", "/v1/memories"}] = {"", {{"user", "alice"}, {"text", "Alice adopted a grey cat named Miso"}, {"infer", false}}};
  r[{"POST", "/v1/memories/search"}] = {"", {{"user", "alice"}, {"query", "ramen"}}};
  r[{"DELETE", "/v1/memories"}] = {"user=carol"};
  r[{"POST", "/v1/memories/purge"}] = {"", {{"user", "carol"}}};
  r[{"PATCH", "/v1/memories/{id}"}] = {"", {{"user", "alice"}, {"text", "Alice loves ramen with a soft egg"}}};
  r[{"DELETE", "/v1/memories/{id}"}] = {"user=alice", json::object(), "", "application/json", true};
  r[{"POST", "/v1/memories/{id}/purge"}] = {"", alice, "", "application/json", true};
  r[{"POST", "/v1/health/verify"}] = {"", alice};
  r[{"POST", "/v1/jobs/retry"}] = {"", alice};
  return r;
}

TEST(ServerOpenApi, EveryDocumentedRouteAnswers) {
  const std::vector<Op> documented = DocumentedOps();
  ASSERT_GE(documented.size(), 20u) << "docs/openapi.yaml: too few path/method lines found";

  testing::TempDir home;
  testing::ServerProcess server(ENGRAM_BINARY, home.path());
  ASSERT_TRUE(server.started()) << server.output();
  auto cli = server.Client(server.admin_key());

  // Data first, so that ids exist and reads have something to read.
  auto turns = cli->Post("/v1/turns",
                         json{{"user", "alice"},
                              {"turns", {{{"user_text", "I love ramen."}, {"assistant_text", "Tonkotsu or shoyu?"}},
                                         {{"user_text", "Shoyu, always."}, {"assistant_text", "Noted!"}}}}}
                             .dump(),
                         "application/json");
  ASSERT_TRUE(turns);
  ASSERT_EQ(turns->status, 201) << turns->body;
  auto bob = cli->Post("/v1/turns", R"({"user": "bob", "user_text": "Hello", "assistant_text": "Hi Bob"})",
                       "application/json");
  ASSERT_TRUE(bob);
  ASSERT_EQ(bob->status, 201) << bob->body;
  int memories = 0;
  auto new_memory = [&](const std::string& text) {
    auto r = cli->Post("/v1/memories", json{{"user", "alice"}, {"text", text}, {"infer", false}}.dump(),
                       "application/json");
    if (!r || r->status != 201) return std::string();
    ++memories;
    return json::parse(r->body)["results"][0]["id"].get<std::string>();
  };
  const std::string memory_id = new_memory("Alice loves ramen");
  ASSERT_FALSE(memory_id.empty());
  const std::vector<std::string> fresh_texts = {"Alice keeps a red bicycle in the hall",
                                                "Alice climbed Mount Fuji at dawn in 2019",
                                                "Alice's sister lives in Osaka and teaches piano"};

  const auto known = KnownRequests();
  for (const auto& [method, path] : documented) {
    SCOPED_TRACE(method + " " + path);
    auto it = known.find({method, path});
    const Request req = it != known.end() ? it->second : Request{};
    std::string target = path;
    if (auto at = target.find("{id}"); at != std::string::npos) {
      const std::string id =
          req.fresh_memory ? new_memory(fresh_texts[static_cast<std::size_t>(memories) % fresh_texts.size()]) : memory_id;
      ASSERT_FALSE(id.empty());
      target.replace(at, 4, id);
    }
    if (!req.query.empty()) target += "?" + req.query;
    auto res = Send(*cli, method, target, req.raw.empty() ? req.body.dump() : req.raw, req.type);
    ASSERT_TRUE(res) << "no answer: " << httplib::to_string(res.error());
    const int status = res->status;
    EXPECT_LT(status, 500) << res->body;
    const std::string type = res->get_header_value("Content-Type");
    if (path == "/metrics") {
      EXPECT_EQ(status, 200) << res->body;
      EXPECT_NE(type.find("text/plain"), std::string::npos) << type;
      EXPECT_NE(res->body.find("engram_http_requests_total"), std::string::npos);
      continue;
    }
    if (status >= 400) {
      const json body = json::parse(res->body, nullptr, false);
      ASSERT_TRUE(body.is_object() && body.contains("error") && body["error"].is_object()) << res->body;
      const json& err = body["error"];
      EXPECT_NE(err.value("code", ""), "no_route") << "documented but not served: " << res->body;
      EXPECT_FALSE(err.value("code", "").empty()) << res->body;
      EXPECT_TRUE(err.contains("message") && err["message"].is_string()) << res->body;
      EXPECT_TRUE(err.contains("request_id") && err["request_id"].is_string()) << res->body;
    }
    if (it == known.end()) continue;  // no known valid request: only the checks above apply
    if (path == "/v1/chat") {
      // Without a configured language model: 409 failed_precondition.
      EXPECT_TRUE(status == 200 || status == 409) << status << " " << res->body;
      continue;
    }
    EXPECT_GE(status, 200) << res->body;
    EXPECT_LT(status, 300) << res->body;
    if (path == "/v1/export") {
      EXPECT_NE(type.find("application/x-ndjson"), std::string::npos) << type;
      std::istringstream lines(res->body);
      std::string line;
      int n = 0;
      while (std::getline(lines, line)) n += json::parse(line, nullptr, false).is_object() ? 1 : -1000;
      EXPECT_GT(n, 0) << res->body;
    } else {
      EXPECT_NE(type.find("application/json"), std::string::npos) << type;
      EXPECT_FALSE(json::parse(res->body, nullptr, false).is_discarded()) << res->body;
    }
  }

  // A route nobody documented gets the transport's answer (what the loop above rules out).
  auto missing = cli->Get("/v1/no-such-route");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(json::parse(missing->body)["error"]["code"], "no_route") << missing->body;
  // A known path with a method it does not take: 405 with the methods it does.
  auto wrong_method = cli->Put("/v1/memories", "{}", "application/json");
  ASSERT_TRUE(wrong_method);
  EXPECT_EQ(wrong_method->status, 405);
  EXPECT_EQ(wrong_method->get_header_value("Allow"), "POST, GET, DELETE");
  EXPECT_EQ(json::parse(wrong_method->body)["error"]["code"], "method_not_allowed") << wrong_method->body;
  EXPECT_EQ(server.Stop(), 0) << server.output();
}

// Every documented route with each field (or query parameter) of its valid
// request replaced by values of the wrong type, size or shape, and with
// bodies that are not objects: always a 4xx envelope or a success, never a
// 5xx, and the server stays up and stops cleanly.
TEST(ServerOpenApi, HostileInputNeverFailsTheServer) {
  testing::TempDir home;
  testing::ServerProcess server(ENGRAM_BINARY, home.path());
  ASSERT_TRUE(server.started()) << server.output();
  auto cli = server.Client(server.admin_key());
  auto added = cli->Post("/v1/memories", json{{"user", "alice"}, {"text", "Alice loves ramen"}, {"infer", false}}.dump(),
                         "application/json");
  ASSERT_TRUE(added);
  const std::string id = json::parse(added->body)["results"][0]["id"];
  const std::vector<json> values = {nullptr, 12345, -1, 1e308, "", std::string(5000, 'x'), json::array(),
                                    json::object(), true, "\x01\n", json::array({1, "a", nullptr})};
  const std::vector<std::string> bodies = {"[]", "null", "\"text\"", "{", "{\"user\": }", std::string(3, '\0'),
                                           "{\"user\": \"alice\", \"user\": 1}", "{\"user\": 1e999}",
                                           "{\"user\": \"\\ud800\"}", "{\"user\": \"caf\xe9\"}"};
  int requests = 0;
  auto check = [&](const std::string& method, const std::string& target, const std::string& body) {
    auto res = Send(*cli, method, target, body, "application/json");
    ASSERT_TRUE(res) << method << " " << target;
    ++requests;
    EXPECT_LT(res->status, 500) << method << " " << target << " " << body.substr(0, 200) << "\n" << res->body;
    if (res->status >= 400 && target != "/metrics") {
      const json err = json::parse(res->body, nullptr, false);
      EXPECT_TRUE(err.is_object() && err.contains("error")) << res->body;
    }
  };
  for (const auto& [op, req] : KnownRequests()) {
    const auto& [method, path] = op;
    std::string base = path;
    if (auto at = base.find("{id}"); at != std::string::npos) base.replace(at, 4, id);
    const bool has_body = method != "GET" && method != "DELETE" && req.raw.empty();
    if (has_body) {
      for (const auto& b : bodies) check(method, base + (req.query.empty() ? "" : "?" + req.query), b);
      for (const auto& [field, unused] : req.body.items()) {
        for (const auto& v : values) {
          json body = req.body;
          body[field] = v;
          check(method, base, body.dump());
        }
      }
    } else if (!req.query.empty()) {
      const auto eq = req.query.find('=');
      const std::string name = req.query.substr(0, eq);
      const std::vector<std::string> query_values = {"", "%00", "x%0Ay", std::string(5000, 'y'), "-1", "1e999", "%C3%28"};
      for (const auto& v : query_values) {
        check(method, base + "?" + name + "=" + v, req.raw);
        check(method, base + "?" + req.query + "&limit=" + v, req.raw);
      }
    }
  }
  EXPECT_GT(requests, 300);
  auto alive = cli->Get("/healthz");
  ASSERT_TRUE(alive);
  EXPECT_EQ(alive->status, 200);
  EXPECT_EQ(server.Stop(), 0) << server.output();
}

TEST(ServerOpenApi, EveryServedRouteIsDocumented) {
  const std::set<Op> served = ServedOps();
  ASSERT_GE(served.size(), 20u) << "too few route registrations found in src/server/*.cpp";
  const std::vector<Op> doc = DocumentedOps();
  const std::set<Op> documented(doc.begin(), doc.end());
  EXPECT_EQ(documented.size(), doc.size()) << "docs/openapi.yaml lists a (method, path) twice";
  for (const auto& op : served) {
    EXPECT_TRUE(documented.count(op)) << op.first << " " << op.second << " is served but not in docs/openapi.yaml";
  }
  for (const auto& op : documented) {
    EXPECT_TRUE(served.count(op)) << op.first << " " << op.second << " is documented but not registered";
  }
}

}  // namespace
}  // namespace engram
