// The README's curl examples (the block `make run` prints) work as printed
// against a live `engram serve` seeded like the demo.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "testing/server_process.hpp"
#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"

namespace et = engram::testing;

namespace {

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

TEST(ServerReadme, CurlExamplesWorkAsPrinted) {
  ASSERT_EQ(access("/usr/bin/curl", X_OK), 0) << "curl is not installed (scripts/bootstrap installs it)";
  const std::string readme = et::ReadFile(std::string(ENGRAM_SOURCE_DIR) + "/README.md");
  const auto begin = readme.find("<!-- serve-examples"), end = readme.find("<!-- /serve-examples -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  std::istringstream block(readme.substr(begin, end - begin));

  et::TempDir home;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"import", std::string(ENGRAM_SOURCE_DIR) + "/samples/dialogue.jsonl"},
        std::vector<std::string>{"maintain"}}) {
    std::vector<std::string> argv = {ENGRAM_BINARY, "--home", home.path(), "--user", "priya"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = et::RunProcess(argv, "", et::kNoModelEnv);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  et::ServerProcess server(ENGRAM_BINARY, home.path(), {}, et::kNoModelEnv);
  ASSERT_TRUE(server.started()) << server.output();
  const std::string port = std::to_string(server.port());

  std::string setup;
  int curls = 0;
  for (std::string line; std::getline(block, line);) {
    if (line.rfind("export ", 0) == 0) setup = Replace(line, ".engram/demo/admin.key", home.File("admin.key"));
    if (line.rfind("curl ", 0) != 0) continue;
    ++curls;
    const std::string script = setup + "\n" + Replace(line, "127.0.0.1:8420", "127.0.0.1:" + port) + "\n";
    auto r = et::RunProcess({"/bin/sh", "-c", script}, "", {"NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"});
    EXPECT_EQ(r.exit_code, 0) << line << "\n" << r.err;
    EXPECT_FALSE(r.out.empty()) << line;
    EXPECT_EQ(r.out.find("\"error\""), std::string::npos) << line << "\n" << r.out;
    // Each example returns what the README promises, not only a 2xx.
    if (line.find("/v1/retrieve") != std::string::npos && line.find("Hanoi") != std::string::npos) {
      EXPECT_NE(r.out.find("Hanoi"), std::string::npos) << r.out;
    }
    if (line.find("/v1/retrieve") != std::string::npos && line.find("cook") != std::string::npos) {
      // The memory added for the user is a fact of the context, found by
      // its meaning (the question shares no word with it but the name).
      auto doc = nlohmann::json::parse(r.out, nullptr, false);
      ASSERT_TRUE(doc.is_object() && doc["context"].is_string()) << r.out;
      EXPECT_NE(doc["context"].get<std::string>().find("## Facts about the user\n- ("), std::string::npos) << r.out;
      EXPECT_NE(doc["context"].get<std::string>().find("Priya is vegetarian"), std::string::npos) << r.out;
    }
    if (line.find("/v1/memories/search") != std::string::npos) {
      // "food preferences" finds "Priya is vegetarian" by meaning (the
      // built-in word vectors), though the two share no word.
      auto doc = nlohmann::json::parse(r.out, nullptr, false);
      ASSERT_TRUE(doc.is_object() && doc["results"].is_array() && !doc["results"].empty()) << r.out;
      EXPECT_EQ(doc["results"][0]["memory"], "Priya is vegetarian") << r.out;
    } else if (line.find("/v1/memories") != std::string::npos) {
      EXPECT_NE(r.out.find("\"event\":\"ADD\""), std::string::npos) << r.out;
    }
    if (line.find("/v1/turns") != std::string::npos) {
      EXPECT_NE(r.out.find("\"seq\""), std::string::npos) << r.out;
    }
    if (line.find("/v1/profile") != std::string::npos) {
      EXPECT_NE(r.out.find("priya"), std::string::npos) << r.out;
      // The memory added above for the user is one of the user's facts.
      auto doc = nlohmann::json::parse(r.out, nullptr, false);
      ASSERT_TRUE(doc.is_object() && doc["user_facts"].is_array()) << r.out;
      bool vegetarian = false;
      for (const auto& f : doc["user_facts"]) vegetarian = vegetarian || f.dump().find("Priya is vegetarian") != std::string::npos;
      EXPECT_TRUE(vegetarian) << r.out;
    }
    if (line.find("/healthz") != std::string::npos) {
      EXPECT_NE(r.out.find("ok"), std::string::npos) << r.out;
    }
  }
  EXPECT_GE(curls, 5);
  EXPECT_FALSE(setup.empty());
}

}  // namespace
