// CLI: retrieve, profile, stats, export, version.
#include <iostream>

#include "cli/commands.hpp"
#include "core/time.hpp"
#include "store/db.hpp"

namespace engram::cli {

void RegisterInspectCommands(CLI::App& app, Cli& cli, int& code) {
  // engram retrieve QUERY [--budget N]
  auto* ret = app.add_subcommand("retrieve", "Print the memory context engram would give a model");
  static std::string query;
  static int budget = 2000, max_pages = 0;
  ret->add_option("QUERY", query, "The question or message")->required();
  ret->add_option("--budget", budget, "Context budget in tokens")->check(CLI::Range(0, 1000000));
  ret->add_option("--max-pages", max_pages, "Past exchanges at most (0: as many as the budget holds)")
      ->check(CLI::Range(0, 1000));
  ret->callback([&] {
    if ((code = cli.OpenEngine())) return;
    RetrieveOptions o;
    o.budget_tokens = budget;
    o.max_pages = max_pages;
    auto r = cli.engine->Retrieve(cli.CurrentScope(), query, o);
    if (!r.ok()) {
      code = Fail(r.status());
      return;
    }
    if (cli.g.json) {
      PrintJson(RetrievalJson(query, budget, *r));
    } else if (r->context.empty()) {
      // Say why: an empty scope, a budget too small for anything, or nothing
      // that matches the query.
      const Scope scope = cli.CurrentScope();
      auto st = cli.engine->GetStats(&scope);
      if (st.ok() && st->turns_admitted == 0 && st->user_facts == 0 && st->assistant_facts == 0 &&
          st->profile_slots == 0) {
        std::cout << "(no memory for this scope yet)\n";
      } else if (r->truncated) {
        std::cout << "(nothing fits a budget of " << budget << " tokens: raise --budget)\n";
      } else {
        std::cout << "(nothing in this scope's memory matches the query)\n";
      }
    } else {
      std::cout << r->context;
    }
  });

  // engram profile
  auto* prof = app.add_subcommand("profile", "Show the user profile and long-term facts");
  prof->callback([&] {
    if ((code = cli.OpenEngine())) return;
    Scope scope = cli.CurrentScope();
    auto p = cli.engine->GetProfile(scope);
    auto facts = cli.engine->ListFacts(scope, "");
    if (!p.ok() || !facts.ok()) {
      code = Fail(p.ok() ? facts.status() : p.status());
      return;
    }
    if (cli.g.json) {
      PrintJson(ProfileJson(scope, *p, *facts));
      return;
    }
    std::cout << "Profile of " << scope.user << ":\n" << (p->text.empty() ? "(empty)" : p->text) << "\n";
    for (const char* kind : {"user", "assistant"}) {
      std::cout << "\nFacts about the " << kind << ":\n";
      int n = 0;
      for (const auto& f : *facts) {
        if (f.kind != kind) continue;
        std::cout << "- (" << FormatHumanDate(f.event_time) << ") " << f.text << "\n";
        ++n;
      }
      if (!n) std::cout << "(none)\n";
    }
  });

  // engram stats
  auto* stats = app.add_subcommand("stats", "Counts per tier (whole store, or one scope with --user)");
  stats->callback([&] {
    if ((code = cli.OpenEngine())) return;
    Scope scope = cli.CurrentScope();
    auto s = cli.engine->GetStats(cli.g.user.empty() ? nullptr : &scope);
    if (!s.ok()) {
      code = Fail(s.status());
      return;
    }
    if (cli.g.json) {
      auto j = ToJson(*s);
      j["embedder"] = cli.engine->EmbedderName();
      j["maintainer"] = cli.engine->MaintainerName();
      j["db"] = sql::RedactLocation(cli.DbPath());
      PrintJson(j);
      return;
    }
    std::cout << "store            " << sql::RedactLocation(cli.DbPath()) << "\n"
              << "turns admitted   " << s->turns_admitted << "\n"
              << "  in STM         " << s->stm_turns << "\n"
              << "  in MTM pages   " << s->mtm_pages << " (" << s->mtm_segments << " segments)\n"
              << "  archived pages " << s->archived_pages << " (" << s->archived_segments << " segments)\n"
              << "profile slots    " << s->profile_slots << "\n"
              << "user facts       " << s->user_facts << "\n"
              << "assistant facts  " << s->assistant_facts << "\n"
              << "jobs pending     " << s->pending_jobs << ", failed " << s->failed_jobs << "\n"
              << "degraded items   " << s->degraded_items << " (built-in engine: "
              << cli.engine->MaintainerName() << ", " << cli.engine->EmbedderName() << ")\n";
  });

  // engram export [--all]
  auto* exp = app.add_subcommand(
      "export", "Write the current scope (--all: the whole store) as JSON lines; engram import restores them");
  static bool all = false;
  exp->add_flag("--all", all, "Every scope of every tenant: a backup (default: the current scope)");
  exp->callback([&] {
    if ((code = cli.OpenEngine())) return;
    Scope scope = cli.CurrentScope();
    Status st = cli.engine->Export(all ? nullptr : &scope,
                                   [](const std::string& line) { std::cout << line << "\n"; });
    if (!st.ok()) code = Fail(st);
  });

  // engram version
  auto* ver = app.add_subcommand("version", "Print the engram version");
  ver->callback([&] {
    if (cli.g.json) {
      PrintJson({{"version", Version()}});
    } else {
      std::cout << "engram " << Version() << "\n";
    }
  });
}

}  // namespace engram::cli
