// The engine's inspection reads: the counts of `engram stats` (Engine::GetStats)
// and the rows of `engram export` (Engine::Export) that no tier reads for
// itself. Callers wrap them in one read transaction (sql::ReadTxn) so that the
// counts and rows agree. The scans call a sink per row while the statement is
// open: a sink must not use the same connection.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/db.hpp"
#include "store/facts.hpp"

namespace engram::store {

// What a scope (or the whole store) holds, by tier. Jobs are counted by
// store::CountJobs (store/jobs.hpp).
struct ContentCounts {
  std::int64_t turns = 0;           // every admitted turn
  std::int64_t stm_turns = 0;       // turns without a page
  std::int64_t mtm_pages = 0;       // pages of live segments
  std::int64_t archived_pages = 0;  // pages of archived segments
  std::int64_t mtm_segments = 0;
  std::int64_t archived_segments = 0;
  std::int64_t user_facts = 0;       // live facts of kind "user"
  std::int64_t assistant_facts = 0;  // live facts of kind "assistant"
  std::int64_t profile_slots = 0;
  std::int64_t degraded_items = 0;  // degraded pages, live facts and profile slots
};
// The counts of one scope row, or of every scope when scope_id == 0.
Result<ContentCounts> CountContents(sql::Db* db, std::int64_t scope_id);

// The counts of a tenant's scopes, of one user's when `user` is not empty
// and of one assistant's when `assistant` is not empty, with how many scopes
// that is and their open and failed jobs: one statement, however many scopes
// (Engine::GetScopeSetStats).
struct ScopeSetCounts {
  ContentCounts contents;
  std::int64_t scopes = 0;
  std::int64_t pending_jobs = 0;  // pending or leased
  std::int64_t failed_jobs = 0;
};
Result<ScopeSetCounts> CountScopeSet(sql::Db* db, const std::string& tenant,
                                     const std::string& user, const std::string& assistant);

// What `tenant` holds (Engine::GetTenantUsage): turns, live memories of
// kinds memory/procedural, and the bytes of their texts. Goes through the
// tenant's scope rows, so it uses the per-scope indexes of both backends.
Result<TenantUsage> CountTenantUsage(sql::Db* db, const std::string& tenant);

// A page as the export writes it.
struct ExportPageRow {
  std::int64_t id = 0;
  std::int64_t turn_id = 0;
  std::int64_t segment_id = 0;
  std::optional<std::int64_t> prev_page;  // nullopt: NULL (first page of the chain)
  std::optional<std::int64_t> next_page;  // nullopt: NULL (newest page)
  std::string chain_summary;
  std::string keywords;  // JSON array of strings
  bool analyzed = false;
};
// Every page of the scope, by id.
Status ScanExportPages(sql::Db* db, std::int64_t scope_id,
                       const std::function<void(const ExportPageRow&)>& sink);

// Every live fact of the scope, all kinds (consolidated user/assistant facts
// and the memories of the fact API), expired ones included (FactRow's
// item.expired says so as of `now`), by id.
Status ScanExportFacts(sql::Db* db, std::int64_t scope_id, TimeMs now,
                       const std::function<void(const FactRow&)>& sink);

}  // namespace engram::store
