#include "cli/commands.hpp"

namespace engram::cli {

void RegisterCommands(CLI::App& app, Cli& cli, int& code) {
  RegisterTurnCommands(app, cli, code);
  RegisterInspectCommands(app, cli, code);
  RegisterEvalCommands(app, cli, code);
  RegisterBenchCommands(app, cli, code);
  RegisterChatCommands(app, cli, code);
  RegisterHealthCommands(app, cli, code);
  RegisterReembedCommands(app, cli, code);
  RegisterMemoryCommands(app, cli, code);
  RegisterMcpCommands(app, cli, code);
  RegisterServeCommands(app, cli, code);
  RegisterWorkerCommands(app, cli, code);
  RegisterStoreCommands(app, cli, code);
}

}  // namespace engram::cli
