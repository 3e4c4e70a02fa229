// Per-tenant quotas of `engram serve` (ApiOptions::quota): checked before a
// write reaches the engine, from the tenant's usage as last read from the
// store (at most kUsageMaxAgeMs old, so that other processes' writes are
// seen) plus what this process accepted since. A write over a quota is
// refused whole; nothing stored is ever dropped to make room.
#include <algorithm>
#include <utility>

#include "server/api.hpp"

namespace engram::server {

namespace {

constexpr std::int64_t kUsageMaxAgeMs = 2000;
// Past this age the figure is read even while writes of the tenant are under way.
constexpr std::int64_t kUsageMustReadMs = 30000;

std::string HumanBytes(std::int64_t n) {
  if (n >= (1ll << 30) && n % (1ll << 30) == 0) return std::to_string(n >> 30) + " GiB";
  if (n >= (1ll << 20) && n % (1ll << 20) == 0) return std::to_string(n >> 20) + " MiB";
  if (n >= (1ll << 10) && n % (1ll << 10) == 0) return std::to_string(n >> 10) + " KiB";
  return std::to_string(n) + " bytes";
}

}  // namespace

ApiOptions::Quota Api::QuotaOf(const std::string& tenant) const {
  auto it = options_.tenant_quotas.find(tenant);
  return it != options_.tenant_quotas.end() ? it->second : options_.quota;
}

Api::QuotaHold Api::CheckQuota(const Call& c, const QuotaAsk& ask, bool keyed) {
  const ApiOptions::Quota q = QuotaOf(c.who.tenant);
  if (q.turns <= 0 && q.memories <= 0 && q.bytes <= 0) return QuotaHold();
  std::unique_lock<std::mutex> lock(quota_mu_);
  QuotaTraffic& traffic = traffic_[c.who.tenant];  // std::map: the reference stays valid
  for (;;) {
    if (traffic.reading) {  // another request reads the store: its figure serves
      quota_cv_.wait(lock);
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    auto it = usage_.find(c.who.tenant);
    const std::int64_t age =
        it == usage_.end() ? kUsageMustReadMs
                           : std::chrono::duration_cast<std::chrono::milliseconds>(now - it->second.at).count();
    // The store is read (to see other processes' writes) when the figure is
    // older than kUsageMaxAgeMs and no write of the tenant is under way, so
    // that the read holds every charged write and none in flight: exact.
    // Past kUsageMustReadMs it is read even then (a tenant whose writes never
    // pause, a long streamed chat): a write that commits before the read and
    // is charged after it counts twice until the next read (refusing early,
    // never admitting over the limit).
    if (age < kUsageMaxAgeMs || (traffic.writers > 0 && age < kUsageMustReadMs)) break;
    traffic.reading = true;  // new claims wait for the figure (one count query)
    lock.unlock();
    Result<TenantUsage> stored = engine().GetTenantUsage(c.who.tenant);
    lock.lock();
    traffic.reading = false;
    quota_cv_.notify_all();
    if (!stored.ok()) Check(std::move(stored));  // throws
    usage_[c.who.tenant] = CachedUsage{*stored, QuotaAsk{}, now};
    break;
  }
  // The check and the claim are one step under the lock: a write in flight
  // (claimed, not yet stored or let go) counts as if it were stored.
  const char* over = nullptr;
  std::string detail;
  {
    const CachedUsage& u = usage_[c.who.tenant];
    const QuotaAsk& flying = traffic.claimed;
    const std::int64_t turns = u.stored.turns + u.since.turns + flying.turns,
                       memories = u.stored.memories + u.since.memories + flying.memories,
                       bytes = u.stored.bytes + u.since.bytes + flying.bytes;
    // Memories: an inferred add may extract more than one fact, so a memory
    // write is refused once the tenant is at its limit (it may end one
    // request's facts over it); turns and bytes are known before the write.
    if (q.turns > 0 && ask.turns > 0 && turns + ask.turns > q.turns) {
      over = "turns";
      detail = std::to_string(turns) + " of " + std::to_string(q.turns) + " turns stored, this request adds " +
               std::to_string(ask.turns);
    } else if (q.memories > 0 && ask.memories > 0 && memories >= q.memories) {
      over = "memories";
      detail = std::to_string(memories) + " of " + std::to_string(q.memories) + " memories stored";
    } else if (q.bytes > 0 && ask.bytes > 0 && bytes + ask.bytes > q.bytes) {
      over = "bytes";
      detail = HumanBytes(bytes) + " of " + HumanBytes(q.bytes) + " of text stored, this request adds " +
               HumanBytes(ask.bytes);
    }
    if (!over) {
      ++traffic.writers;
      traffic.claimed.turns += ask.turns;
      traffic.claimed.memories += ask.memories;
      traffic.claimed.bytes += ask.bytes;
      return QuotaHold(this, c.who.tenant, ask, "");
    }
  }
  lock.unlock();
  if (keyed) return QuotaHold(nullptr, "", QuotaAsk{}, over);  // the engine answers a retry, and refuses anything new
  CountQuotaRefusal(c.who.tenant, over);
  Throw(429, "quota_exceeded",
        std::string("tenant \"") + c.who.tenant + "\" is at its " + over + " quota (" + detail +
            "); nothing was stored. Delete or purge memories, or ask the operator for a larger quota");
}

Api::QuotaHold& Api::QuotaHold::operator=(QuotaHold&& o) noexcept {
  if (this != &o) {
    Release();
    api_ = std::exchange(o.api_, nullptr);
    tenant_ = std::move(o.tenant_);
    ask_ = o.ask_;
    over_ = std::move(o.over_);
  }
  return *this;
}

void Api::QuotaHold::Release() {
  if (!api_) return;
  {
    std::lock_guard<std::mutex> lock(api_->quota_mu_);
    QuotaTraffic& t = api_->traffic_[tenant_];
    --t.writers;
    t.claimed.turns -= ask_.turns;
    t.claimed.memories -= ask_.memories;
    t.claimed.bytes -= ask_.bytes;
  }
  api_ = nullptr;
}

void Api::QuotaHold::Charge(const QuotaAsk& stored) {
  if (!api_) return;
  {
    // Counted as accepted until the next read of the store, which (but past
    // kUsageMustReadMs) starts only once this write let its claim go (just
    // below), so it sees it.
    std::lock_guard<std::mutex> lock(api_->quota_mu_);
    auto it = api_->usage_.find(tenant_);
    if (it != api_->usage_.end()) {
      it->second.since.turns += stored.turns;
      it->second.since.memories += stored.memories;
      it->second.since.bytes += stored.bytes;
    }
  }
  Release();
}

Api::QuotaAsk Api::TurnsAsk(const std::vector<TurnInput>& turns) {
  QuotaAsk ask;
  ask.turns = static_cast<std::int64_t>(turns.size());
  for (const auto& t : turns) ask.bytes += static_cast<std::int64_t>(t.user_text.size() + t.assistant_text.size());
  return ask;
}

Api::QuotaAsk Api::MessagesAsk(const std::vector<MemoryMessage>& messages) {
  QuotaAsk ask;
  ask.memories = 1;
  for (const auto& m : messages) {
    if (m.role != "system") ask.bytes += static_cast<std::int64_t>(m.content.size());
  }
  return ask;
}

Api::QuotaAsk Api::AddedAsk(const MemoryAddResult& r, const QuotaAsk& ask) {
  QuotaAsk took{0, 0, ask.bytes};
  for (const auto& e : r.results) took.memories += e.event == "ADD" ? 1 : 0;
  return took;
}

void Api::CountQuotaRefusal(const std::string& tenant, const std::string& quota) {
  std::lock_guard<std::mutex> lock(quota_mu_);
  ++quota_refused_[{tenant, quota}];
}

void Api::CountTenantRequest(const std::string& tenant, const std::string& route, const std::string& method,
                             int status) {
  std::lock_guard<std::mutex> lock(tenant_mu_);
  ++tenant_requests_[{tenant, route, method, status}];
}

void Api::AppendQuotaMetrics(std::string& out, const std::string& tenant) {
  std::map<std::string, CachedUsage> usage;
  std::map<std::pair<std::string, std::string>, std::int64_t> refused;
  {
    std::lock_guard<std::mutex> lock(quota_mu_);
    usage = usage_;
    refused = quota_refused_;
  }
  // The tenants to show: one, or every one with a quota, a usage read or a refusal.
  std::vector<std::string> tenants;
  if (!tenant.empty()) {
    tenants.push_back(tenant);
  } else {
    for (const auto& [t, q] : options_.tenant_quotas) tenants.push_back(t);
    for (const auto& [t, u] : usage) tenants.push_back(t);
    for (const auto& [k, n] : refused) tenants.push_back(k.first);
    std::sort(tenants.begin(), tenants.end());
    tenants.erase(std::unique(tenants.begin(), tenants.end()), tenants.end());
  }
  bool first_limit = true, first_usage = true, first_refused = true;
  for (const auto& t : tenants) {
    const ApiOptions::Quota q = QuotaOf(t);
    const std::string who = "tenant=\"" + LabelValue(t) + "\"";
    const std::pair<const char*, std::int64_t> limits[] = {{"turns", q.turns}, {"memories", q.memories},
                                                           {"bytes", q.bytes}};
    for (const auto& [kind, limit] : limits) {
      if (limit <= 0) continue;
      AppendSample(out, "engram_quota_limit", first_limit ? "Per-tenant quota (0 or absent: none)." : "", "gauge",
                   who + ",quota=\"" + kind + "\"", static_cast<double>(limit));
      first_limit = false;
    }
    if (auto it = usage.find(t); it != usage.end()) {
      const CachedUsage& u = it->second;
      const std::pair<const char*, std::int64_t> used[] = {{"turns", u.stored.turns + u.since.turns},
                                                           {"memories", u.stored.memories + u.since.memories},
                                                           {"bytes", u.stored.bytes + u.since.bytes}};
      for (const auto& [kind, n] : used) {
        AppendSample(out, "engram_quota_usage",
                     first_usage ? "What a tenant holds against its quotas (as of its last write check)." : "",
                     "gauge", who + ",quota=\"" + kind + "\"", static_cast<double>(n));
        first_usage = false;
      }
    }
    for (const char* kind : {"turns", "memories", "bytes"}) {
      auto it = refused.find({t, kind});
      if (it == refused.end()) continue;
      AppendSample(out, "engram_quota_exceeded_total",
                   first_refused ? "Writes refused with 429 because a tenant quota was reached." : "", "counter",
                   who + ",quota=\"" + kind + "\"", static_cast<double>(it->second));
      first_refused = false;
    }
  }
}

}  // namespace engram::server
