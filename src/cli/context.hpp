// Shared state of one CLI invocation: global options, the opened engine, and
// output helpers.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engram/engine.hpp"
#include "wire/json.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace engram {
class OpenAiClient;
}  // namespace engram

namespace engram::cli {

struct GlobalOptions {
  std::string home;
  std::string db;
  std::string tenant = "default";
  std::string user;
  std::string assistant = "assistant";
  bool json = false;
  // Model endpoint flags (win over $ENGRAM_* and engram.toml).
  std::string llm_base_url, llm_model, embed_base_url, embed_model;
  // "full" or "normal" (EngineOptions::Durability); "" = $ENGRAM_DURABILITY, else full.
  std::string durability;
};

// Thrown nowhere: commands return an exit code.
struct Cli {
  GlobalOptions g;
  // The root command (set by Main): which subcommand runs, which options were given.
  const CLI::App* app = nullptr;
  std::unique_ptr<Engine> engine;
  // The configured model clients (null when none); their counters give model
  // calls and tokens.
  std::shared_ptr<OpenAiClient> llm_client;
  std::shared_ptr<OpenAiClient> embed_client;

  // $ENGRAM_DB, --db, or <home>/engram.db where home is --home, $ENGRAM_HOME
  // or ~/.local/share/engram.
  std::string DbPath() const;
  // --home, $ENGRAM_HOME, $XDG_DATA_HOME/engram or ~/.local/share/engram.
  std::string HomeDir() const;
  Scope CurrentScope() const;
  // $ENGRAM_USER ("" when unset or empty).
  static std::string EnvUser();
  // Puts the model clients of the configuration (flags, $ENGRAM_*,
  // engram.toml) into `opts`: llm and an LLM maintainer when a chat model is
  // configured, the embedder when an embedding endpoint is; sets llm_client /
  // embed_client. Ok (nothing set) when no model is configured.
  Status ConfigureModels(EngineOptions& opts);
  // Opens the engine once (exit code 0 when ok), with the model endpoints of
  // the configuration when there are any (else the built-in engine). For a
  // command that reads, changes or erases what a store holds
  // (NeedsExistingStore) a missing store is exit 1 with one line, and nothing
  // is created (no file, no folder, no schema): an erasure run against a
  // mistyped path fails rather than reporting success on an empty store.
  int OpenEngine(EngineOptions extra = {});

  // The subcommand being run, e.g. "memory search" ("" before parsing).
  std::string CommandPath() const;
  // True for the commands that only read the store (stats, retrieve,
  // profile, export, health, memory search|get|list|history, keys list) or
  // change or erase what it holds (forget, keys revoke, memory
  // update|delete|delete-all|purge).
  bool NeedsExistingStore() const;
  // True when the global option `name` (e.g. "--user") was given.
  bool Given(const std::string& name) const;
  // Exit 0 when the store exists (or is ":memory:"), else 1 with "no store at
  // PATH (nothing was created)" / "no engram store in DATABASE (...)".
  int RequireExistingStore() const;
};

// Exit 0 when `text` (JSON given in `flag`) nests no deeper than
// json_limits::kMaxDepth; else 2 with one line naming the flag and the limit.
int CheckJsonDepth(const std::string& flag, std::string_view text);

// Prints "engram: <message>" on stderr and returns the exit code for it
// (2 for invalid arguments, 1 otherwise).
int Fail(const Status& st);
int Fail(int code, const std::string& message);
// "a,b,,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> SplitCsv(const std::string& s);
// Prints a JSON document on stdout (invalid UTF-8 replaced).
void PrintJson(const nlohmann::json& j);

// The shared JSON renderings (src/wire), so --json matches the other surfaces.
using wire::MetadataJson;
using wire::ProfileJson;
using wire::RetrievalJson;
using wire::ToJson;

}  // namespace engram::cli
