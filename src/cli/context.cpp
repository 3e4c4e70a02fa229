#include "cli/context.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "core/json_limits.hpp"
#include "models/http/http_client.hpp"
#include "models/llm/llm_maintainer.hpp"
#include "models/openai/openai_client.hpp"
#include "models/openai/openai_embedder.hpp"
#include "models/openai/provider_config.hpp"
#include "store/db.hpp"
#include "store/open.hpp"

namespace engram::cli {

std::string Cli::HomeDir() const {
  if (!g.home.empty()) return g.home;
  if (const char* e = std::getenv("ENGRAM_HOME"); e && *e) return e;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::string(xdg) + "/engram";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.local/share/engram";
  return ".engram";
}

std::string Cli::DbPath() const {
  if (!g.db.empty()) return g.db;
  if (const char* e = std::getenv("ENGRAM_DB"); e && *e) return e;
  const std::string home = HomeDir();
  return home + (!home.empty() && home.back() == '/' ? "" : "/") + "engram.db";  // "/" -> "/engram.db"
}

std::string Cli::EnvUser() {
  const char* e = std::getenv("ENGRAM_USER");
  return e ? e : "";
}

Scope Cli::CurrentScope() const {
  Scope s;
  s.tenant = g.tenant;
  s.user = g.user;
  if (s.user.empty()) s.user = EnvUser();
  if (s.user.empty()) s.user = "default";
  s.assistant = g.assistant;
  return s;
}

Status Cli::ConfigureModels(EngineOptions& opts) {
  // The store's durability goes with the models: every command that opens an engine comes here.
  std::string durability = g.durability;
  if (durability.empty()) {
    const char* env = std::getenv("ENGRAM_DURABILITY");
    durability = env && *env ? env : "full";
  }
  if (durability != "full" && durability != "normal") {
    return Status::InvalidArgument("durability: must be full or normal (got '" + durability + "')");
  }
  opts.durability = durability == "full" ? EngineOptions::Durability::kFull : EngineOptions::Durability::kNormal;
  std::map<std::string, std::string> flags;
  for (const auto& [key, value] : {std::pair{"llm_base_url", &g.llm_base_url}, {"llm_model", &g.llm_model},
                                   {"embed_base_url", &g.embed_base_url}, {"embed_model", &g.embed_model}}) {
    if (!value->empty()) flags[key] = *value;
  }
  auto cfg = LoadProviderConfig(HomeDir(), flags);
  if (!cfg.ok()) return cfg.status();
  if (cfg->HasLlm() || cfg->HasEmbed()) {
    auto http = std::make_shared<CurlHttpClient>();
    if (cfg->HasLlm()) {
      llm_client = std::make_shared<OpenAiClient>(*cfg, http);
      opts.llm = llm_client;
      opts.maintainer = std::make_shared<LlmMaintainer>(llm_client);
    }
    if (cfg->HasEmbed()) {
      embed_client = std::make_shared<OpenAiClient>(*cfg, http);
      auto embedder = OpenAiEmbedder::Create(embed_client);
      if (!embedder.ok()) return embedder.status();
      opts.embedder = *embedder;
    }
  }
  return Status::Ok();
}

std::string Cli::CommandPath() const {
  std::string path;
  for (const CLI::App* at = app; at;) {
    const auto subs = at->get_subcommands();  // the ones given on the command line
    at = subs.empty() ? nullptr : subs.front();
    if (at) path += (path.empty() ? "" : " ") + at->get_name();
  }
  return path;
}

bool Cli::NeedsExistingStore() const {
  static constexpr std::array<std::string_view, 16> kExisting = {
      "stats", "retrieve", "profile", "export", "health", "memory search", "memory get", "memory list",
      "memory history", "keys list", "keys revoke", "forget", "memory update", "memory delete",
      "memory delete-all", "memory purge"};
  const std::string path = CommandPath();
  return std::find(kExisting.begin(), kExisting.end(), path) != kExisting.end();
}

bool Cli::Given(const std::string& name) const {
  const CLI::Option* opt = app ? app->get_option_no_throw(name) : nullptr;
  return opt != nullptr && opt->count() > 0;
}

int Cli::RequireExistingStore() const {
  const std::string location = DbPath();
  auto where = sql::ParseLocation(location);
  if (!where.ok()) return Fail(where.status());
  if (store::IsInMemory(location)) return 0;
  auto exists = store::Exists(location);
  if (!exists.ok()) return Fail(exists.status());
  if (*exists) return 0;
  if (where->dialect == sql::Dialect::kSqlite) return Fail(1, "no store at " + where->target + " (nothing was created)");
  return Fail(1, "no engram store in " + sql::RedactLocation(location) + " (nothing was created)");
}

int Cli::OpenEngine(EngineOptions extra) {
  if (engine) return 0;
  if (NeedsExistingStore()) {
    if (int code = RequireExistingStore()) return code;
  }
  if (Status st = ConfigureModels(extra); !st.ok()) return Fail(st);
  extra.db_path = DbPath();
  auto e = Engine::Open(std::move(extra));
  if (!e.ok()) return Fail(e.status());
  engine = std::move(e).value();
  return 0;
}

int CheckJsonDepth(const std::string& flag, std::string_view text) {
  if (json_limits::WithinDepth(text)) return 0;
  return Fail(2, flag + ": " + json_limits::TooDeepMessage());
}

std::vector<std::string> SplitCsv(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int Fail(int code, const std::string& message) {
  std::cerr << "engram: " << message << "\n";
  return code;
}

int Fail(const Status& st) {
  return Fail(st.code() == StatusCode::kInvalidArgument ? 2 : 1, st.ToString());
}

void PrintJson(const nlohmann::json& j) {
  std::cout << wire::Dump(j, 2) << "\n";
}

}  // namespace engram::cli
