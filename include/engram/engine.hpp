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
#include <string_view>
#include <vector>

#include "engram/facts.hpp"
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

  // Validates a scope's ids (non-empty, <= 128 bytes, UTF-8, no control
  // chars; user and assistant not "-", the id of no user or assistant in the
  // scope rows of the fact API's memories).
  static Status ValidateScope(const Scope& scope);

  // Checks what AddMemory checks before it reads or writes anything (the
  // scope, the messages, metadata, expiry, event time, a restored memory's
  // kind, role and attribution): a caller adding many memories (an import)
  // checks them all first, so that a bad one leaves nothing half-written.
  static Status ValidateMemoryAdd(const MemoryScope& scope, const std::vector<MemoryMessage>& messages,
                                  const MemoryAddOptions& options);

  // Appends one exchange to the turn log (STM) durably. When STM is over its
  // capacity a promotion job becomes pending (run by the background worker or
  // Maintain()).
  virtual Result<AdmitResult> AddTurn(const Scope& scope, const TurnInput& turn) = 0;
  // Admits many exchanges in one transaction (all or nothing).
  Result<std::vector<AdmitResult>> AddTurns(const Scope& scope, const std::vector<TurnInput>& turns) {
    return AddTurns(scope, turns, AdmitOptions{});
  }
  // The same, with an idempotency key that makes retries safe.
  virtual Result<std::vector<AdmitResult>> AddTurns(const Scope& scope, const std::vector<TurnInput>& turns,
                                                    const AdmitOptions& options) = 0;

  // Runs pending promotion and consolidation work to completion, for one
  // scope or (scope == nullptr) all scopes. Failed jobs stay visible.
  virtual Result<MaintainReport> Maintain(const Scope* scope = nullptr) = 0;
  // Makes failed jobs pending again; returns how many.
  virtual Result<int> RetryFailedJobs() = 0;
  // The same for the failed jobs matching `query` (its status is ignored).
  virtual Result<int> RetryFailedJobs(const JobQuery& query) = 0;
  // Pending and failed jobs matching `query`, oldest first.
  virtual Result<std::vector<JobInfo>> ListJobs(const JobQuery& query) = 0;

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
  // Admits an exchange answered outside the engine (the memory proxy of
  // `engram serve`) with its generation receipt, as Chat does: `used` are the
  // memory items that entered the prompt, `answered_by` names the model, and
  // `run_id` joins the receipt ("" = a new one). One transaction.
  virtual Result<AdmitResult> AdmitAnswer(const Scope& scope, const TurnInput& turn,
                                          const std::vector<RetrievedItem>& used, const std::string& answered_by,
                                          const std::string& run_id) = 0;

  virtual Result<Profile> GetProfile(const Scope& scope) = 0;
  virtual Result<std::vector<Fact>> ListFacts(const Scope& scope, const std::string& kind) = 0;
  // Turns of a scope in admission order (after_seq exclusive), at most limit.
  virtual Result<std::vector<Turn>> ListTurns(const Scope& scope, std::int64_t after_seq,
                                              int limit) = 0;
  // Statistics of one scope, or of the whole store when scope == nullptr.
  virtual Result<Stats> GetStats(const Scope* scope) = 0;
  // Statistics of a tenant's scopes together, of one user's when `user` is
  // not empty and of one assistant's when `assistant` is not empty; `scopes`
  // (when not null) is set to how many scopes that is. One read, however
  // many scopes.
  virtual Result<Stats> GetScopeSetStats(const std::string& tenant, const std::string& user,
                                         const std::string& assistant, std::int64_t* scopes) = 0;
  // All scopes in the store.
  virtual Result<std::vector<Scope>> ListScopes() = 0;
  // A tenant's scopes (one user's when `user` is not empty), in the order
  // they were made: a read of those scopes' rows only.
  virtual Result<std::vector<Scope>> ListTenantScopes(const std::string& tenant,
                                                      const std::string& user) = 0;
  // One page of a tenant's users, in byte order of their ids, after `after`
  // ("": from the first) and at most `limit` [1, 1000]: those whose id
  // contains `contains`, both folded to ASCII lower case ("": every user).
  // A read of the page's scope rows and a count of the matching users: a
  // tenant of 100,000 users is paged without reading them all.
  virtual Result<TenantUserPage> ListTenantUsers(const std::string& tenant,
                                                 const std::string& contains,
                                                 const std::string& after, int limit) = 0;
  // What `tenant` holds now (turns, memories, text bytes). Read-only; one
  // pass over the tenant's turns and memories.
  virtual Result<TenantUsage> GetTenantUsage(const std::string& tenant) = 0;
  // This process's cache of retrieval snapshots (no store access).
  virtual SnapshotCacheStats GetSnapshotCacheStats() = 0;

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
  // The receipts of a tenant (query.scope.tenant; of one user when
  // query.scope.user is set) counted per day, scope and transition, oldest
  // day first, compacted days included; at most query.limit rows (the caller
  // asks for one more to tell whether there were more).
  virtual Result<std::vector<ReceiptDayCount>> CountReceiptsByDay(const ReceiptQuery& query) = 0;
  // The page chain of one scope in page order (ids only).
  virtual Result<std::vector<PageLink>> ListPageLinks(const Scope& scope) = 0;
  // The mid-term segments of one scope by id (archived ones too when
  // include_archived), with their heat now. Read-only.
  virtual Result<std::vector<SegmentInfo>> ListSegments(const Scope& scope, bool include_archived) = 0;
  // Folds receipts older than the retention (receipt_retention_days, never
  // less than the evidence horizon) into per-day summaries with counts.
  // Maintain() runs it too; retention_days = -1 uses the engine option.
  virtual Result<ReceiptCompaction> CompactReceipts(int retention_days) = 0;

  // --- Fact memory (engram/facts.hpp, docs/MEMORY_API.md) ---
  // Every operation sees exactly `scope` (plus narrower scopes only when
  // scope.include_narrower); a by-id operation on a memory outside it is
  // NotFound, exactly as for an id that does not exist. All writes of one
  // operation commit in one transaction.
  //
  // Adds memories from messages: verbatim (options.infer = false: one memory
  // per non-system message, with its role and actor) or extracted (infer =
  // true: options.llm with the scope's recent messages and nearest memories as
  // context; the built-in extractive rules, marked degraded, without an llm).
  // Exact and near duplicates are NOOP; a model's correction of an existing
  // memory is an UPDATE (a new version; history keeps both). A repeated
  // idempotency key returns the first outcome (replayed = true).
  virtual Result<MemoryAddResult> AddMemory(const MemoryScope& scope,
                                            const std::vector<MemoryMessage>& messages,
                                            const MemoryAddOptions& options) = 0;
  // One user message; an error about it names "text" (as a caller sent it),
  // not the message it became.
  Result<MemoryAddResult> AddMemoryText(const MemoryScope& scope, const std::string& text,
                                        const MemoryAddOptions& options) {
    auto r = AddMemory(scope, {MemoryMessage{"user", text, ""}}, options);
    static constexpr std::string_view kMessage = "messages[0].content";
    if (!r.ok() && std::string_view(r.status().message()).substr(0, kMessage.size()) == kMessage) {
      return Status(r.status().code(), "text" + r.status().message().substr(kMessage.size()));
    }
    return r;
  }
  // The best memories for a query (see MemorySearchOptions); score in [0, 1].
  virtual Result<std::vector<MemoryItem>> SearchMemories(const MemoryScope& scope,
                                                         const std::string& query,
                                                         const MemorySearchOptions& options) = 0;
  // The current version, expired ones included (expired = true). NotFound
  // for deleted and purged memories.
  virtual Result<MemoryItem> GetMemory(const MemoryScope& scope, const std::string& id) = 0;
  virtual Result<MemoryPage> ListMemories(const MemoryScope& scope, const MemoryListOptions& options) = 0;
  // A new version (text change) or changed metadata/expiry; returns the current item.
  virtual Result<MemoryItem> UpdateMemory(const MemoryScope& scope, const std::string& id,
                                          const MemoryUpdate& update) = 0;
  // Tombstone: hidden everywhere, history keeps the text.
  virtual Status DeleteMemory(const MemoryScope& scope, const std::string& id, const std::string& actor) = 0;
  // Updates and deletes in one transaction: all of them or none (a missing
  // memory, a bad text or a memory named twice fails the batch, naming
  // `memories[i]`). The items after the changes, in order (a deleted one as
  // it was, with status "deleted").
  virtual Result<std::vector<MemoryItem>> ChangeMemories(const std::vector<MemoryChange>& changes) = 0;
  // Deletes every live memory of the scope (exactly it, or with narrower
  // ones when asked); returns how many.
  virtual Result<std::int64_t> DeleteAllMemories(const MemoryScope& scope, const std::string& actor) = 0;
  // Erases content everywhere (facts, FTS, entities, links, history texts,
  // embedding cache), leaving content-free records; then merges the FTS
  // index and truncates the WAL. By id, or every memory of the scope.
  virtual Result<MemoryPurgeResult> PurgeMemory(const MemoryScope& scope, const std::string& id) = 0;
  virtual Result<MemoryPurgeResult> PurgeMemories(const MemoryScope& scope) = 0;
  // Events of a memory (deleted and purged ones too), oldest first.
  virtual Result<std::vector<MemoryHistoryEvent>> MemoryHistory(const MemoryScope& scope,
                                                                const std::string& id) = 0;
  // The receipts of every version of a memory (its transitions: added,
  // updated, deleted, purged), oldest first; the memory must be one that
  // MemoryHistory shows in `scope` (else NotFound). Receipts compacted into
  // day counts are not listed.
  virtual Result<std::vector<ReceiptInfo>> MemoryReceipts(const MemoryScope& scope, const std::string& id) = 0;

  // For clients that name a memory by id alone: the scope of the live memory
  // `id` of `tenant` (its own user, agent and run); with `deleted_too`, also
  // of a deleted or purged one (its history). NotFound when the tenant has no
  // such memory.
  virtual Result<MemoryScope> LocateMemory(const std::string& tenant, const std::string& id,
                                           bool deleted_too = false) = 0;
  // Every user, agent and run id of `tenant` that holds live memories.
  virtual Result<std::vector<MemoryEntity>> ListMemoryEntities(const std::string& tenant) = 0;

  // Name of the embedder and maintenance engine in use.
  virtual std::string EmbedderName() const = 0;
  virtual std::string MaintainerName() const = 0;
};

// The library version, e.g. "0.1.0".
const char* Version();

}  // namespace engram
