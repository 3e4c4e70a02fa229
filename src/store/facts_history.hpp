// The fact history repository: every change of a memory (fact_history, one
// event per version written, deleted or purged; a purge erases the texts),
// and the idempotency records of memory adds (fact_requests: the outcome of
// the first request with a key, ids and events only, per exact scope).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "store/db.hpp"
#include "store/facts.hpp"

namespace engram::store {

// One fact_history row.
struct FactHistoryRow {
  std::int64_t scope_id = 0;
  std::string memory_id;
  std::int64_t fact_id = 0;  // the facts row the event produced or changed
  std::int64_t version = 1;
  std::string event;         // ADD, UPDATE, SUPERSEDE, DELETE, PURGE
  std::optional<std::string> old_text, new_text;  // absent when none or purged
  std::string actor, role;
  TimeMs at = 0;
  std::string op_id;         // the operation's run id
};

// Appends an event. REQUIRES: inside a write transaction.
Status InsertFactHistory(sql::Db* db, const FactHistoryRow& row);

// The events of a memory, oldest first (op_id is not read).
Result<std::vector<FactHistoryRow>> ListFactHistory(sql::Db* db, const std::string& memory_id);

// The recorded outcome (JSON array of {id, event, version}) of the add with
// `key` in the exact scope (scope row `row`, memory ids `ids`); nullopt when
// the key is new.
Result<std::optional<std::string>> FindFactRequest(sql::Db* db, const Scope& row, const FactIds& ids,
                                                   const std::string& key);

// Records the outcome of the add with `key`; fails when the key exists.
// REQUIRES: inside the add's write transaction.
Status InsertFactRequest(sql::Db* db, std::int64_t scope_id, const FactIds& ids, const std::string& key,
                         const std::string& events, TimeMs now);

}  // namespace engram::store
