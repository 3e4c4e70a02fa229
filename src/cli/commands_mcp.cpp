// CLI: engram mcp — an MCP server over stdio for MCP clients (Claude Desktop,
// Cursor, agent frameworks). Scope: --tenant, --user, --assistant (global
// options). Background maintenance runs while the server does, so turns are
// promoted without a separate `engram maintain`. Logs go to stderr; stdout
// carries protocol messages only. Exits 0 at stdin EOF.
#include <csignal>
#include <iostream>

#include "cli/commands.hpp"
#include "mcp/server.hpp"
#include "store/db.hpp"

namespace engram::cli {

void RegisterMcpCommands(CLI::App& app, Cli& cli, int& code) {
  auto* mcp = app.add_subcommand("mcp", "Serve the memory to MCP clients over stdio (JSON-RPC, newline-delimited)");
  static bool read_only = false;
  mcp->add_flag("--read-only", read_only,
                "Offer only the tools that read memory (retrieve, search, list, profile, health): no add, update "
                "or delete");
  mcp->callback([&] {
    std::signal(SIGPIPE, SIG_IGN);  // a client that went away ends the loop through the failed write
    EngineOptions opts;
    opts.background_maintenance = true;
    if ((code = cli.OpenEngine(std::move(opts)))) return;
    const Scope scope = cli.CurrentScope();
    if (Status st = Engine::ValidateScope(scope); !st.ok()) {
      code = Fail(st);
      return;
    }
    mcp::Tools tools(*cli.engine, scope, read_only ? "this server was started with --read-only" : "");
    mcp::ServerInfo info;
    info.version = Version();
    info.instructions = mcp::Instructions(scope.user, read_only);
    std::cerr << "engram mcp: serving " << scope.tenant << "/" << scope.user << "/" << scope.assistant << " from "
              << sql::RedactLocation(cli.DbPath()) << " (" << cli.engine->EmbedderName() << ", " << cli.engine->MaintainerName()
              << ") on stdio" << (read_only ? ", read only" : "") << "\n";
    mcp::Server server(tools, info, std::cerr);
    code = server.Serve(std::cin, std::cout);
    std::cerr << "engram mcp: " << (code == 0 ? "end of input, exiting" : "output closed, exiting") << "\n";
  });
}

}  // namespace engram::cli
