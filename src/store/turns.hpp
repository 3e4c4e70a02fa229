// The turn log repository: the immutable log of admitted turns, per scope in
// sequence order. A turn is in STM while it has no page (page_id NULL); its
// tier otherwise follows its page's segment (live: MTM, archived: archive).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/db.hpp"

namespace engram::store {

// Takes the scope's next sequence number and counts one more STM turn:
// returns {seq, turns in STM now}. REQUIRES: inside a write transaction.
struct SeqSlot {
  std::int64_t seq = 0;
  std::int64_t stm_count = 0;
};
Result<SeqSlot> TakeTurnSeq(sql::Db* db, std::int64_t scope_id);

// Appends a turn and returns its id. REQUIRES: inside a write transaction.
Result<std::int64_t> InsertTurn(sql::Db* db, std::int64_t scope_id, std::int64_t seq, const TurnInput& turn,
                                TimeMs event_time, TimeMs now);

// Turns still in STM, oldest first (at most `limit`).
Result<std::vector<Turn>> LoadStmTurns(sql::Db* db, std::int64_t scope_id,
                                       std::int64_t limit = std::numeric_limits<std::int64_t>::max());
// The newest `limit` turns in STM, newest first.
Result<std::vector<Turn>> LoadNewestStmTurns(sql::Db* db, std::int64_t scope_id, std::int64_t limit);
// Turns of a scope by admission order, after `after_seq`, at most `limit`.
Result<std::vector<Turn>> LoadTurnsAfter(sql::Db* db, std::int64_t scope_id, std::int64_t after_seq,
                                         std::int64_t limit);
// One turn by id; NotFound when absent.
Result<Turn> LoadTurnById(sql::Db* db, std::int64_t turn_id);

}  // namespace engram::store
