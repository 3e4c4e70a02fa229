// Routes for inspection and operations: profile, stats, health (lineage),
// jobs, and the Prometheus metrics.
#include <set>

#include "server/api.hpp"
#include "wire/json.hpp"

namespace engram::server {

using nlohmann::json;

namespace {

void AddStats(engram::Stats& t, const engram::Stats& s) {
  t.stm_turns += s.stm_turns;
  t.mtm_pages += s.mtm_pages;
  t.mtm_segments += s.mtm_segments;
  t.archived_pages += s.archived_pages;
  t.archived_segments += s.archived_segments;
  t.user_facts += s.user_facts;
  t.assistant_facts += s.assistant_facts;
  t.profile_slots += s.profile_slots;
  t.pending_jobs += s.pending_jobs;
  t.failed_jobs += s.failed_jobs;
  t.turns_admitted += s.turns_admitted;
  t.degraded_items += s.degraded_items;
}

// A key limited to some users must name one of them where a report would
// otherwise list every user of the tenant.
std::string ReportUser(const Call& c, wire::Args& a) {
  const std::string user = a.Str("user", false);
  CheckArgs(a);
  if (!user.empty()) RequireUser(c, user);
  if (user.empty() && !c.who.AllUsers()) {
    Throw(403, "forbidden", "user: this API key is limited to some users; name one of them", "user");
  }
  return user;
}

}  // namespace

void Api::RegisterAdmin(HttpServer& s) {
  Add(s, "GET", "/v1/profile", Role::kRead, false, [this](Call& c) { return Profile(c); });
  Add(s, "GET", "/v1/stats", Role::kRead, false, [this](Call& c) { return Stats(c); });
  Add(s, "GET", "/v1/health", Role::kRead, false, [this](Call& c) { return Health(c); });
  Add(s, "POST", "/v1/health/verify", Role::kAdmin, true, [this](Call& c) { return VerifyHealth(c); },
      kQueryBodyBytes);
  Add(s, "GET", "/v1/jobs", Role::kRead, false, [this](Call& c) { return Jobs(c); });
  Add(s, "POST", "/v1/jobs/retry", Role::kAdmin, true, [this](Call& c) { return RetryJobs(c); },
      kQueryBodyBytes);
}

HttpResponse Api::Profile(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "assistant"});
  CheckArgs(a);
  const Scope scope = TurnScope(c);
  auto profile = Check(engine().GetProfile(scope));
  auto facts = Check(engine().ListFacts(scope, ""));
  return Json(200, wire::ProfileJson(scope, profile, facts));
}

engram::Stats Api::VisibleStats(const Call& c, const std::string& user,
                                const std::string& assistant, std::int64_t* scopes) {
  if (scopes) *scopes = 0;
  if (!user.empty() && !c.who.AllowsUser(user)) return {};
  if (!user.empty() || c.who.AllUsers())
    return Check(engine().GetScopeSetStats(c.who.tenant, user, assistant, scopes));
  engram::Stats total;
  // (Each user once: a key made before its users were kept distinct may list one twice.)
  for (const auto& allowed : std::set<std::string>(c.who.users.begin(), c.who.users.end())) {
    std::int64_t n = 0;
    AddStats(total, Check(engine().GetScopeSetStats(c.who.tenant, allowed, assistant, &n)));
    if (scopes) *scopes += n;
  }
  return total;
}

HttpResponse Api::Stats(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "assistant"});
  const std::string user = a.Str("user", false), assistant = a.Str("assistant", false);
  CheckArgs(a);
  if (!user.empty()) RequireUser(c, user);
  std::int64_t scopes = 0;
  const engram::Stats total = VisibleStats(c, user, assistant, &scopes);
  json j = wire::ToJson(total);
  j["scopes"] = scopes;
  j["tenant"] = c.who.tenant;
  if (!user.empty()) j["user"] = user;
  if (!assistant.empty()) j["assistant"] = assistant;
  return Json(200, j);
}

HttpResponse Api::Health(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "max_findings"});
  HealthOptions o;
  o.max_findings = static_cast<int>(a.Int("max_findings", 0, 10000).value_or(o.max_findings));
  o.tenant = c.who.tenant;
  o.user = ReportUser(c, a);
  return Json(200, wire::ToJson(Check(engine().Health(o))));
}

HttpResponse Api::VerifyHealth(Call& c) {
  wire::Args a(c.body, "field");
  a.Only({"user"});
  HealthOptions o;
  o.tenant = c.who.tenant;
  o.user = ReportUser(c, a);
  return Json(200, {{"scopes_verified", Check(engine().VerifyLineage(o))}});
}

HttpResponse Api::Jobs(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "status", "limit"});
  JobQuery q;
  q.status = a.Str("status", false);
  q.limit = static_cast<int>(a.Int("limit", 1, 10000).value_or(1000));
  q.tenant = c.who.tenant;
  q.user = ReportUser(c, a);
  json jobs = json::array();
  std::int64_t pending = 0, failed = 0;
  for (const auto& j : Check(engine().ListJobs(q))) {
    (j.status == "failed" ? failed : pending) += 1;
    jobs.push_back(wire::ToJson(j));
  }
  return Json(200, {{"jobs", jobs}, {"pending", pending}, {"failed", failed}});
}

HttpResponse Api::RetryJobs(Call& c) {
  wire::Args a(c.body, "field");
  a.Only({"user"});
  JobQuery q;
  q.tenant = c.who.tenant;
  q.user = ReportUser(c, a);
  return Json(200, {{"retried", Check(engine().RetryFailedJobs(q))}});
}

HttpResponse Api::MetricsText(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({});
  CheckArgs(a);
  // An operator key sees the whole store and this process; a tenant's admin
  // sees its tenant's series only (the users its key may name).
  const bool store_wide = c.who.Can(Role::kOperator);
  std::string out = store_wide ? metrics_.Render() : std::string();
  engram::Stats s;
  if (store_wide) {
    s = Check(engine().GetStats(nullptr));  // counts, no content
  } else {
    s = VisibleStats(c, "", "", nullptr);
  }
  const std::string own = store_wide ? std::string() : "tenant=\"" + LabelValue(c.who.tenant) + "\"";
  auto with = [&own](const std::string& labels) {
    return own.empty() ? labels : labels.empty() ? own : own + "," + labels;
  };
  const char* tier_help = store_wide ? "Memory items held now, by tier (whole store)."
                                     : "Memory items held now, by tier (this tenant).";
  const std::pair<const char*, std::int64_t> tiers[] = {
      {"stm", s.stm_turns},          {"mtm_pages", s.mtm_pages},         {"mtm_segments", s.mtm_segments},
      {"archive_pages", s.archived_pages}, {"user_facts", s.user_facts}, {"assistant_facts", s.assistant_facts},
      {"profile_slots", s.profile_slots}};
  bool first = true;
  for (const auto& [tier, n] : tiers) {
    AppendSample(out, "engram_memory_items", first ? tier_help : "", "gauge", with(std::string("tier=\"") + tier + "\""),
                 static_cast<double>(n));
    first = false;
  }
  AppendSample(out, "engram_turns_admitted", "Turns admitted since the store was created.", "gauge", with(""),
               static_cast<double>(s.turns_admitted));
  AppendSample(out, "engram_jobs", "Maintenance jobs by state.", "gauge", with("state=\"pending\""),
               static_cast<double>(s.pending_jobs));
  AppendSample(out, "engram_jobs", "", "gauge", with("state=\"failed\""), static_cast<double>(s.failed_jobs));
  const std::int64_t items = s.mtm_pages + s.archived_pages + s.user_facts + s.assistant_facts + s.profile_slots;
  AppendSample(out, "engram_degraded_share",
               "Share of derived memory items made by the built-in engine instead of a model.", "gauge", with(""),
               items ? static_cast<double>(s.degraded_items) / static_cast<double>(items) : 0.0);
  if (store_wide) {  // this process's snapshot cache (every tenant's scopes)
    const SnapshotCacheStats sc = engine().GetSnapshotCacheStats();
    AppendSample(out, "engram_snapshot_cache_bytes",
                 "Memory the retrieval snapshots cached by this process take (estimated).", "gauge", "",
                 static_cast<double>(sc.bytes));
    AppendSample(out, "engram_snapshot_cache_budget_bytes", "Their budget (--snapshot-cache).", "gauge", "",
                 static_cast<double>(sc.budget_bytes));
    AppendSample(out, "engram_snapshot_cache_scopes", "Scopes whose retrieval snapshot this process keeps.", "gauge",
                 "", static_cast<double>(sc.scopes));
    AppendSample(out, "engram_snapshot_cache_evictions_total",
                 "Snapshots dropped to stay within the budget (least recently used first).", "counter", "",
                 static_cast<double>(sc.evictions));
    AppendSample(out, "engram_fact_snapshot_cache_bytes",
                 "Memory the fact snapshots (fact search, consolidation) cached by this process take (estimated; "
                 "a budget of the size of the retrieval snapshots' own).",
                 "gauge", "", static_cast<double>(sc.fact_bytes));
    AppendSample(out, "engram_fact_snapshot_cache_scopes", "Scopes whose fact snapshot this process keeps.", "gauge",
                 "", static_cast<double>(sc.fact_scopes));
    AppendSample(out, "engram_fact_snapshot_cache_evictions_total",
                 "Fact snapshots dropped to stay within their budget (least recently used first).", "counter", "",
                 static_cast<double>(sc.fact_evictions));
  }
  {
    std::lock_guard<std::mutex> lock(tenant_mu_);
    bool first_request = true;
    for (const auto& [key, n] : tenant_requests_) {
      const auto& [tenant, route, method, status] = key;
      if (!store_wide && tenant != c.who.tenant) continue;
      AppendSample(out, "engram_tenant_requests_total",
                   first_request ? "Authenticated requests answered, by tenant, route, method and status." : "",
                   "counter",
                   "tenant=\"" + LabelValue(tenant) + "\",route=\"" + LabelValue(route) + "\",method=\"" + method +
                       "\",status=\"" + std::to_string(status) + "\"",
                   static_cast<double>(n));
      first_request = false;
    }
  }
  {
    std::lock_guard<std::mutex> lock(rate_mu_);
    bool first_limited = true;
    for (const auto& [tenant, n] : rate_limited_) {
      if (!store_wide && tenant != c.who.tenant) continue;
      AppendSample(out, "engram_rate_limited_total",
                   first_limited ? "Requests refused with 429 by the per-key rate limit, by tenant." : "", "counter",
                   "tenant=\"" + LabelValue(tenant) + "\"", static_cast<double>(n));
      first_limited = false;
    }
  }
  AppendQuotaMetrics(out, store_wide ? "" : c.who.tenant);
  auto text = [](std::string body) {
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = std::move(body);
    return r;
  };
  if (!store_wide) return text(std::move(out));
  // This process's model clients and memory proxy: the operator's view only.
  const ModelCounters m = options_.model_counters ? options_.model_counters() : ModelCounters{};
  AppendSample(out, "engram_model_calls_total", "Calls to the configured model endpoints.", "counter",
               "kind=\"chat\"", static_cast<double>(m.chat_calls));
  AppendSample(out, "engram_model_calls_total", "", "counter", "kind=\"embed\"", static_cast<double>(m.embed_calls));
  AppendSample(out, "engram_model_failures_total", "Model calls that failed after their retries.", "counter", "",
               static_cast<double>(m.failures));
  AppendSample(out, "engram_model_retries_total", "Model call attempts retried.", "counter", "",
               static_cast<double>(m.retries));
  AppendSample(out, "engram_model_tokens_total", "Tokens reported by the model endpoint.", "counter",
               "direction=\"prompt\"", static_cast<double>(m.prompt_tokens));
  AppendSample(out, "engram_model_tokens_total", "", "counter", "direction=\"completion\"",
               static_cast<double>(m.completion_tokens));
  AppendSample(out, "engram_proxy_calls_total", "Chat completions answered through the memory proxy.", "counter", "",
               static_cast<double>(proxy_calls_.load()));
  AppendSample(out, "engram_proxy_memory_tokens_total", "Memory tokens the proxy added to prompts.", "counter", "",
               static_cast<double>(proxy_memory_tokens_.load()));
  AppendSample(out, "engram_proxy_upstream_failures_total",
               "Proxied calls whose model endpoint failed or answered an error.", "counter", "",
               static_cast<double>(proxy_upstream_failures_.load()));
  AppendSample(out, "engram_proxy_not_admitted_total",
               "Proxied answers with a user that were not admitted (no text, cut off, or the admission failed).",
               "counter", "", static_cast<double>(proxy_skipped_.load() + proxy_admit_failures_.load()));
  return text(std::move(out));
}

}  // namespace engram::server
