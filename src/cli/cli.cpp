#include "cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/context.hpp"

namespace engram::cli {

int Main(int argc, char** argv) {
  Cli cli;
  CLI::App app{"engram: a memory operating system for AI agents", "engram"};
  cli.app = &app;
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand
  app.set_version_flag("--version", std::string("engram ") + Version());
  app.option_defaults()->always_capture_default();
  app.add_option("--home", cli.g.home, "Data directory (default $ENGRAM_HOME or ~/.local/share/engram)")
      ->check(NonEmpty());
  app.add_option("--db", cli.g.db, "Store file (default $ENGRAM_DB or <home>/engram.db)")->check(NonEmpty());
  app.add_option("--tenant", cli.g.tenant, "Tenant id");
  app.add_option("--durability", cli.g.durability,
                 "full (default): an acknowledged write survives power loss; normal: process crashes only "
                 "(default $ENGRAM_DURABILITY or full)")
      ->check(CLI::IsMember({"full", "normal"}));
  app.add_option("--user", cli.g.user, "User id (default $ENGRAM_USER or \"default\")")->check(NonEmpty());
  app.add_option("--assistant", cli.g.assistant, "Assistant id");
  app.add_flag("--json", cli.g.json, "Print one JSON document on stdout");
  app.add_option("--llm-base-url", cli.g.llm_base_url, "OpenAI-compatible chat endpoint, e.g. http://127.0.0.1:11434/v1");
  app.add_option("--llm-model", cli.g.llm_model, "Chat model name");
  app.add_option("--embed-base-url", cli.g.embed_base_url, "OpenAI-compatible embeddings endpoint");
  app.add_option("--embed-model", cli.g.embed_model, "Embedding model name");
  for (auto* opt : app.get_options()) opt->configurable(false);

  int code = 0;
  RegisterCommands(app, cli, code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "engram: " << e.what() << " (see engram --help)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "engram: internal error: " << e.what() << "\n";
    return 1;
  }
  return code;
}

}  // namespace engram::cli
