// CLI: engram bench.
#include <unistd.h>

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
  bench->add_option("--scales", scales, "Turns per scope, comma-separated");
  bench->add_option("--queries", queries, "Retrievals measured per scale")->check(CLI::Range(1, 100000));
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
    o.queries = queries;
    std::string tmpl = (std::filesystem::temp_directory_path() / "engram-bench-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      code = Fail(1, "cannot create a temporary directory");
      return;
    }
    o.work_dir = tmpl;
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
              << " turns/s in batches of 500\n\n";
    std::cout << std::setw(9) << "turns" << std::setw(9) << "pages" << std::setw(13) << "maintain/s"
              << std::setw(10) << "p50 ms" << std::setw(10) << "p99 ms" << std::setw(12) << "load ms"
              << std::setw(12) << "B/page db" << std::setw(13) << "B/page mem\n";
    std::cout << std::setprecision(2);
    for (const auto& s : j["scales"]) {
      std::cout << std::setw(9) << s["turns"].get<int>() << std::setw(9) << s["pages"].get<int>()
                << std::setw(13) << s["maintain_turns_per_s"].get<double>() << std::setw(10)
                << s["retrieve_ms"]["p50"].get<double>() << std::setw(10)
                << s["retrieve_ms"]["p99"].get<double>() << std::setw(12) << s["index_load_ms"].get<double>()
                << std::setw(12) << s["db_bytes_per_page"].get<double>() << std::setw(12)
                << s["index_rss_bytes_per_page"].get<double>() << "\n";
    }
  });
}

}  // namespace engram::cli
