// engram public API: lineage receipts and memory health (docs/LINEAGE.md).
//
// A receipt is a content-free record of one boundary a memory item crossed
// (admission, promotion, merge, archive, consolidation, retrieval, generation,
// purge). The health classifier reads receipts together with the store's own
// state and gives every memory item, every scope and the store one of eight
// states, in precedence order (the first that applies wins).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/types.hpp"

namespace engram {

// Precedence order: a lower value outranks every higher one.
enum class HealthState {
  kScopeConflict = 0,     // an event belongs to another user or assistant scope
  kSourceAtRisk,          // the source left its tier and no destination commit exists
  kPromotionMissing,      // past its capacity/wait window and no promotion happened
  kStaleRetrieval,        // retrieval (or generation) used version N, N+1 was current
  kGenerationUnverified,  // an answer without a dependency receipt naming its versions
  kUncertain,             // missing, unreadable or expired evidence
  kWaiting,               // durable; its threshold has not been reached (or is being worked on)
  kHealthy,               // everything agrees
};
inline constexpr int kHealthStateCount = 8;
// "scope_conflict", "source_at_risk", "promotion_missing", "stale_retrieval",
// "generation_unverified", "uncertain", "waiting", "healthy".
const char* HealthStateName(HealthState state);
// The state that wins under the precedence rule.
inline HealthState Worse(HealthState a, HealthState b) { return a < b ? a : b; }
// Healthy or waiting: the states `engram health` exits 0 for.
inline bool IsGreen(HealthState s) { return s == HealthState::kHealthy || s == HealthState::kWaiting; }

struct HealthOptions {
  std::string tenant;  // "" = every tenant
  std::string user;    // "" = every user
  TimeMs now = 0;      // 0 = the engine's clock
  // Receipts older than this are evidence of nothing (-1 = the engine's
  // receipt_horizon_hours; 0 = never expire).
  std::int64_t horizon_ms = -1;
  // How long a source may stay beyond its capacity before the missing
  // promotion is reported (-1 = the engine's promotion_wait_minutes).
  std::int64_t promotion_wait_ms = -1;
  int max_findings = 200;  // non-green items listed (worst first)
};

// One memory item (or event) the classifier judged.
struct HealthItem {
  std::string kind;  // "turn", "segment", "fact", "job", "generation", "retrieval"
  std::int64_t id = 0;
  Scope scope;
  HealthState state = HealthState::kHealthy;
  std::string reason;                // why, without content ("" when healthy)
  std::vector<std::string> run_ids;  // the runs the evidence came from
  TimeMs since = 0;                  // for waiting items: waiting since
  bool degraded = false;             // produced by a fallback (built-in) path
};

struct ScopeHealth {
  Scope scope;
  HealthState state = HealthState::kHealthy;
  std::array<std::int64_t, kHealthStateCount> counts{};  // items per state
};

struct HealthReport {
  HealthState overall = HealthState::kHealthy;
  std::array<std::int64_t, kHealthStateCount> counts{};  // items per state
  std::vector<ScopeHealth> scopes;
  std::vector<HealthItem> findings;        // non-green items, worst first, at most max_findings
  std::int64_t findings_total = 0;         // non-green items in all
  std::optional<HealthItem> oldest_waiting;
  std::int64_t items = 0;
  std::int64_t degraded_items = 0;
  double degraded_share = 0.0;             // degraded_items / items (0 when no items)
  std::int64_t receipts_read = 0;
  TimeMs now = 0;
  std::int64_t horizon_ms = 0;
  bool green() const { return IsGreen(overall); }
};

// A receipt as stored (docs/LINEAGE.md lists the fields).
struct ReceiptInfo {
  std::int64_t id = 0;
  std::string run_id;
  Scope scope;
  std::string memory_kind;
  std::int64_t memory_id = 0;
  std::int64_t version = 0;
  std::string source_version;
  std::string from_tier;
  std::string to_tier;
  std::string status;
  TimeMs at_utc = 0;
  std::string depends_on_version;
  std::string outcome_receipt;
};

// Filters of Engine::ListReceipts; empty fields match everything.
struct ReceiptQuery {
  Scope scope{"", "", ""};  // each non-empty id must match
  std::string run_id;
  std::string memory_kind;
  int limit = 10000;
};

// Receipts counted per UTC day, scope and transition (content-free), for
// activity over time: those still held and those compacted into day counts.
struct ReceiptDayCount {
  std::int64_t day = 0;  // days since 1970-01-01 (UTC)
  Scope scope{"", "", ""};
  std::string memory_kind, from_tier, to_tier, status;
  bool segment_created = false;  // segment receipts that created one (unknown once compacted: false)
  bool compacted = false;        // from the day counts of receipts past the retention
  std::int64_t count = 0;
};

// The dialogue chain of a scope as stored (ids only, no content).
struct PageLink {
  std::int64_t page_id = 0;
  std::int64_t turn_id = 0;
  std::int64_t segment_id = 0;
  std::int64_t prev_page = 0;  // 0 = none
  std::int64_t next_page = 0;
  bool degraded = false;
};

// A mid-term segment of a scope as stored (its summary and keywords are
// memory content), with its heat computed at the time of the read.
struct SegmentInfo {
  std::int64_t id = 0;
  std::string summary;
  std::vector<std::string> keywords;
  std::int64_t pages = 0;
  std::int64_t interaction = 0;  // the length part of heat
  std::int64_t visits = 0;
  TimeMs last_access = 0;
  TimeMs created_at = 0;
  double recency = 0;  // exp(-hours since last access / tau), the recency part of heat
  double heat = 0;     // visits + interaction + recency
  bool archived = false;
};

struct ReceiptCompaction {
  std::int64_t receipts_removed = 0;
  std::int64_t day_rows = 0;  // per-day summary rows written or updated
  TimeMs cutoff = 0;          // receipts before this were compacted
};

}  // namespace engram
