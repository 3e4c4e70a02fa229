// engram-http-load: a closed-loop load generator for `engram serve` (scripts/bench-http runs it).
// Each connection is one thread with its own keep-alive client that sends its next request as
// soon as the previous answer arrives. Operations are drawn from a weighted mix, users uniformly;
// every request's latency is recorded after the warm-up. Exit status 1 when any request failed.
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

enum Op { kAdmit, kRetrieve, kSearch, kAdd, kMcp, kOps };
constexpr const char* kOpNames[kOps] = {"admit", "retrieve", "search", "add", "mcp"};
// mcp: the MCP tool retrieve_memory over HTTP (POST /mcp?user=...), the same retrieval as "retrieve".
constexpr const char* kOpPaths[kOps] = {"/v1/turns", "/v1/retrieve", "/v1/memories/search", "/v1/memories", "/mcp"};

struct Options {
  std::string url = "http://127.0.0.1:8420", key, corpus;
  int connections = 4, users = 8, prefill = 0;
  double duration = 10, warmup = 2;
  std::vector<double> mix = {20, 50, 30, 0, 0};
  unsigned long long seed = 1;
  bool json = false;
};

constexpr const char* kUsage =
    "usage: engram-http-load [--url http://127.0.0.1:PORT[,http://...]] [--key KEY | --key-file FILE]\n"
    "  [--connections N] [--duration S] [--warmup S] [--mix admit=20,retrieve=50,search=30,add=0,mcp=0]\n"
    "  [--users N] [--prefill TURNS] [--seed N] [--corpus locomo10.json] [--json]\n"
    "--prefill: before the run, admit TURNS turns and TURNS/10 memories per user, then POST /v1/maintain.\n"
    "--url: several servers of one store, comma-separated: connection i uses server i mod n.\n";

// Texts: the utterances and questions of a LoCoMo file (user i gets conversation i mod count),
// or sentences drawn from a small built-in vocabulary.
class Texts {
 public:
  explicit Texts(const std::string& corpus_path) {
    if (corpus_path.empty()) return;
    std::ifstream in(corpus_path);
    if (!in) throw std::runtime_error("cannot read " + corpus_path);
    for (const json& sample : json::parse(in)) {
      const json& conv = sample.at("conversation");
      std::vector<std::string> utterances, questions;
      for (int s = 1; conv.contains("session_" + std::to_string(s)); ++s) {
        for (const json& u : conv["session_" + std::to_string(s)]) utterances.push_back(u.value("text", ""));
      }
      for (const json& qa : sample.value("qa", json::array())) questions.push_back(qa.value("question", ""));
      if (utterances.size() < 2 || questions.empty()) continue;
      dialogues_.push_back({std::move(utterances), std::move(questions)});
    }
    if (dialogues_.empty()) throw std::runtime_error(corpus_path + ": no LoCoMo conversations with questions");
  }
  // The i-th turn of a user's dialogue (a random one when the vocabulary is used).
  std::pair<std::string, std::string> Turn(int user, std::size_t i, std::mt19937_64& rng) const {
    if (dialogues_.empty()) return {Sentence(rng, 6, 16), Sentence(rng, 6, 16)};
    const auto& u = Of(user).utterances;
    const std::size_t at = (2 * i) % (u.size() - 1);
    return {u[at], u[at + 1]};
  }
  std::string Memory(int user, std::size_t i, std::mt19937_64& rng) const {
    if (dialogues_.empty()) return Sentence(rng, 5, 12);
    const auto& u = Of(user).utterances;
    return u[(7 * i + 3) % u.size()];
  }
  std::string Query(int user, std::mt19937_64& rng) const {
    if (dialogues_.empty()) return Sentence(rng, 3, 7);
    const auto& q = Of(user).questions;
    return q[rng() % q.size()];
  }

 private:
  struct Dialogue {
    std::vector<std::string> utterances, questions;
  };
  const Dialogue& Of(int user) const { return dialogues_[static_cast<std::size_t>(user) % dialogues_.size()]; }
  static std::string Sentence(std::mt19937_64& rng, int min_words, int max_words) {
    static const std::vector<std::string> kWords = {
        "morning", "run",    "park",    "coffee",   "friend", "sister",  "birthday", "guitar",  "concert",
        "trip",    "paris",  "hiking",  "mountain", "book",   "novel",   "painting", "garden",  "tomatoes",
        "dog",     "cat",    "vet",     "school",   "exam",   "project", "deadline", "office",  "meeting",
        "recipe",  "pasta",  "dinner",  "weekend",  "beach",  "camping", "photo",    "camera",  "yoga",
        "doctor",  "knee",   "movie",   "series",   "music",  "piano",   "lesson",   "charity", "volunteer",
        "family",  "moving", "apartment"};
    const int n = min_words + static_cast<int>(rng() % static_cast<unsigned>(max_words - min_words + 1));
    std::string s;
    for (int i = 0; i < n; ++i) s += (i ? " " : "") + kWords[rng() % kWords.size()];
    return s;
  }
  std::vector<Dialogue> dialogues_;
};

Clock::duration Seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string UserName(int i) { return "load-" + std::to_string(i); }

json Body(Op op, int user, const Texts& texts, std::mt19937_64& rng) {
  const std::string u = UserName(user);
  switch (op) {
    case kAdmit: {
      auto [a, b] = texts.Turn(user, rng(), rng);
      return {{"user", u}, {"user_text", a}, {"assistant_text", b}};
    }
    case kRetrieve: return {{"user", u}, {"query", texts.Query(user, rng)}, {"budget", 1000}};
    case kSearch: return {{"user", u}, {"query", texts.Query(user, rng)}, {"top_k", 10}};
    case kMcp:
      return {{"jsonrpc", "2.0"},
              {"id", 1},
              {"method", "tools/call"},
              {"params", {{"name", "retrieve_memory"}, {"arguments", {{"query", texts.Query(user, rng)}, {"budget", 1000}}}}}};
    default: return {{"user", u}, {"text", texts.Memory(user, rng(), rng)}, {"infer", false}};
  }
}

// --url may list several servers (comma-separated, all on one store):
// connection i talks to server i mod n.
std::string UrlOf(const Options& o, int i) {
  std::vector<std::string> urls;
  std::stringstream in(o.url);
  for (std::string u; std::getline(in, u, ',');) {
    if (!u.empty()) urls.push_back(u);
  }
  if (urls.empty()) return o.url;
  return urls[static_cast<std::size_t>(i) % urls.size()];
}

std::unique_ptr<httplib::Client> Connect(const Options& o, int i = 0) {
  auto c = std::make_unique<httplib::Client>(UrlOf(o, i));
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);  // headers and body are separate writes: no Nagle delay
  c->set_connection_timeout(5);
  c->set_read_timeout(60);
  c->set_write_timeout(60);
  if (!o.key.empty()) c->set_bearer_token_auth(o.key);
  return c;
}

struct Stats {
  std::vector<double> ms[kOps];
  long non2xx[kOps] = {}, transport[kOps] = {}, warmup_errors = 0;
};

std::mutex g_log_mu;
int g_logged = 0;
void LogError(const std::string& what) {  // the first few failures, for diagnosis
  std::lock_guard<std::mutex> lock(g_log_mu);
  if (g_logged++ < 5) std::cerr << "engram-http-load: " << what << "\n";
}

void Worker(const Options& o, const Texts& texts, int id, Clock::time_point start, Clock::time_point end,
            Stats* st) {
  auto cli = Connect(o, id);
  std::mt19937_64 rng(o.seed * 1000003ULL + static_cast<unsigned long long>(id));
  std::discrete_distribution<int> pick(o.mix.begin(), o.mix.end());
  std::uniform_int_distribution<int> pick_user(0, o.users - 1);
  while (Clock::now() < end) {
    const Op op = static_cast<Op>(pick(rng));
    const int user = pick_user(rng);
    const std::string body = Body(op, user, texts, rng).dump();
    const std::string path = op == kMcp ? std::string(kOpPaths[op]) + "?user=" + UserName(user) : kOpPaths[op];
    const auto t0 = Clock::now();
    auto res = cli->Post(path, body, "application/json");
    const auto t1 = Clock::now();
    // An MCP call answers 200 with its error inside (a JSON-RPC error or a tool error).
    const bool measured = t0 >= start,
               ok = res && res->status / 100 == 2 &&
                    (op != kMcp || res->body.find("\"isError\":false") != std::string::npos);
    if (measured) st->ms[op].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (ok) continue;
    if (!measured) ++st->warmup_errors;
    else if (!res) ++st->transport[op];
    else ++st->non2xx[op];
    LogError(std::string(kOpNames[op]) + ": " +
             (res ? "HTTP " + std::to_string(res->status) + ": " + res->body
                  : "transport error: " + httplib::to_string(res.error())));
  }
}

bool Prefill(const Options& o, const Texts& texts) {
  auto cli = Connect(o);
  std::mt19937_64 rng(o.seed);
  auto post = [&](const char* path, const json& body) {
    auto r = cli->Post(path, body.dump(), "application/json");
    if (r && r->status / 100 == 2) return true;
    std::cerr << "engram-http-load: prefill " << path << ": "
              << (r ? "HTTP " + std::to_string(r->status) + ": " + r->body : httplib::to_string(r.error())) << "\n";
    return false;
  };
  for (int u = 0; u < o.users; ++u) {
    for (int first = 0; first < o.prefill; first += 100) {
      json turns = json::array();
      for (int i = first; i < std::min(o.prefill, first + 100); ++i) {
        auto [a, b] = texts.Turn(u, static_cast<std::size_t>(i), rng);
        turns.push_back({{"user_text", a}, {"assistant_text", b}});
      }
      if (!post("/v1/turns", {{"user", UserName(u)}, {"turns", turns}})) return false;
    }
    for (int i = 0; i < o.prefill / 10; ++i) {
      const std::string text = texts.Memory(u, static_cast<std::size_t>(i), rng);
      if (!post("/v1/memories", {{"user", UserName(u)}, {"text", text}, {"infer", false}})) return false;
    }
  }
  return post("/v1/maintain", json::object());
}

double Percentile(const std::vector<double>& sorted, double p) {  // nearest rank
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(p / 100.0 * static_cast<double>(sorted.size()))));
  return sorted[rank - 1];
}

json Summary(std::vector<double> ms, long non2xx, long transport, double seconds) {
  std::sort(ms.begin(), ms.end());
  return {{"requests", ms.size()}, {"requests_per_s", static_cast<double>(ms.size()) / seconds},
          {"p50_ms", Percentile(ms, 50)}, {"p90_ms", Percentile(ms, 90)}, {"p99_ms", Percentile(ms, 99)},
          {"max_ms", ms.empty() ? 0.0 : ms.back()}, {"non_2xx", non2xx}, {"transport_errors", transport}};
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--json") { o.json = true; continue; }
    if (arg == "-h" || arg == "--help") { std::cout << kUsage; std::exit(0); }
    if (auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1), arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw std::runtime_error(arg + ": missing value");
    }
    if (arg == "--url") o.url = value;
    else if (arg == "--key") o.key = value;
    else if (arg == "--key-file") {
      std::ifstream f(value);
      if (!(f >> o.key)) throw std::runtime_error("cannot read " + value);
    } else if (arg == "--connections") o.connections = std::stoi(value);
    else if (arg == "--duration") o.duration = std::stod(value);
    else if (arg == "--warmup") o.warmup = std::stod(value);
    else if (arg == "--users") o.users = std::stoi(value);
    else if (arg == "--prefill") o.prefill = std::stoi(value);
    else if (arg == "--seed") o.seed = std::stoull(value);
    else if (arg == "--corpus") o.corpus = value;
    else if (arg == "--mix") {
      o.mix.assign(kOps, 0);
      std::stringstream ss(value);
      for (std::string part; std::getline(ss, part, ',');) {
        const auto eq = part.find('=');
        const auto it = std::find(std::begin(kOpNames), std::end(kOpNames), part.substr(0, eq));
        if (eq == std::string::npos || it == std::end(kOpNames)) throw std::runtime_error("--mix: bad entry " + part);
        o.mix[static_cast<std::size_t>(it - std::begin(kOpNames))] = std::stod(part.substr(eq + 1));
      }
    } else throw std::runtime_error("unknown option " + arg + "\n" + kUsage);
  }
  if (o.connections < 1 || o.users < 1 || o.duration <= 0 || o.warmup < 0 || o.prefill < 0) {
    throw std::runtime_error("--connections and --users must be >= 1, --duration > 0, the others >= 0");
  }
  if (*std::max_element(o.mix.begin(), o.mix.end()) <= 0) throw std::runtime_error("--mix: no operation has a weight");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = Parse(argc, argv);
    const Texts texts(o.corpus);
    if (o.prefill > 0 && !Prefill(o, texts)) return 1;

    const auto start = Clock::now() + Seconds(o.warmup), end = start + Seconds(o.duration);
    std::vector<Stats> stats(static_cast<std::size_t>(o.connections));
    std::vector<std::thread> threads;
    for (int i = 0; i < o.connections; ++i) {
      threads.emplace_back(Worker, std::cref(o), std::cref(texts), i, start, end, &stats[static_cast<std::size_t>(i)]);
    }
    for (auto& t : threads) t.join();

    json report = {{"url", o.url}, {"connections", o.connections}, {"duration_s", o.duration},
                   {"warmup_s", o.warmup}, {"users", o.users}, {"corpus", o.corpus}, {"ops", json::object()}};
    std::vector<double> all;
    long all_non2xx = 0, all_transport = 0, warmup_errors = 0;
    for (const auto& s : stats) warmup_errors += s.warmup_errors;
    for (int op = 0; op < kOps; ++op) {
      std::vector<double> ms;
      long non2xx = 0, transport = 0;
      for (const auto& s : stats) {
        ms.insert(ms.end(), s.ms[op].begin(), s.ms[op].end());
        non2xx += s.non2xx[op], transport += s.transport[op];
      }
      if (o.mix[static_cast<std::size_t>(op)] <= 0) continue;
      all.insert(all.end(), ms.begin(), ms.end());
      all_non2xx += non2xx, all_transport += transport;
      report["ops"][kOpNames[op]] = Summary(std::move(ms), non2xx, transport, o.duration);
    }
    report["overall"] = Summary(std::move(all), all_non2xx, all_transport, o.duration);
    report["warmup_errors"] = warmup_errors;
    const bool failed = all_non2xx + all_transport + warmup_errors > 0;

    if (o.json) {
      std::cout << report.dump(2) << "\n";
    } else {
      std::printf("%d connections, %.0f s (after %.0f s warm-up), %d users, %s\n", o.connections, o.duration,
                  o.warmup, o.users, o.url.c_str());
      std::printf("%-9s %9s %9s %8s %8s %8s %8s %8s %9s\n", "op", "requests", "req/s", "p50 ms", "p90 ms", "p99 ms",
                  "max ms", "non-2xx", "transport");
      auto row = [](const std::string& name, const json& s) {
        std::printf("%-9s %9lld %9.1f %8.2f %8.2f %8.2f %8.2f %8lld %9lld\n", name.c_str(),
                    s["requests"].get<long long>(), s["requests_per_s"].get<double>(), s["p50_ms"].get<double>(),
                    s["p90_ms"].get<double>(), s["p99_ms"].get<double>(), s["max_ms"].get<double>(),
                    s["non_2xx"].get<long long>(), s["transport_errors"].get<long long>());
      };
      for (const auto& [name, s] : report["ops"].items()) row(name, s);
      row("overall", report["overall"]);
      if (warmup_errors > 0) std::printf("errors during the warm-up: %ld\n", warmup_errors);
    }
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "engram-http-load: " << e.what() << "\n";
    return 2;
  }
}
