// A throwaway PostgreSQL 15 cluster for tests: initdb in a short temporary
// folder, a server listening on a unix socket only (no TCP port), one
// database "engram"; stopped and removed when the object goes out of scope.
// PostgreSQL refuses to run as root: as root, the folder is given to the
// `postgres` user and the server commands run through `runuser`.
// A cluster that cannot start makes the test fail (never skip); check ok().
// The binaries come from ENGRAM_PG_BIN, else /usr/lib/postgresql/15/bin.
#pragma once

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"

namespace engram::testing {

class PgCluster {
 public:
  PgCluster() {
    const char* bin = std::getenv("ENGRAM_PG_BIN");
    bin_ = bin && *bin ? bin : "/usr/lib/postgresql/15/bin";
    error_ = Start();
    if (!error_.empty()) ADD_FAILURE() << "PgCluster: " << error_;
  }
  ~PgCluster() {
    Stop();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  bool ok() const { return error_.empty(); }
  // Why the cluster did not start ("" when it did).
  const std::string& error() const { return error_; }
  // The folder of the unix socket (also the `host` of the URLs).
  const std::string& dir() const { return dir_; }
  // postgresql://engram@/engram?host=DIR
  std::string url() const { return UrlOf("engram"); }
  std::string UrlOf(const std::string& database) const {
    return "postgresql://engram@/" + database + "?host=" + dir_;
  }

  // Creates an empty database (name: letters, digits, '_') and returns its
  // URL, or "" after a test failure.
  std::string CreateDatabase(const std::string& name) {
    if (!ok()) {
      ADD_FAILURE() << "PgCluster: not running: " << error_;
      return "";
    }
    auto r = RunProcess({bin_ + "/createdb", "-h", dir_, "-U", "engram", name}, "", {},
                        std::chrono::seconds(60));
    if (r.exit_code != 0) {
      ADD_FAILURE() << "PgCluster: createdb " << name << " failed: " << r.err << r.out;
      return "";
    }
    return UrlOf(name);
  }

  // pg_ctl restart (fast): every open connection is cut. False (and a test
  // failure) when the server does not come back.
  bool Restart() {
    const pid_t old_pid = PostmasterPid();
    std::string err = Server({"pg_ctl", "-D", dir_ + "/data", "-l", dir_ + "/log", "-w", "-t", "60",
                              "-m", "fast", "restart"});
    Reap(old_pid);
    if (!err.empty()) {
      ADD_FAILURE() << "PgCluster: restart failed: " << err;
      return false;
    }
    return true;
  }

  // Stops the server now (the destructor does it too). Idempotent.
  void Stop() {
    if (!started_) return;
    started_ = false;
    const pid_t pid = PostmasterPid();
    std::string err =
        Server({"pg_ctl", "-D", dir_ + "/data", "-w", "-t", "60", "-m", "immediate", "stop"});
    Reap(pid);
    if (!err.empty() && pid > 0) ADD_FAILURE() << "PgCluster: stop failed: " << err;
  }

 private:
  std::string Start() {
    if (access((bin_ + "/initdb").c_str(), X_OK) != 0)
      return bin_ + "/initdb not found (install postgresql-15: scripts/bootstrap)";
    // Unix socket paths are limited to ~107 bytes: a short folder in /tmp.
    std::string tmpl = "/tmp/epg-XXXXXX";
    if (!mkdtemp(tmpl.data())) return "mkdtemp /tmp/epg-XXXXXX failed";
    dir_ = tmpl;
    if (getuid() == 0) {
      const passwd* pw = getpwnam("postgres");
      if (!pw) return "running as root and there is no `postgres` user to run the server";
      if (chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) return "chown " + dir_ + " failed";
      for (const char* p : {"/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"}) {
        if (access(p, X_OK) == 0) runuser_ = p;
      }
      if (runuser_.empty()) return "running as root and runuser is not installed";
    }
    std::string err = Server({"initdb", "-D", dir_ + "/data", "-U", "engram", "--auth=trust", "-E",
                              "UTF8", "--locale=C", "--no-sync"});
    if (!err.empty()) return "initdb: " + err;
    started_ = true;  // from here on, the destructor stops whatever did start
    err = Server({"pg_ctl", "-D", dir_ + "/data", "-o",
                  "-k " + dir_ + " -c listen_addresses='' -c fsync=off -c max_prepared_transactions=4", "-w", "-t", "60", "-l",
                  dir_ + "/log", "start"});
    if (!err.empty()) return "pg_ctl start: " + err + "\nserver log:\n" + ReadFile(dir_ + "/log");
    auto r = RunProcess({bin_ + "/createdb", "-h", dir_, "-U", "engram", "engram"}, "", {},
                        std::chrono::seconds(60));
    if (r.exit_code != 0) return "createdb engram: " + r.err + r.out;
    return "";
  }

  // Runs a server program of bin_ (as `postgres` when root, from the
  // cluster folder); "" on success, else what it printed.
  std::string Server(std::vector<std::string> args) {
    args[0] = bin_ + "/" + args[0];
    std::vector<std::string> argv;
    if (!runuser_.empty()) argv = {runuser_, "-u", "postgres", "--"};
    argv.insert(argv.end(), {"/usr/bin/env", "-C", dir_});  // a cwd the server user can enter
    argv.insert(argv.end(), args.begin(), args.end());
    // The server outlives pg_ctl: adopt it (instead of init) so that it can be reaped.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    auto r = RunProcess(argv, "", {}, std::chrono::seconds(90));
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    if (r.exit_code == 0) return "";
    return "exit " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "") + ": " +
           r.err + r.out;
  }

  pid_t PostmasterPid() const {
    const std::string text = ReadFile(dir_ + "/data/postmaster.pid");
    return static_cast<pid_t>(std::atol(text.c_str()));
  }

  // Waits for a stopped server process adopted by this process (up to 10 s).
  static void Reap(pid_t pid) {
    if (pid <= 0) return;
    for (int i = 0; i < 1000; ++i) {
      const pid_t w = waitpid(pid, nullptr, WNOHANG);
      if (w == pid || w < 0) return;  // reaped, or not our child
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  std::string bin_;
  std::string dir_;
  std::string runuser_;
  std::string error_;
  bool started_ = false;
};

}  // namespace engram::testing
