#include "engine/engine_impl.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

#include "core/process.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "core/wordnet.hpp"
#include "engine/caching_embedder.hpp"
#include "lineage/receipts.hpp"
#include "memory/facts/fact_store.hpp"
#include "memory/lpm.hpp"
#include "memory/scope_store.hpp"
#include "memory/stm.hpp"
#include "memory/text_documents.hpp"
#include "models/builtin/extractive_maintainer.hpp"
#include "models/builtin/hash_embedder.hpp"
#include "retrieval/ranking.hpp"
#include "retrieval/retriever.hpp"
#include "store/open.hpp"
#include "store/scopes.hpp"

namespace engram {

namespace {

constexpr int kReaderPoolMax = 8;
constexpr auto kWorkerIdle = std::chrono::seconds(2);
constexpr auto kWorkerDebounce = std::chrono::milliseconds(300);

std::string SourceVersion(const EngineOptions& o, const Embedder& e, const Maintainer& m) {
  std::ostringstream s;
  s << "engram/" << ENGRAM_VERSION << ";stm=" << o.stm_capacity << ";batch=" << o.promote_batch_max
    << ";mtm=" << o.mtm_capacity << ";merge=" << o.merge_threshold << ";heat=" << o.heat_threshold
    << ";tau=" << o.heat_tau_hours << ";emb=" << e.Name() << "/" << e.Dimension()
    << ";llm=" << m.Name();
  return s.str();
}

Status CheckOptions(const EngineOptions& o) {
  if (o.db_path.empty()) return Status::InvalidArgument("db_path: must not be empty");
  if (o.stm_capacity < 1) return Status::InvalidArgument("stm_capacity: must be at least 1");
  if (o.promote_batch_max < 1) return Status::InvalidArgument("promote_batch_max: must be at least 1");
  if (o.mtm_capacity < 1) return Status::InvalidArgument("mtm_capacity: must be at least 1");
  if (o.heat_tau_hours <= 0) return Status::InvalidArgument("heat_tau_hours: must be positive");
  if (o.job_lease_seconds < 1) return Status::InvalidArgument("job_lease_seconds: must be at least 1");
  if (o.receipt_horizon_hours < 0 || o.receipt_retention_days < 0 || o.promotion_wait_minutes < 0) {
    return Status::InvalidArgument(
        "receipt_horizon_hours, receipt_retention_days, promotion_wait_minutes: must not be negative");
  }
  return Status::Ok();
}

}  // namespace

const char* Version() { return ENGRAM_VERSION; }

Status Engine::ValidateScope(const Scope& scope) { return memory::ValidateDialogueScope(scope); }

Result<std::unique_ptr<Engine>> Engine::Open(EngineOptions options) {
  ENGRAM_ASSIGN_OR_RETURN(auto impl, EngineImpl::Create(std::move(options)));
  return std::unique_ptr<Engine>(std::move(impl));
}

Result<std::unique_ptr<EngineImpl>> EngineImpl::Create(EngineOptions options) {
  ENGRAM_RETURN_IF_ERROR(CheckOptions(options));
  std::unique_ptr<EngineImpl> e(new EngineImpl());
  e->options_ = std::move(options);
  ENGRAM_RETURN_IF_ERROR(e->Init());
  return e;
}

Status EngineImpl::Init() {
  const Clock* clock = options_.clock ? options_.clock : &SystemClock::Default();
  embedder_ = options_.embedder ? options_.embedder : std::make_shared<HashEmbedder>();
  maintainer_ = options_.maintainer ? options_.maintainer : std::make_shared<ExtractiveMaintainer>();
  in_memory_ = store::IsInMemory(options_.db_path);
  store::StoreOpenOptions open;
  open.verify = options_.verify_on_open;
  open.now_ms = clock->NowMs();
  open.sync_every_commit = options_.durability == EngineOptions::Durability::kFull;
  ENGRAM_ASSIGN_OR_RETURN(writer_, store::OpenWriter(options_.db_path, open));

  // The store remembers its embedder; vectors of two embedders never mix.
  ENGRAM_RETURN_IF_ERROR(CheckStoreEmbedder());
  // Full-text documents indexed by an older build's text rules are made again
  // (once per rules version; a store on read-only media keeps its own).
  if (Status refreshed = memory::RefreshTextDocuments(writer_.get());
      !refreshed.ok() && refreshed.code() != StatusCode::kPermissionDenied) {
    return refreshed;
  }
  // Queries are embedded without the persistent cache: only memory content
  // (pages, facts) is cached, and ForgetUser removes a user's entries.
  query_embedder_ = embedder_;
  ENGRAM_ASSIGN_OR_RETURN(embedder_, WithCache(embedder_));  // persistent cache (non-builtin)
  // Opened here, never on a request: mapping the file is a header check.
  if (query_embedder_->IsBuiltin()) fact_words_ = wordvec::WordVectors::Default();
  // Likewise the WordNet image that query expansion reads (when there is one).
  wordnet::WordNet::PreloadDefault();

  config_.stm_capacity = options_.stm_capacity;
  config_.promote_batch_max = options_.promote_batch_max;
  config_.mtm_capacity = options_.mtm_capacity;
  config_.merge_threshold = options_.merge_threshold;
  config_.heat_threshold = options_.heat_threshold;
  config_.heat_tau_hours = options_.heat_tau_hours;
  config_.source_version = SourceVersion(options_, *embedder_, *maintainer_);
  deps_.embedder = embedder_.get();
  deps_.embedder_for = [e = embedder_.get()](const std::string& tenant) { return EmbedderForTenant(e, tenant); };
  deps_.maintainer = maintainer_.get();
  deps_.clock = clock;
  deps_.fault_point = options_.fault_point;
  deps_.job_holder = process::NewHolderId();
  deps_.holder_gone = process::HolderIsGone;
  deps_.writer_fact_vectors = [this](sql::Db* db, std::int64_t scope_id) { return WriterFactVectors(db, scope_id); };
  deps_.publish_fact_vectors = [this](sql::Db* db, const memory::facts::FactVectors& before,
                                      const memory::facts::FactChanges& changes) {
    return PublishFactVectors(db, before, changes);
  };
  config_.job_lease_ms = static_cast<TimeMs>(options_.job_lease_seconds) * 1000;
  w_ = {writer_.get(), &writer_mu_};
  if (options_.background_maintenance) worker_ = std::thread([this] { WorkerLoop(); });
  return Status::Ok();
}

EngineImpl::~EngineImpl() {
  {
    std::lock_guard<std::mutex> lock(worker_mu_);
    worker_stop_ = true;
  }
  worker_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (w_.db) {  // only when Init() completed
    (void)FlushAccessLog();
    (void)FlushReceipts();
  }
}

Result<std::unique_ptr<EngineImpl::ReadLease>> EngineImpl::AcquireReader() {
  if (in_memory_) {
    return std::make_unique<ReadLease>(this, std::unique_lock<std::mutex>(writer_mu_));
  }
  {
    std::lock_guard<std::mutex> lock(readers_mu_);
    if (!readers_.empty()) {
      auto db = std::move(readers_.back());
      readers_.pop_back();
      return std::make_unique<ReadLease>(this, std::move(db));
    }
  }
  ENGRAM_ASSIGN_OR_RETURN(auto db, store::OpenReader(options_.db_path));
  return std::make_unique<ReadLease>(this, std::move(db));
}

void EngineImpl::ReleaseReader(std::unique_ptr<sql::Db> db) {
  std::lock_guard<std::mutex> lock(readers_mu_);
  if (static_cast<int>(readers_.size()) < kReaderPoolMax) readers_.push_back(std::move(db));
}

void EngineImpl::Wake() {
  if (!options_.background_maintenance) return;
  {
    std::lock_guard<std::mutex> lock(worker_mu_);
    worker_wake_ = true;
  }
  worker_cv_.notify_one();
}

void EngineImpl::WorkerLoop() {
  std::unique_lock<std::mutex> lock(worker_mu_);
  while (!worker_stop_) {
    worker_cv_.wait_for(lock, kWorkerIdle, [this] { return worker_stop_ || worker_wake_; });
    if (worker_stop_) break;
    if (worker_wake_) {
      // Let a burst of admissions gather so promotion runs in batches.
      worker_cv_.wait_for(lock, kWorkerDebounce, [this] { return worker_stop_; });
      worker_wake_ = false;
    }
    lock.unlock();
    (void)Maintain(nullptr);  // failures are recorded on the jobs themselves
    RefreshIndexes();
    lock.lock();
  }
}

Result<AdmitResult> EngineImpl::AddTurn(const Scope& scope, const TurnInput& turn) {
  ENGRAM_ASSIGN_OR_RETURN(auto v, AddTurns(scope, {turn}));
  return v.front();
}

Result<std::vector<AdmitResult>> EngineImpl::AddTurns(const Scope& scope, const std::vector<TurnInput>& turns,
                                                      const AdmitOptions& options) {
  ENGRAM_RETURN_IF_ERROR(memory::ValidateDialogueScope(scope));
  if (turns.empty()) return Status::InvalidArgument("turns: must not be empty");
  ENGRAM_RETURN_IF_ERROR(memory::ValidateIdempotencyKey(options.idempotency_key));
  for (std::size_t i = 0; i < turns.size(); ++i) {
    Status st = memory::ValidateTurn(turns[i]);
    if (!st.ok()) {
      return turns.size() == 1 ? st
                               : Status::InvalidArgument("turns[" + std::to_string(i) + "]." +
                                                         st.message());
    }
  }
  std::vector<AdmitResult> out;
  {
    std::lock_guard<std::mutex> lock(writer_mu_);
    TimeMs now = deps_.clock->NowMs();
    ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(writer_.get()));
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t scope_id, memory::EnsureScope(writer_.get(), scope, now));
    ENGRAM_ASSIGN_OR_RETURN(memory::ScopeRow row, memory::LoadScope(writer_.get(), scope_id));
    const std::uint64_t fingerprint = memory::TurnsFingerprint(turns);
    if (!options.idempotency_key.empty()) {
      ENGRAM_ASSIGN_OR_RETURN(auto first, memory::FindAdmission(writer_.get(), scope_id, options.idempotency_key,
                                                                fingerprint, now));
      if (first) return std::move(*first);  // a retry: nothing admitted (the transaction rolls back)
    }
    if (options.replay_only) {
      return Status::ResourceExhausted("the tenant's quota is reached: only retries of earlier admissions pass");
    }
    std::string run_id = lineage::NewRunId();
    for (const auto& t : turns) {
      ENGRAM_ASSIGN_OR_RETURN(AdmitResult r,
                              memory::AdmitTurn(writer_.get(), row, t, now, config_, run_id));
      out.push_back(r);
    }
    if (!options.idempotency_key.empty()) {
      ENGRAM_RETURN_IF_ERROR(memory::RecordAdmission(writer_.get(), scope_id, options.idempotency_key, fingerprint,
                                                     out.front().seq, static_cast<std::int64_t>(out.size()), now,
                                                     options.keep_key));
    }
    ENGRAM_RETURN_IF_ERROR(txn->Commit());
  }
  if (out.back().promotion_pending) Wake();
  return out;
}

Status EngineImpl::FlushAccessLog() {
  memory::AccessLog log;
  {
    std::lock_guard<std::mutex> lock(access_mu_);
    log.swap(access_);
  }
  Status st = memory::ApplyAccessLog(w_, log, config_, deps_.clock->NowMs());
  if (!st.ok()) {
    // Not applied (the store failed): keep the hits for the next run.
    std::lock_guard<std::mutex> lock(access_mu_);
    for (const auto& [seg, hit] : log) {
      auto& mine = access_[seg];
      mine.first += hit.first;
      mine.second = std::max(mine.second, hit.second);
    }
  }
  return st;
}

Result<MaintainReport> EngineImpl::Maintain(const Scope* scope) {
  ENGRAM_RETURN_IF_ERROR(RequireEmbedder());
  std::lock_guard<std::mutex> maint(maint_mu_);
  std::int64_t scope_id = 0;
  if (scope) {
    ENGRAM_RETURN_IF_ERROR(memory::ValidateScope(*scope));
    std::lock_guard<std::mutex> lock(writer_mu_);
    ENGRAM_ASSIGN_OR_RETURN(auto row, memory::FindScope(writer_.get(), *scope));
    if (!row) return MaintainReport{};
    scope_id = row->id;
  }
  ENGRAM_RETURN_IF_ERROR(FlushAccessLog());
  ENGRAM_RETURN_IF_ERROR(FlushReceipts());
  auto report = memory::RunPendingJobs(w_, scope_id, config_, deps_);
  if (report.ok()) report->degraded = report->degraded || maintainer_->IsBuiltin();
  if (report.ok() && options_.receipt_retention_days > 0) {
    ENGRAM_RETURN_IF_ERROR(CompactReceipts(-1).status());
  }
  return report;
}

Result<int> EngineImpl::RetryFailedJobs() {
  return memory::RetryFailedJobs(w_, 0, deps_.clock->NowMs());
}

Result<std::shared_ptr<const retrieval::ScopeIndex>> EngineImpl::IndexFor(
    sql::Db* db, std::int64_t scope_id, std::int64_t generation, std::int64_t data_version, bool use) {
  auto same = [&](const retrieval::ScopeIndex& idx) {
    return idx.generation == generation && idx.data_version == data_version;
  };
  std::unique_lock<std::mutex> lock(index_mu_);
  auto* cached = indexes_.Find(scope_id);
  if (cached && same(*cached->value)) {
    if (use) indexes_.Use(*cached);
    return cached->value;
  }
  auto b = index_builds_.find(scope_id);
  if (b != index_builds_.end() && b->second.generation == generation && b->second.data_version == data_version) {
    std::shared_future<IndexResult> pending = b->second.result;
    lock.unlock();
    return pending.get();
  }
  std::promise<IndexResult> promise;
  index_builds_[scope_id] = IndexBuild{generation, data_version, promise.get_future().share()};
  // An older cached snapshot of the same generation (nothing erased since)
  // is the base of an incremental build.
  std::shared_ptr<const retrieval::ScopeIndex> previous =
      cached && cached->value->generation == generation && cached->value->data_version < data_version
          ? cached->value
          : nullptr;
  const std::uint64_t epoch = index_epoch_;
  lock.unlock();
  // Built outside the lock, in this reader's read transaction (the snapshot
  // at data_version); others needing the same version wait for it above.
  // Page vectors only serve a semantic embedder (see retrieval::RankParams::vector).
  const bool page_vectors = !query_embedder_->IsBuiltin();
  IndexResult idx = retrieval::LoadScopeIndex(db, scope_id, generation, data_version, previous.get(), page_vectors);
  std::size_t bytes = idx.ok() ? (*idx)->MemoryBytes() : 0;
  lock.lock();
  if (index_epoch_ != epoch && previous) {
    // Content was erased meanwhile: the base may be from before; start over.
    lock.unlock();
    idx = retrieval::LoadScopeIndex(db, scope_id, generation, data_version, nullptr, page_vectors);
    bytes = idx.ok() ? (*idx)->MemoryBytes() : 0;
    lock.lock();
  }
  SnapshotLru<retrieval::ScopeIndex>::Freed freed;  // released after the lock
  // (A refresh of a cached snapshot is no use of it: it keeps its place,
  // and one dropped meanwhile is not brought back.)
  const auto* slot = indexes_.Find(scope_id);
  if (idx.ok() && index_epoch_ == epoch && (use || slot) &&
      (!slot || slot->value->generation < generation ||
       (slot->value->generation == generation && slot->value->data_version < data_version))) {
    indexes_.Put(scope_id, *idx, bytes, use ? indexes_.Tick() : slot->used, SnapshotBudgetBytes(),
                 std::numeric_limits<std::size_t>::max(), freed);  // (no bound on the count)
  }
  b = index_builds_.find(scope_id);
  if (b != index_builds_.end() && b->second.generation == generation && b->second.data_version == data_version) {
    index_builds_.erase(b);
  }
  lock.unlock();
  promise.set_value(idx);
  return idx;
}

std::size_t EngineImpl::SnapshotBudgetBytes() const {
  return std::clamp<std::size_t>(options_.snapshot_cache_mb, 1, std::size_t{1} << 40) << 20;
}

SnapshotCacheStats EngineImpl::GetSnapshotCacheStats() {
  SnapshotCacheStats s;
  {
    std::lock_guard<std::mutex> lock(index_mu_);
    s.scopes = static_cast<std::int64_t>(indexes_.size());
    s.bytes = static_cast<std::int64_t>(indexes_.bytes());
    s.budget_bytes = static_cast<std::int64_t>(SnapshotBudgetBytes());
    s.evictions = indexes_.evictions();
  }
  std::lock_guard<std::mutex> facts(fact_vectors_mu_);  // (one lock at a time)
  s.fact_scopes = static_cast<std::int64_t>(fact_vectors_.size());
  s.fact_bytes = static_cast<std::int64_t>(fact_vectors_.bytes());
  s.fact_evictions = fact_vectors_.evictions();
  return s;
}

void EngineImpl::DropSnapshots(const std::vector<std::int64_t>& scope_ids) {
  SnapshotLru<retrieval::ScopeIndex>::Freed dropped;  // freed outside the lock
  {
    std::lock_guard<std::mutex> il(index_mu_);
    for (auto id : scope_ids) indexes_.Drop(id, dropped);
    ++index_epoch_;
  }
  stm_cache_.Drop(scope_ids);
  DropFactVectors(scope_ids);
}

void EngineImpl::RefreshIndexes() {
  std::vector<std::int64_t> cached;
  {
    std::lock_guard<std::mutex> lock(index_mu_);
    cached = indexes_.Ids();
  }
  if (cached.empty()) return;
  auto lease = AcquireReader();
  if (!lease.ok()) return;
  sql::Db* db = (*lease)->db();
  std::vector<std::int64_t> gone;
  for (std::int64_t id : cached) {
    {
      std::lock_guard<std::mutex> lock(worker_mu_);
      if (worker_stop_) return;
    }
    auto snapshot = sql::ReadTxn::Begin(db);
    if (!snapshot.ok()) return;
    auto now = store::GetScopeVersion(db, id);
    if (!now.ok()) continue;
    if (!*now) {
      gone.push_back(id);  // erased by another process: its texts leave memory too
      continue;
    }
    (void)IndexFor(db, id, (*now)->generation, (*now)->data_version, false);  // a failure is retried by the next reader
  }
  if (!gone.empty()) DropSnapshots(gone);
}

Result<RetrievalResult> EngineImpl::Retrieve(const Scope& scope, const std::string& query,
                                             const RetrieveOptions& options) {
  ENGRAM_RETURN_IF_ERROR(memory::ValidateDialogueScope(scope));
  if (query.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Status::InvalidArgument("query: must not be empty");
  }
  if (!text::IsValidUtf8(query)) return Status::InvalidArgument("query: not valid UTF-8");
  ENGRAM_RETURN_IF_ERROR(retrieval::CheckRetrieveOptions(options));
  ENGRAM_RETURN_IF_ERROR(RequireEmbedder());
  ENGRAM_ASSIGN_OR_RETURN(auto qv, query_embedder_->Embed({query}));
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));  // one consistent view
  // (Before the first turn of a dialogue, the user's own memories.)
  ENGRAM_ASSIGN_OR_RETURN(auto row, memory::facts::FactSectionsRow(db, scope));
  if (!row) return RetrievalResult{};
  ENGRAM_ASSIGN_OR_RETURN(auto idx, IndexFor(db, row->id, row->generation, row->data_version));
  retrieval::RetrievalInput in;
  in.scope = &*row;
  in.index = idx.get();
  in.query = text::UserAsPronoun(query);  // (the model embedder reads "the user" as said)
  in.query_embedding = std::move(qv.front());
  in.options = options;
  in.now = deps_.clock->NowMs();
  // STM turns are embedded per retrieval (only with a semantic embedder; the
  // built-in one adds nothing over the lexical ranking), uncached: retrieval
  // writes nothing, not even the embedding cache.
  in.embedder = query_embedder_.get();
  in.stm_cache = &stm_cache_;
  memory::AccessLog hits;
  ENGRAM_ASSIGN_OR_RETURN(RetrievalResult result, retrieval::Retrieve(db, in, &hits));
  {
    std::lock_guard<std::mutex> lock(access_mu_);
    for (const auto& [seg, h] : hits) {
      auto& e = access_[seg];
      e.first += h.first;
      e.second = std::max(e.second, h.second);
    }
  }
  BufferRetrievalReceipt(scope, result, in.now);
  return result;
}

}  // namespace engram
