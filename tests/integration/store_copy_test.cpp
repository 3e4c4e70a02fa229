// `engram store copy`: a store made by the engine (dialogues admitted and
// maintained, memories added, a user forgotten) copied SQLite -> PostgreSQL
// -> SQLite answers exactly like its source (stats, retrieval, memory search,
// export), and the copies give fresh ids to new rows; then the real binary end
// to end: the copy, its refusals and exit codes, read-only commands on the
// PostgreSQL copy, and no password in any output.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/clock.hpp"
#include "core/time.hpp"
#include "engram/engine.hpp"
#include "store/copy.hpp"
#include "testing/dialogue.hpp"
#include "testing/store_query.hpp"
#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"
#include "wire/json.hpp"

namespace engram {
namespace {

namespace et = engram::testing;
using nlohmann::json;

const Scope kAlice{"default", "alice", "assistant"};
const Scope kBob{"default", "bob", "assistant"};
const std::vector<std::string> kQueries = {"Where does my sister live?", "What instrument am I learning?",
                                           "Tell me about my pets", "When is the trip to Japan?"};

EngineOptions Options(const std::string& location, const Clock* clock) {
  EngineOptions o;
  o.db_path = location;
  o.stm_capacity = 6;
  o.promote_batch_max = 8;
  o.heat_threshold = 1.0;  // consolidate too, so that the store holds facts and a profile
  o.clock = clock;
  return o;
}

std::unique_ptr<Engine> Open(const std::string& location, const Clock* clock) {
  auto e = Engine::Open(Options(location, clock));
  EXPECT_TRUE(e.ok()) << location << ": " << e.status().ToString();
  return e.ok() ? std::move(e).value() : nullptr;
}

// What the engine answers about a store, as JSON text.
struct Answers {
  std::string stats;
  std::vector<std::string> retrievals, searches, explained;
  std::vector<std::string> export_lines;
};

Answers Ask(Engine& e) {
  Answers a;
  auto all = e.GetStats(nullptr);
  EXPECT_TRUE(all.ok());
  if (all.ok()) a.stats = wire::ToJson(*all).dump();
  for (const Scope& s : {kAlice, kBob}) {
    auto one = e.GetStats(&s);
    EXPECT_TRUE(one.ok());
    if (one.ok()) a.stats += wire::ToJson(*one).dump();
    for (const auto& q : kQueries) {
      RetrieveOptions o;
      o.budget_tokens = 600;
      auto r = e.Retrieve(s, q, o);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (r.ok()) a.retrievals.push_back(wire::RetrievalJson(q, 600, *r).dump());
      for (bool explain : {false, true}) {
        MemoryScope ms;
        ms.user = s.user;
        ms.include_narrower = true;
        MemorySearchOptions so;
        so.explain = explain;
        auto found = e.SearchMemories(ms, q, so);
        EXPECT_TRUE(found.ok()) << found.status().ToString();
        if (!found.ok()) continue;
        json items = json::array();
        for (const auto& m : *found) items.push_back(wire::ToJson(m));
        (explain ? a.explained : a.searches).push_back(items.dump());
      }
    }
  }
  EXPECT_TRUE(e.Export(nullptr, [&](const std::string& line) { a.export_lines.push_back(line); }).ok());
  return a;
}

std::int64_t Query(const std::string& location, const std::string& sql) { return testing::FirstInt(location, sql); }

TEST(StoreCopyEngine, ACopyAnswersLikeItsSourceAndTakesNewRows) {
  et::TempDir dir;
  FakeClock clock(MakeTimeMs(2025, 3, 1, 9));
  const std::string source = dir.File("source.db"), back = dir.File("back.db");
  const std::string pg = et::FreshPgDatabase();
  ASSERT_FALSE(pg.empty());
  {
    auto e = Open(source, &clock);
    ASSERT_TRUE(e);
    ASSERT_TRUE(e->AddTurns(kAlice, et::SyntheticDialogue(40)).ok());
    ASSERT_TRUE(e->AddTurns(kBob, et::SyntheticDialogue(25, MakeTimeMs(2025, 2, 1, 9))).ok());
    ASSERT_TRUE(e->Maintain(nullptr).ok());
    MemoryAddOptions verbatim;
    verbatim.infer = false;
    ASSERT_TRUE(e->AddMemoryText(MemoryScope{"default", "alice", "", "", false}, "Alice is vegetarian", verbatim).ok());
    ASSERT_TRUE(e->AddMemoryText(MemoryScope{"default", "alice", "travel-agent", "", false},
                                 "I prefer aisle seats on long flights", {})
                    .ok());
    ASSERT_TRUE(e->AddTurns(Scope{"default", "carol", "assistant"}, et::SyntheticDialogue(5)).ok());
    ASSERT_TRUE(e->ForgetUser("default", "carol").ok());  // the largest scope id, never to be given again
  }
  const std::int64_t carol = Query(source, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'scope_id_high'");
  ASSERT_GT(carol, Query(source, "SELECT max(id) FROM scopes"));
  ASSERT_GT(Query(source, "SELECT count(*) FROM profile_slots"), 0);
  ASSERT_GT(Query(source, "SELECT count(*) FROM facts"), 2);

  store::CopyOptions o;
  o.now_ms = clock.NowMs();
  auto to_pg = store::CopyStore(source, pg, o);
  ASSERT_TRUE(to_pg.ok()) << to_pg.status().ToString();
  auto to_back = store::CopyStore(pg, back, o);
  ASSERT_TRUE(to_back.ok()) << to_back.status().ToString();
  EXPECT_EQ(to_pg->rows, to_back->rows);

  Answers want, on_pg, on_back;
  for (auto [location, out] : {std::pair{source, &want}, {pg, &on_pg}, {back, &on_back}}) {
    auto e = Open(location, &clock);
    ASSERT_TRUE(e);
    *out = Ask(*e);
  }
  ASSERT_FALSE(want.export_lines.empty());
  int found = 0;
  for (const auto& s : want.searches) found += s != "[]";
  EXPECT_GT(found, 0) << "no search found anything: the comparison would prove little";
  for (const auto& r : want.retrievals) EXPECT_NE(json::parse(r)["context"], "") << r;
  for (const Answers* got : {&on_pg, &on_back}) {
    EXPECT_EQ(got->stats, want.stats);
    EXPECT_EQ(got->retrievals, want.retrievals);
    EXPECT_EQ(got->searches, want.searches);
    EXPECT_EQ(got->export_lines, want.export_lines);
  }
  // The score components include the full-text engine's own bm25, which
  // differs between the backends: the same backend gives the same.
  EXPECT_EQ(on_back.explained, want.explained);

  // New admissions, scopes, memories and maintenance on the copies: fresh
  // ids, no duplicate keys, and the forgotten scope's id stays unused.
  for (const auto& location : {pg, back}) {
    auto e = Open(location, &clock);
    ASSERT_TRUE(e);
    const Scope dave{"default", "dave", "assistant"};
    auto a = e->AddTurns(kAlice, et::SyntheticDialogue(12, MakeTimeMs(2025, 4, 1, 9)));
    ASSERT_TRUE(a.ok()) << location << ": " << a.status().ToString();
    auto d = e->AddTurns(dave, et::SyntheticDialogue(12));
    ASSERT_TRUE(d.ok()) << location << ": " << d.status().ToString();
    auto m = e->Maintain(nullptr);
    ASSERT_TRUE(m.ok()) << location << ": " << m.status().ToString();
    EXPECT_GT(m->promotions, 0);
    MemoryAddOptions verbatim;
    verbatim.infer = false;
    ASSERT_TRUE(e->AddMemoryText(MemoryScope{"default", "dave", "", "", false}, "Dave plays chess", verbatim).ok());
    auto s = e->GetStats(&dave);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->turns_admitted, 12);
    EXPECT_GT(Query(location, "SELECT id FROM scopes WHERE user_id = 'dave'"), carol);
    EXPECT_EQ(Query(location, "SELECT count(*) FROM turns"),
              Query(source, "SELECT count(*) FROM turns") + 24);
  }
}

// --- the binary ---

class CliStoreCopy : public ::testing::Test {
 protected:
  et::ProcessResult Run(std::vector<std::string> args, const std::string& stdin_text = "") const {
    args.insert(args.begin(), ENGRAM_BINARY);
    return et::RunProcess(args, stdin_text,
                          {"ENGRAM_HOME=" + dir_.path(), "ENGRAM_DB=", "ENGRAM_USER=priya", "ENGRAM_LLM_BASE_URL=",
                           "ENGRAM_LLM_MODEL=", "ENGRAM_EMBED_BASE_URL=", "ENGRAM_EMBED_MODEL="});
  }
  static std::string Describe(const et::ProcessResult& r) {
    return "exit " + std::to_string(r.exit_code) + "\nstderr: " + r.err + "\nstdout: " + r.out.substr(0, 2000);
  }
  // A --json command that must succeed; its document without the store's location.
  json Doc(std::vector<std::string> args) const {
    args.push_back("--json");
    auto r = Run(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    json j = json::parse(r.out, nullptr, false);
    EXPECT_TRUE(j.is_object()) << Describe(r);
    if (!j.is_object()) return json::object();
    j.erase("db");
    return j;
  }
  static int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

  et::TempDir dir_;
};

TEST_F(CliStoreCopy, CopiesToPostgresAndBackVerifiedAndReadOnlyCommandsAgree) {
  const std::string lite = dir_.File("engram.db");  // the default store of ENGRAM_HOME
  ASSERT_EQ(Run({"import", ENGRAM_SOURCE_DIR "/samples/dialogue.jsonl"}).exit_code, 0);
  ASSERT_EQ(Run({"maintain"}).exit_code, 0);
  ASSERT_EQ(Run({"--user", "priya", "memory", "add", "Priya is vegetarian", "--no-infer"}).exit_code, 0);
  const std::string base = et::FreshPgDatabase();
  ASSERT_FALSE(base.empty());
  const std::string secret = "hunter2secret";
  const std::string pg = base + "&password=" + secret;  // trust authentication ignores it

  // The current store (ENGRAM_HOME's) to PostgreSQL.
  auto r = Run({"store", "copy", "--to", pg, "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.find(secret), std::string::npos) << r.out;
  json copied = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(copied.is_object()) << r.out;
  EXPECT_EQ(copied["verified"], true);
  EXPECT_EQ(copied["source"], lite);
  EXPECT_NE(copied["target"].get<std::string>().find("password=***"), std::string::npos) << copied["target"];
  EXPECT_EQ(copied["table_count"], store::CopiedTables().size());
  EXPECT_GT(copied["rows"].get<int>(), 100);
  EXPECT_GT(copied["vector_bytes"].get<int>(), 0);
  std::int64_t sum = 0;
  for (const auto& t : copied["tables"]) sum += t["rows"].get<std::int64_t>();
  EXPECT_EQ(copied["rows"].get<std::int64_t>(), sum);

  // Read-only commands on the PostgreSQL copy say what they say on SQLite.
  EXPECT_EQ(Doc({"--db", pg, "stats"}), Doc({"stats"}));
  EXPECT_EQ(Doc({"--db", pg, "retrieve", "Where is the trip?"}), Doc({"retrieve", "Where is the trip?"}));
  EXPECT_EQ(Doc({"--db", pg, "--user", "priya", "memory", "search", "food"}),
            Doc({"--user", "priya", "memory", "search", "food"}));
  // (As of one time for both, after every receipt: health cannot be judged before its newest.)
  const std::string as_of = engram::FormatIso8601(engram::SystemClock::Default().NowMs() + 60 * 1000);
  EXPECT_EQ(Doc({"--db", pg, "health", "--as-of", as_of}), Doc({"health", "--as-of", as_of}));
  auto exp_pg = Run({"--db", pg, "export", "--all"});
  auto exp_lite = Run({"export", "--all"});
  ASSERT_EQ(exp_pg.exit_code, 0) << Describe(exp_pg);
  EXPECT_GT(Lines(exp_lite.out), 30);
  EXPECT_EQ(exp_pg.out, exp_lite.out);
  // ... and name the store without its password.
  for (const auto& args : std::vector<std::vector<std::string>>{{"--db", pg, "stats"},
                                                                {"--db", pg, "stats", "--json"},
                                                                {"--db", pg, "health"},
                                                                {"--db", pg, "health", "--json"}}) {
    auto out = Run(args);
    EXPECT_NE(out.out.find("password=***"), std::string::npos) << Describe(out);
    EXPECT_EQ((out.out + out.err).find(secret), std::string::npos) << Describe(out);
  }
  auto mcp = Run({"--db", pg, "mcp"});  // end of input at once
  EXPECT_EQ(mcp.exit_code, 0) << Describe(mcp);
  EXPECT_NE(mcp.err.find("password=***"), std::string::npos) << mcp.err;
  EXPECT_EQ(mcp.err.find(secret), std::string::npos) << mcp.err;

  // A second copy into the now full database is refused: one line, nothing written.
  auto again = Run({"store", "copy", "--from", lite, "--to", pg});
  EXPECT_EQ(again.exit_code, 1) << Describe(again);
  EXPECT_EQ(Lines(again.err), 1) << again.err;
  EXPECT_NE(again.err.find("is not empty"), std::string::npos) << again.err;
  EXPECT_EQ(again.err.find(secret), std::string::npos) << again.err;
  EXPECT_EQ(again.out, "");
  EXPECT_EQ(Doc({"--db", pg, "stats"}), Doc({"stats"}));

  // Back to a new SQLite file, text output.
  const std::string back = dir_.File("copies/back.db");
  auto home = Run({"--db", pg, "store", "copy", "--to", back});
  ASSERT_EQ(home.exit_code, 0) << Describe(home);
  EXPECT_NE(home.out.find("verified"), std::string::npos) << home.out;
  EXPECT_NE(home.out.find(" -> " + back), std::string::npos) << home.out;
  EXPECT_EQ(home.out.find(secret), std::string::npos) << home.out;
  EXPECT_EQ(Doc({"--db", back, "stats"}), Doc({"stats"}));
  EXPECT_EQ(Run({"--db", back, "export", "--all"}).out, exp_lite.out);
}

TEST_F(CliStoreCopy, RefusalsAndUsageErrors) {
  ASSERT_EQ(Run({"import", ENGRAM_SOURCE_DIR "/samples/dialogue.jsonl"}).exit_code, 0);
  const std::string lite = dir_.File("engram.db");
  auto expect_error = [&](std::vector<std::string> args, int code, const std::string& says) {
    auto r = Run(args);
    EXPECT_EQ(r.exit_code, code) << Describe(r);
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  };
  expect_error({"store", "copy", "--from", dir_.File("missing.db"), "--to", dir_.File("x.db")}, 1, "no store at");
  et::WriteFile(dir_.File("notes.txt"), "not a store\n");
  expect_error({"store", "copy", "--from", dir_.File("notes.txt"), "--to", dir_.File("x.db")}, 1, "source");
  expect_error({"store", "copy", "--to", lite}, 2, "same store");
  expect_error({"store", "copy", "--to", "mysql://root@h/engram"}, 2, "unsupported scheme");
  expect_error({"store", "copy", "--to", dir_.File("notes.txt")}, 1, "must be");
  expect_error({"store", "copy"}, 2, "--to");
  expect_error({"store"}, 2, "subcommand");
  EXPECT_FALSE(std::filesystem::exists(dir_.File("x.db")));

  // A PostgreSQL database that holds something else.
  const std::string pg = et::FreshPgDatabase();
  ASSERT_FALSE(pg.empty());
  {
    auto db = sql::Db::Open(pg, {});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("CREATE TABLE invoices(id INT)").ok());
  }
  expect_error({"store", "copy", "--to", pg}, 1, "not an empty engram store");
  // From it: not a store.
  expect_error({"store", "copy", "--from", pg, "--to", dir_.File("y.db")}, 1, "is not an engram store");
}

// `engram reembed` on a PostgreSQL location checks the database, not a file
// of that name, and never prints the password.
TEST_F(CliStoreCopy, ReembedFindsAPostgresStore) {
  const std::string pg = et::FreshPgDatabase();
  ASSERT_FALSE(pg.empty());
  const std::string url = pg + "&password=hunter2secret";
  auto none = Run({"--db", url, "reembed", "--builtin"});
  EXPECT_EQ(none.exit_code, 1) << Describe(none);
  EXPECT_NE(none.err.find("no store at postgresql://"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("password=***"), std::string::npos) << none.err;
  EXPECT_EQ(none.err.find("hunter2secret"), std::string::npos) << none.err;
  ASSERT_EQ(Run({"--db", url, "turn", "add", "I moved to Lisbon.", "Welcome!"}).exit_code, 0);
  auto r = Run({"--db", url, "reembed", "--builtin", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  json j = json::parse(r.out, nullptr, false);
  EXPECT_EQ(j["changed"], false) << r.out;
}

}  // namespace
}  // namespace engram
