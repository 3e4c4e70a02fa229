#include "engine/caching_embedder.hpp"

#include <unordered_map>

#include "core/text.hpp"
#include "store/embed_cache.hpp"
#include "store/schema.hpp"

namespace engram {

namespace {

// The hash of a text whose normalised form is empty ("", "  ", "?!"): such
// texts all share it, so they are never cached.
std::int64_t EmptyKey() {
  static const std::int64_t k = static_cast<std::int64_t>(text::ContentHash(""));
  return k;
}

}  // namespace

// One tenant's face of the cache: an Embedder whose Embed is EmbedFor(tenant).
class CachingEmbedder::TenantView final : public Embedder {
 public:
  TenantView(CachingEmbedder* cache, std::string tenant) : cache_(cache), tenant_(std::move(tenant)) {}
  std::string Name() const override { return cache_->Name(); }
  int Dimension() const override { return cache_->Dimension(); }
  bool IsBuiltin() const override { return cache_->IsBuiltin(); }
  Result<std::vector<Vector>> Embed(const std::vector<std::string>& texts) override {
    return cache_->EmbedFor(tenant_, texts);
  }

 private:
  CachingEmbedder* cache_;
  const std::string tenant_;
};

CachingEmbedder::CachingEmbedder(std::shared_ptr<Embedder> inner, std::unique_ptr<sql::Db> db)
    : inner_(std::move(inner)), db_(std::move(db)) {}

CachingEmbedder::~CachingEmbedder() = default;

Result<std::shared_ptr<CachingEmbedder>> CachingEmbedder::Open(std::shared_ptr<Embedder> inner,
                                                               const std::string& db_path) {
  if (!inner) return Status::InvalidArgument("CachingEmbedder: inner embedder is null");
  std::unique_ptr<sql::Db> db;
  if (db_path == ":memory:") {
    ENGRAM_ASSIGN_OR_RETURN(db, sql::Db::Open(db_path, {}));
    ENGRAM_RETURN_IF_ERROR(store::EnsureSchema(db.get(), 0));
  } else {
    sql::OpenOptions o;
    o.create = false;  // the store exists: the engine created it
    ENGRAM_ASSIGN_OR_RETURN(db, sql::Db::Open(db_path, o));
  }
  // Fails early (and clearly) when the table is missing.
  ENGRAM_RETURN_IF_ERROR(store::FindCachedEmbedding(db.get(), "", inner->Name(), EmptyKey()).status());
  return std::shared_ptr<CachingEmbedder>(new CachingEmbedder(std::move(inner), std::move(db)));
}

Embedder* CachingEmbedder::ForTenant(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(views_mu_);
  auto& view = views_[tenant];
  if (!view) view = std::make_unique<TenantView>(this, tenant);
  return view.get();
}

Embedder* EmbedderForTenant(Embedder* embedder, const std::string& tenant) {
  auto* cache = dynamic_cast<CachingEmbedder*>(embedder);
  return cache ? cache->ForTenant(tenant) : embedder;
}

void CachingEmbedder::Lookup(const std::string& tenant, const std::vector<std::int64_t>& keys,
                             std::vector<Vector>& out, std::vector<bool>& found) {
  const std::string model = inner_->Name();
  const int want_dim = inner_->Dimension();
  std::lock_guard<std::mutex> lock(mu_);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == EmptyKey()) continue;
    auto hit = store::FindCachedEmbedding(db_.get(), tenant, model, keys[i]);
    if (!hit.ok() || !*hit) continue;  // a failed read is a miss
    const std::int64_t dim = (*hit)->dim;
    Vector& v = (*hit)->vector;
    if (dim > 0 && static_cast<std::int64_t>(v.size()) == dim && (want_dim <= 0 || dim == want_dim)) {
      out[i] = std::move(v);
      found[i] = true;
    }
  }
}

void CachingEmbedder::Store(const std::string& tenant, const std::vector<std::int64_t>& keys,
                            const std::vector<Vector>& vectors) {
  const std::string model = inner_->Name();
  std::lock_guard<std::mutex> lock(mu_);
  auto txn = sql::Txn::Begin(db_.get());
  if (!txn.ok()) return;  // busy: the vectors stay uncached
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == EmptyKey() || vectors[i].empty()) continue;
    if (!store::PutCachedEmbedding(db_.get(), tenant, model, keys[i], vectors[i]).ok()) return;  // rolled back by ~Txn
  }
  (void)(*txn)->Commit();
}

Result<std::vector<Vector>> CachingEmbedder::Embed(const std::vector<std::string>& texts) {
  misses_ += static_cast<std::int64_t>(texts.size());
  return inner_->Embed(texts);
}

Result<std::vector<Vector>> CachingEmbedder::EmbedFor(const std::string& tenant,
                                                      const std::vector<std::string>& texts) {
  std::vector<std::int64_t> keys(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    // Signs kept: "C++" and "C#", "O+" and "O-" are different texts (a text
    // without words, "++" too, stays uncached).
    const auto plain = static_cast<std::int64_t>(text::ContentHash(texts[i]));
    keys[i] =
        plain == EmptyKey() ? plain : static_cast<std::int64_t>(text::SignedContentHash(texts[i]));
  }
  std::vector<Vector> out(texts.size());
  std::vector<bool> found(texts.size(), false);
  Lookup(tenant, keys, out, found);

  // Misses: each distinct key once (an uncacheable text always on its own).
  std::vector<std::string> miss_texts;
  std::vector<std::int64_t> miss_keys;
  std::vector<std::size_t> slot(texts.size(), 0);  // index into miss_texts
  std::unordered_map<std::int64_t, std::size_t> first;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (found[i]) continue;
    if (keys[i] != EmptyKey()) {
      auto [it, inserted] = first.emplace(keys[i], miss_texts.size());
      if (!inserted) {
        slot[i] = it->second;
        continue;
      }
    }
    slot[i] = miss_texts.size();
    miss_texts.push_back(texts[i]);
    miss_keys.push_back(keys[i]);
  }
  hits_ += static_cast<std::int64_t>(texts.size()) - static_cast<std::int64_t>(miss_texts.size());
  if (miss_texts.empty()) return out;
  misses_ += static_cast<std::int64_t>(miss_texts.size());

  ENGRAM_ASSIGN_OR_RETURN(std::vector<Vector> computed, inner_->Embed(miss_texts));
  if (computed.size() != miss_texts.size()) {
    return Status::Internal("embedder " + inner_->Name() + " returned " +
                            std::to_string(computed.size()) + " vectors for " +
                            std::to_string(miss_texts.size()) + " texts");
  }
  Store(tenant, miss_keys, computed);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (!found[i]) out[i] = computed[slot[i]];
  }
  return out;
}

}  // namespace engram
