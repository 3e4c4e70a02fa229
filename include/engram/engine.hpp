// engram public API: the memory engine.
//
//   auto engine = engram::Engine::Open({.db_path = "/tmp/mem.db"});
//   if (!engine.ok()) { ... engine.status().ToString() ... }
//   (*engine)->AddTurn(scope, {.user_text = "hi", .assistant_text = "hello"});
//   (*engine)->Maintain();
//   auto ctx = (*engine)->Retrieve(scope, "what did I say?", {});
//
// Thread-safety: all methods may be called from any thread concurrently.
// Writes are serialised (one writer); retrieval runs in parallel and never
// writes to the store.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engram/lineage.hpp"
#include "engram/options.hpp"
#include "engram/result.hpp"
#include "engram/types.hpp"

namespace engram {

class Engine {
 public:
  // Opens or creates the store at options.db_path. Fails with Corruption for
  // a damaged file, FailedPrecondition for a non-engram database or an
  // embedder other than the one the store was built with.
  static Result<std::unique_ptr<Engine>> Open(EngineOptions options);
  virtual ~Engine() = default;

  // Validates a scope's ids (non-empty, <= 128 bytes, UTF-8, no control chars).
  static Status ValidateScope(const Scope& scope);

  // Appends one exchange to the turn log (STM) durably. When STM is over its
  // capacity a promotion job becomes pending (run by the background worker or
  // Maintain()).
  virtual Result<AdmitResult> AddTurn(const Scope& scope, const TurnInput& turn) = 0;
  // Admits many exchanges in one transaction (all or nothing).
  virtual Result<std::vector<AdmitResult>> AddTurns(const Scope& scope,
                                                    const std::vector<TurnInput>& turns) = 0;

  // Runs pending promotion and consolidation work to completion, for one
  // scope or (scope == nullptr) all scopes. Failed jobs stay visible.
  virtual Result<MaintainReport> Maintain(const Scope* scope = nullptr) = 0;
  // Makes failed jobs pending again; returns how many.
  virtual Result<int> RetryFailedJobs() = 0;

  // The context for a query. Read-only: access statistics are buffered in
  // memory and folded into heat by the next maintenance run.
  virtual Result<RetrievalResult> Retrieve(const Scope& scope, const std::string& query,
                                           const RetrieveOptions& options) = 0;

  // A memory-grounded answer: retrieves context, asks the configured model,
  // then (options.admit) admits the exchange together with a generation
  // receipt naming the memory versions that entered the prompt. When the model
  // fails, the error is returned and nothing is admitted.
  virtual Result<ChatReply> Chat(const Scope& scope, const std::string& query,
                                 const ChatOptions& options) = 0;

  virtual Result<Profile> GetProfile(const Scope& scope) = 0;
  virtual Result<std::vector<Fact>> ListFacts(const Scope& scope, const std::string& kind) = 0;
  // Turns of a scope in admission order (after_seq exclusive), at most limit.
  virtual Result<std::vector<Turn>> ListTurns(const Scope& scope, std::int64_t after_seq,
                                              int limit) = 0;
  // Statistics of one scope, or of the whole store when scope == nullptr.
  virtual Result<Stats> GetStats(const Scope* scope) = 0;
  // All scopes in the store.
  virtual Result<std::vector<Scope>> ListScopes() = 0;

  // Writes every record (scopes, turns, pages, segments, profile, facts) as
  // JSON lines to `sink`, one call per line (no trailing newline).
  virtual Status Export(const Scope* scope, const std::function<void(const std::string&)>& sink) = 0;

  // Erases a user's content everywhere (all assistants of that user in the
  // tenant): turns, pages, segments, facts, profile, indexes, jobs. One
  // transaction. Returns the number of turns erased.
  virtual Result<std::int64_t> ForgetUser(const std::string& tenant, const std::string& user) = 0;

  // Migrates the store's vectors to `target` (null: the built-in embedder) in
  // place. Pages (from the text promotion embeds: the rendered exchange) and
  // facts (their text) are embedded into shadow columns in batches, each
  // batch in its own transaction; rows already done are skipped, so an
  // interrupted run resumes where it stopped. When every row is done, ONE
  // transaction switches the vectors, recomputes segment centroids and
  // records `target` as the store's embedder. Until then the store still
  // opens with its old embedder; opening with `target` without
  // allow_embedder_migration is FailedPrecondition. A different target than
  // an interrupted one restarts the migration; the store's own embedder as
  // target cancels it. `progress` (optional) gets (vectors done, total).
  // Needs exclusive use of the store by this process (no concurrent writers
  // with another embedder during the switch).
  virtual Result<ReembedReport> Reembed(
      std::shared_ptr<Embedder> target,
      std::function<void(std::int64_t done, std::int64_t total)> progress) = 0;

  // --- Lineage and memory health (docs/LINEAGE.md) ---
  // Classifies every memory item from its receipts and the store's state:
  // counts per state, per scope and overall, the oldest waiting item and the
  // non-green items with their run ids. Read-only.
  virtual Result<HealthReport> Health(const HealthOptions& options) = 0;
  // Re-verifies the scopes matching the options (expiry ignored) and writes a
  // "verified" receipt for each scope that is healthy or waiting, renewing its
  // evidence for another horizon. Returns how many scopes were verified.
  virtual Result<int> VerifyLineage(const HealthOptions& options) = 0;
  // Receipts in id order (retrieval receipts buffered in memory are written
  // by the next Maintain() or when the engine closes).
  virtual Result<std::vector<ReceiptInfo>> ListReceipts(const ReceiptQuery& query) = 0;
  // The page chain of one scope in page order (ids only).
  virtual Result<std::vector<PageLink>> ListPageLinks(const Scope& scope) = 0;
  // Folds receipts older than the retention (receipt_retention_days, never
  // less than the evidence horizon) into per-day summaries with counts.
  // Maintain() runs it too; retention_days = -1 uses the engine option.
  virtual Result<ReceiptCompaction> CompactReceipts(int retention_days) = 0;

  // Name of the embedder and maintenance engine in use.
  virtual std::string EmbedderName() const = 0;
  virtual std::string MaintainerName() const = 0;
};

// The library version, e.g. "0.1.0".
const char* Version();

}  // namespace engram
