// The inspector's side of `engram serve` on the real binary: the embedded
// page and its headers, and the /v1 routes it reads (whoami, users, segments,
// receipts, activity, the recent-requests log, the canary, retrieval with
// explanations): tenant-scoped and role-checked like every /v1 route.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "testing/server_process.hpp"
#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"

namespace et = engram::testing;
using nlohmann::json;

namespace {

class ServerInspectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<et::ServerProcess>(ENGRAM_BINARY, dir_.path(), std::vector<std::string>{},
                                                  et::kNoModelEnv);
    ASSERT_TRUE(server_->started()) << server_->output();
    admin_ = server_->admin_key();
  }
  std::string CreateKey(const std::string& tenant, const std::string& role, const std::string& users = "") {
    std::vector<std::string> args = {ENGRAM_BINARY, "--home", dir_.path(), "--tenant", tenant, "keys", "create",
                                     "--role", role, "--json"};
    if (!users.empty()) args.insert(args.end(), {"--users", users});
    auto r = et::RunProcess(args, "", et::kNoModelEnv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false).value("key", "");
  }
  json Get(const std::string& key, const std::string& path, int want = 200) {
    auto r = server_->Client(key)->Get(path.c_str());
    EXPECT_TRUE(r) << path;
    if (!r) return json();
    EXPECT_EQ(r->status, want) << path << ": " << r->body;
    return json::parse(r->body, nullptr, false);
  }
  json Post(const std::string& key, const std::string& path, const std::string& body, int want = 200,
            const std::string& type = "application/json") {
    auto r = server_->Client(key)->Post(path.c_str(), body, type);
    EXPECT_TRUE(r) << path;
    if (!r) return json();
    EXPECT_EQ(r->status, want) << path << ": " << r->body;
    return json::parse(r->body, nullptr, false);
  }
  // The sample dialogue (samples/dialogue.jsonl) for `user`, maintained.
  void ImportSample(const std::string& key, const std::string& user) {
    std::ifstream in(std::string(ENGRAM_SOURCE_DIR) + "/samples/dialogue.jsonl");
    std::stringstream text;
    text << in.rdbuf();
    Post(key, "/v1/import?user=" + user, text.str(), 201, "application/x-ndjson");
    Post(key, "/v1/maintain", json{{"user", user}}.dump());
  }

  et::TempDir dir_;
  std::unique_ptr<et::ServerProcess> server_;
  std::string admin_;
};

TEST_F(ServerInspectTest, ThePageIsEmbeddedAndServedWithStrictHeaders) {
  auto c = server_->Client();
  auto root = c->Get("/");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->status, 302);
  EXPECT_EQ(root->get_header_value("Location"), "/ui/");
  auto page = c->Get("/ui/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  const std::string csp = page->get_header_value("Content-Security-Policy");
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
  EXPECT_EQ(page->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_NE(page->body.find("app.js"), std::string::npos);
  auto js = c->Get("/ui/app.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  httplib::Headers h = {{"If-None-Match", js->get_header_value("ETag")}};
  auto again = c->Get("/ui/app.js", h);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304);
  auto missing = c->Get("/ui/nope.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(json::parse(missing->body)["error"]["code"], "not_found");
  // Only the embedded files: nothing of the disk, whatever the path.
  for (const char* path : {"/ui/..%2fCMakeLists.txt", "/ui/../CMakeLists.txt", "/ui/%2e%2e/README.md"}) {
    auto outside = c->Get(path);
    ASSERT_TRUE(outside) << path;
    EXPECT_EQ(outside->status, 404) << path;
    EXPECT_EQ(outside->body.find("cmake_minimum_required"), std::string::npos) << path;
  }
}

TEST_F(ServerInspectTest, WhoAmIAndUsersAreTheKeysOwn) {
  ImportSample(admin_, "priya");
  Post(admin_, "/v1/turns", R"({"user": "bob", "user_text": "Hi", "assistant_text": "Hello"})", 201);
  Post(admin_, "/v1/turns", R"({"user": "bobby", "user_text": "Hi", "assistant_text": "Hello"})", 201);
  const std::string other = CreateKey("other", "admin");
  Post(other, "/v1/turns", R"({"user": "mallory", "user_text": "Hi", "assistant_text": "Hello"})", 201);
  const std::string limited = CreateKey("default", "read", "bob");

  json me = Get(limited, "/v1/whoami");
  EXPECT_EQ(me["role"], "read");
  EXPECT_EQ(me["tenant"], "default");
  EXPECT_EQ(me["users"], json::array({"bob"}));
  EXPECT_EQ(Get(admin_, "/v1/whoami")["users"], nullptr);

  json all = Get(admin_, "/v1/users?limit=2");
  ASSERT_EQ(all["users"].size(), 2u);
  EXPECT_EQ(all["users"][0]["user"], "bob");
  EXPECT_EQ(all["users"][1]["user"], "bobby");
  EXPECT_EQ(all["matched"], 3);
  ASSERT_EQ(all["next_cursor"], "bobby");
  json rest = Get(admin_, "/v1/users?limit=2&cursor=bobby");
  ASSERT_EQ(rest["users"].size(), 1u);
  const json& priya = rest["users"][0];
  EXPECT_EQ(priya["user"], "priya");
  EXPECT_EQ(priya["turns_admitted"], 32);
  EXPECT_GT(priya["mtm_pages"].get<int>(), 0);
  EXPECT_EQ(priya["stm_turns"].get<int>() + priya["mtm_pages"].get<int>() + priya["archived_pages"].get<int>(), 32);
  EXPECT_EQ(rest["next_cursor"], nullptr);
  EXPECT_EQ(Get(admin_, "/v1/users?q=BOB")["matched"], 2);
  // Another tenant's users and users outside a limited key are never listed.
  json mine = Get(limited, "/v1/users");
  ASSERT_EQ(mine["users"].size(), 1u);
  EXPECT_EQ(mine["users"][0]["user"], "bob");
  EXPECT_EQ(Get(other, "/v1/users")["users"][0]["user"], "mallory");
  EXPECT_EQ(Get(admin_, "/v1/users?limit=0", 400)["error"]["field"], "limit");

  // An agent's own memories are no user's, and a user's own memories open no
  // dialogue: "-" (the id of no user or agent in their scopes) is never listed,
  // and no caller may name it.
  Post(admin_, "/v1/memories", R"({"agent": "bot", "text": "Deploys run on Mondays", "infer": false})", 201);
  Post(admin_, "/v1/memories", R"({"user": "bob", "text": "Bob drinks tea", "infer": false})", 201);
  json listed = Get(admin_, "/v1/users");
  EXPECT_EQ(listed["matched"], 3);
  for (const auto& u : listed["users"]) {
    EXPECT_NE(u["user"], "-");
    for (const auto& a : u["assistants"]) EXPECT_NE(a, "-");
  }
  EXPECT_EQ(Get(admin_, "/v1/segments?user=bob&assistant=-", 400)["error"]["field"], "assistant");
  EXPECT_EQ(Post(admin_, "/v1/turns", R"({"user": "-", "user_text": "Hi"})", 400)["error"]["field"], "user");
}

TEST_F(ServerInspectTest, SegmentsReceiptsAndActivityDescribeTheTiers) {
  ImportSample(admin_, "priya");
  json s = Get(admin_, "/v1/segments?user=priya");
  ASSERT_FALSE(s["segments"].empty()) << s.dump();
  std::size_t paged = 0;
  for (const auto& g : s["segments"]) {
    EXPECT_FALSE(g["summary"].get<std::string>().empty());
    EXPECT_NEAR(g["heat"].get<double>(),
                g["visits"].get<double>() + g["interaction"].get<double>() + g["recency"].get<double>(), 1e-9);
    EXPECT_EQ(g["page_ids"].size(), g["pages"].get<std::size_t>());
    paged += g["page_ids"].size();
  }
  EXPECT_EQ(paged, s["pages"].size());
  // The chain: each page's next page names it as its previous one.
  std::map<long long, json> pages;
  for (const auto& p : s["pages"]) pages[p["id"].get<long long>()] = p;
  for (const auto& [id, p] : pages) {
    if (!p["next_page"].is_null()) {
      EXPECT_EQ(pages[p["next_page"].get<long long>()]["prev_page"], id);
    }
  }
  EXPECT_EQ(Get(admin_, "/v1/segments?user=nobody")["segments"], json::array());
  const std::string limited = CreateKey("default", "read", "bob");
  Get(limited, "/v1/segments?user=priya", 403);

  // The receipts of the first paged turn: admitted, then promoted.
  const long long turn = s["pages"][0]["turn_id"].get<long long>();
  json r = Get(admin_, "/v1/receipts?user=priya&kind=turn&id=" + std::to_string(turn));
  ASSERT_GE(r["receipts"].size(), 2u) << r.dump();
  EXPECT_EQ(r["receipts"][0]["from_tier"], "input");
  EXPECT_EQ(r["receipts"][0]["to_tier"], "stm");
  EXPECT_EQ(r["receipts"][1]["to_tier"], "mtm");
  for (const auto& x : r["receipts"]) EXPECT_EQ(x["memory_id"], turn);
  EXPECT_EQ(Get(admin_, "/v1/receipts?user=priya&id=3", 400)["error"]["field"], "kind");
  EXPECT_EQ(Get(admin_, "/v1/receipts?user=priya&kind=turn&id=x", 400)["error"]["field"], "id");

  json a = Get(admin_, "/v1/activity?user=priya");
  ASSERT_FALSE(a["days"].empty());
  long long admitted = 0, promoted = 0;
  for (const auto& d : a["days"]) admitted += d["admitted"].get<long long>(), promoted += d["promoted"].get<long long>();
  EXPECT_EQ(admitted, 32);
  EXPECT_EQ(promoted, static_cast<long long>(s["pages"].size()));
  EXPECT_EQ(a["days"].back()["stm"], 32 - promoted);
  Get(limited, "/v1/activity", 403);  // a limited key names one of its users
}

TEST_F(ServerInspectTest, AMemoryOfTheFactApiHasTheReceiptsOfEveryVersion) {
  json added = Post(admin_, "/v1/memories",
                    R"({"user": "priya", "text": "Prefers window seats on long flights", "infer": false})", 201);
  ASSERT_FALSE(added["results"].empty()) << added.dump();
  const std::string id = added["results"][0]["id"];
  auto c = server_->Client(admin_);
  auto patched = c->Patch(("/v1/memories/" + id).c_str(),
                          R"({"user": "priya", "text": "Prefers aisle seats on long flights"})", "application/json");
  ASSERT_TRUE(patched);
  ASSERT_EQ(patched->status, 200) << patched->body;

  json r = Get(admin_, "/v1/memories/" + id + "/receipts?user=priya");
  EXPECT_EQ(r["id"], id);
  ASSERT_EQ(r["receipts"].size(), 2u) << r.dump();
  EXPECT_EQ(r["receipts"][0]["version"], 1);
  EXPECT_EQ(r["receipts"][1]["version"], 2);
  for (const auto& x : r["receipts"]) {
    EXPECT_EQ(x["kind"], "fact");
    EXPECT_EQ(x["to_tier"], "lpm");
    EXPECT_EQ(x.dump().find("seats"), std::string::npos) << "receipts are content-free";
  }
  // Each names the facts row of its version: the generic listing agrees.
  const long long row = r["receipts"][1]["memory_id"].get<long long>();
  json by_row = Get(admin_, "/v1/receipts?user=priya&kind=fact&id=" + std::to_string(row));
  ASSERT_FALSE(by_row["receipts"].empty());
  EXPECT_EQ(by_row["receipts"].back()["id"], r["receipts"][1]["id"]);

  // Deleted: the delete's receipt joins; the memory's scope only; others refused.
  ASSERT_EQ(c->Delete(("/v1/memories/" + id + "?user=priya").c_str())->status, 200);
  json after = Get(admin_, "/v1/memories/" + id + "/receipts?user=priya");
  ASSERT_EQ(after["receipts"].size(), 3u) << after.dump();
  EXPECT_EQ(after["receipts"][2]["to_tier"], "deleted");
  Get(admin_, "/v1/memories/" + id + "/receipts?user=someone-else", 404);
  Get(admin_, "/v1/memories/m_nosuchmemory/receipts?user=priya", 404);
  Get(CreateKey("default", "read", "bob"), "/v1/memories/" + id + "/receipts?user=priya", 403);
}

TEST_F(ServerInspectTest, RetrievalExplainsEachItemAndChangesNothing) {
  ImportSample(admin_, "priya");
  const json before = Get(admin_, "/v1/stats?user=priya");
  json r = Post(admin_, "/v1/retrieve",
                R"({"user": "priya", "query": "Where did Priya move?", "budget": 600, "explain": true})");
  ASSERT_FALSE(r["items"].empty());
  bool matched_lisbon = false;
  for (const auto& i : r["items"]) {
    ASSERT_TRUE(i.contains("why")) << i.dump();
    EXPECT_FALSE(i["why"]["chosen"].get<std::string>().empty());
    for (const auto& t : i["why"]["matched_terms"]) matched_lisbon = matched_lisbon || t == "move";
    if (i["kind"] == "page") {
      // The ranker's own sums: the score is (own + neighbour evidence) over the best such sum.
      const auto& w = i["why"];
      ASSERT_TRUE(w.contains("lexical_score") && w.contains("neighbour_score") && w.contains("coverage")) << w.dump();
      EXPECT_GE(w["lexical_score"].get<double>(), 0.0);
      EXPECT_EQ(w["neighbour_evidence"].get<bool>(), w["neighbour_score"].get<double>() > 0);
      EXPECT_GE(w["coverage"].get<double>(), 0.0);
      EXPECT_LE(w["coverage"].get<double>(), 1.0);
      EXPECT_EQ(w["coverage"].get<double>() > 0, !w["matched_terms"].empty()) << w.dump();
      // The message's own cues (RankingOptions::question, opener, names; self_reference).
      EXPECT_GE(w["self_reference"].get<double>(), -1.0);
      EXPECT_LE(w["self_reference"].get<double>(), 1.0);
      EXPECT_GE(w["cue_factor"].get<double>(), 1.0 - 0.15) << w.dump();
      EXPECT_LE(w["cue_factor"].get<double>(), 1.2 * 1.2 + 1e-9) << w.dump();
      if (w["cue_factor"].get<double>() < 1.0) {
        EXPECT_NE(i["text"].get<std::string>().find('?'), std::string::npos) << "only a question scores below 1" << i.dump();
      }
      if (w["matched_terms"].empty() && w["expansions"].empty()) {
        EXPECT_DOUBLE_EQ(w["lexical_score"].get<double>(), 0.0) << "no word of the query: only neighbours" << w.dump();
      }
    }
  }
  EXPECT_TRUE(matched_lisbon) << r.dump();
  EXPECT_EQ(Get(admin_, "/v1/stats?user=priya"), before);
  json plain = Post(admin_, "/v1/retrieve", R"({"user": "priya", "query": "Where did Priya move?"})");
  EXPECT_FALSE(plain["items"][0].contains("why"));

  // A question naming a day: the messages of that day (one day of slack on
  // each side) say so, no other message does.
  json dated = Post(admin_, "/v1/retrieve",
                    R"({"user": "priya", "query": "What did Priya say about the job on 2 March 2026?", "explain": true})");
  int of_the_day = 0;
  for (const auto& i : dated["items"]) {
    if (i["kind"] != "page" || !i["why"].contains("lexical_score")) continue;
    const std::string day = i["event_time"].get<std::string>().substr(0, 10);
    const bool near = day == "2026-03-01" || day == "2026-03-02" || day == "2026-03-03";
    EXPECT_EQ(i["why"]["named_date"].get<bool>(), near) << i.dump();
    of_the_day += near ? 1 : 0;
  }
  EXPECT_GT(of_the_day, 0) << dated.dump();

  // A message said the day after, whose "yesterday" points to the day named:
  // it says so, and ranks above the messages that only share its words.
  Post(admin_, "/v1/turns",
       R"({"user": "priya", "user_text": "Yesterday I signed the lease for the new flat", "assistant_text": "Congratulations!", "time": "2026-04-11T09:00:00Z"})",
       201);
  Post(admin_, "/v1/turns",
       R"({"user": "priya", "user_text": "I might sign a lease for a studio too", "assistant_text": "Take your time.", "time": "2026-04-20T09:00:00Z"})",
       201);
  json said = Post(admin_, "/v1/retrieve",
                   R"({"user": "priya", "query": "What lease did Priya sign on 10 April 2026?", "explain": true,
                       "include_stm": false})");
  const json* first = nullptr;
  for (const auto& i : said["items"]) {
    if (!i.contains("why") || !i["why"].contains("lexical_score")) continue;  // ranked messages
    const bool yesterday = i["text"].get<std::string>().find("Yesterday I signed") != std::string::npos;
    EXPECT_EQ(i["why"]["said_date"].get<bool>(), yesterday) << i.dump();
    if (first == nullptr || i["score"].get<double>() > (*first)["score"].get<double>()) first = &i;
  }
  ASSERT_NE(first, nullptr) << said.dump();
  EXPECT_NE((*first)["text"].get<std::string>().find("Yesterday I signed"), std::string::npos) << said.dump();
  // Turned off by the caller: no message says so.
  json off = Post(admin_, "/v1/retrieve",
                  R"({"user": "priya", "query": "What lease did Priya sign on 10 April 2026?", "explain": true,
                      "include_stm": false, "ranking": {"said_date": 0}})");
  int ranked = 0;
  for (const auto& i : off["items"]) {
    if (!i.contains("why") || !i["why"].contains("lexical_score")) continue;
    EXPECT_FALSE(i["why"]["said_date"].get<bool>()) << i.dump();
    ++ranked;
  }
  EXPECT_GT(ranked, 0) << off.dump();

  // A question asking for a kind of thing ("activities": acts): the message
  // naming one ("swimming") says so.
  Post(admin_, "/v1/turns",
       R"({"user": "priya", "user_text": "I spent the weekend swimming in the river", "assistant_text": "Lovely.", "time": "2026-04-25T09:00:00Z"})",
       201);
  json typed = Post(admin_, "/v1/retrieve",
                    R"({"user": "priya", "query": "What activities did Priya enjoy at the river?", "explain": true,
                        "include_stm": false})");
  bool swimming = false;
  for (const auto& i : typed["items"]) {
    if (!i.contains("why") || !i["why"].contains("lexical_score")) continue;
    if (i["text"].get<std::string>().find("swimming in the river") == std::string::npos) continue;
    swimming = true;
    EXPECT_TRUE(i["why"]["answer_type"].get<bool>()) << i.dump();
  }
  EXPECT_TRUE(swimming) << typed.dump();
}

TEST_F(ServerInspectTest, RecentRequestsHoldNoBodyQueryOrKeyAndStayInTheirTenant) {
  Post(admin_, "/v1/turns", R"({"user": "alice", "user_text": "secret-text", "assistant_text": "ok"})", 201);
  Get(admin_, "/v1/memories?user=alice&filters=%7B%22x%22%3A1%7D");
  Get(admin_, "/v1/memories/m_nothing?user=alice", 404);
  const std::string other = CreateKey("other", "admin");
  Get(other, "/v1/stats");
  const std::string reader = CreateKey("default", "read");
  Get(reader, "/v1/requests", 403);

  auto raw = server_->Client(admin_)->Get("/v1/requests");
  ASSERT_TRUE(raw);
  ASSERT_EQ(raw->status, 200) << raw->body;
  for (const std::string& secret : {std::string("secret-text"), admin_, std::string("alice"), std::string("m_nothing"),
                                    std::string("filters")}) {
    EXPECT_EQ(raw->body.find(secret), std::string::npos) << secret << " in " << raw->body;
  }
  json log = json::parse(raw->body);
  std::set<std::string> routes;
  for (const auto& e : log["requests"]) {
    routes.insert(e["method"].get<std::string>() + " " + e["route"].get<std::string>());
    EXPECT_FALSE(e["request_id"].get<std::string>().empty());
    EXPECT_GE(e["ms"].get<double>(), 0);
  }
  EXPECT_TRUE(routes.count("POST /v1/turns"));
  EXPECT_TRUE(routes.count("GET /v1/memories/{id}"));
  EXPECT_TRUE(routes.count("GET /v1/requests"));  // the read key's refused call, in its tenant
  EXPECT_FALSE(routes.count("GET /v1/stats"));    // the other tenant's
  EXPECT_EQ(log["requests"][0]["route"], "/v1/requests");  // newest first
  json theirs = Get(other, "/v1/requests");
  EXPECT_EQ(theirs["requests"].size(), 1u);  // its stats (a call is logged once answered)
  for (int i = 0; i < 250; ++i) server_->Client(admin_)->Get("/v1/stats");
  EXPECT_EQ(Get(admin_, "/v1/requests?limit=200")["requests"].size(), 200u);
}

TEST_F(ServerInspectTest, TheCanaryRunsForAnAdminOnly) {
  const std::string writer = CreateKey("default", "write");
  Post(writer, "/v1/canary", "{}", 403);
  json r = Post(admin_, "/v1/canary", "{}");
  ASSERT_TRUE(r.contains("checks")) << r.dump();
  EXPECT_FALSE(r["checks"].empty()) << r.dump();
  EXPECT_EQ(r["ok"], true) << r.dump();
  EXPECT_EQ(r["exit_code"], 0);
  EXPECT_FALSE(r.contains("db"));
  // It leaves nothing in the caller's tenant.
  EXPECT_EQ(Get(admin_, "/v1/users")["users"], json::array());
}

}  // namespace
