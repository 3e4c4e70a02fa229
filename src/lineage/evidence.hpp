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
#include "store/receipts.hpp"
#include "store/sqlite.hpp"

namespace engram::lineage {

// The rows' records live in the data layer (store/receipts.hpp).
using ScopeRec = store::ScopeRec;
using TurnRec = store::TurnRec;
using PageRec = store::PageRec;
using SegmentRec = store::SegmentRec;
using FactRec = store::FactRec;
using JobRec = store::JobRec;

// The rows of store::LoadEvidenceRows (receipts in id order, scopes, turns,
// pages, segments, facts, jobs), and per scope the end of compaction.
struct Evidence : store::EvidenceRows {
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
