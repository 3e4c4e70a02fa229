// Registration of the CLI subcommands. Each callback stores its exit code in
// `code`.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.hpp"

namespace engram::cli {

void RegisterCommands(CLI::App& app, Cli& cli, int& code);

// Individual groups (commands_*.cpp).
void RegisterTurnCommands(CLI::App& app, Cli& cli, int& code);
void RegisterInspectCommands(CLI::App& app, Cli& cli, int& code);
void RegisterEvalCommands(CLI::App& app, Cli& cli, int& code);
void RegisterBenchCommands(CLI::App& app, Cli& cli, int& code);
void RegisterChatCommands(CLI::App& app, Cli& cli, int& code);
void RegisterHealthCommands(CLI::App& app, Cli& cli, int& code);
void RegisterReembedCommands(CLI::App& app, Cli& cli, int& code);
void RegisterMemoryCommands(CLI::App& app, Cli& cli, int& code);
void RegisterMcpCommands(CLI::App& app, Cli& cli, int& code);
void RegisterServeCommands(CLI::App& app, Cli& cli, int& code);
void RegisterWorkerCommands(CLI::App& app, Cli& cli, int& code);
void RegisterStoreCommands(CLI::App& app, Cli& cli, int& code);
// The check of an option whose empty value is a usage error, never "use the
// default" (--home, --db, --user, --agent, --run: a script's unset variable
// must not act on the default user's memory).
const CLI::Validator& NonEmpty();
// --job-lease SECONDS (EngineOptions::job_lease_seconds) on serve, worker, maintain.
void AddJobLeaseOption(CLI::App* command, int& seconds);

}  // namespace engram::cli
