#include "testing/fault_vfs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace engram::testing {

namespace {

constexpr int kNoFault = -1;

sqlite3_vfs* Base() {
  static sqlite3_vfs* base = sqlite3_vfs_find("unix");
  return base;
}

// The file object SQLite allocates (szOsFile bytes): ours, then the base VFS's.
struct FaultFile {
  sqlite3_file base;
  sqlite3_file* real;
  std::string* path;  // null for files that are not tracked (temporary files)
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f)->real; }
const char* PathOf(sqlite3_file* f) {
  auto* p = reinterpret_cast<FaultFile*>(f)->path;
  return p ? p->c_str() : nullptr;
}

std::int64_t RealSize(sqlite3_file* real) {
  sqlite3_int64 size = 0;
  if (real->pMethods->xFileSize(real, &size) != SQLITE_OK) return -1;
  return size;
}

// Keeps the bytes [offset, offset + n) of the synced image before they change.
void SaveOld(FaultVfs& vfs, sqlite3_file* f, std::int64_t offset, std::int64_t n) {
  const char* path = PathOf(f);
  if (!path) return;
  std::lock_guard<std::mutex> lock(vfs.mu());
  FaultVfs::FileState* st = vfs.Find(path);
  if (!st || offset >= st->synced_size || n <= 0) return;
  const std::int64_t len = std::min(n, st->synced_size - offset);
  std::string old(static_cast<std::size_t>(len), '\0');
  sqlite3_file* real = Real(f);
  // A short read fills with zeros: those bytes were truncated away since the
  // sync, and the truncation's own undo record (older) restores them.
  (void)real->pMethods->xRead(real, old.data(), static_cast<int>(len), offset);
  st->undo.push_back({offset, std::move(old)});
}

int Close(sqlite3_file* f) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  int rc = ff->real->pMethods ? ff->real->pMethods->xClose(ff->real) : SQLITE_OK;
  delete ff->path;
  ff->path = nullptr;
  return rc;
}

int Read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  if (FaultVfs::Get().Decide(FaultVfs::Op::kRead, PathOf(f)) != kNoFault) return SQLITE_IOERR_READ;
  return Real(f)->pMethods->xRead(Real(f), buf, n, off);
}

int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  FaultVfs& vfs = FaultVfs::Get();
  const int fault = vfs.Decide(FaultVfs::Op::kWrite, PathOf(f));
  switch (fault) {
    case kNoFault:
      break;
    case static_cast<int>(FaultVfs::Fault::kNoSpace):
      return SQLITE_FULL;
    case static_cast<int>(FaultVfs::Fault::kShortWrite): {
      SaveOld(vfs, f, off, n);
      (void)Real(f)->pMethods->xWrite(Real(f), buf, n / 2, off);
      return SQLITE_IOERR_WRITE;
    }
    default:  // kIoError, kPowerCut
      return SQLITE_IOERR_WRITE;
  }
  SaveOld(vfs, f, off, n);
  return Real(f)->pMethods->xWrite(Real(f), buf, n, off);
}

int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  FaultVfs& vfs = FaultVfs::Get();
  if (vfs.Decide(FaultVfs::Op::kTruncate, PathOf(f)) != kNoFault) return SQLITE_IOERR_TRUNCATE;
  if (const char* path = PathOf(f)) {
    std::int64_t synced = 0;
    {
      std::lock_guard<std::mutex> lock(vfs.mu());
      if (auto* st = vfs.Find(path)) synced = st->synced_size;
    }
    if (size < synced) SaveOld(vfs, f, size, synced - size);
  }
  return Real(f)->pMethods->xTruncate(Real(f), size);
}

int Sync(sqlite3_file* f, int flags) {
  FaultVfs& vfs = FaultVfs::Get();
  if (vfs.Decide(FaultVfs::Op::kSync, PathOf(f)) != kNoFault) return SQLITE_IOERR_FSYNC;
  int rc = Real(f)->pMethods->xSync(Real(f), flags);
  if (rc != SQLITE_OK) return rc;
  if (const char* path = PathOf(f)) {
    const std::int64_t size = RealSize(Real(f));
    std::lock_guard<std::mutex> lock(vfs.mu());
    if (auto* st = vfs.Find(path)) {
      st->undo.clear();
      if (size >= 0) st->synced_size = size;
      st->created_unsynced = false;
    }
  }
  return SQLITE_OK;
}

int FileSize(sqlite3_file* f, sqlite3_int64* size) { return Real(f)->pMethods->xFileSize(Real(f), size); }
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) { return Real(f)->pMethods->xCheckReservedLock(Real(f), out); }
int FileControl(sqlite3_file* f, int op, void* arg) { return Real(f)->pMethods->xFileControl(Real(f), op, arg); }
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) { return Real(f)->pMethods->xDeviceCharacteristics(Real(f)); }
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** pp) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, pp);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int del) { return Real(f)->pMethods->xShmUnmap(Real(f), del); }
// No memory-mapped pages: every read goes through xRead (and sees reverted files).
int Fetch(sqlite3_file*, sqlite3_int64, int, void** pp) {
  *pp = nullptr;
  return SQLITE_OK;
}
int Unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) { return Real(f)->pMethods->xUnfetch(Real(f), off, p); }

const sqlite3_io_methods kMethods = {
    3,         Close,           Read,      Write,     Truncate,  Sync,      FileSize,
    Lock,      Unlock,          CheckReservedLock,    FileControl,         SectorSize,
    DeviceCharacteristics,      ShmMap,    ShmLock,   ShmBarrier, ShmUnmap, Fetch,
    Unfetch,
};

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  auto* ff = reinterpret_cast<FaultFile*>(file);
  ff->base.pMethods = nullptr;
  ff->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + sizeof(FaultFile));
  ff->path = nullptr;
  const bool track = name != nullptr && (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL |
                                                  SQLITE_OPEN_SUPER_JOURNAL)) != 0;
  struct stat sb {};
  const bool existed = track && ::stat(name, &sb) == 0;
  int rc = Base()->xOpen(Base(), name, ff->real, flags, out_flags);
  if (rc != SQLITE_OK) return rc;
  ff->base.pMethods = &kMethods;
  if (track) {
    ff->path = new std::string(name);
    std::lock_guard<std::mutex> lock(FaultVfs::Get().mu());
    FaultVfs::Get().Track(name, existed, existed ? static_cast<std::int64_t>(sb.st_size) : 0);
  }
  return SQLITE_OK;
}

int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  FaultVfs& vfs = FaultVfs::Get();
  if (vfs.Decide(FaultVfs::Op::kDelete, name) != kNoFault) return SQLITE_IOERR_DELETE;
  int rc = Base()->xDelete(Base(), name, sync_dir);
  if (rc == SQLITE_OK || rc == SQLITE_IOERR_DELETE_NOENT) {
    std::lock_guard<std::mutex> lock(vfs.mu());
    vfs.Drop(name);
  }
  return rc;
}

int Access(sqlite3_vfs*, const char* name, int flags, int* out) { return Base()->xAccess(Base(), name, flags, out); }
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return Base()->xFullPathname(Base(), name, n, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) { return Base()->xDlOpen(Base(), name); }
void DlError(sqlite3_vfs*, int n, char* msg) { Base()->xDlError(Base(), n, msg); }
void (*DlSym(sqlite3_vfs*, void* h, const char* sym))(void) { return Base()->xDlSym(Base(), h, sym); }
void DlClose(sqlite3_vfs*, void* h) { Base()->xDlClose(Base(), h); }
int Randomness(sqlite3_vfs*, int n, char* out) { return Base()->xRandomness(Base(), n, out); }
int Sleep(sqlite3_vfs*, int us) { return Base()->xSleep(Base(), us); }
int CurrentTime(sqlite3_vfs*, double* t) { return Base()->xCurrentTime(Base(), t); }
int GetLastError(sqlite3_vfs*, int n, char* out) { return Base()->xGetLastError(Base(), n, out); }
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* t) { return Base()->xCurrentTimeInt64(Base(), t); }
int SetSystemCall(sqlite3_vfs*, const char* name, sqlite3_syscall_ptr p) {
  return Base()->xSetSystemCall(Base(), name, p);
}
sqlite3_syscall_ptr GetSystemCall(sqlite3_vfs*, const char* name) { return Base()->xGetSystemCall(Base(), name); }
const char* NextSystemCall(sqlite3_vfs*, const char* name) { return Base()->xNextSystemCall(Base(), name); }

sqlite3_vfs* TheVfs() {
  static sqlite3_vfs vfs = [] {
    sqlite3_vfs v{};
    sqlite3_vfs* b = Base();
    v.iVersion = 3;
    v.szOsFile = static_cast<int>(sizeof(FaultFile)) + b->szOsFile;
    v.mxPathname = b->mxPathname;
    v.zName = "engram-fault";
    v.xOpen = Open;
    v.xDelete = Delete;
    v.xAccess = Access;
    v.xFullPathname = FullPathname;
    v.xDlOpen = DlOpen;
    v.xDlError = DlError;
    v.xDlSym = DlSym;
    v.xDlClose = DlClose;
    v.xRandomness = Randomness;
    v.xSleep = Sleep;
    v.xCurrentTime = CurrentTime;
    v.xGetLastError = GetLastError;
    v.xCurrentTimeInt64 = CurrentTimeInt64;
    v.xSetSystemCall = SetSystemCall;
    v.xGetSystemCall = GetSystemCall;
    v.xNextSystemCall = NextSystemCall;
    sqlite3_vfs_register(&v, 0);
    return v;
  }();
  return &vfs;
}

}  // namespace

const char* FaultVfs::FaultName(Fault f) {
  switch (f) {
    case Fault::kNoSpace: return "ENOSPC";
    case Fault::kIoError: return "EIO";
    case Fault::kShortWrite: return "short_write";
    case Fault::kFsyncFails: return "fsync";
    case Fault::kReadError: return "read_EIO";
    case Fault::kPowerCut: return "power_cut";
  }
  return "?";
}

FaultVfs& FaultVfs::Get() {
  static FaultVfs* instance = new FaultVfs();  // never destroyed: connections may outlive statics
  return *instance;
}

void FaultVfs::Install() {
  sqlite3_vfs* v = TheVfs();
  sqlite3_vfs_unregister(v);
  sqlite3_vfs_register(v, 1);
}

void FaultVfs::Uninstall() {
  Get().Disarm();
  sqlite3_vfs_register(Base(), 1);
}

void FaultVfs::Arm(const Rule& rule) {
  std::lock_guard<std::mutex> lock(mu_);
  rule_ = rule;
  armed_ = true;
  seen_ = 0;
}

void FaultVfs::Disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = false;
}

FaultVfs::Counts FaultVfs::counts() {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

void FaultVfs::ResetCounts() {
  std::lock_guard<std::mutex> lock(mu_);
  counts_ = Counts{};
}

bool FaultVfs::power_off() {
  std::lock_guard<std::mutex> lock(mu_);
  return power_off_;
}

std::int64_t FaultVfs::unsynced_files() {
  std::lock_guard<std::mutex> lock(mu_);
  std::int64_t n = 0;
  for (const auto& [path, st] : files_) n += st.created_unsynced || !st.undo.empty();
  return n;
}

void FaultVfs::Forget() {
  std::lock_guard<std::mutex> lock(mu_);
  files_.clear();
}

int FaultVfs::Decide(Op op, const char* path) {
  std::lock_guard<std::mutex> lock(mu_);
  switch (op) {
    case Op::kRead: ++counts_.reads; break;
    case Op::kWrite: ++counts_.writes; break;
    case Op::kSync: ++counts_.syncs; break;
    case Op::kTruncate: ++counts_.truncates; break;
    case Op::kDelete: ++counts_.deletes; break;
  }
  const bool mutating = op != Op::kRead;
  if (power_off_ && mutating) {
    ++counts_.faults;
    return static_cast<int>(Fault::kPowerCut);
  }
  if (!armed_) return kNoFault;
  bool applies = false;
  switch (rule_.fault) {
    case Fault::kNoSpace:
    case Fault::kIoError:
    case Fault::kShortWrite: applies = op == Op::kWrite; break;
    case Fault::kFsyncFails: applies = op == Op::kSync; break;
    case Fault::kReadError: applies = op == Op::kRead; break;
    case Fault::kPowerCut: applies = mutating; break;
  }
  if (applies && !rule_.path_contains.empty()) {
    applies = path != nullptr && std::strstr(path, rule_.path_contains.c_str()) != nullptr;
  }
  if (!applies) return kNoFault;
  ++seen_;
  const bool fires = seen_ == rule_.nth ||
                     (rule_.every > 0 && seen_ > rule_.nth && (seen_ - rule_.nth) % rule_.every == 0);
  if (!fires) return kNoFault;
  ++counts_.faults;
  if (rule_.fault == Fault::kPowerCut) power_off_ = true;
  return static_cast<int>(rule_.fault);
}

FaultVfs::FileState* FaultVfs::Track(const std::string& path, bool existed, std::int64_t size) {
  auto [it, fresh] = files_.try_emplace(path);
  if (fresh) {
    it->second.created_unsynced = !existed;
    it->second.synced_size = existed ? size : 0;
  }
  return &it->second;
}

FaultVfs::FileState* FaultVfs::Find(const std::string& path) {
  auto it = files_.find(path);
  return it == files_.end() ? nullptr : &it->second;
}

void FaultVfs::Drop(const std::string& path) { files_.erase(path); }

void FaultVfs::CutPower() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = files_.begin(); it != files_.end();) {
    const std::string& path = it->first;
    FileState& st = it->second;
    // The wal-index lives in memory: after a power cut SQLite rebuilds it.
    if (path.size() > 4 && path.compare(path.size() - 4, 4, "-wal") == 0) {
      ::unlink((path.substr(0, path.size() - 4) + "-shm").c_str());
    }
    if (st.created_unsynced) {
      ::unlink(path.c_str());
      it = files_.erase(it);
      continue;
    }
    const int fd = ::open(path.c_str(), O_RDWR);
    if (fd >= 0) {
      for (auto u = st.undo.rbegin(); u != st.undo.rend(); ++u) {
        (void)!::pwrite(fd, u->bytes.data(), u->bytes.size(), static_cast<off_t>(u->offset));
      }
      (void)!::ftruncate(fd, static_cast<off_t>(st.synced_size));
      ::close(fd);
    }
    st.undo.clear();
    ++it;
  }
  power_off_ = false;
  armed_ = false;
}

}  // namespace engram::testing
