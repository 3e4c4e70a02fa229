// EngineImpl: the fact memory (engram/facts.hpp, docs/MEMORY_API.md). Model
// work (extraction, embeddings) happens before the writer lock; each write
// operation is then one transaction on the writer connection.
#include <algorithm>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "core/time.hpp"
#include "core/wordnet.hpp"
#include "engine/caching_embedder.hpp"
#include "engine/engine_impl.hpp"
#include "store/facts.hpp"
#include "store/facts_entities.hpp"
#include "store/facts_history.hpp"
#include "store/open.hpp"
#include "store/scopes.hpp"
#include "lineage/receipts.hpp"
#include "memory/facts/fact_filter.hpp"
#include "memory/facts/fact_infer.hpp"
#include "memory/facts/fact_query.hpp"
#include "memory/facts/fact_sql.hpp"
#include "memory/facts/fact_store.hpp"
#include "memory/scope_store.hpp"
#include "memory/stm.hpp"
#include "models/llm.hpp"

namespace engram {

namespace {

using nlohmann::json;
namespace facts = memory::facts;

constexpr std::size_t kMaxMessages = 1000;
constexpr std::size_t kMaxTextBytes = facts::kMaxMemoryTextBytes;
constexpr std::size_t kMaxKeyBytes = 256;
constexpr int kContextMessages = 10;
constexpr int kContextMemories = 10;

Status CheckText(const std::string& t, const std::string& field) {
  if (t.find_first_not_of(" \t\r\n") == std::string::npos) return Status::InvalidArgument(field + ": must not be empty");
  if (t.size() > kMaxTextBytes) return Status::InvalidArgument(field + ": longer than 64 KiB");
  if (const char* why = text::StorableTextProblem(t)) return Status::InvalidArgument(field + ": " + why);
  return Status::Ok();
}

std::string Trim(const std::string& s) {
  auto a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

MemoryScope ScopeOf(const MemoryItem& m) { return {m.tenant, m.user, m.agent, m.run, false}; }

// An expiry is after 1970 and before the year 10000 (an export writes it back).
Status CheckExpiry(const std::optional<TimeMs>& expires_at) {
  if (expires_at && (*expires_at <= 0 || *expires_at > kMaxTimeMs)) {
    return Status::InvalidArgument("expires_at: out of range (after 1970, before the year 10000)");
  }
  return Status::Ok();
}

// A fingerprint of what a memory add asks (the messages and every option
// that changes what is stored; not who asks), as 16 hex digits: a key used
// again with other content is refused instead of answered with the first
// outcome.
std::string AddFingerprint(const std::vector<MemoryMessage>& messages, const MemoryAddOptions& o,
                           const std::string& metadata) {
  std::vector<std::string> fields;
  fields.reserve(messages.size() * 3 + 12);
  for (const auto& m : messages) {
    fields.push_back(m.role);
    fields.push_back(m.content);
    fields.push_back(m.name);
  }
  auto time = [](const std::optional<TimeMs>& t) { return t ? std::to_string(*t) : std::string("-"); };
  fields.push_back(metadata);
  fields.push_back(o.infer ? "infer" : "verbatim");
  fields.push_back(o.procedural ? "procedural" : "-");
  fields.push_back(time(o.expires_at));
  fields.push_back(time(o.event_time));
  fields.push_back(o.degraded ? "degraded" : "-");
  if (o.restored) {
    fields.push_back(o.restored->kind);
    fields.push_back(o.restored->role);
    fields.push_back(o.restored->attributed_to);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(memory::FieldsFingerprint(fields)));
  return hex;
}

}  // namespace

namespace {

// What Engine::ValidateMemoryAdd checks; on success the request's metadata
// as it is stored (checked once, for AddMemory too).
Result<std::string> CheckMemoryAdd(const MemoryScope& scope, const std::vector<MemoryMessage>& messages,
                                   const MemoryAddOptions& o) {
  ENGRAM_RETURN_IF_ERROR(facts::ValidateMemoryScope(scope, true));
  ENGRAM_RETURN_IF_ERROR(memory::ValidateIdText(o.actor, "actor"));
  if (messages.empty()) return Status::InvalidArgument("messages: must not be empty");
  if (messages.size() > kMaxMessages) return Status::InvalidArgument("messages: more than 1000");
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (m.role != "user" && m.role != "assistant" && m.role != "system" && m.role != "tool") {
      return Status::InvalidArgument(at + ".role: must be user, assistant, system or tool");
    }
    if (m.content.size() > kMaxTextBytes) return Status::InvalidArgument(at + ".content: longer than 64 KiB");
    if (const char* why = text::StorableTextProblem(m.content)) return Status::InvalidArgument(at + ".content: " + why);
    if (const char* why = text::StorableTextProblem(m.name)) return Status::InvalidArgument(at + ".name: " + why);
  }
  ENGRAM_ASSIGN_OR_RETURN(std::string metadata, facts::CheckMetadata(o.metadata));
  if (o.idempotency_key.size() > kMaxKeyBytes) return Status::InvalidArgument("idempotency_key: longer than 256 bytes");
  ENGRAM_RETURN_IF_ERROR(CheckExpiry(o.expires_at));
  if (o.event_time && !InTimeRange(*o.event_time)) {
    return Status::InvalidArgument("event_time: out of range (years 1000..9999)");
  }
  if (o.procedural && (!o.infer || scope.agent.empty())) {
    return Status::InvalidArgument("procedural: needs infer and an agent id");
  }
  if (o.restored) {
    const auto& r = *o.restored;
    if (o.infer || o.procedural || messages.size() != 1) {
      return Status::InvalidArgument("a restored memory is one message stored verbatim");
    }
    if (r.kind != "memory" && r.kind != "procedural") {
      return Status::InvalidArgument("kind: must be memory or procedural");
    }
    if (r.role != "" && r.role != "user" && r.role != "assistant" && r.role != "tool") {
      return Status::InvalidArgument("role: must be user, assistant, tool or none");
    }
    if (r.attributed_to != "" && r.attributed_to != "user" && r.attributed_to != "assistant") {
      return Status::InvalidArgument("attributed_to: must be user, assistant or none");
    }
    if (r.kind == "procedural" && scope.agent.empty()) {
      return Status::InvalidArgument("kind: a procedural memory belongs to an agent (agent_id)");
    }
  }
  return metadata;
}

}  // namespace

Status Engine::ValidateMemoryAdd(const MemoryScope& scope, const std::vector<MemoryMessage>& messages,
                                 const MemoryAddOptions& o) {
  return CheckMemoryAdd(scope, messages, o).status();
}

Result<MemoryAddResult> EngineImpl::AddMemory(const MemoryScope& scope, const std::vector<MemoryMessage>& messages,
                                              const MemoryAddOptions& o) {
  ENGRAM_ASSIGN_OR_RETURN(std::string metadata, CheckMemoryAdd(scope, messages, o));
  if (o.procedural && !options_.llm) return Status::FailedPrecondition("procedural: needs a configured LLM");
  ENGRAM_RETURN_IF_ERROR(RequireEmbedder());
  const TimeMs observed = o.event_time ? *o.event_time : deps_.clock->NowMs();
  const std::string actor = o.actor.empty() ? "api" : o.actor;
  const Scope row_scope = facts::RowScope(scope);
  const store::FactIds own_ids{scope.user, scope.agent, scope.run};  // the memory's ids

  // A replayed request: the first outcome, without model work. The key's
  // record holds a fingerprint of what was asked (records written before
  // fingerprints are a bare array of events and replay whatever is asked).
  const std::string fingerprint = AddFingerprint(messages, o, metadata);
  auto replay = [&](sql::Db* db) -> Result<std::optional<MemoryAddResult>> {
    if (o.idempotency_key.empty()) return std::optional<MemoryAddResult>{};
    ENGRAM_ASSIGN_OR_RETURN(std::optional<std::string> events,
                            store::FindFactRequest(db, row_scope, own_ids, o.idempotency_key));
    if (!events) return std::optional<MemoryAddResult>{};
    MemoryAddResult r;
    r.replayed = true;
    json j = json::parse(*events, nullptr, false);
    if (j.is_object()) {
      if (j.value("fingerprint", "") != fingerprint) {
        return Status::AlreadyExists("idempotency_key: already used for another memory add in this scope");
      }
      j = j.value("events", json::array());
    }
    for (const auto& e : j.is_array() ? j : json::array()) {
      MemoryEventResult ev;
      ev.id = e.value("id", "");
      ev.event = e.value("event", "");
      ev.version = e.value("version", static_cast<std::int64_t>(1));
      ENGRAM_ASSIGN_OR_RETURN(auto cur, facts::FindMemory(db, scope, ev.id, deps_.clock->NowMs()));
      if (cur) ev.memory = cur->item.memory;
      r.results.push_back(std::move(ev));
    }
    return std::optional<MemoryAddResult>(std::move(r));
  };
  {
    std::lock_guard<std::mutex> lock(writer_mu_);
    ENGRAM_ASSIGN_OR_RETURN(auto first, replay(writer_.get()));
    if (first) return std::move(*first);
  }
  if (o.replay_only) {
    return Status::ResourceExhausted("the tenant's quota is reached: only retries of earlier requests pass");
  }

  // Model phase, outside any transaction.
  MemoryAddResult out;
  facts::Inference inf;
  std::vector<facts::NewFact> news;
  if (!o.infer) {
    for (const auto& m : messages) {
      if (m.role == "system" || Trim(m.content).empty()) continue;
      facts::NewFact f;
      f.text = Trim(m.content);
      f.role = m.role;
      f.actor = m.name;
      f.attributed_to = m.role == "user" || m.role == "assistant" ? m.role : "";
      if (o.restored) {
        f.kind = o.restored->kind;
        f.role = o.restored->role;
        f.attributed_to = o.restored->attributed_to;
      }
      f.degraded = o.degraded;
      news.push_back(std::move(f));
    }
    if (news.empty()) out.note = "nothing stored: system messages and blank texts are not memories";
  } else {
    if (options_.llm) {
      std::vector<std::string> recent;
      std::vector<facts::KnownMemory> known;
      {
        ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
        sql::Db* db = lease->db();
        ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));
        ENGRAM_ASSIGN_OR_RETURN(auto row, memory::FindScope(db, row_scope));
        if (row) {
          ENGRAM_ASSIGN_OR_RETURN(auto turns, memory::LoadTurns(db, row->id, std::max<std::int64_t>(0, row->next_seq - 1 - kContextMessages), kContextMessages));
          for (const auto& t : turns) recent.push_back(memory::RenderExchange(t));
        }
        std::string joined;
        for (const auto& m : messages) if (m.role != "system") joined += m.content + "\n";
        ENGRAM_ASSIGN_OR_RETURN(auto qv, query_embedder_->Embed({joined}));
        MemorySearchOptions so;
        so.top_k = kContextMemories;
        ENGRAM_ASSIGN_OR_RETURN(auto near, facts::SearchMemories(db, scope, joined, qv.front(), so,
                                                                 deps_.clock->NowMs(), FactVectorSourceFn(),
                                                                 fact_words_));
        for (const auto& n : near) known.push_back({n.id, n.memory});
      }
      ENGRAM_ASSIGN_OR_RETURN(inf, facts::InferWithLlm(*options_.llm, messages, recent, known, observed, o.procedural));
    } else {
      inf = facts::InferBuiltin(messages, observed);
    }
    out.model_calls = inf.model_calls;
    out.degraded = inf.degraded;
    out.note = inf.note;
    if (out.note.empty() && inf.facts.empty()) out.note = "nothing stored: the model found no fact to remember";
    for (const auto& x : inf.facts) {
      facts::NewFact f;
      f.kind = o.procedural ? "procedural" : "memory";
      f.text = x.text;
      f.role = o.procedural ? "assistant" : "";
      f.attributed_to = x.attributed_to;
      f.entities = x.entities;
      f.degraded = inf.degraded;
      news.push_back(std::move(f));
    }
  }
  std::vector<std::string> texts;
  for (const auto& f : news) texts.push_back(f.text);
  if (!texts.empty()) {
    ENGRAM_ASSIGN_OR_RETURN(auto vecs, EmbedderForTenant(embedder_.get(), scope.tenant)->Embed(texts));
    if (vecs.size() != texts.size()) return Status::Internal("embedder returned a wrong count");
    for (std::size_t i = 0; i < news.size(); ++i) news[i].embedding = std::move(vecs[i]);
  }
  for (auto& f : news) {
    f.metadata = metadata;
    f.event_time = observed;
    f.expires_at = o.expires_at;
    f.idempotency_key = o.idempotency_key;
  }

  // Commit phase: ONE transaction.
  std::lock_guard<std::mutex> lock(writer_mu_);
  sql::Db* db = writer_.get();
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
  ENGRAM_ASSIGN_OR_RETURN(auto first, replay(db));  // a concurrent retry won
  if (first) return std::move(*first);
  facts::WriteContext ctx;
  ctx.db = db;
  ctx.now = deps_.clock->NowMs();
  ENGRAM_ASSIGN_OR_RETURN(ctx.scope_id, memory::EnsureScope(db, row_scope, ctx.now));
  ctx.ids = scope;
  ctx.row_scope = row_scope;
  ctx.op_id = lineage::NewRunId();
  ctx.actor = actor;
  ctx.source_version = config_.source_version;
  ctx.near_duplicate = config_.fact_near_duplicate;
  ENGRAM_ASSIGN_OR_RETURN(auto vectors, WriterFactVectors(db, ctx.scope_id));
  facts::FactChanges changes;
  ctx.vectors = vectors.get();
  ctx.changes = &changes;
  // The built-in engine also finds facts that say a live one in other words.
  ctx.wordnet = fact_words_ ? wordnet::WordNet::Default() : nullptr;
  std::vector<std::string> ids;  // memory id per new fact
  json events = json::array();
  for (std::size_t i = 0; i < news.size(); ++i) {
    const facts::NewFact& f = news[i];
    facts::WriteOutcome w;
    std::optional<facts::FactRow> target;
    if (i < inf.facts.size() && inf.facts[i].event == "UPDATE") {
      ENGRAM_ASSIGN_OR_RETURN(target, facts::FindMemory(db, scope, inf.facts[i].target, ctx.now));
      if (target && target->item.status != "live") target.reset();
    }
    if (target) {
      facts::VersionChange ch;
      ch.text = f.text;
      ch.embedding = &f.embedding;
      ch.entities = f.entities;
      ch.event = "SUPERSEDE";
      auto r = facts::NewVersion(ctx, *target, ch);
      if (!r.ok() && r.status().code() == StatusCode::kAlreadyExists) {
        ENGRAM_ASSIGN_OR_RETURN(w, facts::InsertFact(ctx, f));  // reports the NOOP
      } else {
        ENGRAM_ASSIGN_OR_RETURN(w, std::move(r));
      }
    } else {
      ENGRAM_ASSIGN_OR_RETURN(w, facts::InsertFact(ctx, f));
    }
    ids.push_back(w.memory_id);
    MemoryEventResult ev{w.memory_id, w.text, w.event, w.version, w.previous_text, w.superseded_version};
    events.push_back({{"id", w.memory_id}, {"event", w.event}, {"version", w.version}});
    out.results.push_back(std::move(ev));
  }
  for (const auto& l : inf.links) {
    if (l.from >= ids.size()) continue;
    std::string to = l.to_index >= 0 ? (static_cast<std::size_t>(l.to_index) < ids.size() ? ids[l.to_index] : "")
                                     : l.to_id;
    if (to.empty() || to == ids[l.from]) continue;
    ENGRAM_RETURN_IF_ERROR(store::InsertFactLink(db, ctx.scope_id, ids[l.from], to, l.relation, ctx.now));
  }
  if (!o.idempotency_key.empty()) {
    ENGRAM_RETURN_IF_ERROR(
        store::InsertFactRequest(db, ctx.scope_id, own_ids, o.idempotency_key,
                                 json{{"fingerprint", fingerprint}, {"events", events}}.dump(), ctx.now));
  }
  ENGRAM_RETURN_IF_ERROR(txn->Commit());
  ENGRAM_RETURN_IF_ERROR(PublishFactVectors(db, *vectors, changes));
  return out;
}

Result<MemoryItem> EngineImpl::UpdateMemory(const MemoryScope& scope, const std::string& id,
                                            const MemoryUpdate& u) {
  ENGRAM_ASSIGN_OR_RETURN(auto items, ChangeMemories({MemoryChange{scope, id, u, false}}));
  return std::move(items.front());
}

Status EngineImpl::DeleteMemory(const MemoryScope& scope, const std::string& id, const std::string& actor) {
  MemoryUpdate u;
  u.actor = actor;
  return ChangeMemories({MemoryChange{scope, id, u, true}}).status();
}

Result<std::vector<MemoryItem>> EngineImpl::ChangeMemories(const std::vector<MemoryChange>& changes) {
  // A batch's errors name the change (`memories[i]: ...`); one change's do not.
  auto at = [&](std::size_t i, const Status& st) {
    return changes.size() == 1 ? st
                               : Status(st.code(), "memories[" + std::to_string(i) + "]: " + st.message());
  };
  // Everything is checked, and every new text embedded, before the writer
  // lock is taken.
  struct Prepared {
    std::optional<std::string> text, metadata;
    Vector embedding;
  };
  std::vector<Prepared> prepared(changes.size());
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const MemoryChange& c = changes[i];
    const MemoryUpdate& u = c.update;
    Prepared& p = prepared[i];
    Status st = facts::ValidateMemoryScope(c.scope, false);
    if (st.ok()) st = memory::ValidateIdText(u.actor, "actor");
    if (st.ok() && !c.remove) {
      if (!u.text && !u.metadata && !u.expires_at && !u.clear_expiry) {
        st = Status::InvalidArgument("update: give text, metadata or an expiry");
      } else if (u.expires_at && u.clear_expiry) {
        st = Status::InvalidArgument("expires_at: cannot both set and clear");
      } else {
        st = CheckExpiry(u.expires_at);
      }
      if (st.ok() && u.text) {
        st = CheckText(*u.text, "text");
        if (st.ok()) {
          p.text = Trim(*u.text);
          st = RequireEmbedder();
        }
        if (st.ok()) {
          auto v = EmbedderForTenant(embedder_.get(), c.scope.tenant)->Embed({*p.text});
          if (v.ok()) p.embedding = std::move(v->front());
          else st = v.status();
        }
      }
      if (st.ok() && u.metadata) {
        auto m = facts::CheckMetadata(*u.metadata);
        if (m.ok()) p.metadata = std::move(*m);
        else st = m.status();
      }
    }
    if (!st.ok()) return at(i, st);
    for (std::size_t j = 0; j < i; ++j) {
      if (changes[j].id == c.id) {
        return at(i, Status::InvalidArgument("memory " + c.id + " is named twice (also memories[" +
                                             std::to_string(j) + "]); nothing was changed"));
      }
    }
  }
  std::lock_guard<std::mutex> lock(writer_mu_);
  sql::Db* db = writer_.get();
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
  const TimeMs now = deps_.clock->NowMs();
  // The fact vectors of each identity the batch touches, published after the commit.
  struct Touched {
    std::shared_ptr<const facts::FactVectors> vectors;
    facts::FactChanges changes;
  };
  std::map<std::int64_t, Touched> touched;
  std::vector<MemoryItem> out;
  const std::string run_id = lineage::NewRunId();
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const MemoryChange& c = changes[i];
    ENGRAM_ASSIGN_OR_RETURN(auto row, facts::FindMemory(db, c.scope, c.id, now));
    if (!row || row->item.status != "live") return at(i, Status::NotFound("memory " + c.id + " (in this scope)"));
    Touched& t = touched[row->scope_id];
    if (!t.vectors) {
      ENGRAM_ASSIGN_OR_RETURN(t.vectors, WriterFactVectors(db, row->scope_id));
    }
    facts::WriteContext ctx{db, row->scope_id, ScopeOf(row->item), facts::RowScope(ScopeOf(row->item)), now,
                            run_id, c.update.actor.empty() ? "api" : c.update.actor, config_.source_version,
                            "input", config_.fact_near_duplicate};
    ctx.changes = &t.changes;
    if (c.remove) {
      if (Status st = facts::DeleteFact(ctx, *row); !st.ok()) return at(i, st);
      MemoryItem gone = row->item;
      gone.status = "deleted";
      out.push_back(std::move(gone));
      continue;
    }
    const Prepared& p = prepared[i];
    // An update that changes nothing (a retried PUT) makes no version.
    const MemoryItem& cur = row->item;
    const bool same_expiry = c.update.clear_expiry ? !cur.expires_at
                                                   : !c.update.expires_at || cur.expires_at == c.update.expires_at;
    if ((!p.text || *p.text == cur.memory) && (!p.metadata || *p.metadata == cur.metadata) && same_expiry) {
      out.push_back(cur);
      continue;
    }
    ctx.vectors = t.vectors.get();
    facts::VersionChange ch;
    ch.text = p.text;
    ch.embedding = p.text ? &p.embedding : nullptr;
    ch.metadata = p.metadata;
    if (c.update.expires_at) ch.expires_at = std::optional<TimeMs>(*c.update.expires_at);
    if (c.update.clear_expiry) ch.expires_at = std::optional<TimeMs>();
    if (Status st = facts::NewVersion(ctx, *row, ch).status(); !st.ok()) return at(i, st);
    ENGRAM_ASSIGN_OR_RETURN(auto now_row, facts::FindMemory(db, c.scope, c.id, now));
    if (!now_row) return Status::Internal("updated memory not found");
    out.push_back(std::move(now_row->item));
  }
  ENGRAM_RETURN_IF_ERROR(txn->Commit());
  for (auto& [scope_id, t] : touched) ENGRAM_RETURN_IF_ERROR(PublishFactVectors(db, *t.vectors, t.changes));
  return out;
}

Result<std::int64_t> EngineImpl::DeleteAllMemories(const MemoryScope& scope, const std::string& actor) {
  ENGRAM_RETURN_IF_ERROR(facts::ValidateMemoryScope(scope, false));
  ENGRAM_RETURN_IF_ERROR(memory::ValidateIdText(actor, "actor"));
  std::lock_guard<std::mutex> lock(writer_mu_);
  sql::Db* db = writer_.get();
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
  const TimeMs now = deps_.clock->NowMs();
  ENGRAM_ASSIGN_OR_RETURN(std::vector<facts::FactRow> rows,
                          facts::SelectFacts(db, facts::Selector(scope, store::FactStates::kLive, now)));
  const std::string op = lineage::NewRunId();
  for (const auto& row : rows) {
    facts::WriteContext ctx{db, row.scope_id, ScopeOf(row.item), facts::RowScope(ScopeOf(row.item)), now, op,
                            actor.empty() ? "api" : actor, config_.source_version, "input",
                            config_.fact_near_duplicate};
    ENGRAM_RETURN_IF_ERROR(facts::DeleteFact(ctx, row));
  }
  ENGRAM_RETURN_IF_ERROR(txn->Commit());
  std::vector<std::int64_t> scopes;
  for (const auto& row : rows) scopes.push_back(row.scope_id);
  DropFactVectors(scopes);  // reloaded by the next reader
  return static_cast<std::int64_t>(rows.size());
}

Result<MemoryPurgeResult> EngineImpl::PurgeMemory(const MemoryScope& scope, const std::string& id) {
  if (id.empty()) return Status::InvalidArgument("id: must not be empty");
  return PurgeWhere(scope, id);
}

Result<MemoryPurgeResult> EngineImpl::PurgeMemories(const MemoryScope& scope) { return PurgeWhere(scope, ""); }

Result<MemoryPurgeResult> EngineImpl::PurgeWhere(const MemoryScope& scope, const std::string& id) {
  ENGRAM_RETURN_IF_ERROR(facts::ValidateMemoryScope(scope, false));
  std::lock_guard<std::mutex> lock(writer_mu_);
  sql::Db* db = writer_.get();
  MemoryPurgeResult out;
  std::vector<std::int64_t> scopes;
  {
    ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
    const TimeMs now = deps_.clock->NowMs();
    store::FactSelector unpurged = facts::Selector(scope, store::FactStates::kUnpurged, now);
    if (!id.empty()) unpurged.memory_id = id;
    ENGRAM_ASSIGN_OR_RETURN(std::vector<facts::FactRow> rows, facts::SelectFacts(db, unpurged));
    if (!id.empty() && rows.empty()) return Status::NotFound("memory " + id + " (in this scope)");
    const std::string op = lineage::NewRunId();
    for (const auto& row : rows) {
      ENGRAM_ASSIGN_OR_RETURN(std::int64_t versions, store::CountFactVersions(db, row.item.id));
      out.rows += versions;
      facts::WriteContext ctx{db, row.scope_id, ScopeOf(row.item), facts::RowScope(ScopeOf(row.item)), now, op,
                              "api", config_.source_version, "input", config_.fact_near_duplicate};
      ENGRAM_RETURN_IF_ERROR(facts::PurgeMemory(ctx, row.item.id));
      ++out.memories;
      // (The snapshots of every dialogue of the user hold what the user's own
      // memories said.)
      ENGRAM_ASSIGN_OR_RETURN(std::vector<std::int64_t> readers, facts::FactReaders(db, row.scope_id, ctx.row_scope));
      scopes.insert(scopes.end(), readers.begin(), readers.end());
    }
    std::sort(scopes.begin(), scopes.end());
    scopes.erase(std::unique(scopes.begin(), scopes.end()), scopes.end());
    // Snapshots from before the purge are never served nor extended again.
    for (auto s : scopes) ENGRAM_RETURN_IF_ERROR(store::BumpGeneration(db, s));
    ENGRAM_RETURN_IF_ERROR(txn->Commit());
  }
  DropSnapshots(scopes);  // cached snapshots held the texts and the embeddings
  // No erased term may survive in old index segments or in the WAL.
  ENGRAM_RETURN_IF_ERROR(store::ScrubAfterErase(db));
  return out;
}

}  // namespace engram
