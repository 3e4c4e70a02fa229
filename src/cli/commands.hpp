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
// --job-lease SECONDS (EngineOptions::job_lease_seconds) on serve, worker, maintain.
void AddJobLeaseOption(CLI::App* command, int& seconds);

}  // namespace engram::cli
