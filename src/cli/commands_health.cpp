// CLI: engram health (memory health from lineage receipts) and engram canary
// (the operating gate on throwaway scopes). Both exit 0 when green, 3 when
// not, 1 or 2 on errors (docs/LINEAGE.md).
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/canary.hpp"
#include "cli/commands.hpp"
#include "core/time.hpp"
#include "store/db.hpp"

namespace engram::cli {

namespace {

constexpr int kNotGreen = 3;

std::string ScopeName(const Scope& s) { return s.tenant + "/" + s.user + "/" + s.assistant; }

nlohmann::json ReportJson(const HealthReport& r, const std::string& db, int verified) {
  nlohmann::json j = ToJson(r);
  j["db"] = db;
  if (verified >= 0) j["scopes_verified"] = verified;
  return j;
}

void PrintText(const HealthReport& r, const std::string& db, int verified, int max_lines) {
  std::cout << "memory health: " << HealthStateName(r.overall) << (r.green() ? "" : "  (NOT GREEN)") << "\n"
            << "store          " << db << "\n"
            << "evidence as of " << FormatIso8601(r.now) << ", horizon "
            << (r.horizon_ms > 0 ? std::to_string(r.horizon_ms / 3600000) + " h" : std::string("none"))
            << ", " << r.receipts_read << " receipts read\n";
  if (verified >= 0) std::cout << "verified       " << verified << " scope(s) re-verified now\n";
  std::cout << "items          " << r.items << " in " << r.scopes.size() << " scope(s)\n";
  for (int s = 0; s < kHealthStateCount; ++s) {
    std::cout << "  " << std::left << std::setw(22) << HealthStateName(static_cast<HealthState>(s))
              << std::right << std::setw(8) << r.counts[static_cast<std::size_t>(s)] << "\n";
  }
  std::ostringstream share;
  share << std::fixed << std::setprecision(1) << 100.0 * r.degraded_share;
  std::cout << "degraded share " << share.str() << "% (" << r.degraded_items << " of " << r.items
            << " items from a fallback path)\n";
  if (r.oldest_waiting) {
    const auto& w = *r.oldest_waiting;
    std::cout << "oldest waiting " << w.kind << " " << w.id << " (" << ScopeName(w.scope) << ") since "
              << FormatIso8601(w.since) << ": " << w.reason << "\n";
  } else {
    std::cout << "oldest waiting (none)\n";
  }
  int scope_lines = 0;
  for (const auto& s : r.scopes) {
    if (IsGreen(s.state) && r.scopes.size() > 5) continue;
    if (scope_lines++ == 0) std::cout << "scopes:\n";
    std::cout << "  " << ScopeName(s.scope) << ": " << HealthStateName(s.state) << "\n";
  }
  if (r.findings.empty()) return;
  std::cout << "at risk / not green (" << r.findings_total << "):\n";
  int n = 0;
  for (const auto& f : r.findings) {
    if (n++ >= max_lines) {
      std::cout << "  ... " << (r.findings_total - max_lines) << " more (use --json)\n";
      break;
    }
    std::cout << "  " << HealthStateName(f.state) << "  " << f.kind << " " << f.id << " ("
              << ScopeName(f.scope) << "): " << f.reason;
    if (!f.run_ids.empty()) {
      std::cout << "  runs:";
      for (const auto& run : f.run_ids) std::cout << " " << run;
    }
    std::cout << "\n";
  }
}

}  // namespace

void RegisterHealthCommands(CLI::App& app, Cli& cli, int& code) {
  // engram health [--user U] [--verify] [--horizon-hours H] [--json]
  auto* health = app.add_subcommand(
      "health", "Memory health from lineage receipts: exit 0 when healthy or waiting, 3 otherwise");
  static bool verify = false;
  static double horizon_hours = -1, wait_minutes = -1;
  static int max_lines = 20;
  static std::string as_of;
  health->add_flag("--verify", verify,
                   "First re-verify healthy/waiting scopes (writes verified receipts that renew the evidence)");
  // A finite number of 0..max: NaN passed CLI::Range, and a negative value read as "the default".
  auto finite = [](double max) {
    return CLI::Validator(
        [max](std::string& text) {
          double v = 0;
          std::size_t used = 0;
          try {
            v = std::stod(text, &used);
          } catch (...) {
            used = 0;
          }
          if (used != text.size() || !std::isfinite(v) || v < 0 || v > max) {
            return "must be a number from 0 to " + std::to_string(static_cast<long long>(max));
          }
          return std::string();
        },
        "0.." + std::to_string(static_cast<long long>(max)));
  };
  health->add_option("--horizon-hours", horizon_hours,
                     "Evidence older than this proves nothing (default: 24; 0: evidence never expires)")
      ->check(finite(24.0 * 366 * 100));
  health->add_option("--wait-minutes", wait_minutes, "Grace past STM capacity before a promotion is missing")
      ->check(finite(60.0 * 24 * 366));
  health->add_option("--as-of", as_of, "Judge the evidence as of this time (ISO-8601; default now)");
  health->add_option("--max-findings", max_lines, "Non-green items listed in text output")->check(CLI::Range(0, 100000));
  health->callback([&] {
    if ((code = cli.OpenEngine())) return;
    HealthOptions o;
    if (!cli.g.user.empty()) {
      o.tenant = cli.g.tenant;
      o.user = cli.g.user;
    }
    if (horizon_hours >= 0) o.horizon_ms = static_cast<std::int64_t>(horizon_hours * 3600000.0);
    if (wait_minutes >= 0) o.promotion_wait_ms = static_cast<std::int64_t>(wait_minutes * 60000.0);
    o.max_findings = cli.g.json ? 100000 : max_lines;
    if (!as_of.empty()) {
      auto t = ParseTime(as_of);
      if (!t.ok()) {
        code = Fail(2, "--as-of: " + t.status().message());
        return;
      }
      o.now = *t;
    }
    int verified = -1;
    if (verify) {
      auto v = cli.engine->VerifyLineage(o);
      if (!v.ok()) {
        code = Fail(v.status());
        return;
      }
      verified = *v;
    }
    auto r = cli.engine->Health(o);
    if (!r.ok()) {
      code = Fail(r.status());
      return;
    }
    if (cli.g.json) {
      PrintJson(ReportJson(*r, sql::RedactLocation(cli.DbPath()), verified));
    } else {
      PrintText(*r, sql::RedactLocation(cli.DbPath()), verified, max_lines);
    }
    code = r->green() ? 0 : kNotGreen;
  });

  // engram canary [--json]
  auto* canary = app.add_subcommand(
      "canary", "Run the lineage operating gate on throwaway canary scopes (cleans up; exit 0 or 3)");
  static std::string batch2;
  canary->add_option("--batch2", batch2, "internal: the post-restart batch of canary ID")->group("");
  canary->callback([&] {
    EngineOptions extra;
    extra.llm = MakeCanaryLlm();  // replaced by the configured model when there is one
    if ((code = cli.OpenEngine(std::move(extra)))) return;
    if (!batch2.empty()) {
      auto j = RunCanaryBatch2(*cli.engine, batch2);
      PrintJson(j);
      code = j.value("ok", false) ? 0 : 1;
      return;
    }
    CanaryRestart restart;
    restart.global_args = {"--home", cli.HomeDir()};
    restart.db = cli.DbPath();
    for (const auto& [flag, value] : {std::pair{"--llm-base-url", &cli.g.llm_base_url},
                                      {"--llm-model", &cli.g.llm_model},
                                      {"--embed-base-url", &cli.g.embed_base_url},
                                      {"--embed-model", &cli.g.embed_model}}) {
      if (!value->empty()) restart.global_args.insert(restart.global_args.end(), {flag, *value});
    }
    CanaryRun run = RunCanary(*cli.engine, restart);
    if (cli.g.json) {
      auto j = run.ToJson();
      j["db"] = sql::RedactLocation(cli.DbPath());
      PrintJson(j);
    } else {
      std::cout << "canary " << run.id << " (tenant engram-canary) on " << sql::RedactLocation(cli.DbPath()) << "\n";
      int passed = 0;
      for (const auto& c : run.checks) {
        passed += c.ok ? 1 : 0;
        std::cout << "  [" << (c.ok ? "ok" : "FAIL") << "] " << std::left << std::setw(19) << c.name
                  << std::right << c.detail << "\n";
      }
      std::cout << (run.ok() ? "canary passed: " : "canary FAILED: ") << passed << "/" << run.checks.size()
                << " checks\n";
    }
    code = run.ok() ? 0 : kNotGreen;
  });
}

}  // namespace engram::cli
