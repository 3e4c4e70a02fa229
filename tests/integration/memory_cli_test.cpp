// End-to-end test of `engram memory`: every subcommand on the real binary in a
// fresh ENGRAM_HOME, with --json output and the exit codes of the CLI
// (0 ok, 1 failure such as not found, 2 invalid arguments).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"

namespace {

namespace et = engram::testing;
using nlohmann::json;

class MemoryCli : public ::testing::Test {
 protected:
  et::ProcessResult Run(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), ENGRAM_BINARY);
    return et::RunProcess(args, input, {"ENGRAM_HOME=" + dir_.path(), "ENGRAM_DB=", "ENGRAM_USER="});
  }
  json Json(std::vector<std::string> args, const std::string& input = "") {
    args.push_back("--json");
    auto r = Run(args, input);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    return json::parse(r.out, nullptr, false);
  }
  et::TempDir dir_;
};

TEST_F(MemoryCli, EverySubcommandEndToEnd) {
  // add: verbatim with metadata, built-in inference, messages on stdin, idempotency.
  json a = Json({"memory", "add", "--user", "alice", "--no-infer", "I deploy with node.js and gpt-4",
                 "--metadata", R"({"category": "work", "rating": 5})"});
  ASSERT_EQ(a["results"].size(), 1u);
  EXPECT_EQ(a["results"][0]["event"], "ADD");
  const std::string id = a["results"][0]["id"];
  json inferred = Json({"memory", "add", "--user", "alice", "I love hiking in the Alps."});
  EXPECT_TRUE(inferred["degraded"].get<bool>());
  ASSERT_EQ(inferred["results"].size(), 1u);
  json msgs = Json({"memory", "add", "--user", "alice", "--run", "r1", "--no-infer", "--messages", "-",
                    "--idempotency-key", "k1"},
                   R"([{"role": "user", "content": "Run note about Paris", "name": "Alice"},
                       {"role": "system", "content": "ignored"}])");
  ASSERT_EQ(msgs["results"].size(), 1u);
  const std::string sent = R"([{"role": "user", "content": "Run note about Paris", "name": "Alice"},
                               {"role": "system", "content": "ignored"}])";
  json again = Json({"memory", "add", "--user", "alice", "--run", "r1", "--no-infer", "--messages", "-",
                     "--idempotency-key", "k1"},
                    sent);
  EXPECT_TRUE(again["replayed"].get<bool>());
  EXPECT_EQ(again["results"][0]["id"], msgs["results"][0]["id"]);
  // The text output says it is the first outcome, not a new add.
  auto replay = Run({"memory", "add", "--user", "alice", "--run", "r1", "--no-infer", "--messages", "-",
                     "--idempotency-key", "k1"},
                    sent);
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(replay.out.rfind("replayed: the idempotency key was used before", 0), 0u) << replay.out;
  // The key used again for another text is refused (nothing stored), not
  // answered with the first outcome.
  auto clash = Run({"memory", "add", "--user", "alice", "--run", "r1", "--no-infer", "other text",
                    "--idempotency-key", "k1"});
  EXPECT_NE(clash.exit_code, 0);
  EXPECT_NE(clash.err.find("idempotency_key: already used"), std::string::npos) << clash.err;
  auto system = Run({"memory", "add", "--user", "alice", "--no-infer", "--role", "system", "Be concise"});
  EXPECT_EQ(system.exit_code, 2);
  EXPECT_NE(system.err.find("--role"), std::string::npos) << system.err;
  json dup = Json({"memory", "add", "--user", "alice", "--no-infer", "i deploy with NODE.JS and gpt-4!"});
  EXPECT_EQ(dup["results"][0]["event"], "NOOP");

  // search with explain and filters; exact scope by default.
  json s = Json({"memory", "search", "--user", "alice", "node.js", "--explain"});
  ASSERT_GE(s["results"].size(), 1u);
  EXPECT_EQ(s["results"][0]["id"], id);
  EXPECT_GT(s["results"][0]["score"].get<double>(), 0.0);
  EXPECT_LE(s["results"][0]["score"].get<double>(), 1.0);
  EXPECT_TRUE(s["results"][0]["score_details"]["from_lexical"].get<bool>());
  // Without --json, --explain prints the components under each memory.
  auto text = Run({"memory", "search", "--user", "alice", "node.js", "--explain"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("    vector "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" lexical 1 "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("found by"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" words"), std::string::npos) << text.out;
  json f = Json({"memory", "search", "--user", "alice", "hiking node.js", "--filters", R"({"rating": {"gte": 4}})"});
  ASSERT_EQ(f["results"].size(), 1u);
  json wide = Json({"memory", "search", "--user", "alice", "Paris", "--narrower"});
  ASSERT_GE(wide["results"].size(), 1u);
  EXPECT_EQ(wide["results"][0]["run_id"], "r1");

  // get, list with pagination.
  json g = Json({"memory", "get", id, "--user", "alice"});
  EXPECT_EQ(g["memory"], "I deploy with node.js and gpt-4");
  EXPECT_EQ(g["metadata"]["category"], "work");
  json p1 = Json({"memory", "list", "--user", "alice", "--limit", "1"});
  ASSERT_EQ(p1["results"].size(), 1u);
  ASSERT_TRUE(p1["next_cursor"].is_string());
  json p2 = Json({"memory", "list", "--user", "alice", "--limit", "1", "--cursor", p1["next_cursor"]});
  ASSERT_EQ(p2["results"].size(), 1u);
  EXPECT_TRUE(p2["next_cursor"].is_null());
  EXPECT_NE(p1["results"][0]["id"], p2["results"][0]["id"]);

  // update, history, delete.
  json u = Json({"memory", "update", id, "--user", "alice", "--text", "I deploy with node.js and gpt-4o"});
  EXPECT_EQ(u["version"], 2);
  json h = Json({"memory", "history", id, "--user", "alice"});
  ASSERT_EQ(h["results"].size(), 2u);
  EXPECT_EQ(h["results"][1]["event"], "UPDATE");
  EXPECT_EQ(h["results"][1]["old_memory"], "I deploy with node.js and gpt-4");
  json d = Json({"memory", "delete", id, "--user", "alice"});
  EXPECT_TRUE(d["deleted"].get<bool>());
  auto gone = Run({"memory", "get", id, "--user", "alice"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("not_found"), std::string::npos);

  // Another user's scope: not found, as for an unknown id.
  auto foreign = Run({"memory", "history", id, "--user", "bob"});
  EXPECT_EQ(foreign.exit_code, 1);

  // delete-all is exact; purge erases.
  json da = Json({"memory", "delete-all", "--user", "alice"});
  EXPECT_EQ(da["deleted"], 1);  // the inferred one; the run-level memory stays
  json left = Json({"memory", "list", "--user", "alice", "--run", "r1"});
  ASSERT_EQ(left["results"].size(), 1u);
  json pu = Json({"memory", "purge", "--all", "--user", "alice", "--run", "r1"});
  EXPECT_EQ(pu["memories"], 1);
  json pi = Json({"memory", "purge", id, "--user", "alice"});
  EXPECT_EQ(pi["memories"], 1);
  EXPECT_EQ(et::ReadFile(dir_.File("engram.db")).find("Paris"), std::string::npos);

  // Invalid arguments: exit 2, one line naming the field.
  auto bad = Run({"memory", "list", "--user", "alice", "--filters", R"({"agent_id": "x"})"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("filters.agent_id"), std::string::npos) << bad.err;
  auto badmeta = Run({"memory", "add", "--user", "a", "--metadata", "[1]", "x"});
  EXPECT_EQ(badmeta.exit_code, 2);
  EXPECT_NE(badmeta.err.find("metadata"), std::string::npos);
}

// Without --user the memory commands use the user every other command uses:
// $ENGRAM_USER, else "default"; an --agent or --run alone names an agent's or
// a run's own scope, with no user.
TEST_F(MemoryCli, WithoutAUserTheDefaultUserIsTheScope) {
  json a = Json({"memory", "add", "--no-infer", "Bob's birthday is on 4 July"});
  ASSERT_EQ(a["results"].size(), 1u);
  json mine = Json({"memory", "list"});
  ASSERT_EQ(mine["results"].size(), 1u);
  EXPECT_EQ(mine["results"][0]["memory"], "Bob's birthday is on 4 July");
  EXPECT_EQ(mine["results"][0]["user_id"], "default");
  EXPECT_EQ(Json({"memory", "list", "--user", "default"})["results"].size(), 1u);
  EXPECT_EQ(Json({"memory", "search", "birthday"})["results"].size(), 1u);
  EXPECT_EQ(Json({"memory", "list", "--agent", "bot"})["results"].size(), 0u);
  EXPECT_EQ(Json({"memory", "list", "--user", "alice"})["results"].size(), 0u);
  Json({"memory", "add", "--agent", "bot", "--no-infer", "Answer in French"});
  json bot = Json({"memory", "list", "--agent", "bot"});
  ASSERT_EQ(bot["results"].size(), 1u);
  EXPECT_FALSE(bot["results"][0].contains("user_id") && bot["results"][0]["user_id"] == "default");
  EXPECT_EQ(Json({"memory", "list"})["results"].size(), 1u);

  auto env = et::RunProcess({ENGRAM_BINARY, "memory", "list", "--json"}, "",
                            {"ENGRAM_HOME=" + dir_.path(), "ENGRAM_DB=", "ENGRAM_USER=carol"});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_EQ(json::parse(env.out)["results"].size(), 0u);
}

TEST_F(MemoryCli, ExportAndImportKeepMemories) {
  Json({"memory", "add", "--user", "alice", "--no-infer", "Alice loves ramen", "--metadata",
        R"({"category": "food"})", "--expires", "2099-01-01T00:00:00Z"});
  Json({"memory", "add", "--user", "alice", "--agent", "planner", "--run", "r1", "--no-infer", "Plan step one"});
  // Extracted by the built-in engine: the import keeps its degraded mark.
  json inferred = Json({"memory", "add", "--user", "bob", "I love hiking in the Alps"});
  ASSERT_EQ(inferred["results"].size(), 1u);
  ASSERT_TRUE(inferred["degraded"].get<bool>());
  auto ex = Run({"export", "--all"});
  ASSERT_EQ(ex.exit_code, 0) << ex.err;
  int memories = 0;
  for (std::size_t at = 0; at < ex.out.size();) {
    std::size_t end = ex.out.find('\n', at);
    json j = json::parse(ex.out.substr(at, end == std::string::npos ? std::string::npos : end - at), nullptr, false);
    at = end == std::string::npos ? ex.out.size() : end + 1;
    if (!j.is_object() || j.value("type", "") != "fact" || j.value("kind", "") != "memory") continue;
    ++memories;
    EXPECT_EQ(j["memory_id"].get<std::string>().rfind("m_", 0), 0u);
    EXPECT_EQ(j["version"], 1);
    EXPECT_EQ(j["degraded"], j["user_id"] == "bob");
    if (j["user_id"] == "bob") continue;
    EXPECT_EQ(j["user_id"], "alice");
    if (j["text"] == "Alice loves ramen") {
      EXPECT_EQ(j["metadata"]["category"], "food");
      EXPECT_EQ(j["expires_at"], "2099-01-01T00:00:00Z");
    } else {
      EXPECT_EQ(j["agent_id"], "planner");
      EXPECT_EQ(j["run_id"], "r1");
      EXPECT_TRUE(j["expires_at"].is_null());
    }
  }
  EXPECT_EQ(memories, 3);

  // Re-imported into another store: same scopes, metadata and expiry; a second
  // import adds nothing (exact duplicates).
  et::TempDir other;
  et::WriteFile(other.File("export.jsonl"), ex.out);
  auto in = [&](std::vector<std::string> args) {
    args.insert(args.begin(), ENGRAM_BINARY);
    args.push_back("--json");
    auto r = et::RunProcess(args, "", {"ENGRAM_HOME=" + other.path(), "ENGRAM_DB=", "ENGRAM_USER="});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  };
  json imported = in({"import", other.File("export.jsonl")});
  EXPECT_EQ(imported["memories_added"], 3);
  json mine = in({"memory", "list", "--user", "alice"});
  ASSERT_EQ(mine["results"].size(), 1u);
  EXPECT_EQ(mine["results"][0]["memory"], "Alice loves ramen");
  EXPECT_FALSE(mine["results"][0]["degraded"].get<bool>());
  json bobs = in({"memory", "list", "--user", "bob"});
  ASSERT_EQ(bobs["results"].size(), 1u);
  EXPECT_EQ(bobs["results"][0]["memory"], inferred["results"][0]["memory"]);
  EXPECT_TRUE(bobs["results"][0]["degraded"].get<bool>());
  EXPECT_EQ(mine["results"][0]["metadata"]["category"], "food");
  EXPECT_EQ(mine["results"][0]["expiration_date"], "2099-01-01T00:00:00Z");
  json run = in({"memory", "list", "--user", "alice", "--agent", "planner", "--run", "r1"});
  ASSERT_EQ(run["results"].size(), 1u);
  EXPECT_EQ(run["results"][0]["memory"], "Plan step one");
  json again = in({"import", other.File("export.jsonl")});
  EXPECT_EQ(again["memories_added"], 0);

  // A memory the engine would refuse, last in the file (metadata naming a
  // scope id), is found before anything is written: the import fails naming
  // its line, and the store stays empty (no turn, no memory).
  et::TempDir third;
  std::string file = "{\"type\": \"turn\", \"user\": \"zoe\", \"assistant\": \"assistant\", "
                     "\"user_text\": \"I keep bees\", \"assistant_text\": \"Nice\"}\n"
                     "{\"type\": \"fact\", \"kind\": \"memory\", \"user_id\": \"zoe\", \"text\": \"Zoe keeps bees\"}\n"
                     "{\"type\": \"fact\", \"kind\": \"memory\", \"user_id\": \"zoe\", \"text\": \"Zoe likes figs\", "
                     "\"metadata\": {\"user_id\": \"mallory\"}}\n";
  et::WriteFile(third.File("bad.jsonl"), file);
  const std::vector<std::string> env = {"ENGRAM_HOME=" + third.path(), "ENGRAM_DB=", "ENGRAM_USER="};
  auto refused = et::RunProcess({ENGRAM_BINARY, "import", third.File("bad.jsonl")}, "", env);
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("line 3"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("metadata.user_id"), std::string::npos) << refused.err;
  // (Refused before the store is opened: there is none, or it is empty.)
  auto stats = et::RunProcess({ENGRAM_BINARY, "stats", "--json"}, "", env);
  const bool no_store = stats.exit_code == 1 && stats.err.find("no store") != std::string::npos;
  EXPECT_TRUE(no_store || json::parse(stats.out, nullptr, false).value("turns_admitted", -1) == 0)
      << stats.out << stats.err;
  auto listed = et::RunProcess({ENGRAM_BINARY, "memory", "list", "--user", "zoe", "--json"}, "", env);
  EXPECT_TRUE(no_store || json::parse(listed.out, nullptr, false)["results"].empty()) << listed.out << listed.err;
}

}  // namespace
