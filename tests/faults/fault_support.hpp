// Helpers of the storage-fault tests: a store of the engine and the API keys
// on the fault VFS, its content as seen by a fresh connection, and checks.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "core/clock.hpp"
#include "engram/engine.hpp"
#include "server/api_keys.hpp"
#include "store/errors.hpp"
#include "testing/fault_vfs.hpp"
#include "testing/temp_dir.hpp"

namespace engram::faults {

using testing::FaultVfs;

// Installs the fault VFS as the process default for one test.
class FaultVfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FaultVfs::Install();
    FaultVfs::Get().Forget();
    FaultVfs::Get().ResetCounts();
  }
  void TearDown() override {
    FaultVfs::Get().Disarm();
    if (FaultVfs::Get().power_off()) FaultVfs::Get().CutPower();
    FaultVfs::Uninstall();
    FaultVfs::Get().Forget();
  }
};

// The engine and the API keys of one store file, with a fake clock.
struct Env {
  std::string path;
  EngineOptions options;
  std::shared_ptr<FakeClock> clock;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<server::ApiKeys> keys;

  Env(std::string p, std::shared_ptr<FakeClock> c, EngineOptions o = {}) : path(std::move(p)), clock(std::move(c)) {
    options = std::move(o);
    options.db_path = path;
    options.clock = clock.get();
  }
  Status Open() {
    auto e = Engine::Open(options);
    if (!e.ok()) return e.status();
    engine = std::move(*e);
    auto k = server::ApiKeys::Open(path);
    if (!k.ok()) return k.status();
    keys = std::move(*k);
    return Status::Ok();
  }
  void Close() {
    keys.reset();
    engine.reset();
  }
};

// Tables whose rows are job bookkeeping and evidence (attempts, leases,
// receipts): they change with every attempt, failed ones included, and are
// judged by the health classifier rather than compared.
inline bool IsBookkeeping(const std::string& table) {
  return table == "jobs" || table == "receipts" || table == "receipt_days" || table.rfind("sqlite_stat", 0) == 0;
}
// FTS5 shadow tables: their layout (segments, merges) is not content; their
// consistency is checked by FtsIntegrity.
inline bool IsFtsShadow(const std::string& table) {
  for (const char* s : {"_fts_data", "_fts_idx", "_fts_docsize", "_fts_config", "_fts_content"}) {
    const std::string suffix(s);
    if (table.size() > suffix.size() && table.compare(table.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return true;
    }
  }
  return false;
}

struct TableState {
  std::int64_t rows = 0;
  std::uint64_t hash = 0;
  bool operator==(const TableState& o) const { return rows == o.rows && hash == o.hash; }
};
// The content tables of a store: rows and a hash of every value, in rowid order.
using StoreState = std::map<std::string, TableState>;

inline StoreState ReadState(const std::string& path) {
  StoreState out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << path << ": " << sqlite3_errmsg(db);
    sqlite3_close(db);
    return out;
  }
  std::vector<std::pair<std::string, bool>> tables;  // name, has rowid
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name", -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::string name = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    const char* sql = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
    const std::string text = sql ? sql : "";
    if (IsBookkeeping(name) || IsFtsShadow(name)) continue;
    const bool virt = text.find("VIRTUAL") != std::string::npos;
    const bool without_rowid = text.find("WITHOUT ROWID") != std::string::npos;
    tables.emplace_back(name, !virt && !without_rowid);
  }
  sqlite3_finalize(st);
  for (const auto& [name, rowid] : tables) {
    const std::string q = "SELECT * FROM \"" + name + "\"" + (rowid ? " ORDER BY rowid" : "");
    TableState t;
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&h](const void* p, int n) {
      const auto* b = static_cast<const unsigned char*>(p);
      for (int i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
      h = (h ^ 0xff) * 1099511628211ull;
    };
    if (sqlite3_prepare_v2(db, q.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << q << ": " << sqlite3_errmsg(db);
      continue;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      ++t.rows;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const void* p = sqlite3_column_blob(st, c);
        mix(p ? p : "", sqlite3_column_bytes(st, c));
      }
    }
    if (rc != SQLITE_DONE) ADD_FAILURE() << q << ": " << sqlite3_errmsg(db);
    sqlite3_finalize(st);
    t.hash = h;
    out[name] = t;
  }
  sqlite3_close(db);
  return out;
}

// "ok", or what PRAGMA integrity_check and the FTS5 integrity checks found.
// Opens the file read-write (the FTS check is an INSERT): the store's own
// connections must be closed.
inline std::string Integrity(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    std::string m = sqlite3_errmsg(db);
    sqlite3_close(db);
    return "cannot open: " + m;
  }
  std::string verdict;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) verdict += reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  for (const char* t : {"turns_fts", "segments_fts", "facts_fts"}) {
    const std::string q = std::string("INSERT INTO ") + t + "(" + t + ") VALUES('integrity-check')";
    char* err = nullptr;
    if (sqlite3_exec(db, q.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      verdict += std::string("; ") + t + ": " + (err ? err : "?");
    }
    sqlite3_free(err);
  }
  sqlite3_close(db);
  return verdict;
}

// The tables where two states differ (for messages).
inline std::string Diff(const StoreState& a, const StoreState& b) {
  std::string out;
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    if (it == b.end()) {
      out += " " + name + "(missing)";
    } else if (!(it->second == t)) {
      out += " " + name + "(" + std::to_string(t.rows) + "->" + std::to_string(it->second.rows) + ")";
    }
  }
  for (const auto& [name, t] : b) {
    if (!a.count(name)) out += " " + name + "(new)";
  }
  return out.empty() ? " none" : out;
}

// Whether `s` is `want`: deterministic tables by their hash, the others by
// their row count.
inline bool SameState(const StoreState& s, const StoreState& want, const std::set<std::string>& counted_only) {
  if (s.size() != want.size()) return false;
  for (const auto& [name, t] : want) {
    auto it = s.find(name);
    if (it == s.end()) return false;
    if (counted_only.count(name) ? it->second.rows != t.rows : !(it->second == t)) return false;
  }
  return true;
}

// The health classifier after a fault: nothing at risk or in conflict, and
// every non-green finding explained. With `interrupted_runs`, a job run that
// started and never reached an outcome (the power went in the middle of it)
// may be reported at risk, as docs/LINEAGE.md says, and nothing else: the
// next maintenance run reconciles it.
inline void ExpectExplainedHealth(Engine* engine, const std::string& where, bool interrupted_runs = false) {
  HealthOptions options;
  options.max_findings = 100000;
  auto h = engine->Health(options);
  ASSERT_TRUE(h.ok()) << where << ": " << h.status().ToString();
  int interrupted = 0;
  for (const auto& f : h->findings) {
    interrupted += interrupted_runs && f.state == HealthState::kSourceAtRisk && f.kind == "job" &&
                   f.reason.find("(interrupted)") != std::string::npos;
  }
  EXPECT_EQ(h->counts[static_cast<int>(HealthState::kSourceAtRisk)], interrupted) << where;
  EXPECT_EQ(h->counts[static_cast<int>(HealthState::kScopeConflict)], 0) << where;
  for (const auto& f : h->findings) {
    EXPECT_FALSE(f.reason.empty()) << where << ": a " << f.kind << " finding without a reason";
  }
}

inline void CopyStore(const std::string& from, const std::string& to) {
  std::filesystem::create_directories(std::filesystem::path(to).parent_path());
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
}

}  // namespace engram::faults
