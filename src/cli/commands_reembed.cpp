// CLI: engram reembed - migrate the store to another embedder in place.
//
//   engram reembed [--embed-base-url URL --embed-model M]   # the configured endpoint
//   engram reembed --builtin                                # back to the built-in embedder
//
// The target comes from the usual provider configuration (flags, then
// $ENGRAM_EMBED_*, then engram.toml [embed]). The store is opened in
// migration mode (EngineOptions::allow_embedder_migration), so the embedder
// it was built with need not be available. An interrupted run is resumed by
// running the command again with the same target.
#include <unistd.h>

#include <iostream>

#include "cli/commands.hpp"
#include "models/builtin/hash_embedder.hpp"
#include "models/http/http_client.hpp"
#include "models/openai/openai_client.hpp"
#include "models/openai/openai_embedder.hpp"
#include "models/openai/provider_config.hpp"
#include "store/db.hpp"
#include "store/open.hpp"

namespace engram::cli {

namespace {

// The embedder to migrate to; probes a configured endpoint for its dimension.
Result<std::shared_ptr<Embedder>> TargetEmbedder(Cli& cli, bool builtin) {
  if (builtin) return std::shared_ptr<Embedder>(std::make_shared<HashEmbedder>());
  std::map<std::string, std::string> flags;
  for (const auto& [key, value] : {std::pair{"llm_base_url", &cli.g.llm_base_url}, {"llm_model", &cli.g.llm_model},
                                   {"embed_base_url", &cli.g.embed_base_url}, {"embed_model", &cli.g.embed_model}}) {
    if (!value->empty()) flags[key] = *value;
  }
  ENGRAM_ASSIGN_OR_RETURN(ProviderConfig cfg, LoadProviderConfig(cli.HomeDir(), flags));
  if (!cfg.HasEmbed()) {
    return Status::InvalidArgument(
        "reembed: no embedding model is configured; give --embed-base-url and --embed-model (or "
        "ENGRAM_EMBED_BASE_URL/ENGRAM_EMBED_MODEL, or [embed] in engram.toml), or --builtin for the "
        "built-in embedder");
  }
  cli.embed_client = std::make_shared<OpenAiClient>(cfg, std::make_shared<CurlHttpClient>());
  ENGRAM_ASSIGN_OR_RETURN(auto embedder, OpenAiEmbedder::Create(cli.embed_client));
  return std::shared_ptr<Embedder>(std::move(embedder));
}

// A one-line progress bar on stderr, only when stderr is a terminal.
class Bar {
 public:
  Bar() : tty_(isatty(2) == 1) {}
  ~Bar() {
    if (drawn_) std::cerr << "\n";
  }
  void Update(std::int64_t done, std::int64_t total) {
    if (!tty_ || total <= 0) return;
    constexpr std::int64_t kWidth = 30;
    const std::int64_t filled = std::min(kWidth, kWidth * done / total);
    std::cerr << "\rreembed [" << std::string(static_cast<std::size_t>(filled), '#')
              << std::string(static_cast<std::size_t>(kWidth - filled), ' ') << "] " << done << "/" << total
              << " vectors" << std::flush;
    drawn_ = true;
  }

 private:
  bool tty_;
  bool drawn_ = false;
};

int RunReembed(Cli& cli, bool builtin) {
  if (builtin && (!cli.g.embed_base_url.empty() || !cli.g.embed_model.empty())) {
    return Fail(2, "reembed: --builtin conflicts with --embed-base-url/--embed-model");
  }
  const std::string path = cli.DbPath();
  // A SQLite file that is there, or a PostgreSQL database with the engram
  // schema (a URL is never taken for a path).
  auto exists = store::Exists(path);
  if (!exists.ok()) return Fail(exists.status());
  if (!*exists) return Fail(1, "reembed: no store at " + sql::RedactLocation(path) + "; nothing to migrate");
  auto target = TargetEmbedder(cli, builtin);
  if (!target.ok()) return Fail(target.status());

  EngineOptions o;
  o.db_path = path;
  o.embedder = *target;
  o.allow_embedder_migration = true;
  auto e = Engine::Open(std::move(o));
  if (!e.ok()) return Fail(e.status());
  cli.engine = std::move(e).value();

  Result<ReembedReport> r = Status::Internal("not run");
  {
    Bar bar;
    r = cli.engine->Reembed(*target, [&bar](std::int64_t done, std::int64_t total) { bar.Update(done, total); });
  }
  if (!r.ok()) return Fail(r.status());
  if (cli.g.json) {
    PrintJson({{"from", r->from}, {"from_dim", r->from_dim}, {"to", r->to}, {"to_dim", r->to_dim},
               {"pages", r->pages}, {"facts", r->facts}, {"segments", r->segments},
               {"resumed", r->resumed}, {"changed", r->changed}, {"cancelled", r->cancelled}});
  } else if (!r->changed) {
    std::cout << "the store already uses " << r->to << " (dimension " << r->to_dim << "); nothing to migrate"
              << (r->cancelled ? " (the interrupted migration to another embedder was cancelled)" : "") << "\n";
  } else {
    std::cout << (r->resumed ? "resumed and finished" : "finished") << " the migration from " << r->from
              << " (dimension " << r->from_dim << ") to " << r->to << " (dimension " << r->to_dim << "): "
              << r->pages << " pages, " << r->facts << " facts re-embedded, " << r->segments
              << " segment centroids recomputed\n";
  }
  return 0;
}

}  // namespace

void RegisterReembedCommands(CLI::App& app, Cli& cli, int& code) {
  auto* cmd = app.add_subcommand(
      "reembed", "Migrate the store to the configured embedder (or --builtin) in place; resumable");
  static bool builtin = false;
  cmd->add_flag("--builtin", builtin, "Migrate to the built-in offline embedder");
  cmd->callback([&cli, &code] { code = RunReembed(cli, builtin); });
}

}  // namespace engram::cli
