// Configuration and dependencies shared by the memory tiers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/clock.hpp"
#include "engram/result.hpp"
#include "models/embedder.hpp"
#include "models/maintainer.hpp"

namespace engram::sql {
class Db;
}

namespace engram::memory {

namespace facts {
struct FactVectors;
struct FactChanges;
}  // namespace facts

struct MemoryConfig {
  int stm_capacity = 10;
  int promote_batch_max = 32;
  int mtm_capacity = 2000;
  double merge_threshold = 0.6;
  double heat_threshold = 5.0;
  double heat_tau_hours = 24.0;
  int consolidate_batch_max = 32;  // pages per consolidation call
  int max_job_attempts = 3;
  TimeMs job_lease_ms = 120000;  // a job's lease; renewed before every batch
  double fact_near_duplicate = 0.95;  // cosine at which a new fact duplicates a live one
  // engram version + the configuration above + model names (for receipts).
  std::string source_version;
};

struct MemoryDeps {
  Embedder* embedder = nullptr;
  // The embedder of one tenant's memory content (the persistent embedding
  // cache is kept per tenant: engine/caching_embedder.hpp); `embedder` when unset.
  std::function<Embedder*(const std::string& tenant)> embedder_for;
  Maintainer* maintainer = nullptr;
  const Clock* clock = nullptr;
  void (*fault_point)(const char* name) = nullptr;
  // Who holds the leases of the jobs this process runs (process::NewHolderId),
  // and which other holders are certainly dead (their jobs are taken over
  // before their leases expire).
  std::string job_holder;
  std::function<bool(const std::string&)> holder_gone;
  // The fact snapshot of a scope as committed (read under the writer lock,
  // inside the write's transaction: the engine's cache, facts/fact_vectors.hpp),
  // and where a committed write's changes to it are published. With both,
  // consolidation's duplicate checks read the snapshot and the batch's own
  // changes instead of scanning the scope's facts for every inserted fact.
  // Optional (unset: the scan).
  std::function<Result<std::shared_ptr<const facts::FactVectors>>(sql::Db*, std::int64_t scope_id)>
      writer_fact_vectors;
  std::function<Status(sql::Db*, const facts::FactVectors&, const facts::FactChanges&)> publish_fact_vectors;

  Embedder* EmbedderFor(const std::string& tenant) const {
    return embedder_for ? embedder_for(tenant) : embedder;
  }

  void Fault(const char* name) const {
    if (fault_point) fault_point(name);
  }
};

}  // namespace engram::memory
