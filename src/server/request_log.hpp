// The recent requests of each tenant, for the inspector's access log
// (GET /v1/requests): method, route template, status, duration, time and
// request id only. Never a body, a query string, a path with ids or a key.
// Bounded: the newest kPerTenant entries of at most kMaxTenants tenants (the
// tenant heard from longest ago is dropped first). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace engram::server {

struct RequestLogEntry {
  std::string method;
  std::string route;  // the route template, e.g. /v1/memories/{id}
  int status = 0;
  double ms = 0;      // from the handler's start to its response
  std::int64_t at_ms = 0;  // Unix time in milliseconds
  std::string request_id;
};

class RequestLog {
 public:
  static constexpr std::size_t kPerTenant = 200;
  static constexpr std::size_t kMaxTenants = 1000;

  void Record(const std::string& tenant, RequestLogEntry entry);
  // The tenant's entries, newest first, at most `limit`.
  std::vector<RequestLogEntry> Recent(const std::string& tenant, std::size_t limit) const;

 private:
  struct Tenant {
    std::deque<RequestLogEntry> entries;  // oldest first
    std::uint64_t touched = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Tenant> tenants_;  // guarded by mu_
  std::uint64_t clock_ = 0;                // guarded by mu_
};

}  // namespace engram::server
