// End-to-end tests of the engram binary: import the samples, maintain, stats,
// retrieve, export and re-import, LoCoMo conservation, erasure, and the exit
// codes and output contract (one JSON document with --json, one stderr line
// per error). Each test runs the real binary in a fresh ENGRAM_HOME.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "store/open.hpp"
#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace {

namespace et = engram::testing;
using nlohmann::json;

const std::string kSourceDir = ENGRAM_SOURCE_DIR;
const std::string kMemoryOs = kSourceDir + "/../shared/data/memoryos_sample_conversations.json";
const std::string kLocomo = kSourceDir + "/../shared/data/locomo10.json";
const std::string kDialogue = kSourceDir + "/samples/dialogue.jsonl";

// A fresh store: every Run uses its own ENGRAM_HOME, nothing from the caller's
// environment (ENGRAM_DB, ENGRAM_USER) leaks in.
class Home {
 public:
  et::ProcessResult Run(std::vector<std::string> args, const std::string& input = "") const {
    args.insert(args.begin(), ENGRAM_BINARY);
    return et::RunProcess(args, input, {"ENGRAM_HOME=" + dir_.path(), "ENGRAM_DB=", "ENGRAM_USER="});
  }
  const std::string& Dir() const { return dir_.path(); }
  std::string File(const std::string& name) const { return dir_.File(name); }

 private:
  et::TempDir dir_;
};

std::string Describe(const et::ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "") + "\nstderr: " + r.err +
         "\nstdout: " + r.out.substr(0, 1500);
}

// stdout as exactly one JSON document (nlohmann rejects trailing content);
// discarded when it is not.
json OneJson(const et::ProcessResult& r) { return json::parse(r.out, nullptr, /*allow_exceptions=*/false); }

// Runs a command that must succeed with --json and returns its document.
json RunJson(const Home& home, std::vector<std::string> args) {
  args.push_back("--json");
  auto r = home.Run(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  json j = OneJson(r);
  EXPECT_TRUE(j.is_object()) << "not one JSON object: " << Describe(r);
  return j.is_object() ? j : json::object();
}

// A failed run: the exit code, nothing on stdout, one "engram: " line on stderr
// that contains `needle`.
void ExpectError(const et::ProcessResult& r, int code, const std::string& needle) {
  EXPECT_EQ(r.exit_code, code) << Describe(r);
  EXPECT_EQ(r.out, "") << Describe(r);
  EXPECT_EQ(r.err.rfind("engram: ", 0), 0u) << Describe(r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr is not one line: " << r.err;
  EXPECT_FALSE(r.err.empty() || r.err.back() != '\n') << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr does not name " << needle << ": " << r.err;
}

// Every line of `out` must be a JSON object; returns those of type "turn".
std::vector<json> ExportedTurns(const std::string& out) {
  std::vector<json> turns;
  std::istringstream in(out);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    json j = json::parse(line, nullptr, false);
    EXPECT_TRUE(j.is_object()) << "export line " << n << " is not a JSON object: " << line.substr(0, 200);
    if (j.is_object() && j.value("type", "") == "turn") turns.push_back(std::move(j));
  }
  return turns;
}

std::vector<json> Export(const Home& home, std::vector<std::string> args = {}) {
  args.insert(args.begin(), "export");
  auto r = home.Run(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  return ExportedTurns(r.out);
}

std::int64_t TurnsAdmitted(const Home& home, std::vector<std::string> args = {}) {
  args.insert(args.begin(), "stats");
  json s = RunJson(home, args);
  return s.value("turns_admitted", std::int64_t{-1});
}

struct Exchange {
  std::string user, assistant;
};

// The whole life of one sample file: import, maintain, stats, retrieve (JSON
// and human), export, and a re-import of the export into a fresh home.
void CheckSampleLifecycle(const std::string& file, const std::vector<Exchange>& source) {
  const auto expected = static_cast<std::int64_t>(source.size());
  Home home;
  json imp = RunJson(home, {"import", file});
  EXPECT_EQ(imp["turns_admitted"], expected);
  json maint = RunJson(home, {"maintain"});
  EXPECT_EQ(maint["jobs_failed"], 0);

  json s = RunJson(home, {"stats"});
  EXPECT_EQ(s["turns_admitted"], expected);
  ASSERT_TRUE(s["stm_turns"].is_number() && s["mtm_pages"].is_number() && s["archived_pages"].is_number()) << s;
  EXPECT_EQ(s["stm_turns"].get<std::int64_t>() + s["mtm_pages"].get<std::int64_t>() +
                s["archived_pages"].get<std::int64_t>(),
            expected)
      << s;
  EXPECT_GT(s["mtm_pages"].get<std::int64_t>() + s["archived_pages"].get<std::int64_t>(), 0) << s;
  EXPECT_EQ(s["pending_jobs"], 0);
  EXPECT_EQ(s["failed_jobs"], 0);

  json ret = RunJson(home, {"retrieve", "flights to Hanoi"});
  ASSERT_TRUE(ret["items"].is_array()) << ret;
  int hanoi = 0;
  for (const auto& item : ret["items"]) {
    if (item.value("text", "").find("Hanoi") == std::string::npos) continue;
    ++hanoi;
    EXPECT_TRUE(item.contains("event_time") && item["event_time"].is_string()) << item;
    EXPECT_TRUE(std::regex_search(item.value("event_time", ""), std::regex(R"(^\d{4}-\d\d-\d\dT)"))) << item;
  }
  EXPECT_GT(hanoi, 0) << ret.dump(2).substr(0, 2000);
  EXPECT_NE(ret.value("context", "").find("Hanoi"), std::string::npos);

  auto human = home.Run({"retrieve", "flights to Hanoi"});
  EXPECT_EQ(human.exit_code, 0) << Describe(human);
  EXPECT_TRUE(std::regex_search(human.out, std::regex(R"(\b\d{1,2} (January|February|March|April|May|June|July|)"
                                                      R"(August|September|October|November|December) \d{4}\b)")))
      << human.out.substr(0, 1000);

  auto exp = home.Run({"export"});
  ASSERT_EQ(exp.exit_code, 0) << Describe(exp);
  std::vector<json> turns = ExportedTurns(exp.out);
  ASSERT_EQ(turns.size(), source.size());
  for (std::size_t i = 0; i < turns.size(); ++i) {  // the texts of the file, in its order
    EXPECT_EQ(turns[i]["user_text"], source[i].user) << "turn " << i;
    EXPECT_EQ(turns[i]["assistant_text"], source[i].assistant) << "turn " << i;
  }

  Home other;
  const std::string backup = other.File("backup.jsonl");
  et::WriteFile(backup, exp.out);
  json reimp = RunJson(other, {"import", backup, "--format", "jsonl"});
  EXPECT_EQ(reimp["turns_admitted"], expected);
  EXPECT_EQ(TurnsAdmitted(other), expected);
  // The same file imported again (a rerun restore) admits nothing twice.
  json twice = RunJson(other, {"import", backup, "--format", "jsonl"});
  EXPECT_EQ(twice["turns_admitted"], 0);
  EXPECT_EQ(twice["turns_already_imported"], expected);
  EXPECT_EQ(TurnsAdmitted(other), expected);
  std::vector<json> again = Export(other);
  ASSERT_EQ(again.size(), turns.size());
  for (std::size_t i = 0; i < again.size(); ++i) {
    for (const char* k : {"user_text", "assistant_text", "event_time", "source_ref", "metadata"}) {
      EXPECT_EQ(again[i][k], turns[i][k]) << "turn " << i << " field " << k;
    }
  }
}

TEST(Cli, MemoryOsSampleLifecycle) {
  if (!std::filesystem::exists(kMemoryOs)) GTEST_SKIP() << kMemoryOs << " is absent";
  json doc = json::parse(et::ReadFile(kMemoryOs));
  std::vector<Exchange> source;
  for (const auto& e : doc) source.push_back({e["user_input"].get<std::string>(), e["agent_response"].get<std::string>()});
  ASSERT_EQ(source.size(), 69u);
  CheckSampleLifecycle(kMemoryOs, source);
}

TEST(Cli, DialogueSampleLifecycle) {
  ASSERT_TRUE(std::filesystem::exists(kDialogue)) << kDialogue;
  std::vector<Exchange> source;
  std::istringstream in(et::ReadFile(kDialogue));
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(line);
    source.push_back({j["user"].get<std::string>(), j["assistant"].get<std::string>()});
  }
  ASSERT_GT(source.size(), 20u);
  CheckSampleLifecycle(kDialogue, source);
}

TEST(Cli, LocomoImportConservesEveryUtterance) {
  if (!std::filesystem::exists(kLocomo)) GTEST_SKIP() << kLocomo << " is absent";
  json doc = json::parse(et::ReadFile(kLocomo));
  std::multiset<std::string> source_ids;
  for (const auto& sample : doc) {
    if (sample.value("sample_id", "") != "conv-26") continue;
    for (const auto& [key, value] : sample["conversation"].items()) {
      if (!std::regex_match(key, std::regex(R"(session_\d+)")) || !value.is_array()) continue;
      for (const auto& u : value) source_ids.insert(u["dia_id"].get<std::string>());
    }
  }
  ASSERT_GT(source_ids.size(), 100u) << "conv-26 not found in " << kLocomo;

  Home home;
  json imp = RunJson(home, {"import", kLocomo, "--conversations", "conv-26"});
  ASSERT_EQ(imp["scopes"].size(), 1u) << imp;
  EXPECT_EQ(imp["scopes"][0]["user"], "conv-26");
  EXPECT_EQ(imp["scopes"][0]["source_utterances"], source_ids.size());

  std::vector<json> turns = Export(home, {"--user", "conv-26"});
  std::multiset<std::string> exported;
  for (const auto& t : turns) {
    std::istringstream ref(t.value("source_ref", ""));
    int n = 0;
    for (std::string id; std::getline(ref, id, ',');) exported.insert(id), ++n;
    EXPECT_TRUE(n == 1 || n == 2) << t;  // a turn is one exchange: one or two utterances
  }
  EXPECT_EQ(exported.size(), source_ids.size());
  for (const auto& id : exported) EXPECT_EQ(exported.count(id), 1u) << id << " exported more than once";
  EXPECT_EQ(exported, source_ids);
  // Only conv-26 was admitted.
  EXPECT_EQ(TurnsAdmitted(home), static_cast<std::int64_t>(turns.size()));
  // Each side's own utterance id survives export and re-import.
  for (const auto& t : turns) {
    std::string sides = t.value("user_source_ref", "") + "," + t.value("assistant_source_ref", "");
    EXPECT_NE(sides, ",") << t;
  }
  Home other;
  const std::string backup = other.File("backup.jsonl");
  std::string lines;
  for (const auto& t : turns) lines += t.dump() + "\n";
  et::WriteFile(backup, lines);
  RunJson(other, {"import", backup, "--format", "jsonl", "--user", "conv-26"});
  std::vector<json> again = Export(other, {"--user", "conv-26"});
  ASSERT_EQ(again.size(), turns.size());
  for (std::size_t i = 0; i < again.size(); ++i) {
    for (const char* k : {"source_ref", "user_source_ref", "assistant_source_ref", "user_name"}) {
      EXPECT_EQ(again[i].value(k, ""), turns[i].value(k, "")) << "turn " << i << " field " << k;
    }
  }
}

TEST(Cli, TurnAddWithTimeThenStats) {
  Home home;
  auto r = home.Run({"turn", "add", "I moved to Lisbon last week.", "Welcome to Lisbon!", "--time",
                     "2026-03-02T09:00:00Z", "--user", "alice"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  json s = RunJson(home, {"stats", "--user", "alice"});
  EXPECT_EQ(s["turns_admitted"], 1);
  EXPECT_EQ(s["stm_turns"], 1);
  EXPECT_EQ(TurnsAdmitted(home, {"--user", "bob"}), 0);
  std::vector<json> turns = Export(home, {"--user", "alice"});
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0]["event_time"], "2026-03-02T09:00:00Z");
  EXPECT_EQ(turns[0]["user_text"], "I moved to Lisbon last week.");
}

// An empty context says why: an empty scope, a budget too small for anything
// the scope holds, or (the whole context otherwise) what it holds.
// A store this process cannot write (read-only media, another user's files)
// is read: stats, export and retrieve work; a write fails with one clear line
// and exit 1, and changes nothing. As root (CI), the reads run as nobody, for
// whom the modes hold.
TEST(Cli, AReadOnlyStoreIsRead) {
  Home home;
  ASSERT_EQ(home.Run({"turn", "add", "--user", "ann", "I keep bees on my roof.", "Lovely!"}).exit_code, 0);
  ASSERT_EQ(home.Run({"memory", "add", "--user", "ann", "--no-infer", "Ann keeps bees"}).exit_code, 0);
  const std::string db = home.Dir() + "/engram.db";
  ASSERT_TRUE(std::filesystem::exists(db));
  ASSERT_FALSE(std::filesystem::exists(db + "-wal"));  // checkpointed when the last connection closed
  std::vector<std::string> as = {};
  if (geteuid() == 0) {
    for (const char* p : {"/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"}) {
      if (access(p, X_OK) == 0) as = {p, "-u", "nobody", "--"};
    }
    ASSERT_FALSE(as.empty()) << "running as root and runuser is not installed";
  }
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), ENGRAM_BINARY);
    args.insert(args.begin(), as.begin(), as.end());
    return et::RunProcess(args, "", {"ENGRAM_HOME=" + home.Dir(), "ENGRAM_DB=", "ENGRAM_USER="});
  };
  namespace fs = std::filesystem;
  fs::permissions(db, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(home.Dir(), fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                  fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  struct Restore {
    std::string dir;
    ~Restore() { fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add); }
  } restore{home.Dir()};
  auto stats = run({"stats", "--json"});
  ASSERT_EQ(stats.exit_code, 0) << Describe(stats);
  EXPECT_EQ(OneJson(stats)["turns_admitted"], 1) << stats.out;
  auto exported = run({"export", "--user", "ann"});
  ASSERT_EQ(exported.exit_code, 0) << Describe(exported);
  EXPECT_NE(exported.out.find("I keep bees on my roof."), std::string::npos);
  auto memories = run({"memory", "list", "--user", "ann"});
  ASSERT_EQ(memories.exit_code, 0) << Describe(memories);
  EXPECT_NE(memories.out.find("Ann keeps bees"), std::string::npos) << memories.out;
  auto context = run({"retrieve", "--user", "ann", "bees"});
  ASSERT_EQ(context.exit_code, 0) << Describe(context);
  EXPECT_NE(context.out.find("bees"), std::string::npos);
  auto write = run({"turn", "add", "--user", "ann", "One more", "ok"});
  EXPECT_EQ(write.exit_code, 1) << Describe(write);
  EXPECT_NE(write.err.find("read-only"), std::string::npos) << write.err;
  EXPECT_EQ(std::count(write.err.begin(), write.err.end(), '\n'), 1) << write.err;
  EXPECT_FALSE(fs::exists(db + "-wal"));
  EXPECT_EQ(OneJson(run({"stats", "--json"}))["turns_admitted"], 1);
}

TEST(Cli, AnEmptyContextSaysWhy) {
  Home home;
  ASSERT_EQ(home.Run({"turn", "add", "I moved to Lisbon last week.", "Welcome to Lisbon!", "--user", "alice"})
                .exit_code,
            0);
  auto empty = home.Run({"retrieve", "where do I live?", "--user", "bob"});
  EXPECT_EQ(empty.exit_code, 0) << Describe(empty);
  EXPECT_EQ(empty.out, "(no memory for this scope yet)\n");
  auto tight = home.Run({"retrieve", "where do I live?", "--user", "alice", "--budget", "5"});
  EXPECT_EQ(tight.exit_code, 0) << Describe(tight);
  EXPECT_EQ(tight.out, "(nothing fits a budget of 5 tokens: raise --budget)\n");
  auto roomy = home.Run({"retrieve", "where do I live?", "--user", "alice"});
  EXPECT_NE(roomy.out.find("I moved to Lisbon last week."), std::string::npos) << Describe(roomy);
}

TEST(Cli, UsageErrorsExitTwoWithOneLine) {
  Home home;
  ExpectError(home.Run({"turn", "add", "hello", "hi", "--time", "not-a-time"}), 2, "--time");
  ExpectError(home.Run({"frobnicate"}), 2, "engram");
  ExpectError(home.Run({}), 2, "subcommand");
  ExpectError(home.Run({"stats", "--no-such-option"}), 2, "--no-such-option");
  ExpectError(home.Run({"turn", "add", "only the user text"}), 2, "ASSISTANT_TEXT");
  ExpectError(home.Run({"retrieve"}), 2, "QUERY");
  ExpectError(home.Run({"import"}), 2, "FILE");
  ExpectError(home.Run({"retrieve", "x", "--budget", "-1"}), 2, "--budget");
  ExpectError(home.Run({"import", kDialogue, "--format", "yaml"}), 2, "--format");
  ExpectError(home.Run({"turn", "add", "a", "b", "--metadata", "[1]"}), 2, "metadata");
  EXPECT_EQ(TurnsAdmitted(home), 0);
}

// A URL was taken for a file path: `--db postgresql://engram@localhost/engram
// keys create` succeeded and created the folders "postgresql:/engram@localhost".
TEST(Cli, StoreUrlsAreNeverTakenForPaths) {
  Home home;
  const auto before = std::filesystem::exists("postgresql:") || std::filesystem::exists("mysql:");
  ASSERT_FALSE(before) << "leftovers in the working directory";
  ExpectError(home.Run({"--db", "mysql://root@localhost/engram", "stats"}), 2, "unsupported scheme");
  ExpectError(home.Run({"--db", "mysql://root@localhost/engram", "keys", "create", "--tenant", "t"}), 2,
              "unsupported scheme");
  // Port 1 refuses at once: a clear error, never a file.
  auto pg = home.Run({"--db", "postgresql://engram:s3cret@127.0.0.1:1/engram", "keys", "create", "--tenant", "t"});
  EXPECT_NE(pg.exit_code, 0) << Describe(pg);
  EXPECT_NE(pg.err.find("postgresql://engram:***@127.0.0.1:1/engram"), std::string::npos) << Describe(pg);
  EXPECT_EQ(pg.err.find("s3cret"), std::string::npos) << "the password is never printed";
  EXPECT_FALSE(std::filesystem::exists("postgresql:"));
  EXPECT_FALSE(std::filesystem::exists("mysql:"));
  EXPECT_FALSE(std::filesystem::exists(home.File("engram.db")));
}

TEST(Cli, ImportOfAMissingFileExitsOneAndNamesIt) {
  Home home;
  const std::string path = home.File("no-such-dialogue.jsonl");
  ExpectError(home.Run({"import", path}), 1, path);
  ExpectError(home.Run({"import", home.File("")}), 1, "directory");  // a directory reads as nothing
}

TEST(Cli, ImportWithABadLineAdmitsNothing) {
  Home home;
  // (A store with one turn of another user: stats on a missing store is an error.)
  ASSERT_EQ(home.Run({"turn", "add", "zero", "0", "--user", "other"}).exit_code, 0);
  const std::string path = home.File("bad.jsonl");
  et::WriteFile(path,
                "{\"user\": \"one\", \"assistant\": \"1\"}\n"
                "{\"user\": \"two\", \"assistant\": \"2\"}\n"
                "{\"user\": \"three\" \"assistant\": \"3\"}\n"
                "{\"user\": \"four\", \"assistant\": \"4\"}\n");
  ExpectError(home.Run({"import", path}), 2, "line 3");
  EXPECT_EQ(TurnsAdmitted(home), 1);

  // A turn the parser accepts but admission refuses (blank texts), after more
  // than one import batch of good turns: still nothing admitted.
  std::string text;
  for (int i = 0; i < 700; ++i) text += "{\"user\": \"u" + std::to_string(i) + "\", \"assistant\": \"a\"}\n";
  text += "{\"user\": \"  \", \"assistant\": \"\"}\n";
  et::WriteFile(path, text);
  ExpectError(home.Run({"import", path}), 2, "turn 701");
  EXPECT_EQ(TurnsAdmitted(home), 1);
}

TEST(Cli, JsonOutputIsExactlyOneDocument) {
  Home home;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"import", kDialogue, "--json"},
           {"--json", "maintain"},
           {"stats", "--json"},
           {"--json", "stats", "--user", "default"},
           {"retrieve", "flights to Hanoi", "--json"},
           {"--json", "retrieve", "where does the user live?", "--budget", "300"},
           {"profile", "--json"},
           {"version", "--json"},
           {"--json", "version"}}) {
    auto r = home.Run(args);
    std::string cmd;
    for (const auto& a : args) cmd += a + " ";
    EXPECT_EQ(r.exit_code, 0) << cmd << Describe(r);
    EXPECT_TRUE(OneJson(r).is_object()) << cmd << Describe(r);
    EXPECT_EQ(r.err, "") << cmd;
  }
  // Errors with --json: nothing on stdout, one line on stderr.
  ExpectError(home.Run({"--json", "retrieve", ""}), 2, "query");
}

TEST(Cli, ForgetErasesOneUserOnly) {
  Home home;
  for (const auto& [user, text] : std::vector<std::pair<std::string, std::string>>{
           {"alice", "I live in Porto."}, {"alice", "I have a cat named Miso."}, {"bob", "I live in Oslo."}}) {
    auto r = home.Run({"turn", "add", text, "Noted.", "--user", user});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
  }
  ExpectError(home.Run({"forget"}), 2, "--user");
  EXPECT_EQ(TurnsAdmitted(home, {"--user", "alice"}), 2);

  json f = RunJson(home, {"forget", "--user", "alice"});
  EXPECT_EQ(f["turns_erased"], 2);
  json s = RunJson(home, {"stats", "--user", "alice"});
  EXPECT_EQ(s["turns_admitted"], 0);
  EXPECT_EQ(s["stm_turns"], 0);
  EXPECT_TRUE(Export(home, {"--user", "alice"}).empty());
  auto ret = home.Run({"retrieve", "where do I live?", "--user", "alice", "--json"});
  ASSERT_EQ(ret.exit_code, 0) << Describe(ret);
  EXPECT_EQ(ret.out.find("Porto"), std::string::npos) << ret.out;

  EXPECT_EQ(TurnsAdmitted(home, {"--user", "bob"}), 1);
  std::vector<json> bob = Export(home, {"--user", "bob"});
  ASSERT_EQ(bob.size(), 1u);
  EXPECT_EQ(bob[0]["user_text"], "I live in Oslo.");
  EXPECT_EQ(TurnsAdmitted(home), 1);
}

TEST(Cli, ProfileJsonAfterMaintain) {
  Home home;
  json imp = RunJson(home, {"import", kDialogue, "--user", "priya"});
  ASSERT_EQ(imp["scopes"].size(), 1u) << imp;
  EXPECT_EQ(imp["scopes"][0]["user"], "priya");
  RunJson(home, {"maintain"});
  json p = RunJson(home, {"profile", "--user", "priya"});
  EXPECT_EQ(p["user"], "priya");
  ASSERT_TRUE(p["profile"].is_array()) << p;
  ASSERT_TRUE(p["user_facts"].is_array()) << p;
  ASSERT_TRUE(p["assistant_facts"].is_array()) << p;
  for (const auto& slot : p["profile"]) {
    EXPECT_TRUE(slot["dimension"].is_string() && slot["value"].is_string()) << slot;
  }
  // The sample tells four facts of its user at four times: the order check
  // below has something to order.
  ASSERT_GE(p["user_facts"].size(), 2u) << p;
  std::string last;  // facts in the order they happened (ISO-8601 sorts as text)
  for (const auto& fact : p["user_facts"]) {
    EXPECT_EQ(fact["kind"], "user");
    EXPECT_FALSE(fact.value("text", "").empty()) << fact;
    EXPECT_LE(last, fact.value("event_time", "")) << p["user_facts"];
    last = fact.value("event_time", "");
  }
  // The profile shows what stats counts.
  json s = RunJson(home, {"stats", "--user", "priya"});
  EXPECT_EQ(s["profile_slots"], p["profile"].size());
  EXPECT_EQ(s["user_facts"], p["user_facts"].size());
  EXPECT_EQ(s["assistant_facts"], p["assistant_facts"].size());
}

// Facts are listed in the order they happened, whatever order they were
// admitted and consolidated in (the text and the JSON alike).
TEST(Cli, ProfileListsFactsInTheOrderTheyHappened) {
  Home home;
  const char* cities[] = {"Porto", "Lyon",  "Turin", "Ghent", "Bergen", "Graz",   "Split", "Cork", "Basel",
                          "Malmo", "Leeds", "Nice",  "Bonn",  "Pisa",   "Lille", "Brno",  "Riga", "Oslo"};
  for (int i = 0; i < 18; ++i) {  // admitted newest first: the 18th of March, then the 17th, ...
    const std::string day = (18 - i < 10 ? "0" : "") + std::to_string(18 - i);
    auto r = home.Run({"turn", "add", std::string("I visited ") + cities[i] + " with my sister.", "Lovely.",
                       "--time", "2026-03-" + day + "T10:00:00Z", "--user", "zed"});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
  }
  RunJson(home, {"maintain"});
  json p = RunJson(home, {"profile", "--user", "zed"});
  ASSERT_GE(p["user_facts"].size(), 2u) << p;
  std::string last;
  for (const auto& fact : p["user_facts"]) {
    EXPECT_LE(last, fact.value("event_time", "")) << p["user_facts"];
    last = fact.value("event_time", "");
  }
  auto text = home.Run({"profile", "--user", "zed"});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  const auto first = text.out.find(p["user_facts"][0].value("text", ""));
  const auto second = text.out.find(p["user_facts"][1].value("text", ""));
  ASSERT_NE(first, std::string::npos) << text.out;
  EXPECT_LT(first, second) << text.out;
}

// JSON nested deeper than 128 levels is refused where it enters, before it
// is parsed: an import file with 100,000-deep metadata crashed `engram import`
// (the recursive printing of the metadata). Each is exit 2 with one line
// naming the limit (and the line of the file); nothing is written.
TEST(Cli, DeeplyNestedJsonIsRefusedAndNothingIsWritten) {
  Home home;
  ASSERT_EQ(home.Run({"turn", "add", "I live in Porto.", "Noted.", "--user", "alice"}).exit_code, 0);
  auto before = home.Run({"export", "--all"});
  ASSERT_EQ(before.exit_code, 0) << Describe(before);
  auto nested = [](int depth) {
    return std::string(static_cast<std::size_t>(depth), '[') + std::string(static_cast<std::size_t>(depth), ']');
  };
  const std::string deep = nested(100000);

  const std::string jsonl = home.File("deep.jsonl");
  et::WriteFile(jsonl, "{\"user\": \"fine\", \"assistant\": \"ok\"}\n"
                       "{\"user\": \"deep\", \"assistant\": \"x\", \"metadata\": {\"k\": " + deep + "}}\n");
  ExpectError(home.Run({"import", jsonl}), 2, "line 2: JSON nested deeper than 128 levels");
  ExpectError(home.Run({"import", jsonl, "--format", "jsonl", "--user", "alice"}), 2, "nested deeper than 128");
  const std::string memoryos = home.File("deep.json");
  et::WriteFile(memoryos, "[{\"user_input\": \"a\", \"agent_response\": \"b\"},\n {\"user_input\": " + deep + "}]");
  ExpectError(home.Run({"import", memoryos}), 2, "element 1 (line 2): JSON nested deeper than 128 levels");
  ExpectError(home.Run({"import", memoryos, "--format", "locomo"}), 2, "sample 1 (line 2): JSON nested deeper");
  // An export's memory line.
  et::WriteFile(jsonl, "{\"type\": \"fact\", \"kind\": \"memory\", \"user_id\": \"alice\", \"text\": \"t\", "
                       "\"metadata\": {\"k\": " + deep + "}}\n");
  ExpectError(home.Run({"import", jsonl}), 2, "line 1: JSON nested deeper than 128 levels");

  // Arguments and stdin (an argument is at most 128 KiB: 50,000 levels).
  const std::string arg = "{\"k\": " + nested(50000) + "}";
  ExpectError(home.Run({"turn", "add", "a", "b", "--metadata", arg}), 2, "--metadata: JSON nested deeper than 128");
  ExpectError(home.Run({"memory", "add", "x", "--no-infer", "--user", "alice", "--metadata", arg}), 2,
              "--metadata: JSON nested deeper than 128");
  ExpectError(home.Run({"memory", "add", "--user", "alice", "--messages", "-"}, "[{\"content\": \"x\", \"k\": " + deep + "}]"),
              2, "--messages: JSON nested deeper than 128");
  ExpectError(home.Run({"memory", "search", "porto", "--user", "alice", "--filters", arg}), 2,
              "--filters: JSON nested deeper than 128");
  ExpectError(home.Run({"memory", "list", "--user", "alice", "--filters", arg}), 2, "--filters: JSON nested");
  ExpectError(home.Run({"memory", "update", "m_0123456789abcdef", "--user", "alice", "--metadata", arg}), 2,
              "--metadata: JSON nested");

  auto after = home.Run({"export", "--all"});
  ASSERT_EQ(after.exit_code, 0) << Describe(after);
  EXPECT_EQ(after.out, before.out) << "the store changed";
  // 128 levels in all are accepted.
  const std::string at_limit = "{\"k\": " + nested(127) + "}";
  auto ok = home.Run({"turn", "add", "a", "b", "--metadata", at_limit, "--user", "alice"});
  EXPECT_EQ(ok.exit_code, 0) << Describe(ok);
}

// `--home ""` silently used the default home: an empty --home or --db is a
// usage error, and nothing is created anywhere.
TEST(Cli, EmptyHomeDbOrIdIsAUsageError) {
  Home home;
  ExpectError(home.Run({"--home", "", "stats"}), 2, "--home");
  ExpectError(home.Run({"stats", "--home", ""}), 2, "must not be empty");
  ExpectError(home.Run({"stats", "--home="}), 2, "--home");
  ExpectError(home.Run({"--db", "", "turn", "add", "a", "b"}), 2, "--db");
  EXPECT_TRUE(std::filesystem::is_empty(home.Dir())) << "something was created in the default home";
  // An empty id is not the default user: a script's unset $U must not erase
  // the default user's memory.
  ASSERT_EQ(home.Run({"memory", "add", "--no-infer", "The default user's memory"}).exit_code, 0);
  ExpectError(home.Run({"memory", "purge", "--all", "--user", ""}), 2, "--user: must not be empty");
  ExpectError(home.Run({"memory", "delete-all", "--agent", ""}), 2, "--agent: must not be empty");
  ExpectError(home.Run({"memory", "delete-all", "--run", ""}), 2, "--run: must not be empty");
  ExpectError(home.Run({"--user", "", "turn", "add", "a", "b"}), 2, "--user");
  auto kept = home.Run({"memory", "list", "--json"});
  ASSERT_EQ(kept.exit_code, 0) << Describe(kept);
  EXPECT_EQ(OneJson(kept)["results"].size(), 1u) << kept.out;
}

// Durability: full by default, normal on request, anything else refused
// before the store is touched.
TEST(Cli, DurabilityIsFullOrNormal) {
  Home home;
  ExpectError(home.Run({"--durability", "fast", "turn", "add", "a", "b"}), 2, "--durability");
  EXPECT_TRUE(std::filesystem::is_empty(home.Dir())) << "a refused command created something";
  auto normal = home.Run({"--durability", "normal", "turn", "add", "I moved to Porto", "Nice!"});
  EXPECT_EQ(normal.exit_code, 0) << Describe(normal);
  auto env = et::RunProcess({ENGRAM_BINARY, "turn", "add", "a", "b"}, "",
                            {"ENGRAM_HOME=" + home.Dir(), "ENGRAM_DB=", "ENGRAM_USER=", "ENGRAM_DURABILITY=sometimes"});
  EXPECT_EQ(env.exit_code, 2) << Describe(env);
  EXPECT_NE(env.err.find("durability: must be full or normal"), std::string::npos) << Describe(env);
  auto full = home.Run({"turn", "add", "And I work at the harbour", "Great"});
  EXPECT_EQ(full.exit_code, 0) << Describe(full);
}

// The commands that only read the store, or change or erase what it holds.
// `engram --home / stats` created /engram.db, and `forget` on a mistyped
// path reported an erasure on a new empty store: on a missing store they say
// so (exit 1, one line) and create nothing, neither the file nor the home
// directory.
const std::vector<std::vector<std::string>> kExistingStoreCommands = {
    {"stats"},
    {"stats", "--json"},
    {"retrieve", "where do I live?"},
    {"profile"},
    {"export"},
    {"export", "--all"},
    {"health"},
    {"health", "--verify"},
    {"memory", "search", "porto", "--user", "alice"},
    {"memory", "get", "m_0123456789abcdef", "--user", "alice"},
    {"memory", "list", "--user", "alice"},
    {"memory", "history", "m_0123456789abcdef", "--user", "alice"},
    {"keys", "list"},
    {"keys", "list", "--all-tenants"},
    {"keys", "revoke", "k_0123456789abcdef"},
    {"memory", "update", "m_0123456789abcdef", "--text", "Porto", "--user", "alice"},
    {"memory", "delete", "m_0123456789abcdef", "--user", "alice"},
    {"memory", "delete-all", "--user", "alice"},
    {"memory", "purge", "--all", "--user", "alice"},
    {"forget", "--user", "alice"}};

std::string Joined(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

TEST(Cli, CommandsOnAMissingStoreCreateNothing) {
  Home home;
  et::TempDir dir;
  const std::string missing_home = dir.File("no/such/home");
  for (const auto& cmd : kExistingStoreCommands) {
    SCOPED_TRACE(Joined(cmd));
    // A home that does not exist: neither it nor its parents appear.
    std::vector<std::string> args = {"--home", missing_home};
    args.insert(args.end(), cmd.begin(), cmd.end());
    ExpectError(home.Run(args), 1, "no store at " + missing_home + "/engram.db (nothing was created)");
    EXPECT_FALSE(std::filesystem::exists(dir.File("no")));
    // A home that exists (like `--home /`): no store file appears in it.
    args = {"--home", dir.path()};
    args.insert(args.end(), cmd.begin(), cmd.end());
    ExpectError(home.Run(args), 1, "no store at " + dir.path() + "/engram.db");
    // --db naming a file that is not there.
    args = {"--db", dir.File("other.db")};
    args.insert(args.end(), cmd.begin(), cmd.end());
    ExpectError(home.Run(args), 1, "no store at " + dir.File("other.db"));
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "something was created";
    // The default home ($ENGRAM_HOME) too.
    ExpectError(home.Run(cmd), 1, "no store at " + home.File("engram.db"));
    EXPECT_TRUE(std::filesystem::is_empty(home.Dir())) << "something was created in the home";
  }
  // Once the store exists they work.
  ASSERT_EQ(home.Run({"turn", "add", "I live in Porto.", "Noted.", "--user", "alice"}).exit_code, 0);
  for (const auto& cmd : kExistingStoreCommands) {
    // No such memory or key: exit 1.
    const std::string verb = cmd.size() > 1 ? cmd[1] : "";
    if (verb == "get" || verb == "history" || verb == "update" || verb == "delete" || verb == "revoke") continue;
    auto r = home.Run(cmd);
    EXPECT_TRUE(r.exit_code == 0 || (cmd[0] == "health" && r.exit_code == 3)) << Joined(cmd) << ": " << Describe(r);
  }
}

// On PostgreSQL those commands must not create the schema in a database that
// has none.
TEST(Cli, CommandsOnAnEmptyPostgresDatabaseCreateNoSchema) {
  const std::string url = et::FreshPgDatabase();
  ASSERT_FALSE(url.empty());
  Home home;
  for (const auto& cmd : kExistingStoreCommands) {
    SCOPED_TRACE(Joined(cmd));
    std::vector<std::string> args = {"--db", url};
    args.insert(args.end(), cmd.begin(), cmd.end());
    ExpectError(home.Run(args), 1, "no engram store in " + engram::sql::RedactLocation(url) + " (nothing was created)");
    auto exists = engram::store::Exists(url);
    ASSERT_TRUE(exists.ok()) << exists.status().ToString();
    EXPECT_FALSE(*exists) << "the schema was created";
  }
  EXPECT_TRUE(std::filesystem::is_empty(home.Dir()));
  ASSERT_EQ(home.Run({"--db", url, "turn", "add", "I live in Porto.", "Noted."}).exit_code, 0);
  auto r = home.Run({"--db", url, "stats", "--json"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(OneJson(r).value("turns_admitted", -1), 1) << r.out;
}

}  // namespace
