// CLI: engram serve (the HTTP server, docs/openapi.yaml) and engram keys
// create|list|revoke (its API keys).
#include <iostream>
#include <sstream>

#include "cli/canary_support.hpp"
#include "cli/commands.hpp"
#include "core/clock.hpp"
#include "core/time.hpp"
#include "models/openai/openai_client.hpp"
#include "server/api_keys.hpp"
#include "server/serve.hpp"
#include "store/db.hpp"

namespace engram::cli {

namespace {

nlohmann::json KeyJson(const server::ApiKeyInfo& k) {
  return {{"id", k.id},
          {"tenant", k.tenant},
          {"users", k.users},
          {"role", server::RoleName(k.role)},
          {"name", k.name},
          {"created_at", FormatIso8601(k.created_at)},
          {"revoked_at", k.revoked_at ? nlohmann::json(FormatIso8601(*k.revoked_at)) : nlohmann::json(nullptr)},
          {"expires_at", k.expires_at ? nlohmann::json(FormatIso8601(*k.expires_at)) : nlohmann::json(nullptr)},
          {"last_used_at", k.last_used_at ? nlohmann::json(FormatIso8601(*k.last_used_at)) : nlohmann::json(nullptr)}};
}

// The key table of the store (opening the engine first creates or checks it).
int OpenKeys(Cli& cli, std::unique_ptr<server::ApiKeys>* keys) {
  EngineOptions o;
  if (int code = cli.OpenEngine(std::move(o))) return code;
  auto k = server::ApiKeys::Open(cli.DbPath());
  if (!k.ok()) return Fail(k.status());
  *keys = std::move(*k);
  return 0;
}

// Where `engram serve` writes its first admin key: next to the store file,
// or in the home directory when the store is not a file (a PostgreSQL URL,
// ":memory:").
std::string AdminKeyFile(const Cli& cli) {
  auto where = sql::ParseLocation(cli.DbPath());
  if (!where.ok() || where->dialect != sql::Dialect::kSqlite || where->target == ":memory:") {
    return cli.HomeDir() + "/admin.key";
  }
  const auto slash = where->target.find_last_of('/');
  if (slash == std::string::npos) return "./admin.key";
  return (slash == 0 ? std::string() : where->target.substr(0, slash)) + "/admin.key";
}

// "90d", "12h", "30m", "45s" -> milliseconds; 0 when malformed.
TimeMs ParseDurationMs(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 9 || digits + 1 != text.size()) return 0;
  const TimeMs n = std::stoll(text.substr(0, digits));
  switch (text.back()) {
    case 'd': return n * 86'400'000;
    case 'h': return n * 3'600'000;
    case 'm': return n * 60'000;
    case 's': return n * 1000;
    default: return 0;
  }
}

}  // namespace

void RegisterServeCommands(CLI::App& app, Cli& cli, int& code) {
  auto* serve = app.add_subcommand("serve", "Run the HTTP server (REST API under /v1, docs/openapi.yaml)");
  static std::string listen = "127.0.0.1:8420";
  static int threads = 8, max_body_mb = 32, max_connections = 512;
  static bool no_auth = false, access_log = false;
  serve->add_option("--listen", listen, "HOST:PORT to listen on (port 0: any free port)");
  serve->add_option("--threads", threads, "Requests served by the engine at once (connections are not limited by it)")
      ->check(CLI::Range(1, 1024));
  // Connection threads are cheap; the cap stays below select()'s 1024 descriptors.
  serve->add_option("--max-connections", max_connections,
                    "Open connections; a new one beyond is answered 503 and closed")
      ->check(CLI::Range(1, 900));
  serve->add_option("--max-body", max_body_mb, "Largest request body in MiB")->check(CLI::Range(1, 4096));
  serve->add_flag("--no-auth", no_auth, "No API keys (refused unless listening on loopback)");
  serve->add_flag("--access-log", access_log, "Print one line per request (method, path, status, time, request id)");
  static bool no_worker = false;
  static int job_lease = EngineOptions{}.job_lease_seconds;
  serve->add_flag("--no-worker", no_worker,
                  "Serve only: no background maintenance (admissions leave jobs pending for engram worker)");
  AddJobLeaseOption(serve, job_lease);
  static std::size_t snapshot_cache_mb = EngineOptions{}.snapshot_cache_mb;
  serve->add_option("--snapshot-cache", snapshot_cache_mb,
                    "Memory in MiB the cached retrieval snapshots of scopes may take; beyond it the least recently "
                    "used are dropped and rebuilt when needed")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  static double rate_limit = 0;
  serve->add_option("--rate-limit", rate_limit,
                    "Requests a second each API key may make (burst: one second's worth; 0 = no limit); "
                    "beyond it 429 with Retry-After")
      ->check(CLI::Range(0.0, 1e6));
  static std::string quota_turns, quota_memories, quota_bytes;
  static std::vector<std::string> tenant_quotas;
  serve->add_option("--quota-turns", quota_turns, "Turns each tenant may hold (default: no limit); beyond it 429");
  serve->add_option("--quota-memories", quota_memories, "Live memories each tenant may hold (default: no limit)");
  serve->add_option("--quota-bytes", quota_bytes,
                    "Bytes of turn and memory text each tenant may hold, e.g. 500M (default: no limit)");
  serve->add_option("--tenant-quota", tenant_quotas,
                    "One tenant's quotas, instead of the --quota-* ones: TENANT:turns=N,memories=N,bytes=SIZE "
                    "(repeatable; 0 = no limit)");
  // The memory proxy (/v1/chat/completions, /v1/responses): how memory enters the prompt.
  static server::ApiOptions::Proxy proxy;
  serve->add_option("--proxy-budget", proxy.budget_tokens, "Memory tokens the OpenAI-compatible proxy adds at most")
      ->check(CLI::Range(50, 32000));
  serve->add_option("--proxy-position", proxy.position,
                    "Where the chat-completions proxy's memory message goes: first (after the caller's system "
                    "messages) or last (just before the last message); the Responses API's memory always "
                    "follows the request's instructions")
      ->check(CLI::IsMember({"first", "last"}));
  serve->add_option("--proxy-template", proxy.template_text,
                    "The proxy's memory message; {memory} is replaced by the retrieved context")
      ->check([](const std::string& t) {
        return t.find("{memory}") == std::string::npos ? std::string("must contain {memory}") : std::string();
      });
  serve->callback([&] {
    server::ServeOptions o;
    if (Status st = server::ParseListen(listen, &o.host, &o.port); !st.ok()) {
      code = Fail(st);
      return;
    }
    o.http.threads = threads;
    o.http.max_connections = max_connections;
    o.http.max_body_bytes = static_cast<std::size_t>(max_body_mb) << 20;
    o.auth = !no_auth;
    o.access_log = access_log;
    o.tenant = cli.g.tenant;
    o.db_path = cli.DbPath();
    o.admin_key_file = AdminKeyFile(cli);
    o.open_engine = [&cli]() -> Result<std::unique_ptr<Engine>> {
      EngineOptions opts;
      opts.background_maintenance = !no_worker;
      opts.job_lease_seconds = job_lease;
      opts.snapshot_cache_mb = snapshot_cache_mb;
      ENGRAM_RETURN_IF_ERROR(cli.ConfigureModels(opts));
      opts.db_path = cli.DbPath();
      return Engine::Open(std::move(opts));
    };
    o.model_counters = [&cli] {
      server::ModelCounters m;
      for (const auto& client : {cli.llm_client, cli.embed_client}) {
        if (!client) continue;
        const ClientStats s = client->Stats();
        m.chat_calls += s.chat_calls;
        m.embed_calls += s.embed_calls;
        m.failures += s.failures;
        m.retries += s.retries;
        m.prompt_tokens += s.prompt_tokens;
        m.completion_tokens += s.completion_tokens;
      }
      return m;
    };
    o.chat_model = [&cli] { return cli.llm_client != nullptr; };
    o.upstream = [&cli]() -> ChatPassthrough* { return cli.llm_client.get(); };
    o.proxy = proxy;
    o.rate_limit_per_s = rate_limit;
    // POST /v1/canary: `engram canary` on this store in a child process (its
    // own engine, throwaway scopes of tenant engram-canary), as an operator
    // would run it beside the server.
    o.canary = [&cli]() {
      CanaryRestart child;
      child.global_args = {"--home", cli.HomeDir(), "--json"};
      child.db = cli.DbPath();
      for (const auto& [flag, value] : {std::pair{"--llm-base-url", &cli.g.llm_base_url},
                                        {"--llm-model", &cli.g.llm_model},
                                        {"--embed-base-url", &cli.g.embed_base_url},
                                        {"--embed-model", &cli.g.embed_model}}) {
        if (!value->empty()) child.global_args.insert(child.global_args.end(), {flag, *value});
      }
      std::string out;
      const int exit_code = canary::RunChild(child, {"canary"}, &out);
      nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
      if (!j.is_object()) {
        j = {{"ok", false}, {"checks", nlohmann::json::array()},
             {"error", "the canary gave no report (exit code " + std::to_string(exit_code) + ")"}};
      }
      j.erase("db");  // the store's location is not the caller's business
      j["exit_code"] = exit_code;
      return j;
    };
    const std::pair<const char*, const std::string*> every[] = {
        {"turns", &quota_turns}, {"memories", &quota_memories}, {"bytes", &quota_bytes}};
    for (const auto& [what, value] : every) {
      if (value->empty()) continue;
      if (Status st = server::ParseQuota(std::string(what) + "=" + *value, &o.quota); !st.ok()) {
        code = Fail(2, "--quota-" + std::string(what) + ": " + st.message());
        return;
      }
    }
    for (const auto& spec : tenant_quotas) {
      const auto colon = spec.rfind(':', spec.find('='));
      server::ApiOptions::Quota q;
      Status st = colon == std::string::npos || colon == 0
                      ? Status::InvalidArgument("expected TENANT:turns=N,memories=N,bytes=SIZE, got \"" + spec + "\"")
                      : server::ParseQuota(spec.substr(colon + 1), &q);
      if (!st.ok()) {
        code = Fail(2, "--tenant-quota: " + st.message());
        return;
      }
      o.tenant_quotas[spec.substr(0, colon)] = q;
    }
    code = server::Serve(o, std::cout);
  });

  auto* keys = app.add_subcommand("keys", "Manage the API keys of engram serve");
  keys->require_subcommand(1);
  static std::string users, role = "write", name, id, expires_in, expires_at;
  auto* create = keys->add_subcommand("create", "Create a key for a tenant (printed once)");
  create->add_option("--users", users, "Only these users (comma-separated; default: every user of the tenant)");
  create->add_option("--role", role,
                     "read, write, admin (of the tenant) or operator (admin, and /metrics of the whole store)");
  create->add_option("--name", name, "A label for the key");
  auto* in_opt = create->add_option("--expires-in", expires_in, "Refused after this long: 90d, 12h, 30m or 45s");
  create->add_option("--expires-at", expires_at, "Refused from this time on (ISO 8601, UTC)")->excludes(in_opt);
  create->callback([&] {
    auto parsed_role = server::ParseRole(role);
    if (!parsed_role.ok()) {
      code = Fail(2, "--role: expected read, write, admin or operator, got \"" + role + "\"");
      return;
    }
    const TimeMs now = SystemClock::Default().NowMs();
    std::optional<TimeMs> expiry;
    if (!expires_in.empty()) {
      const TimeMs d = ParseDurationMs(expires_in);
      if (d <= 0) {
        code = Fail(2, "--expires-in: expected a positive number with d, h, m or s (e.g. 90d), got \"" + expires_in + "\"");
        return;
      }
      expiry = now + d;
    } else if (!expires_at.empty()) {
      auto t = ParseTime(expires_at);
      if (!t.ok() || *t <= now) {
        code = Fail(2, "--expires-at: " + (t.ok() ? std::string("must be in the future") : t.status().message()));
        return;
      }
      expiry = *t;
    }
    std::unique_ptr<server::ApiKeys> k;
    if ((code = OpenKeys(cli, &k))) return;
    auto r = k->Create(cli.g.tenant, SplitCsv(users), *parsed_role, name, now, expiry);
    if (!r.ok()) {
      code = Fail(r.status());
      return;
    }
    if (cli.g.json) {
      auto j = KeyJson(r->first);
      j["key"] = r->second;
      PrintJson(j);
    } else {
      std::cout << r->second << "\n";
      std::cerr << "engram: created key " << r->first.id << " (tenant " << r->first.tenant << ", role " << role
                << (r->first.users.empty() ? ", every user" : ", users " + users)
                << (expiry ? ", expires " + FormatIso8601(*expiry) : std::string())
                << "). It is shown only now: store it safely.\n";
    }
  });
  auto* list = keys->add_subcommand("list", "List the keys of the tenant (ids and rights, never the keys)");
  static bool all_tenants = false;
  list->add_flag("--all-tenants", all_tenants, "Every tenant's keys");
  list->callback([&] {
    std::unique_ptr<server::ApiKeys> k;
    if ((code = OpenKeys(cli, &k))) return;
    auto r = k->List(all_tenants ? "" : cli.g.tenant);
    if (!r.ok()) {
      code = Fail(r.status());
      return;
    }
    nlohmann::json out = nlohmann::json::array();
    for (const auto& key : *r) out.push_back(KeyJson(key));
    if (cli.g.json) {
      PrintJson({{"keys", out}});
      return;
    }
    if (r->empty()) std::cout << "(no keys)\n";
    for (const auto& key : *r) {
      std::string who;
      for (const auto& u : key.users) who += (who.empty() ? "" : ",") + u;
      const TimeMs now = SystemClock::Default().NowMs();
      const bool expired = key.expires_at && *key.expires_at <= now;
      std::cout << key.id << "  " << key.tenant << "  " << server::RoleName(key.role) << "  "
                << (who.empty() ? "*" : who) << "  " << FormatIso8601(key.created_at)
                << (key.revoked_at ? "  revoked " + FormatIso8601(*key.revoked_at) : std::string())
                << (key.expires_at ? (expired ? "  expired " : "  expires ") + FormatIso8601(*key.expires_at)
                                   : std::string())
                << "  last used " << (key.last_used_at ? FormatIso8601(*key.last_used_at) : std::string("never"))
                << "  " << key.name << "\n";
    }
  });
  auto* revoke = keys->add_subcommand("revoke", "Revoke a key (takes effect on its next request)");
  revoke->add_option("ID", id, "The key id (from keys list)")->required();
  revoke->callback([&] {
    std::unique_ptr<server::ApiKeys> k;
    if ((code = OpenKeys(cli, &k))) return;
    if (Status st = k->Revoke(id, SystemClock::Default().NowMs()); !st.ok()) {
      code = Fail(st);
      return;
    }
    if (cli.g.json) PrintJson({{"id", id}, {"revoked", true}});
    else std::cout << "revoked " << id << "\n";
  });
}

}  // namespace engram::cli
