// `engram serve` end to end on the real binary: tenants and keys, bad input,
// graceful shutdown during a batch import, streaming chat, metrics.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "testing/fake_openai_server.hpp"
#include "testing/server_process.hpp"
#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"

namespace et = engram::testing;
using nlohmann::json;

namespace {

// Sends raw bytes to 127.0.0.1:port and returns what comes back within 10 s
// (until the server closes or the response's first line and headers arrived).
std::string RawExchange(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
    char buf[4096];
    for (ssize_t n; out.find("\r\n\r\n{") == std::string::npos && (n = recv(fd, buf, sizeof buf, 0)) > 0;) {
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  close(fd);
  return out;
}

class ServerTest : public ::testing::Test {
 protected:
  void Start(const std::vector<std::string>& extra = {}, const std::vector<std::string>& env = et::kNoModelEnv) {
    server_ = std::make_unique<et::ServerProcess>(ENGRAM_BINARY, dir_.path(), extra, env);
    ASSERT_TRUE(server_->started()) << server_->output();
  }
  // `engram keys create` through the CLI; returns the key text.
  std::string CreateKey(const std::string& tenant, const std::string& role, const std::string& users = "") {
    std::vector<std::string> args = {ENGRAM_BINARY, "--home", dir_.path(), "--tenant", tenant, "keys", "create",
                                     "--role", role, "--json"};
    if (!users.empty()) args.insert(args.end(), {"--users", users});
    auto r = et::RunProcess(args, "", et::kNoModelEnv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    last_key_id_ = j.value("id", "");
    return j.value("key", "");
  }
  static json Body(const httplib::Result& r) {
    return r ? json::parse(r->body, nullptr, false) : json();
  }
  static std::string Code(const httplib::Result& r) {
    json j = Body(r);
    return j.is_object() && j.contains("error") ? j["error"].value("code", "") : "";
  }
  httplib::Result Post(const std::string& key, const std::string& path, const json& body) {
    return server_->Client(key)->Post(path.c_str(), body.dump(), "application/json");
  }
  httplib::Result Get(const std::string& key, const std::string& path) {
    return server_->Client(key)->Get(path.c_str());
  }
  void AdmitAlice(const std::string& key, const std::string& secret) {
    auto r = Post(key, "/v1/turns",
                  {{"user", "alice"},
                   {"turns", {{{"user_text", "My locker code is " + secret}, {"assistant_text", "Noted."}},
                              {{"user_text", "I moved to Lisbon"}, {"assistant_text", "Lovely city."}}}}});
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 201) << r->body;
  }

  et::TempDir dir_;
  std::unique_ptr<et::ServerProcess> server_;
  std::string last_key_id_;
};

TEST_F(ServerTest, FirstStartCreatesOneAdminKeyReadableOnlyByItsOwner) {
  Start();
  ASSERT_FALSE(server_->admin_key().empty());
  struct stat st {};
  ASSERT_EQ(stat(dir_.File("admin.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(server_->output().find(server_->admin_key()), std::string::npos);  // printed once
  auto unauth = Get("", "/v1/stats");
  ASSERT_TRUE(unauth);
  EXPECT_EQ(unauth->status, 401);
  EXPECT_EQ(Code(unauth), "unauthorized");
  auto bad = Get("egk_000000000000_not-a-key", "/v1/stats");
  EXPECT_EQ(bad->status, 401);
  auto blank = server_->Client()->Get("/v1/stats", {{"Authorization", "Bearer    "}});
  EXPECT_EQ(blank->status, 401) << blank->body;
  EXPECT_EQ(server_->Stop(), 0) << server_->output();

  // A second start finds the key: no new key, the old one still works.
  const std::string key = server_->admin_key();
  Start();
  EXPECT_EQ(server_->output().find("was created"), std::string::npos);
  auto ok = server_->Client()->Get("/v1/stats", {{"X-API-Key", key}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  EXPECT_EQ(Get("", "/healthz")->status, 200);
  EXPECT_EQ(Get("", "/readyz")->status, 200);
}

TEST_F(ServerTest, TenantsCannotSeeOrTouchEachOther) {
  Start();
  const std::string a = CreateKey("acme", "admin"), b = CreateKey("globex", "admin");
  AdmitAlice(a, "4711");
  auto added = Post(a, "/v1/memories", {{"user", "alice"}, {"text", "Alice is allergic to peanuts"}, {"infer", false}});
  ASSERT_EQ(added->status, 201) << added->body;
  const std::string id = Body(added)["results"][0]["id"];
  ASSERT_EQ(Post(a, "/v1/maintain", json::object())->status, 200);

  // Same user id, other tenant: nothing by scope, search, id or export.
  auto ctx = Post(b, "/v1/retrieve", {{"user", "alice"}, {"query", "locker code"}});
  ASSERT_EQ(ctx->status, 200) << ctx->body;
  EXPECT_EQ(ctx->body.find("4711"), std::string::npos);
  auto search = Post(b, "/v1/memories/search", {{"user", "alice"}, {"query", "peanuts allergy"}});
  ASSERT_EQ(search->status, 200);
  EXPECT_TRUE(Body(search)["results"].empty()) << search->body;
  EXPECT_TRUE(Body(Get(b, "/v1/turns?user=alice"))["turns"].empty());
  for (const std::string& path : {"/v1/memories/" + id + "?user=alice", "/v1/memories/" + id + "/history?user=alice"}) {
    auto r = Get(b, path);
    EXPECT_EQ(r->status, 404);
    EXPECT_EQ(Code(r), "not_found");
  }
  auto patch = server_->Client(b)->Patch(("/v1/memories/" + id).c_str(), json({{"user", "alice"}, {"text", "x"}}).dump(),
                                         "application/json");
  EXPECT_EQ(patch->status, 404);
  EXPECT_EQ(server_->Client(b)->Delete(("/v1/memories/" + id + "?user=alice").c_str())->status, 404);
  EXPECT_EQ(Post(b, "/v1/memories/" + id + "/purge", {{"user", "alice"}})->status, 404);
  auto exported = Get(b, "/v1/export");
  ASSERT_EQ(exported->status, 200);
  EXPECT_EQ(exported->body.find("4711"), std::string::npos);
  EXPECT_EQ(exported->body.find("peanuts"), std::string::npos);
  EXPECT_EQ(Body(Get(b, "/v1/stats"))["scopes"], 0);
  EXPECT_EQ(Post(b, "/v1/forget", {{"user", "alice"}})->status, 200);  // erases nothing of acme

  // The owner still has everything.
  auto mine = Get(a, "/v1/memories/" + id + "?user=alice");
  EXPECT_EQ(mine->status, 200) << mine->body;
  EXPECT_NE(Get(a, "/v1/export")->body.find("4711"), std::string::npos);
  EXPECT_EQ(Body(Get(a, "/v1/stats"))["turns_admitted"], 2);
}

TEST_F(ServerTest, KeysLimitedToUsersAndRolesAndRevocation) {
  Start();
  const std::string admin = CreateKey("acme", "admin");
  const std::string limited = CreateKey("acme", "write", "alice");
  const std::string limited_id = last_key_id_;
  const std::string reader = CreateKey("acme", "read");
  AdmitAlice(limited, "1234");
  auto bob = Post(admin, "/v1/turns", {{"user", "bob"}, {"user_text", "Bob's secret is 9999"}, {"assistant_text", "ok"}});
  ASSERT_EQ(bob->status, 201) << bob->body;

  // Naming a user outside the allowance: 403 (by scope, memories, export).
  auto r = Post(limited, "/v1/retrieve", {{"user", "bob"}, {"query", "secret"}});
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(Code(r), "forbidden");
  EXPECT_EQ(Body(r)["error"]["field"], "user");
  EXPECT_EQ(Post(limited, "/v1/memories", {{"user", "bob"}, {"text", "x"}})->status, 403);
  EXPECT_EQ(Post(limited, "/v1/memories", {{"agent", "planner"}, {"text", "x"}})->status, 403);  // no user named
  EXPECT_EQ(Get(limited, "/v1/export?user=bob")->status, 403);
  EXPECT_EQ(Get(limited, "/v1/health")->status, 403);
  // Without a user, reports cover the allowed users only.
  auto all = Get(limited, "/v1/export");
  ASSERT_EQ(all->status, 200);
  EXPECT_NE(all->body.find("1234"), std::string::npos);
  EXPECT_EQ(all->body.find("9999"), std::string::npos);
  EXPECT_EQ(Body(Get(limited, "/v1/stats"))["scopes"], 1);
  EXPECT_EQ(Body(Get(admin, "/v1/stats"))["scopes"], 2);

  // Roles: read cannot write, write cannot purge or read metrics.
  auto write_by_reader = Post(reader, "/v1/turns", {{"user", "alice"}, {"user_text", "x"}, {"assistant_text", "y"}});
  EXPECT_EQ(write_by_reader->status, 403);
  EXPECT_EQ(Post(reader, "/v1/retrieve", {{"user", "alice"}, {"query", "Lisbon"}})->status, 200);
  EXPECT_EQ(Post(limited, "/v1/forget", {{"user", "alice"}})->status, 403);
  EXPECT_EQ(Get(limited, "/metrics")->status, 403);

  // Revocation (from another process) applies to the next request.
  auto revoked = et::RunProcess({ENGRAM_BINARY, "--home", dir_.path(), "keys", "revoke", limited_id}, "", et::kNoModelEnv);
  ASSERT_EQ(revoked.exit_code, 0) << revoked.err;
  auto after = Post(limited, "/v1/retrieve", {{"user", "alice"}, {"query", "Lisbon"}});
  EXPECT_EQ(after->status, 401);
  auto listed = et::RunProcess({ENGRAM_BINARY, "--home", dir_.path(), "--tenant", "acme", "keys", "list", "--json"}, "",
                               et::kNoModelEnv);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(listed.out.find("egk_"), std::string::npos);  // never the key text
  EXPECT_NE(listed.out.find(limited_id), std::string::npos);
}

TEST_F(ServerTest, BadInputIsA4xxNamingTheFieldAndWritesNothing) {
  Start({"--max-body", "1"});
  const std::string k = server_->admin_key();
  auto c = server_->Client(k);
  auto malformed = c->Post("/v1/turns", "{\"user\": \"alice\",", "application/json");
  EXPECT_EQ(malformed->status, 400);
  EXPECT_EQ(Code(malformed), "invalid_json");
  auto utf8 = c->Post("/v1/turns", "{\"user\": \"alice\", \"user_text\": \"caf\xe9\", \"assistant_text\": \"x\"}",
                      "application/json");
  EXPECT_EQ(utf8->status, 400);
  EXPECT_NE(Body(utf8)["error"]["message"].get<std::string>().find("UTF-8"), std::string::npos);
  auto wrong_type = Post(k, "/v1/retrieve", {{"user", "alice"}, {"query", 42}});
  EXPECT_EQ(wrong_type->status, 400);
  EXPECT_EQ(Body(wrong_type)["error"]["field"], "query");
  auto missing = Post(k, "/v1/retrieve", {{"query", "x"}});
  EXPECT_EQ(Body(missing)["error"]["field"], "user");
  auto unknown = Post(k, "/v1/retrieve", {{"user", "alice"}, {"query", "x"}, {"top_k", 5}});
  EXPECT_EQ(unknown->status, 400);
  EXPECT_EQ(Body(unknown)["error"]["field"], "top_k");
  // Ranking constants: known names within their ranges only, each error naming its field.
  auto tuned = Post(k, "/v1/retrieve", {{"user", "alice"}, {"query", "x"}, {"ranking", {{"bm25_k1", 1.2}, {"speaker", 0}}}});
  EXPECT_EQ(tuned->status, 200) << tuned->body;
  auto no_such = Post(k, "/v1/retrieve", {{"user", "alice"}, {"query", "x"}, {"ranking", {{"k9", 1}}}});
  EXPECT_EQ(no_such->status, 400);
  EXPECT_EQ(Body(no_such)["error"]["field"], "ranking.k9");
  auto out_of_range = Post(k, "/v1/retrieve", {{"user", "alice"}, {"query", "x"}, {"ranking", {{"bm25_b", 3}}}});
  EXPECT_EQ(out_of_range->status, 400);
  EXPECT_EQ(Body(out_of_range)["error"]["field"], "ranking.bm25_b");
  auto shares = Post(k, "/v1/retrieve",
                     {{"user", "alice"}, {"query", "x"}, {"ranking", {{"stm_share", 0.7}, {"facts_share", 0.7}}}});
  EXPECT_EQ(shares->status, 400);
  EXPECT_NE(Body(shares)["error"]["message"].get<std::string>().find("stm_share"), std::string::npos);
  EXPECT_EQ(Post(k, "/v1/retrieve", {{"user", "alice"}, {"query", "x"}, {"ranking", 5}})->status, 400);
  EXPECT_EQ(Post(k, "/v1/retrieve", {{"user", "alice"}, {"query", "x"}, {"max_pages", 0}})->status, 200);
  auto in_query = c->Post("/v1/retrieve?user=bob", json({{"user", "alice"}, {"query", "x"}}).dump(), "application/json");
  EXPECT_EQ(in_query->status, 400);
  EXPECT_EQ(Body(in_query)["error"]["field"], "user");
  auto range = Get(k, "/v1/turns?user=alice&limit=0");
  EXPECT_EQ(Body(range)["error"]["field"], "limit");
  // One bad turn in a batch: the whole batch is refused.
  auto batch = Post(k, "/v1/turns", {{"user", "alice"},
                                     {"turns", {{{"user_text", "one"}, {"assistant_text", "two"}},
                                                {{"user_text", ""}, {"assistant_text", ""}}}}});
  EXPECT_EQ(batch->status, 400);
  EXPECT_NE(Body(batch)["error"]["message"].get<std::string>().find("turns[1]"), std::string::npos) << batch->body;
  auto big = c->Post("/v1/turns", std::string(2u << 20, ' '), "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_EQ(Code(big), "payload_too_large");
  EXPECT_EQ(Body(Get(k, "/v1/stats"))["turns_admitted"], 0);
  // What common clients send: a JSON body typed as a form (curl -d), larger
  // than 8 KiB, is read as JSON; a POST with no body and no Content-Length is {}.
  json many = json::array();
  for (int i = 0; i < 300; ++i) many.push_back({{"user_text", "form-typed note " + std::to_string(i)}, {"assistant_text", "ok"}});
  auto form = c->Post("/v1/turns", json({{"user", "alice"}, {"turns", many}}).dump(), "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 201) << form->body.substr(0, 300);
  const std::string raw = RawExchange(server_->port(), "POST /v1/maintain HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                                                          k + "\r\n\r\n");
  EXPECT_EQ(raw.rfind("HTTP/1.1 200", 0), 0u) << raw;
  EXPECT_EQ(Body(Get(k, "/v1/stats"))["turns_admitted"], 300);
  auto none = Get(k, "/v1/nothing-here");
  EXPECT_EQ(none->status, 404);
  EXPECT_EQ(Code(none), "no_route");
  EXPECT_FALSE(Body(none)["error"]["request_id"].get<std::string>().empty());
}

TEST_F(ServerTest, SigtermDuringBatchImportLosesNothingAcknowledged) {
  Start();
  const std::string k = server_->admin_key();
  constexpr int kBatch = 40;
  std::atomic<int> acked_total{0};
  std::mutex mu;
  std::set<std::string> acked;  // "thread-batch"
  auto writer = [&](int t) {
    auto c = server_->Client(k);
    for (int b = 0;; ++b) {
      json turns = json::array();
      for (int i = 0; i < kBatch; ++i) {
        const std::string tag = "w" + std::to_string(t) + "b" + std::to_string(b) + "i" + std::to_string(i);
        turns.push_back({{"user_text", "note " + tag}, {"assistant_text", "ok"}, {"source_ref", tag}});
      }
      auto r = c->Post("/v1/turns", json({{"user", "u" + std::to_string(t)}, {"turns", turns}}).dump(),
                       "application/json");
      if (!r || r->status != 201) return;  // the server is going away
      std::lock_guard<std::mutex> l(mu);
      acked.insert(std::to_string(t) + "-" + std::to_string(b));
      ++acked_total;
    }
  };
  std::thread w1(writer, 1), w2(writer, 2);
  while (acked_total < 10) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const int code = server_->Stop(SIGTERM);
  w1.join();
  w2.join();
  EXPECT_EQ(code, 0) << server_->output();
  EXPECT_NE(server_->output().find("engram serve: stopped"), std::string::npos);

  // Every acknowledged batch is there in full; no batch is there in part.
  std::map<std::string, int> per_batch;
  for (int t : {1, 2}) {
    auto ex = et::RunProcess({ENGRAM_BINARY, "--home", dir_.path(), "--user", "u" + std::to_string(t), "export"}, "",
                             et::kNoModelEnv);
    ASSERT_EQ(ex.exit_code, 0) << ex.err;
    std::istringstream lines(ex.out);
    for (std::string line; std::getline(lines, line);) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_object() || j.value("type", "") != "turn") continue;
      const std::string tag = j.value("source_ref", "");
      const auto b = tag.find('b'), i = tag.find('i');
      ++per_batch[tag.substr(1, b - 1) + "-" + tag.substr(b + 1, i - b - 1)];
    }
  }
  for (const auto& id : acked) EXPECT_EQ(per_batch[id], kBatch) << "acknowledged batch " << id;
  for (const auto& [id, n] : per_batch) EXPECT_EQ(n, kBatch) << "partial batch " << id;
  EXPECT_GE(per_batch.size(), acked.size());
}

TEST_F(ServerTest, RetriedBatchesWithAnIdempotencyKeyAreAdmittedOnce) {
  Start();
  auto c = server_->Client(server_->admin_key());
  const json batch = {{"user", "alice"},
                      {"turns", {{{"user_text", "Booked the flight to Hanoi"}, {"assistant_text", "Great!"}}}}};
  auto first = c->Post("/v1/turns", {{"Idempotency-Key", "req-42"}}, batch.dump(), "application/json");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 201) << first->body;
  auto retry = c->Post("/v1/turns", {{"Idempotency-Key", "req-42"}}, batch.dump(), "application/json");
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->status, 200) << retry->body;
  EXPECT_EQ(Body(retry)["replayed"], true);
  EXPECT_EQ(Body(retry)["admitted"], Body(first)["admitted"]);
  json other = batch;
  other["turns"][0]["user_text"] = "Booked a hotel instead";
  other["idempotency_key"] = "req-42";
  auto clash = Post(server_->admin_key(), "/v1/turns", other);
  EXPECT_EQ(clash->status, 409);
  EXPECT_EQ(Code(clash), "conflict");
  EXPECT_EQ(Body(Get(server_->admin_key(), "/v1/stats"))["turns_admitted"], 1);

  // An import retried with the same key admits its dialogue once.
  const std::string file = "{\"user\": \"Hi\", \"assistant\": \"Hello\"}\n{\"user\": \"Bye\", \"assistant\": \"Later\"}\n";
  for (int status : {201, 200}) {
    auto imp = c->Post("/v1/import?user=bob", {{"Idempotency-Key", "import-7"}}, file, "application/x-ndjson");
    ASSERT_TRUE(imp);
    EXPECT_EQ(imp->status, status) << imp->body;
  }
  EXPECT_EQ(Body(Get(server_->admin_key(), "/v1/stats?user=bob"))["turns_admitted"], 2);

  // A memory the engine would refuse, last in the file, is found before
  // anything is written: 400 naming its line, and nothing is stored.
  const std::string bad =
      "{\"type\": \"turn\", \"user\": \"zoe\", \"assistant\": \"assistant\", \"user_text\": \"I keep bees\", "
      "\"assistant_text\": \"Nice\"}\n"
      "{\"type\": \"fact\", \"kind\": \"memory\", \"user_id\": \"zoe\", \"text\": \"Zoe keeps bees\"}\n"
      "{\"type\": \"fact\", \"kind\": \"memory\", \"user_id\": \"zoe\", \"text\": \"Zoe likes figs\", "
      "\"metadata\": {\"run_id\": \"r9\"}}\n";
  auto refused = c->Post("/v1/import?user=zoe", bad, "application/x-ndjson");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400) << refused->body;
  EXPECT_NE(refused->body.find("line 3"), std::string::npos) << refused->body;
  EXPECT_EQ(Body(Get(server_->admin_key(), "/v1/stats?user=zoe")).value("turns_admitted", -1), 0);
  EXPECT_TRUE(Body(Get(server_->admin_key(), "/v1/memories?user=zoe")).value("results", json::array()).empty());
}

TEST_F(ServerTest, NoAuthOnlyOnLoopback) {
  auto refused = et::RunProcess({ENGRAM_BINARY, "--home", dir_.path(), "serve", "--no-auth", "--listen", "0.0.0.0:0"},
                                "", et::kNoModelEnv, std::chrono::seconds(30));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE((refused.out + refused.err).find("loopback"), std::string::npos);
  Start({"--no-auth", "--access-log"});
  auto r = Post("", "/v1/turns", {{"user", "alice"}, {"user_text", "hi"}, {"assistant_text", "hello"}});
  EXPECT_EQ(r->status, 201) << r->body;
  // The access log line (written right after the response): method, path, status, time, request id.
  const std::string line = "engram serve: POST /v1/turns 201 ";
  for (int i = 0; i < 100 && server_->output().find(line) == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(server_->output().find(line), std::string::npos) << server_->output();
  EXPECT_NE(server_->output().find(r->get_header_value("X-Request-Id")), std::string::npos);
  // Without a model, chat is 409 whether streamed or not (before any stream starts).
  for (bool stream : {false, true}) {
    auto chat = Post("", "/v1/chat", {{"user", "alice"}, {"message", "hi?"}, {"stream", stream}});
    EXPECT_EQ(chat->status, 409) << chat->body;
    EXPECT_EQ(Code(chat), "failed_precondition");
  }
  EXPECT_EQ(Body(Get("", "/v1/stats"))["turns_admitted"], 1);  // nothing admitted by the failed chats
}

TEST_F(ServerTest, NoAuthRefusesWebPagesOfOtherSitesAndForeignHostNames) {
  Start({"--no-auth"});
  const std::string body = json{{"user", "alice"}, {"user_text", "Forget everything"}, {"assistant_text", "ok"}}.dump();
  // A page of another site posting a text body (no preflight), and a page
  // whose name points at 127.0.0.1 (DNS rebinding) reading the memory.
  auto posted = server_->Client()->Post("/v1/turns", {{"Origin", "https://evil.example"}}, body, "text/plain");
  ASSERT_TRUE(posted);
  EXPECT_EQ(posted->status, 403) << posted->body;
  EXPECT_EQ(Code(posted), "cross_origin");
  auto rebound = server_->Client()->Get("/v1/turns?user=alice", {{"Host", "evil.example:8420"}});
  ASSERT_TRUE(rebound);
  EXPECT_EQ(rebound->status, 403) << rebound->body;
  EXPECT_EQ(Code(rebound), "forbidden_host");
  for (const char* host : {"127.0.0.1.evil.example", "localhost.evil.example:8420", "[::2]:8420"}) {
    auto r = server_->Client()->Get("/v1/stats", {{"Host", host}});
    EXPECT_EQ(r->status, 403) << host;
  }
  for (const char* origin : {"null", "http://localhost.evil.example"}) {
    auto r = server_->Client()->Get("/v1/stats", {{"Origin", origin}});
    EXPECT_EQ(r->status, 403) << origin;
  }
  auto mcp = server_->Client()->Post("/mcp?user=alice", {{"Origin", "https://evil.example"}},
                                     R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", "application/json");
  EXPECT_EQ(mcp->status, 403) << mcp->body;
  EXPECT_EQ(Body(Get("", "/v1/stats"))["turns_admitted"], 0);  // nothing admitted
  // The server's own pages (the inspector), loopback names and programs
  // that send no Origin are served.
  const std::string own = "http://127.0.0.1:" + std::to_string(server_->port());
  auto same = server_->Client()->Post("/v1/turns", {{"Origin", own}, {"Host", "127.0.0.1:" + std::to_string(server_->port())}},
                                      body, "application/json");
  EXPECT_EQ(same->status, 201) << same->body;
  for (const std::string host : {"localhost", "LOCALHOST:1", "127.0.0.2:80", "[::1]:8420"}) {
    auto r = server_->Client()->Get("/v1/stats", {{"Host", host}});
    EXPECT_EQ(r->status, 200) << host << " " << r->body;
  }
  EXPECT_EQ(Post("", "/v1/turns", {{"user", "alice"}, {"user_text", "hi"}, {"assistant_text", "hello"}})->status, 201);
  EXPECT_EQ(Body(Get("", "/v1/stats"))["turns_admitted"], 2);
}

TEST_F(ServerTest, WithKeysAnOriginChangesNothing) {
  Start();
  // The start says where each kind of client connects.
  const std::string base = "http://127.0.0.1:" + std::to_string(server_->port());
  EXPECT_NE(server_->output().find("MCP " + base + "/mcp?user=USER"), std::string::npos) << server_->output();
  EXPECT_NE(server_->output().find("Mem0 clients " + base + "/mem0"), std::string::npos) << server_->output();
  EXPECT_NE(server_->output().find("(the memory proxy needs a model endpoint)"), std::string::npos);
  auto r = server_->Client(server_->admin_key())->Get("/v1/stats", {{"Origin", "https://app.example"}});
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST_F(ServerTest, ChatAnswersAndStreamsThroughTheModel) {
  et::FakeOpenAiServer model;
  model.SetChatText("You live in Lisbon.");
  std::vector<std::string> env = et::kNoModelEnv;
  env.insert(env.end(), {"ENGRAM_LLM_BASE_URL=" + model.base_url(), "ENGRAM_LLM_MODEL=fake-model",
                         "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"});
  et::WriteFile(dir_.File("engram.toml"), "[llm]\nmax_retries = 1\ntimeout_s = 5\n");  // quick failures
  Start({}, env);
  const std::string k = server_->admin_key();
  AdmitAlice(k, "5555");
  auto r = Post(k, "/v1/chat", {{"user", "alice"}, {"message", "Where do I live?"}});
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["answer"], "You live in Lisbon.");
  EXPECT_GT(Body(r)["turn_id"].get<long long>(), 0);

  model.QueueChat(et::FakeOpenAiServer::ChatStream({"You ", "live ", "in Lisbon."}));
  auto s = Post(k, "/v1/chat", {{"user", "alice"}, {"message", "Where again?"}, {"stream", true}, {"admit", false}});
  ASSERT_EQ(s->status, 200);
  EXPECT_EQ(s->get_header_value("Content-Type"), "text/event-stream");
  EXPECT_NE(s->body.find("event: delta\ndata: {\"text\":\"You \"}"), std::string::npos) << s->body;
  EXPECT_NE(s->body.find("event: done"), std::string::npos) << s->body;

  for (int i = 0; i < 8; ++i) model.QueueChat(et::FakeOpenAiServer::Error(500));
  auto failed = Post(k, "/v1/chat", {{"user", "alice"}, {"message", "And now?"}});
  EXPECT_EQ(failed->status, 502);
  EXPECT_EQ(Code(failed), "model_unavailable");
  // A request is counted right after its response is written: poll briefly.
  const std::string counted = "engram_http_requests_total{route=\"/v1/chat\",method=\"POST\",status=\"502\"} 1";
  auto metrics = Get(k, "/metrics");
  for (int i = 0; i < 50 && metrics && metrics->body.find(counted) == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    metrics = Get(k, "/metrics");
  }
  ASSERT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->body.find("engram_model_calls_total{kind=\"chat\"}"), std::string::npos);
  EXPECT_NE(metrics->body.find(counted), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("engram_memory_items{tier=\"stm\"}"), std::string::npos);
  EXPECT_NE(metrics->body.find("engram_http_request_duration_seconds_bucket{route=\"/v1/chat\""), std::string::npos);
}

// The memory proxy's stream ends once its exchange is admitted: a client
// that has read the stream's end finds the exchange in the user's turns,
// even from an endpoint that keeps its connection open a while after it.
// The end is "data: [DONE]", "data:[DONE]" (the space is optional in an
// SSE field) or, from a Responses endpoint that sends no "event:" lines,
// the data of type response.completed.
TEST_F(ServerTest, AProxiedStreamEndsAfterItsExchangeIsAdmitted) {
  et::FakeOpenAiServer model;
  std::vector<std::string> env = et::kNoModelEnv;
  env.insert(env.end(), {"ENGRAM_LLM_BASE_URL=" + model.base_url(), "ENGRAM_LLM_MODEL=fake-model",
                         "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"});
  Start({}, env);
  const std::string k = server_->admin_key();
  auto turns = [&] {
    auto r = Get(k, "/v1/turns?user=alice&limit=100");
    return r && r->status == 200 ? Body(r)["turns"].size() : std::size_t{0};
  };
  struct Case {
    std::string path;
    et::FakeReply reply;
    std::string end;  // what the client reads last
  };
  auto chat = et::FakeOpenAiServer::ChatStream({"You ", "live ", "in Lisbon."});
  auto chat_unspaced = chat;
  chat_unspaced.sse_prefix = "data:";
  std::vector<Case> cases = {
      {"/v1/chat/completions", chat, "data: [DONE]\n\n"},
      {"/v1/chat/completions", chat_unspaced, "data:[DONE]\n\n"},
      {"/v1/responses", et::FakeOpenAiServer::ResponsesStream({"You ", "live ", "in Lisbon."}),
       "}\n\n"}};
  for (auto& c : cases) {
    SCOPED_TRACE(c.path + " " + c.reply.sse_prefix);
    const std::size_t before = turns();
    c.reply.linger_ms = 1500;
    model.QueueChat(c.reply);
    json body = {{"model", "fake-model"}, {"stream", true}, {"user", "alice"}};
    if (c.path == "/v1/responses") {
      body["input"] = "Where do I live?";
    } else {
      body["messages"] = {{{"role", "user"}, {"content", "Where do I live?"}}};
    }
    const std::string closing = c.path == "/v1/responses" ? "\"response.completed\"" : "[DONE]";
    std::string received;
    long seen_at_end = -1;  // the user's turns when the stream's end arrived
    auto client = server_->Client(k);
    httplib::Request req;
    req.method = "POST";
    req.path = c.path;
    req.body = body.dump();
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
      received.append(data, n);
      if (seen_at_end < 0 && received.find(closing) != std::string::npos) {
        seen_at_end = static_cast<long>(turns());
      }
      return true;
    };
    auto r = client->send(req);
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200);
    EXPECT_NE(received.find("in Lisbon."), std::string::npos) << received;
    ASSERT_GE(seen_at_end, 0) << received;
    EXPECT_EQ(seen_at_end, static_cast<long>(before + 1)) << received;
    EXPECT_EQ(received.find(closing), received.rfind(closing)) << received;  // once
    EXPECT_TRUE(received.ends_with(c.end)) << received;                      // last
    const std::size_t last_line = received.rfind('\n', received.size() - 3);
    EXPECT_NE(received.find(closing, last_line == std::string::npos ? 0 : last_line),
              std::string::npos)
        << received;
  }
}

}  // namespace
