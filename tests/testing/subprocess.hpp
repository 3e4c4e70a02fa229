// Runs a program for tests: arguments as a vector (fork/execve, no shell),
// optional stdin text and extra environment variables, stdout and stderr
// captured, killed after a timeout.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "testing/exec_args.hpp"

namespace engram::testing {

struct ProcessResult {
  int exit_code = -1;      // -1 when killed by a signal or not started
  int signal = 0;          // the terminating signal, if any
  bool timed_out = false;  // killed by RunProcess after the timeout
  std::string out;
  std::string err;
};

// `env` entries are "NAME=VALUE" and override the inherited environment.
inline ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& stdin_text = "",
                                const std::vector<std::string>& env = {},
                                std::chrono::milliseconds timeout = std::chrono::seconds(120)) {
  ProcessResult res;
  if (argv.empty()) return res;

  const ExecArgs exec(argv, env);  // (built before fork: nothing is allocated after it)

  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return res;
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]);
    return res;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    return res;
  }
  // Writing to a child that closed its stdin must not kill the test.
  struct sigaction ignore {}, old_pipe {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);

  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGPIPE, SIG_DFL);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execve(exec.argv()[0], exec.argv(), exec.envp());
    const char msg[] = "RunProcess: execve failed\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    _exit(127);
  }
  close(in[0]), close(out[1]), close(err[1]);
  if (pid < 0) {
    close(in[1]), close(out[0]), close(err[0]);
    sigaction(SIGPIPE, &old_pipe, nullptr);
    return res;
  }

  int in_fd = in[1];
  std::size_t written = 0;
  if (stdin_text.empty()) close(in_fd), in_fd = -1;
  else fcntl(in_fd, F_SETFL, O_NONBLOCK);
  int out_fd = out[0], err_fd = err[0];
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out_fd >= 0 || err_fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      res.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd fds[3];
    int n = 0;
    if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
    if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
    if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
    int rc = poll(fds, n, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (rc < 0 && errno != EINTR) break;
    for (int i = 0; i < n && rc > 0; ++i) {
      if (!fds[i].revents) continue;
      if (fds[i].fd == in_fd) {
        ssize_t w = write(in_fd, stdin_text.data() + written, stdin_text.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) written = stdin_text.size();  // EPIPE: child gone
        if (written == stdin_text.size()) close(in_fd), in_fd = -1;
        continue;
      }
      char buf[8192];
      ssize_t r = read(fds[i].fd, buf, sizeof buf);
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      int& fd = fds[i].fd == out_fd ? out_fd : err_fd;
      if (r <= 0) {
        close(fd);
        fd = -1;
      } else {
        (fds[i].fd == out[0] ? res.out : res.err).append(buf, static_cast<std::size_t>(r));
      }
    }
  }
  for (int fd : {in_fd, out_fd, err_fd}) {
    if (fd >= 0) close(fd);
  }
  int status = 0;
  for (;;) {  // a child that closed its outputs but lingers is killed at the deadline too
    pid_t w = waitpid(pid, &status, res.timed_out ? 0 : WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    if (w == 0 && std::chrono::steady_clock::now() >= deadline) {
      res.timed_out = true;
      kill(pid, SIGKILL);
    } else if (w == 0) {
      usleep(1000);
    }
  }
  sigaction(SIGPIPE, &old_pipe, nullptr);
  if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) res.signal = WTERMSIG(status);
  return res;
}

}  // namespace engram::testing
