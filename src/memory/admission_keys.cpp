// Idempotent admission: the keys of Engine::AddTurns (AdmitOptions), kept in
// `turn_requests` with a fingerprint of the batch and the seqs it admitted.
#include <xxhash.h>

#include "memory/stm.hpp"

namespace engram::memory {

namespace {

void Append(std::string& out, const std::string& field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

}  // namespace

Status ValidateIdempotencyKey(const std::string& key) {
  if (key.size() > 255) return Status::InvalidArgument("idempotency_key: at most 255 bytes");
  for (unsigned char c : key) {
    if (c < 0x20 || c == 0x7f) return Status::InvalidArgument("idempotency_key: control characters are not allowed");
  }
  return Status::Ok();
}

std::uint64_t TurnsFingerprint(const std::vector<TurnInput>& turns) {
  std::string all;
  for (const auto& t : turns) {
    for (const std::string* f : {&t.user_text, &t.assistant_text, &t.metadata, &t.source_ref, &t.user_name,
                                 &t.assistant_name, &t.user_source_ref, &t.assistant_source_ref}) {
      Append(all, *f);
    }
    Append(all, t.event_time ? std::to_string(*t.event_time) : std::string("-"));
  }
  return XXH3_64bits(all.data(), all.size());
}

Result<std::optional<std::vector<AdmitResult>>> FindAdmission(sql::Db* db, std::int64_t scope_id,
                                                              const std::string& key, std::uint64_t fingerprint,
                                                              TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT fingerprint, first_seq, turns FROM turn_requests "
                                      "WHERE scope_id = ? AND idempotency_key = ? AND created_at > ?"));
  st->Bind(1, scope_id).Bind(2, key).Bind(3, now - kAdmissionKeyTtlMs);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) {
    st->Reset();
    return std::optional<std::vector<AdmitResult>>();
  }
  const auto stored = static_cast<std::uint64_t>(st->Int(0));
  const std::int64_t first_seq = st->Int(1), count = st->Int(2);
  st->Reset();
  if (stored != fingerprint) {
    return Status::AlreadyExists("idempotency_key: already used for other turns in this scope");
  }
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * turns,
                          db->Prepare("SELECT id, seq FROM turns WHERE scope_id = ? AND seq >= ? AND seq < ? "
                                      "ORDER BY seq"));
  turns->Bind(1, scope_id).Bind(2, first_seq).Bind(3, first_seq + count);
  std::vector<AdmitResult> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool r, turns->Step());
    if (!r) break;
    out.push_back(AdmitResult{turns->Int(0), turns->Int(1), false, true});
  }
  turns->Reset();
  return std::optional<std::vector<AdmitResult>>(std::move(out));
}

Status RecordAdmission(sql::Db* db, std::int64_t scope_id, const std::string& key, std::uint64_t fingerprint,
                       std::int64_t first_seq, std::int64_t count, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * prune,
                          db->Prepare("DELETE FROM turn_requests WHERE scope_id = ? AND created_at <= ?"));
  ENGRAM_RETURN_IF_ERROR(prune->Bind(1, scope_id).Bind(2, now - kAdmissionKeyTtlMs).Run());
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT OR REPLACE INTO turn_requests(scope_id, idempotency_key, fingerprint, first_seq, turns, "
                  "created_at) VALUES(?, ?, ?, ?, ?, ?)"));
  return st->Bind(1, scope_id)
      .Bind(2, key)
      .Bind(3, static_cast<std::int64_t>(fingerprint))
      .Bind(4, first_seq)
      .Bind(5, count)
      .Bind(6, now)
      .Run();
}

}  // namespace engram::memory
