// `engram bench`, fact memory section (declared in engine_bench.hpp): raw and
// built-in infer add throughput and search latency with and without a filter,
// in one scope holding N memories.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "core/time.hpp"
#include "eval/engine_bench.hpp"

namespace engram::eval {

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

nlohmann::json Percentiles(std::vector<double> v) {
  if (v.empty()) return {{"p50", 0}, {"p95", 0}, {"p99", 0}, {"mean", 0}, {"n", 0}};
  std::sort(v.begin(), v.end());
  auto at = [&](double p) {
    std::size_t i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
  };
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  return {{"p50", at(0.5)}, {"p95", at(0.95)}, {"p99", at(0.99)}, {"mean", mean}, {"n", v.size()}};
}

constexpr int kCategories = 10;  // metadata.category takes 10 values: a filter keeps 1/10
constexpr int kTopK = 10;

Result<std::vector<double>> TimeSearches(Engine& e, const MemoryScope& s, const std::vector<std::string>& queries,
                                         const std::string& filters) {
  MemorySearchOptions so;
  so.top_k = kTopK;
  so.filters = filters;
  std::vector<double> ms;
  for (const auto& q : queries) {
    auto t0 = Clock::now();
    ENGRAM_RETURN_IF_ERROR(e.SearchMemories(s, q, so).status());
    ms.push_back(Ms(Clock::now() - t0));
  }
  return ms;
}

}  // namespace

Result<nlohmann::json> RunFactBench(const BenchOptions& opt) {
  nlohmann::json out = nlohmann::json::array();
  for (int n : opt.facts_scales) {
    if (opt.progress) opt.progress("facts " + std::to_string(n));
    EngineOptions eo;
    const std::string store_name = "facts_" + std::to_string(n);
    ENGRAM_ASSIGN_OR_RETURN(eo.db_path, BenchStore(opt, store_name));
    MemoryScope scope;
    scope.tenant = "bench";
    scope.user = "facts";
    nlohmann::json row;
    row["memories"] = n;
    {
      ENGRAM_ASSIGN_OR_RETURN(auto engine, Engine::Open(eo));
      // Raw adds: one operation (one transaction) per memory.
      auto turns = SyntheticTurns(n, 41, MakeTimeMs(2024, 1, 1));
      std::vector<double> add_ms;
      std::int64_t added = 0;
      auto t0 = Clock::now();
      for (int i = 0; i < n; ++i) {
        MemoryAddOptions ao;
        ao.infer = false;
        ao.metadata = "{\"category\": \"c" + std::to_string(i % kCategories) + "\", \"rank\": " +
                      std::to_string(i) + "}";
        auto a0 = Clock::now();
        ENGRAM_ASSIGN_OR_RETURN(auto r, engine->AddMemoryText(scope, turns[static_cast<std::size_t>(i)].user_text, ao));
        add_ms.push_back(Ms(Clock::now() - a0));
        for (const auto& ev : r.results) added += ev.event == "ADD" ? 1 : 0;
      }
      double raw_s = Ms(Clock::now() - t0) / 1000.0;
      row["raw_adds"] = n;
      row["raw_added"] = added;  // the rest were (near-)duplicates: NOOP
      row["raw_add_per_s"] = n / std::max(1e-9, raw_s);
      row["raw_add_ms"] = Percentiles(add_ms);
      // Search, without and with a filter (keeps 1 memory in 10).
      auto queries = SyntheticQueries(std::max(1, opt.facts_queries), 43);
      ENGRAM_ASSIGN_OR_RETURN(auto plain, TimeSearches(*engine, scope, queries, ""));
      ENGRAM_ASSIGN_OR_RETURN(auto filtered, TimeSearches(*engine, scope, queries, "{\"category\": \"c3\"}"));
      row["search_ms"] = Percentiles(plain);
      row["search_filtered_ms"] = Percentiles(filtered);
      // Built-in infer adds into the same scope (first-person statements).
      auto more = SyntheticTurns(std::min(n, 1000), 47, MakeTimeMs(2024, 6, 1));
      std::int64_t facts = 0;
      t0 = Clock::now();
      for (const auto& t : more) {
        MemoryAddOptions ao;
        ao.infer = true;
        std::vector<MemoryMessage> msgs{{"user", "I love " + t.user_text + " I work with " + t.assistant_text, "Sam"}};
        ENGRAM_ASSIGN_OR_RETURN(auto r, engine->AddMemory(scope, msgs, ao));
        for (const auto& ev : r.results) facts += ev.event == "ADD" ? 1 : 0;
      }
      double infer_s = Ms(Clock::now() - t0) / 1000.0;
      row["infer_adds"] = more.size();
      row["infer_facts_added"] = facts;
      row["infer_add_per_s"] = static_cast<double>(more.size()) / std::max(1e-9, infer_s);
    }
    {
      // A new process's first search loads the scope's vector snapshot.
      ENGRAM_ASSIGN_OR_RETURN(auto engine, Engine::Open(eo));
      auto t0 = Clock::now();
      ENGRAM_RETURN_IF_ERROR(engine->SearchMemories(scope, "what did I say about it?", {}).status());
      row["first_search_ms"] = Ms(Clock::now() - t0);
    }
    DropBenchStore(opt, store_name);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace engram::eval
