#include "store/snapshot_reads.hpp"

#include "store/facts.hpp"

namespace engram::store {

namespace {

// A nullable page link: NULL is 0 (no page).
std::int64_t LinkAt(const sql::Stmt* st, int col) { return st->IsNull(col) ? 0 : st->Int(col); }

}  // namespace

Status ScanSegmentVectors(sql::Db* db, std::int64_t scope_id,
                          const std::function<void(SegmentVectorRow&)>& sink) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(
          "SELECT id, embedding, archived_at FROM segments WHERE scope_id = ? ORDER BY id"));
  st->Bind(1, scope_id);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    SegmentVectorRow r;
    r.id = st->Int(0);
    r.embedding = st->Floats(1);
    r.archived = !st->IsNull(2);
    sink(r);
  }
  st->Reset();
  return Status::Ok();
}

Result<PageLinkRow> PageOfTurnAt(sql::Db* db, std::int64_t scope_id, std::int64_t seq) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT p.id, p.turn_id, p.segment_id, p.prev_page, p.next_page FROM turns t "
                  "JOIN pages p ON p.id = t.page_id AND p.tenant = t.tenant WHERE t.scope_id = ? AND t.seq = ?"));
  st->Bind(1, scope_id).Bind(2, seq);
  PageLinkRow out;
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (row) out = {st->Int(0), st->Int(1), st->Int(2), LinkAt(st, 3), LinkAt(st, 4)};
  st->Reset();
  return out;
}

Status ScanSnapshotPages(sql::Db* db, std::int64_t scope_id, std::int64_t after_seq, bool with_embedding,
                         const std::function<void(SnapshotPageRow&)>& sink) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(
          std::string("SELECT p.id, p.turn_id, p.segment_id, p.prev_page, p.next_page, ") +
          (with_embedding ? "p.embedding, " : "NULL, ") +
          "p.chain_summary, t.seq, t.event_time, t.user_name, t.user_text, "
          "t.assistant_name, t.assistant_text, t.source_ref, t.user_source_ref, "
          "t.assistant_source_ref FROM turns t " +
          // (SQLite: the page's columns from pages_snapshot, not from its
          // row, which holds the embedding; see schema.cpp.)
          (db->dialect() == sql::Dialect::kSqlite ? "JOIN pages p INDEXED BY pages_snapshot ON p.turn_id = t.id "
                                                   : "JOIN pages p ON p.id = t.page_id AND p.tenant = t.tenant ") +
          "WHERE t.scope_id = ? AND t.seq > ? ORDER BY t.seq"));  // walks UNIQUE(scope_id, seq)
  st->Bind(1, scope_id).Bind(2, after_seq);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    SnapshotPageRow r;
    r.link = {st->Int(0), st->Int(1), st->Int(2), LinkAt(st, 3), LinkAt(st, 4)};
    if (with_embedding) r.embedding = st->Floats(5);
    r.chain_summary = st->Text(6);
    r.seq = st->Int(7);
    r.event_time = st->Int(8);
    r.user_name = st->Text(9);
    r.user_text = st->Text(10);
    r.assistant_name = st->Text(11);
    r.assistant_text = st->Text(12);
    r.source_ref = st->Text(13);
    r.user_source_ref = st->Text(14);
    r.assistant_source_ref = st->Text(15);
    sink(r);
  }
  st->Reset();
  return Status::Ok();
}

Status ScanSnapshotFacts(sql::Db* db, std::int64_t scope_id, std::int64_t user_scope_id,
                         const std::function<void(SnapshotFactRow&)>& sink) {
  static const std::string kSql = std::string("SELECT id, ") + kDialogueFactKind +
                                  ", embedding, text, version, event_time, source_pages, expires_at "
                                  "FROM facts WHERE status = 'live' AND ((scope_id = ?1 AND " +
                                  kDialogueFactRows + ") OR (scope_id = ?2 AND " + kUserFactRows +
                                  ")) ORDER BY id";
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(kSql));
  st->Bind(1, scope_id).Bind(2, user_scope_id);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    SnapshotFactRow r;
    r.id = st->Int(0);
    r.kind = st->Text(1);
    r.embedding = st->Floats(2);
    r.text = st->Text(3);
    r.version = st->Int(4);
    r.event_time = st->Int(5);
    r.source_pages = st->Text(6);
    if (!st->IsNull(7)) r.expires_at = st->Int(7);
    sink(r);
  }
  st->Reset();
  return Status::Ok();
}

}  // namespace engram::store
