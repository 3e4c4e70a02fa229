// Per-tenant quotas of `engram serve` (ApiOptions::quota): checked before a
// write reaches the engine, from the tenant's usage as last read from the
// store (at most kUsageMaxAgeMs old, so that other processes' writes are
// seen) plus what this process accepted since. A write over a quota is
// refused whole; nothing stored is ever dropped to make room.
#include <algorithm>

#include "server/api.hpp"

namespace engram::server {

namespace {

constexpr std::int64_t kUsageMaxAgeMs = 2000;

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

std::string Api::CheckQuota(const Call& c, const QuotaAsk& ask, bool keyed) {
  const ApiOptions::Quota q = QuotaOf(c.who.tenant);
  if (q.turns <= 0 && q.memories <= 0 && q.bytes <= 0) return "";
  const auto now = std::chrono::steady_clock::now();
  TenantUsage stored;
  QuotaAsk since;
  bool fresh = false;
  {
    std::lock_guard<std::mutex> lock(quota_mu_);
    auto it = usage_.find(c.who.tenant);
    if (it != usage_.end() &&
        std::chrono::duration_cast<std::chrono::milliseconds>(now - it->second.at).count() < kUsageMaxAgeMs) {
      stored = it->second.stored;
      since = it->second.since;
      fresh = true;
    }
  }
  if (!fresh) {  // read outside the lock: a slow store delays only this tenant's writers
    stored = Check(engine().GetTenantUsage(c.who.tenant));
    std::lock_guard<std::mutex> lock(quota_mu_);
    usage_[c.who.tenant] = CachedUsage{stored, QuotaAsk{}, now};
  }
  const std::int64_t turns = stored.turns + since.turns, memories = stored.memories + since.memories,
                     bytes = stored.bytes + since.bytes;
  // Memories: an inferred add may extract more than one fact, so a memory
  // write is refused once the tenant is at its limit (it may end one
  // request's facts over it); turns and bytes are known before the write.
  const char* over = nullptr;
  std::string detail;
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
  if (!over) return "";
  if (keyed) return over;  // the engine answers a retry, and refuses anything new
  CountQuotaRefusal(c.who.tenant, over);
  Throw(429, "quota_exceeded",
        std::string("tenant \"") + c.who.tenant + "\" is at its " + over + " quota (" + detail +
            "); nothing was stored. Delete or purge memories, or ask the operator for a larger quota");
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

void Api::CountQuotaRefusal(const std::string& tenant, const std::string& quota) {
  std::lock_guard<std::mutex> lock(quota_mu_);
  ++quota_refused_[{tenant, quota}];
}

void Api::ChargeQuota(const std::string& tenant, const QuotaAsk& ask) {
  std::lock_guard<std::mutex> lock(quota_mu_);
  auto it = usage_.find(tenant);
  if (it == usage_.end()) return;  // no quota read yet: the next check reads the store
  it->second.since.turns += ask.turns;
  it->second.since.memories += ask.memories;
  it->second.since.bytes += ask.bytes;
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
