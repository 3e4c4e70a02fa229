#include "server/serve.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <mutex>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <thread>

#include "core/clock.hpp"
#include "server/api_keys.hpp"
#include "store/db.hpp"

namespace engram::server {

namespace {

TimeMs NowMs() { return SystemClock::Default().NowMs(); }

// Writes the key to `path` readable by the owner only (a new file renamed
// into place, so a half-written key file never exists).
Status WriteKeyFile(const std::string& path, const std::string& key) {
  // The folder of a store file exists; a home folder used with a store that
  // is not a file (PostgreSQL) may not yet.
  if (const auto slash = path.find_last_of('/'); slash != std::string::npos && slash > 0) {
    std::error_code ec;
    std::filesystem::create_directories(path.substr(0, slash), ec);
  }
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IoError("cannot write " + tmp);
  const std::string text = key + "\n";
  bool ok = ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Status::IoError("cannot write " + path);
  }
  return Status::Ok();
}

}  // namespace

StopSignals::StopSignals(std::function<void()> on_signal) : on_signal_(std::move(on_signal)) {
  sigemptyset(&set_);
  sigaddset(&set_, SIGTERM);
  sigaddset(&set_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set_, &old_);
  thread_ = std::thread([this] { Loop(); });
}

StopSignals::~StopSignals() {
  done_ = true;
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

void StopSignals::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return signalled_.load(); });
}

void StopSignals::Loop() {
  const timespec tick{0, 100 * 1000 * 1000};
  while (!done_) {
    int sig = sigtimedwait(&set_, nullptr, &tick);
    if (sig != SIGTERM && sig != SIGINT) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      signalled_ = true;
    }
    if (on_signal_) on_signal_();
    cv_.notify_all();
  }
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

Status ParseListen(const std::string& text, std::string* host, int* port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return Status::InvalidArgument("--listen: expected HOST:PORT such as 127.0.0.1:8420, got \"" + text + "\"");
  }
  std::string h = text.substr(0, colon);
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  const std::string p = text.substr(colon + 1);
  if (p.find_first_not_of("0123456789") != std::string::npos || p.size() > 5 || std::stoi(p) > 65535) {
    return Status::InvalidArgument("--listen: the port must be a number from 0 to 65535, got \"" + p + "\"");
  }
  *host = h;
  *port = std::stoi(p);
  return Status::Ok();
}

Status ParseQuota(const std::string& text, ApiOptions::Quota* quota) {
  // "turns=N,memories=N,bytes=SIZE" (any subset; SIZE takes K, M, G: KiB, MiB, GiB).
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string part = text.substr(at, comma - at);
    const std::size_t eq = part.find('=');
    const std::string name = part.substr(0, eq), value = eq == std::string::npos ? "" : part.substr(eq + 1);
    std::int64_t* slot = name == "turns" ? &quota->turns : name == "memories" ? &quota->memories
                       : name == "bytes" ? &quota->bytes : nullptr;
    if (!slot) {
      return Status::InvalidArgument("quota: expected turns=N, memories=N or bytes=SIZE, got \"" + part + "\"");
    }
    auto size = ParseSize(value);
    if (!size.ok()) return Status::InvalidArgument("quota " + name + ": " + size.status().message());
    if (name != "bytes" && value.find_first_not_of("0123456789") != std::string::npos) {
      return Status::InvalidArgument("quota " + name + ": expected a whole number, got \"" + value + "\"");
    }
    *slot = *size;
    at = comma + 1;
  }
  return Status::Ok();
}

Result<std::int64_t> ParseSize(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 15) return Status::InvalidArgument("expected a number (with K, M or G), got \"" + text + "\"");
  std::int64_t n = std::stoll(text.substr(0, digits));
  std::string unit = text.substr(digits);
  for (auto& ch : unit) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (unit.size() >= 2 && unit.compare(unit.size() - 2, 2, "IB") == 0) unit.resize(unit.size() - 2);
  else if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  const int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : unit == "T" ? 40 : -1;
  if (shift < 0) return Status::InvalidArgument("unknown unit in \"" + text + "\" (use K, M, G or T)");
  if (shift > 0 && n > (std::int64_t{1} << (62 - shift))) return Status::InvalidArgument("\"" + text + "\" is too large");
  return n << shift;
}

int Serve(const ServeOptions& o, std::ostream& out) {
  if (!o.auth && !IsLoopback(o.host)) {
    out << "engram serve: --no-auth is refused on " << o.host
        << ": without API keys the server may only listen on loopback (127.0.0.1 or ::1)\n";
    return 2;
  }
  Metrics metrics;
  ApiOptions api_options;
  api_options.auth = o.auth;
  api_options.no_auth_tenant = o.tenant;
  api_options.model_counters = o.model_counters;
  api_options.upstream = o.upstream;
  api_options.proxy = o.proxy;
  api_options.rate_limit_per_s = o.rate_limit_per_s;
  api_options.quota = o.quota;
  api_options.tenant_quotas = o.tenant_quotas;
  api_options.canary = o.canary;
  Api api(api_options, metrics);
  HttpServer server(o.http);
  api.Register(server);
  std::mutex log_mu;
  server.SetObserver([&metrics, &out, &log_mu, access_log = o.access_log](const RequestRecord& r) {
    metrics.Observe(r.route, r.method, r.status, r.seconds);
    if (!access_log) return;
    // One line per request: no query, body or key, so nothing secret or personal beyond the path.
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.2f", r.seconds * 1000.0);
    std::lock_guard<std::mutex> lock(log_mu);
    out << "engram serve: " << r.method << " " << r.path << " " << r.status << " " << ms << " ms " << r.request_id
        << "\n" << std::flush;
  });
  server.SetErrorResponder([&api](int status, const std::string& id, const std::string& detail) {
    return api.TransportError(status, id, detail);
  });

  // Before any other thread starts, so that all of them block the signals.
  StopSignals signals([&server] { server.Stop(); });
  auto port = server.Bind(o.host, o.port);
  if (!port.ok()) {
    out << "engram serve: " << port.status().message() << "\n";
    return 1;
  }
  const std::string shown_host = o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host;
  out << "engram serve: listening on http://" << shown_host << ":" << *port << std::endl;
  std::thread runner([&server] { (void)server.Run(); });

  auto engine = o.open_engine();
  std::unique_ptr<ApiKeys> keys;
  int code = 0;
  if (!engine.ok()) {
    out << "engram serve: cannot open the store: " << engine.status().ToString() << std::endl;
    code = 1;
  } else if (auto k = ApiKeys::Open(o.db_path); !k.ok()) {
    out << "engram serve: cannot read the API keys: " << k.status().ToString() << std::endl;
    code = 1;
  } else {
    keys = std::move(*k);
    auto active = keys->CountActive();
    if (!active.ok()) {
      out << "engram serve: cannot read the API keys: " << active.status().ToString() << std::endl;
      code = 1;
    } else if (o.auth && *active == 0) {
      // The operator's key: admin of its tenant and of the whole store's /metrics.
      auto created = keys->Create(o.tenant, {}, Role::kOperator, "first operator key", NowMs());
      Status written = created.ok() ? WriteKeyFile(o.admin_key_file, created->second) : created.status();
      if (!written.ok()) {
        if (created.ok()) (void)keys->Revoke(created->first.id, NowMs());  // nobody could ever use it
        out << "engram serve: cannot create the first admin key: " << written.ToString()
            << " (or create one with: engram keys create --role operator)" << std::endl;
        code = 1;
      } else {
        out << "engram serve: no active API key, so an operator key (admin of tenant \"" << o.tenant
            << "\", and /metrics of the whole store) was created. It is shown only now and saved to " << o.admin_key_file << " (mode 600):\n  "
            << created->second << std::endl;
      }
    }
  }
  if (code == 0) {
    const bool chat_model = o.chat_model && o.chat_model();
    api.SetReady(engine->get(), keys.get(), chat_model);
    // Where each kind of client connects (before "ready", which scripts wait for).
    const std::string base = "http://" + shown_host + ":" + std::to_string(*port);
    out << "engram serve: REST API " << base << "/v1, inspector " << base << "/ui/, MCP " << base
        << "/mcp?user=USER, Mem0 clients " << base << "/mem0, OpenAI clients " << base << "/v1"
        << (chat_model ? "" : " (the memory proxy needs a model endpoint)") << std::endl;
    out << "engram serve: ready (store " << sql::RedactLocation(o.db_path) << (o.auth ? "" : ", no authentication")
        << ")" << std::endl;
  } else {
    server.Stop();
  }
  runner.join();  // returns after Stop(): in-flight requests are finished
  if (signals.signalled()) out << "engram serve: stopping" << std::endl;
  if (engine.ok()) engine->reset();  // finishes the current maintenance job, writes buffered receipts
  if (code == 0) out << "engram serve: stopped" << std::endl;
  return code;
}

}  // namespace engram::server
