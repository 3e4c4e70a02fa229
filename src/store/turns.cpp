#include "store/turns.hpp"

#include "store/schema.hpp"

namespace engram::store {

namespace {

constexpr const char* kTurnCols =
    "SELECT t.id, t.seq, t.user_text, t.assistant_text, t.event_time, t.ingest_time, t.metadata, "
    "t.source_ref, t.user_name, t.assistant_name, t.page_id, s.archived_at, t.user_source_ref, "
    "t.assistant_source_ref "
    "FROM turns t LEFT JOIN pages p ON p.id = t.page_id AND p.tenant = t.tenant "
    "LEFT JOIN segments s ON s.id = p.segment_id AND s.tenant = p.tenant ";

Turn TurnFrom(sql::Stmt* st) {
  Turn t;
  t.id = st->Int(0);
  t.seq = st->Int(1);
  t.user_text = st->Text(2);
  t.assistant_text = st->Text(3);
  t.event_time = st->Int(4);
  t.ingest_time = st->Int(5);
  t.metadata = st->Text(6);
  t.source_ref = st->Text(7);
  t.user_name = st->Text(8);
  t.assistant_name = st->Text(9);
  t.page_id = st->IsNull(10) ? 0 : st->Int(10);
  t.tier = t.page_id == 0 ? Tier::kStm : (st->IsNull(11) ? Tier::kMtm : Tier::kArchive);
  t.user_source_ref = st->Text(12);
  t.assistant_source_ref = st->Text(13);
  return t;
}

Result<std::vector<Turn>> Collect(sql::Stmt* st) {
  std::vector<Turn> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back(TurnFrom(st));
  }
  st->Reset();
  return out;
}

}  // namespace

Result<SeqSlot> TakeTurnSeq(sql::Db* db, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * up,
      db->Prepare("UPDATE scopes SET next_seq = next_seq + 1, stm_count = stm_count + 1 "
                  "WHERE id = ?1 RETURNING next_seq - 1, stm_count"));
  up->Bind(1, scope_id);
  ENGRAM_ASSIGN_OR_RETURN(bool got, up->Step());
  if (!got) {
    up->Reset();
    return Status::Internal("scope row missing");
  }
  SeqSlot slot{up->Int(0), up->Int(1)};
  up->Reset();
  return slot;
}

Result<std::int64_t> InsertTurn(sql::Db* db, std::int64_t scope_id, std::int64_t seq, const TurnInput& turn,
                                TimeMs event_time, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * ins,
      db->Prepare("INSERT INTO turns(scope_id, seq, user_text, assistant_text, user_name, "
                  "assistant_name, event_time, ingest_time, metadata, source_ref, user_source_ref, "
                  "assistant_source_ref, tenant) VALUES(?,?,?,?,?,?,?,?,?,?,?,?," +
                  ScopeTenantSql(1) + ") RETURNING id"));
  ins->Bind(1, scope_id)
      .Bind(2, seq)
      .Bind(3, turn.user_text)
      .Bind(4, turn.assistant_text)
      .Bind(5, turn.user_name)
      .Bind(6, turn.assistant_name)
      .Bind(7, event_time)
      .Bind(8, now)
      .Bind(9, turn.metadata)
      .Bind(10, turn.source_ref)
      .Bind(11, turn.user_source_ref)
      .Bind(12, turn.assistant_source_ref);
  ENGRAM_ASSIGN_OR_RETURN(bool row, ins->Step());
  const std::int64_t id = row ? ins->Int(0) : 0;
  ins->Reset();
  if (!row) return Status::Internal("turn insert returned no id");
  return id;
}

Result<std::vector<Turn>> LoadStmTurns(sql::Db* db, std::int64_t scope_id, std::int64_t limit) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(std::string(kTurnCols) + "WHERE t.scope_id = ?1 AND t.page_id IS NULL ORDER BY t.seq LIMIT ?2"));
  st->Bind(1, scope_id).Bind(2, limit);
  return Collect(st);
}

Result<std::vector<Turn>> LoadNewestStmTurns(sql::Db* db, std::int64_t scope_id, std::int64_t limit) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(std::string(kTurnCols) +
                  "WHERE t.scope_id = ?1 AND t.page_id IS NULL ORDER BY t.seq DESC LIMIT ?2"));
  st->Bind(1, scope_id).Bind(2, limit);
  return Collect(st);
}

Result<std::vector<Turn>> LoadTurnsAfter(sql::Db* db, std::int64_t scope_id, std::int64_t after_seq,
                                         std::int64_t limit) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(std::string(kTurnCols) + "WHERE t.scope_id = ?1 AND t.seq > ?2 ORDER BY t.seq LIMIT ?3"));
  st->Bind(1, scope_id).Bind(2, after_seq).Bind(3, limit);
  return Collect(st);
}

Result<Turn> LoadTurnById(sql::Db* db, std::int64_t turn_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(std::string(kTurnCols) + "WHERE t.id = ?1"));
  st->Bind(1, turn_id);
  ENGRAM_ASSIGN_OR_RETURN(auto v, Collect(st));
  if (v.empty()) return Status::NotFound("turn " + std::to_string(turn_id));
  return v.front();
}

}  // namespace engram::store
