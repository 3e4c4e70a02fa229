// Request metrics of `engram serve` in the Prometheus text format: counts per
// route, method and status, and latency histograms per route and method.
// Gauges about the store and the models are appended by the caller at scrape
// time (AppendGauge), so they are never stale.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace engram::server {

class Metrics {
 public:
  void Observe(const std::string& route, const std::string& method, int status, double seconds);
  // The request families (engram_http_requests_total,
  // engram_http_request_duration_seconds).
  std::string Render() const;

 private:
  static constexpr std::array<double, 14> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                       0.1,    0.25,  0.5,    1.0,   2.5,  5.0,  10.0};
  struct Histogram {
    std::array<std::uint64_t, kBuckets.size()> counts{};  // per bucket (not cumulative)
    double sum = 0;
    std::uint64_t count = 0;
  };
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, std::uint64_t> requests_;  // guarded by mu_
  std::map<std::pair<std::string, std::string>, Histogram> latency_;          // guarded by mu_
};

// Appends one sample (with its HELP and TYPE lines when `help` is not empty).
// `labels` is the inside of the braces, already escaped (may be "").
void AppendSample(std::string& out, const std::string& name, const std::string& help, const char* type,
                  const std::string& labels, double value);
// Escapes a label value (backslash, double quote, newline).
std::string LabelValue(const std::string& v);

}  // namespace engram::server
