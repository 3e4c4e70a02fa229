// Store errors that callers tell apart by their message prefix (the Status
// codes are the public ones of engram/status.hpp): a store that is busy or
// unreachable (kUnavailable, sql::kStoreUnavailable in store/db.hpp: retry
// shortly) and a store whose disk is full (kIoError, kStoreFull: writes fail
// until space is freed; reads go on).
#pragma once

#include <string>

#include "engram/status.hpp"
#include "store/db.hpp"

namespace engram::sql {

// The prefix of the kIoError status of a write refused because the disk
// holding the store (SQLite: ENOSPC, SQLITE_FULL; PostgreSQL: SQLSTATE
// 53100) is full. The write was not applied; nothing acknowledged was lost.
inline constexpr const char* kStoreFull = "store full: ";

inline bool IsStoreFull(const Status& st) {
  return st.code() == StatusCode::kIoError && st.message().find(kStoreFull) != std::string::npos;
}
inline bool IsStoreUnavailable(const Status& st) {
  return st.code() == StatusCode::kUnavailable && st.message().find(kStoreUnavailable) != std::string::npos;
}

}  // namespace engram::sql
