// Idempotent admission: the keys of Engine::AddTurns (AdmitOptions), kept in
// `turn_requests` with a fingerprint of the batch and the seqs it admitted.
#include <xxhash.h>

#include "memory/stm.hpp"
#include "store/turn_requests.hpp"

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

std::uint64_t FieldsFingerprint(const std::vector<std::string>& fields) {
  std::string all;
  for (const auto& f : fields) Append(all, f);
  return XXH3_64bits(all.data(), all.size());
}

std::uint64_t TurnsFingerprint(const std::vector<TurnInput>& turns) {
  std::vector<std::string> fields;
  fields.reserve(turns.size() * 9);
  for (const auto& t : turns) {
    for (const std::string* f : {&t.user_text, &t.assistant_text, &t.metadata, &t.source_ref, &t.user_name,
                                 &t.assistant_name, &t.user_source_ref, &t.assistant_source_ref}) {
      fields.push_back(*f);
    }
    fields.push_back(t.event_time ? std::to_string(*t.event_time) : std::string("-"));
  }
  return FieldsFingerprint(fields);
}

Result<std::optional<std::vector<AdmitResult>>> FindAdmission(sql::Db* db, std::int64_t scope_id,
                                                              const std::string& key, std::uint64_t fingerprint,
                                                              TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(std::optional<store::TurnRequestRow> request,
                          store::FindTurnRequest(db, scope_id, key, now - kAdmissionKeyTtlMs));
  if (!request) return std::optional<std::vector<AdmitResult>>();
  if (request->fingerprint != fingerprint) {
    return Status::AlreadyExists("idempotency_key: already used for other turns in this scope");
  }
  ENGRAM_ASSIGN_OR_RETURN(std::vector<store::AdmittedTurn> turns,
                          store::ListAdmittedTurns(db, scope_id, request->first_seq, request->turns));
  std::vector<AdmitResult> out;
  out.reserve(turns.size());
  for (const auto& t : turns) out.push_back(AdmitResult{t.id, t.seq, false, true});
  return std::optional<std::vector<AdmitResult>>(std::move(out));
}

Status RecordAdmission(sql::Db* db, std::int64_t scope_id, const std::string& key, std::uint64_t fingerprint,
                       std::int64_t first_seq, std::int64_t count, TimeMs now, bool keep) {
  ENGRAM_RETURN_IF_ERROR(store::PruneTurnRequests(db, scope_id, now - kAdmissionKeyTtlMs));
  return store::PutTurnRequest(db, scope_id, key, store::TurnRequestRow{fingerprint, first_seq, count},
                               keep ? kKeptKeyTime : now);
}

}  // namespace engram::memory
