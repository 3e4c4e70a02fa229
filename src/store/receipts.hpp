// The receipts repository: content-free lineage receipts (docs/LINEAGE.md),
// their compaction into per-day counts (receipt_days), the queries that
// reconcile job runs left open by a crash, and the evidence the health
// classifier reads (every receipt plus the ids and tier state of the store's
// rows, never their content). The meaning of the fields (kinds, tiers,
// statuses) belongs to src/lineage/; this layer only reads and writes rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/lineage.hpp"
#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/db.hpp"

namespace engram::store {

// One receipt. A receipt never holds text, embeddings or hashes of content:
// only identities, versions, tiers, status and time.
struct ReceiptRow {
  std::int64_t id = 0;      // set when read back; ignored by WriteReceipt
  std::string run_id;
  std::string tenant;
  std::string user_scope;
  std::string assistant_scope;
  // "turn", "segment", "fact", "profile_slot", "job", "generation",
  // "retrieval", "scope" (purge and verification)
  std::string memory_kind;
  std::int64_t memory_id = 0;
  std::int64_t version = 1;
  std::string source_version;  // engram version + behaviour-changing configuration
  std::string from_tier;       // "input", "stm", "mtm", "archive", "lpm", ...
  std::string to_tier;
  std::string status;          // started, waiting, committed, verified, failed, degraded
  TimeMs at_utc = 0;
  std::string depends_on_version;  // e.g. "page:12@1,user_fact:3@2"
  std::string outcome_receipt;     // e.g. "pages.id=42"
};

// Appends a receipt. REQUIRES: inside the write transaction of the
// transition the receipt describes.
Status WriteReceipt(sql::Db* db, const ReceiptRow& r);

// Filters of ReadReceipts; empty strings match everything.
struct ReceiptFilter {
  std::string tenant, user, assistant;
  std::string run_id;
  std::string memory_kind;
  std::int64_t limit = -1;  // a negative limit = no limit
};
// Receipts matching every filter, in id order.
Result<std::vector<ReceiptRow>> ReadReceipts(sql::Db* db, const ReceiptFilter& filter);

// Receipts of a tenant (of one user when `user` is not empty) counted per UTC
// day, scope, kind, tiers, status and whether a segment receipt created its
// segment; the rows of receipt_days added as compacted (creation unknown).
// Oldest day first; at most `limit` rows.
struct ReceiptDayRow {
  std::int64_t day = 0;
  std::string user, assistant, kind, from_tier, to_tier, status;
  bool segment_created = false;
  bool compacted = false;
  std::int64_t count = 0;
};
Result<std::vector<ReceiptDayRow>> CountReceiptsByDay(sql::Db* db, const std::string& tenant, const std::string& user,
                                                      std::int64_t limit);

// Folds the receipts older than `cutoff` into receipt_days (counts per UTC
// day, scope, kind, tiers and status; added to the day's existing counts)
// and deletes them. Started job receipts whose run has no outcome yet are
// kept: they are the evidence reconciliation needs.
// REQUIRES: inside a write transaction.
Result<ReceiptCompaction> CompactReceipts(sql::Db* db, TimeMs cutoff);

// --- Reconciliation of job runs -------------------------------------------

// A job run with a "started" receipt and no outcome receipt.
struct OpenJobRun {
  std::string run_id;
  std::int64_t job_id = 0;
};
// The open runs of the scope's jobs of `kind`, in the order they started.
Result<std::vector<OpenJobRun>> FindOpenJobRuns(sql::Db* db, std::int64_t scope_id, const std::string& kind);

// A transition a run's receipt records as committed (or degraded).
struct RunCommit {
  std::string memory_kind;
  std::int64_t memory_id = 0;
  std::int64_t version = 0;
  std::string outcome_receipt;
};
// The non-job commit receipts of `run_id` into `to_tier`, in id order.
Result<std::vector<RunCommit>> ListRunCommits(sql::Db* db, const std::string& run_id, const std::string& to_tier);

// The scope's turns still in STM (not paged): the durable sources of a run.
Result<std::int64_t> CountUnpagedTurns(sql::Db* db, std::int64_t scope_id);

// True when the rows agree with a commit receipt: a "turn" is in page
// `page_id` and that page points back to it; a "segment" or "fact" row
// exists at `version` or later; any other kind (profile slots are keyed by
// dimension) has nothing to look up and holds.
Result<bool> CommitRowHolds(sql::Db* db, const std::string& memory_kind, std::int64_t memory_id,
                            std::int64_t version, std::int64_t page_id);

// --- Evidence of the health classifier ------------------------------------

struct ScopeRec {
  std::int64_t id = 0;
  Scope scope;
};
struct TurnRec {
  std::int64_t id = 0, scope_id = 0, seq = 0, page_id = 0;  // page_id 0 = in STM
  TimeMs ingest_time = 0;
};
struct PageRec {
  std::int64_t id = 0, scope_id = 0, turn_id = 0, segment_id = 0, prev_page = 0, next_page = 0;  // 0 = none
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
  std::string kind, status;  // promote|consolidate, pending|leased|failed|done
  int attempts = 0;
  TimeMs created_at = 0, updated_at = 0;
};
// The time of the newest receipt of a scope folded into receipt_days.
struct CompactedScope {
  Scope scope;
  TimeMs last_at = 0;
};

struct EvidenceRows {
  std::vector<ReceiptRow> receipts;  // in id order
  std::vector<ScopeRec> scopes;
  std::vector<TurnRec> turns;
  std::vector<PageRec> pages;
  std::vector<SegmentRec> segments;
  std::vector<FactRec> facts;
  std::vector<JobRec> jobs;
  std::vector<CompactedScope> compacted;  // one per scope with compacted receipts
};
// Reads every receipt and the state of every scope, turn, page, segment,
// fact and job row. REQUIRES: inside one read (or write) transaction, so that
// receipts and rows agree with each other.
Result<EvidenceRows> LoadEvidenceRows(sql::Db* db);

// The pages of one scope in id (chain) order.
Result<std::vector<PageRec>> LoadScopePages(sql::Db* db, std::int64_t scope_id);

}  // namespace engram::store
