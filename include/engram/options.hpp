// engram public API: engine options. Defaults follow docs/ARCHITECTURE.md and
// are changed only with a measured reason.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace engram {

class Clock;
class Embedder;
class Maintainer;
class Llm;

struct EngineOptions {
  // The store: a SQLite file (created with its directory when missing; an
  // existing file that is not an engram store is never modified), ":memory:",
  // or a postgresql:// URL. Any other scheme is refused.
  std::string db_path;

  int stm_capacity = 10;             // turns kept verbatim in STM per scope
  int promote_batch_max = 32;        // turns analysed per promotion batch
  int mtm_capacity = 2000;           // live segments per scope before archiving
  double merge_threshold = 0.6;      // cosine + keyword Jaccard to join a segment
  double heat_threshold = 5.0;       // heat at which a segment is consolidated
  double heat_tau_hours = 24.0;      // recency decay of heat

  // Lineage (docs/LINEAGE.md): receipts older than the horizon are evidence of
  // nothing (0 = never expire); older receipts are compacted into per-day
  // summaries by maintenance (0 = keep every receipt); a source beyond its
  // capacity for longer than the wait is reported as a missing promotion.
  int receipt_horizon_hours = 24;
  int receipt_retention_days = 30;
  int promotion_wait_minutes = 60;

  // Run maintenance in a background thread (long-running processes). When
  // false, admissions leave jobs pending until Maintain() is called.
  bool background_maintenance = false;
  // How long a maintenance job stays leased to this process without renewal
  // (renewed before every batch). A process that dies holding a job loses it
  // when the lease expires; another process then takes the job over.
  int job_lease_seconds = 120;
  // Memory (MiB) the per-scope retrieval snapshots kept by this process may
  // take; beyond it the least recently used are dropped (and rebuilt from the
  // store when their scope is retrieved again). The snapshot being used is
  // always kept, however large. The fact snapshots of fact search and
  // consolidation are kept within a budget of the same size of their own.
  // At least 1.
  std::size_t snapshot_cache_mb = 1024;
  // What an acknowledged write survives. kFull (the default): power loss and
  // OS crashes too - SQLite syncs the WAL at every commit (synchronous=FULL),
  // PostgreSQL flushes the commit before answering (synchronous_commit=on).
  // kNormal: process crashes only - SQLite syncs at checkpoints
  // (synchronous=NORMAL), PostgreSQL answers before the flush
  // (synchronous_commit=off), so the newest commits can be lost on power loss
  // or an OS crash; the store is never corrupted in either mode.
  enum class Durability { kFull, kNormal };
  Durability durability = Durability::kFull;

  // Check the database file's integrity when opening (PRAGMA quick_check).
  bool verify_on_open = true;

  // Opens a store recorded with another embedder (or one being migrated) for
  // Engine::Reembed: the embedder check is skipped, and until the store's
  // vectors are the configured embedder's, Maintain/Retrieve/Chat fail with
  // FailedPrecondition (admission, inspection and erasure still work).
  bool allow_embedder_migration = false;

  // Injected dependencies; the built-in offline implementations and the
  // system clock are used when null. Not owned when raw; shared otherwise.
  std::shared_ptr<Embedder> embedder;
  std::shared_ptr<Maintainer> maintainer;
  // The model that answers in Chat(); Chat fails with FailedPrecondition
  // when null. (Maintenance uses `maintainer`, which may wrap the same model.)
  std::shared_ptr<Llm> llm;
  const Clock* clock = nullptr;

  // Test hook: when set, called at named points of maintenance
  // ("promote.after_compute", "promote.before_commit", "promote.after_commit",
  // "consolidate.after_compute", "consolidate.before_commit", ...). A test may
  // abort the process there to simulate a crash.
  void (*fault_point)(const char* name) = nullptr;
};

}  // namespace engram
