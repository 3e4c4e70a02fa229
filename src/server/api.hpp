// The REST API of `engram serve` (docs/openapi.yaml): /v1 routes over the
// engine, plus /healthz, /readyz and /metrics. Every request is authenticated
// by its API key, which fixes the tenant and the users it may name; the
// engine enforces the scope of every operation. Errors share one envelope:
// {"error": {"code", "message", "request_id"[, "field"]}}.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engram/engine.hpp"
#include "models/llm.hpp"
#include "server/api_keys.hpp"
#include "server/http_server.hpp"
#include "server/metrics.hpp"
#include "server/request_log.hpp"
#include "wire/args.hpp"

namespace engram::server {

// Body limits of the routes, each also capped by --max-body. Reads and
// operations take a query and options; one memory or chat message carries
// texts of up to 256 KiB (a turn's limit) with metadata; batches of turns
// and imports may be as large as --max-body (32 MiB by default).
inline constexpr std::size_t kQueryBodyBytes = 64u << 10;
inline constexpr std::size_t kWriteBodyBytes = 2u << 20;
inline constexpr std::size_t kBulkBodyBytes = 0;  // --max-body
// The most JSON values (objects, arrays, scalars) one JSON body may hold:
// the parsed tree costs up to about 100 bytes a value, whatever their size
// in the text ("[{},{},...]" is 3 bytes a value), so this bounds it.
inline constexpr std::size_t kMaxBodyValues = 500000;

// Counters of the configured model clients (for /metrics).
struct ModelCounters {
  std::int64_t chat_calls = 0, embed_calls = 0, failures = 0, retries = 0;
  std::int64_t prompt_tokens = 0, completion_tokens = 0;
};

struct ApiOptions {
  // false (--no-auth, loopback only): every request acts as an admin of
  // `no_auth_tenant` with every user.
  bool auth = true;
  std::string no_auth_tenant = "default";
  std::function<ModelCounters()> model_counters;  // null when no model is configured
  // Requests per second each API key may make (0 = no limit), with a burst of
  // one second's worth; beyond it: 429 `rate_limited` with Retry-After.
  double rate_limit_per_s = 0;
  // Per-tenant quotas (0 = no limit): turns in the turn log, live memories,
  // and bytes of their texts (TenantUsage). `quota` holds for every tenant,
  // `tenant_quotas` overrides it for some. A write that would go over is
  // refused whole with 429 `quota_exceeded` (nothing written; what is stored
  // stays); a retry of a request accepted earlier (same idempotency key)
  // still gets its first answer.
  struct Quota {
    std::int64_t turns = 0, memories = 0, bytes = 0;
  };
  Quota quota;
  std::map<std::string, Quota> tenant_quotas;
  // The memory proxy (/v1/chat/completions, /v1/responses): the model
  // endpoint it forwards to (null, or returning null: no model configured,
  // the routes answer 409; asked per request, since models are configured
  // when the store opens), and how memory enters the prompt: rendered from
  // `template_text` ({memory} = the retrieved context), in a chat completion
  // a system message after the caller's leading system messages ("first") or
  // just before the last message ("last"); in a Responses request, after the
  // caller's `instructions`, which a chained response does not inherit.
  std::function<ChatPassthrough*()> upstream;
  // Runs `engram canary` on this store and returns its report (POST
  // /v1/canary); null: the route answers 409.
  std::function<nlohmann::json()> canary;
  struct Proxy {
    int budget_tokens = 1000;
    std::string template_text =
        "Relevant memory of earlier conversations with this user (use it when it helps; it may be "
        "incomplete):\n{memory}";
    std::string position = "first";
  } proxy;
};

// A failed request: the HTTP status and the envelope's fields.
struct ApiError {
  int status = 500;
  std::string code;
  std::string message;
  std::string field;  // "" when not about one field
};

// The value of a result, or throws its ApiError (defined below; declared here
// for the templates of Api: clang looks names up where a template is defined).
template <typename T>
T Check(Result<T> r);

// One authenticated request being answered.
struct Call {
  const HttpRequest& req;
  Principal who;
  nlohmann::json body;  // the JSON body (an object; {} for requests without one)
};

struct ProxyShape;  // api_proxy.cpp: what differs between the proxied APIs

class Api {
 public:
  Api(ApiOptions options, Metrics& metrics);

  // Registers every route; call before HttpServer::Bind.
  void Register(HttpServer& server);
  // From now on /readyz is 200 and /v1 requests reach `engine` (both must
  // outlive the server's Run). `chat_model`: a model that answers chat is
  // configured.
  void SetReady(Engine* engine, ApiKeys* keys, bool chat_model);
  // The envelope for a status the transport produced itself (`detail`: its
  // message, when the transport gave one).
  HttpResponse TransportError(int status, const std::string& request_id, const std::string& detail = "") const;

 private:
  using Body = bool;  // whether a route reads a JSON body
  using Handler = std::function<HttpResponse(Call&)>;
  // Wraps a handler: readiness, authentication, role, JSON body; an ApiError
  // thrown inside becomes its envelope (caught here, never crosses layers).
  // `max_body`: the route's body limit (kQueryBodyBytes for reads and
  // operations, kWriteBodyBytes for one write, kBulkBodyBytes for batches).
  void Add(HttpServer& s, const char* method, const char* path, Role role, Body json_body, Handler h,
           std::size_t max_body = kWriteBodyBytes);
  // The body of a route added by Add: its response; *tenant is set once the key is known.
  HttpResponse Answer(const HttpRequest& req, Role role, Body json_body, const Handler& h, std::string* tenant);

  // Route groups (api_turns.cpp, api_memories.cpp, api_admin.cpp).
  void RegisterTurns(HttpServer& s);
  void RegisterMemories(HttpServer& s);
  void RegisterAdmin(HttpServer& s);
  void RegisterMem0(HttpServer& s);   // api_mem0.cpp: Mem0's client routes under /mem0
  void RegisterProxy(HttpServer& s);  // api_proxy.cpp: the OpenAI-compatible memory proxy
  // One exchange of the memory proxy, in the API `shape` describes (api_proxy.cpp).
  HttpResponse ProxyExchange(Call& c, const ProxyShape& shape);
  void RegisterInspect(HttpServer& s);  // api_inspect.cpp: what the inspector (ui/) reads
  void RegisterMcp(HttpServer& s);      // api_mcp.cpp: MCP over HTTP (POST /mcp)

  // Turns and dialogue.
  HttpResponse AddTurns(Call& c);
  HttpResponse ListTurns(Call& c);
  HttpResponse Retrieve(Call& c);
  HttpResponse Chat(Call& c);
  HttpResponse Import(Call& c);
  HttpResponse Export(Call& c);
  HttpResponse Maintain(Call& c);
  HttpResponse Forget(Call& c);
  // Fact memory.
  HttpResponse AddMemory(Call& c);
  HttpResponse SearchMemories(Call& c);
  HttpResponse ListMemories(Call& c);
  HttpResponse DeleteAllMemories(Call& c);
  HttpResponse GetMemory(Call& c);
  HttpResponse UpdateMemory(Call& c);
  HttpResponse DeleteMemory(Call& c);
  HttpResponse MemoryHistory(Call& c);
  HttpResponse MemoryReceipts(Call& c);
  HttpResponse PurgeMemory(Call& c);
  HttpResponse PurgeMemories(Call& c);
  // Inspection and operations.
  HttpResponse Profile(Call& c);
  HttpResponse Stats(Call& c);
  HttpResponse Health(Call& c);
  HttpResponse VerifyHealth(Call& c);
  HttpResponse Jobs(Call& c);
  HttpResponse RetryJobs(Call& c);
  HttpResponse MetricsText(Call& c);
  // The inspector's reads (api_inspect.cpp).
  HttpResponse WhoAmI(Call& c);
  HttpResponse Users(Call& c);
  HttpResponse Segments(Call& c);
  HttpResponse Receipts(Call& c);
  HttpResponse Activity(Call& c);
  HttpResponse Requests(Call& c);
  HttpResponse Canary(Call& c);

  // The scopes of the caller's tenant that it may see (all users, or `user`
  // only when not empty), from the engine.
  std::vector<Scope> VisibleScopes(const Call& c, const std::string& user);
  // The statistics of those scopes together (of `assistant`'s only when not
  // empty), and how many scopes that is: one read for a key that sees every
  // user, one per user for a key limited to some.
  engram::Stats VisibleStats(const Call& c, const std::string& user, const std::string& assistant,
                             std::int64_t* scopes);

  ApiOptions options_;
  Metrics& metrics_;
  std::atomic<Engine*> engine_{nullptr};
  std::atomic<ApiKeys*> keys_{nullptr};
  std::atomic<bool> chat_model_{false};
  // Per-key token buckets of the rate limit (rate_limit_per_s), and the
  // refusals per tenant (/metrics).
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point at;
  };
  // 0 when the key may go on; else the seconds to wait.
  int TakeToken(const Principal& who);
  std::mutex rate_mu_;
  std::map<std::string, Bucket> buckets_;            // by key id, guarded by rate_mu_
  std::map<std::string, std::int64_t> rate_limited_;  // by tenant, guarded by rate_mu_
  // Quotas (api_quota.cpp). What one write asks for.
  struct QuotaAsk {
    std::int64_t turns = 0, memories = 0, bytes = 0;
  };
  // A write's claim on its tenant's quotas, from CheckQuota until the write
  // is done: what the requests in flight ask for counts against the quotas,
  // so that parallel writes cannot pass a limit together. Charge() once the
  // write is stored (the claim becomes usage); a hold that ends uncharged
  // (an error, a replay) lets its claim go.
  class QuotaHold {
   public:
    QuotaHold() = default;
    QuotaHold(Api* api, std::string tenant, QuotaAsk ask, std::string over)
        : api_(api), tenant_(std::move(tenant)), ask_(ask), over_(std::move(over)) {}
    QuotaHold(QuotaHold&& o) noexcept { *this = std::move(o); }
    QuotaHold& operator=(QuotaHold&& o) noexcept;
    QuotaHold(const QuotaHold&) = delete;
    QuotaHold& operator=(const QuotaHold&) = delete;
    ~QuotaHold() { Release(); }
    // The quota a keyed write is over ("" when within them): the caller
    // passes replay_only so that only a retry of an accepted request goes
    // through (CheckWrite counts the refusal).
    const std::string& over() const { return over_; }
    // The write was stored: `stored` (what it took, which may differ from
    // the claim: an answer's bytes, an inference's facts) becomes usage.
    void Charge(const QuotaAsk& stored);
    void Charge() { Charge(ask_); }

   private:
    void Release();
    Api* api_ = nullptr;  // null: nothing claimed
    std::string tenant_;
    QuotaAsk ask_;
    std::string over_;
  };
  // 429 `quota_exceeded` (with Retry-After) when the write would take the
  // caller's tenant over a quota, counting the writes in flight, unless it
  // carries an idempotency key: then a hold naming the quota it is over.
  // Within the quotas: a hold claiming `ask` (none when the tenant has no
  // quota).
  QuotaHold CheckQuota(const Call& c, const QuotaAsk& ask, bool keyed);
  // The result of a write that CheckQuota let through: a refusal by the
  // engine (replay_only, not a retry) is counted against quota `over`.
  template <typename T>
  T CheckWrite(Result<T> r, const Call& c, const std::string& over);
  void CountQuotaRefusal(const std::string& tenant, const std::string& quota);
  // What admitting `turns` asks for (their count and text bytes).
  static QuotaAsk TurnsAsk(const std::vector<TurnInput>& turns);
  // What adding memories from `messages` asks for (one memory at least; the
  // bytes of the messages that are not system messages).
  static QuotaAsk MessagesAsk(const std::vector<MemoryMessage>& messages);
  // What a memory add that asked for `ask` took: the memories it added (an
  // inference may add several, or none), and the bytes asked for.
  static QuotaAsk AddedAsk(const MemoryAddResult& r, const QuotaAsk& ask);
  ApiOptions::Quota QuotaOf(const std::string& tenant) const;
  // The quota and usage series of `tenant` ("" = every tenant with a quota or
  // a refusal).
  void AppendQuotaMetrics(std::string& out, const std::string& tenant);
  // Usage of a tenant as last read from the store (at most kUsageMaxAgeMs
  // old) plus what was accepted since.
  struct CachedUsage {
    TenantUsage stored;
    QuotaAsk since;
    std::chrono::steady_clock::time_point at;
  };
  // The writes of a tenant under way (their holds) and what they claim; the
  // store is read only while none is (`reading` holds new claims back), so
  // that a read never misses a charged write nor counts one in flight twice.
  struct QuotaTraffic {
    int writers = 0;
    QuotaAsk claimed;
    bool reading = false;
  };
  std::mutex quota_mu_;
  std::condition_variable quota_cv_;  // a read of the store ended
  std::map<std::string, CachedUsage> usage_;    // guarded by quota_mu_
  std::map<std::string, QuotaTraffic> traffic_;  // by tenant; guarded by quota_mu_
  std::map<std::pair<std::string, std::string>, std::int64_t> quota_refused_;  // (tenant, quota), guarded
  // Requests answered per tenant (route pattern, method, status): the series
  // a tenant's admin sees in /metrics.
  void CountTenantRequest(const std::string& tenant, const std::string& route, const std::string& method, int status);
  std::mutex tenant_mu_;
  std::map<std::tuple<std::string, std::string, std::string, int>, std::uint64_t> tenant_requests_;  // guarded
  // Memory proxy counters (/metrics).
  std::atomic<std::int64_t> proxy_calls_{0}, proxy_memory_tokens_{0}, proxy_upstream_failures_{0};
  std::atomic<std::int64_t> proxy_skipped_{0}, proxy_admit_failures_{0};
  // The recent requests of each tenant (GET /v1/requests).
  RequestLog requests_;
  Engine& engine() const { return *engine_.load(); }
};

// Why a retrieved item is in the context (POST /v1/retrieve with explain):
// how it was chosen, the query terms its text matches, and for messages the
// speaker side, the time cue, neighbour evidence and vector use. `rank` is
// the item's place among the ranked messages (1 = best; 0 = not ranked).
nlohmann::json ExplainItem(const RetrievedItem& item, const std::string& query, bool semantic_embedder, int rank,
                           const RankingOptions& ranking);

// --- Helpers shared by the route files (api.cpp) ---

// Throws ApiError (status, code, message, field).
[[noreturn]] void Throw(int status, const std::string& code, const std::string& message,
                        const std::string& field = "");
// The ApiError for a failed engine status (InvalidArgument 400, NotFound
// 404, FailedPrecondition / Aborted / AlreadyExists 409, Unavailable 502,
// internal failures 500 without their details).
ApiError FromStatus(const Status& st);
// Throws FromStatus(st).
[[noreturn]] void ThrowStatus(const Status& st);
template <typename T>
T Check(Result<T> r) {
  if (!r.ok()) ThrowStatus(r.status());
  return std::move(*r);
}
inline void Check(const Status& st) {
  if (!st.ok()) ThrowStatus(st);
}
// 400 with the first argument problem, if any.
void CheckArgs(const wire::Args& a);
// 400 (`code`) when the JSON `text` nests deeper than json_limits::kMaxDepth,
// naming `field`, or when it is "" the top-level field where it does. Called
// on every JSON text from a client before it is parsed.
void CheckJsonDepth(std::string_view text, const std::string& field, const std::string& code);

// The request's parameters as one JSON object: the body of a request with a
// JSON body, else the query parameters (as strings, numbers and booleans
// converted where they parse as such).
const nlohmann::json& Params(const Call& c);
// The request's body as a JSON object ({} when empty); 400 when it is not one.
nlohmann::json ParseJsonBody(const HttpRequest& req);
// The request's idempotency key: `body_key` (its body's `idempotency_key`,
// "" when none) or else the Idempotency-Key header. A key that could mean
// two is refused (400) rather than guessed: the header sent more than once,
// or a header that differs from the body's key.
std::string IdempotencyKey(const Call& c, const std::string& body_key = "");
// The turn scope {tenant of the key, user (required), assistant (default
// "assistant")} from the parameters; 403 for a user outside the key's
// allowance.
Scope TurnScope(const Call& c);
// The fact-memory scope {tenant, user, agent, run} (at least one of the
// three); a key limited to users needs a user it allows (403 otherwise).
MemoryScope FactScope(const Call& c, bool allow_narrower);
// Who a memory's history names for this request: "key:<id>", or `anonymous`
// without authentication.
std::string ActorOf(const Call& c, const char* anonymous);
// 403 unless the key may act for `user`.
void RequireUser(const Call& c, const std::string& user);

template <typename T>
T Api::CheckWrite(Result<T> r, const Call& c, const std::string& over) {
  if (!r.ok() && r.status().code() == StatusCode::kResourceExhausted) CountQuotaRefusal(c.who.tenant, over);
  return Check(std::move(r));
}

HttpResponse Json(int status, const nlohmann::json& j);
HttpResponse ErrorResponse(const ApiError& e, const std::string& request_id);

}  // namespace engram::server
