#include "store/turn_requests.hpp"

#include "store/schema.hpp"

namespace engram::store {

Result<std::optional<TurnRequestRow>> FindTurnRequest(sql::Db* db, std::int64_t scope_id, const std::string& key,
                                                      TimeMs after) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT fingerprint, first_seq, turns FROM turn_requests WHERE tenant = " +
                                      ScopeTenantSql(1) + " AND scope_id = ?1 AND idempotency_key = ?2 "
                                      "AND created_at > ?3"));
  st->Bind(1, scope_id).Bind(2, key).Bind(3, after);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::optional<TurnRequestRow> out;
  // The fingerprint is stored as the signed 64-bit integer of the same bits.
  if (row) out = TurnRequestRow{static_cast<std::uint64_t>(st->Int(0)), st->Int(1), st->Int(2)};
  st->Reset();
  return out;
}

Status PruneTurnRequests(sql::Db* db, std::int64_t scope_id, TimeMs cutoff) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("DELETE FROM turn_requests WHERE tenant = " + ScopeTenantSql(1) +
                                      " AND scope_id = ?1 AND created_at <= ?2"));
  return st->Bind(1, scope_id).Bind(2, cutoff).Run();
}

Status PutTurnRequest(sql::Db* db, std::int64_t scope_id, const std::string& key, const TurnRequestRow& request,
                      TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO turn_requests(scope_id, idempotency_key, fingerprint, first_seq, turns, created_at, "
                  "tenant) VALUES(?, ?, ?, ?, ?, ?, " + ScopeTenantSql(1) + ") ON CONFLICT" +
                  TenantKey(db, "scope_id, idempotency_key") + " DO UPDATE SET "
                  "fingerprint = excluded.fingerprint, first_seq = excluded.first_seq, turns = excluded.turns, "
                  "created_at = excluded.created_at"));
  return st->Bind(1, scope_id)
      .Bind(2, key)
      .Bind(3, static_cast<std::int64_t>(request.fingerprint))
      .Bind(4, request.first_seq)
      .Bind(5, request.turns)
      .Bind(6, now)
      .Run();
}

Result<std::vector<AdmittedTurn>> ListAdmittedTurns(sql::Db* db, std::int64_t scope_id, std::int64_t first_seq,
                                                    std::int64_t count) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT id, seq FROM turns WHERE scope_id = ? AND seq >= ? AND seq < ? "
                                      "ORDER BY seq"));
  st->Bind(1, scope_id).Bind(2, first_seq).Bind(3, first_seq + count);
  std::vector<AdmittedTurn> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back({st->Int(0), st->Int(1)});
  }
  st->Reset();
  return out;
}

}  // namespace engram::store
