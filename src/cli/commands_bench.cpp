// CLI: engram bench.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "eval/engine_bench.hpp"

namespace engram::cli {

void RegisterBenchCommands(CLI::App& app, Cli& cli, int& code) {
  auto* bench = app.add_subcommand("bench", "Measure admission, maintenance and retrieval speed");
  static std::string scales = "1000,10000,100000";
  static int queries = 300;
  static std::string facts_scales = "1000,10000";
  bench->add_option("--scales", scales, "Turns per scope, comma-separated");
  bench->add_option("--facts-scales", facts_scales,
                    "Memories in the fact-memory scope, comma-separated (\"\" skips the section)");
  bench->add_option("--queries", queries, "Retrievals measured per scale")->check(CLI::Range(1, 100000));
  static std::string pg;
  bench->add_option("--pg", pg,
                    "A postgresql:// URL: run every store of the benchmark as a new database on that server "
                    "(dropped at the end) instead of SQLite files");
  bench->callback([&] {
    eval::BenchOptions o;
    o.scales.clear();
    std::stringstream ss(scales);
    for (std::string item; std::getline(ss, item, ',');) {
      char* end = nullptr;
      long v = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || v < 20 || v > 10000000) {
        code = Fail(2, "--scales: \"" + item + "\" is not a number of turns (20..10000000)");
        return;
      }
      o.scales.push_back(static_cast<int>(v));
    }
    o.facts_scales.clear();
    std::stringstream fs(facts_scales);
    for (std::string item; std::getline(fs, item, ',');) {
      char* end = nullptr;
      long v = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || v < 10 || v > 1000000) {
        code = Fail(2, "--facts-scales: \"" + item + "\" is not a number of memories (10..1000000)");
        return;
      }
      o.facts_scales.push_back(static_cast<int>(v));
    }
    o.queries = queries;
    o.facts_queries = std::min(queries, 1000);
    std::string tmpl = (std::filesystem::temp_directory_path() / "engram-bench-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      code = Fail(1, "cannot create a temporary directory");
      return;
    }
    o.work_dir = tmpl;
    o.pg_url = pg;
    if (isatty(2)) o.progress = [](const std::string& s) { std::cerr << "bench: " << s << "...\n"; };
    auto r = eval::RunEngineBench(o);
    std::error_code ec;
    std::filesystem::remove_all(tmpl, ec);
    if (!r.ok()) {
      code = Fail(r.status());
      return;
    }
    if (cli.g.json) {
      PrintJson(*r);
      return;
    }
    const auto& j = *r;
    std::cout << std::fixed << std::setprecision(1);
    std::cout << "machine: " << j["machine"]["cpu"].get<std::string>() << ", "
              << j["machine"]["cores"] << " cores\n";
    std::cout << "admission: " << j["admission"]["single_turns_per_s"].get<double>()
              << " turns/s one per transaction, " << j["admission"]["batched_turns_per_s"].get<double>()
              << " turns/s in batches of 500 (durability full)\n";
    std::cout << "admission: " << j["admission_durability_normal"]["single_turns_per_s"].get<double>()
              << " turns/s one per transaction, "
              << j["admission_durability_normal"]["batched_turns_per_s"].get<double>()
              << " turns/s in batches of 500 (durability normal)\n\n";
    std::cout << std::setw(9) << "turns" << std::setw(9) << "pages" << std::setw(13) << "maintain/s"
              << std::setw(10) << "p50 ms" << std::setw(10) << "p99 ms" << std::setw(12) << "load ms"
              << std::setw(12) << "update ms" << std::setw(12) << "B/page db" << std::setw(13) << "B/page mem\n";
    std::cout << std::setprecision(2);
    for (const auto& s : j["scales"]) {
      std::cout << std::setw(9) << s["turns"].get<int>() << std::setw(9) << s["pages"].get<int>()
                << std::setw(13) << s["maintain_turns_per_s"].get<double>() << std::setw(10)
                << s["retrieve_ms"]["p50"].get<double>() << std::setw(10)
                << s["retrieve_ms"]["p99"].get<double>() << std::setw(12) << s["index_load_ms"].get<double>()
                << std::setw(12) << s["index_update_ms"].get<double>() << std::setw(12) << s["db_bytes_per_page"].get<double>() << std::setw(12)
                << s["index_rss_bytes_per_page"].get<double>() << "\n";
    }
    if (!j["facts"].empty()) {
      std::cout << "\nfact memory (one scope; search top_k 10; the filter keeps 1 memory in 10)\n";
      std::cout << std::setw(9) << "memories" << std::setw(11) << "raw add/s" << std::setw(13) << "infer add/s"
                << std::setw(10) << "p50 ms" << std::setw(10) << "p95 ms" << std::setw(10) << "p99 ms"
                << std::setw(12) << "filt p50" << std::setw(12) << "filt p95" << std::setw(12) << "filt p99"
                << std::setw(13) << "first ms\n";
    }
    for (const auto& f : j["facts"]) {
      std::cout << std::setw(9) << f["memories"].get<int>() << std::setprecision(0) << std::setw(11)
                << f["raw_add_per_s"].get<double>() << std::setw(13) << f["infer_add_per_s"].get<double>()
                << std::setprecision(2);
      for (const char* k : {"search_ms", "search_filtered_ms"}) {
        for (const char* p : {"p50", "p95", "p99"}) {
          std::cout << std::setw(k[7] == 'f' ? 12 : 10) << f[k][p].get<double>();
        }
      }
      std::cout << std::setw(12) << f["first_search_ms"].get<double>() << "\n";
    }
  });
}

}  // namespace engram::cli
