// Embedder identity of the store and Engine::Reembed: migrating a store's
// vectors to another embedder in place.
//
// Protocol (meta `reembed_target` = "<name>/<dim>" while it runs):
//   1. one transaction: record reembed_target, add the nullable shadow columns
//      pages.embedding_next and facts.embedding_next;
//   2. batches of kBatch rows without embedding_next: embed outside any
//      transaction, then write embedding_next in the batch's own transaction
//      (only where it is still NULL), so a killed run resumes where it stopped
//      and nothing is embedded or written twice;
//   3. ONE transaction, only when no row lacks embedding_next (rows admitted
//      meanwhile by an engine on the old embedder send us back to step 2):
//      embedding = embedding_next, segment centroids recomputed from their
//      pages, shadow columns dropped, embedder_name/dim = target,
//      reembed_target removed, data_version of every scope bumped.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/caching_embedder.hpp"
#include "engine/engine_impl.hpp"
#include "store/scopes.hpp"
#include "memory/scope_store.hpp"
#include "memory/stm.hpp"
#include "models/builtin/hash_embedder.hpp"
#include "store/reembed.hpp"
#include "store/schema.hpp"

namespace engram {

namespace {

constexpr const char* kMetaName = "embedder_name";
constexpr const char* kMetaDim = "embedder_dim";
constexpr const char* kMetaTarget = "reembed_target";
constexpr int kBatch = 64;
constexpr int kMaxPasses = 8;  // rounds of "catch up with rows added meanwhile"

std::string Identity(const std::string& name, int dim) { return name + "/" + std::to_string(dim); }

// "name/dim" -> name ("" when malformed).
std::string TargetName(const std::string& identity) {
  const auto slash = identity.rfind('/');
  return slash == std::string::npos ? std::string() : identity.substr(0, slash);
}

// The shadow columns and the vectors written so far: store/reembed.hpp.
using Progress = store::ShadowProgress;

struct Row {
  std::int64_t id = 0;
  std::string text;
  std::string tenant;  // the embedding cache is kept per tenant
};

// One vector per row, in order: the rows of each tenant in one call of its
// embedder (the cache's view for the tenant; `embedder` itself when uncached).
Result<std::vector<Vector>> EmbedByTenant(Embedder& embedder, const std::vector<Row>& rows) {
  std::vector<Vector> out(rows.size());
  std::map<std::string, std::vector<std::size_t>> by_tenant;
  for (std::size_t i = 0; i < rows.size(); ++i) by_tenant[rows[i].tenant].push_back(i);
  for (const auto& [tenant, slots] : by_tenant) {
    std::vector<std::string> texts;
    for (std::size_t i : slots) texts.push_back(rows[i].text);
    ENGRAM_ASSIGN_OR_RETURN(auto vectors, EmbedderForTenant(&embedder, tenant)->Embed(texts));
    if (vectors.size() != texts.size()) {
      return Status::Internal("embedder " + embedder.Name() + " returned " + std::to_string(vectors.size()) +
                              " vectors for " + std::to_string(texts.size()) + " texts");
    }
    for (std::size_t k = 0; k < slots.size(); ++k) out[slots[k]] = std::move(vectors[k]);
  }
  return out;
}

using ProgressFn = std::function<void(std::int64_t, std::int64_t)>;

// Step 2 for one table: embeds every row without embedding_next (in id order,
// kBatch at a time) and stores the vectors. Adds the rows written to
// `written` and to `progress.done`.
Status EmbedRows(const memory::WriterDb& w, const memory::MemoryDeps& deps, Embedder& embedder,
                 int dim, store::VectorTable table, std::int64_t& written, Progress& progress,
                 const ProgressFn& report) {
  const bool pages = table == store::VectorTable::kPages;
  std::int64_t cursor = 0;
  for (;;) {
    std::vector<Row> rows;
    {
      std::lock_guard<std::mutex> lock(*w.mu);
      if (pages) {
        // The page text is what promotion embeds: the rendered exchange of its turn.
        ENGRAM_ASSIGN_OR_RETURN(auto found, store::PagesWithoutShadow(w.db, cursor, kBatch));
        for (const auto& p : found) {
          rows.push_back({p.id, memory::RenderExchange(p.user_name, p.user_text, p.assistant_name, p.assistant_text),
                          p.tenant});
        }
      } else {
        ENGRAM_ASSIGN_OR_RETURN(auto found, store::FactsWithoutShadow(w.db, cursor, kBatch));
        for (auto& f : found) rows.push_back({f.id, std::move(f.text), std::move(f.tenant)});
      }
    }
    if (rows.empty()) return Status::Ok();
    cursor = rows.back().id;

    ENGRAM_ASSIGN_OR_RETURN(auto vectors, EmbedByTenant(embedder, rows));  // outside any transaction
    for (const auto& v : vectors) {
      if (static_cast<int>(v.size()) != dim) {
        return Status::Unavailable("embedder " + embedder.Name() + " returned a vector of dimension " +
                                   std::to_string(v.size()) + ", expected " + std::to_string(dim));
      }
    }
    std::int64_t changed = 0;
    {
      std::lock_guard<std::mutex> lock(*w.mu);
      ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(w.db));
      for (std::size_t i = 0; i < rows.size(); ++i) {
        // 0 when the row was erased meanwhile
        ENGRAM_ASSIGN_OR_RETURN(std::int64_t n, store::WriteShadowVector(w.db, table, rows[i].id, vectors[i]));
        changed += n;
      }
      ENGRAM_RETURN_IF_ERROR(txn->Commit());
    }
    written += changed;
    progress.done += changed;
    if (report) report(progress.done, std::max(progress.total, progress.done));
    deps.Fault("reembed.after_batch");
  }
}

// Step 3 body. REQUIRES: inside a write transaction, no NULL embedding_next.
// Returns the number of segments whose centroid was recomputed.
Result<std::int64_t> SwitchVectors(sql::Db* db, int dim) {
  ENGRAM_RETURN_IF_ERROR(store::CopyShadowVectors(db));
  // Each segment's emb_sum is the sum of its pages' vectors and its embedding
  // the normalised sum (as promotion maintains them); pages come in segment
  // order, so one running sum at a time.
  std::int64_t segments = 0;
  std::int64_t current = 0;
  Vector sum(static_cast<std::size_t>(dim), 0.0f);
  auto flush = [&]() -> Status {
    if (current == 0) return Status::Ok();
    Vector centroid = sum;
    Normalize(centroid);
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t n, store::SetSegmentVectors(db, current, centroid, sum));
    segments += n;
    std::fill(sum.begin(), sum.end(), 0.0f);
    return Status::Ok();
  };
  ENGRAM_RETURN_IF_ERROR(store::ScanPageVectorsBySegment(db, [&](std::int64_t seg, const Vector& v) -> Status {
    if (seg != current) {
      ENGRAM_RETURN_IF_ERROR(flush());
      current = seg;
    }
    for (std::size_t d = 0; d < v.size() && d < sum.size(); ++d) sum[d] += v[d];
    return Status::Ok();
  }));
  ENGRAM_RETURN_IF_ERROR(flush());
  // Segments without pages (none are expected) get a zero vector of the new size.
  const Vector zero(static_cast<std::size_t>(dim), 0.0f);
  ENGRAM_ASSIGN_OR_RETURN(std::int64_t empty, store::ResetEmptySegmentVectors(db, zero));
  segments += empty;
  ENGRAM_RETURN_IF_ERROR(store::DropShadowColumns(db));
  ENGRAM_RETURN_IF_ERROR(store::BumpAllGenerations(db));
  return segments;
}

}  // namespace

Status EngineImpl::CheckStoreEmbedder() {
  sql::Db* db = writer_.get();
  ENGRAM_ASSIGN_OR_RETURN(std::string name, store::GetMeta(db, kMetaName));
  ENGRAM_ASSIGN_OR_RETURN(std::string dim, store::GetMeta(db, kMetaDim));
  const std::string want_dim = std::to_string(embedder_->Dimension());
  if (name.empty()) {
    ENGRAM_RETURN_IF_ERROR(store::SetMeta(db, kMetaName, embedder_->Name()));
    return store::SetMeta(db, kMetaDim, want_dim);
  }
  if (name == embedder_->Name() && dim == want_dim) return Status::Ok();
  if (options_.allow_embedder_migration) {
    embedder_ok_ = false;  // only Reembed (and what needs no vectors) until the switch
    return Status::Ok();
  }
  ENGRAM_ASSIGN_OR_RETURN(std::string target, store::GetMeta(db, kMetaTarget));
  if (!target.empty() && target == Identity(embedder_->Name(), embedder_->Dimension())) {
    ENGRAM_ASSIGN_OR_RETURN(Progress p, store::CountShadowProgress(db));
    return Status::FailedPrecondition("the store " + options_.db_path + " is being migrated to " +
                                      embedder_->Name() + " (" + std::to_string(p.done) + " of " +
                                      std::to_string(p.total) + " vectors); run `engram reembed` to finish");
  }
  return Status::FailedPrecondition(
      "the store " + options_.db_path + " was built with embedder " + name + " (dimension " + dim +
      ") but this engine is configured with " + embedder_->Name() + " (dimension " + want_dim +
      "); configure the original embedder or migrate the store to the new one with `engram reembed`" +
      (target.empty() ? "" : " (a migration to " + TargetName(target) + " is in progress)"));
}

Result<std::shared_ptr<Embedder>> EngineImpl::WithCache(std::shared_ptr<Embedder> embedder) {
  if (!embedder || embedder->IsBuiltin() || dynamic_cast<CachingEmbedder*>(embedder.get())) {
    return embedder;
  }
  ENGRAM_ASSIGN_OR_RETURN(auto cached, CachingEmbedder::Open(std::move(embedder), options_.db_path));
  return std::shared_ptr<Embedder>(std::move(cached));
}

Status EngineImpl::RequireEmbedder() const {
  if (embedder_ok_) return Status::Ok();
  return Status::FailedPrecondition(
      "the store's vectors are not those of " + embedder_->Name() + " (dimension " +
      std::to_string(embedder_->Dimension()) +
      "): this engine was opened to migrate the store; run `engram reembed` to finish, "
      "or open it with the embedder it records");
}

Result<ReembedReport> EngineImpl::Reembed(std::shared_ptr<Embedder> target, ProgressFn progress) {
  if (!target) target = std::make_shared<HashEmbedder>();
  const int dim = target->Dimension();
  if (dim <= 0) {
    return Status::InvalidArgument("reembed: the dimension of embedder " + target->Name() +
                                   " is unknown (probe it first)");
  }
  ReembedReport rep;
  rep.to = target->Name();
  rep.to_dim = dim;
  const std::string to_id = Identity(rep.to, dim);
  std::lock_guard<std::mutex> maint(maint_mu_);  // no maintenance while migrating

  // Step 1: start, resume, restart (another target) or cancel (own embedder).
  {
    std::lock_guard<std::mutex> lock(writer_mu_);
    sql::Db* db = writer_.get();
    ENGRAM_ASSIGN_OR_RETURN(rep.from, store::GetMeta(db, kMetaName));
    ENGRAM_ASSIGN_OR_RETURN(std::string from_dim, store::GetMeta(db, kMetaDim));
    rep.from_dim = std::atoi(from_dim.c_str());
    ENGRAM_ASSIGN_OR_RETURN(std::string pending, store::GetMeta(db, kMetaTarget));
    ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
    if (Identity(rep.from, rep.from_dim) == to_id) {
      if (!pending.empty()) {  // back to the recorded embedder: cancel the migration
        ENGRAM_RETURN_IF_ERROR(store::DropShadowColumns(db));
        ENGRAM_RETURN_IF_ERROR(store::DeleteMeta(db, kMetaTarget));
        ENGRAM_RETURN_IF_ERROR(txn->Commit());
        rep.cancelled = true;
      }
      return rep;  // nothing to do
    }
    rep.resumed = pending == to_id;
    if (!rep.resumed) ENGRAM_RETURN_IF_ERROR(store::DropShadowColumns(db));  // an abandoned target's vectors
    ENGRAM_RETURN_IF_ERROR(store::AddShadowColumns(db));
    ENGRAM_RETURN_IF_ERROR(store::SetMeta(db, kMetaTarget, to_id));
    ENGRAM_RETURN_IF_ERROR(txn->Commit());
  }
  std::shared_ptr<Embedder> embedder = target;
  if (options_.embedder && target.get() == options_.embedder.get()) {
    embedder = embedder_;  // already wrapped with the cache
  } else {
    ENGRAM_ASSIGN_OR_RETURN(embedder, WithCache(target));
  }

  for (int pass = 0;; ++pass) {
    if (pass == kMaxPasses) {
      return Status::Aborted("reembed: the store kept changing (another process is writing to it); "
                             "run `engram reembed` again when it is idle");
    }
    Progress p;
    {
      std::lock_guard<std::mutex> lock(writer_mu_);
      ENGRAM_ASSIGN_OR_RETURN(p, store::CountShadowProgress(writer_.get()));
    }
    if (progress) progress(p.done, p.total);
    // Step 2.
    for (store::VectorTable t : store::kVectorTables) {
      std::int64_t& written = t == store::VectorTable::kPages ? rep.pages : rep.facts;
      ENGRAM_RETURN_IF_ERROR(EmbedRows(w_, deps_, *embedder, dim, t, written, p, progress));
    }
    // Step 3.
    std::lock_guard<std::mutex> lock(writer_mu_);
    sql::Db* db = writer_.get();
    ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t missing, store::CountMissingShadow(db));
    if (missing > 0) continue;  // rows admitted meanwhile: another pass (rolls back)
    ENGRAM_ASSIGN_OR_RETURN(rep.segments, SwitchVectors(db, dim));
    ENGRAM_RETURN_IF_ERROR(store::SetMeta(db, kMetaName, rep.to));
    ENGRAM_RETURN_IF_ERROR(store::SetMeta(db, kMetaDim, std::to_string(dim)));
    ENGRAM_RETURN_IF_ERROR(store::DeleteMeta(db, kMetaTarget));
    deps_.Fault("reembed.before_switch_commit");
    ENGRAM_RETURN_IF_ERROR(txn->Commit());
    SnapshotLru<retrieval::ScopeIndex>::Freed dropped;  // released after the lock
    {
      std::lock_guard<std::mutex> il(index_mu_);
      indexes_.Clear(dropped);
      ++index_epoch_;
    }
    // This engine keeps working only if its own embedder is the new one.
    embedder_ok_ = Identity(embedder_->Name(), embedder_->Dimension()) == to_id;
    rep.changed = true;
    if (progress) progress(p.total, p.total);
    return rep;
  }
}

}  // namespace engram
