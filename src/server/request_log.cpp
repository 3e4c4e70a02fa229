#include "server/request_log.hpp"

#include <algorithm>

namespace engram::server {

void RequestLog::Record(const std::string& tenant, RequestLogEntry entry) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tenants_.find(tenant);
  if (it == tenants_.end()) {
    if (tenants_.size() >= kMaxTenants) {
      auto oldest = std::min_element(tenants_.begin(), tenants_.end(),
                                     [](const auto& a, const auto& b) { return a.second.touched < b.second.touched; });
      tenants_.erase(oldest);
    }
    it = tenants_.emplace(tenant, Tenant{}).first;
  }
  Tenant& t = it->second;
  t.touched = ++clock_;
  t.entries.push_back(std::move(entry));
  while (t.entries.size() > kPerTenant) t.entries.pop_front();
}

std::vector<RequestLogEntry> RequestLog::Recent(const std::string& tenant, std::size_t limit) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RequestLogEntry> out;
  auto it = tenants_.find(tenant);
  if (it == tenants_.end()) return out;
  const auto& e = it->second.entries;
  for (auto r = e.rbegin(); r != e.rend() && out.size() < limit; ++r) out.push_back(*r);
  return out;
}

}  // namespace engram::server
