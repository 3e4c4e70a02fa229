#include "lineage/receipts.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <random>

namespace engram::lineage {

std::string NewRunId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  thread_local pid_t seeded_in = getpid();
  if (seeded_in != getpid()) {  // a forked child must not repeat its parent's ids
    seeded_in = getpid();
    rng.seed(std::random_device{}());
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "run-%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

std::string FormatVersionRefs(const std::vector<VersionRef>& refs) {
  std::string out;
  for (const auto& r : refs) {
    if (!out.empty()) out += ",";
    out += r.kind + ":" + std::to_string(r.id) + "@" + std::to_string(r.version);
  }
  return out;
}

namespace {

bool ParseInt(std::string_view s, std::int64_t* v) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

bool ParseVersionRefs(const std::string& text, std::vector<VersionRef>* out) {
  out->clear();
  std::string_view rest = text;
  while (!rest.empty()) {
    std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (comma != std::string_view::npos && rest.empty()) return false;  // a trailing comma
    std::size_t colon = item.find(':'), at = item.rfind('@');
    if (colon == std::string_view::npos || at == std::string_view::npos || at < colon || colon == 0) {
      return false;
    }
    VersionRef r;
    r.kind = std::string(item.substr(0, colon));
    if (!ParseInt(item.substr(colon + 1, at - colon - 1), &r.id) ||
        !ParseInt(item.substr(at + 1), &r.version) || r.version < 1 || r.id < 0) {
      return false;
    }
    out->push_back(std::move(r));
  }
  return true;
}

std::int64_t OutcomeId(const std::string& outcome, const std::string& prefix) {
  std::size_t at = outcome.find(prefix);
  if (at == std::string::npos) return 0;
  std::int64_t v = 0;
  for (std::size_t i = at + prefix.size(); i < outcome.size() && outcome[i] >= '0' && outcome[i] <= '9'; ++i) {
    v = v * 10 + (outcome[i] - '0');
  }
  return v;
}

bool IsCommit(const std::string& status) {
  return status == "committed" || status == "degraded" || status == "verified";
}

bool MissingFields(const Receipt& r) {
  static const char* kStatuses[] = {"started", "waiting", "committed", "verified", "failed", "degraded"};
  bool known = false;
  for (const char* s : kStatuses) known = known || r.status == s;
  return !known || r.run_id.empty() || r.tenant.empty() || r.user_scope.empty() ||
         r.assistant_scope.empty() || r.memory_kind.empty() || r.version < 1 ||
         r.source_version.rfind("engram/", 0) != 0 || r.from_tier.empty() || r.to_tier.empty() ||
         r.at_utc <= 0;
}

}  // namespace engram::lineage
