// The reads of a retrieval snapshot (retrieval/scope_index.*): everything an
// in-memory snapshot of one scope holds, read in the caller's read
// transaction so that the pieces agree (one data_version). Pages are read in
// turn order; segments and facts in id order. The scans call a sink per row
// while the statement is open: a sink must not use the same connection.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/db.hpp"

namespace engram::store {

// A segment's centroid and whether it is archived.
struct SegmentVectorRow {
  std::int64_t id = 0;
  std::vector<float> embedding;
  bool archived = false;
};
// Every segment of the scope (live and archived), by id.
Status ScanSegmentVectors(sql::Db* db, std::int64_t scope_id,
                          const std::function<void(SegmentVectorRow&)>& sink);

// A page's ids and links (0 = none; the next page is set when the following
// page arrives).
struct PageLinkRow {
  std::int64_t page_id = 0;
  std::int64_t turn_id = 0;
  std::int64_t segment_id = 0;
  std::int64_t prev_page = 0;
  std::int64_t next_page = 0;
};
// The page of the scope's turn at `seq` (page_id 0 when the turn has no page
// or there is no such turn): one indexed lookup.
Result<PageLinkRow> PageOfTurnAt(sql::Db* db, std::int64_t scope_id, std::int64_t seq);

// A page with its vector, chain summary and the texts of its turn.
struct SnapshotPageRow {
  PageLinkRow link;
  std::vector<float> embedding;
  std::string chain_summary;
  std::int64_t seq = 0;
  TimeMs event_time = 0;
  std::string user_name, user_text, assistant_name, assistant_text;
  std::string source_ref, user_source_ref, assistant_source_ref;
};
// The pages of the scope's turns after turn `after_seq` (all when 0), in turn
// order (walks UNIQUE(scope_id, seq)); `embedding` left empty unless
// `with_embedding`.
Status ScanSnapshotPages(sql::Db* db, std::int64_t scope_id, std::int64_t after_seq, bool with_embedding,
                         const std::function<void(SnapshotPageRow&)>& sink);

// A live fact of the dialogue's fact sections (store/facts.hpp
// kDialogueFactRows and kUserFactRows: consolidated, or a memory of the
// dialogue's own scope or of the user's).
struct SnapshotFactRow {
  std::int64_t id = 0;
  std::string kind;  // its section: "user" or "assistant" (kDialogueFactKind)
  std::vector<float> embedding;
  std::string text;
  std::int64_t version = 1;
  TimeMs event_time = 0;
  std::string source_pages;  // JSON array of page ids
  std::optional<TimeMs> expires_at;
};
// The live facts of the scope's fact sections, from its own row and from
// the row of the user's own memories (`user_scope_id`, 0: none), expired
// ones included (expiry is checked at query time), by id.
Status ScanSnapshotFacts(sql::Db* db, std::int64_t scope_id, std::int64_t user_scope_id,
                         const std::function<void(SnapshotFactRow&)>& sink);

}  // namespace engram::store
