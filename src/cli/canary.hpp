// engram canary: the operating gate of docs/LINEAGE.md, run on throwaway
// scopes inside the real store. Tenant "engram-canary", two users and two
// assistants named by a random id, dialogue made of random tokens only (no
// personal content). The canary erases its users before it returns.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engram/engine.hpp"

namespace engram {
class Llm;
}  // namespace engram

namespace engram::cli {

struct CanaryCheck {
  std::string name;
  bool ok = false;
  std::string detail;
};

struct CanaryRun {
  std::string id;  // the random id in the canary's user and assistant ids
  std::vector<CanaryCheck> checks;
  bool ok() const;
  nlohmann::json ToJson() const;
};

// How to start this binary again on the same store (the restart between
// batches is a new process).
struct CanaryRestart {
  std::string exe = "/proc/self/exe";
  std::vector<std::string> global_args;  // --home and model flags of this run
  // The store, passed to the child in ENGRAM_DB rather than on its command
  // line, where any user of the machine could read a password in it.
  std::string db;
};

// Runs every check (pin, capacity, degraded path, scope isolation, restart,
// retrieval and generation receipts, health, expiry, cleanup) and reports each.
CanaryRun RunCanary(Engine& engine, const CanaryRestart& restart);

// The batch after the restart, run by the re-executed binary: admits
// capacity + 2 turns into the first canary scope and promotes them. Returns
// {"ok", "source_version", "pages_created", "error"}.
nlohmann::json RunCanaryBatch2(Engine& engine, const std::string& id);

// The answer model of the generation check when none is configured: a fixed
// reply; it keeps nothing it is shown.
std::shared_ptr<Llm> MakeCanaryLlm();

}  // namespace engram::cli
