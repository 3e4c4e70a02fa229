// The `engram serve` process: binds, answers /healthz at once and /readyz
// once the store is open, creates the first admin key when there is none,
// and shuts down gracefully on SIGTERM or SIGINT (stop accepting, finish the
// requests in flight and the current maintenance job, close the store).
#pragma once

#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "engram/engine.hpp"
#include "server/api.hpp"
#include "server/http_server.hpp"

namespace engram::server {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8420;  // 0 = any free port
  HttpServerOptions http;
  bool auth = true;
  bool access_log = false;  // one line per request on the output
  std::string tenant = "default";  // of the first admin key, and of every request with --no-auth
  std::string db_path;
  std::string admin_key_file;      // where the first admin key is written (mode 0600)
  // Opens the engine (with background maintenance unless --no-worker); called after the socket
  // is bound, so /healthz answers while a large store is being checked.
  std::function<Result<std::unique_ptr<Engine>>()> open_engine;
  std::function<ModelCounters()> model_counters;
  // Whether open_engine configures a chat model (read after it returned).
  std::function<bool()> chat_model;
  // The memory proxy's model endpoint (null when none) and its options.
  std::function<ChatPassthrough*()> upstream;
  ApiOptions::Proxy proxy;
  double rate_limit_per_s = 0;  // per API key; 0 = none
  ApiOptions::Quota quota;       // every tenant's (ApiOptions::quota)
  std::map<std::string, ApiOptions::Quota> tenant_quotas;
  // Runs the canary on this store (POST /v1/canary); null: not offered.
  std::function<nlohmann::json()> canary;
};

// Waits for SIGTERM or SIGINT: the constructor blocks both in the calling
// thread (so construct it before starting any other thread: they inherit the
// mask), and a thread of its own takes them with sigtimedwait, calls
// `on_signal` (from that thread) and wakes Wait(). The destructor restores
// the signal mask. Used by `engram serve` and `engram worker`.
class StopSignals {
 public:
  explicit StopSignals(std::function<void()> on_signal = nullptr);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Whether a SIGTERM or SIGINT arrived.
  bool signalled() const { return signalled_; }
  // Blocks until one arrives.
  void Wait();

 private:
  void Loop();

  std::function<void()> on_signal_;
  sigset_t set_{}, old_{};
  std::atomic<bool> done_{false}, signalled_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

// "127.0.0.1:8420", "[::1]:8420", "localhost:0" -> host and port.
Status ParseListen(const std::string& text, std::string* host, int* port);
// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
bool IsLoopback(const std::string& host);

// "turns=N,memories=N,bytes=SIZE" (any subset, comma-separated) into the
// fields it names.
Status ParseQuota(const std::string& text, ApiOptions::Quota* quota);
// "512", "64K", "10MiB", "2G" -> bytes.
Result<std::int64_t> ParseSize(const std::string& text);

// Runs the server until SIGTERM/SIGINT; returns the process exit code.
// Progress lines go to `out` (the listening line first: "engram serve:
// listening on http://HOST:PORT").
int Serve(const ServeOptions& options, std::ostream& out);

}  // namespace engram::server
