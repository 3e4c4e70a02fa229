#include "wire/json.hpp"

#include "core/json_limits.hpp"
#include "core/time.hpp"

namespace engram::wire {

using nlohmann::json;

namespace {

json Counts(const std::array<std::int64_t, kHealthStateCount>& c) {
  json j = json::object();
  for (int s = 0; s < kHealthStateCount; ++s) j[HealthStateName(static_cast<HealthState>(s))] = c[static_cast<std::size_t>(s)];
  return j;
}

}  // namespace

std::string Dump(const json& j, int indent) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

json MetadataJson(const std::string& text) {
  if (!json_limits::WithinDepth(text)) return json::object();  // unreadable: printing it would exhaust the stack
  auto j = json::parse(text.empty() ? "{}" : text, nullptr, false);
  return j.is_object() ? j : json::object();
}

json ToJson(const Stats& s) {
  return {{"stm_turns", s.stm_turns},
          {"mtm_pages", s.mtm_pages},
          {"mtm_segments", s.mtm_segments},
          {"archived_pages", s.archived_pages},
          {"archived_segments", s.archived_segments},
          {"user_facts", s.user_facts},
          {"assistant_facts", s.assistant_facts},
          {"profile_slots", s.profile_slots},
          {"pending_jobs", s.pending_jobs},
          {"failed_jobs", s.failed_jobs},
          {"turns_admitted", s.turns_admitted},
          {"degraded_items", s.degraded_items}};
}

json ToJson(const RetrievedItem& i) {
  json j = {{"kind", ItemKindName(i.kind)},
            {"tier", TierName(i.tier)},
            {"id", i.id},
            {"version", i.version},
            {"score", i.score},
            {"tokens", i.tokens},
            {"text", i.text}};
  if (i.turn_id) j["turn_id"] = i.turn_id;
  if (i.segment_id) j["segment_id"] = i.segment_id;
  if (i.event_time) j["event_time"] = FormatIso8601(i.event_time);
  if (!i.source_ref.empty()) j["source_ref"] = i.source_ref;
  return j;
}

json ToJson(const MaintainReport& r) {
  return {{"promotions", r.promotions},
          {"pages_created", r.pages_created},
          {"segments_created", r.segments_created},
          {"segments_merged", r.segments_merged},
          {"segments_archived", r.segments_archived},
          {"consolidations", r.consolidations},
          {"facts_added", r.facts_added},
          {"profile_slots_updated", r.profile_slots_updated},
          {"jobs_failed", r.jobs_failed},
          {"model_calls", r.model_calls},
          {"degraded", r.degraded}};
}

json ToJson(const Fact& f) {
  return {{"id", f.id},
          {"version", f.version},
          {"kind", f.kind},
          {"text", f.text},
          {"source_pages", f.source_pages},
          {"event_time", FormatIso8601(f.event_time)},
          {"record_time", FormatIso8601(f.record_time)},
          {"degraded", f.degraded}};
}

json ToJson(const Turn& t) {
  json j = {{"id", t.id},
            {"seq", t.seq},
            {"user_text", t.user_text},
            {"assistant_text", t.assistant_text},
            {"event_time", FormatIso8601(t.event_time)},
            {"ingest_time", FormatIso8601(t.ingest_time)},
            {"metadata", MetadataJson(t.metadata)},
            {"source_ref", t.source_ref},
            {"tier", TierName(t.tier)},
            {"page_id", t.page_id ? json(t.page_id) : json(nullptr)}};
  if (!t.user_name.empty()) j["user_name"] = t.user_name;
  if (!t.assistant_name.empty()) j["assistant_name"] = t.assistant_name;
  if (!t.user_source_ref.empty()) j["user_source_ref"] = t.user_source_ref;
  if (!t.assistant_source_ref.empty()) j["assistant_source_ref"] = t.assistant_source_ref;
  return j;
}

json ToJson(const JobInfo& j) {
  json out = {{"id", j.id},
          {"tenant", j.scope.tenant},
          {"user", j.scope.user},
          {"assistant", j.scope.assistant},
          {"kind", j.kind},
          {"status", j.status},
          {"attempts", j.attempts},
          {"last_error", j.last_error},
          {"created_at", FormatIso8601(j.created_at)},
          {"updated_at", FormatIso8601(j.updated_at)}};
  // The holder's host and pid stay inside the store: a tenant learns only
  // that the job is being run, and until when at the latest.
  if (j.status == "leased") out["lease_expires"] = FormatIso8601(j.lease_expires);
  return out;
}

json ToJson(const MemoryItem& m) {
  json j = {{"id", m.id},           {"memory", m.memory},   {"hash", m.hash},
            {"metadata", MetadataJson(m.metadata)},          {"created_at", FormatIso8601(m.created_at)},
            {"updated_at", FormatIso8601(m.updated_at)},     {"event_time", FormatIso8601(m.event_time)},
            {"version", m.version}, {"kind", m.kind},       {"status", m.status},
            {"expired", m.expired}, {"degraded", m.degraded}};
  if (!m.user.empty()) j["user_id"] = m.user;
  if (!m.agent.empty()) j["agent_id"] = m.agent;
  if (!m.run.empty()) j["run_id"] = m.run;
  if (!m.actor.empty()) j["actor_id"] = m.actor;
  if (!m.role.empty()) j["role"] = m.role;
  if (!m.attributed_to.empty()) j["attributed_to"] = m.attributed_to;
  j["expiration_date"] = m.expires_at ? json(FormatIso8601(*m.expires_at)) : json(nullptr);
  if (m.score > 0 || m.score_details) j["score"] = m.score;
  if (m.score_details) {
    const auto& d = *m.score_details;
    j["score_details"] = {{"vector", d.vector},           {"semantic", d.semantic},
                          {"lexical", d.lexical},
                          {"bm25", d.bm25},               {"entity", d.entity},
                          {"from_vector", d.from_vector}, {"from_lexical", d.from_lexical},
                          {"from_entity", d.from_entity}, {"from_semantic", d.from_semantic},
                          {"entities", d.entities}};
  }
  return j;
}

json ToJson(const MemoryHistoryEvent& e) {
  return {{"id", e.id},
          {"version", e.version},
          {"event", e.event},
          {"old_memory", e.old_text ? json(*e.old_text) : json(nullptr)},
          {"new_memory", e.new_text ? json(*e.new_text) : json(nullptr)},
          {"actor", e.actor},
          {"role", e.role},
          {"at", FormatIso8601(e.at)}};
}

json ToJson(const MemoryAddResult& r) {
  json res = json::array();
  for (const auto& e : r.results) {
    json j = {{"id", e.id}, {"memory", e.memory}, {"event", e.event}, {"version", e.version}};
    if (e.event == "UPDATE") {
      j["previous_memory"] = e.previous_memory;
      j["superseded_version"] = e.superseded_version;
    }
    res.push_back(std::move(j));
  }
  json out = {{"results", res}, {"degraded", r.degraded}, {"model_calls", r.model_calls}, {"replayed", r.replayed}};
  if (!r.note.empty()) out["note"] = r.note;
  return out;
}

json ToJson(const HealthItem& i) {
  json j = {{"kind", i.kind},
            {"id", i.id},
            {"tenant", i.scope.tenant},
            {"user", i.scope.user},
            {"assistant", i.scope.assistant},
            {"state", HealthStateName(i.state)},
            {"reason", i.reason},
            {"run_ids", i.run_ids},
            {"degraded", i.degraded}};
  if (i.since) j["since"] = FormatIso8601(i.since);
  return j;
}

json ToJson(const HealthReport& r) {
  json scopes = json::array(), findings = json::array();
  for (const auto& s : r.scopes) {
    scopes.push_back({{"tenant", s.scope.tenant}, {"user", s.scope.user}, {"assistant", s.scope.assistant},
                      {"state", HealthStateName(s.state)}, {"counts", Counts(s.counts)}});
  }
  for (const auto& f : r.findings) findings.push_back(ToJson(f));
  return {{"overall", HealthStateName(r.overall)},
          {"green", r.green()},
          {"now", FormatIso8601(r.now)},
          {"horizon_hours", r.horizon_ms / 3600000.0},
          {"items", r.items},
          {"counts", Counts(r.counts)},
          {"degraded_items", r.degraded_items},
          {"degraded_share", r.degraded_share},
          {"receipts_read", r.receipts_read},
          {"scopes", scopes},
          {"findings_total", r.findings_total},
          {"findings", findings},
          {"oldest_waiting", r.oldest_waiting ? ToJson(*r.oldest_waiting) : json()}};
}

json ProfileJson(const Scope& scope, const Profile& p, const std::vector<Fact>& facts) {
  json slots = json::array();
  for (const auto& s : p.slots) {
    slots.push_back({{"dimension", s.dimension}, {"value", s.value}, {"evidence_pages", s.evidence_pages},
                     {"updated_at", FormatIso8601(s.updated_at)}});
  }
  json uf = json::array(), af = json::array();
  for (const auto& f : facts) (f.kind == "user" ? uf : af).push_back(ToJson(f));
  return {{"user", scope.user}, {"assistant", scope.assistant}, {"profile", slots},
          {"profile_text", p.text}, {"user_facts", uf}, {"assistant_facts", af}};
}

json RetrievalJson(const std::string& query, int budget, const RetrievalResult& r) {
  json items = json::array();
  for (const auto& i : r.items) items.push_back(ToJson(i));
  return {{"query", query}, {"budget", budget}, {"context_tokens", r.context_tokens},
          {"truncated", r.truncated}, {"items", items}, {"context", r.context}};
}

nlohmann::json ToJson(const ReceiptInfo& r) {
  return {{"id", r.id},
          {"run_id", r.run_id},
          {"assistant", r.scope.assistant},
          {"kind", r.memory_kind},
          {"memory_id", r.memory_id},
          {"version", r.version},
          {"from_tier", r.from_tier},
          {"to_tier", r.to_tier},
          {"status", r.status},
          {"at", FormatIso8601(r.at_utc)},
          {"source_version", r.source_version},
          {"depends_on_version", r.depends_on_version},
          {"outcome", r.outcome_receipt}};
}

}  // namespace engram::wire
