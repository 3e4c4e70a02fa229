// Identity of this process as the holder of job leases, and whether another
// holder is known to be gone.
#pragma once

#include <cstddef>
#include <string>

namespace engram::process {

// "host/pid/pidns/random": unique per process (and per call).
std::string NewHolderId();

// True only when `holder` (a NewHolderId of some process) is certainly not
// running: it names this host and this PID namespace, and no process has its
// pid (or its pid is ours, with another random part: a previous life of a
// reused pid is not us). Anything else, including a holder on another host,
// is presumed alive until its lease expires.
bool HolderIsGone(const std::string& holder);

// A data file made at build time and installed beside the binary: the path in
// $`env_var` when it is set (an empty value or "off": none), else `file_name`
// beside the executable, else ../share/engram/`file_name` from it; "" when
// none is found.
std::string FindDataFile(const char* env_var, const char* file_name);

// Maps the whole file at `path` read-only and shared (the caller unmaps it);
// nullptr when it cannot be opened or mapped or holds fewer than `min_size`
// bytes (and at least one).
const unsigned char* MapReadOnly(const std::string& path, std::size_t min_size, std::size_t* size);

}  // namespace engram::process
