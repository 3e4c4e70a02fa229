// The mid-term memory repository: segments (topics, with heat counters and a
// centroid), pages (one per promoted turn, linked into the dialogue chain),
// the scope's term statistics, and profile slots.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/db.hpp"

namespace engram::store {

struct SegmentRow {
  std::int64_t id = 0;
  std::string summary;
  std::vector<std::string> keywords;
  std::vector<float> embedding;  // normalised centroid of its pages
  std::vector<float> emb_sum;    // sum of page embeddings
  std::int64_t page_count = 0;
  std::int64_t interaction = 0;
  std::int64_t visits = 0;
  TimeMs last_access = 0;
  TimeMs created_at = 0;
  std::int64_t version = 1;
  bool archived = false;
};

// The scope's segments by id (live only unless include_archived).
Result<std::vector<SegmentRow>> LoadSegmentRows(sql::Db* db, std::int64_t scope_id, bool include_archived);
// A new segment holding `added` pages; its id. REQUIRES: inside a write transaction.
Result<std::int64_t> InsertSegment(sql::Db* db, std::int64_t scope_id, const SegmentRow& row, std::int64_t added,
                                   TimeMs now, bool degraded);
// Rewrites a live segment that gained `added` pages, if it is still at
// row.version (else Aborted: changed concurrently). REQUIRES: inside a write transaction.
Status UpdateSegment(sql::Db* db, const SegmentRow& row, std::int64_t added, TimeMs now, bool degraded);
// Moves a live segment to the archive. REQUIRES: inside a write transaction.
Status ArchiveSegment(sql::Db* db, std::int64_t segment_id, TimeMs now);
// Adds retrieval hits to a live segment: its scope id, or nullopt when the
// segment is gone or archived. REQUIRES: inside a write transaction.
Result<std::optional<std::int64_t>> AddSegmentVisits(sql::Db* db, std::int64_t segment_id, std::int64_t hits,
                                                     TimeMs last_access);
// Resets a segment's heat counters after consolidation: its new version.
// REQUIRES: inside a write transaction.
Result<std::int64_t> ResetSegmentCounters(sql::Db* db, std::int64_t segment_id);

// The tail of the dialogue chain: a page's turn, vector and segment.
struct ChainPage {
  std::int64_t turn_id = 0;
  std::vector<float> embedding;
  std::int64_t segment_id = 0;
};
Result<std::optional<ChainPage>> LoadChainPage(sql::Db* db, std::int64_t page_id);

// True when the turn exists and is still in STM.
Result<bool> TurnInStm(sql::Db* db, std::int64_t turn_id);

struct NewPage {
  std::int64_t scope_id = 0;
  std::int64_t turn_id = 0;
  std::int64_t segment_id = 0;
  std::int64_t prev_page = 0;  // 0: starts a chain
  std::string chain_summary;
  std::vector<std::string> keywords;
  std::vector<float> embedding;
  TimeMs created_at = 0;
  bool degraded = false;
};
// Inserts the page, links it after prev_page and moves its turn out of STM
// (Aborted when the turn left STM concurrently): the page id.
// REQUIRES: inside a write transaction.
Result<std::int64_t> InsertPage(sql::Db* db, const NewPage& page);
// Moves the scope's chain tail and takes `promoted` turns off its STM count.
// REQUIRES: inside a write transaction.
Status MoveChain(sql::Db* db, std::int64_t scope_id, std::int64_t page_id, const std::string& summary,
                 std::int64_t promoted);

// Pages of a scope (the document count of its term statistics).
Result<std::int64_t> CountPages(sql::Db* db, std::int64_t scope_id);
// Document frequency of each term over the scope's pages (0 when unseen), in
// the order given.
Result<std::vector<std::int64_t>> TermFrequencies(sql::Db* db, std::int64_t scope_id,
                                                  const std::vector<std::string>& terms);
// Counts one more page for each of the distinct terms. REQUIRES: inside a write transaction.
Status AddScopeTerms(sql::Db* db, std::int64_t scope_id, const std::vector<std::string>& distinct_terms);

// Pages of a segment not yet consolidated, oldest first, with their turn.
struct UnanalysedPage {
  std::int64_t page_id = 0;
  std::string user_text, assistant_text, user_name, assistant_name;
  TimeMs event_time = 0;
};
Result<std::vector<UnanalysedPage>> LoadUnanalysedPages(sql::Db* db, std::int64_t segment_id, int limit);
// Marks a page consolidated; Aborted when it already was. REQUIRES: inside a write transaction.
Status MarkPageAnalysed(sql::Db* db, std::int64_t page_id);

// Profile slots (engram/types.hpp ProfileSlot: evidence_pages are page ids).
Result<std::vector<ProfileSlot>> LoadProfileSlots(sql::Db* db, std::int64_t scope_id);
// Writes a slot (new, or a new version of it): {the slot's row id, version}.
// REQUIRES: inside a write transaction.
struct SlotVersion {
  std::int64_t id = 0;
  std::int64_t version = 0;
};
Result<SlotVersion> UpsertProfileSlot(sql::Db* db, std::int64_t scope_id, const ProfileSlot& slot, bool degraded);

// The live facts of a dialogue's fact sections (kDialogueFactRows and
// kUserFactRows of store/facts.hpp: consolidated facts, the memories of the
// dialogue's own scope and those of the user's row `user_scope_id`, 0:
// none), each with its kind there (kDialogueFactKind); one kind, or both
// when empty; not those whose expiry is `now` or earlier.
Result<std::vector<Fact>> LoadLongTermFacts(sql::Db* db, std::int64_t scope_id, std::int64_t user_scope_id,
                                            const std::string& kind, TimeMs now);

}  // namespace engram::store
