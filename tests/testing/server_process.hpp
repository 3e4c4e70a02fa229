// The real `engram serve` binary for black-box tests: started on an ephemeral
// loopback port with its own home, waited for until ready; stopped with a
// signal, and its exit code and output kept. A cpp-httplib client talks to it.
#pragma once

#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "testing/exec_args.hpp"
#include "testing/temp_dir.hpp"

namespace engram::testing {

// Environment that leaves the models unconfigured (the built-in engine),
// whatever the test runner's environment says.
inline const std::vector<std::string> kNoModelEnv = {"ENGRAM_LLM_BASE_URL=", "ENGRAM_LLM_MODEL=",
                                                     "ENGRAM_EMBED_BASE_URL=", "ENGRAM_EMBED_MODEL=", "ENGRAM_DB="};

class ServerProcess {
 public:
  // Starts `binary --home home serve --listen 127.0.0.1:0 extra...` and waits
  // (up to 60 s) for "ready" on its output. started() is false on failure
  // (output() says why).
  ServerProcess(const std::string& binary, const std::string& home, const std::vector<std::string>& extra = {},
                const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {binary, "--home", home, "serve", "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    // (Built before fork: a test's own threads, a fake model server's, may
    // hold a lock the child would wait on forever; ExecArgs.)
    const ExecArgs exec(argv, env);
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) exec.Exec(out[1]);
    close(out[1]);
    fd_ = out[0];
    home_ = home;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (output_.find("engram serve: ready") != std::string::npos) break;
      if (!ReadSome(200) && exited_) break;
    }
    const std::string marker = "listening on http://127.0.0.1:";
    auto at = output_.find(marker);
    if (at != std::string::npos) port_ = std::stoi(output_.substr(at + marker.size()));
    started_ = port_ > 0 && output_.find("engram serve: ready") != std::string::npos;
    key_ = ReadFile(home + "/admin.key");
    while (!key_.empty() && (key_.back() == '\n' || key_.back() == '\r')) key_.pop_back();
  }
  ~ServerProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  bool started() const { return started_; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // Whether the process is still running (not exited, not a zombie).
  bool alive() {
    ReadSome(0);
    return pid_ > 0 && !exited_;
  }
  // A memory figure of the process from /proc/PID/status in KiB ("VmRSS",
  // "VmHWM": the peak resident size); -1 when unknown.
  std::int64_t MemoryKb(const std::string& field) const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind(field + ":", 0) != 0) continue;
      std::istringstream value(line.substr(field.size() + 1));
      std::int64_t kb = -1;
      value >> kb;
      return kb;
    }
    return -1;
  }
  // The first admin key (written by the server at its first start).
  const std::string& admin_key() const { return key_; }
  // Everything the server printed so far.
  const std::string& output() {
    ReadSome(0);
    return output_;
  }
  std::unique_ptr<httplib::Client> Client(const std::string& key = "") const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(60, 0);
    c->set_write_timeout(60, 0);
    if (!key.empty()) c->set_default_headers({{"Authorization", "Bearer " + key}});
    return c;
  }
  // Sends `sig` and waits (up to `wait`) for the exit; returns the exit code
  // (-1 when it did not exit in time or died of a signal).
  int Stop(int sig = SIGTERM, std::chrono::seconds wait = std::chrono::seconds(60)) {
    if (pid_ <= 0) return -1;
    if (!exited_) kill(pid_, sig);
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (!exited_ && std::chrono::steady_clock::now() < deadline) ReadSome(100);
    return exit_code_;
  }

 private:
  // Reads what is available (waiting up to ms); reaps the child when it ended.
  bool ReadSome(int ms) {
    bool got = false;
    if (fd_ >= 0) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, ms) > 0) {
        char buf[4096];
        ssize_t n = read(fd_, buf, sizeof buf);
        if (n > 0) {
          output_.append(buf, static_cast<std::size_t>(n));
          got = true;
        } else if (n == 0) {
          close(fd_);
          fd_ = -1;
        }
      }
    }
    if (!exited_ && pid_ > 0) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        while (fd_ >= 0 && ReadSome(0)) {
        }
      }
    }
    return got;
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  std::string home_, output_, key_;
  int port_ = 0;
  bool started_ = false, exited_ = false;
  int exit_code_ = -1;
};

}  // namespace engram::testing
