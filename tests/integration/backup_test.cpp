// A backup that is a backup: `engram export --all > backup.jsonl` (the README's
// backup line) holds every tenant's and user's turns and memories, and
// `engram import backup.jsonl` into an empty home restores them into the
// scopes they came from. Before, the import merged every turn of the file into
// the one scope of the command line (--user, default "default").
//
// What a restore keeps and what it does not (compared field by field below):
// - turns: per scope, in order, with seq, texts, speaker names, event_time,
//   metadata and source refs; ingest_time is the time of the restore, and
//   tier / page_id are derived (restored turns start in STM; `engram maintain`
//   promotes them again);
// - memories (kinds memory and procedural): scope ids, text, kind, role
//   (none for an extracted memory), attribution, actor, metadata, event_time,
//   expiry and the degraded mark; their ids, created_at / updated_at /
//   record_time are new, the version restarts at 1 (history is not exported);
// - derived records (pages, segments, profile slots, consolidated user and
//   assistant facts, chain summaries) are not restored: `engram maintain`
//   rebuilds them from the restored turns; with the built-in (deterministic)
//   engine they come out the same, so after it the whole export matches but
//   for those times and ids.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "testing/server_process.hpp"
#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"

namespace {

namespace et = engram::testing;
using nlohmann::json;

class Home {
 public:
  et::ProcessResult Run(std::vector<std::string> args, const std::string& input = "") const {
    args.insert(args.begin(), ENGRAM_BINARY);
    return et::RunProcess(args, input, {"ENGRAM_HOME=" + dir_.path(), "ENGRAM_DB=", "ENGRAM_USER="});
  }
  // Runs a command that must succeed.
  std::string Ok(const std::vector<std::string>& args, const std::string& input = "") const {
    auto r = Run(args, input);
    std::string cmd;
    for (const auto& a : args) cmd += a + " ";
    EXPECT_EQ(r.exit_code, 0) << cmd << "\nstderr: " << r.err << "\nstdout: " << r.out.substr(0, 1000);
    return r.out;
  }
  std::string File(const std::string& name) const { return dir_.File(name); }
  const std::string& Dir() const { return dir_.path(); }

 private:
  et::TempDir dir_;
};

std::vector<json> Lines(const std::string& out) {
  std::vector<json> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    EXPECT_TRUE(j.is_object()) << line.substr(0, 300);
    if (j.is_object()) lines.push_back(std::move(j));
  }
  return lines;
}

using ScopeKey = std::tuple<std::string, std::string, std::string>;  // tenant, user, assistant

ScopeKey KeyOf(const json& j) { return {j.value("tenant", ""), j.value("user", ""), j.value("assistant", "")}; }

// A record with the fields that legitimately differ after a restore removed.
json Without(json j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) j.erase(k);
  return j;
}

// The turns of an export per scope, in order, without ingest_time, tier and page_id.
std::map<ScopeKey, std::vector<json>> Turns(const std::vector<json>& lines) {
  std::map<ScopeKey, std::vector<json>> out;
  for (const auto& j : lines) {
    if (j.value("type", "") == "turn") out[KeyOf(j)].push_back(Without(j, {"ingest_time", "tier", "page_id"}));
  }
  return out;
}

// The memories (kinds memory, procedural) of an export, without their ids,
// version and bookkeeping times, as a sorted multiset of documents.
std::multiset<std::string> Memories(const std::vector<json>& lines) {
  std::multiset<std::string> out;
  for (const auto& j : lines) {
    if (j.value("type", "") != "fact") continue;
    const std::string kind = j.value("kind", "");
    if (kind != "memory" && kind != "procedural") continue;
    out.insert(Without(j, {"id", "memory_id", "version", "created_at", "updated_at", "record_time"}).dump());
  }
  return out;
}

std::set<std::string> Users(const std::vector<json>& lines) {
  std::set<std::string> users;
  for (const auto& j : lines) {
    const std::string type = j.value("type", "");
    if (type == "turn") users.insert(j.value("tenant", "") + "/" + j.value("user", ""));
    if (type == "fact" && !j.value("user_id", "").empty()) {
      users.insert(j.value("tenant", "") + "/" + j.value("user_id", ""));
    }
  }
  return users;
}

// A store with several tenants, users and assistants: turns (one by one and
// imported), memories with metadata, expiry and agent/run scopes, maintained.
void Populate(const Home& home) {
  home.Ok({"turn", "add", "I moved to Lisbon last week.", "Welcome to Lisbon!", "--user", "alice", "--time",
           "2026-03-02T09:00:00Z", "--metadata", R"({"topic": "home", "n": [1, 2]})", "--source-ref", "a-1"});
  home.Ok({"turn", "add", "My sister Ana visits in May.", "That will be lovely.", "--user", "alice", "--time",
           "2026-03-03T10:00:00Z"});
  home.Ok({"turn", "add", "Only I spoke.", "", "--user", "alice"});
  home.Ok({"turn", "add", "I live in Oslo.", "Noted.", "--user", "bob", "--time", "2026-01-05T08:00:00Z"});
  home.Ok({"--tenant", "acme", "--user", "alice", "--assistant", "helper", "turn", "add", "Book a table at Lumen.",
           "Booked for Friday."});
  // More turns than STM holds, so that maintenance promotes and consolidates.
  std::string dialogue;
  for (int i = 0; i < 14; ++i) {
    dialogue += json{{"user", "Carol note " + std::to_string(i) + ": I practise the cello every morning."},
                     {"assistant", "Keep practising, Carol."},
                     {"time", "2026-02-0" + std::to_string(1 + i % 9) + "T0" + std::to_string(i % 10) + ":00:00Z"},
                     {"user_name", "Carol"}}
                    .dump() +
                "\n";
  }
  const std::string file = home.File("carol.jsonl");
  et::WriteFile(file, dialogue);
  home.Ok({"--tenant", "acme", "--user", "carol", "import", file});
  // A dialogue whose maintenance consolidates facts and profile slots.
  home.Ok({"--tenant", "acme", "--user", "priya", "import", std::string(ENGRAM_SOURCE_DIR) + "/samples/dialogue.jsonl"});
  home.Ok({"memory", "add", "--user", "alice", "--no-infer", "Alice loves ramen", "--metadata",
           R"({"category": "food"})", "--expires", "2099-01-01T00:00:00Z", "--time", "2026-03-04T12:00:00Z"});
  home.Ok({"memory", "add", "--user", "alice", "--no-infer", "--role", "assistant", "Reminded Alice about May"});
  home.Ok({"--tenant", "acme", "memory", "add", "--user", "alice", "--agent", "planner", "--run", "r1", "--no-infer",
           "Plan step one"});
  home.Ok({"--tenant", "acme", "memory", "add", "--user", "dave", "--no-infer", "Dave prefers green tea"});
  // Extracted by the built-in engine: no role, attributed to the user, degraded.
  home.Ok({"memory", "add", "--user", "bob", "I work as a pilot and my favourite colour is teal."});
  home.Ok({"maintain"});
}

TEST(Backup, ExportAllThenImportRestoresEveryTenantAndUser) {
  Home original;
  Populate(original);
  const std::string backup_text = original.Ok({"export", "--all"});
  const std::vector<json> exported = Lines(backup_text);
  // The backup holds every tenant and user, with turns and memories.
  EXPECT_EQ(Users(exported), (std::set<std::string>{"default/alice", "default/bob", "acme/alice", "acme/carol",
                                                      "acme/dave", "acme/priya"}));
  const auto turns = Turns(exported);
  ASSERT_EQ(turns.size(), 5u);
  std::map<std::string, int> types;  // derived records too: the comparison after maintain covers them
  for (const auto& j : exported) ++types[j.value("type", "") + (j.contains("kind") ? "/" + j.value("kind", "") : "")];
  for (const char* t : {"scope", "turn", "page", "segment", "profile_slot", "fact/user", "fact/memory"}) {
    EXPECT_GT(types[t], 0) << t;
  }
  ASSERT_EQ(turns.at({"acme", "carol", "assistant"}).size(), 14u);
  EXPECT_EQ(Memories(exported).size(), 5u);
  int extracted = 0;
  for (const auto& j : exported) {
    if (j.value("kind", "") == "memory" && j.value("user_id", "") == "bob") {
      ++extracted;
      EXPECT_EQ(j.value("role", "?"), "") << j;
      EXPECT_TRUE(j.value("degraded", false)) << j;
    }
  }
  EXPECT_EQ(extracted, 1);

  // Wiped: a new empty home; the backup restores it.
  Home restored;
  const std::string backup = restored.File("backup.jsonl");
  et::WriteFile(backup, backup_text);
  json report = json::parse(restored.Ok({"import", backup, "--json"}), nullptr, false);
  std::size_t admitted = 0;
  for (const auto& [scope, list] : turns) admitted += list.size();
  EXPECT_EQ(report["turns_admitted"], admitted) << report;
  EXPECT_GT(admitted, 3u + 1 + 1 + 14);
  EXPECT_EQ(report["memories_added"], 5) << report;
  ASSERT_EQ(report["scopes"].size(), 5u) << report;

  const std::vector<json> again = Lines(restored.Ok({"export", "--all"}));
  EXPECT_EQ(Users(again), Users(exported));
  const auto turns_again = Turns(again);
  ASSERT_EQ(turns_again.size(), turns.size());
  for (const auto& [scope, list] : turns) {
    SCOPED_TRACE(std::get<0>(scope) + "/" + std::get<1>(scope) + "/" + std::get<2>(scope));
    ASSERT_TRUE(turns_again.count(scope));
    const auto& other = turns_again.at(scope);
    ASSERT_EQ(other.size(), list.size());
    for (std::size_t i = 0; i < list.size(); ++i) EXPECT_EQ(other[i], list[i]) << "turn " << i;
  }
  EXPECT_EQ(Memories(again), Memories(exported));

  // The same through the per-scope views of the CLI.
  auto texts = [](const Home& home, const std::vector<std::string>& scope) {
    std::vector<std::string> args = {"memory", "list", "--json"};
    args.insert(args.end(), scope.begin(), scope.end());
    std::multiset<std::string> out;
    const json list = json::parse(home.Ok(args), nullptr, false);
    for (const auto& m : list.value("results", json::array())) out.insert(m.value("memory", ""));
    return out;
  };
  for (const auto& user : {"alice", "bob"}) {
    EXPECT_EQ(texts(restored, {"--user", user}), texts(original, {"--user", user})) << user;
    EXPECT_EQ(json::parse(restored.Ok({"stats", "--user", user, "--json"}))["turns_admitted"],
              json::parse(original.Ok({"stats", "--user", user, "--json"}))["turns_admitted"])
        << user;
  }
  EXPECT_EQ(texts(restored, {"--tenant", "acme", "--user", "alice", "--agent", "planner", "--run", "r1"}),
            (std::multiset<std::string>{"Plan step one"}));
  EXPECT_EQ(json::parse(restored.Ok({"--tenant", "acme", "memory", "list", "--user", "dave", "--json"}))["results"][0]
                ["memory"],
            "Dave prefers green tea");

  // With the built-in (deterministic) engine, `engram maintain` rebuilds the
  // derived records as they were: after it, the whole export is the same,
  // record for record, but for the bookkeeping times and the memories' ids.
  restored.Ok({"maintain"});
  auto everything = [](const std::vector<json>& lines) {
    std::vector<std::string> out;
    for (const auto& j : lines) {
      const bool fact = j.value("type", "") == "fact";
      json k = Without(j, {"ingest_time", "created_at", "updated_at", "record_time", "memory_id"});
      if (fact && (j.value("kind", "") == "memory" || j.value("kind", "") == "procedural")) k.erase("id");
      out.push_back(k.dump());
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const auto want = everything(exported), got = everything(Lines(restored.Ok({"export", "--all"})));
  EXPECT_EQ(got.size(), want.size());
  std::vector<std::string> missing, extra;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  for (const auto& m : missing) ADD_FAILURE() << "not restored: " << m.substr(0, 400);
  for (const auto& e : extra) ADD_FAILURE() << "not in the backup: " << e.substr(0, 400);

  // Importing the backup again adds no memory twice (turns are a log: a second
  // import appends them again, as for any dialogue file).
  json twice = json::parse(restored.Ok({"import", backup, "--json"}), nullptr, false);
  EXPECT_EQ(twice["memories_added"], 0) << twice;
}

// A scope flag given with an export must agree with it: never a silent merge
// of several users into one. Nothing is written (not even a store).
TEST(Backup, ScopeFlagsThatContradictTheExportAreRefused) {
  Home original;
  original.Ok({"turn", "add", "I live in Oslo.", "Noted.", "--user", "bob"});
  original.Ok({"turn", "add", "I live in Porto.", "Noted.", "--user", "alice"});
  original.Ok({"--tenant", "acme", "memory", "add", "--user", "carol", "--no-infer", "Carol likes tea"});
  const std::string backup_text = original.Ok({"export", "--all"});

  Home restored;
  const std::string backup = restored.File("backup.jsonl");
  et::WriteFile(backup, backup_text);
  for (const auto& args : std::vector<std::vector<std::string>>{{"--user", "alice"},
                                                                {"--tenant", "acme"},
                                                                {"--assistant", "helper"},
                                                                {"--tenant", "default"}}) {
    std::vector<std::string> cmd = {"import", backup};
    cmd.insert(cmd.end(), args.begin(), args.end());
    auto r = restored.Run(cmd);
    EXPECT_EQ(r.exit_code, 2) << args[0] << "\n" << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("engram: " + args[0] + " " + args[1] + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("an export is restored into the scopes it names"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(restored.File("engram.db"))) << "a refused import created the store";
  // Flags that agree with the file are fine; the scopes reported are those
  // of the file (no empty scope of the command line).
  json ok = json::parse(restored.Ok({"import", backup, "--json", "--assistant", "assistant"}),
                        nullptr, false);
  ASSERT_EQ(ok["scopes"].size(), 2u) << ok;
  EXPECT_EQ(ok["scopes"][0]["user"], "bob");
  EXPECT_EQ(ok["scopes"][1]["user"], "alice");
  EXPECT_EQ(ok["memories_added"], 1);
}

// The same backup posted to the server's /v1/import goes back into the
// scopes it names (in the key's tenant), not into the request's user.
TEST(Backup, AnExportPostedToTheServerRestoresItsScopes) {
  Home source;
  source.Ok({"--user", "alice", "turn", "add", "I live in Porto", "Nice city"});
  source.Ok({"--user", "alice", "turn", "add", "I work at the harbour", "Busy place"});
  source.Ok({"--user", "bob", "--assistant", "coach", "turn", "add", "I run on Sundays", "Great habit"});
  const std::string backup = source.Ok({"export", "--all"});
  ASSERT_FALSE(backup.empty());

  et::TempDir home;
  et::ServerProcess server(ENGRAM_BINARY, home.path(), {}, et::kNoModelEnv);
  ASSERT_TRUE(server.started()) << server.output();
  auto c = server.Client(server.admin_key());
  auto r = c->Post("/v1/import?user=carol", backup, "application/x-ndjson");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  auto turns_of = [&](const std::string& query) {
    auto t = c->Get(("/v1/turns?" + query).c_str());
    EXPECT_TRUE(t && t->status == 200) << (t ? t->body : "no answer");
    return t ? json::parse(t->body, nullptr, false).value("turns", json::array()) : json::array();
  };
  const json alice = turns_of("user=alice");
  ASSERT_EQ(alice.size(), 2u) << alice.dump();
  EXPECT_EQ(alice[0].value("user_text", ""), "I live in Porto");
  EXPECT_EQ(turns_of("user=bob&assistant=coach").size(), 1u);
  EXPECT_EQ(turns_of("user=carol").size(), 0u) << "the export was merged into the request's user";
  EXPECT_EQ(server.Stop(), 0) << server.output();
}

}  // namespace
