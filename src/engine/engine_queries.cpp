// EngineImpl: inspection, export and erasure.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "core/time.hpp"
#include "engine/engine_impl.hpp"
#include "store/erase.hpp"
#include "store/jobs.hpp"
#include "store/open.hpp"
#include "store/stats.hpp"
#include "lineage/receipts.hpp"
#include "memory/facts/fact_store.hpp"
#include "memory/lpm.hpp"
#include "memory/mtm.hpp"
#include "memory/scope_store.hpp"
#include "memory/stm.hpp"

namespace engram {

namespace {

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json MetadataJson(const std::string& s) {
  if (s.empty()) return json::object();
  auto j = json::parse(s, nullptr, false);
  return j.is_discarded() ? json::object() : j;
}

}  // namespace

Result<Profile> EngineImpl::GetProfile(const Scope& scope) {
  ENGRAM_RETURN_IF_ERROR(memory::ValidateScope(scope));
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  ENGRAM_ASSIGN_OR_RETURN(auto row, memory::FindScope(lease->db(), scope));
  Profile p;
  if (!row) return p;
  ENGRAM_ASSIGN_OR_RETURN(p.slots, memory::LoadProfile(lease->db(), row->id));
  p.text = memory::RenderProfile(p.slots);
  return p;
}

Result<std::vector<Fact>> EngineImpl::ListFacts(const Scope& scope, const std::string& kind) {
  ENGRAM_RETURN_IF_ERROR(memory::ValidateScope(scope));
  if (!kind.empty() && kind != "user" && kind != "assistant") {
    return Status::InvalidArgument("kind: must be \"user\" or \"assistant\"");
  }
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));  // one consistent view of both rows
  ENGRAM_ASSIGN_OR_RETURN(auto row, memory::facts::FactSectionsRow(db, scope));
  if (!row) return std::vector<Fact>{};
  ENGRAM_ASSIGN_OR_RETURN(std::int64_t user_row, memory::facts::UserRowOf(db, row->id));
  ENGRAM_ASSIGN_OR_RETURN(std::vector<Fact> facts, memory::LoadFacts(db, row->id, user_row, kind, deps_.clock->NowMs()));
  // In the order they happened (the rows' order is the order they were
  // consolidated in, hottest topic first): the profile of every surface.
  std::stable_sort(facts.begin(), facts.end(), [](const Fact& a, const Fact& b) { return a.event_time < b.event_time; });
  return facts;
}

Result<std::vector<Turn>> EngineImpl::ListTurns(const Scope& scope, std::int64_t after_seq, int limit) {
  ENGRAM_RETURN_IF_ERROR(memory::ValidateScope(scope));
  if (limit < 1 || limit > 10000) return Status::InvalidArgument("limit: must be 1..10000");
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  ENGRAM_ASSIGN_OR_RETURN(auto row, memory::FindScope(lease->db(), scope));
  if (!row) return std::vector<Turn>{};
  return memory::LoadTurns(lease->db(), row->id, after_seq, limit);
}

Result<std::vector<Scope>> EngineImpl::ListScopes() {
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  ENGRAM_ASSIGN_OR_RETURN(auto rows, memory::ListScopes(lease->db()));
  std::vector<Scope> out;
  for (auto& r : rows) out.push_back(std::move(r.scope));
  return out;
}

Result<std::vector<Scope>> EngineImpl::ListTenantScopes(const std::string& tenant,
                                                        const std::string& user) {
  ENGRAM_RETURN_IF_ERROR(memory::ValidateScope(Scope{tenant, user.empty() ? "u" : user, "a"}));
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  ENGRAM_ASSIGN_OR_RETURN(auto rows, memory::ListTenantScopes(lease->db(), tenant, user));
  std::vector<Scope> out;
  for (auto& r : rows) out.push_back(std::move(r.scope));
  return out;
}

Result<TenantUserPage> EngineImpl::ListTenantUsers(const std::string& tenant,
                                                   const std::string& contains,
                                                   const std::string& after, int limit) {
  ENGRAM_RETURN_IF_ERROR(memory::ValidateScope(Scope{tenant, "u", "a"}));
  if (limit < 1 || limit > 1000) return Status::InvalidArgument("limit: must be 1 to 1000");
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  std::string folded = contains;  // (what the store compares: ids folded to ASCII lower case)
  for (char& ch : folded) ch = ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch + ('a' - 'A')) : ch;
  ENGRAM_ASSIGN_OR_RETURN(auto rows,
                          memory::ListTenantUsers(lease->db(), tenant, folded, after, limit));
  TenantUserPage page;
  page.matched = rows.matched;
  page.more = rows.more;
  for (auto& [user, assistants] : rows.users)
    page.users.push_back({std::move(user), std::move(assistants)});
  return page;
}

Result<TenantUsage> EngineImpl::GetTenantUsage(const std::string& tenant) {
  ENGRAM_RETURN_IF_ERROR(memory::ValidateScope(Scope{tenant, "u", "a"}));
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  return store::CountTenantUsage(lease->db(), tenant);
}

namespace {

Stats StatsOf(const store::ContentCounts& c) {
  Stats s;
  s.turns_admitted = c.turns;
  s.stm_turns = c.stm_turns;
  s.mtm_pages = c.mtm_pages;
  s.archived_pages = c.archived_pages;
  s.mtm_segments = c.mtm_segments;
  s.archived_segments = c.archived_segments;
  s.user_facts = c.user_facts;
  s.assistant_facts = c.assistant_facts;
  s.profile_slots = c.profile_slots;
  s.degraded_items = c.degraded_items;
  return s;
}

}  // namespace

Result<Stats> EngineImpl::GetStats(const Scope* scope) {
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  std::int64_t sid = 0;
  if (scope) {
    ENGRAM_RETURN_IF_ERROR(memory::ValidateScope(*scope));
    ENGRAM_ASSIGN_OR_RETURN(auto row, memory::FindScope(db, *scope));
    if (!row) return Stats{};
    sid = row->id;
  }
  ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));  // one consistent view
  ENGRAM_ASSIGN_OR_RETURN(store::ContentCounts c, store::CountContents(db, sid));
  Stats s = StatsOf(c);
  ENGRAM_ASSIGN_OR_RETURN(s.pending_jobs, store::CountJobs(db, false, sid));  // pending or leased
  ENGRAM_ASSIGN_OR_RETURN(s.failed_jobs, store::CountJobs(db, true, sid));
  return s;
}

Result<Stats> EngineImpl::GetScopeSetStats(const std::string& tenant, const std::string& user,
                                           const std::string& assistant, std::int64_t* scopes) {
  // (The identifiers that are given are checked as a scope's would be.)
  ENGRAM_RETURN_IF_ERROR(memory::ValidateScope(
      Scope{tenant, user.empty() ? "u" : user, assistant.empty() ? "a" : assistant}));
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  ENGRAM_ASSIGN_OR_RETURN(store::ScopeSetCounts c,
                          store::CountScopeSet(db, tenant, user, assistant));
  Stats s = StatsOf(c.contents);
  s.pending_jobs = c.pending_jobs;
  s.failed_jobs = c.failed_jobs;
  if (scopes) *scopes = c.scopes;
  return s;
}

Status EngineImpl::Export(const Scope* scope, const std::function<void(const std::string&)>& sink) {
  ENGRAM_ASSIGN_OR_RETURN(auto lease, AcquireReader());
  sql::Db* db = lease->db();
  ENGRAM_ASSIGN_OR_RETURN(auto snapshot, sql::ReadTxn::Begin(db));  // one consistent view
  ENGRAM_ASSIGN_OR_RETURN(auto scopes, memory::ListScopes(db));
  for (const auto& sc : scopes) {
    if (scope && (sc.scope.tenant != scope->tenant || sc.scope.user != scope->user ||
                  sc.scope.assistant != scope->assistant))
      continue;
    json ids = {{"tenant", sc.scope.tenant}, {"user", sc.scope.user}, {"assistant", sc.scope.assistant}};
    json head = ids;
    head["type"] = "scope";
    head["chain_summary"] = sc.chain_summary;
    sink(Dump(head));
    for (std::int64_t after = 0;;) {
      ENGRAM_ASSIGN_OR_RETURN(auto turns, memory::LoadTurns(db, sc.id, after, 1000));
      if (turns.empty()) break;
      for (const auto& t : turns) {
        json j = ids;
        j["type"] = "turn";
        j["seq"] = t.seq;
        j["user_text"] = t.user_text;
        j["assistant_text"] = t.assistant_text;
        if (!t.user_name.empty()) j["user_name"] = t.user_name;
        if (!t.assistant_name.empty()) j["assistant_name"] = t.assistant_name;
        j["event_time"] = FormatIso8601(t.event_time);
        j["ingest_time"] = FormatIso8601(t.ingest_time);
        j["metadata"] = MetadataJson(t.metadata);
        j["source_ref"] = t.source_ref;
        if (!t.user_source_ref.empty()) j["user_source_ref"] = t.user_source_ref;
        if (!t.assistant_source_ref.empty()) j["assistant_source_ref"] = t.assistant_source_ref;
        j["tier"] = TierName(t.tier);
        if (t.page_id) j["page_id"] = t.page_id;
        sink(Dump(j));
        after = t.seq;
      }
    }
    ENGRAM_ASSIGN_OR_RETURN(auto segs, memory::LoadSegments(db, sc.id, true));
    for (const auto& g : segs) {
      json j = ids;
      j["type"] = "segment";
      j["id"] = g.id;
      j["summary"] = g.summary;
      j["keywords"] = g.keywords;
      j["pages"] = g.page_count;
      j["visits"] = g.visits;
      j["archived"] = g.archived;
      sink(Dump(j));
    }
    ENGRAM_RETURN_IF_ERROR(store::ScanExportPages(db, sc.id, [&](const store::ExportPageRow& p) {
      json j = ids;
      j["type"] = "page";
      j["id"] = p.id;
      j["turn_id"] = p.turn_id;
      j["segment_id"] = p.segment_id;
      j["prev_page"] = p.prev_page ? json(*p.prev_page) : json(nullptr);
      j["next_page"] = p.next_page ? json(*p.next_page) : json(nullptr);
      j["chain_summary"] = p.chain_summary;
      j["keywords"] = memory::StringsFromJson(p.keywords);
      j["analyzed"] = p.analyzed;
      sink(Dump(j));
    }));
    ENGRAM_ASSIGN_OR_RETURN(auto slots, memory::LoadProfile(db, sc.id));
    for (const auto& s : slots) {
      json j = ids;
      j["type"] = "profile_slot";
      j["dimension"] = s.dimension;
      j["value"] = s.value;
      j["evidence_pages"] = s.evidence_pages;
      j["updated_at"] = FormatIso8601(s.updated_at);
      sink(Dump(j));
    }
    // Every live fact, all kinds (consolidated user/assistant facts and the
    // memories of the fact API), expired ones included (with expires_at).
    ENGRAM_RETURN_IF_ERROR(store::ScanExportFacts(db, sc.id, deps_.clock->NowMs(), [&](const store::FactRow& f) {
      const MemoryItem& m = f.item;
      json j = ids;
      j["type"] = "fact";
      j["id"] = f.id;
      j["memory_id"] = m.id;
      j["version"] = m.version;
      j["kind"] = m.kind;
      j["text"] = m.memory;
      j["user_id"] = m.user;
      j["agent_id"] = m.agent;
      j["run_id"] = m.run;
      j["role"] = m.role;
      j["actor"] = m.actor;
      j["attributed_to"] = m.attributed_to;
      json meta = json::parse(m.metadata, nullptr, false);
      j["metadata"] = meta.is_object() ? meta : json::object();
      j["source_pages"] = memory::IdsFromJson(f.source_pages);
      j["event_time"] = FormatIso8601(m.event_time);
      j["record_time"] = FormatIso8601(f.record_time);
      j["created_at"] = FormatIso8601(m.created_at);
      j["updated_at"] = FormatIso8601(m.updated_at);
      j["expires_at"] = m.expires_at ? json(FormatIso8601(*m.expires_at)) : json(nullptr);
      j["degraded"] = m.degraded;
      sink(Dump(j));
    }));
  }
  return Status::Ok();
}

Result<std::int64_t> EngineImpl::ForgetUser(const std::string& tenant, const std::string& user) {
  Scope probe{tenant, user, "x"};
  ENGRAM_RETURN_IF_ERROR(memory::ValidateDialogueScope(probe));
  std::lock_guard<std::mutex> maint(maint_mu_);
  std::lock_guard<std::mutex> lock(writer_mu_);
  sql::Db* db = writer_.get();
  std::vector<std::int64_t> erased_ids;
  std::int64_t erased = 0;
  {
    ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
    ENGRAM_ASSIGN_OR_RETURN(auto scopes, memory::ListScopes(db));
    for (const auto& sc : scopes) {
      if (sc.scope.tenant != tenant || sc.scope.user != user) continue;
      // Embedding-cache entries of this user's pages and facts (keyed by a
      // hash of the text) go too.
      std::vector<std::int64_t> hashes;
      ENGRAM_RETURN_IF_ERROR(store::ForEachCachedText(db, sc.id, [&](const store::ScopeText& t) {
        const std::string text =
            t.is_fact ? t.fact_text
                      : memory::RenderExchange(t.user_name, t.user_text, t.assistant_name, t.assistant_text);
        text::AppendCacheKeys(text, hashes);
      }));
      ENGRAM_ASSIGN_OR_RETURN(std::int64_t n, store::EraseScope(db, sc.id, hashes));
      erased += n;
      erased_ids.push_back(sc.id);
      // The purge is a transition too; its receipt tells the health
      // classifier that this scope's earlier receipts describe erased memory.
      lineage::Receipt purge;
      purge.run_id = lineage::NewRunId();
      purge.tenant = sc.scope.tenant;
      purge.user_scope = sc.scope.user;
      purge.assistant_scope = sc.scope.assistant;
      purge.memory_kind = "scope";
      purge.memory_id = sc.id;
      purge.source_version = config_.source_version;
      purge.from_tier = "store";
      purge.to_tier = "purged";
      purge.status = "committed";
      purge.at_utc = deps_.clock->NowMs();
      purge.outcome_receipt = "turns erased=" + std::to_string(n);
      ENGRAM_RETURN_IF_ERROR(lineage::Write(db, purge));
    }
    ENGRAM_RETURN_IF_ERROR(txn->Commit());
  }
  // Only after the commit: a snapshot built by a reader whose read started
  // before it is discarded (epoch), and the erased scope ids are never given
  // to another scope, so nothing cached for them can be served again.
  DropSnapshots(erased_ids);
  // No deleted term may survive in old index segments or in the WAL.
  ENGRAM_RETURN_IF_ERROR(store::ScrubAfterErase(db));
  return erased;
}

std::string EngineImpl::EmbedderName() const { return embedder_->Name(); }
std::string EngineImpl::MaintainerName() const { return maintainer_->Name(); }

}  // namespace engram
