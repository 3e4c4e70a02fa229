#include "core/process.hpp"

#include <signal.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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

namespace {

std::string ExecutableDir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<std::size_t>(n));
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

bool IsRegularFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

const unsigned char* MapReadOnly(const std::string& path, std::size_t min_size, std::size_t* size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0 || static_cast<std::size_t>(st.st_size) < min_size) {
    ::close(fd);
    return nullptr;
  }
  *size = static_cast<std::size_t>(st.st_size);
  void* m = ::mmap(nullptr, *size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  return m == MAP_FAILED ? nullptr : static_cast<const unsigned char*>(m);
}

std::string FindDataFile(const char* env_var, const char* file_name) {
  if (const char* env = std::getenv(env_var)) {
    const std::string v = env;
    if (v.empty() || v == "off") return "";
    return v;
  }
  const std::string dir = ExecutableDir();
  if (dir.empty()) return "";
  for (const std::string& p : {dir + "/" + file_name, dir + "/../share/engram/" + file_name}) {
    if (IsRegularFile(p)) return p;
  }
  return "";
}

}  // namespace engram::process
