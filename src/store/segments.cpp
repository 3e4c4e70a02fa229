#include "store/segments.hpp"

#include "core/json_lists.hpp"
#include "store/facts.hpp"
#include "store/schema.hpp"

namespace engram::store {

using json_lists::IdsFromJson;
using json_lists::IdsToJson;
using json_lists::StringsFromJson;
using json_lists::StringsToJson;

namespace {

// The larger of a column and a parameter: max(a, b) is SQLite's scalar form.
std::string Greatest(sql::Db* db, const std::string& a, const std::string& b) {
  return (db->dialect() == sql::Dialect::kSqlite ? "max(" : "GREATEST(") + a + ", " + b + ")";
}

}  // namespace

Result<std::vector<SegmentRow>> LoadSegmentRows(sql::Db* db, std::int64_t scope_id, bool include_archived) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(std::string("SELECT id, summary, keywords, embedding, emb_sum, page_count, interaction, "
                              "visits, last_access, created_at, version, archived_at FROM segments "
                              "WHERE scope_id = ?1") +
                  (include_archived ? "" : " AND archived_at IS NULL") + " ORDER BY id"));
  st->Bind(1, scope_id);
  std::vector<SegmentRow> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    SegmentRow s;
    s.id = st->Int(0);
    s.summary = st->Text(1);
    s.keywords = StringsFromJson(st->Text(2));
    s.embedding = st->Floats(3);
    s.emb_sum = st->Floats(4);
    s.page_count = st->Int(5);
    s.interaction = st->Int(6);
    s.visits = st->Int(7);
    s.last_access = st->Int(8);
    s.created_at = st->Int(9);
    s.version = st->Int(10);
    s.archived = !st->IsNull(11);
    out.push_back(std::move(s));
  }
  st->Reset();
  return out;
}

Result<std::int64_t> InsertSegment(sql::Db* db, std::int64_t scope_id, const SegmentRow& row, std::int64_t added,
                                   TimeMs now, bool degraded) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO segments(scope_id, summary, keywords, embedding, emb_sum, page_count, interaction, "
                  "visits, last_access, created_at, updated_at, degraded, tenant) "
                  "VALUES(?1,?2,?3,?4,?5,?6,?6,0,?7,?7,?7,?8," + ScopeTenantSql(1) + ") RETURNING id"));
  st->Bind(1, scope_id)
      .Bind(2, row.summary)
      .Bind(3, StringsToJson(row.keywords))
      .BindFloats(4, row.embedding)
      .BindFloats(5, row.emb_sum)
      .Bind(6, added)
      .Bind(7, now)
      .Bind(8, degraded ? 1 : 0);
  ENGRAM_ASSIGN_OR_RETURN(bool got, st->Step());
  const std::int64_t id = got ? st->Int(0) : 0;
  st->Reset();
  if (!got) return Status::Internal("segment insert returned no id");
  return id;
}

Status UpdateSegment(sql::Db* db, const SegmentRow& row, std::int64_t added, TimeMs now, bool degraded) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("UPDATE segments SET summary = ?1, keywords = ?2, embedding = ?3, emb_sum = ?4, "
                  "page_count = page_count + ?5, interaction = interaction + ?5, updated_at = ?6, "
                  "version = version + 1, degraded = " + Greatest(db, "degraded", "?7") +
                  " WHERE id = ?8 AND version = ?9 AND archived_at IS NULL"));
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, row.summary)
                             .Bind(2, StringsToJson(row.keywords))
                             .BindFloats(3, row.embedding)
                             .BindFloats(4, row.emb_sum)
                             .Bind(5, added)
                             .Bind(6, now)
                             .Bind(7, degraded ? 1 : 0)
                             .Bind(8, row.id)
                             .Bind(9, row.version)
                             .Run());
  if (db->Changes() != 1) return Status::Aborted("segment changed concurrently");
  return Status::Ok();
}

Status ArchiveSegment(sql::Db* db, std::int64_t segment_id, TimeMs now) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("UPDATE segments SET archived_at = ?1, version = version + 1 WHERE id = ?2 AND archived_at IS NULL"));
  return st->Bind(1, now).Bind(2, segment_id).Run();
}

Result<std::optional<std::int64_t>> AddSegmentVisits(sql::Db* db, std::int64_t segment_id, std::int64_t hits,
                                                     TimeMs last_access) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("UPDATE segments SET visits = visits + ?1, last_access = " + Greatest(db, "last_access", "?2") +
                  " WHERE id = ?3 AND archived_at IS NULL RETURNING scope_id"));
  st->Bind(1, hits).Bind(2, last_access).Bind(3, segment_id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::optional<std::int64_t> scope;
  if (row) scope = st->Int(0);
  st->Reset();
  return scope;
}

Result<std::int64_t> ResetSegmentCounters(sql::Db* db, std::int64_t segment_id) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("UPDATE segments SET visits = 0, interaction = 0, version = version + 1 WHERE id = ?1 "
                  "RETURNING version"));
  st->Bind(1, segment_id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  const std::int64_t version = row ? st->Int(0) : 0;
  st->Reset();
  if (!row) return Status::Aborted("segment " + std::to_string(segment_id) + " removed concurrently");
  return version;
}

Result<std::optional<ChainPage>> LoadChainPage(sql::Db* db, std::int64_t page_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT turn_id, embedding, segment_id FROM pages WHERE id = ?1"));
  st->Bind(1, page_id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::optional<ChainPage> out;
  if (row) out = ChainPage{st->Int(0), st->Floats(1), st->Int(2)};
  st->Reset();
  return out;
}

Result<bool> TurnInStm(sql::Db* db, std::int64_t turn_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT count(*) FROM turns WHERE id = ?1 AND page_id IS NULL"));
  st->Bind(1, turn_id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  const bool in_stm = row && st->Int(0) == 1;
  st->Reset();
  return in_stm;
}

Result<std::int64_t> InsertPage(sql::Db* db, const NewPage& p) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * ins,
      db->Prepare("INSERT INTO pages(scope_id, turn_id, segment_id, prev_page, chain_summary, keywords, embedding, "
                  "created_at, degraded, tenant) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9," + ScopeTenantSql(1) +
                  ") RETURNING id"));
  ins->Bind(1, p.scope_id).Bind(2, p.turn_id).Bind(3, p.segment_id);
  if (p.prev_page != 0) {
    ins->Bind(4, p.prev_page);
  } else {
    ins->BindNull(4);
  }
  ins->Bind(5, p.chain_summary)
      .Bind(6, StringsToJson(p.keywords))
      .BindFloats(7, p.embedding)
      .Bind(8, p.created_at)
      .Bind(9, p.degraded ? 1 : 0);
  ENGRAM_ASSIGN_OR_RETURN(bool got, ins->Step());
  const std::int64_t page_id = got ? ins->Int(0) : 0;
  ins->Reset();
  if (!got) return Status::Internal("page insert returned no id");
  if (p.prev_page != 0) {
    ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * link, db->Prepare("UPDATE pages SET next_page = ?1 WHERE id = ?2"));
    ENGRAM_RETURN_IF_ERROR(link->Bind(1, page_id).Bind(2, p.prev_page).Run());
  }
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * mv,
                          db->Prepare("UPDATE turns SET page_id = ?1 WHERE id = ?2 AND page_id IS NULL"));
  ENGRAM_RETURN_IF_ERROR(mv->Bind(1, page_id).Bind(2, p.turn_id).Run());
  if (db->Changes() != 1) return Status::Aborted("turn left STM concurrently");
  return page_id;
}

Status MoveChain(sql::Db* db, std::int64_t scope_id, std::int64_t page_id, const std::string& summary,
                 std::int64_t promoted) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("UPDATE scopes SET chain_page_id = ?1, chain_summary = ?2, stm_count = stm_count - ?3 WHERE id = ?4"));
  if (page_id != 0) {
    st->Bind(1, page_id);
  } else {
    st->BindNull(1);
  }
  return st->Bind(2, summary).Bind(3, promoted).Bind(4, scope_id).Run();
}

Result<std::int64_t> CountPages(sql::Db* db, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("SELECT count(*) FROM pages WHERE scope_id = ?1"));
  st->Bind(1, scope_id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  const std::int64_t n = row ? st->Int(0) : 0;
  st->Reset();
  return n;
}

Result<std::vector<std::int64_t>> TermFrequencies(sql::Db* db, std::int64_t scope_id,
                                                  const std::vector<std::string>& terms) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT df FROM scope_terms WHERE tenant = " + ScopeTenantSql(1) +
                                      " AND scope_id = ?1 AND term = ?2"));
  std::vector<std::int64_t> out;
  out.reserve(terms.size());
  for (const auto& term : terms) {
    st->Bind(1, scope_id).Bind(2, term);
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    out.push_back(row ? st->Int(0) : 0);
    st->Reset();
  }
  return out;
}

Status AddScopeTerms(sql::Db* db, std::int64_t scope_id, const std::vector<std::string>& distinct_terms) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO scope_terms(scope_id, term, df, tenant) VALUES(?1, ?2, 1, " + ScopeTenantSql(1) +
                  ") ON CONFLICT" + TenantKey(db, "scope_id, term") + " DO UPDATE SET df = scope_terms.df + 1"));
  for (const auto& t : distinct_terms) ENGRAM_RETURN_IF_ERROR(st->Bind(1, scope_id).Bind(2, t).Run());
  return Status::Ok();
}

Result<std::vector<UnanalysedPage>> LoadUnanalysedPages(sql::Db* db, std::int64_t segment_id, int limit) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT p.id, t.user_text, t.assistant_text, t.user_name, t.assistant_name, t.event_time "
                  "FROM pages p JOIN turns t ON t.id = p.turn_id AND t.tenant = p.tenant "
                  "WHERE p.segment_id = ?1 AND p.analyzed = 0 "
                  "ORDER BY p.id LIMIT ?2"));
  st->Bind(1, segment_id).Bind(2, std::int64_t{limit});
  std::vector<UnanalysedPage> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back({st->Int(0), st->Text(1), st->Text(2), st->Text(3), st->Text(4), st->Int(5)});
  }
  st->Reset();
  return out;
}

Status MarkPageAnalysed(sql::Db* db, std::int64_t page_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("UPDATE pages SET analyzed = 1 WHERE id = ?1 AND analyzed = 0"));
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, page_id).Run());
  if (db->Changes() != 1) return Status::Aborted("page analysed concurrently");
  return Status::Ok();
}

Result<std::vector<ProfileSlot>> LoadProfileSlots(sql::Db* db, std::int64_t scope_id) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("SELECT dimension, value, evidence, updated_at FROM profile_slots WHERE scope_id = ?1 "
                  "ORDER BY dimension"));
  st->Bind(1, scope_id);
  std::vector<ProfileSlot> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back({st->Text(0), st->Text(1), IdsFromJson(st->Text(2)), st->Int(3)});
  }
  st->Reset();
  return out;
}

Result<SlotVersion> UpsertProfileSlot(sql::Db* db, std::int64_t scope_id, const ProfileSlot& slot, bool degraded) {
  // `rowid`: SQLite's implicit row id; the PostgreSQL table has an identity
  // column of that name, so both return the slot's stable id.
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO profile_slots(scope_id, dimension, value, evidence, updated_at, degraded, tenant) "
                  "VALUES(?1,?2,?3,?4,?5,?6," + ScopeTenantSql(1) + ") ON CONFLICT" +
                  TenantKey(db, "scope_id, dimension") + " DO UPDATE SET "
                  "value = excluded.value, evidence = excluded.evidence, updated_at = excluded.updated_at, "
                  "version = profile_slots.version + 1, degraded = excluded.degraded RETURNING rowid, version"));
  st->Bind(1, scope_id)
      .Bind(2, slot.dimension)
      .Bind(3, slot.value)
      .Bind(4, IdsToJson(slot.evidence_pages))
      .Bind(5, slot.updated_at)
      .Bind(6, degraded ? 1 : 0);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  SlotVersion out;
  if (row) out = {st->Int(0), st->Int(1)};
  st->Reset();
  if (!row) return Status::Internal("profile slot upsert returned no row");
  return out;
}

Result<std::vector<Fact>> LoadLongTermFacts(sql::Db* db, std::int64_t scope_id, std::int64_t user_scope_id,
                                            const std::string& kind, TimeMs now) {
  static const std::string kSql = std::string("SELECT id, version, ") + kDialogueFactKind +
                                  ", text, source_pages, event_time, record_time, degraded "
                                  "FROM facts WHERE status = 'live' AND (?2 = '' OR " + kDialogueFactKind +
                                  " = ?2) AND ((scope_id = ?1 AND " + kDialogueFactRows + ") OR (scope_id = ?3 AND " +
                                  kUserFactRows + ")) AND (expires_at IS NULL OR expires_at > ?4) ORDER BY id";
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(kSql));
  st->Bind(1, scope_id).Bind(2, kind).Bind(3, user_scope_id).Bind(4, now);
  std::vector<Fact> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    Fact f;
    f.id = st->Int(0);
    f.version = st->Int(1);
    f.kind = st->Text(2);
    f.text = st->Text(3);
    f.source_pages = IdsFromJson(st->Text(4));
    f.event_time = st->Int(5);
    f.record_time = st->Int(6);
    f.degraded = st->Int(7) != 0;
    out.push_back(std::move(f));
  }
  st->Reset();
  return out;
}

}  // namespace engram::store
