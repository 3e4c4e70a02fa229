// Abuse limits of `engram serve` on the real binary: per-tenant quotas (429
// with Retry-After, nothing half-written, nothing stored dropped, retries of
// accepted requests still answered), key expiry and last use (`keys create
// --expires-in`, `keys list`), and what /metrics shows to a tenant's admin
// versus the operator.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "testing/server_process.hpp"
#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"

namespace et = engram::testing;
using nlohmann::json;

namespace {

class ServerLimits : public ::testing::Test {
 protected:
  void Start(const std::vector<std::string>& extra) {
    server_ = std::make_unique<et::ServerProcess>(ENGRAM_BINARY, dir_.path(), extra, et::kNoModelEnv);
    ASSERT_TRUE(server_->started()) << server_->output();
  }
  // `timeout`: a command that should refuse at once (a server that started
  // instead is killed then, and the test fails on its exit code).
  et::ProcessResult Cli(const std::string& tenant, std::vector<std::string> args,
                        std::chrono::milliseconds timeout = std::chrono::seconds(120)) {
    std::vector<std::string> argv = {ENGRAM_BINARY, "--home", dir_.path(), "--tenant", tenant};
    argv.insert(argv.end(), args.begin(), args.end());
    return et::RunProcess(argv, "", et::kNoModelEnv, timeout);
  }
  std::string CreateKey(const std::string& tenant, const std::string& role, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"keys", "create", "--role", role, "--json"};
    args.insert(args.end(), more.begin(), more.end());
    auto r = Cli(tenant, args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    return j.is_object() ? j.value("key", "") : "";
  }
  static json Body(const httplib::Result& r) { return r ? json::parse(r->body, nullptr, false) : json(); }
  static std::string Code(const httplib::Result& r) {
    json j = Body(r);
    return j.is_object() && j.contains("error") ? j["error"].value("code", "") : "";
  }
  httplib::Result Post(const std::string& key, const std::string& path, const json& body,
                       const std::string& idempotency_key = "") {
    httplib::Headers h;
    if (!idempotency_key.empty()) h.emplace("Idempotency-Key", idempotency_key);
    return server_->Client(key)->Post(path.c_str(), h, body.dump(), "application/json");
  }
  httplib::Result Get(const std::string& key, const std::string& path) {
    return server_->Client(key)->Get(path.c_str());
  }
  static json Turns(int n, const std::string& word, std::size_t text_bytes = 0) {
    json turns = json::array();
    for (int i = 0; i < n; ++i) {
      std::string text = "Note " + std::to_string(i) + " about " + word;
      if (text.size() < text_bytes) text.append(text_bytes - text.size(), 'x');
      turns.push_back({{"user_text", text}, {"assistant_text", "ok"}});
    }
    return turns;
  }
  std::int64_t TurnsAdmitted(const std::string& key, const std::string& user) {
    return Body(Get(key, "/v1/stats?user=" + user)).value("turns_admitted", std::int64_t{-1});
  }

  et::TempDir dir_;
  std::unique_ptr<et::ServerProcess> server_;
};

TEST_F(ServerLimits, ATenantAtItsTurnQuotaIsRefusedWholeAndKeepsWhatItHas) {
  Start({"--quota-turns", "5", "--tenant-quota", "big:turns=0"});
  const std::string acme = CreateKey("acme", "write"), big = CreateKey("big", "write");

  auto first = Post(acme, "/v1/turns", {{"user", "ann"}, {"turns", Turns(3, "kayaks")}}, "batch-1");
  ASSERT_EQ(first->status, 201) << first->body;
  // Four more would make seven: refused whole, nothing written.
  auto over = Post(acme, "/v1/turns", {{"user", "ann"}, {"turns", Turns(4, "canoes")}});
  ASSERT_EQ(over->status, 429) << over->body;
  EXPECT_EQ(Code(over), "quota_exceeded");
  EXPECT_EQ(over->get_header_value("Retry-After"), "60");
  EXPECT_NE(Body(over)["error"]["message"].get<std::string>().find("turns"), std::string::npos) << over->body;
  EXPECT_EQ(TurnsAdmitted(acme, "ann"), 3);
  // Two fit exactly.
  ASSERT_EQ(Post(acme, "/v1/turns", {{"user", "bob"}, {"turns", Turns(2, "rafts")}})->status, 201);
  // At the quota: a retry of an accepted request still gets its first answer;
  // a new request (keyed or not) is refused.
  auto retry = Post(acme, "/v1/turns", {{"user", "ann"}, {"turns", Turns(3, "kayaks")}}, "batch-1");
  ASSERT_EQ(retry->status, 200) << retry->body;
  EXPECT_TRUE(Body(retry)["replayed"].get<bool>());
  auto keyed = Post(acme, "/v1/turns", {{"user", "ann"}, {"turns", Turns(1, "oars")}}, "batch-2");
  EXPECT_EQ(keyed->status, 429) << keyed->body;
  EXPECT_EQ(Code(keyed), "quota_exceeded");
  auto single = Post(acme, "/v1/turns", {{"user", "cy"}, {"user_text", "hello"}, {"assistant_text", "hi"}});
  EXPECT_EQ(single->status, 429);
  // An import over the quota: refused before anything is written.
  auto import = server_->Client(acme)->Post("/v1/import?user=dee",
                                            "{\"user\":\"a\",\"assistant\":\"b\"}\n", "application/x-ndjson");
  EXPECT_EQ(import->status, 429) << import->body;
  EXPECT_EQ(TurnsAdmitted(acme, "dee"), 0);
  EXPECT_EQ(TurnsAdmitted(acme, "ann"), 3);
  EXPECT_EQ(TurnsAdmitted(acme, "bob"), 2);
  // Reads go on.
  EXPECT_EQ(Post(acme, "/v1/retrieve", {{"user", "ann"}, {"query", "kayaks"}})->status, 200);
  // Another tenant's override (0 = no limit) is its own.
  ASSERT_EQ(Post(big, "/v1/turns", {{"user", "ann"}, {"turns", Turns(12, "barges")}})->status, 201);

  // The operator sees the refusals and the usage; the tenant's admin only its own.
  const std::string op = server_->admin_key();
  auto m = Get(op, "/metrics");
  ASSERT_EQ(m->status, 200);
  EXPECT_NE(m->body.find("engram_quota_limit{tenant=\"acme\",quota=\"turns\"} 5"), std::string::npos) << m->body;
  EXPECT_NE(m->body.find("engram_quota_usage{tenant=\"acme\",quota=\"turns\"} 5"), std::string::npos) << m->body;
  EXPECT_NE(m->body.find("engram_quota_exceeded_total{tenant=\"acme\",quota=\"turns\"} 4"), std::string::npos)
      << m->body;
}

TEST_F(ServerLimits, MemoryAndByteQuotas) {
  Start({"--quota-memories", "2", "--tenant-quota", "small:bytes=1K"});
  const std::string acme = CreateKey("acme", "write"), small = CreateKey("small", "write");
  for (const char* text : {"Ann keeps bees", "Ann rows on Sundays"}) {
    auto r = Post(acme, "/v1/memories", {{"user", "ann"}, {"text", text}, {"infer", false}});
    ASSERT_EQ(r->status, 201) << r->body;
  }
  auto over = Post(acme, "/v1/memories", {{"user", "ann"}, {"text", "Ann likes figs"}, {"infer", false}});
  ASSERT_EQ(over->status, 429) << over->body;
  EXPECT_EQ(Code(over), "quota_exceeded");
  auto mem0 = server_->Client()->Post("/mem0/v3/memories/add/",
                                      httplib::Headers{{"Authorization", "Token " + acme}},
                                      json({{"user_id", "ann"}, {"messages", {{{"role", "user"}, {"content", "x"}}}},
                                            {"infer", false}})
                                          .dump(),
                                      "application/json");
  EXPECT_EQ(mem0->status, 429) << mem0->body;
  auto list = Get(acme, "/v1/memories?user=ann");
  ASSERT_EQ(list->status, 200);
  EXPECT_EQ(Body(list)["results"].size(), 2u) << "nothing stored was dropped, nothing new added";

  // 1 KiB of text: a 600-byte turn fits, a second does not.
  ASSERT_EQ(Post(small, "/v1/turns", {{"user", "u"}, {"turns", Turns(1, "a", 600)}})->status, 201);
  auto big = Post(small, "/v1/turns", {{"user", "u"}, {"turns", Turns(1, "b", 600)}});
  EXPECT_EQ(big->status, 429) << big->body;
  EXPECT_NE(Body(big)["error"]["message"].get<std::string>().find("1 KiB"), std::string::npos) << big->body;
}

// Requests in flight at once cannot pass a quota together: the check and the
// claim are one step, so exactly the limit is stored and the rest refused.
TEST_F(ServerLimits, ParallelWritesStopExactlyAtTheQuota) {
  Start({"--quota-memories", "10", "--quota-turns", "12", "--threads", "16"});
  const std::string acme = CreateKey("acme", "write");
  auto fire = [&](int n, const std::function<httplib::Result(int)>& send) {
    std::vector<int> statuses(n, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        auto r = send(i);
        statuses[i] = r ? r->status : 0;
      });
    }
    for (auto& t : threads) t.join();
    std::map<int, int> by_status;
    for (int s : statuses) ++by_status[s];
    return by_status;
  };
  auto memories = fire(40, [&](int i) {
    return Post(acme, "/v1/memories",
                {{"user", "ann"}, {"text", "Ann's locker number " + std::to_string(i) + " is blue"}, {"infer", false}});
  });
  EXPECT_EQ(memories[201], 10) << "created";
  EXPECT_EQ(memories[429], 30) << "refused";
  auto list = Get(acme, "/v1/memories?user=ann&limit=100");
  ASSERT_EQ(list->status, 200);
  EXPECT_EQ(Body(list)["results"].size(), 10u);

  auto turns = fire(30, [&](int i) {
    return Post(acme, "/v1/turns", {{"user", "bo"}, {"turns", Turns(1, "kites " + std::to_string(i))}});
  });
  EXPECT_EQ(turns[201], 12) << "admitted";
  EXPECT_EQ(turns[429], 18) << "refused";
  EXPECT_EQ(TurnsAdmitted(acme, "bo"), 12);
}

// A write that fails lets its claim go: it does not keep the next one out.
TEST_F(ServerLimits, AFailedWriteLetsItsQuotaClaimGo) {
  Start({"--quota-bytes", "1K"});
  const std::string acme = CreateKey("acme", "write");
  const std::string text(900, 'k');
  for (int i = 0; i < 3; ++i) {
    auto missing = server_->Client(acme)->Patch("/v1/memories/00000000-0000-4000-8000-000000000000",
                                                json({{"user", "ann"}, {"text", text}}).dump(), "application/json");
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->status, 404) << missing->body;
  }
  auto fits = Post(acme, "/v1/turns", {{"user", "ann"}, {"turns", Turns(1, "a", 900)}});
  ASSERT_TRUE(fits);
  EXPECT_EQ(fits->status, 201) << fits->body;
  auto over = Post(acme, "/v1/turns", {{"user", "ann"}, {"turns", Turns(1, "b", 200)}});
  EXPECT_EQ(over->status, 429) << over->body;
}

TEST_F(ServerLimits, BadQuotaFlagsAreUsageErrors) {
  for (std::vector<std::string> flags : {std::vector<std::string>{"--quota-turns", "many"},
                                         std::vector<std::string>{"--quota-bytes", "5Q"},
                                         std::vector<std::string>{"--tenant-quota", "acme"},
                                         std::vector<std::string>{"--tenant-quota", "acme:rows=5"}}) {
    std::vector<std::string> args = {"serve", "--listen", "127.0.0.1:0"};
    args.insert(args.end(), flags.begin(), flags.end());
    auto r = Cli("default", args, std::chrono::seconds(20));
    EXPECT_EQ(r.exit_code, 2) << flags[0] << " " << flags[1] << ": " << r.err << r.out;
    EXPECT_NE((r.err + r.out).find(flags[0]), std::string::npos) << r.err << r.out;
  }
}

TEST_F(ServerLimits, KeysExpireAndListShowsTheirLastUse) {
  Start({});
  const std::string soon = CreateKey("acme", "read", {"--expires-in", "2s", "--name", "soon"});
  const std::string idle = CreateKey("acme", "read", {"--name", "idle"});
  ASSERT_FALSE(soon.empty());
  EXPECT_EQ(Get(soon, "/v1/stats")->status, 200);
  auto listed = Cli("acme", {"keys", "list", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  json keys = json::parse(listed.out)["keys"];
  ASSERT_EQ(keys.size(), 2u);
  for (const auto& k : keys) {
    if (k["name"] == "soon") {
      EXPECT_TRUE(k["expires_at"].is_string()) << k;
      EXPECT_TRUE(k["last_used_at"].is_string()) << k;
    } else {
      EXPECT_TRUE(k["expires_at"].is_null()) << k;
      EXPECT_TRUE(k["last_used_at"].is_null()) << k;
    }
  }
  auto text = Cli("acme", {"keys", "list"});
  EXPECT_NE(text.out.find("last used never"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("expires "), std::string::npos) << text.out;
  // Once expired: 401, without a revocation.
  int status = 0;
  std::string body;
  for (int i = 0; i < 100 && status != 401; ++i) {
    auto r = Get(soon, "/v1/stats");
    status = r ? r->status : 0;
    body = r ? r->body : "";
    if (status != 401) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(status, 401);
  EXPECT_NE(body.find("expired"), std::string::npos) << body;
  EXPECT_EQ(Get(idle, "/v1/stats")->status, 200);
  EXPECT_NE(Cli("acme", {"keys", "list"}).out.find("expired "), std::string::npos);

  for (std::vector<std::string> bad : {std::vector<std::string>{"--expires-in", "0d"},
                                       std::vector<std::string>{"--expires-in", "tomorrow"},
                                       std::vector<std::string>{"--expires-at", "2001-01-01"}}) {
    std::vector<std::string> args = {"keys", "create", "--role", "read"};
    args.insert(args.end(), bad.begin(), bad.end());
    auto c = Cli("acme", args);
    EXPECT_EQ(c.exit_code, 2) << bad[1] << ": " << c.err;
    EXPECT_NE(c.err.find(bad[0]), std::string::npos) << c.err;
  }
}

TEST_F(ServerLimits, ATenantsAdminSeesOnlyItsTenantInMetrics) {
  Start({});
  const std::string acme = CreateKey("acme", "admin"), globex = CreateKey("globex-secret-name", "write");
  ASSERT_EQ(Post(acme, "/v1/turns", {{"user", "ann"}, {"turns", Turns(2, "figs")}})->status, 201);
  ASSERT_EQ(Post(globex, "/v1/turns", {{"user", "zed"}, {"turns", Turns(7, "dates")}})->status, 201);

  auto mine = Get(acme, "/metrics");
  ASSERT_EQ(mine->status, 200) << mine->body;
  EXPECT_NE(mine->body.find("engram_memory_items{tenant=\"acme\",tier=\"stm\"} 2"), std::string::npos)
      << mine->body;
  EXPECT_NE(mine->body.find("engram_turns_admitted{tenant=\"acme\"} 2"), std::string::npos) << mine->body;
  EXPECT_NE(mine->body.find("engram_tenant_requests_total{tenant=\"acme\",route=\"/v1/turns\",method=\"POST\","
                            "status=\"201\"} 1"),
            std::string::npos)
      << mine->body;
  EXPECT_EQ(mine->body.find("globex"), std::string::npos) << "another tenant's name";
  EXPECT_EQ(mine->body.find("engram_http_requests_total"), std::string::npos) << "store-wide series";
  EXPECT_EQ(mine->body.find("engram_model_calls_total"), std::string::npos) << "process-wide series";
  EXPECT_EQ(mine->body.find("snapshot_cache"), std::string::npos) << "process-wide series";

  auto all = Get(server_->admin_key(), "/metrics");
  ASSERT_EQ(all->status, 200);
  EXPECT_NE(all->body.find("engram_memory_items{tier=\"stm\"} 9"), std::string::npos) << all->body;
  EXPECT_NE(all->body.find("tenant=\"globex-secret-name\""), std::string::npos);
  EXPECT_NE(all->body.find("engram_http_requests_total"), std::string::npos);
  const std::string budget = "\nengram_snapshot_cache_budget_bytes ";
  const auto at = all->body.find(budget);
  ASSERT_NE(at, std::string::npos) << all->body;
  EXPECT_EQ(std::stod(all->body.substr(at + budget.size())), 1024.0 * 1024 * 1024);  // the default, 1 GiB
  EXPECT_NE(all->body.find("engram_snapshot_cache_evictions_total 0\n"), std::string::npos) << all->body;
  EXPECT_NE(all->body.find("\nengram_fact_snapshot_cache_scopes "), std::string::npos) << all->body;
  EXPECT_NE(all->body.find("engram_fact_snapshot_cache_evictions_total 0\n"), std::string::npos) << all->body;
  EXPECT_EQ(Get(globex, "/metrics")->status, 403) << "a write key reads no metrics";
}

}  // namespace
