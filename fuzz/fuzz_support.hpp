// Shared by the libFuzzer targets: invariant checks that abort with a message
// (libFuzzer then saves the input as a crash), and a private scratch folder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <unistd.h>

namespace engram::fuzz {

[[noreturn]] inline void Fail(const char* file, int line, const char* cond, const std::string& detail) {
  std::fprintf(stderr, "\nFUZZ INVARIANT FAILED %s:%d: %s\n%s\n", file, line, cond, detail.c_str());
  std::abort();
}

// A folder of its own for one fuzzing process (under /dev/shm when there is
// one, so stores never touch the disk), removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::string tmpl = std::string(base) + "/engram-fuzz-XXXXXX";
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : std::string(base);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string_view AsText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace engram::fuzz

// Aborts (a finding) when `cond` is false; `detail` is any expression that
// converts to std::string.
#define FUZZ_CHECK(cond, detail)                                               \
  do {                                                                         \
    if (!(cond)) ::engram::fuzz::Fail(__FILE__, __LINE__, #cond, (detail));    \
  } while (0)
