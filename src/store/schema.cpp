#include "store/schema.hpp"

#include <string>

namespace engram::store {

namespace {

// Version 1. Turns are an immutable log; tiers are states of it:
//   STM     = turns.page_id IS NULL
//   MTM     = the turn's page belongs to a segment with archived_at IS NULL
//   archive = the turn's page belongs to an archived segment
// so every admitted turn is in exactly one tier by construction.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta(
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE scopes(
  id            INTEGER PRIMARY KEY,
  tenant        TEXT NOT NULL,
  user_id       TEXT NOT NULL,
  assistant_id  TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  next_seq      INTEGER NOT NULL DEFAULT 1,
  stm_count     INTEGER NOT NULL DEFAULT 0, -- turns with page_id IS NULL
  chain_page_id INTEGER,                 -- newest page of the dialogue chain
  chain_summary TEXT NOT NULL DEFAULT '',
  data_version  INTEGER NOT NULL DEFAULT 0, -- bumped by every commit that changes indexes
  UNIQUE(tenant, user_id, assistant_id)
);

CREATE TABLE turns(
  id             INTEGER PRIMARY KEY,
  scope_id       INTEGER NOT NULL REFERENCES scopes(id),
  seq            INTEGER NOT NULL,
  user_text      TEXT NOT NULL,
  assistant_text TEXT NOT NULL,
  user_name      TEXT NOT NULL DEFAULT '',
  assistant_name TEXT NOT NULL DEFAULT '',
  event_time     INTEGER NOT NULL,
  ingest_time    INTEGER NOT NULL,
  metadata       TEXT NOT NULL DEFAULT '',
  source_ref     TEXT NOT NULL DEFAULT '',
  user_source_ref      TEXT NOT NULL DEFAULT '', -- per-message references (optional)
  assistant_source_ref TEXT NOT NULL DEFAULT '',
  page_id        INTEGER,
  UNIQUE(scope_id, seq)
);
CREATE INDEX turns_stm ON turns(scope_id, seq) WHERE page_id IS NULL;

-- Lexical index of every admitted turn; rowid = turns.id. `scope` holds one
-- token naming the scope so that scope filtering happens inside the index.
CREATE VIRTUAL TABLE turns_fts USING fts5(scope, terms, tokenize="unicode61 tokenchars '_'");

CREATE TABLE segments(
  id           INTEGER PRIMARY KEY,
  scope_id     INTEGER NOT NULL REFERENCES scopes(id),
  summary      TEXT NOT NULL,
  keywords     TEXT NOT NULL,             -- JSON array
  embedding    BLOB NOT NULL,             -- float32 centroid, normalised
  emb_sum      BLOB NOT NULL,             -- float32 sum of page embeddings
  page_count   INTEGER NOT NULL DEFAULT 0,
  interaction  INTEGER NOT NULL DEFAULT 0, -- pages added since last consolidation
  visits       INTEGER NOT NULL DEFAULT 0, -- retrieval hits since last consolidation
  last_access  INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  version      INTEGER NOT NULL DEFAULT 1,
  archived_at  INTEGER,
  degraded     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX segments_scope ON segments(scope_id, archived_at);
CREATE VIRTUAL TABLE segments_fts USING fts5(scope, terms, tokenize="unicode61 tokenchars '_'");

CREATE TABLE pages(
  id            INTEGER PRIMARY KEY,
  scope_id      INTEGER NOT NULL REFERENCES scopes(id),
  turn_id       INTEGER NOT NULL UNIQUE REFERENCES turns(id),
  segment_id    INTEGER NOT NULL REFERENCES segments(id),
  prev_page     INTEGER,
  next_page     INTEGER,
  chain_summary TEXT NOT NULL,
  keywords      TEXT NOT NULL,              -- JSON array
  embedding     BLOB NOT NULL,
  analyzed      INTEGER NOT NULL DEFAULT 0,
  created_at    INTEGER NOT NULL,
  degraded      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX pages_segment ON pages(segment_id);
CREATE INDEX pages_scope ON pages(scope_id);

-- Document frequency of index terms over a scope's pages (for keyword tf-idf).
CREATE TABLE scope_terms(
  scope_id INTEGER NOT NULL,
  term     TEXT NOT NULL,
  df       INTEGER NOT NULL,
  PRIMARY KEY(scope_id, term)
) WITHOUT ROWID;

CREATE TABLE profile_slots(
  scope_id   INTEGER NOT NULL REFERENCES scopes(id),
  dimension  TEXT NOT NULL,
  value      TEXT NOT NULL,
  evidence   TEXT NOT NULL,                 -- JSON array of page ids
  updated_at INTEGER NOT NULL,
  version    INTEGER NOT NULL DEFAULT 1,
  degraded   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(scope_id, dimension)
);

-- Facts: the long-term facts of consolidation (kinds user/assistant) and the
-- memories of the fact-memory API (kinds memory/procedural) in one versioned
-- store (docs/MEMORY_API.md). One row per version: rows of one memory share
-- memory_id (the stable public id); at most one row of a memory is not
-- 'superseded'. Identity: tenant (and grouping) via the scope row; user_id,
-- agent_id, run_id hold the memory's own ids ('' = none).
CREATE TABLE facts(
  id            INTEGER PRIMARY KEY,
  scope_id      INTEGER NOT NULL REFERENCES scopes(id),
  memory_id     TEXT NOT NULL,             -- "m_" + 16 hex digits, shared by every version
  user_id       TEXT NOT NULL DEFAULT '',
  agent_id      TEXT NOT NULL DEFAULT '',
  run_id        TEXT NOT NULL DEFAULT '',
  kind          TEXT NOT NULL CHECK(kind IN ('user','assistant','memory','procedural')),
  role          TEXT NOT NULL DEFAULT '',  -- role of the source message
  actor         TEXT NOT NULL DEFAULT '',  -- name of the source message's speaker
  attributed_to TEXT NOT NULL DEFAULT '',  -- whom the fact is about: user, assistant or ''
  text          TEXT NOT NULL,
  norm_hash     INTEGER NOT NULL,
  embedding     BLOB NOT NULL,
  metadata      TEXT NOT NULL DEFAULT '{}',  -- JSON object
  source_pages  TEXT NOT NULL DEFAULT '[]',  -- JSON array of page ids
  event_time    INTEGER NOT NULL,
  record_time   INTEGER NOT NULL,            -- when this version was written
  created_at    INTEGER NOT NULL,            -- when version 1 was written
  updated_at    INTEGER NOT NULL,            -- last change of this row (status included)
  expires_at    INTEGER,                     -- hidden from search/list from then on
  idempotency_key TEXT,
  version       INTEGER NOT NULL DEFAULT 1,
  status        TEXT NOT NULL DEFAULT 'live'
                CHECK(status IN ('live','superseded','deleted','purged')),
  degraded      INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX facts_dedup ON facts(scope_id, user_id, agent_id, run_id, norm_hash)
  WHERE status = 'live';
CREATE UNIQUE INDEX facts_versions ON facts(memory_id, version);
CREATE INDEX facts_scope ON facts(scope_id, kind, status);
CREATE INDEX facts_list ON facts(scope_id, run_id, status, created_at, memory_id);
-- rowid = facts.id of live rows; `scope` is ScopeToken(scope_id).
CREATE VIRTUAL TABLE facts_fts USING fts5(scope, terms, tokenize="unicode61 tokenchars '_'");

-- Every change of a memory (content is erased by a purge).
CREATE TABLE fact_history(
  id        INTEGER PRIMARY KEY,
  scope_id  INTEGER NOT NULL,
  memory_id TEXT NOT NULL,
  fact_id   INTEGER NOT NULL,            -- the facts row the event produced or changed
  version   INTEGER NOT NULL,
  event     TEXT NOT NULL CHECK(event IN ('ADD','UPDATE','SUPERSEDE','DELETE','PURGE')),
  old_text  TEXT,
  new_text  TEXT,
  actor     TEXT NOT NULL DEFAULT '',
  role      TEXT NOT NULL DEFAULT '',
  at        INTEGER NOT NULL,
  op_id     TEXT NOT NULL DEFAULT ''     -- the operation's run id (joins receipts)
);
CREATE INDEX fact_history_memory ON fact_history(memory_id, id);
CREATE INDEX fact_history_scope ON fact_history(scope_id);

-- Entities named by facts (per scope row), with typed links to fact rows.
CREATE TABLE entities(
  id       INTEGER PRIMARY KEY,
  scope_id INTEGER NOT NULL,
  name     TEXT NOT NULL,                -- normalised (lower-case) name
  type     TEXT NOT NULL DEFAULT '',     -- name, quoted, identifier, or the LLM's type
  UNIQUE(scope_id, name)
);
CREATE TABLE fact_entities(
  fact_id   INTEGER NOT NULL,
  entity_id INTEGER NOT NULL,
  relation  TEXT NOT NULL DEFAULT 'mentions',
  PRIMARY KEY(fact_id, entity_id)
) WITHOUT ROWID;
CREATE INDEX fact_entities_entity ON fact_entities(entity_id);

-- Typed edges between memories proposed by the extraction model.
CREATE TABLE fact_links(
  id          INTEGER PRIMARY KEY,
  scope_id    INTEGER NOT NULL,
  from_memory TEXT NOT NULL,
  to_memory   TEXT NOT NULL,
  relation    TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  UNIQUE(from_memory, to_memory, relation)
);
CREATE INDEX fact_links_to ON fact_links(to_memory);

-- Idempotency of memory adds: the outcome of the first request with a key
-- (ids and events only, no content), per exact scope.
CREATE TABLE fact_requests(
  scope_id        INTEGER NOT NULL,
  user_id         TEXT NOT NULL,
  agent_id        TEXT NOT NULL,
  run_id          TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  events          TEXT NOT NULL,         -- JSON array of {id, event, version}
  created_at      INTEGER NOT NULL,
  PRIMARY KEY(scope_id, user_id, agent_id, run_id, idempotency_key)
) WITHOUT ROWID;

CREATE TABLE jobs(
  id         INTEGER PRIMARY KEY,
  scope_id   INTEGER NOT NULL REFERENCES scopes(id),
  kind       TEXT NOT NULL CHECK(kind IN ('promote','consolidate')),
  status     TEXT NOT NULL CHECK(status IN ('pending','failed','done')),
  attempts   INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '',
  run_id     TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX jobs_open ON jobs(scope_id, kind) WHERE status = 'pending';

-- Content-free lineage receipts (see docs/LINEAGE.md).
CREATE TABLE receipts(
  id                 INTEGER PRIMARY KEY,
  run_id             TEXT NOT NULL,
  tenant             TEXT NOT NULL,
  user_scope         TEXT NOT NULL,
  assistant_scope    TEXT NOT NULL,
  memory_kind        TEXT NOT NULL,
  memory_id          INTEGER NOT NULL,
  version            INTEGER NOT NULL,
  source_version     TEXT NOT NULL,
  from_tier          TEXT NOT NULL,
  to_tier            TEXT NOT NULL,
  status             TEXT NOT NULL,
  at_utc             INTEGER NOT NULL,
  depends_on_version TEXT NOT NULL DEFAULT '',
  outcome_receipt    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX receipts_memory ON receipts(memory_kind, memory_id);
CREATE INDEX receipts_run ON receipts(run_id);
CREATE INDEX receipts_time ON receipts(at_utc);
CREATE INDEX receipts_scope ON receipts(tenant, user_scope, assistant_scope);

-- Receipts older than the retention, folded into per-day counts (content-free
-- like the receipts). day = at_utc / 86400000 (UTC days since the epoch).
CREATE TABLE receipt_days(
  day             INTEGER NOT NULL,
  tenant          TEXT NOT NULL,
  user_scope      TEXT NOT NULL,
  assistant_scope TEXT NOT NULL,
  memory_kind     TEXT NOT NULL,
  from_tier       TEXT NOT NULL,
  to_tier         TEXT NOT NULL,
  status          TEXT NOT NULL,
  receipts        INTEGER NOT NULL,
  first_at        INTEGER NOT NULL,
  last_at         INTEGER NOT NULL,
  PRIMARY KEY(day, tenant, user_scope, assistant_scope, memory_kind, from_tier, to_tier, status)
) WITHOUT ROWID;
)sql";

// Persistent embedding cache (engine/caching_embedder.hpp): one vector per
// (embedder name, hash of the text: text::ContentHash, then
// text::SignedContentHash); version 3 keys it by tenant too. Holds no text.
// IF NOT EXISTS because stores created by earlier pre-release builds of v1
// get it when they are migrated.
constexpr const char* kEmbedCacheTable = R"sql(
CREATE TABLE IF NOT EXISTS embed_cache(
  model     TEXT NOT NULL,               -- Embedder::Name()
  text_hash INTEGER NOT NULL,            -- text::ContentHash (normalised text)
  dim       INTEGER NOT NULL,
  vector    BLOB NOT NULL,               -- float32, L2-normalised
  PRIMARY KEY(model, text_hash)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS embed_cache_hash ON embed_cache(text_hash);  -- erasure by text
)sql";

// API keys of `engram serve` (server/api_keys.hpp): only a hash of each key
// is kept. IF NOT EXISTS for the same reason as embed_cache.
constexpr const char* kApiKeysTable = R"sql(
CREATE TABLE IF NOT EXISTS api_keys(
  id         TEXT PRIMARY KEY,             -- the key's public id (part of the key text)
  tenant     TEXT NOT NULL,
  users      TEXT NOT NULL DEFAULT '[]',   -- JSON array of user ids; [] = every user
  role       TEXT NOT NULL CHECK(role IN ('read', 'write', 'admin')),
  name       TEXT NOT NULL DEFAULT '',
  hash       TEXT NOT NULL,                -- hex BLAKE2b-256 of the whole key text
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
) WITHOUT ROWID;
)sql";

// Idempotency keys of turn admissions (memory/stm.hpp): which seqs a keyed
// batch admitted, with a fingerprint of its content. No text.
constexpr const char* kTurnRequestsTable = R"sql(
CREATE TABLE IF NOT EXISTS turn_requests(
  scope_id        INTEGER NOT NULL,
  idempotency_key TEXT NOT NULL,
  fingerprint     INTEGER NOT NULL,        -- xxh3 of the batch's fields
  first_seq       INTEGER NOT NULL,
  turns           INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  PRIMARY KEY(scope_id, idempotency_key)
) WITHOUT ROWID;
)sql";

// Version 2: jobs are leased (pending -> leased -> done | failed, with the
// holder and the lease's expiry; `rearmed` when work arrived during a lease);
// scopes carry a generation that erasures bump, and scope ids are never
// reused (meta.scope_id_high remembers the highest id ever given).
constexpr const char* kMigrateToV2 = R"sql(
CREATE TABLE jobs_v2(
  id            INTEGER PRIMARY KEY,
  scope_id      INTEGER NOT NULL REFERENCES scopes(id),
  kind          TEXT NOT NULL CHECK(kind IN ('promote','consolidate')),
  status        TEXT NOT NULL CHECK(status IN ('pending','leased','failed','done')),
  attempts      INTEGER NOT NULL DEFAULT 0,
  last_error    TEXT NOT NULL DEFAULT '',
  run_id        TEXT NOT NULL DEFAULT '',
  lease_holder  TEXT NOT NULL DEFAULT '',   -- "host/pid/random" of the running process
  lease_expires INTEGER NOT NULL DEFAULT 0, -- another process may take the job over from then on
  rearmed       INTEGER NOT NULL DEFAULT 0, -- armed again while leased: pending after this run
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
);
INSERT INTO jobs_v2(id, scope_id, kind, status, attempts, last_error, run_id, created_at, updated_at)
  SELECT id, scope_id, kind, status, attempts, last_error, run_id, created_at, updated_at FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_v2 RENAME TO jobs;
CREATE UNIQUE INDEX jobs_open ON jobs(scope_id, kind) WHERE status IN ('pending', 'leased');
ALTER TABLE scopes ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
INSERT INTO meta(key, value) SELECT 'scope_id_high', CAST(coalesce(max(id), 0) AS TEXT) FROM scopes
  WHERE true ON CONFLICT(key) DO NOTHING;
)sql";

// Version 3: every table that holds a tenant's data names the tenant (the
// tenant of the row's scope; fact_entities: of its fact; the full-text
// indexes: of their row), so that a distributed PostgreSQL can shard every
// table by tenant (schema_postgres.cpp: its keys lead with tenant). SQLite's
// keys stay as they are (it is never sharded), except the embedding cache,
// which is now kept per tenant: no tenant is served a vector another tenant's
// texts put there. The cached vectors had no tenant: a store with one tenant
// keeps them as that tenant's, a store with several starts with an empty
// cache. The FTS5 tables are rebuilt with an UNINDEXED tenant column (FTS5
// has no ADD COLUMN), the cache with tenant as its first column (SQLite 3.40's
// quick_check misreads WITHOUT ROWID tables whose key columns are not the
// first ones). Rows whose scope is gone (none are expected) get ''.
constexpr const char* kMigrateToV3 = R"sql(
ALTER TABLE turns ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE segments ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE pages ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE scope_terms ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE profile_slots ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE facts ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE fact_history ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE entities ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE fact_entities ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE fact_links ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE fact_requests ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE turn_requests ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
UPDATE turns SET tenant = coalesce((SELECT s.tenant FROM scopes s WHERE s.id = turns.scope_id), '');
UPDATE segments SET tenant = coalesce((SELECT s.tenant FROM scopes s WHERE s.id = segments.scope_id), '');
UPDATE pages SET tenant = coalesce((SELECT s.tenant FROM scopes s WHERE s.id = pages.scope_id), '');
UPDATE scope_terms SET tenant = coalesce((SELECT s.tenant FROM scopes s WHERE s.id = scope_terms.scope_id), '');
UPDATE profile_slots SET tenant = coalesce((SELECT s.tenant FROM scopes s WHERE s.id = profile_slots.scope_id), '');
UPDATE facts SET tenant = coalesce((SELECT s.tenant FROM scopes s WHERE s.id = facts.scope_id), '');
UPDATE fact_history SET tenant = coalesce((SELECT s.tenant FROM scopes s WHERE s.id = fact_history.scope_id), '');
UPDATE entities SET tenant = coalesce((SELECT s.tenant FROM scopes s WHERE s.id = entities.scope_id), '');
UPDATE fact_entities SET tenant = coalesce((SELECT f.tenant FROM facts f WHERE f.id = fact_entities.fact_id), '');
UPDATE fact_links SET tenant = coalesce((SELECT s.tenant FROM scopes s WHERE s.id = fact_links.scope_id), '');
UPDATE fact_requests SET tenant = coalesce((SELECT s.tenant FROM scopes s WHERE s.id = fact_requests.scope_id), '');
UPDATE jobs SET tenant = coalesce((SELECT s.tenant FROM scopes s WHERE s.id = jobs.scope_id), '');
UPDATE turn_requests SET tenant = coalesce((SELECT s.tenant FROM scopes s WHERE s.id = turn_requests.scope_id), '');

CREATE VIRTUAL TABLE turns_fts_v3 USING fts5(scope, terms, tenant UNINDEXED, tokenize="unicode61 tokenchars '_'");
INSERT INTO turns_fts_v3(rowid, scope, terms, tenant)
  SELECT x.rowid, x.scope, x.terms, coalesce((SELECT t.tenant FROM turns t WHERE t.id = x.rowid), '') FROM turns_fts x;
DROP TABLE turns_fts;
ALTER TABLE turns_fts_v3 RENAME TO turns_fts;
CREATE VIRTUAL TABLE segments_fts_v3 USING fts5(scope, terms, tenant UNINDEXED, tokenize="unicode61 tokenchars '_'");
INSERT INTO segments_fts_v3(rowid, scope, terms, tenant)
  SELECT x.rowid, x.scope, x.terms, coalesce((SELECT g.tenant FROM segments g WHERE g.id = x.rowid), '')
  FROM segments_fts x;
DROP TABLE segments_fts;
ALTER TABLE segments_fts_v3 RENAME TO segments_fts;
CREATE VIRTUAL TABLE facts_fts_v3 USING fts5(scope, terms, tenant UNINDEXED, tokenize="unicode61 tokenchars '_'");
INSERT INTO facts_fts_v3(rowid, scope, terms, tenant)
  SELECT x.rowid, x.scope, x.terms, coalesce((SELECT f.tenant FROM facts f WHERE f.id = x.rowid), '') FROM facts_fts x;
DROP TABLE facts_fts;
ALTER TABLE facts_fts_v3 RENAME TO facts_fts;

CREATE TABLE embed_cache_v3(
  tenant    TEXT NOT NULL,               -- whose texts: never served to another tenant
  model     TEXT NOT NULL,               -- Embedder::Name()
  text_hash INTEGER NOT NULL,            -- text::ContentHash (normalised text)
  dim       INTEGER NOT NULL,
  vector    BLOB NOT NULL,               -- float32, L2-normalised
  PRIMARY KEY(tenant, model, text_hash)
) WITHOUT ROWID;
INSERT INTO embed_cache_v3(tenant, model, text_hash, dim, vector)
  SELECT (SELECT min(tenant) FROM scopes), model, text_hash, dim, vector FROM embed_cache
  WHERE (SELECT count(DISTINCT tenant) FROM scopes) = 1;
DROP TABLE embed_cache;
ALTER TABLE embed_cache_v3 RENAME TO embed_cache;
CREATE INDEX embed_cache_hash ON embed_cache(tenant, text_hash);  -- erasure by text
)sql";

// Version 4: API keys may expire, record when they were last used, and may
// have the operator role (store-wide /metrics). SQLite cannot change a CHECK
// in place: the small key table is rebuilt.
constexpr const char* kMigrateToV4 = R"sql(
CREATE TABLE api_keys_v4(
  id           TEXT PRIMARY KEY,           -- the key's public id (part of the key text)
  tenant       TEXT NOT NULL,
  users        TEXT NOT NULL DEFAULT '[]', -- JSON array of user ids; [] = every user
  role         TEXT NOT NULL CHECK(role IN ('read', 'write', 'admin', 'operator')),
  name         TEXT NOT NULL DEFAULT '',
  hash         TEXT NOT NULL,              -- hex BLAKE2b-256 of the whole key text
  created_at   INTEGER NOT NULL,
  revoked_at   INTEGER,
  expires_at   INTEGER,                    -- refused from then on; NULL = never
  last_used_at INTEGER                     -- last authenticated request (to the minute)
) WITHOUT ROWID;
INSERT INTO api_keys_v4(id, tenant, users, role, name, hash, created_at, revoked_at)
  SELECT id, tenant, users, role, name, hash, created_at, revoked_at FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_v4 RENAME TO api_keys;
)sql";

// The columns of pages that a snapshot reads (store::ScanSnapshotPages), in
// an index of their own: a page row holds its embedding (2 KB with the
// built-in embedder), one row to a database page, so a scan of the rows read
// every page of the table (410 MB at 100k pages) where this index holds 22
// MB. Not a schema version: the data are the same, and an older engram
// keeps the index up to date without knowing of it. Made on open when
// missing (new and migrated stores alike).
constexpr const char* kSnapshotPagesIndex =
    "CREATE INDEX IF NOT EXISTS pages_snapshot ON pages(turn_id, segment_id, prev_page, next_page, chain_summary)";

Result<std::int64_t> QueryInt(sql::Db* db, std::string_view q) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(q));
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::int64_t v = row ? st->Int(0) : 0;
  st->Reset();
  return v;
}

}  // namespace

Result<std::string> GetMeta(sql::Db* db, std::string_view key) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("SELECT value FROM meta WHERE key = ?"));
  st->Bind(1, key);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  std::string v = row ? st->Text(0) : std::string();
  st->Reset();
  return v;
}

Status SetMeta(sql::Db* db, std::string_view key, std::string_view value) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare("INSERT INTO meta(key, value) VALUES(?, ?) "
                  "ON CONFLICT(key) DO UPDATE SET value = excluded.value"));
  return st->Bind(1, key).Bind(2, value).Run();
}

std::string TenantKey(sql::Db* db, std::string_view columns) {
  return std::string(db->dialect() == sql::Dialect::kPostgres ? "(tenant, " : "(") + std::string(columns) + ")";
}

std::string ScopeTenantSql(int placeholder) {
  return "(SELECT tenant FROM scopes WHERE id = ?" + std::to_string(placeholder) + ")";
}

Status CreateSchemaAtVersion(sql::Db* db, int version, std::int64_t now_ms) {
  if (db->dialect() == sql::Dialect::kPostgres) return CreatePostgresSchemaAtVersion(db, version, now_ms);
  if (version < 1 || version > kSchemaVersion) {
    return Status::InvalidArgument("no SQLite schema version " + std::to_string(version));
  }
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
  ENGRAM_RETURN_IF_ERROR(db->Exec(kSchemaV1));
  ENGRAM_RETURN_IF_ERROR(db->Exec(kEmbedCacheTable));
  ENGRAM_RETURN_IF_ERROR(db->Exec(kApiKeysTable));
  ENGRAM_RETURN_IF_ERROR(db->Exec(kTurnRequestsTable));
  if (version >= 2) ENGRAM_RETURN_IF_ERROR(db->Exec(kMigrateToV2));
  if (version >= 3) ENGRAM_RETURN_IF_ERROR(db->Exec(kMigrateToV3));
  if (version >= 4) ENGRAM_RETURN_IF_ERROR(db->Exec(kMigrateToV4));
  ENGRAM_RETURN_IF_ERROR(db->Exec(kSnapshotPagesIndex));
  ENGRAM_RETURN_IF_ERROR(db->Exec("PRAGMA application_id = " + std::to_string(kApplicationId)));
  ENGRAM_RETURN_IF_ERROR(SetMeta(db, "schema_version", std::to_string(version)));
  ENGRAM_RETURN_IF_ERROR(SetMeta(db, "created_at", std::to_string(now_ms)));
  return txn->Commit();
}

Status CheckSchemaReadOnly(sql::Db* db) {
  ENGRAM_ASSIGN_OR_RETURN(std::int64_t app_id, QueryInt(db, "PRAGMA application_id"));
  if (app_id != kApplicationId) {
    return Status::FailedPrecondition(db->path() + " is not an engram store (and is read-only)");
  }
  ENGRAM_ASSIGN_OR_RETURN(std::string v, GetMeta(db, "schema_version"));
  if (v != std::to_string(kSchemaVersion)) {
    return Status::FailedPrecondition(db->path() + " has schema version " + (v.empty() ? "?" : v) +
                                      " and is read-only: this engram reads version " +
                                      std::to_string(kSchemaVersion) +
                                      " (open it once where it can be written, to migrate it)");
  }
  return Status::Ok();
}

Status EnsureSchema(sql::Db* db, std::int64_t now_ms) {
  if (db->dialect() == sql::Dialect::kPostgres) return EnsurePostgresSchema(db, now_ms);
  ENGRAM_ASSIGN_OR_RETURN(std::int64_t app_id, QueryInt(db, "PRAGMA application_id"));
  ENGRAM_ASSIGN_OR_RETURN(std::int64_t tables,
                          QueryInt(db, "SELECT count(*) FROM sqlite_schema"));
  if (app_id != kApplicationId) {
    if (tables != 0) {
      return Status::FailedPrecondition(db->path() +
                                        " is a SQLite database but not an engram store; "
                                        "refusing to modify it");
    }
    // A new store: the first schema and every migration, so that a new
    // store and a migrated one are the same by construction.
    return CreateSchemaAtVersion(db, kSchemaVersion, now_ms);
  }
  ENGRAM_ASSIGN_OR_RETURN(std::string v, GetMeta(db, "schema_version"));
  int version = 0;
  try {
    version = std::stoi(v);
  } catch (...) {
    return Status::Corruption(db->path() + ": schema_version is missing or unreadable");
  }
  if (version > kSchemaVersion) {
    return Status::FailedPrecondition(db->path() + " has schema version " + v +
                                      ", newer than this engram (" +
                                      std::to_string(kSchemaVersion) + "); upgrade engram");
  }
  if (version == kSchemaVersion) return db->Exec(kSnapshotPagesIndex);
  // Each step runs in the one transaction that records the new version.
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
  // Stores of early builds of version 1 lack these tables (no-ops otherwise).
  ENGRAM_RETURN_IF_ERROR(db->Exec(kEmbedCacheTable));
  ENGRAM_RETURN_IF_ERROR(db->Exec(kApiKeysTable));
  ENGRAM_RETURN_IF_ERROR(db->Exec(kTurnRequestsTable));
  if (version < 2) ENGRAM_RETURN_IF_ERROR(db->Exec(kMigrateToV2));
  if (version < 3) ENGRAM_RETURN_IF_ERROR(db->Exec(kMigrateToV3));
  if (version < 4) ENGRAM_RETURN_IF_ERROR(db->Exec(kMigrateToV4));
  ENGRAM_RETURN_IF_ERROR(db->Exec(kSnapshotPagesIndex));
  ENGRAM_RETURN_IF_ERROR(SetMeta(db, "schema_version", std::to_string(kSchemaVersion)));
  return txn->Commit();
}

}  // namespace engram::store
