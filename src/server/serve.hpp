// The `engram serve` process: binds, answers /healthz at once and /readyz
// once the store is open, creates the first admin key when there is none,
// and shuts down gracefully on SIGTERM or SIGINT (stop accepting, finish the
// requests in flight and the current maintenance job, close the store).
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

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
  // Opens the engine (with background maintenance); called after the socket
  // is bound, so /healthz answers while a large store is being checked.
  std::function<Result<std::unique_ptr<Engine>>()> open_engine;
  std::function<ModelCounters()> model_counters;
  // Whether open_engine configures a chat model (read after it returned).
  std::function<bool()> chat_model;
};

// "127.0.0.1:8420", "[::1]:8420", "localhost:0" -> host and port.
Status ParseListen(const std::string& text, std::string* host, int* port);
// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
bool IsLoopback(const std::string& host);

// Runs the server until SIGTERM/SIGINT; returns the process exit code.
// Progress lines go to `out` (the listening line first: "engram serve:
// listening on http://HOST:PORT").
int Serve(const ServeOptions& options, std::ostream& out);

}  // namespace engram::server
