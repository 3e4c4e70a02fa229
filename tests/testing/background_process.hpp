// A long-running process for black-box tests (`engram worker`, `engram serve`
// when the test reads its output itself): started with fork/execve, its
// stdout and stderr captured through one pipe, stopped with a signal and
// reaped; killed with SIGKILL and reaped by the destructor if still running.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "testing/exec_args.hpp"

namespace engram::testing {

// `env` entries are "NAME=VALUE" and override the inherited environment.
class Background {
 public:
  Background(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    const ExecArgs exec(argv, env);
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) exec.Exec(out[1]);
    close(out[1]);
    fd_ = out[0];
  }
  ~Background() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  pid_t pid() const { return pid_; }
  bool exited() {
    ReadSome(0);
    return exited_;
  }
  const std::string& output() {
    ReadSome(0);
    return output_;
  }
  // Waits (up to `wait`) until the output contains `text`.
  bool WaitFor(const std::string& text, std::chrono::seconds wait) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (output_.find(text) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      if (!ReadSome(100) && exited_) break;
    }
    return output_.find(text) != std::string::npos;
  }
  // Sends `sig` and waits (up to `wait`) for the exit, reaping the process (a
  // zombie would still count as alive for the lease takeover). Returns the
  // exit code, or -1 when it died of a signal or did not exit in time.
  int Stop(int sig, std::chrono::seconds wait = std::chrono::seconds(60)) {
    if (pid_ <= 0) return -1;
    if (!exited_) kill(pid_, sig);
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (!exited_ && std::chrono::steady_clock::now() < deadline) ReadSome(100);
    return exit_code_;
  }

 private:
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
    } else if (ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
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
  std::string output_;
  bool exited_ = false;
  int exit_code_ = -1;
};

}  // namespace engram::testing
