// `engram bench`: throughput and latency of the engine on synthetic scopes of
// growing size (admission, maintenance, retrieval p50/p99, memory per page).
// Figures are reported, never asserted.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engram/engine.hpp"

namespace engram::eval {

struct BenchOptions {
  std::vector<int> scales{1000, 10000, 100000};  // turns per scope
  int queries = 300;                             // retrievals measured per scale
  int single_admissions = 2000;                  // one-transaction-per-turn admissions
  std::vector<int> facts_scales{1000, 10000};    // memories in the fact-memory scope (empty: skipped)
  int facts_queries = 300;                       // searches measured per fact scale (and filter)
  std::string work_dir;                          // where the temporary stores go
  // A PostgreSQL server (any database URL on it): every store of the run is
  // a new database there, dropped at the end. Empty: SQLite files in work_dir.
  std::string pg_url;
  std::function<void(const std::string& stage)> progress;
};

// Runs the benchmark; returns one JSON document:
// {"machine":{...}, "admission":{...}, "scales":[{"turns","pages","maintain_s",
//  "maintain_turns_per_s","retrieve_ms":{"p50","p95","p99","mean"},
//  "index_load_ms","db_bytes_per_page","index_bytes_per_page"}...],
//  "facts":[see RunFactBench]}
Result<nlohmann::json> RunEngineBench(const BenchOptions& options);

// The store a bench section uses (a file in work_dir, or a new PostgreSQL
// database), and its removal.
Result<std::string> BenchStore(const BenchOptions& options, const std::string& name);
void DropBenchStore(const BenchOptions& options, const std::string& name);

// The fact memory (fact_bench.cpp), per facts_scales entry N, one scope:
// {"memories", "raw_add_per_s" (N adds, one operation each, infer=false),
//  "raw_add_ms":{p50..}, "search_ms" / "search_filtered_ms":{"p50","p95","p99",
//  "mean","n"} (top_k 10; the filter keeps 1 memory in 10), "infer_adds",
//  "infer_add_per_s" (built-in extraction, into the same scope),
//  "first_search_ms" (a new engine: loads the vector snapshot)}.
Result<nlohmann::json> RunFactBench(const BenchOptions& options);

// Synthetic dialogue with a Zipf-distributed pseudo-word vocabulary and
// recurring topics; deterministic for a seed.
std::vector<TurnInput> SyntheticTurns(int n, unsigned seed, TimeMs start);
// Queries drawn from the same vocabulary.
std::vector<std::string> SyntheticQueries(int n, unsigned seed);

}  // namespace engram::eval
