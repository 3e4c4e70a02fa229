// Identity of this process as the holder of job leases, and whether another
// holder is known to be gone.
#pragma once

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

}  // namespace engram::process
