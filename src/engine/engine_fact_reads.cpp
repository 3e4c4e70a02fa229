// EngineImpl: the read operations of the fact memory (search, get, list,
// history) and the cache of fact vector snapshots (memory/facts/
// fact_vectors.hpp) that search and the add path's near-duplicate check use.
#include "core/text.hpp"
#include "engine/engine_impl.hpp"
#include "memory/facts/fact_query.hpp"
#include "memory/facts/fact_store.hpp"
#include "memory/facts/fact_text.hpp"
#include "memory/scope_store.hpp"
#include "store/fact_lookup.hpp"
#include "store/scopes.hpp"

namespace engram {

namespace {

namespace facts = memory::facts;

// Scope rows whose snapshots stay cached (beyond it, another one is dropped).
constexpr std::size_t kMaxFactSnapshots = 256;

bool SameScope(const Scope& a, const Scope& b) {
  return a.tenant == b.tenant && a.user == b.user && a.assistant == b.assistant;
}

}  // namespace

Result<std::shared_ptr<const facts::FactVectors>> EngineImpl::FactVectorsFor(sql::Db* db,
                                                                             const memory::ScopeRow& row) {
  {
    std::lock_guard<std::mutex> lock(fact_vectors_mu_);
    auto* cached = fact_vectors_.Find(row.id);
    if (cached && cached->value->data_version == row.data_version && SameScope(cached->value->row_scope, row.scope)) {
      fact_vectors_.Use(*cached);
      return cached->value;
    }
  }
  ENGRAM_ASSIGN_OR_RETURN(auto snap, facts::LoadFactVectors(db, row.id, row.data_version, row.scope, fact_words_));
  const std::size_t bytes = snap->MemoryBytes();
  SnapshotLru<facts::FactVectors>::Freed freed;  // released after the lock
  std::lock_guard<std::mutex> lock(fact_vectors_mu_);
  const auto* slot = fact_vectors_.Find(row.id);
  if (!slot || slot->value->data_version < row.data_version || !SameScope(slot->value->row_scope, row.scope)) {
    fact_vectors_.Put(row.id, snap, bytes, fact_vectors_.Tick(), SnapshotBudgetBytes(), kMaxFactSnapshots, freed);
  }
  return snap;
}

facts::FactVectorSource EngineImpl::FactVectorSourceFn() {
  return [this](sql::Db* db, const memory::ScopeRow& row) { return FactVectorsFor(db, row); };
}

Result<std::shared_ptr<const facts::FactVectors>> EngineImpl::WriterFactVectors(sql::Db* db,
                                                                                std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(memory::ScopeRow row, memory::LoadScope(db, scope_id));
  return FactVectorsFor(db, row);
}

Status EngineImpl::PublishFactVectors(sql::Db* db, const facts::FactVectors& before,
                                      const facts::FactChanges& changes) {
  ENGRAM_ASSIGN_OR_RETURN(std::optional<store::ScopeVersion> now_at, store::GetScopeVersion(db, before.scope_id));
  const std::int64_t version = now_at ? now_at->data_version : 0;  // 0: the scope is gone
  SnapshotLru<facts::FactVectors>::Freed freed;  // released after the lock
  std::lock_guard<std::mutex> lock(fact_vectors_mu_);
  auto* cached = fact_vectors_.Find(before.scope_id);
  if (!cached || cached->value->data_version != before.data_version ||
      !SameScope(cached->value->row_scope, before.row_scope)) {
    return Status::Ok();  // not cached, or already newer
  }
  if (version == before.data_version) return Status::Ok();
  auto next = facts::ApplyChanges(*cached->value, changes, version);
  if (!next) {
    fact_vectors_.Drop(before.scope_id, freed);  // the delta outgrew the base: the next reader reloads
    return Status::Ok();
  }
  freed.push_back(std::move(cached->value));
  cached->value = std::move(next);
  std::size_t more = 0;
  for (const auto& a : changes.added) {  // (the delta is bounded: ApplyChanges)
    more += a->embedding.size() * sizeof(float) + a->semantic.codes.size() + 128;
  }
  // (`cached` is not used after: growing may drop other scopes.)
  fact_vectors_.Grow(before.scope_id, more, SnapshotBudgetBytes(), kMaxFactSnapshots, freed);
  return Status::Ok();
}

void EngineImpl::DropFactVectors(const std::vector<std::int64_t>& scope_ids) {
  SnapshotLru<facts::FactVectors>::Freed dropped;  // released after the lock
  std::lock_guard<std::mutex> lock(fact_vectors_mu_);
  for (auto id : scope_ids) fact_vectors_.Drop(id, dropped);
}

Result<std::vector<MemoryItem>> EngineImpl::SearchMemories(const MemoryScope& scope, const std::string& query,
                                                           const MemorySearchOptions& options) {
  ENGRAM_RETURN_IF_ERROR(facts::ValidateMemoryScope(scope, false));
  if (query.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Status::InvalidArgument("query: must not be empty");
  }
  if (query.size() > 64 * 1024) return Status::InvalidArgument("query: longer than 64 KiB");
  if (!text::IsValidUtf8(query)) return Status::InvalidArgument("query: not valid UTF-8");
  ENGRAM_RETURN_IF_ERROR(RequireEmbedder());
  // (Embedded as meant: "What does she do for a living?" without "living".)
  ENGRAM_ASSIGN_OR_RETURN(auto qv, query_embedder_->Embed({facts::QuestionMeant(query)}));
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));
  return facts::SearchMemories(db, scope, query, qv.front(), options, deps_.clock->NowMs(),
                               FactVectorSourceFn(), fact_words_);
}

Result<MemoryItem> EngineImpl::GetMemory(const MemoryScope& scope, const std::string& id) {
  ENGRAM_RETURN_IF_ERROR(facts::ValidateMemoryScope(scope, false));
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  ENGRAM_ASSIGN_OR_RETURN(auto row, facts::FindMemory(lease->db(), scope, id, deps_.clock->NowMs()));
  if (!row || row->item.status != "live") return Status::NotFound("memory " + id + " (in this scope)");
  return row->item;
}

Result<MemoryPage> EngineImpl::ListMemories(const MemoryScope& scope, const MemoryListOptions& options) {
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));
  return facts::ListMemories(db, scope, options, deps_.clock->NowMs());
}

Result<std::vector<MemoryHistoryEvent>> EngineImpl::MemoryHistory(const MemoryScope& scope, const std::string& id) {
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));
  return facts::MemoryHistory(db, scope, id, deps_.clock->NowMs());
}

Result<MemoryScope> EngineImpl::LocateMemory(const std::string& tenant, const std::string& id, bool deleted_too) {
  if (tenant.empty()) return Status::InvalidArgument("tenant: must not be empty");
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  ENGRAM_ASSIGN_OR_RETURN(std::optional<store::FactIds> ids,
                          store::LocateFact(lease->db(), tenant, id, /*live_only=*/!deleted_too));
  if (!ids) return Status::NotFound("memory " + id);
  MemoryScope scope;
  scope.tenant = tenant;
  scope.user = std::move(ids->user);
  scope.agent = std::move(ids->agent);
  scope.run = std::move(ids->run);
  return scope;
}

Result<std::vector<MemoryEntity>> EngineImpl::ListMemoryEntities(const std::string& tenant) {
  if (tenant.empty()) return Status::InvalidArgument("tenant: must not be empty");
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  ENGRAM_ASSIGN_OR_RETURN(auto rows, store::ListFactEntities(lease->db(), tenant));
  std::vector<MemoryEntity> out;
  out.reserve(rows.size());
  for (auto& r : rows) out.push_back(MemoryEntity{std::move(r.type), std::move(r.name), r.memories, r.first_at, r.last_at});
  return out;
}

}  // namespace engram
