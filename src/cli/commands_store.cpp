// CLI: engram store copy - move a whole store to another location.
//
//   engram store copy --to postgresql://user@host/engram         # the current store (--db / ENGRAM_DB / home)
//   engram store copy --from old.db --to postgresql://.../engram  # SQLite -> PostgreSQL
//   engram store copy --from postgresql://.../engram --to new.db  # and back
//
// The target must be empty (a new SQLite file, an empty database, or a store
// that holds nothing yet); the source must be an engram store of this
// version. Everything is copied in one transaction on the target, from one
// snapshot of the source, then verified table by table (row counts and
// content hashes). Exit codes: 0 copied and verified, 2 invalid arguments,
// 1 refused or failed (one line on stderr). Passwords are never printed.
#include <unistd.h>

#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "core/clock.hpp"
#include "store/copy.hpp"

namespace engram::cli {

namespace {

std::string Seconds(double s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(s < 10 ? 2 : 1) << s;
  return out.str();
}

int RunCopy(Cli& cli, const std::string& from_flag, const std::string& to) {
  const std::string from = from_flag.empty() ? cli.DbPath() : from_flag;
  store::CopyOptions o;
  o.now_ms = SystemClock::Default().NowMs();
  const bool tty = isatty(2) == 1;
  if (tty && !cli.g.json) {
    o.on_table = [](const store::TableDigest& d) {
      std::cerr << "\rcopied " << std::left << std::setw(14) << d.table << std::right << std::setw(10) << d.rows
                << " rows" << std::flush;
    };
  }
  auto r = store::CopyStore(from, to, o);
  if (tty && !cli.g.json) std::cerr << "\r" << std::string(40, ' ') << "\r" << std::flush;
  if (!r.ok()) return Fail(r.status());
  if (cli.g.json) {
    nlohmann::json tables = nlohmann::json::array();
    for (const auto& d : r->tables) {
      tables.push_back({{"table", d.table}, {"rows", d.rows}, {"vector_bytes", d.vector_bytes}, {"hash", d.Hash()}});
    }
    PrintJson({{"source", r->source},
               {"target", r->target},
               {"tables", tables},
               {"table_count", r->tables.size()},
               {"rows", r->rows},
               {"vector_bytes", r->vector_bytes},
               {"scope_id_high", r->scope_id_high},
               {"seconds", r->seconds},
               {"verified", true}});
    return 0;
  }
  std::cout << "copied " << r->source << " -> " << r->target << "\n";
  for (const auto& d : r->tables) {
    if (d.rows == 0) continue;
    std::cout << "  " << std::left << std::setw(15) << d.table << std::right << std::setw(10) << d.rows << " rows";
    if (d.vector_bytes) std::cout << ", " << d.vector_bytes << " bytes of vectors";
    std::cout << "\n";
  }
  std::cout << r->tables.size() << " tables, " << r->rows << " rows, " << r->vector_bytes << " bytes of vectors in "
            << Seconds(r->seconds) << " s; verified: every table's row count and content hash match\n";
  return 0;
}

}  // namespace

void RegisterStoreCommands(CLI::App& app, Cli& cli, int& code) {
  auto* store = app.add_subcommand("store", "Manage the store itself (copy it to another location)");
  store->require_subcommand(1);
  // engram store copy [--from SOURCE] --to TARGET
  auto* copy = store->add_subcommand(
      "copy", "Copy the whole store to an empty SQLite file or PostgreSQL database (either direction), verified");
  static std::string from, to;
  copy->add_option("--from", from, "Source store: a SQLite path or a postgresql:// URL (default: the current store)");
  copy->add_option("--to", to, "Target: a new SQLite path or an empty PostgreSQL database URL")->required();
  copy->callback([&cli, &code] { code = RunCopy(cli, from, to); });
}

}  // namespace engram::cli
