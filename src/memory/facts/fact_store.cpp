#include "memory/facts/fact_store.hpp"

#include <cstdio>
#include <memory>
#include <random>

#include "core/text.hpp"
#include "lineage/receipts.hpp"
#include "memory/facts/fact_sql.hpp"
#include "memory/facts/fact_text.hpp"
#include "memory/scope_store.hpp"

namespace engram::memory::facts {

namespace {

constexpr std::size_t kMaxIdBytes = 128;

Status ValidateId(const std::string& v, const char* field) {
  if (v.size() > kMaxIdBytes) return Status::InvalidArgument(std::string(field) + ": longer than 128 bytes");
  if (!text::IsValidUtf8(v)) return Status::InvalidArgument(std::string(field) + ": not valid UTF-8");
  for (unsigned char c : v) {
    if (c < 0x20 || c == 0x7f) return Status::InvalidArgument(std::string(field) + ": contains a control character");
  }
  return Status::Ok();
}

std::string HashHex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// The receipt of one fact transition (content-free: ids, versions, tiers).
Status WriteReceipt(const WriteContext& c, std::int64_t fact_id, std::int64_t version, bool degraded,
                    const char* from_tier = nullptr, const char* to_tier = "lpm") {
  lineage::Receipt r;
  r.run_id = c.op_id;
  r.tenant = c.row_scope.tenant;
  r.user_scope = c.row_scope.user;
  r.assistant_scope = c.row_scope.assistant;
  r.memory_kind = "fact";
  r.memory_id = fact_id;
  r.version = version;
  r.source_version = c.source_version;
  r.from_tier = from_tier ? from_tier : c.from_tier;
  r.to_tier = to_tier;
  r.status = degraded ? "degraded" : "committed";
  r.at_utc = c.now;
  r.outcome_receipt = "facts.id=" + std::to_string(fact_id);
  return lineage::Write(c.db, r);
}

Status History(const WriteContext& c, const std::string& memory_id, std::int64_t fact_id,
               std::int64_t version, const char* event, const std::string* old_text,
               const std::string* new_text, const std::string& role) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      c.db->Prepare("INSERT INTO fact_history(scope_id, memory_id, fact_id, version, event, old_text, "
                    "new_text, actor, role, at, op_id) VALUES(?,?,?,?,?,?,?,?,?,?,?)"));
  st->Bind(1, c.scope_id).Bind(2, memory_id).Bind(3, fact_id).Bind(4, version).Bind(5, event);
  if (old_text) st->Bind(6, *old_text); else st->BindNull(6);
  if (new_text) st->Bind(7, *new_text); else st->BindNull(7);
  return st->Bind(8, c.actor).Bind(9, role).Bind(10, c.now).Bind(11, c.op_id).Run();
}

Status IndexText(const WriteContext& c, std::int64_t fact_id, const std::string& text) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * fts,
                          c.db->Prepare("INSERT INTO facts_fts(rowid, scope, terms) VALUES(?,?,?)"));
  return fts->Bind(1, fact_id).Bind(2, ScopeToken(c.scope_id)).Bind(3, LexicalDocument(text)).Run();
}

Status UnindexText(sql::Db* db, std::int64_t fact_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("DELETE FROM facts_fts WHERE rowid = ?"));
  return st->Bind(1, fact_id).Run();
}

Status LinkEntities(const WriteContext& c, std::int64_t fact_id, const std::vector<EntityRef>& refs) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * ins,
      c.db->Prepare("INSERT INTO entities(scope_id, name, type) VALUES(?,?,?) "
                    "ON CONFLICT(scope_id, name) DO NOTHING"));
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * id,
                          c.db->Prepare("SELECT id FROM entities WHERE scope_id = ? AND name = ?"));
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * link,
      c.db->Prepare("INSERT OR IGNORE INTO fact_entities(fact_id, entity_id, relation) VALUES(?,?,?)"));
  for (const auto& e : refs) {
    std::string name = NormalizeEntity(e.name);
    if (name.empty()) continue;
    ENGRAM_RETURN_IF_ERROR(ins->Bind(1, c.scope_id).Bind(2, name).Bind(3, e.type).Run());
    id->Bind(1, c.scope_id).Bind(2, name);
    ENGRAM_ASSIGN_OR_RETURN(bool row, id->Step());
    std::int64_t eid = row ? id->Int(0) : 0;
    id->Reset();
    if (eid == 0) return Status::Internal("entity row missing after insert");
    ENGRAM_RETURN_IF_ERROR(link->Bind(1, fact_id).Bind(2, eid).Bind(3, "mentions").Run());
  }
  return Status::Ok();
}

// The live row of exactly ctx.ids with this hash, if any.
Result<std::optional<FactRow>> LiveByHash(const WriteContext& c, std::uint64_t hash) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      c.db->Prepare(std::string("SELECT ") + kFactColumns +
                    " FROM facts f WHERE f.scope_id = ? AND f.user_id = ? AND f.agent_id = ? AND "
                    "f.run_id = ? AND f.norm_hash = ? AND f.status = 'live'"));
  st->Bind(1, c.scope_id).Bind(2, c.ids.user).Bind(3, c.ids.agent).Bind(4, c.ids.run)
      .Bind(5, static_cast<std::int64_t>(hash));
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::optional<FactRow> out;
  if (row) out = ReadRow(st, c.now);
  st->Reset();
  return out;
}

void RecordAdd(const WriteContext& c, std::int64_t id, const std::string& memory_id,
               std::optional<TimeMs> expires_at, const Vector& emb) {
  if (!c.changes) return;
  auto a = std::make_shared<AddedFactVec>();
  a->row = FactVecRow{id, memory_id, expires_at ? *expires_at : kNoExpiry};
  a->identity = FactIdentity{c.ids.user, c.ids.agent, c.ids.run};
  a->embedding = emb;
  c.changes->added.push_back(std::move(a));
}

void RecordRemove(const WriteContext& c, std::int64_t id) {
  if (c.changes) c.changes->removed.push_back(id);
}

// The memory id of an unexpired live row of exactly ctx.ids whose embedding
// reaches the near-duplicate cosine ("" when none): the best match of the
// snapshot plus this operation's own changes, else a scan in SQL.
Result<std::string> NearDuplicate(const WriteContext& c, const Vector& emb) {
  if (c.vectors && c.vectors->scope_id == c.scope_id) {
    auto best = NearestAbove(*c.vectors, FactIdentity{c.ids.user, c.ids.agent, c.ids.run}, emb,
                             static_cast<float>(c.near_duplicate), c.now, c.changes);
    if (!best) return std::string();
    return MemoryIdOf(*c.vectors, c.changes, best->first);
  }
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      c.db->Prepare("SELECT memory_id, embedding FROM facts WHERE scope_id = ? AND user_id = ? AND "
                    "agent_id = ? AND run_id = ? AND status = 'live' AND "
                    "(expires_at IS NULL OR expires_at > ?)"));
  st->Bind(1, c.scope_id).Bind(2, c.ids.user).Bind(3, c.ids.agent).Bind(4, c.ids.run).Bind(5, c.now);
  std::string found;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    Vector other = st->Floats(1);
    if (!emb.empty() && other.size() == emb.size() && Dot(other, emb) >= c.near_duplicate) {
      found = st->Text(0);
      break;
    }
  }
  st->Reset();
  return found;
}

}  // namespace

Status ValidateMemoryScope(const MemoryScope& s, bool for_write) {
  if (s.tenant.empty()) return Status::InvalidArgument("tenant: must not be empty");
  ENGRAM_RETURN_IF_ERROR(ValidateId(s.tenant, "tenant"));
  ENGRAM_RETURN_IF_ERROR(ValidateId(s.user, "user"));
  ENGRAM_RETURN_IF_ERROR(ValidateId(s.agent, "agent"));
  ENGRAM_RETURN_IF_ERROR(ValidateId(s.run, "run"));
  if (s.user.empty() && s.agent.empty() && s.run.empty()) {
    return Status::InvalidArgument("scope: at least one of user, agent and run is required");
  }
  if (for_write && s.include_narrower) {
    return Status::InvalidArgument("include_narrower: writes go to exactly one scope");
  }
  return Status::Ok();
}

Scope RowScope(const MemoryScope& s) {
  return Scope{s.tenant, s.user.empty() ? kNoId : s.user, s.agent.empty() ? kNoId : s.agent};
}

std::string NewMemoryId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return "m_" + HashHex(rng());
}

Result<WriteOutcome> InsertFact(const WriteContext& c, const NewFact& f) {
  const std::uint64_t hash = text::ContentHash(f.text);
  ENGRAM_ASSIGN_OR_RETURN(auto same, LiveByHash(c, hash));
  if (same) {
    if (!same->item.expired) return WriteOutcome{"NOOP", same->item.id, same->id, same->item.version, same->item.memory, "", 0};
    VersionChange renew;  // an expired duplicate comes back as a new version
    renew.text = f.text;
    renew.embedding = &f.embedding;
    renew.metadata = f.metadata;
    renew.expires_at = f.expires_at;
    renew.entities = f.entities;
    renew.event = "SUPERSEDE";
    return NewVersion(c, *same, renew);
  }
  ENGRAM_ASSIGN_OR_RETURN(std::string near, NearDuplicate(c, f.embedding));
  if (!near.empty()) return WriteOutcome{"NOOP", near, 0, 0, f.text, "", 0};

  const std::string memory_id = NewMemoryId();
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * ins,
      c.db->Prepare("INSERT INTO facts(scope_id, memory_id, user_id, agent_id, run_id, kind, role, actor, "
                    "attributed_to, text, norm_hash, embedding, metadata, source_pages, event_time, "
                    "record_time, created_at, updated_at, expires_at, idempotency_key, version, status, "
                    "degraded) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,'live',?)"));
  ins->Bind(1, c.scope_id).Bind(2, memory_id).Bind(3, c.ids.user).Bind(4, c.ids.agent).Bind(5, c.ids.run)
      .Bind(6, f.kind).Bind(7, f.role).Bind(8, f.actor).Bind(9, f.attributed_to).Bind(10, f.text)
      .Bind(11, static_cast<std::int64_t>(hash)).BindBlob(12, BlobData(f.embedding), BlobBytes(f.embedding))
      .Bind(13, f.metadata.empty() ? std::string("{}") : f.metadata).Bind(14, IdsToJson(f.source_pages))
      .Bind(15, f.event_time).Bind(16, c.now).Bind(17, c.now).Bind(18, c.now);
  if (f.expires_at) ins->Bind(19, *f.expires_at); else ins->BindNull(19);
  if (!f.idempotency_key.empty()) ins->Bind(20, f.idempotency_key); else ins->BindNull(20);
  ENGRAM_RETURN_IF_ERROR(ins->Bind(21, f.degraded ? 1 : 0).Run());
  const std::int64_t id = c.db->LastInsertRowId();
  ENGRAM_RETURN_IF_ERROR(IndexText(c, id, f.text));
  if (!f.entities.empty() || f.extract_entities) {
    ENGRAM_RETURN_IF_ERROR(LinkEntities(c, id, f.entities.empty() ? ExtractEntities(f.text) : f.entities));
  }
  ENGRAM_RETURN_IF_ERROR(History(c, memory_id, id, 1, "ADD", nullptr, &f.text, f.role));
  ENGRAM_RETURN_IF_ERROR(WriteReceipt(c, id, 1, f.degraded));
  ENGRAM_RETURN_IF_ERROR(BumpDataVersion(c.db, c.scope_id));
  RecordAdd(c, id, memory_id, f.expires_at, f.embedding);
  return WriteOutcome{"ADD", memory_id, id, 1, f.text, "", 0};
}

Result<WriteOutcome> NewVersion(const WriteContext& c, const FactRow& cur, const VersionChange& ch) {
  if (cur.item.status != "live") return Status::NotFound("memory " + cur.item.id);
  const std::string text = ch.text ? *ch.text : cur.item.memory;
  const bool new_text = ch.text && *ch.text != cur.item.memory;
  const std::uint64_t hash = ch.text ? text::ContentHash(text) : cur.norm_hash;
  if (hash != cur.norm_hash) {
    ENGRAM_ASSIGN_OR_RETURN(auto other, LiveByHash(c, hash));
    if (other && other->item.id != cur.item.id) {
      return Status::AlreadyExists("text: the same text is already memory " + other->item.id);
    }
  }
  if (ch.text && !ch.embedding) return Status::Internal("new version text without an embedding");
  const Vector& emb = ch.text ? *ch.embedding : cur.embedding;
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * old, c.db->Prepare("UPDATE facts SET status = 'superseded', updated_at = ? "
                                     "WHERE id = ? AND status = 'live'"));
  ENGRAM_RETURN_IF_ERROR(old->Bind(1, c.now).Bind(2, cur.id).Run());
  if (c.db->Changes() != 1) return Status::Aborted("memory " + cur.item.id + " changed concurrently");
  ENGRAM_RETURN_IF_ERROR(UnindexText(c.db, cur.id));
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * ins,
      c.db->Prepare("INSERT INTO facts(scope_id, memory_id, user_id, agent_id, run_id, kind, role, actor, "
                    "attributed_to, text, norm_hash, embedding, metadata, source_pages, event_time, "
                    "record_time, created_at, updated_at, expires_at, idempotency_key, version, status, "
                    "degraded) SELECT scope_id, memory_id, user_id, agent_id, run_id, kind, role, actor, "
                    "attributed_to, ?, ?, ?, ?, source_pages, event_time, ?, created_at, ?, ?, "
                    "idempotency_key, version + 1, 'live', degraded FROM facts WHERE id = ?"));
  std::optional<TimeMs> expiry = ch.expires_at ? *ch.expires_at : cur.item.expires_at;
  ins->Bind(1, text).Bind(2, static_cast<std::int64_t>(hash)).BindBlob(3, BlobData(emb), BlobBytes(emb))
      .Bind(4, ch.metadata ? *ch.metadata : cur.item.metadata).Bind(5, c.now).Bind(6, c.now);
  if (expiry) ins->Bind(7, *expiry); else ins->BindNull(7);
  ENGRAM_RETURN_IF_ERROR(ins->Bind(8, cur.id).Run());
  const std::int64_t id = c.db->LastInsertRowId();
  const std::int64_t version = cur.item.version + 1;
  ENGRAM_RETURN_IF_ERROR(IndexText(c, id, text));
  if (new_text) {
    ENGRAM_RETURN_IF_ERROR(LinkEntities(c, id, ch.entities.empty() ? ExtractEntities(text) : ch.entities));
  } else {
    ENGRAM_ASSIGN_OR_RETURN(
        sql::Stmt * copy, c.db->Prepare("INSERT OR IGNORE INTO fact_entities(fact_id, entity_id, relation) "
                                        "SELECT ?, entity_id, relation FROM fact_entities WHERE fact_id = ?"));
    ENGRAM_RETURN_IF_ERROR(copy->Bind(1, id).Bind(2, cur.id).Run());
  }
  ENGRAM_RETURN_IF_ERROR(History(c, cur.item.id, id, version, ch.event.c_str(), &cur.item.memory, &text,
                                 cur.item.role));
  ENGRAM_RETURN_IF_ERROR(WriteReceipt(c, id, version, cur.item.degraded));
  ENGRAM_RETURN_IF_ERROR(BumpDataVersion(c.db, c.scope_id));
  RecordRemove(c, cur.id);
  RecordAdd(c, id, cur.item.id, expiry, emb);
  return WriteOutcome{"UPDATE", cur.item.id, id, version, text, cur.item.memory, cur.item.version};
}

Status DeleteFact(const WriteContext& c, const FactRow& cur) {
  if (cur.item.status != "live") return Status::NotFound("memory " + cur.item.id);
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, c.db->Prepare("UPDATE facts SET status = 'deleted', updated_at = ? "
                                    "WHERE id = ? AND status = 'live'"));
  ENGRAM_RETURN_IF_ERROR(st->Bind(1, c.now).Bind(2, cur.id).Run());
  if (c.db->Changes() != 1) return Status::Aborted("memory " + cur.item.id + " changed concurrently");
  ENGRAM_RETURN_IF_ERROR(UnindexText(c.db, cur.id));
  ENGRAM_RETURN_IF_ERROR(
      History(c, cur.item.id, cur.id, cur.item.version, "DELETE", &cur.item.memory, nullptr, cur.item.role));
  ENGRAM_RETURN_IF_ERROR(WriteReceipt(c, cur.id, cur.item.version, false, "lpm", "deleted"));
  RecordRemove(c, cur.id);
  return BumpDataVersion(c.db, c.scope_id);
}

Status PurgeMemory(const WriteContext& c, const std::string& memory_id) {
  sql::Db* db = c.db;
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * rows, db->Prepare("SELECT id, text, version, role FROM facts WHERE memory_id = ?"));
  rows->Bind(1, memory_id);
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> hashes;
  std::int64_t version = 0;
  std::int64_t last_id = 0;
  std::string role;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, rows->Step());
    if (!row) break;
    ids.push_back(rows->Int(0));
    std::string t = rows->Text(1);
    if (!t.empty()) hashes.push_back(static_cast<std::int64_t>(text::ContentHash(t)));
    if (rows->Int(2) >= version) version = rows->Int(2), last_id = rows->Int(0), role = rows->Text(3);
  }
  rows->Reset();
  if (ids.empty()) return Status::NotFound("memory " + memory_id);
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * uncache, db->Prepare("DELETE FROM embed_cache WHERE text_hash = ?"));
  for (auto h : hashes) ENGRAM_RETURN_IF_ERROR(uncache->Bind(1, h).Run());
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * unlink,
                          db->Prepare("DELETE FROM fact_entities WHERE fact_id = ? RETURNING entity_id"));
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * orphan, db->Prepare("DELETE FROM entities WHERE id = ? AND NOT EXISTS "
                                      "(SELECT 1 FROM fact_entities WHERE entity_id = ?)"));
  for (auto id : ids) {
    ENGRAM_RETURN_IF_ERROR(UnindexText(db, id));
    unlink->Bind(1, id);
    std::vector<std::int64_t> entities;
    for (;;) {
      ENGRAM_ASSIGN_OR_RETURN(bool row, unlink->Step());
      if (!row) break;
      entities.push_back(unlink->Int(0));
    }
    unlink->Reset();
    for (auto e : entities) ENGRAM_RETURN_IF_ERROR(orphan->Bind(1, e).Bind(2, e).Run());
  }
  static const char* kErase[] = {
      "DELETE FROM fact_links WHERE (from_memory = ?1 OR to_memory = ?1) AND ?2 IS NOT NULL",
      "UPDATE facts SET text = '', norm_hash = 0, embedding = x'', metadata = '{}', actor = '', "
      "attributed_to = '', source_pages = '[]', idempotency_key = NULL, status = 'purged', "
      "updated_at = ?2 WHERE memory_id = ?1",
      "UPDATE fact_history SET old_text = NULL, new_text = NULL, actor = '' WHERE memory_id = ?1 AND ?2 IS NOT NULL",
  };
  for (const char* q : kErase) {
    ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(q));
    ENGRAM_RETURN_IF_ERROR(st->Bind(1, memory_id).Bind(2, c.now).Run());
  }
  ENGRAM_RETURN_IF_ERROR(History(c, memory_id, last_id, version, "PURGE", nullptr, nullptr, role));
  ENGRAM_RETURN_IF_ERROR(WriteReceipt(c, last_id, version, false, "lpm", "purged"));
  for (auto id : ids) RecordRemove(c, id);
  return BumpDataVersion(db, c.scope_id);
}

Result<std::optional<FactRow>> FindMemory(sql::Db* db, const MemoryScope& scope,
                                          const std::string& memory_id, TimeMs now) {
  SqlCond cond;
  cond.sql = "f.memory_id = ? AND f.status <> 'superseded'";
  cond.args = {SqlArg::Text(memory_id)};
  cond.And(ScopeCondition(scope));
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare(std::string("SELECT ") + kFactColumns + " FROM facts f WHERE " + cond.sql +
                                  " ORDER BY f.version DESC LIMIT 1"));
  BindArgs(st, cond.args);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::optional<FactRow> out;
  if (row) out = ReadRow(st, now);
  st->Reset();
  return out;
}

}  // namespace engram::memory::facts
