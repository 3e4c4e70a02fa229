// A SQLite VFS for tests that wraps the platform's default VFS ("unix") and
// injects storage faults: power loss and failing I/O calls.
//
// Power loss. For every database, journal and WAL file the VFS remembers
// what was on disk at its last xSync: the size, and the old bytes of every
// region written or truncated away since (an undo log). CutPower() puts every
// file back to that image and deletes files created but never synced, as a
// real power cut may. A file that existed before the VFS first saw it counts
// as synced; deletions are taken as durable at once. A PowerCut rule ends
// the "power" in the middle of work: from its n-th mutating call (write,
// truncate, sync, delete) on, nothing more reaches the files (those calls
// fail with SQLITE_IOERR, as the process would be gone); CutPower() then
// discards what was not synced, and the store is reopened.
//
// Faults. A Rule fails the n-th call of its kind counted from Arm() (1-based)
// and, with `every` > 0, each `every`-th one after it (every = 1: each call
// from the n-th on, a fault that persists until Disarm()):
//   kNoSpace      xWrite  -> SQLITE_FULL (ENOSPC), nothing written
//   kIoError      xWrite  -> SQLITE_IOERR_WRITE (EIO), nothing written
//   kShortWrite   xWrite  -> the first half of the bytes written, then SQLITE_IOERR_WRITE
//   kFsyncFails   xSync   -> SQLITE_IOERR_FSYNC, the data not made durable
//   kReadError    xRead   -> SQLITE_IOERR_READ
//   kPowerCut     any mutating call -> the power goes off (see above)
// Counts() tells how many calls of each kind the VFS has seen since
// ResetCounts(), so a test can measure an operation and sweep n over it.
//
// Use: FaultVfs::Install() makes it the process's default VFS (every
// sqlite3_open after that goes through it, the store's connections
// included), Uninstall() puts "unix" back. Thread-safe.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace engram::testing {

class FaultVfs {
 public:
  enum class Fault { kNoSpace, kIoError, kShortWrite, kFsyncFails, kReadError, kPowerCut };
  static const char* FaultName(Fault f);

  struct Rule {
    Fault fault = Fault::kNoSpace;
    std::int64_t nth = 1;    // the first call that fails (1 = the next one)
    std::int64_t every = 0;  // 0: only the nth; k: also nth + k, nth + 2k, ...
    std::string path_contains;  // only files whose path contains this ("" = every file)
  };

  struct Counts {
    std::int64_t reads = 0, writes = 0, syncs = 0, truncates = 0, deletes = 0;
    std::int64_t faults = 0;  // calls failed by a rule (or refused while the power is off)
    std::int64_t mutating() const { return writes + syncs + truncates + deletes; }
  };

  // The one instance (registered with SQLite under the name "engram-fault").
  static FaultVfs& Get();
  // Makes it the default VFS of the process; Uninstall restores "unix".
  static void Install();
  static void Uninstall();

  void Arm(const Rule& rule);
  void Disarm();  // clears the rule (the power stays as it is)
  Counts counts();
  void ResetCounts();

  // True once a kPowerCut rule fired and until CutPower().
  bool power_off();
  // Puts every tracked file back to its last synced image (deleting files
  // created and never synced) and turns the power back on. The connections
  // that were open are to be closed first (they may fail, their writes are
  // refused while the power is off).
  void CutPower();
  // Unsynced bytes currently held in the undo logs (for messages).
  std::int64_t unsynced_files();
  // Forgets every tracked file (a test's files as of now count as synced).
  void Forget();

  // Implementation (called by the VFS callbacks).
  struct FileState {
    bool created_unsynced = false;
    std::int64_t synced_size = 0;
    struct Undo {
      std::int64_t offset;
      std::string bytes;
    };
    std::vector<Undo> undo;
  };
  enum class Op { kRead, kWrite, kSync, kTruncate, kDelete };
  // Counts the call and decides whether it fails: returns the fault, or
  // nothing (as -1 cast) when it goes through.
  int Decide(Op op, const char* path);
  FileState* Track(const std::string& path, bool existed, std::int64_t size);
  FileState* Find(const std::string& path);
  void Drop(const std::string& path);
  std::mutex& mu() { return mu_; }

 private:
  FaultVfs() = default;
  std::mutex mu_;
  Counts counts_;
  bool armed_ = false;
  Rule rule_;
  std::int64_t seen_ = 0;  // calls of the rule's kind since Arm
  bool power_off_ = false;
  std::map<std::string, FileState> files_;
};

}  // namespace engram::testing
