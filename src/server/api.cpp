#include "server/api.hpp"

#include <strings.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <set>

#include "core/clock.hpp"
#include "core/json_keys.hpp"
#include "core/json_limits.hpp"
#include "server/serve.hpp"
#include "server/ui.hpp"
#include "store/errors.hpp"
#include "store/db.hpp"
#include "wire/args.hpp"
#include "wire/json.hpp"

namespace engram::server {

using nlohmann::json;

namespace {

// Query parameters that are numbers or booleans (query values are text).
const std::set<std::string>& NumericParams() {
  static const std::set<std::string> k = {"after", "limit", "top_k", "budget", "threshold", "max_findings", "days"};
  return k;
}
const std::set<std::string>& BooleanParams() {
  static const std::set<std::string> k = {"narrower", "include_expired", "explain", "archived"};
  return k;
}

// A decimal number as JSON writes one ("-12", "0.5", "1e3"): not "0x10",
// "inf", "nan" or " 7", which strtod would also read.
bool IsDecimalNumber(const std::string& v) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
    return i > from;
  };
  if (i < v.size() && v[i] == '-') ++i;
  if (!digits()) return false;
  if (i < v.size() && v[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    ++i;
    if (i < v.size() && (v[i] == '+' || v[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == v.size();
}

json QueryJson(const HttpRequest& req) {
  json j = json::object();
  for (const auto& [k, v] : req.query) {
    if (j.contains(k)) Throw(400, "invalid_argument", "parameter '" + k + "' is given more than once", k);
    if (NumericParams().count(k)) {
      char* end = nullptr;
      const double d = IsDecimalNumber(v) ? std::strtod(v.c_str(), &end) : 0.0;
      if (end && *end == '\0' && std::isfinite(d)) {
        // Integers stay integers while exact; larger values are range errors later.
        if (v.find_first_of(".eE") == std::string::npos && std::fabs(d) < 9e15) j[k] = static_cast<long long>(d);
        else j[k] = d;
        continue;
      }
    } else if (BooleanParams().count(k) && (v == "true" || v == "false" || v == "1" || v == "0")) {
      j[k] = v == "true" || v == "1";
      continue;
    }
    j[k] = v;
  }
  return j;
}

// The top-level key of the JSON object `text` under which the nesting first
// goes deeper than the limit ("" when there is none or it is not a plain
// name). The container is always the value of the last string seen at depth
// 1, its key.
std::string DeepField(std::string_view text) {
  json_limits::Scanner scan;
  int depth = 0;
  std::size_t start = 0;
  std::string_view last;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (scan.Next(c)) {
      case json_limits::Scanner::Char::kOpenQuote: start = i + 1; continue;
      case json_limits::Scanner::Char::kCloseQuote:
        if (depth == 1) last = text.substr(start, i - start);
        continue;
      case json_limits::Scanner::Char::kString: continue;
      case json_limits::Scanner::Char::kStructure: break;
    }
    if (c == '[' || c == '{') {
      if (++depth > json_limits::kMaxDepth) {
        const bool plain = !last.empty() && last.size() <= 100 && last.find('\\') == std::string_view::npos;
        return plain ? std::string(last) : std::string();
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return "";
}

// About how many values (objects, arrays, scalars) the JSON `text` holds,
// counted without parsing; stops once past `stop_above`.
std::size_t CountValues(std::string_view text, std::size_t stop_above) {
  json_limits::Scanner scan;
  std::size_t n = 1;
  for (const char c : text) {
    if (scan.Next(c) == json_limits::Scanner::Char::kStructure && (c == ',' || c == '[' || c == '{') &&
        ++n > stop_above) {
      return n;
    }
  }
  return n;
}

// Without API keys (--no-auth, loopback only) nothing stops a web page the
// user visits from sending requests to the server: a page of another site
// may post a form or a text body (no preflight), and a page whose name it
// points at 127.0.0.1 (DNS rebinding) reads the answers as its own. So a
// request naming a Host that is not a loopback name, or carrying an Origin
// other than the server's own, is refused. Programs that are not browsers
// send neither a foreign Host nor an Origin. (With keys, a page has no key.)
void RefuseForeignBrowsers(const HttpRequest& req) {
  const std::string host = req.Header("host");
  if (!host.empty()) {
    std::string name = host;
    if (name.front() == '[') {
      name = name.substr(1, name.find(']') - 1);  // npos - 1: to the end
    } else if (std::count(name.begin(), name.end(), ':') == 1) {
      name = name.substr(0, name.find(':'));
    }
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
    // A name, not an address, must be "localhost" itself: "127.0.0.1.evil.example" is a name
    // anyone may point at 127.0.0.1.
    const bool address = name == "::1" || name.find_first_not_of("0123456789.") == std::string::npos;
    if (!(name == "localhost" || (address && IsLoopback(name)))) {
      Throw(403, "forbidden_host",
            "Host '" + host + "': a server without API keys (--no-auth) answers only requests to a loopback name "
            "(localhost, 127.0.0.1, [::1]); serve with API keys to be reached by other names");
    }
  }
  const std::string origin = req.Header("origin");
  if (!origin.empty() && origin != "http://" + host && origin != "https://" + host) {
    Throw(403, "cross_origin",
          "Origin '" + origin + "': a server without API keys (--no-auth) refuses requests from web pages of other "
          "origins");
  }
}

json ParseBody(const HttpRequest& req) {
  const auto start = req.body.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return json::object();
  // Checked on the text, before any tree is built: the shape, the depth (the
  // parsed tree is destroyed recursively) and the number of values (the tree
  // may be some 30 times the size of the text).
  if (req.body[start] != '{') Throw(400, "invalid_json", "body: expected a JSON object");
  CheckJsonDepth(req.body, "", "invalid_json");
  if (CountValues(req.body, kMaxBodyValues) > kMaxBodyValues) {
    Throw(413, "payload_too_large", "body: more than " + std::to_string(kMaxBodyValues) + " JSON values");
  }
  json j;
  json_limits::DuplicateKeys keys;
  try {
    j = json::parse(req.body, std::ref(keys));
  } catch (const json::parse_error& e) {
    const std::string what = e.what();
    const bool utf8 = what.find("UTF-8") != std::string::npos;
    Throw(400, "invalid_json",
          std::string("body: ") + (utf8 ? "invalid UTF-8" : "not valid JSON") + " at byte " + std::to_string(e.byte));
  } catch (const json::exception&) {  // e.g. out_of_range: a number beyond double
    Throw(400, "invalid_json", "body: a number is out of range");
  }
  if (!j.is_object()) Throw(400, "invalid_json", "body: expected a JSON object");
  if (keys.found()) Throw(400, "invalid_json", "body: " + keys.Message());
  return j;
}

// The API key of the request: `Authorization: Bearer <key>` (or `Token
// <key>` as Mem0's clients send it; the scheme in any case, RFC 9110 11.1) or
// `X-API-Key: <key>`. Credentials that could mean two keys are refused
// rather than guessed: a header sent twice, or both headers with different
// keys.
std::string PresentedKey(const HttpRequest& req) {
  if (req.Repeated("authorization")) {
    Throw(400, "invalid_argument", "Authorization: sent more than once; send one API key");
  }
  if (req.Repeated("x-api-key")) Throw(400, "invalid_argument", "X-API-Key: sent more than once; send one API key");
  std::string from_auth;
  const std::string auth = req.Header("authorization");
  const auto space = auth.find_first_of(" \t");
  if (space != std::string::npos) {
    const std::string scheme = auth.substr(0, space);
    if (::strcasecmp(scheme.c_str(), "bearer") == 0 || ::strcasecmp(scheme.c_str(), "token") == 0) {
      const auto begin = auth.find_first_not_of(" \t", space);
      if (begin != std::string::npos) from_auth = auth.substr(begin, auth.find_last_not_of(" \t") + 1 - begin);
    }
  }
  const std::string api_key = req.Header("x-api-key");
  if (!from_auth.empty() && !api_key.empty() && from_auth != api_key) {
    Throw(400, "invalid_argument", "Authorization and X-API-Key carry different keys; send one API key");
  }
  return from_auth.empty() ? api_key : from_auth;
}

}  // namespace

[[noreturn]] void Throw(int status, const std::string& code, const std::string& message, const std::string& field) {
  throw ApiError{status, code, message, field};
}

ApiError FromStatus(const Status& st) {
  switch (st.code()) {
    case StatusCode::kInvalidArgument: {
      // Engine messages start with the field ("user: must not be empty").
      const std::string& m = st.message();
      const auto colon = m.find(':');
      std::string field = colon != std::string::npos && colon < 40 && m.find(' ') > colon ? m.substr(0, colon) : "";
      return {400, "invalid_argument", m, field};
    }
    case StatusCode::kNotFound: return {404, "not_found", st.message(), ""};
    case StatusCode::kAlreadyExists: return {409, "conflict", st.message(), ""};
    case StatusCode::kFailedPrecondition: return {409, "failed_precondition", st.message(), ""};
    case StatusCode::kAborted: return {409, "aborted", st.message() + " (retry the request)", ""};
    case StatusCode::kPermissionDenied: return {403, "forbidden", st.message(), ""};
    case StatusCode::kResourceExhausted: return {429, "quota_exceeded", st.message(), ""};
    case StatusCode::kUnavailable:
      // The store (busy beyond its lock timeout, its server unreachable): a
      // retry may get past it. Anything else is a model endpoint's failure.
      if (st.message().find(sql::kStoreUnavailable) != std::string::npos) {
        std::cerr << "engram serve: " << st.ToString() << "\n";
        return {503, "store_unavailable", "the store is busy or unreachable; retry shortly", ""};
      }
      return {502, "model_unavailable", st.message(), ""};
    case StatusCode::kIoError:
      // The disk holding the store is full: the write was not applied; reads go on.
      if (sql::IsStoreFull(st)) {
        std::cerr << "engram serve: " << st.ToString() << "\n";
        return {507, "storage_full", "the store's disk is full; nothing was written. Free space, then retry", ""};
      }
      std::cerr << "engram serve: " << st.ToString() << "\n";
      return {500, "internal", "internal error; the server log has the details", ""};
    default:
      std::cerr << "engram serve: " << st.ToString() << "\n";
      return {500, "internal", "internal error; the server log has the details", ""};
  }
}

[[noreturn]] void ThrowStatus(const Status& st) { throw FromStatus(st); }

void CheckJsonDepth(std::string_view text, const std::string& field, const std::string& code) {
  if (json_limits::WithinDepth(text)) return;
  const std::string at = field.empty() ? DeepField(text) : field;
  Throw(400, code, (at.empty() ? std::string("body") : at) + ": " + json_limits::TooDeepMessage(), at);
}

const json& Params(const Call& c) { return c.body; }

json ParseJsonBody(const HttpRequest& req) { return ParseBody(req); }

std::string IdempotencyKey(const Call& c, const std::string& body_key) {
  const std::string header = c.req.Header("idempotency-key");
  if (c.req.Repeated("idempotency-key")) {
    Throw(400, "invalid_argument", "Idempotency-Key: sent more than once; send one key");
  }
  if (!body_key.empty() && !header.empty() && header != body_key) {
    Throw(400, "invalid_argument", "idempotency_key: the body's key and the Idempotency-Key header differ",
          "idempotency_key");
  }
  return body_key.empty() ? header : body_key;
}

void CheckArgs(const wire::Args& a) {
  if (!a.ok()) Throw(400, "invalid_argument", a.error(), a.field());
}

std::string ActorOf(const Call& c, const char* anonymous) {
  return c.who.key_id.empty() ? anonymous : "key:" + c.who.key_id;
}

void RequireUser(const Call& c, const std::string& user) {
  if (!c.who.AllowsUser(user)) {
    Throw(403, "forbidden", "user: this API key may not access user '" + user + "'", "user");
  }
}

Scope TurnScope(const Call& c) {
  wire::Args a(Params(c), "field");
  Scope s;
  s.tenant = c.who.tenant;
  s.user = a.Str("user", true);
  if (auto as = a.OptStr("assistant")) s.assistant = *as;
  CheckArgs(a);
  Check(Engine::ValidateScope(s));
  RequireUser(c, s.user);
  return s;
}

MemoryScope FactScope(const Call& c, bool allow_narrower) {
  wire::Args a(Params(c), "field");
  MemoryScope s;
  s.tenant = c.who.tenant;
  s.user = a.Str("user", false);
  s.agent = a.Str("agent", false);
  s.run = a.Str("run", false);
  if (allow_narrower) s.include_narrower = a.Bool("narrower").value_or(false);
  CheckArgs(a);
  if (s.user.empty() && s.agent.empty() && s.run.empty()) {
    Throw(400, "invalid_argument", "scope: at least one of user, agent and run is required", "user");
  }
  if (!c.who.AllUsers() && s.user.empty()) {
    Throw(403, "forbidden", "user: this API key is limited to some users; name one of them", "user");
  }
  if (!s.user.empty()) RequireUser(c, s.user);
  return s;
}

HttpResponse Json(int status, const json& j) {
  HttpResponse r;
  r.status = status;
  r.body = wire::Dump(j);
  return r;
}

HttpResponse ErrorResponse(const ApiError& e, const std::string& request_id) {
  json err = {{"code", e.code}, {"message", e.message}, {"request_id", request_id}};
  if (!e.field.empty()) err["field"] = e.field;
  HttpResponse r = Json(e.status, {{"error", err}});
  if (e.status == 401) r.headers.emplace_back("WWW-Authenticate", "Bearer");
  if (e.status == 503) r.headers.emplace_back("Retry-After", "1");
  if (e.code == "quota_exceeded") r.headers.emplace_back("Retry-After", "60");
  return r;
}

Api::Api(ApiOptions options, Metrics& metrics) : options_(std::move(options)), metrics_(metrics) {}

int Api::TakeToken(const Principal& who) {
  const double rate = options_.rate_limit_per_s;
  if (rate <= 0) return 0;
  const double burst = std::max(1.0, rate);
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(rate_mu_);
  auto [it, fresh] = buckets_.try_emplace(who.key_id, Bucket{burst, now});
  Bucket& b = it->second;
  if (!fresh) {
    b.tokens = std::min(burst, b.tokens + rate * std::chrono::duration<double>(now - b.at).count());
    b.at = now;
  }
  if (b.tokens >= 1.0) {
    b.tokens -= 1.0;
    return 0;
  }
  ++rate_limited_[who.tenant];
  return std::max(1, static_cast<int>(std::ceil((1.0 - b.tokens) / rate)));
}

void Api::SetReady(Engine* engine, ApiKeys* keys, bool chat_model) {
  chat_model_.store(chat_model);
  keys_.store(keys);
  engine_.store(engine);
}

HttpResponse Api::TransportError(int status, const std::string& request_id, const std::string& detail) const {
  switch (status) {
    case 404: return ErrorResponse({404, "no_route", "no such route; see docs/openapi.yaml", ""}, request_id);
    case 405:
      return ErrorResponse({405, "method_not_allowed", "this path does not take this method; the Allow header lists "
                                                       "the ones it takes",
                            ""},
                           request_id);
    case 413:
      return ErrorResponse({413, "payload_too_large",
                            detail.empty() ? "body: larger than the server's limit (--max-body)" : detail, ""},
                           request_id);
    case 500: return ErrorResponse({500, "internal", "internal error; the server log has the details", ""}, request_id);
    case 503: {
      return ErrorResponse({503, "overloaded", detail.empty() ? "the server is busy; retry shortly" : detail, ""},
                           request_id);
    }
    default:
      return ErrorResponse(
          {status, "bad_request", detail.empty() ? "the request could not be read (malformed HTTP or body)" : detail, ""},
          request_id);
  }
}

void Api::Add(HttpServer& s, const char* method, const char* path, Role role, Body json_body, Handler h,
              std::size_t max_body) {
  RouteOptions route;
  route.max_body_bytes = max_body;
  s.Route(method, path, [this, role, json_body, h = std::move(h), route = std::string(path),
                          verb = std::string(method)](const HttpRequest& req) {
    // The tenant's access log (GET /v1/requests): once the key is known.
    const auto start = std::chrono::steady_clock::now();
    std::string tenant;
    HttpResponse r = Answer(req, role, json_body, h, &tenant);
    if (!tenant.empty()) {
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      requests_.Record(tenant, {verb, route, r.status, ms, SystemClock::Default().NowMs(), req.request_id});
      CountTenantRequest(tenant, route, verb, r.status);
    }
    return r;
  }, route);
}

HttpResponse Api::Answer(const HttpRequest& req, Role role, Body json_body, const Handler& h, std::string* tenant) {
    try {
      if (!engine_.load()) Throw(503, "not_ready", "the store is still opening; retry shortly");
      Call c{req, Principal{}, json::object()};
      if (options_.auth) {
        const std::string key = PresentedKey(req);
        if (key.empty()) {
          Throw(401, "unauthorized", "missing API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'");
        }
        auto who = Check(keys_.load()->Authenticate(key, SystemClock::Default().NowMs()));
        if (!who) Throw(401, "unauthorized", "invalid, revoked or expired API key");
        c.who = std::move(*who);
      } else {
        RefuseForeignBrowsers(req);
        c.who = Principal{"", options_.no_auth_tenant, {}, Role::kOperator};
      }
      *tenant = c.who.tenant;
      if (const int wait = TakeToken(c.who); wait > 0) {
        HttpResponse r = ErrorResponse({429, "rate_limited",
                                        "this API key is over its rate limit of " +
                                            std::to_string(options_.rate_limit_per_s) + " requests a second; retry in " +
                                            std::to_string(wait) + " s",
                                        ""},
                                       req.request_id);
        r.headers.emplace_back("Retry-After", std::to_string(wait));
        return r;
      }
      if (!c.who.Can(role)) {
        Throw(403, "forbidden", std::string("this API key's role (") + RoleName(c.who.role) + ") may not do this; it needs " +
                                    RoleName(role));
      }
      if (json_body && !req.query.empty()) {
        const std::string& k = req.query.begin()->first;
        Throw(400, "invalid_argument", "parameter '" + k + "': this route takes its fields in the JSON body", k);
      }
      c.body = json_body ? ParseBody(req) : QueryJson(req);
      return h(c);
    } catch (const ApiError& e) {
      return ErrorResponse(e, req.request_id);
    }
}

void Api::Register(HttpServer& s) {
  // These answer without the engine's permits: they stay served while every
  // engine slot is busy.
  RouteOptions light;
  light.light = true;
  s.Route("GET", "/healthz", [](const HttpRequest&) { return Json(200, {{"status", "ok"}}); }, light);
  s.Route("GET", "/readyz", [this](const HttpRequest& req) {
    if (!engine_.load()) {
      return ErrorResponse({503, "not_ready", "the store is still opening", ""}, req.request_id);
    }
    return Json(200, {{"status", "ready"}});
  }, light);
  s.Route("GET", "/v1/version", [this](const HttpRequest&) {
    json j = {{"version", Version()}, {"api", "v1"}};
    if (Engine* e = engine_.load()) {
      j["embedder"] = e->EmbedderName();
      j["maintainer"] = e->MaintainerName();
    }
    return Json(200, j);
  }, light);
  // The inspector (ui/, embedded): static files, no key needed to load them;
  // everything it shows comes from the /v1 routes with the user's key.
  auto redirect = [](const HttpRequest&) {
    HttpResponse r;
    r.status = 302;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "the inspector is at /ui/\n";
    r.headers.emplace_back("Location", "/ui/");
    AddUiSecurityHeaders(r);
    return r;
  };
  s.Route("GET", "/", redirect, light);
  s.Route("GET", "/ui", redirect, light);
  auto asset = [](const HttpRequest& req, std::string_view name) {
    return UiResponse(name, req.Header("if-none-match"), [&req] {
      return ErrorResponse({404, "not_found", "no such file of the inspector", ""}, req.request_id);
    });
  };
  s.Route("GET", "/ui/", [asset](const HttpRequest& req) { return asset(req, ""); }, light);
  s.Route("GET", "/ui/{file}", [asset](const HttpRequest& req) { return asset(req, req.params.at(0)); }, light);
  Add(s, "GET", "/metrics", Role::kAdmin, false, [this](Call& c) { return MetricsText(c); });
  RegisterTurns(s);
  RegisterMemories(s);
  RegisterAdmin(s);
  RegisterMem0(s);
  RegisterProxy(s);
  RegisterInspect(s);
  RegisterMcp(s);
}

std::vector<Scope> Api::VisibleScopes(const Call& c, const std::string& user) {
  std::vector<Scope> out;
  for (auto& sc : Check(engine().ListTenantScopes(c.who.tenant, user))) {
    if (!c.who.AllowsUser(sc.user)) continue;
    out.push_back(std::move(sc));
  }
  return out;
}

}  // namespace engram::server
