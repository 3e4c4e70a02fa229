// The turn-requests repository: idempotency keys of turn admissions
// (memory/stm.hpp decides when a key is replayed or refused). A row records,
// per scope and key, a fingerprint of the admitted batch, the seqs it was
// given (first_seq .. first_seq + turns - 1) and when. No text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/db.hpp"

namespace engram::store {

struct TurnRequestRow {
  std::uint64_t fingerprint = 0;
  std::int64_t first_seq = 0;
  std::int64_t turns = 0;
};

// The request recorded under `key` in the scope after `after` (created_at >
// after); nullopt when there is none.
Result<std::optional<TurnRequestRow>> FindTurnRequest(sql::Db* db, std::int64_t scope_id, const std::string& key,
                                                      TimeMs after);

// Forgets the scope's requests recorded at or before `cutoff`.
// REQUIRES: inside a write transaction.
Status PruneTurnRequests(sql::Db* db, std::int64_t scope_id, TimeMs cutoff);

// Records a request under `key`, replacing an earlier one of the same key.
// REQUIRES: inside a write transaction.
Status PutTurnRequest(sql::Db* db, std::int64_t scope_id, const std::string& key, const TurnRequestRow& request,
                      TimeMs now);

// The turns (id, seq) a recorded request admitted that still exist, in seq
// order: seqs first_seq .. first_seq + count - 1 of the scope.
struct AdmittedTurn {
  std::int64_t id = 0;
  std::int64_t seq = 0;
};
Result<std::vector<AdmittedTurn>> ListAdmittedTurns(sql::Db* db, std::int64_t scope_id, std::int64_t first_seq,
                                                    std::int64_t count);

}  // namespace engram::store
