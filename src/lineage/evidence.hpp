// The evidence the health classifier reads: every receipt plus the ids and
// tier state of the store's rows (no content). Loaded in one read
// transaction so that receipts and rows agree with each other.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engram/types.hpp"
#include "lineage/receipts.hpp"
#include "store/sqlite.hpp"

namespace engram::lineage {

struct ScopeRec {
  std::int64_t id = 0;
  Scope scope;
};
struct TurnRec {
  std::int64_t id = 0, scope_id = 0, seq = 0, page_id = 0;  // page_id 0 = in STM
  TimeMs ingest_time = 0;
};
struct PageRec {
  std::int64_t id = 0, scope_id = 0, turn_id = 0, segment_id = 0, prev_page = 0, next_page = 0;
  bool degraded = false;
};
struct SegmentRec {
  std::int64_t id = 0, scope_id = 0, version = 1;
  TimeMs created_at = 0;
  TimeMs archived_at = 0;  // 0 = live
  bool degraded = false;
};
struct FactRec {
  std::int64_t id = 0, scope_id = 0, version = 1;
  std::string status;  // live, superseded, deleted, purged
  TimeMs record_time = 0;
  bool degraded = false;
  std::string memory;  // rows that are versions of one memory share it ("" = the row alone)
};
struct JobRec {
  std::int64_t id = 0, scope_id = 0;
  std::string kind, status;  // promote|consolidate, pending|failed|done
  int attempts = 0;
  TimeMs created_at = 0, updated_at = 0;
};

struct Evidence {
  std::vector<Receipt> receipts;  // in id order
  std::vector<ScopeRec> scopes;
  std::vector<TurnRec> turns;
  std::vector<PageRec> pages;
  std::vector<SegmentRec> segments;
  std::vector<FactRec> facts;
  std::vector<JobRec> jobs;
  // Scope key -> time of the newest receipt folded into per-day summaries:
  // rows older than this may have lost their receipts to compaction.
  std::map<std::string, TimeMs> compacted_through;
};

// "tenant\x1fuser\x1fassistant": one key per scope.
std::string ScopeKey(const std::string& tenant, const std::string& user, const std::string& assistant);
inline std::string ScopeKey(const Scope& s) { return ScopeKey(s.tenant, s.user, s.assistant); }
Scope ScopeFromKey(const std::string& key);

// Reads everything. REQUIRES: inside one read (or write) transaction.
Result<Evidence> LoadEvidence(sql::Db* db);

// The page chain of one scope in page order.
Result<std::vector<PageRec>> LoadPages(sql::Db* db, std::int64_t scope_id);

}  // namespace engram::lineage
