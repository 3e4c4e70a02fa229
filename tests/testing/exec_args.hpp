// What a child process of a black-box test is given, built before fork.
#pragma once

#include <unistd.h>

#include <string>
#include <vector>

extern char** environ;

namespace engram::testing {

// What a child process is given, built before fork: the child of a process
// with threads may not allocate or take a lock between fork and exec (a
// lock another thread held at the fork stays held in the child forever), so
// it only redirects its output and calls execve with these arrays.
// `env` entries are "NAME=VALUE" and override the inherited environment
// (and, for a name given twice, the earlier entry).
class ExecArgs {
 public:
  ExecArgs(const std::vector<std::string>& argv, const std::vector<std::string>& env)
      : args_(argv) {
    for (char** e = environ; e && *e; ++e) {
      std::string kv = *e;
      const std::string name = kv.substr(0, kv.find('='));
      bool overridden = false;
      for (const auto& o : env) overridden |= o.substr(0, o.find('=')) == name;
      if (!overridden) env_.push_back(std::move(kv));
    }
    // (A name given twice takes its last value, as putenv one after the other would.)
    for (std::size_t i = 0; i < env.size(); ++i) {
      const std::string name = env[i].substr(0, env[i].find('='));
      bool later = false;
      for (std::size_t j = i + 1; j < env.size(); ++j)
        later |= env[j].substr(0, env[j].find('=')) == name;
      if (!later) env_.push_back(env[i]);
    }
    for (auto& s : env_) envp_.push_back(s.data());
    envp_.push_back(nullptr);
    for (auto& s : args_) argp_.push_back(s.data());
    argp_.push_back(nullptr);
  }
  ExecArgs(const ExecArgs&) = delete;
  ExecArgs& operator=(const ExecArgs&) = delete;
  // In the child after fork: stdout and stderr to `out`, then the program.
  [[noreturn]] void Exec(int out) const {
    dup2(out, 1);
    dup2(out, 2);
    execve(argp_[0], argp_.data(), envp_.data());
    _exit(127);
  }
  char* const* argv() const { return argp_.data(); }
  char* const* envp() const { return envp_.data(); }

 private:
  std::vector<std::string> args_, env_;
  std::vector<char*> argp_, envp_;
};

}  // namespace engram::testing
