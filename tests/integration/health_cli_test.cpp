// End-to-end tests of `engram health` and `engram canary` on the real binary:
// exit codes (0 green, 3 not), the JSON contract, the --user filter, and a
// canary that passes every check, restarts itself as a second process and
// leaves no canary scope behind.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"

namespace {

namespace et = engram::testing;
using nlohmann::json;

const std::string kDialogue = std::string(ENGRAM_SOURCE_DIR) + "/samples/dialogue.jsonl";

class Home {
 public:
  et::ProcessResult Run(std::vector<std::string> args) const {
    args.insert(args.begin(), ENGRAM_BINARY);
    return et::RunProcess(args, "", {"ENGRAM_HOME=" + dir_.path(), "ENGRAM_DB=", "ENGRAM_USER="});
  }

 private:
  et::TempDir dir_;
};

std::string Describe(const et::ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstderr: " + r.err + "\nstdout: " + r.out.substr(0, 3000);
}

json Doc(const et::ProcessResult& r) { return json::parse(r.out, nullptr, false); }

TEST(HealthCli, ExitCodeFollowsTheStates) {
  Home home;
  // A missing store is an error and is not created; an empty one is healthy.
  auto missing = home.Run({"health"});
  EXPECT_EQ(missing.exit_code, 1) << Describe(missing);
  EXPECT_NE(missing.err.find("no store at"), std::string::npos) << Describe(missing);
  ASSERT_EQ(home.Run({"maintain"}).exit_code, 0);  // creates the empty store
  auto empty = home.Run({"health"});
  EXPECT_EQ(empty.exit_code, 0) << Describe(empty);
  EXPECT_NE(empty.out.find("memory health: healthy"), std::string::npos) << Describe(empty);

  ASSERT_EQ(home.Run({"--user", "priya", "import", kDialogue}).exit_code, 0);
  // Promotion is pending and within its wait: waiting is green.
  auto pending = home.Run({"health", "--json"});
  ASSERT_EQ(pending.exit_code, 0) << Describe(pending);
  json p = Doc(pending);
  ASSERT_TRUE(p.is_object()) << Describe(pending);
  EXPECT_EQ(p["overall"], "waiting");
  EXPECT_EQ(p["counts"]["waiting"], 33);  // 32 turns and the pending job
  EXPECT_TRUE(p["oldest_waiting"].is_object());
  // With no grace the same store has a missing promotion: exit 3.
  auto late = home.Run({"health", "--wait-minutes", "0", "--json"});
  EXPECT_EQ(late.exit_code, 3) << Describe(late);
  json l = Doc(late);
  EXPECT_EQ(l["overall"], "promotion_missing");
  EXPECT_EQ(l["counts"]["promotion_missing"], 23);  // 22 turns beyond capacity and the job
  ASSERT_FALSE(l["findings"].empty());
  EXPECT_EQ(l["findings"][0]["state"], "promotion_missing");

  ASSERT_EQ(home.Run({"maintain"}).exit_code, 0);
  auto done = home.Run({"health", "--json"});
  ASSERT_EQ(done.exit_code, 0) << Describe(done);
  json d = Doc(done);
  EXPECT_EQ(d["overall"], "waiting");
  EXPECT_EQ(d["counts"]["waiting"], 10);
  EXPECT_EQ(d["findings_total"], 0);
  EXPECT_GT(d["counts"]["healthy"].get<int>(), 22);
  EXPECT_GT(d["degraded_share"].get<double>(), 0.0);  // built-in engine
  ASSERT_EQ(d["scopes"].size(), 1u);
  EXPECT_EQ(d["scopes"][0]["user"], "priya");

  // Evidence older than the horizon proves nothing; --verify renews it.
  auto expired = home.Run({"health", "--as-of", "2099-01-01T00:00:00Z"});
  EXPECT_EQ(expired.exit_code, 3) << Describe(expired);
  EXPECT_NE(expired.out.find("memory health: uncertain"), std::string::npos) << Describe(expired);
  auto never = home.Run({"health", "--as-of", "2099-01-01T00:00:00Z", "--horizon-hours", "0"});
  EXPECT_EQ(never.exit_code, 0) << Describe(never);  // expiry switched off
  auto verified = home.Run({"health", "--verify", "--json"});
  EXPECT_EQ(verified.exit_code, 0) << Describe(verified);
  EXPECT_EQ(Doc(verified)["scopes_verified"], 1);
  EXPECT_EQ(home.Run({"health", "--as-of", "bogus"}).exit_code, 2);
  // The store holds its current state only: it cannot be judged as of a time
  // before its newest receipt (a receipt from the future counted as fresh).
  auto before = home.Run({"health", "--as-of", "2001-01-01T00:00:00Z"});
  EXPECT_EQ(before.exit_code, 2) << Describe(before);
  EXPECT_NE(before.err.find("as_of: before the newest receipt"), std::string::npos) << Describe(before);
  // Out-of-range options are refused, not read as the default.
  for (const char* bad : {"-5", "nan", "inf", "1e308", "soon"}) {
    auto r = home.Run({"health", "--horizon-hours", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << Describe(r);
    EXPECT_NE(r.err.find("--horizon-hours: must be a number from 0"), std::string::npos) << Describe(r);
    EXPECT_EQ(home.Run({"health", "--wait-minutes", bad}).exit_code, 2) << bad;
  }

  // --user limits the report.
  auto other = home.Run({"--user", "nobody", "health", "--json"});
  EXPECT_EQ(other.exit_code, 0) << Describe(other);
  EXPECT_EQ(Doc(other)["items"], 0);
}

TEST(HealthCli, CanaryPassesRestartsItselfAndCleansUp) {
  Home home;
  ASSERT_EQ(home.Run({"--user", "priya", "import", kDialogue}).exit_code, 0);
  ASSERT_EQ(home.Run({"maintain"}).exit_code, 0);
  auto r = home.Run({"canary", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  json c = Doc(r);
  ASSERT_TRUE(c.is_object()) << Describe(r);
  EXPECT_TRUE(c["ok"].get<bool>());
  std::vector<std::string> names;
  for (const auto& check : c["checks"]) {
    names.push_back(check["check"]);
    EXPECT_TRUE(check["ok"].get<bool>()) << check.dump();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"pin", "stm_overflow", "degraded_path", "scope_isolation",
                                             "restart_chain", "generation_receipt", "retrieval_receipts",
                                             "health", "expiry", "cleanup"}));
  const std::string id = c["canary_id"];
  EXPECT_EQ(id.size(), 12u);
  // No canary scope is left, the user's memory is untouched and still green.
  auto h = home.Run({"health", "--json"});
  ASSERT_EQ(h.exit_code, 0) << Describe(h);
  json hj = Doc(h);
  ASSERT_EQ(hj["scopes"].size(), 1u);
  EXPECT_EQ(hj["scopes"][0]["user"], "priya");
  auto stats = Doc(home.Run({"stats", "--json"}));
  EXPECT_EQ(stats["turns_admitted"], 32);
  // The canary's turns are gone from the file (ForgetUser).
  auto exp = home.Run({"export", "--all"});
  EXPECT_EQ(exp.out.find(id), std::string::npos);
}

}  // namespace
