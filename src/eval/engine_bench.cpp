#include "eval/engine_bench.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "core/time.hpp"
#include "index/flat_index.hpp"
#include "models/builtin/hash_embedder.hpp"

#include "store/open.hpp"

namespace engram::eval {

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Pseudo-words: pronounceable, deterministic, distinct.
std::vector<std::string> Vocabulary(std::size_t n, unsigned seed) {
  static const char* kOnsets[] = {"b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
                                  "br", "tr", "st", "pl", "gr", "sh"};
  static const char* kVowels[] = {"a", "e", "i", "o", "u", "ai", "ou", "ea"};
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  std::vector<std::string> seen;
  while (out.size() < n) {
    std::string w;
    int syll = 2 + static_cast<int>(rng() % 2);
    for (int s = 0; s < syll; ++s) {
      w += kOnsets[rng() % (sizeof kOnsets / sizeof *kOnsets)];
      w += kVowels[rng() % (sizeof kVowels / sizeof *kVowels)];
    }
    if (rng() % 3 == 0) w += "n";
    out.push_back(std::move(w));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

class Zipf {
 public:
  Zipf(std::size_t n, double s) : cdf_(n) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) cdf_[i] = (sum += 1.0 / std::pow(static_cast<double>(i + 1), s));
    for (auto& c : cdf_) c /= sum;
  }
  std::size_t operator()(std::mt19937& rng) const {
    double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    return static_cast<std::size_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
  }

 private:
  std::vector<double> cdf_;
};

constexpr std::size_t kVocab = 20000;
constexpr std::size_t kTopics = 400;

std::string Sentence(std::mt19937& rng, const std::vector<std::string>& vocab, const Zipf& zipf,
                     std::size_t topic, int words) {
  static const char* kGlue[] = {"I", "the", "we", "my", "and", "to", "a", "was", "with", "about"};
  std::string s;
  for (int i = 0; i < words; ++i) {
    if (!s.empty()) s += ' ';
    std::uint32_t r = rng() % 10;
    if (r < 3) {
      s += kGlue[rng() % 10];
    } else if (r < 6) {
      s += vocab[(topic * 37 + rng() % 12) % vocab.size()];  // the topic's own words
    } else {
      s += vocab[zipf(rng)];
    }
  }
  return s + ".";
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) ;
  return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
}

nlohmann::json Latency(const std::vector<double>& ms) {
  double mean = 0;
  for (double x : ms) mean += x;
  mean /= std::max<std::size_t>(1, ms.size());
  return {{"p50", Percentile(ms, 0.5)}, {"p95", Percentile(ms, 0.95)}, {"p99", Percentile(ms, 0.99)},
          {"mean", mean}, {"n", ms.size()}};
}

long RssKb() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, rss = 0;
  in >> pages >> rss;
  return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

nlohmann::json Machine() {
  utsname u{};
  uname(&u);
  std::string cpu;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  return {{"cpu", cpu}, {"cores", std::thread::hardware_concurrency()},
          {"kernel", std::string(u.sysname) + " " + u.release}, {"engram_version", Version()}};
}

// Recall@10 and latency of the vector index's approximate search against an
// exact scan, on the built-in embeddings of the given turns.
Result<nlohmann::json> MeasureAnn(const std::vector<TurnInput>& turns,
                                  const std::vector<std::string>& queries) {
  HashEmbedder emb;
  FlatIndex idx;
  std::vector<std::string> texts;
  for (const auto& t : turns) texts.push_back(t.user_text + "\n" + t.assistant_text);
  ENGRAM_ASSIGN_OR_RETURN(auto vecs, emb.Embed(texts));
  for (std::size_t i = 0; i < vecs.size(); ++i) idx.Add(static_cast<std::int64_t>(i), vecs[i]);
  ENGRAM_ASSIGN_OR_RETURN(auto qv, emb.Embed(queries));
  double hit = 0, total = 0;
  std::vector<double> exact_ms, approx_ms;
  for (const auto& q : qv) {
    auto t0 = Clock::now();
    auto exact = idx.SearchExact(q, 10);
    exact_ms.push_back(Ms(Clock::now() - t0));
    t0 = Clock::now();
    auto approx = idx.Search(q, 10);
    approx_ms.push_back(Ms(Clock::now() - t0));
    for (const auto& e : exact) {
      for (const auto& a : approx) hit += (a.first == e.first) ? 1 : 0;
    }
    total += static_cast<double>(exact.size());
  }
  return nlohmann::json{{"recall@10", total > 0 ? hit / total : 0.0},
                        {"exact_ms", Latency(exact_ms)},
                        {"approx_ms", Latency(approx_ms)}};
}

}  // namespace

std::vector<TurnInput> SyntheticTurns(int n, unsigned seed, TimeMs start) {
  auto vocab = Vocabulary(kVocab, 7);
  Zipf zipf(vocab.size(), 1.05);
  std::mt19937 rng(seed);
  std::vector<TurnInput> out;
  out.reserve(static_cast<std::size_t>(n));
  std::size_t topic = 0;
  for (int i = 0; i < n; ++i) {
    if (rng() % 8 == 0) topic = rng() % kTopics;  // conversations drift between topics
    TurnInput t;
    t.user_text = Sentence(rng, vocab, zipf, topic, 8 + static_cast<int>(rng() % 14));
    t.assistant_text = Sentence(rng, vocab, zipf, topic, 10 + static_cast<int>(rng() % 20));
    t.event_time = start + static_cast<TimeMs>(i) * 90 * 1000;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> SyntheticQueries(int n, unsigned seed) {
  auto vocab = Vocabulary(kVocab, 7);
  Zipf zipf(vocab.size(), 1.05);
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string q = "what did I say about";
    std::size_t topic = rng() % kTopics;
    q += " " + vocab[(topic * 37 + rng() % 12) % vocab.size()];
    q += " " + vocab[zipf(rng)];
    q += " " + vocab[(topic * 37 + rng() % 12) % vocab.size()];
    out.push_back(q + "?");
  }
  return out;
}

Result<std::string> BenchStore(const BenchOptions& opt, const std::string& name) {
  if (opt.pg_url.empty()) return (std::filesystem::path(opt.work_dir) / (name + ".db")).string();
  const std::string db = "engram_bench_" + std::to_string(getpid()) + "_" + name;
  return store::CreatePostgresDatabase(opt.pg_url, db);
}

void DropBenchStore(const BenchOptions& opt, const std::string& name) {
  if (opt.pg_url.empty()) return;
  (void)store::DropPostgresDatabase(opt.pg_url, "engram_bench_" + std::to_string(getpid()) + "_" + name);
}

Result<nlohmann::json> RunEngineBench(const BenchOptions& opt) {
  namespace fs = std::filesystem;
  nlohmann::json doc;
  doc["machine"] = Machine();
  doc["backend"] = opt.pg_url.empty() ? "sqlite" : "postgres";
  auto say = [&](const std::string& s) {
    if (opt.progress) opt.progress(s);
  };
  TimeMs start = MakeTimeMs(2024, 1, 1);

  // Admission: one transaction per turn, and batches of 500, with the
  // default durability (every commit synced) and with durability normal.
  for (const auto durability : {EngineOptions::Durability::kFull, EngineOptions::Durability::kNormal}) {
    const bool full = durability == EngineOptions::Durability::kFull;
    const std::string store_name = full ? "admission" : "admission_normal";
    say(full ? "admission" : "admission (durability normal)");
    EngineOptions eo;
    eo.durability = durability;
    ENGRAM_ASSIGN_OR_RETURN(eo.db_path, BenchStore(opt, store_name));
    ENGRAM_ASSIGN_OR_RETURN(auto engine, Engine::Open(eo));
    Scope scope{"bench", "admission", "a"};
    auto turns = SyntheticTurns(opt.single_admissions, 11, start);
    auto t0 = Clock::now();
    for (const auto& t : turns) ENGRAM_RETURN_IF_ERROR(engine->AddTurn(scope, t).status());
    double single_s = Ms(Clock::now() - t0) / 1000.0;
    Scope batch_scope{"bench", "admission-batch", "a"};
    auto many = SyntheticTurns(opt.single_admissions * 5, 12, start);
    t0 = Clock::now();
    for (std::size_t i = 0; i < many.size(); i += 500) {
      std::vector<TurnInput> b(many.begin() + static_cast<std::ptrdiff_t>(i),
                               many.begin() + static_cast<std::ptrdiff_t>(std::min(i + 500, many.size())));
      ENGRAM_RETURN_IF_ERROR(engine->AddTurns(batch_scope, b).status());
    }
    double batch_s = Ms(Clock::now() - t0) / 1000.0;
    doc[full ? "admission" : "admission_durability_normal"] = {
        {"single_turns", turns.size()},
        {"single_turns_per_s", static_cast<double>(turns.size()) / single_s},
        {"batched_turns", many.size()},
        {"batched_turns_per_s", static_cast<double>(many.size()) / batch_s}};
    engine.reset();
    DropBenchStore(opt, store_name);
  }

  doc["scales"] = nlohmann::json::array();
  for (int n : opt.scales) {
    say("scale " + std::to_string(n));
    EngineOptions eo;
    const std::string store_name = "scale_" + std::to_string(n);
    ENGRAM_ASSIGN_OR_RETURN(eo.db_path, BenchStore(opt, store_name));
    ENGRAM_ASSIGN_OR_RETURN(auto engine, Engine::Open(eo));
    Scope scope{"bench", "scale", "a"};
    auto turns = SyntheticTurns(n, 21, start);
    auto t0 = Clock::now();
    for (std::size_t i = 0; i < turns.size(); i += 1000) {
      std::vector<TurnInput> b(turns.begin() + static_cast<std::ptrdiff_t>(i),
                               turns.begin() + static_cast<std::ptrdiff_t>(std::min(i + 1000, turns.size())));
      ENGRAM_RETURN_IF_ERROR(engine->AddTurns(scope, b).status());
    }
    double admit_s = Ms(Clock::now() - t0) / 1000.0;
    t0 = Clock::now();
    ENGRAM_ASSIGN_OR_RETURN(MaintainReport rep, engine->Maintain(&scope));
    double maintain_s = Ms(Clock::now() - t0) / 1000.0;
    ENGRAM_ASSIGN_OR_RETURN(Stats st, engine->GetStats(&scope));
    auto queries = SyntheticQueries(opt.queries, 31);
    long rss0 = RssKb();
    t0 = Clock::now();
    ENGRAM_RETURN_IF_ERROR(engine->Retrieve(scope, queries.front(), {}).status());
    double load_ms = Ms(Clock::now() - t0);
    long rss1 = RssKb();
    std::vector<double> lat;
    for (const auto& q : queries) {
      auto q0 = Clock::now();
      ENGRAM_RETURN_IF_ERROR(engine->Retrieve(scope, q, {}).status());
      lat.push_back(Ms(Clock::now() - q0));
    }
    // One more promotion (a batch of new turns), then the first retrieval:
    // the snapshot is updated from the previous one instead of rebuilt.
    auto more = SyntheticTurns(eo.stm_capacity + eo.promote_batch_max, 22, turns.back().event_time.value_or(start) + 60000);
    ENGRAM_RETURN_IF_ERROR(engine->AddTurns(scope, more).status());
    ENGRAM_RETURN_IF_ERROR(engine->Maintain(&scope).status());
    t0 = Clock::now();
    ENGRAM_RETURN_IF_ERROR(engine->Retrieve(scope, queries.front(), {}).status());
    const double update_ms = Ms(Clock::now() - t0);
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t store_bytes, store::StoreBytes(eo.db_path));
    const double db_bytes = static_cast<double>(store_bytes);
    double pages = static_cast<double>(std::max<std::int64_t>(1, st.mtm_pages + st.archived_pages));
    nlohmann::json ann = nullptr;
    if (static_cast<std::size_t>(n) >= FlatIndex::kApproxMinRows) {
      ENGRAM_ASSIGN_OR_RETURN(ann, MeasureAnn(turns, queries));
    }
    doc["scales"].push_back({{"turns", n},
                             {"vector_search", ann},
                             {"pages", st.mtm_pages + st.archived_pages},
                             {"segments", st.mtm_segments + st.archived_segments},
                             {"admit_turns_per_s", n / admit_s},
                             {"maintain_s", maintain_s},
                             {"maintain_turns_per_s", rep.pages_created / std::max(1e-9, maintain_s)},
                             {"retrieve_ms", Latency(lat)},
                             {"index_load_ms", load_ms},
                             {"index_update_ms", update_ms},
                             {"index_rss_bytes_per_page", (rss1 - rss0) * 1024.0 / pages},
                             {"db_bytes_per_page", db_bytes / pages}});
    engine.reset();
    DropBenchStore(opt, store_name);
  }
  doc["facts"] = nlohmann::json::array();
  if (!opt.facts_scales.empty()) {
    ENGRAM_ASSIGN_OR_RETURN(doc["facts"], RunFactBench(opt));
  }
  return doc;
}

}  // namespace engram::eval
