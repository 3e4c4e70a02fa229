// Several engram processes on one SQLite store, on the real binary: a server
// with its background worker while `engram maintain` runs again and again,
// and `engram serve --no-worker` with `engram worker`s of which one is killed
// in the middle of a promotion. Jobs are leased in the store (src/store/jobs.hpp).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "testing/fake_maintenance_model.hpp"
#include "testing/fake_openai_server.hpp"
#include "testing/server_process.hpp"
#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

extern char** environ;

namespace {

namespace et = engram::testing;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kStmCapacity = 10;  // EngineOptions::stm_capacity, the default

// A long-running engram process (`engram worker`) with its stdout and stderr
// captured; killed with SIGKILL and reaped by the destructor if still running.
class Background {
 public:
  Background(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    // Everything the child needs is built before fork (no allocation after it).
    std::vector<std::string> env_strings;
    for (char** e = environ; e && *e; ++e) {
      std::string kv = *e;
      const std::string name = kv.substr(0, kv.find('='));
      bool overridden = false;
      for (const auto& o : env) overridden |= o.substr(0, o.find('=')) == name;
      if (!overridden) env_strings.push_back(std::move(kv));
    }
    env_strings.insert(env_strings.end(), env.begin(), env.end());
    std::vector<std::string> args_strings = argv;
    std::vector<char*> envp, args;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    for (auto& s : args_strings) args.push_back(s.data());
    args.push_back(nullptr);
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(out[1], 2);
      execve(args[0], args.data(), envp.data());
      _exit(127);
    }
    close(out[1]);
    fd_ = out[0];
  }
  ~Background() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  pid_t pid() const { return pid_; }
  bool exited() {
    ReadSome(0);
    return exited_;
  }
  const std::string& output() {
    ReadSome(0);
    return output_;
  }
  // Waits (up to `wait`) until the output contains `text`.
  bool WaitFor(const std::string& text, std::chrono::seconds wait) {
    const auto deadline = Clock::now() + wait;
    while (output_.find(text) == std::string::npos && Clock::now() < deadline) {
      if (!ReadSome(100) && exited_) break;
    }
    return output_.find(text) != std::string::npos;
  }
  // Sends `sig` and waits (up to `wait`) for the exit, reaping the process (a
  // zombie would still count as alive for the lease takeover). Returns the
  // exit code, or -1 when it died of a signal or did not exit in time.
  int Stop(int sig, std::chrono::seconds wait = std::chrono::seconds(60)) {
    if (pid_ <= 0) return -1;
    if (!exited_) kill(pid_, sig);
    const auto deadline = Clock::now() + wait;
    while (!exited_ && Clock::now() < deadline) ReadSome(100);
    return exit_code_;
  }

 private:
  bool ReadSome(int ms) {
    bool got = false;
    if (fd_ >= 0) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, ms) > 0) {
        char buf[4096];
        ssize_t n = read(fd_, buf, sizeof buf);
        if (n > 0) {
          output_.append(buf, static_cast<std::size_t>(n));
          got = true;
        } else if (n == 0) {
          close(fd_);
          fd_ = -1;
        }
      }
    } else if (ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
    if (!exited_ && pid_ > 0) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        while (fd_ >= 0 && ReadSome(0)) {
        }
      }
    }
    return got;
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  std::string output_;
  bool exited_ = false;
  int exit_code_ = -1;
};

json Body(const httplib::Result& r) { return r ? json::parse(r->body, nullptr, false) : json(); }

// One acknowledged turn: its scope's user, its sequence number and the unique
// marker in its text.
struct Acked {
  std::string user;
  std::int64_t seq = 0;
  std::string marker;
};

class MultiProcess : public ::testing::Test {
 protected:
  std::unique_ptr<httplib::Client> NewClient() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    c->set_read_timeout(60, 0);
    c->set_write_timeout(60, 0);
    c->set_default_headers({{"Authorization", "Bearer " + server_->admin_key()}});
    return c;
  }
  json Get(const std::string& path) {
    auto r = NewClient()->Get(path.c_str());
    EXPECT_TRUE(r && r->status == 200) << path << ": " << (r ? r->body : httplib::to_string(r.error()));
    return Body(r);
  }

  // Admits `texts` for `user` in one request (retried with the same
  // Idempotency-Key after a transport error or a 503 with Retry-After, which
  // `busy_retries` counts); records what was acknowledged. False when the
  // server refused the batch (the reason is added to `errors`).
  bool Admit(httplib::Client& c, const std::string& user, const std::vector<std::string>& markers,
             const std::string& key, std::vector<Acked>* acked, std::atomic<int>* busy_retries,
             std::vector<std::string>* errors) {
    json turns = json::array();
    for (const auto& m : markers) {
      turns.push_back({{"user_text", "Note " + m + ": I planned something for day " + m.substr(m.size() - 2) + "."},
                       {"assistant_text", "Noted " + m + "."}});
    }
    const std::string body = json({{"user", user}, {"turns", turns}}).dump();
    for (int attempt = 0; attempt < 20; ++attempt) {
      auto r = c.Post("/v1/turns", {{"Idempotency-Key", key}}, body, "application/json");
      if (!r) {  // the acknowledgement may have been lost: the retry with the same key is safe
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      if (r->status == 503 && r->has_header("Retry-After")) {
        ++*busy_retries;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      const bool replayed = r->status == 200 && Body(r).value("replayed", false);
      if (r->status != 201 && !replayed) {
        errors->push_back(std::to_string(r->status) + " " + r->body);
        return false;
      }
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

  // Every acknowledged turn is in its user's turn log exactly once (same seq,
  // same text), and the log holds nothing else.
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

  // Polls /v1/stats until no job is pending (bounded); returns the last stats.
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
    server_ = std::make_unique<et::ServerProcess>(ENGRAM_BINARY, dir_.path(),
                                                  std::vector<std::string>{"--no-worker"}, env);
    ASSERT_TRUE(server_->started()) << server_->output();
    std::vector<std::string> errors;
    std::atomic<int> busy{0};
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
                          acked, &busy, &errors))
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

  et::TempDir dir_;
  std::unique_ptr<et::ServerProcess> server_;
};

// One server (with its background maintenance) and 25 `engram maintain` runs
// in a row on its store while two clients admit turns over HTTP.
TEST_F(MultiProcess, MaintainRunsBesideAServingProcessLoseAndDuplicateNothing) {
  server_ = std::make_unique<et::ServerProcess>(ENGRAM_BINARY, dir_.path(), std::vector<std::string>{},
                                                et::kNoModelEnv);
  ASSERT_TRUE(server_->started()) << server_->output();
  ASSERT_FALSE(server_->admin_key().empty());

  constexpr int kClientUsers = 5, kMinPerClient = 120, kMaxPerClient = 300;
  std::atomic<bool> maintaining{true};
  std::atomic<int> busy{0};
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
      const bool ok =
          Admit(*c, user, markers, "c" + std::to_string(id) + "-b" + std::to_string(batch), &mine, &busy, &my_errors);
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

  const std::vector<std::string> maintain = {ENGRAM_BINARY, "--home", dir_.path(), "maintain"};
  int promoting_runs = 0;
  for (int i = 0; i < 25; ++i) {
    auto r = et::RunProcess(maintain, "", et::kNoModelEnv, std::chrono::seconds(60));
    promoting_runs += r.out.rfind("promoted 0 turns", 0) == std::string::npos;
    EXPECT_EQ(r.exit_code, 0) << "run " << i << ": " << r.out << r.err;
    EXPECT_EQ((r.out + r.err).find("database is locked"), std::string::npos) << "run " << i << ": " << r.err;
    EXPECT_EQ((r.out + r.err).find("UNIQUE constraint failed"), std::string::npos) << "run " << i << ": " << r.err;
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
              acked.size(), acked_while_maintaining, busy.load(), promoting_runs);
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
TEST_F(MultiProcess, AWorkerKilledDuringAPromotionIsReplacedWithoutLossOrDoublePayment) {
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
  const std::vector<std::string> worker = {ENGRAM_BINARY, "--home", dir_.path(), "worker", "--job-lease", "3"};
  auto first = std::make_unique<Background>(worker, env);
  ASSERT_TRUE(first->WaitFor("SIGTERM or SIGINT stops it\n", std::chrono::seconds(30))) << first->output();
  EXPECT_NE(first->output().find(dir_.File("engram.db")), std::string::npos) << first->output();
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

  auto second = std::make_unique<Background>(worker, env);
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

  // Model calls. Each promotion batch asks the model once to analyse its
  // pages (the prompt lists them after "Pages, oldest first:", one turn per
  // page), then once to summarise the topics they joined. What we assert:
  //  - the killed worker made exactly one request, the analysis of its first
  //    batch, which never committed (its turns stayed in STM);
  //  - the second worker analysed every promoted turn exactly once: no page
  //    of its analyses repeats, and together they are exactly the turns that
  //    left STM; so no batch was paid for twice;
  //  - the only turns analysed twice overall are those of the killed
  //    worker's in-flight batch, each exactly twice (the batch was redone,
  //    not lost).
  const std::regex marker_re(R"(M-\d+-\d+)");
  auto analysed = &MultiProcess::Analysed;
  const auto bodies = model.chat_bodies();
  ASSERT_GE(bodies.size(), static_cast<std::size_t>(killed_requests));
  const auto in_flight_list = analysed(bodies[0]);
  const std::set<std::string> in_flight(in_flight_list.begin(), in_flight_list.end());
  EXPECT_FALSE(in_flight.empty()) << "the stalled request was not a page analysis";
  std::map<std::string, int> by_second;
  std::map<std::string, int> consolidated;  // "[page N]" -> consolidation prompts naming it
  int second_analyses = 0, second_summaries = 0, second_consolidations = 0, second_other = 0;
  const std::regex page_re(R"(\[page \d+\])");
  for (std::size_t i = killed_requests; i < bodies.size(); ++i) {
    const std::string prompt = et::LastUserMessage(json::parse(bodies[i], nullptr, false));
    if (auto list = analysed(bodies[i]); !list.empty()) {
      ++second_analyses;
      for (const auto& m : list) ++by_second[m];
    } else if (prompt.find("{\"segments\": [") != std::string::npos) {
      ++second_summaries;
    } else if (prompt.find("\"user_facts\"") != std::string::npos) {
      ++second_consolidations;
      for (std::sregex_iterator it(prompt.begin(), prompt.end(), page_re), end; it != end; ++it) {
        ++consolidated[it->str()];
      }
    } else {
      ++second_other;
    }
  }
  std::set<std::string> promoted;
  for (const auto& u : users) {
    json j = Get("/v1/turns?user=" + u + "&limit=1000");
    for (const auto& t : j["turns"]) {
      std::smatch m;
      const std::string text = t.value("user_text", "");
      if (t.value("tier", "") != "stm" && std::regex_search(text, m, marker_re)) promoted.insert(m.str());
    }
  }
  EXPECT_EQ(promoted.size(), static_cast<std::size_t>(kUsers * (kTurnsPerUser - kStmCapacity)));
  for (const auto& [m, n] : by_second) EXPECT_EQ(n, 1) << m << " analysed " << n << " times by the second worker";
  std::set<std::string> second_set;
  for (const auto& [m, n] : by_second) second_set.insert(m);
  EXPECT_EQ(second_set, promoted);
  for (const auto& m : in_flight) EXPECT_TRUE(promoted.count(m)) << m << " of the killed batch was not promoted";
  // One topic summary per committed batch; every page consolidated at most
  // once; no other request (no retry).
  EXPECT_EQ(second_summaries, second_analyses);
  for (const auto& [page, n] : consolidated) EXPECT_EQ(n, 1) << page << " consolidated " << n << " times";
  EXPECT_EQ(second_other, 0);
  std::printf("model requests: %d by the killed worker (in flight: %zu turns); by the second worker %d page "
              "analyses, %d topic summaries, %d consolidations, %d other; %zu turns promoted\n",
              killed_requests, in_flight.size(), second_analyses, second_summaries, second_consolidations,
              second_other, promoted.size());

  EXPECT_EQ(server_->Stop(), 0) << server_->output();
}

// SIGTERM reaches a worker while its first promotion waits for the model: it
// finishes that job (and the rest of its maintenance run) before it exits 0,
// so no job stays leased and nothing is analysed twice.
TEST_F(MultiProcess, AWorkerStoppedBySigtermFinishesTheJobInProgress) {
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
  Background worker({ENGRAM_BINARY, "--home", dir_.path(), "worker"}, env);
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
    for (const auto& t : Get("/v1/turns?user=u" + std::to_string(u) + "&limit=1000")["turns"]) {
      if (t.value("tier", "") == "stm") in_stm.insert(t.value("user_text", ""));
    }
  }
  for (const auto& m : first) {  // the batch in flight at the signal was committed
    for (const auto& text : in_stm) EXPECT_EQ(text.find(m + ":"), std::string::npos) << m << " is still in STM";
  }
  EXPECT_EQ(server_->Stop(), 0) << server_->output();
}

// A store that is not a file: the first admin key goes to the home folder
// (created when missing), and no line shows the store's password. A worker
// runs on the same store and stops cleanly.
TEST_F(MultiProcess, OnAPostgresStoreTheAdminKeyIsInTheHomeAndPasswordsAreHidden) {
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

  Background worker({ENGRAM_BINARY, "--home", home, "--db", url, "worker", "--job-lease", "5"}, env);
  ASSERT_TRUE(worker.WaitFor("SIGTERM or SIGINT stops it\n", std::chrono::seconds(30))) << worker.output();
  EXPECT_NE(worker.output().find("postgresql://engram:***@"), std::string::npos) << worker.output();
  EXPECT_EQ(worker.Stop(SIGTERM), 0) << worker.output();
  EXPECT_EQ(server_->Stop(), 0) << server_->output();
  for (const std::string& out : {worker.output(), server_->output()}) {
    EXPECT_EQ(out.find("sekret-pw"), std::string::npos) << out;
  }
}

// A SQLite store named by a sqlite:// URL keeps its admin key next to the file.
TEST_F(MultiProcess, AdminKeyOfASqliteUrlStoreIsNextToTheFile) {
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
TEST_F(MultiProcess, WorkerRefusesBadOptions) {
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
