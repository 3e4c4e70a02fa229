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

const CLI::Validator& NonEmpty() {
  static const CLI::Validator check(
      [](std::string& value) {
        return value.empty() ? std::string("must not be empty (omit the option to use the default)") : std::string();
      },
      "", "non-empty");
  return check;
}

}  // namespace engram::cli
