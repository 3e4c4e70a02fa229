#include "server/metrics.hpp"

#include <cmath>
#include <cstdio>

namespace engram::server {

namespace {

// Whole numbers exactly (counts and byte sizes past 10^9 kept every digit
// under "%.9g"), others with nine significant digits.
std::string Number(double v) {
  char buf[32];
  if (std::fabs(v) < 9007199254740992.0 && v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.9g", v);
  }
  return buf;
}

}  // namespace

std::string LabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void AppendSample(std::string& out, const std::string& name, const std::string& help, const char* type,
                  const std::string& labels, double value) {
  if (!help.empty()) out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += " " + Number(value) + "\n";
}

void Metrics::Observe(const std::string& route, const std::string& method, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{route, method, status}];
  auto& h = latency_[{route, method}];
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      ++h.counts[i];
      break;
    }
  }
  h.sum += seconds;
  ++h.count;
}

std::string Metrics::Render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out =
      "# HELP engram_http_requests_total HTTP requests answered, by route, method and status.\n"
      "# TYPE engram_http_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    const auto& [route, method, status] = key;
    AppendSample(out, "engram_http_requests_total", "", "",
                 "route=\"" + LabelValue(route) + "\",method=\"" + method + "\",status=\"" + std::to_string(status) +
                     "\"",
                 static_cast<double>(n));
  }
  out +=
      "# HELP engram_http_request_duration_seconds Time to answer a request, by route and method.\n"
      "# TYPE engram_http_request_duration_seconds histogram\n";
  for (const auto& [key, h] : latency_) {
    const std::string base = "route=\"" + LabelValue(key.first) + "\",method=\"" + key.second + "\"";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += h.counts[i];
      AppendSample(out, "engram_http_request_duration_seconds_bucket", "", "",
                   base + ",le=\"" + Number(kBuckets[i]) + "\"", static_cast<double>(cumulative));
    }
    AppendSample(out, "engram_http_request_duration_seconds_bucket", "", "", base + ",le=\"+Inf\"",
                 static_cast<double>(h.count));
    AppendSample(out, "engram_http_request_duration_seconds_sum", "", "", base, h.sum);
    AppendSample(out, "engram_http_request_duration_seconds_count", "", "", base, static_cast<double>(h.count));
  }
  return out;
}

}  // namespace engram::server
