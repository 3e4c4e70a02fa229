// The Engine implementation: wires the store, the tiers, retrieval, lineage
// and the background maintenance worker.
#pragma once

#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/word_vectors.hpp"
#include "engine/snapshot_lru.hpp"
#include "engram/engine.hpp"
#include "lineage/receipts.hpp"
#include "memory/config.hpp"
#include "memory/facts/fact_vectors.hpp"
#include "memory/jobs.hpp"
#include "memory/promotion.hpp"
#include "retrieval/scope_index.hpp"
#include "retrieval/stm_cache.hpp"
#include "store/db.hpp"

namespace engram {

class EngineImpl final : public Engine {
 public:
  static Result<std::unique_ptr<EngineImpl>> Create(EngineOptions options);
  ~EngineImpl() override;

  Result<AdmitResult> AddTurn(const Scope& scope, const TurnInput& turn) override;
  using Engine::AddTurns;
  Result<std::vector<AdmitResult>> AddTurns(const Scope& scope, const std::vector<TurnInput>& turns,
                                            const AdmitOptions& options) override;
  Result<MaintainReport> Maintain(const Scope* scope) override;
  Result<RetrievalResult> Retrieve(const Scope& scope, const std::string& query,
                                   const RetrieveOptions& options) override;
  Result<ChatReply> Chat(const Scope& scope, const std::string& query,
                         const ChatOptions& options) override;
  Result<AdmitResult> AdmitAnswer(const Scope& scope, const TurnInput& turn, const std::vector<RetrievedItem>& used,
                                  const std::string& answered_by, const std::string& run_id) override;
  Result<Profile> GetProfile(const Scope& scope) override;
  Result<std::vector<Fact>> ListFacts(const Scope& scope, const std::string& kind) override;
  Result<std::vector<Turn>> ListTurns(const Scope& scope, std::int64_t after_seq, int limit) override;
  Result<Stats> GetStats(const Scope* scope) override;
  Result<Stats> GetScopeSetStats(const std::string& tenant, const std::string& user,
                                 const std::string& assistant, std::int64_t* scopes) override;
  Result<std::vector<Scope>> ListScopes() override;
  Result<std::vector<Scope>> ListTenantScopes(const std::string& tenant,
                                              const std::string& user) override;
  Result<TenantUserPage> ListTenantUsers(const std::string& tenant, const std::string& contains,
                                         const std::string& after, int limit) override;
  Result<TenantUsage> GetTenantUsage(const std::string& tenant) override;
  SnapshotCacheStats GetSnapshotCacheStats() override;
  Status Export(const Scope* scope, const std::function<void(const std::string&)>& sink) override;
  Result<std::int64_t> ForgetUser(const std::string& tenant, const std::string& user) override;
  std::string EmbedderName() const override;
  std::string MaintainerName() const override;

  Result<int> RetryFailedJobs() override;
  Result<int> RetryFailedJobs(const JobQuery& query) override;
  Result<std::vector<JobInfo>> ListJobs(const JobQuery& query) override;

  // engine_lineage.cpp
  Result<HealthReport> Health(const HealthOptions& options) override;
  Result<int> VerifyLineage(const HealthOptions& options) override;
  Result<std::vector<ReceiptInfo>> ListReceipts(const ReceiptQuery& query) override;
  Result<std::vector<ReceiptDayCount>> CountReceiptsByDay(const ReceiptQuery& query) override;
  Result<std::vector<PageLink>> ListPageLinks(const Scope& scope) override;
  Result<std::vector<SegmentInfo>> ListSegments(const Scope& scope, bool include_archived) override;
  Result<ReceiptCompaction> CompactReceipts(int retention_days) override;

  // engine_facts.cpp
  Result<MemoryAddResult> AddMemory(const MemoryScope& scope, const std::vector<MemoryMessage>& messages,
                                    const MemoryAddOptions& options) override;
  Result<std::vector<MemoryItem>> SearchMemories(const MemoryScope& scope, const std::string& query,
                                                 const MemorySearchOptions& options) override;
  Result<MemoryItem> GetMemory(const MemoryScope& scope, const std::string& id) override;
  Result<MemoryPage> ListMemories(const MemoryScope& scope, const MemoryListOptions& options) override;
  Result<MemoryItem> UpdateMemory(const MemoryScope& scope, const std::string& id,
                                  const MemoryUpdate& update) override;
  Status DeleteMemory(const MemoryScope& scope, const std::string& id, const std::string& actor) override;
  Result<std::vector<MemoryItem>> ChangeMemories(const std::vector<MemoryChange>& changes) override;
  Result<std::int64_t> DeleteAllMemories(const MemoryScope& scope, const std::string& actor) override;
  Result<MemoryPurgeResult> PurgeMemory(const MemoryScope& scope, const std::string& id) override;
  Result<MemoryPurgeResult> PurgeMemories(const MemoryScope& scope) override;
  Result<std::vector<MemoryHistoryEvent>> MemoryHistory(const MemoryScope& scope, const std::string& id) override;
  Result<std::vector<ReceiptInfo>> MemoryReceipts(const MemoryScope& scope, const std::string& id) override;
  Result<MemoryScope> LocateMemory(const std::string& tenant, const std::string& id, bool deleted_too) override;
  Result<std::vector<MemoryEntity>> ListMemoryEntities(const std::string& tenant) override;

  // engine_reembed.cpp
  Result<ReembedReport> Reembed(std::shared_ptr<Embedder> target,
                                std::function<void(std::int64_t, std::int64_t)> progress) override;

 private:
  EngineImpl() = default;
  Status Init();

  // A connection for reads: from the reader pool, or the writer (under its
  // lock) for in-memory stores.
  class ReadLease {
   public:
    ReadLease(EngineImpl* e, std::unique_ptr<sql::Db> db) : e_(e), db_(std::move(db)) {}
    ReadLease(EngineImpl* e, std::unique_lock<std::mutex> lock) : e_(e), lock_(std::move(lock)) {}
    ~ReadLease() {
      if (db_) e_->ReleaseReader(std::move(db_));
    }
    sql::Db* db() { return db_ ? db_.get() : e_->writer_.get(); }

   private:
    EngineImpl* e_;
    std::unique_ptr<sql::Db> db_;
    std::unique_lock<std::mutex> lock_;
  };
  Result<std::unique_ptr<ReadLease>> AcquireReader();
  void ReleaseReader(std::unique_ptr<sql::Db> db);

  // The retrieval snapshot of a scope at (generation, data_version), read
  // through `db` (inside the caller's read transaction) on a miss and cached;
  // `use` false (the worker refreshing a cached snapshot) leaves its place in
  // the least-recently-used order as it was.
  Result<std::shared_ptr<const retrieval::ScopeIndex>> IndexFor(sql::Db* db, std::int64_t scope_id,
                                                                std::int64_t generation,
                                                                std::int64_t data_version, bool use = true);
  // After an erasure has committed: drops the cached snapshots (retrieval and
  // fact vectors) of these scopes, and discards every build in progress.
  void DropSnapshots(const std::vector<std::int64_t>& scope_ids);
  Status FlushAccessLog();
  // engine_lineage.cpp: retrieval never writes, so its receipts wait in
  // memory (bounded) until FlushReceipts writes them in their own transaction
  // (at maintenance and when the engine closes).
  void BufferRetrievalReceipt(const Scope& scope, const RetrievalResult& result, TimeMs at);
  Status FlushReceipts();
  // engine_reembed.cpp: checks the recorded embedder against embedder_ when
  // opening (sets embedder_ok_; the "being migrated" error), and wraps a
  // non-builtin embedder with the persistent cache.
  Status CheckStoreEmbedder();
  Result<std::shared_ptr<Embedder>> WithCache(std::shared_ptr<Embedder> embedder);
  // FailedPrecondition while the store's vectors are not embedder_'s.
  Status RequireEmbedder() const;
  // engine_facts.cpp: purges the memories of `scope` (one id, or all when
  // id is empty) in one transaction, then merges FTS and truncates the WAL.
  Result<MemoryPurgeResult> PurgeWhere(const MemoryScope& scope, const std::string& id);
  // engine_fact_reads.cpp: the fact vector snapshot of a scope row at its
  // data_version (cached; loaded through `db` on a miss), the same as a
  // FactVectorSource, and for a writer inside its transaction. After a
  // write's commit, PublishFactVectors moves the cached snapshot to the
  // scope's new data_version by the write's changes (read through `db`).
  Result<std::shared_ptr<const memory::facts::FactVectors>> FactVectorsFor(sql::Db* db,
                                                                         const memory::ScopeRow& row);
  memory::facts::FactVectorSource FactVectorSourceFn();
  Result<std::shared_ptr<const memory::facts::FactVectors>> WriterFactVectors(sql::Db* db, std::int64_t scope_id);
  Status PublishFactVectors(sql::Db* db, const memory::facts::FactVectors& before,
                            const memory::facts::FactChanges& changes);
  void DropFactVectors(const std::vector<std::int64_t>& scope_ids);
  void WorkerLoop();
  void Wake();
  // Rebuilds the cached snapshots that a commit made stale (background
  // maintenance only), so that the next retrieval finds them ready.
  void RefreshIndexes();

  EngineOptions options_;
  memory::MemoryConfig config_;
  memory::MemoryDeps deps_;
  std::shared_ptr<Embedder> embedder_;        // memory content (cached when not builtin)
  std::shared_ptr<Embedder> query_embedder_;  // queries (never cached)
  // The built-in word vectors (core/word_vectors.hpp), opened at Init, when
  // the embedder is the built-in one: fact search and its snapshots then add
  // a semantic score. Null with a model embedder or without the vector file.
  const wordvec::WordVectors* fact_words_ = nullptr;
  std::shared_ptr<Maintainer> maintainer_;
  // The store's vectors are embedder_'s (false only with allow_embedder_migration).
  std::atomic<bool> embedder_ok_{true};

  std::unique_ptr<sql::Db> writer_;
  std::mutex writer_mu_;
  memory::WriterDb w_;
  bool in_memory_ = false;

  std::mutex readers_mu_;
  std::vector<std::unique_ptr<sql::Db>> readers_;

  std::mutex index_mu_;
  // The cached snapshots (bytes: ScopeIndex::MemoryBytes), least recently
  // used dropped beyond the budget (EngineOptions::snapshot_cache_mb).
  SnapshotLru<retrieval::ScopeIndex> indexes_;  // guarded by index_mu_
  // EngineOptions::snapshot_cache_mb in bytes (at least 1 MiB).
  std::size_t SnapshotBudgetBytes() const;
  // Snapshot builds in progress, one per scope: readers that need the same
  // data_version wait for it instead of building it again.
  using IndexResult = Result<std::shared_ptr<const retrieval::ScopeIndex>>;
  struct IndexBuild {
    std::int64_t generation = 0;
    std::int64_t data_version = -1;
    std::shared_future<IndexResult> result;
  };
  std::map<std::int64_t, IndexBuild> index_builds_;  // guarded by index_mu_
  // Bumped (under index_mu_) whenever cached snapshots are dropped because
  // content was erased or re-embedded: a build that started before must not
  // be cached nor serve as the base of an incremental build.
  std::uint64_t index_epoch_ = 0;
  retrieval::StmCache stm_cache_;  // the indexed STM turns of each scope's last retrieval

  std::mutex fact_vectors_mu_;
  // The fact snapshots, like the retrieval snapshots: least recently used
  // dropped beyond a budget of the same size (or beyond a count); bytes:
  // MemoryBytes() when loaded, plus an estimate of the rows added since.
  SnapshotLru<memory::facts::FactVectors> fact_vectors_;  // guarded by fact_vectors_mu_

  std::mutex access_mu_;
  memory::AccessLog access_;

  std::mutex receipts_mu_;
  std::vector<lineage::Receipt> receipts_;             // retrieval receipts not yet written
  std::map<std::string, std::int64_t> receipts_lost_;  // per scope key, beyond the bound

  std::mutex maint_mu_;  // one maintenance run at a time

  std::mutex worker_mu_;
  std::condition_variable worker_cv_;
  bool worker_stop_ = false;
  bool worker_wake_ = false;
  std::thread worker_;
};

}  // namespace engram
