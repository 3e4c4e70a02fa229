#include "core/process.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <sstream>
#include <vector>

namespace engram::process {

namespace {

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  std::string h(buf);
  for (char& c : h) {
    if (c == '/') c = '_';
  }
  return h;
}

// The inode of this process's PID namespace: pids compare only inside one.
std::string PidNamespace() {
  struct stat st {};
  if (stat("/proc/self/ns/pid", &st) != 0) return "0";
  return std::to_string(static_cast<unsigned long long>(st.st_ino));
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, '/')) out.push_back(part);
  return out;
}

}  // namespace

std::string NewHolderId() {
  std::random_device rd;
  std::ostringstream s;
  s << HostName() << '/' << getpid() << '/' << PidNamespace() << '/' << std::hex << rd() << rd();
  return s.str();
}

bool HolderIsGone(const std::string& holder) {
  const auto parts = Split(holder);
  if (parts.size() != 4 || parts[0] != HostName() || parts[2] != PidNamespace()) return false;
  long pid = 0;
  try {
    pid = std::stol(parts[1]);
  } catch (...) {
    return false;
  }
  if (pid <= 0) return false;
  if (pid == static_cast<long>(getpid())) {
    // Our pid: a holder id of ours is alive (every engine of this process
    // runs its jobs itself); an earlier process that had our pid is gone.
    return false;
  }
  return kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace engram::process
