// Short-term memory: admission into the immutable turn log, and reading STM.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/time.hpp"
#include "engram/result.hpp"
#include "engram/types.hpp"
#include "memory/config.hpp"
#include "memory/scope_store.hpp"
#include "store/sqlite.hpp"

namespace engram::memory {

// Validates a turn for admission (texts UTF-8, at least one non-empty,
// metadata a JSON object or "", sizes bounded). Message names the field.
Status ValidateTurn(const TurnInput& turn);

// Appends one turn to the log of `scope` (row id scope_id), indexes it, writes
// its admission receipt and makes a promotion job pending when STM is over
// capacity. REQUIRES: inside a write transaction; turn validated.
Result<AdmitResult> AdmitTurn(sql::Db* db, const ScopeRow& scope, const TurnInput& turn,
                              TimeMs now, const MemoryConfig& config, const std::string& run_id);

// Idempotent admission (Engine::AddTurns with AdmitOptions): a key is 1..255
// bytes of printable UTF-8 ("" = none).
Status ValidateIdempotencyKey(const std::string& key);
// A fingerprint of fields, in order (each one length-prefixed, so that
// {"ab", "c"} and {"a", "bc"} differ).
std::uint64_t FieldsFingerprint(const std::vector<std::string>& fields);
// A fingerprint of a batch's content (every field, in order).
std::uint64_t TurnsFingerprint(const std::vector<TurnInput>& turns);
// The first admission under `key` in the scope, when remembered (keys older
// than kAdmissionKeyTtlMs are forgotten): its turns, replayed = true.
// AlreadyExists when the key was used for other turns. REQUIRES: inside the
// admission's write transaction.
inline constexpr std::int64_t kAdmissionKeyTtlMs = 24LL * 3600 * 1000;
// The time a kept key is recorded at: never older than the TTL.
inline constexpr TimeMs kKeptKeyTime = kMaxTimeMs;
Result<std::optional<std::vector<AdmitResult>>> FindAdmission(sql::Db* db, std::int64_t scope_id,
                                                              const std::string& key, std::uint64_t fingerprint,
                                                              TimeMs now);
// Remembers an admission (seqs first_seq .. first_seq + count - 1) under `key`;
// a kept key never ages out (it is recorded at kKeptKeyTime).
Status RecordAdmission(sql::Db* db, std::int64_t scope_id, const std::string& key, std::uint64_t fingerprint,
                       std::int64_t first_seq, std::int64_t count, TimeMs now, bool keep);

// Turns still in STM, oldest first (at most `limit`).
Result<std::vector<Turn>> LoadStm(sql::Db* db, std::int64_t scope_id,
                                  std::int64_t limit = std::numeric_limits<std::int64_t>::max());
// The newest `limit` turns in STM, oldest first.
Result<std::vector<Turn>> LoadStmNewest(sql::Db* db, std::int64_t scope_id, std::int64_t limit);
// Turns of a scope by admission order, after `after_seq`, at most `limit`.
Result<std::vector<Turn>> LoadTurns(sql::Db* db, std::int64_t scope_id, std::int64_t after_seq,
                                    int limit);
// Turns by id (any order of ids; missing ids are skipped).
Result<Turn> LoadTurn(sql::Db* db, std::int64_t turn_id);

// "Caroline: text\nMelanie: text" with default names User/Assistant;
// an empty side is left out.
std::string RenderExchange(const Turn& t);
std::string RenderExchange(const std::string& user_name, const std::string& user_text,
                           const std::string& assistant_name, const std::string& assistant_text);

}  // namespace engram::memory
