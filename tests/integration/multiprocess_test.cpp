// Several engram processes on one store, on the real binary, on both backends
// (a SQLite file and a PostgreSQL database; each scenario runs on both): a
// server with its background worker while `engram maintain` runs again and
// again; `engram serve --no-worker` with `engram worker`s of which one is
// killed in the middle of a promotion; two servers and a worker of which a
// server and the worker are killed while clients admit through both; a user
// forgotten through one server while readers hammer both. Jobs are leased in
// the store (src/store/jobs.hpp).
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "testing/background_process.hpp"
#include "testing/fake_maintenance_model.hpp"
#include "testing/fake_openai_server.hpp"
#include "testing/server_process.hpp"
#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace {

namespace et = engram::testing;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kStmCapacity = 10;  // EngineOptions::stm_capacity, the default

json Body(const httplib::Result& r) { return r ? json::parse(r->body, nullptr, false) : json(); }

// One acknowledged turn: its scope's user, its sequence number and the unique
// marker in its text.
struct Acked {
  std::string user;
  std::int64_t seq = 0;
  std::string marker;
};

// What the admitting clients met on their way (shared by their threads).
struct AdmitCounters {
  std::atomic<int> busy{0};              // 503 with Retry-After, retried
  std::atomic<int> transport_errors{0};  // no answer, retried with the same key
  std::atomic<int> switches{0};          // ... on the other server
  std::atomic<int> replayed{0};          // 200 replayed: the first attempt had committed
};

// Stops (`stop`) and joins threads on every way out of a scope, ASSERT
// failures included.
class JoinOnExit {
 public:
  JoinOnExit(std::function<void()> stop, std::vector<std::thread>* threads)
      : stop_(std::move(stop)), threads_(threads) {}
  ~JoinOnExit() {
    stop_();
    for (auto& t : *threads_) {
      if (t.joinable()) t.join();
    }
  }
  JoinOnExit(const JoinOnExit&) = delete;
  JoinOnExit& operator=(const JoinOnExit&) = delete;

 private:
  std::function<void()> stop_;
  std::vector<std::thread>* threads_;
};

// Sends one HTTP request on a new loopback connection to `port` and leaves
// the answer unread (a client that will never see its acknowledgement);
// returns the socket to close, or -1.
int SendUnread(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return -1;
  }
  return fd;
}

// How many values of every table of a SQLite store contain `needle` (as
// text); -1 when the file cannot be read.
std::int64_t SqliteOccurrences(const std::string& path, const std::string& needle) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return -1;
  }
  auto rows = [db](const std::string& sql, const std::string& bind) {
    std::vector<std::string> out;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return std::vector<std::string>{"?"};
    if (!bind.empty()) sqlite3_bind_text(st, 1, bind.c_str(), -1, SQLITE_TRANSIENT);
    while (sqlite3_step(st) == SQLITE_ROW) {
      const auto* t = sqlite3_column_text(st, 0);
      out.push_back(t ? reinterpret_cast<const char*>(t) : "");
    }
    sqlite3_finalize(st);
    return out;
  };
  std::int64_t hits = 0;
  for (const auto& table : rows("SELECT name FROM sqlite_master WHERE type = 'table'", "")) {
    for (const auto& column : rows("SELECT name FROM pragma_table_info(?1)", table)) {
      auto n = rows("SELECT count(*) FROM \"" + table + "\" WHERE instr(CAST(\"" + column + "\" AS TEXT), ?1) > 0",
                    needle);
      if (n.size() != 1 || n[0] == "?") {
        hits = -1;
        break;
      }
      hits += std::stoll(n[0]);
    }
    if (hits < 0) break;
  }
  sqlite3_close(db);
  return hits;
}

class MultiProcessFixture : public ::testing::Test {
 protected:
  // The store of the test: the home's SQLite file (the default), or a fresh
  // PostgreSQL database that every process gets with --db.
  void UseBackend(const std::string& backend) {
    if (backend == "postgres") {
      pg_url_ = et::FreshPgDatabase();
      ASSERT_FALSE(pg_url_.empty());
    }
  }
  bool on_postgres() const { return !pg_url_.empty(); }
  std::vector<std::string> StoreArgs() const {
    return on_postgres() ? std::vector<std::string>{"--db", pg_url_} : std::vector<std::string>{};
  }
  // The store as the processes print it (no password in these URLs).
  std::string StoreLocation() const { return on_postgres() ? pg_url_ : dir_.File("engram.db"); }
  // `engram --home <home> [--db <url>] args...`
  std::vector<std::string> Command(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {ENGRAM_BINARY, "--home", dir_.path()};
    const auto store = StoreArgs();
    argv.insert(argv.end(), store.begin(), store.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  std::unique_ptr<et::ServerProcess> StartServer(std::vector<std::string> extra, const std::vector<std::string>& env) {
    const auto store = StoreArgs();
    extra.insert(extra.end(), store.begin(), store.end());
    return std::make_unique<et::ServerProcess>(ENGRAM_BINARY, dir_.path(), extra, env);
  }
  // `engram keys create` for a tenant; returns the key.
  std::string CreateKey(const std::string& tenant, const std::string& role) {
    auto r = et::RunProcess(Command({"--tenant", tenant, "keys", "create", "--role", role, "--json"}), "",
                            et::kNoModelEnv, std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return json::parse(r.out, nullptr, false).value("key", "");
  }
  // How many values of the store contain `needle` (-1: unreadable).
  std::int64_t StoreOccurrences(const std::string& needle) const {
    return on_postgres() ? et::PgOccurrences(pg_url_, needle) : SqliteOccurrences(StoreLocation(), needle);
  }

  std::unique_ptr<httplib::Client> NewClient() const { return server_->Client(server_->admin_key()); }
  json Get(const std::string& path) {
    auto r = NewClient()->Get(path.c_str());
    EXPECT_TRUE(r && r->status == 200) << path << ": " << (r ? r->body : httplib::to_string(r.error()));
    return Body(r);
  }

  // The body of a POST /v1/turns that admits one turn per marker for `user`.
  static std::string BatchBody(const std::string& user, const std::vector<std::string>& markers) {
    json turns = json::array();
    for (const auto& m : markers) {
      turns.push_back({{"user_text", "Note " + m + ": I planned something for day " + m.substr(m.size() - 2) + "."},
                       {"assistant_text", "Noted " + m + "."}});
    }
    return json({{"user", user}, {"turns", turns}}).dump();
  }

  // Admits `markers` for `user` in one request through `servers[*current]`
  // (retried with the same Idempotency-Key after a transport error, then on
  // the next server, which becomes current, and after a 503 with
  // Retry-After); records what was acknowledged. False when the server
  // refused the batch (the reason is added to `errors`).
  bool Admit(const std::vector<httplib::Client*>& servers, int* current, const std::string& user,
             const std::vector<std::string>& markers, const std::string& key, std::vector<Acked>* acked,
             AdmitCounters* counters, std::vector<std::string>* errors) {
    const std::string body = BatchBody(user, markers);
    for (int attempt = 0; attempt < 20; ++attempt) {
      auto r = servers[*current]->Post("/v1/turns", {{"Idempotency-Key", key}}, body, "application/json");
      if (!r) {  // the acknowledgement may have been lost: the retry with the same key is safe
        ++counters->transport_errors;
        if (servers.size() > 1) {
          *current = (*current + 1) % static_cast<int>(servers.size());
          ++counters->switches;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      if (r->status == 503 && r->has_header("Retry-After")) {
        ++counters->busy;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      const bool replayed = r->status == 200 && Body(r).value("replayed", false);
      if (r->status != 201 && !replayed) {
        errors->push_back(std::to_string(r->status) + " " + r->body);
        return false;
      }
      counters->replayed += replayed;
      const json j = Body(r);
      if (!j.contains("admitted") || j["admitted"].size() != markers.size()) {
        errors->push_back("unexpected answer: " + r->body);
        return false;
      }
      for (std::size_t i = 0; i < markers.size(); ++i) {
        acked->push_back({user, j["admitted"][i]["seq"].get<std::int64_t>(), markers[i]});
      }
      return true;
    }
    errors->push_back("no answer after 20 attempts for " + key);
    return false;
  }
  bool Admit(httplib::Client& c, const std::string& user, const std::vector<std::string>& markers,
             const std::string& key, std::vector<Acked>* acked, AdmitCounters* counters,
             std::vector<std::string>* errors) {
    int current = 0;
    return Admit({&c}, &current, user, markers, key, acked, counters, errors);
  }

  // Every acknowledged turn is in its user's turn log exactly once (same seq,
  // same text), the log holds nothing else, and its seqs are 1, 2, 3, ...
  void ExpectEveryAcknowledgedTurnOnce(const std::vector<Acked>& acked) {
    std::map<std::string, std::map<std::string, std::int64_t>> want;  // user -> marker -> seq
    for (const auto& a : acked) {
      EXPECT_TRUE(want[a.user].emplace(a.marker, a.seq).second) << "acknowledged twice: " << a.marker;
    }
    const std::regex marker_re(R"(M-\d+-\d+)");
    for (const auto& [user, markers] : want) {
      std::map<std::string, std::vector<std::int64_t>> seen;
      std::int64_t after = 0, listed = 0;
      for (int page = 0; page < 100; ++page) {
        json j = Get("/v1/turns?user=" + user + "&limit=1000&after=" + std::to_string(after));
        for (const auto& t : j["turns"]) {
          std::smatch m;
          const std::string text = t.value("user_text", "");
          ASSERT_TRUE(std::regex_search(text, m, marker_re)) << text;
          seen[m.str()].push_back(t["seq"].get<std::int64_t>());
          ++listed;
          EXPECT_EQ(t["seq"].get<std::int64_t>(), listed) << "turn " << listed << " of " << user << ": " << t.dump();
        }
        if (j["next_after"].is_null()) break;
        after = j["next_after"].get<std::int64_t>();
      }
      EXPECT_EQ(listed, static_cast<std::int64_t>(markers.size())) << "turns of " << user;
      for (const auto& [marker, seq] : markers) {
        auto it = seen.find(marker);
        ASSERT_NE(it, seen.end()) << "acknowledged turn " << marker << " of " << user << " is missing";
        EXPECT_EQ(it->second, std::vector<std::int64_t>{seq}) << marker;
      }
    }
  }

  // Polls /v1/stats until no job is pending or leased (bounded); returns the
  // last stats.
  json WaitForJobsDone(std::chrono::seconds wait) {
    const auto deadline = Clock::now() + wait;
    json s;
    for (;;) {
      s = Get("/v1/stats");
      if (s.value("pending_jobs", -1) == 0 || Clock::now() >= deadline) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  void ExpectStmWithinCapacity(const std::set<std::string>& users) {
    for (const auto& u : users) {
      json s = Get("/v1/stats?user=" + u);
      EXPECT_LE(s.value("stm_turns", 1 << 30), kStmCapacity) << u << ": " << s.dump();
      EXPECT_EQ(s.value("failed_jobs", -1), 0) << u << ": " << s.dump();
    }
  }

  // The environment of a process whose models are the fake server's chat
  // model (the real HTTP client and LLM maintainer) and the built-in embedder.
  std::vector<std::string> ModelEnv(const et::FakeOpenAiServer& model) {
    et::WriteFile(dir_.File("engram.toml"), "[llm]\nmax_retries = 1\ntimeout_s = 20\n");
    return {"ENGRAM_LLM_BASE_URL=" + model.base_url(), "ENGRAM_LLM_MODEL=fake-model", "OPENAI_API_KEY=sk-test",
            "ENGRAM_EMBED_BASE_URL=", "ENGRAM_EMBED_MODEL=", "ENGRAM_DB=", "NO_PROXY=127.0.0.1",
            "no_proxy=127.0.0.1"};
  }

  // Starts `engram serve --no-worker` and admits kTurnsPerUser turns for each
  // of kUsers users, in batches of 3 (kTurnsPerUser - kStmCapacity beyond STM).
  static constexpr int kUsers = 4, kTurnsPerUser = 30;
  void StartServerOnlyAndAdmit(const std::vector<std::string>& env, std::vector<Acked>* acked) {
    server_ = StartServer({"--no-worker"}, env);
    ASSERT_TRUE(server_->started()) << server_->output();
    std::vector<std::string> errors;
    AdmitCounters counters;
    auto c = NewClient();
    for (int u = 0; u < kUsers; ++u) {
      for (int n = 0; n < kTurnsPerUser; n += 3) {
        std::vector<std::string> markers;
        for (int i = n; i < n + 3; ++i) {
          char m[32];
          std::snprintf(m, sizeof m, "M-%d-%03d", u, i);
          markers.push_back(m);
        }
        ASSERT_TRUE(Admit(*c, "u" + std::to_string(u), markers, "u" + std::to_string(u) + "-" + std::to_string(n),
                          acked, &counters, &errors))
            << errors.back();
      }
    }
  }

  // The turn markers of a page analysis request ("Pages, oldest first:",
  // one turn per page, once each: the user's words), in order; empty for
  // any other request.
  static std::vector<std::string> Analysed(const std::string& body) {
    static const std::regex page_marker_re(R"(Note (M-\d+-\d+):)");
    std::vector<std::string> out;
    const std::string prompt = et::LastUserMessage(json::parse(body, nullptr, false));
    const auto from = prompt.find("Pages, oldest first:");
    if (from == std::string::npos) return out;
    const std::string pages = prompt.substr(from, prompt.find("\nFor every page") - from);
    for (std::sregex_iterator it(pages.begin(), pages.end(), page_marker_re), end; it != end; ++it) {
      out.push_back((*it)[1].str());
    }
    return out;
  }

  // The markers of the users' turns that left STM.
  std::set<std::string> PromotedMarkers(const std::set<std::string>& users) {
    const std::regex marker_re(R"(M-\d+-\d+)");
    std::set<std::string> promoted;
    for (const auto& u : users) {
      std::int64_t after = 0;
      for (int page = 0; page < 100; ++page) {
        json j = Get("/v1/turns?user=" + u + "&limit=1000&after=" + std::to_string(after));
        for (const auto& t : j["turns"]) {
          std::smatch m;
          const std::string text = t.value("user_text", "");
          if (t.value("tier", "") != "stm" && std::regex_search(text, m, marker_re)) promoted.insert(m.str());
        }
        if (j["next_after"].is_null()) break;
        after = j["next_after"].get<std::int64_t>();
      }
    }
    return promoted;
  }

  // Model calls, after a worker that had made `killed_requests` requests
  // (the first of them a page analysis, in flight when it was killed) was
  // replaced by another. Each promotion batch asks the model once to analyse
  // its pages (the prompt lists them after "Pages, oldest first:", one turn
  // per page), then once to summarise the topics they joined. What we assert:
  //  - the killed worker's in-flight request was the analysis of a batch,
  //    which never committed (its turns stayed in STM);
  //  - the replacement analysed every promoted turn exactly once: no page of
  //    its analyses repeats, and together they are exactly the turns that
  //    left STM; so no batch was paid for twice;
  //  - the only turns analysed twice overall are those of the killed
  //    worker's in-flight batch, each exactly twice (the batch was redone,
  //    not lost).
  // Returns the promoted markers.
  std::set<std::string> ExpectOnlyTheKilledBatchPaidTwice(const et::FakeOpenAiServer& model, int killed_requests,
                                                          const std::set<std::string>& users) {
    const auto bodies = model.chat_bodies();
    EXPECT_GE(bodies.size(), static_cast<std::size_t>(killed_requests));
    if (bodies.size() < static_cast<std::size_t>(killed_requests) || killed_requests < 1) return {};
    const auto in_flight_list = Analysed(bodies[killed_requests - 1]);
    const std::set<std::string> in_flight(in_flight_list.begin(), in_flight_list.end());
    EXPECT_FALSE(in_flight.empty()) << "the request in flight was not a page analysis";
    std::map<std::string, int> by_second;
    std::map<std::string, int> consolidated;  // "[page N]" -> consolidation prompts naming it
    int analyses = 0, summaries = 0, consolidations = 0, other = 0;
    const std::regex page_re(R"(\[page \d+\])");
    for (std::size_t i = killed_requests; i < bodies.size(); ++i) {
      const std::string prompt = et::LastUserMessage(json::parse(bodies[i], nullptr, false));
      if (auto list = Analysed(bodies[i]); !list.empty()) {
        ++analyses;
        for (const auto& m : list) ++by_second[m];
      } else if (prompt.find("{\"segments\": [") != std::string::npos) {
        ++summaries;
      } else if (prompt.find("\"user_facts\"") != std::string::npos) {
        ++consolidations;
        for (std::sregex_iterator it(prompt.begin(), prompt.end(), page_re), end; it != end; ++it) {
          ++consolidated[it->str()];
        }
      } else {
        ++other;
      }
    }
    const std::set<std::string> promoted = PromotedMarkers(users);
    for (const auto& [m, n] : by_second) EXPECT_EQ(n, 1) << m << " analysed " << n << " times by the second worker";
    std::set<std::string> second_set;
    for (const auto& [m, n] : by_second) second_set.insert(m);
    EXPECT_EQ(second_set, promoted);
    for (const auto& m : in_flight) EXPECT_TRUE(promoted.count(m)) << m << " of the killed batch was not promoted";
    // One topic summary per committed batch; every page consolidated at most
    // once; no other request (no retry).
    EXPECT_EQ(summaries, analyses);
    for (const auto& [page, n] : consolidated) EXPECT_EQ(n, 1) << page << " consolidated " << n << " times";
    EXPECT_EQ(other, 0);
    std::printf("model requests: %d by the killed worker (in flight: %zu turns); by the second worker %d page "
                "analyses, %d topic summaries, %d consolidations, %d other; %zu turns promoted\n",
                killed_requests, in_flight.size(), analyses, summaries, consolidations, other, promoted.size());
    return promoted;
  }

  et::TempDir dir_;
  std::string pg_url_;  // empty on SQLite
  std::unique_ptr<et::ServerProcess> server_, server2_;
};

// The scenarios, on each backend.
class MultiProcess : public MultiProcessFixture, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { UseBackend(GetParam()); }
};
INSTANTIATE_TEST_SUITE_P(Backends, MultiProcess, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

// How stores are named and options checked.
class MultiProcessSetup : public MultiProcessFixture {};

// One server (with its background maintenance) and 25 `engram maintain` runs
// in a row on its store while two clients admit turns over HTTP.
TEST_P(MultiProcess, MaintainRunsBesideAServingProcessLoseAndDuplicateNothing) {
  server_ = StartServer({}, et::kNoModelEnv);
  ASSERT_TRUE(server_->started()) << server_->output();
  ASSERT_FALSE(server_->admin_key().empty());

  constexpr int kClientUsers = 5, kMinPerClient = 120, kMaxPerClient = 300;
  std::atomic<bool> maintaining{true};
  AdmitCounters counters;
  std::mutex mu;
  std::vector<Acked> acked;
  std::vector<std::string> errors;
  auto client = [&](int id) {
    auto c = NewClient();
    int n = 0;
    for (int batch = 0; n < kMaxPerClient && (maintaining || n < kMinPerClient); ++batch) {
      const int size = 1 + (batch + id) % 3;
      const std::string user = "u" + std::to_string((batch * 3 + id) % kClientUsers);
      std::vector<std::string> markers;
      for (int i = 0; i < size; ++i, ++n) {
        char m[32];
        std::snprintf(m, sizeof m, "M-%d-%03d", id, n);
        markers.push_back(m);
      }
      std::vector<Acked> mine;
      std::vector<std::string> my_errors;
      const bool ok = Admit(*c, user, markers, "c" + std::to_string(id) + "-b" + std::to_string(batch), &mine,
                            &counters, &my_errors);
      {
        std::lock_guard<std::mutex> lock(mu);
        acked.insert(acked.end(), mine.begin(), mine.end());
        errors.insert(errors.end(), my_errors.begin(), my_errors.end());
      }
      if (!ok) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    }
  };
  std::thread a(client, 0), b(client, 1);

  const std::vector<std::string> maintain = Command({"maintain"});
  int promoting_runs = 0;
  for (int i = 0; i < 25; ++i) {
    auto r = et::RunProcess(maintain, "", et::kNoModelEnv, std::chrono::seconds(60));
    promoting_runs += r.out.rfind("promoted 0 turns", 0) == std::string::npos;
    EXPECT_EQ(r.exit_code, 0) << "run " << i << ": " << r.out << r.err;
    // No error text of either backend (lock timeouts, constraint violations,
    // serialisation failures, deadlocks), and nothing at all on stderr.
    for (const char* text : {"database is locked", "UNIQUE constraint failed", "duplicate key", "deadlock",
                             "could not serialize", "ERROR", "rror:"}) {
      EXPECT_EQ((r.out + r.err).find(text), std::string::npos) << "run " << i << ": " << r.out << r.err;
    }
    EXPECT_EQ(r.err, "") << "run " << i;
  }
  const std::size_t acked_while_maintaining = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return acked.size();
  }();
  maintaining = false;
  a.join();
  b.join();
  EXPECT_TRUE(errors.empty()) << errors.size() << " refused admissions, first: " << errors.front();
  std::printf("%zu turns acknowledged (%zu during the maintain runs), %d busy answers (503) retried; %d of 25 "
              "maintain runs promoted turns\n",
              acked.size(), acked_while_maintaining, counters.busy.load(), promoting_runs);
  EXPECT_GT(acked_while_maintaining, 0u);  // the admissions overlapped the maintain runs

  auto last = et::RunProcess(maintain, "", et::kNoModelEnv, std::chrono::seconds(60));
  EXPECT_EQ(last.exit_code, 0) << last.out << last.err;
  // The server's own worker may hold a job the last run had to pass over.
  json stats = WaitForJobsDone(std::chrono::seconds(30));
  EXPECT_EQ(stats.value("pending_jobs", -1), 0) << stats.dump();
  EXPECT_EQ(stats.value("failed_jobs", -1), 0) << stats.dump();
  EXPECT_EQ(stats.value("turns_admitted", -1), static_cast<std::int64_t>(acked.size())) << stats.dump();
  EXPECT_GE(acked.size(), 2u * kMinPerClient);

  ExpectEveryAcknowledgedTurnOnce(acked);
  std::set<std::string> users;
  for (const auto& t : acked) users.insert(t.user);
  EXPECT_EQ(users.size(), static_cast<std::size_t>(kClientUsers));
  ExpectStmWithinCapacity(users);

  EXPECT_EQ(server_->Stop(), 0) << server_->output();
}

// `engram serve --no-worker` admits; `engram worker --job-lease 3` maintains
// with a real LLM client against the fake model server and is SIGKILLed while
// its first promotion waits for the model; a second worker takes the job over.
TEST_P(MultiProcess, AWorkerKilledDuringAPromotionIsReplacedWithoutLossOrDoublePayment) {
  et::FakeOpenAiServer model;
  ASSERT_TRUE(model.ok());
  model.SetChatResponder([](const json& req) { return et::MaintenanceReply(req, "ok"); });
  const auto env = ModelEnv(model);
  std::vector<Acked> acked;
  ASSERT_NO_FATAL_FAILURE(StartServerOnlyAndAdmit(env, &acked));
  // Nothing maintains yet: one pending promotion per user, every turn in STM.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // longer than a worker's idle wait
  json before = Get("/v1/stats");
  EXPECT_EQ(before.value("stm_turns", -1), kUsers * kTurnsPerUser) << before.dump();
  EXPECT_EQ(before.value("pending_jobs", -1), kUsers) << before.dump();
  EXPECT_EQ(model.chat_requests(), 0);

  // The first model request stalls (its answer would come after 30 s; the
  // worker is killed long before): it is the analysis of the first batch.
  et::FakeReply stall = et::FakeOpenAiServer::ChatReply("{}");
  stall.delay_ms = 30000;
  model.QueueChat(stall);
  const std::vector<std::string> worker = Command({"worker", "--job-lease", "3"});
  auto first = std::make_unique<et::Background>(worker, env);
  ASSERT_TRUE(first->WaitFor("SIGTERM or SIGINT stops it\n", std::chrono::seconds(30))) << first->output();
  EXPECT_NE(first->output().find(StoreLocation()), std::string::npos) << first->output();
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (model.chat_requests() == 0 && Clock::now() < deadline && !first->exited()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(model.chat_requests(), 1) << first->output();
  json leased = Get("/v1/jobs");
  int leased_jobs = 0;
  for (const auto& j : leased["jobs"]) leased_jobs += j.value("status", "") == "leased";
  EXPECT_EQ(leased_jobs, 1) << leased.dump();  // the promotion in flight
  EXPECT_EQ(first->Stop(SIGKILL), -1);         // killed and reaped
  // A worker runs one batch at a time, so the killed one had exactly this
  // request in flight (and no other was made before it).
  const int killed_requests = model.chat_requests();
  ASSERT_EQ(killed_requests, 1);

  auto second = std::make_unique<et::Background>(worker, env);
  ASSERT_TRUE(second->WaitFor("SIGTERM or SIGINT stops it\n", std::chrono::seconds(30)))
      << second->output();
  json stats = WaitForJobsDone(std::chrono::seconds(45));
  EXPECT_EQ(stats.value("pending_jobs", -1), 0) << stats.dump() << second->output();
  EXPECT_EQ(stats.value("failed_jobs", -1), 0) << stats.dump();
  EXPECT_EQ(Get("/v1/jobs?status=failed")["jobs"].size(), 0u);
  EXPECT_EQ(second->Stop(SIGTERM), 0) << second->output();
  EXPECT_NE(second->output().find("engram worker: stopped"), std::string::npos) << second->output();

  ExpectEveryAcknowledgedTurnOnce(acked);
  std::set<std::string> users;
  for (const auto& t : acked) users.insert(t.user);
  ExpectStmWithinCapacity(users);
  const auto promoted = ExpectOnlyTheKilledBatchPaidTwice(model, killed_requests, users);
  EXPECT_EQ(promoted.size(), static_cast<std::size_t>(kUsers * (kTurnsPerUser - kStmCapacity)));

  EXPECT_EQ(server_->Stop(), 0) << server_->output();
}

// SIGTERM reaches a worker while its first promotion waits for the model: it
// finishes that job (and the rest of its maintenance run) before it exits 0,
// so no job stays leased and nothing is analysed twice.
TEST_P(MultiProcess, AWorkerStoppedBySigtermFinishesTheJobInProgress) {
  std::atomic<int> arrived{0};
  et::FakeOpenAiServer model;
  ASSERT_TRUE(model.ok());
  model.SetChatResponder([&arrived](const json& req) {
    if (arrived++ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // a slow first answer
    return et::MaintenanceReply(req, "ok");
  });
  const auto env = ModelEnv(model);
  std::vector<Acked> acked;
  ASSERT_NO_FATAL_FAILURE(StartServerOnlyAndAdmit(env, &acked));
  et::Background worker(Command({"worker"}), env);
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (arrived == 0 && Clock::now() < deadline && !worker.exited()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(arrived.load(), 1) << worker.output();
  EXPECT_EQ(worker.Stop(SIGTERM), 0) << worker.output();
  EXPECT_NE(worker.output().find("engram worker: stopped"), std::string::npos) << worker.output();

  json jobs = Get("/v1/jobs");
  for (const auto& j : jobs["jobs"]) EXPECT_NE(j.value("status", ""), "leased") << jobs.dump();
  EXPECT_EQ(jobs.value("failed", -1), 0) << jobs.dump();
  ExpectEveryAcknowledgedTurnOnce(acked);
  const auto bodies = model.chat_bodies();
  ASSERT_FALSE(bodies.empty());
  const auto first = Analysed(bodies[0]);
  EXPECT_FALSE(first.empty()) << "the slow request was not a page analysis";
  std::map<std::string, int> times;
  for (const auto& b : bodies) {
    for (const auto& m : Analysed(b)) ++times[m];
  }
  for (const auto& [m, n] : times) EXPECT_EQ(n, 1) << m << " analysed " << n << " times";
  std::set<std::string> in_stm;
  for (int u = 0; u < kUsers; ++u) {
    // A named copy: the loop must not iterate inside a temporary.
    const json turns = Get("/v1/turns?user=u" + std::to_string(u) + "&limit=1000").value("turns", json::array());
    for (const auto& t : turns) {
      if (t.value("tier", "") == "stm") in_stm.insert(t.value("user_text", ""));
    }
  }
  for (const auto& m : first) {  // the batch in flight at the signal was committed
    for (const auto& text : in_stm) EXPECT_EQ(text.find(m + ":"), std::string::npos) << m << " is still in STM";
  }
  EXPECT_EQ(server_->Stop(), 0) << server_->output();
}

// Two `engram serve --no-worker` and one `engram worker --job-lease 3` (an
// LLM maintainer against the fake model server) on one store; four clients
// admit batches for six users through both servers. In the middle one server
// is SIGKILLed (its clients retry their unacknowledged batch on the other one
// with the same Idempotency-Key; one batch it committed was never
// acknowledged, and its retry is a replay), then the worker is SIGKILLed while its
// first promotion waits for the model, and a new worker is started. At the
// end every acknowledged turn is there once, in seq order without gaps;
// every job is done, none failed; STM is within capacity for every user; and
// only the killed worker's in-flight batch was paid for twice.
TEST_P(MultiProcess, TwoServersAndAWorkerLoseNothingWhenAServerAndTheWorkerAreKilled) {
  et::FakeOpenAiServer model;
  ASSERT_TRUE(model.ok());
  model.SetChatResponder([](const json& req) { return et::MaintenanceReply(req, "ok"); });
  // The first model request stalls (its answer would come after 30 s; the
  // worker is killed long before): the analysis of the first batch.
  et::FakeReply stall = et::FakeOpenAiServer::ChatReply("{}");
  stall.delay_ms = 30000;
  model.QueueChat(stall);
  const auto env = ModelEnv(model);
  server_ = StartServer({"--no-worker"}, env);  // survives
  ASSERT_TRUE(server_->started()) << server_->output();
  server2_ = StartServer({"--no-worker"}, env);  // killed in the middle
  ASSERT_TRUE(server2_->started()) << server2_->output();
  ASSERT_EQ(server2_->admin_key(), server_->admin_key());  // one store: the first start's key
  const std::vector<std::string> worker = Command({"worker", "--job-lease", "3"});
  auto first = std::make_unique<et::Background>(worker, env);
  ASSERT_TRUE(first->WaitFor("SIGTERM or SIGINT stops it\n", std::chrono::seconds(30))) << first->output();

  constexpr int kClients = 4, kClientUsers = 6, kMaxPerClient = 990;  // markers have 3 digits
  std::atomic<bool> admitting{true};
  AdmitCounters counters;
  std::mutex mu;
  std::vector<Acked> acked;
  std::vector<std::string> errors;
  auto acked_count = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return acked.size();
  };
  auto client = [&](int id) {
    auto a = server_->Client(server_->admin_key());
    auto b = server2_->Client(server2_->admin_key());
    const std::vector<httplib::Client*> servers = {a.get(), b.get()};
    int current = id % 2;  // clients 1 and 3 start on the server that is killed
    int n = 0;
    for (int batch = 0; n < kMaxPerClient && admitting; ++batch) {
      const int size = 1 + (batch + id) % 3;
      const std::string user = "u" + std::to_string((batch + id) % kClientUsers);  // each user through both
      std::vector<std::string> markers;
      for (int i = 0; i < size; ++i, ++n) {
        char m[32];
        std::snprintf(m, sizeof m, "M-%d-%03d", id, n);
        markers.push_back(m);
      }
      std::vector<Acked> mine;
      std::vector<std::string> my_errors;
      const bool ok = Admit(servers, &current, user, markers, "c" + std::to_string(id) + "-b" + std::to_string(batch),
                            &mine, &counters, &my_errors);
      {
        std::lock_guard<std::mutex> lock(mu);
        acked.insert(acked.end(), mine.begin(), mine.end());
        errors.insert(errors.end(), my_errors.begin(), my_errors.end());
      }
      if (!ok) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(60));  // about 130 turns a second in all
    }
  };
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) clients.emplace_back(client, i);
  JoinOnExit join([&] { admitting = false; }, &clients);
  auto wait_until = [](const std::function<bool()>& done, std::chrono::seconds wait) {
    const auto deadline = Clock::now() + wait;
    while (!done() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return done();
  };

  // The worker's first promotion waits for the model; admissions go on.
  ASSERT_TRUE(wait_until([&] { return model.chat_requests() > 0 || first->exited(); }, std::chrono::seconds(30)));
  ASSERT_EQ(model.chat_requests(), 1) << first->output();
  ASSERT_TRUE(wait_until([&] { return acked_count() >= 150; }, std::chrono::seconds(30))) << acked_count();

  // A server dies under its clients, who go on through the other one. One
  // batch sent to it has committed but its acknowledgement was never read:
  // its retry through the other server with the same key is a replay.
  const std::vector<std::string> lost = {"M-9-000", "M-9-001", "M-9-002", "M-9-003"};
  const std::string lost_body = BatchBody("v", lost);
  const int lost_fd = SendUnread(server2_->port(), "POST /v1/turns HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                                   "Authorization: Bearer " + server2_->admin_key() + "\r\n"
                                                   "Idempotency-Key: lost-ack\r\n"
                                                   "Content-Type: application/json\r\n"
                                                   "Content-Length: " + std::to_string(lost_body.size()) +
                                                   "\r\n\r\n" + lost_body);
  ASSERT_GE(lost_fd, 0);
  EXPECT_TRUE(wait_until([&] { return Get("/v1/turns?user=v")["turns"].size() == lost.size(); },
                         std::chrono::seconds(30)));
  EXPECT_EQ(server2_->Stop(SIGKILL), -1);  // killed and reaped
  close(lost_fd);
  const std::size_t at_server_kill = acked_count();
  {
    AdmitCounters retried;
    auto c = NewClient();
    std::vector<Acked> mine;
    std::vector<std::string> refused;
    ASSERT_TRUE(Admit(*c, "v", lost, "lost-ack", &mine, &retried, &refused)) << refused.back();
    EXPECT_EQ(retried.replayed.load(), 1);
    std::lock_guard<std::mutex> lock(mu);
    acked.insert(acked.end(), mine.begin(), mine.end());
  }
  ASSERT_TRUE(wait_until([&] { return acked_count() >= at_server_kill + 90; }, std::chrono::seconds(30)))
      << acked_count() << " " << [&] {
           std::lock_guard<std::mutex> lock(mu);
           return errors.empty() ? std::string() : errors.front();
         }();

  // The worker dies with its promotion in flight (the only request it made:
  // it runs one batch at a time).
  json leased = Get("/v1/jobs");
  int leased_jobs = 0;
  for (const auto& j : leased["jobs"]) leased_jobs += j.value("status", "") == "leased";
  EXPECT_EQ(leased_jobs, 1) << leased.dump();
  EXPECT_EQ(first->Stop(SIGKILL), -1);
  const int killed_requests = model.chat_requests();
  ASSERT_EQ(killed_requests, 1);
  const std::size_t at_worker_kill = acked_count();

  auto second = std::make_unique<et::Background>(worker, env);
  ASSERT_TRUE(second->WaitFor("SIGTERM or SIGINT stops it\n", std::chrono::seconds(30))) << second->output();
  EXPECT_TRUE(wait_until([&] { return acked_count() >= at_worker_kill + 90; }, std::chrono::seconds(30)))
      << acked_count();
  admitting = false;
  for (auto& t : clients) t.join();
  EXPECT_TRUE(errors.empty()) << errors.size() << " refused admissions, first: " << errors.front();
  std::printf("%zu turns acknowledged (%zu before the server was killed, %zu before the worker was); "
              "%d transport errors, %d switches to the other server, %d replayed batches, %d busy answers\n",
              acked.size(), at_server_kill, at_worker_kill, counters.transport_errors.load(),
              counters.switches.load(), counters.replayed.load(), counters.busy.load());
  EXPECT_GE(counters.switches.load(), 2);  // both clients of the killed server moved

  json stats = WaitForJobsDone(std::chrono::seconds(45));
  EXPECT_EQ(stats.value("pending_jobs", -1), 0) << stats.dump() << second->output();
  EXPECT_EQ(stats.value("failed_jobs", -1), 0) << stats.dump();
  EXPECT_EQ(stats.value("turns_admitted", -1), static_cast<std::int64_t>(acked.size())) << stats.dump();
  EXPECT_EQ(Get("/v1/jobs?status=failed")["jobs"].size(), 0u);
  EXPECT_EQ(second->Stop(SIGTERM), 0) << second->output();
  EXPECT_NE(second->output().find("engram worker: stopped"), std::string::npos) << second->output();

  ExpectEveryAcknowledgedTurnOnce(acked);
  std::set<std::string> users;
  for (const auto& t : acked) users.insert(t.user);
  EXPECT_EQ(users.size(), static_cast<std::size_t>(kClientUsers) + 1);  // and "v"
  ExpectStmWithinCapacity(users);
  const auto promoted = ExpectOnlyTheKilledBatchPaidTwice(model, killed_requests, users);
  EXPECT_EQ(promoted.size() + static_cast<std::size_t>(stats.value("stm_turns", -1)), acked.size()) << stats.dump();

  EXPECT_EQ(server_->Stop(), 0) << server_->output();
}

// A user forgotten through one server while readers hammer both servers
// (retrieve, memory search and list, turn list, export; the user's turns and
// memories carry a marker word): from the moment the forget has answered, no
// answer of any route of either server (for that user, for a new user of the
// same id in another tenant, for another user of the tenant, exports)
// contains the marker, and no value of the store does. A promotion of the user's last
// batch may be in flight at the forget. Several rounds, the same user id
// coming back each round with a new marker.
TEST_P(MultiProcess, AForgottenUserIsGoneFromEveryAnswerOfEveryServerAtOnce) {
  server_ = StartServer({}, et::kNoModelEnv);
  ASSERT_TRUE(server_->started()) << server_->output();
  const std::string t1 = CreateKey("T1", "admin"), t2 = CreateKey("T2", "admin");
  ASSERT_FALSE(t1.empty());
  ASSERT_FALSE(t2.empty());
  server2_ = StartServer({}, et::kNoModelEnv);
  ASSERT_TRUE(server2_->started()) << server2_->output();
  const std::vector<et::ServerProcess*> servers = {server_.get(), server2_.get()};
  const std::string kUser = "ursula";  // in T1, forgotten each round; in T2 from round 0 on

  auto post = [](httplib::Client& c, const std::string& path, const json& body, const std::string& key = "") {
    httplib::Headers h;
    if (!key.empty()) h.emplace("Idempotency-Key", key);
    return c.Post(path.c_str(), h, body.dump(), "application/json");
  };
  auto turns_of = [](const std::string& words, int from, int count) {
    json turns = json::array();
    for (int k = from; k < from + count; ++k) {
      turns.push_back({{"user_text", "My locker code is " + words + ", note " + std::to_string(k) + "."},
                       {"assistant_text", "I will remember " + words + "."}});
    }
    return turns;
  };
  auto admit = [&](httplib::Client& c, const std::string& user, const json& turns, const std::string& key) {
    auto r = post(c, "/v1/turns", {{"user", user}, {"turns", turns}}, key);
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    ASSERT_EQ(r->status, 201) << r->body;
  };

  constexpr int kRounds = 6, kReaders = 4;
  std::vector<std::string> forgotten;  // the markers of earlier rounds
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string marker = std::string("zqvx") + static_cast<char>('a' + round) + "morbel";
    const std::string other = "victor" + std::to_string(round);  // another user of T1
    const std::string r = "r" + std::to_string(round);
    auto here = servers[round % 2]->Client(t1);  // writes and forgets
    auto there = servers[(round + 1) % 2]->Client(t1);

    // The user's dialogue, beyond STM so that it is promoted into pages and
    // segments, and a memory.
    for (int i = 0; i < 24; i += 4) {
      ASSERT_NO_FATAL_FAILURE(admit(*here, kUser, turns_of(marker, i, 4), r + "-u" + std::to_string(i)));
    }
    auto mem = post(*here, "/v1/memories",
                    {{"user", kUser}, {"text", "Ursula's locker code is " + marker}, {"infer", false}});
    ASSERT_TRUE(mem && mem->status == 201) << (mem ? mem->body : httplib::to_string(mem.error()));
    {
      const auto deadline = Clock::now() + std::chrono::seconds(30);
      json s;
      for (;;) {
        s = Body(here->Get(("/v1/stats?user=" + kUser).c_str()));
        if ((s.value("pending_jobs", -1) == 0 && s.value("stm_turns", 99) <= kStmCapacity) ||
            Clock::now() >= deadline) {
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      ASSERT_EQ(s.value("stm_turns", -1), kStmCapacity) << s.dump();  // 14 turns promoted
    }

    std::atomic<bool> stop{false}, forgot{false};
    std::atomic<int> marker_seen_before{0}, loops_after{0};
    std::mutex mu;
    std::vector<std::string> violations;
    std::map<std::string, int> statuses;  // "route status" -> answers after the forget
    auto reader = [&, marker, other](int id) {
      auto c1 = servers[id % 2]->Client(t1);
      auto c2 = servers[id % 2]->Client(t2);
      const std::string server_name = "server " + std::to_string(id % 2 + 1);
      // `strict`: the answer must not contain this round's marker (any
      // answer contains no marker of an earlier round).
      auto check = [&](const std::string& what, bool strict, bool after, const httplib::Result& res) {
        std::lock_guard<std::mutex> lock(mu);
        if (!res) {
          violations.push_back(server_name + ", " + what + ": no answer (" + httplib::to_string(res.error()) + ")");
          return;
        }
        if (after) ++statuses[what + " " + std::to_string(res->status)];
        if (res->status >= 500) violations.push_back(server_name + ", " + what + ": " + res->body);
        const bool has_marker = res->body.find(marker) != std::string::npos;
        if (has_marker && strict) {
          violations.push_back(server_name + ", " + what + (after ? " after the forget" : "") + ": " +
                               res->body.substr(0, 400));
        }
        if (has_marker && !after) ++marker_seen_before;
        for (const auto& m : forgotten) {
          if (res->body.find(m) != std::string::npos) {
            violations.push_back(server_name + ", " + what + ": marker " + m + " of an earlier round");
          }
        }
      };
      const json ask_u = {{"user", kUser}, {"query", "What is my locker code?"}};
      const json search_u = {{"user", kUser}, {"query", "locker code"}};
      const json ask_other = {{"user", other}, {"query", "What is my locker code?"}};
      const std::string list_u = "/v1/turns?user=" + kUser + "&limit=1000";
      while (!stop) {
        bool after = forgot;
        check("retrieve", after, after, post(*c1, "/v1/retrieve", ask_u));
        after = forgot;
        check("memory search", after, after, post(*c1, "/v1/memories/search", search_u));
        after = forgot;
        check("turn list", after, after, c1->Get(list_u.c_str()));
        after = forgot;
        check("memory list", after, after, c1->Get(("/v1/memories?user=" + kUser).c_str()));
        after = forgot;
        check("export", after, after, c1->Get("/v1/export"));
        after = forgot;
        check("T2 retrieve", true, after, post(*c2, "/v1/retrieve", ask_u));
        check("T2 memory search", true, after, post(*c2, "/v1/memories/search", search_u));
        check("T2 turn list", true, after, c2->Get(list_u.c_str()));
        check("T2 export", true, after, c2->Get("/v1/export"));
        check("other retrieve", true, after, post(*c1, "/v1/retrieve", ask_other));
        check("other turn list", true, after, c1->Get(("/v1/turns?user=" + other + "&limit=1000").c_str()));
        if (after) ++loops_after;
      }
    };
    std::vector<std::thread> readers;
    for (int i = 0; i < kReaders; ++i) readers.emplace_back(reader, i);
    JoinOnExit join([&] { stop = true; }, &readers);

    // The readers see the user (the test means something), then the user's
    // last batch starts a promotion and, a moment later, the user is
    // forgotten through the other server.
    auto deadline = Clock::now() + std::chrono::seconds(30);
    while (marker_seen_before == 0 && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GT(marker_seen_before.load(), 0);
    ASSERT_NO_FATAL_FAILURE(admit(*there, kUser, turns_of(marker, 24, 12), r + "-u24"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100 * (round % 4)));
    int conflicts = 0;
    auto gone = post(*here, "/v1/forget", {{"user", kUser}});
    while (gone && gone->status == 409 && ++conflicts < 20) {  // aborted: a concurrent change, retried
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      gone = post(*here, "/v1/forget", {{"user", kUser}});
    }
    ASSERT_TRUE(gone) << httplib::to_string(gone.error());
    ASSERT_EQ(gone->status, 200) << gone->body;
    forgot = true;
    EXPECT_EQ(Body(gone).value("turns_erased", -1), 36) << gone->body;

    // The same user id in T2 and another user of T1 get dialogue and memories.
    auto t2_client = servers[(round + 1) % 2]->Client(t2);
    ASSERT_NO_FATAL_FAILURE(admit(*t2_client, kUser, turns_of("4471 in locker B", 0, 12), r + "-t2"));
    auto mem2 = post(*t2_client, "/v1/memories",
                     {{"user", kUser}, {"text", "Ursula's locker code is 4471"}, {"infer", false}});
    EXPECT_TRUE(mem2 && mem2->status == 201) << (mem2 ? mem2->body : httplib::to_string(mem2.error()));
    ASSERT_NO_FATAL_FAILURE(admit(*here, other, turns_of("9034 in locker C", 0, 12), r + "-other"));

    // Every reader makes two more rounds of requests that start after the
    // forget answered.
    const int loops_at_forget = loops_after.load();
    deadline = Clock::now() + std::chrono::seconds(30);
    while (loops_after < loops_at_forget + 2 * kReaders && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_GE(loops_after.load(), loops_at_forget + 2 * kReaders);
    stop = true;
    for (auto& t : readers) t.join();

    EXPECT_TRUE(violations.empty()) << violations.size() << " violations, first: " << violations.front();
    std::string seen;
    for (const auto& [what, n] : statuses) seen += " " + what + ": " + std::to_string(n) + ";";
    std::printf("round %d: %d answers held the marker before the forget (%d conflicts); after it:%s\n", round,
                marker_seen_before.load(), conflicts, seen.c_str());
    json left = Body(there->Get(("/v1/turns?user=" + kUser + "&limit=1000").c_str()));
    EXPECT_TRUE(left["turns"].empty()) << left.dump();
    EXPECT_EQ(StoreOccurrences(marker), 0) << "the store still holds " << marker;
    forgotten.push_back(marker);
  }
  EXPECT_EQ(server2_->Stop(), 0) << server2_->output();
  EXPECT_EQ(server_->Stop(), 0) << server_->output();
}

// A store that is not a file: the first admin key goes to the home folder
// (created when missing), and no line shows the store's password. A worker
// runs on the same store and stops cleanly.
TEST_F(MultiProcessSetup, OnAPostgresStoreTheAdminKeyIsInTheHomeAndPasswordsAreHidden) {
  std::string url = et::FreshPgDatabase();
  ASSERT_FALSE(url.empty());
  const std::string user = "postgresql://engram@";
  ASSERT_EQ(url.rfind(user, 0), 0u) << url;
  url = "postgresql://engram:sekret-pw@" + url.substr(user.size());  // trust authentication ignores it
  const std::string home = dir_.File("home");
  std::vector<std::string> env = et::kNoModelEnv;
  server_ = std::make_unique<et::ServerProcess>(ENGRAM_BINARY, home, std::vector<std::string>{"--db", url}, env);
  ASSERT_TRUE(server_->started()) << server_->output();
  EXPECT_FALSE(server_->admin_key().empty()) << server_->output();
  struct stat st {};
  ASSERT_EQ(stat((home + "/admin.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(server_->output().find("saved to " + home + "/admin.key"), std::string::npos) << server_->output();

  et::Background worker({ENGRAM_BINARY, "--home", home, "--db", url, "worker", "--job-lease", "5"}, env);
  ASSERT_TRUE(worker.WaitFor("SIGTERM or SIGINT stops it\n", std::chrono::seconds(30))) << worker.output();
  EXPECT_NE(worker.output().find("postgresql://engram:***@"), std::string::npos) << worker.output();
  EXPECT_EQ(worker.Stop(SIGTERM), 0) << worker.output();
  EXPECT_EQ(server_->Stop(), 0) << server_->output();
  for (const std::string& out : {worker.output(), server_->output()}) {
    EXPECT_EQ(out.find("sekret-pw"), std::string::npos) << out;
  }
}

// A SQLite store named by a sqlite:// URL keeps its admin key next to the file.
TEST_F(MultiProcessSetup, AdminKeyOfASqliteUrlStoreIsNextToTheFile) {
  const std::string folder = dir_.File("data");
  server_ = std::make_unique<et::ServerProcess>(
      ENGRAM_BINARY, dir_.File("home"), std::vector<std::string>{"--db", "sqlite://" + folder + "/store.db"},
      et::kNoModelEnv);
  ASSERT_TRUE(server_->started()) << server_->output();
  EXPECT_NE(server_->output().find("saved to " + folder + "/admin.key"), std::string::npos) << server_->output();
  EXPECT_FALSE(et::ReadFile(folder + "/admin.key").empty());
  EXPECT_EQ(server_->Stop(), 0) << server_->output();
}

// Bad options are refused with exit 2 and a message naming the option.
TEST_F(MultiProcessSetup, WorkerRefusesBadOptions) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"worker", "--job-lease", "0"}, {"worker", "--job-lease", "soon"},
        {"worker", "--bogus"}, {"maintain", "--job-lease", "-3"}, {"serve", "--job-lease", "0"}}) {
    std::vector<std::string> argv = {ENGRAM_BINARY, "--home", dir_.path()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = et::RunProcess(argv, "", et::kNoModelEnv, std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 2) << extra[0] << " " << extra[1] << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(extra[1]), std::string::npos) << r.err;
  }
}

}  // namespace
