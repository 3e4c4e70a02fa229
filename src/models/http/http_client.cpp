// CurlHttpClient: POST over libcurl with a pool of reusable easy handles.
#include "models/http/http_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <exception>
#include <mutex>
#include <string>

namespace engram {
namespace {

// curl_global_init is not guaranteed to be thread-safe: run it exactly once.
// curl_global_cleanup is never called (handles may outlive static teardown).
bool CurlGlobalInitOnce() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] { ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; });
  return ok;
}

// State shared with the libcurl callbacks of one transfer.
struct Transfer {
  const HttpRequest* request = nullptr;
  HttpResponse response;
  bool cancelled = false;       // on_chunk returned false
  bool callback_failed = false;  // on_chunk threw, or an allocation failed
  bool too_large = false;        // the reply passed a size limit
  std::size_t header_bytes = 0;
  std::size_t body_bytes = 0;
};

std::string_view TrimLine(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// One header line: a status line starts a new reply (after a 100-continue or
// a redirect), so headers collected so far are dropped.
std::size_t OnHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t len = size * count;
  t->header_bytes += len;
  if (t->header_bytes > kMaxReplyHeaderBytes) {
    t->too_large = true;
    return 0;  // makes curl abort the transfer
  }
  try {
    std::string_view line = TrimLine(std::string_view(data, len));
    if (line.rfind("HTTP/", 0) == 0) {
      t->response.headers.clear();
      int status = 0;
      const std::size_t sp = line.find(' ');
      if (sp != std::string_view::npos) {
        for (std::size_t i = sp + 1; i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])); ++i)
          status = status * 10 + (line[i] - '0');
      }
      t->response.status = status;
      return len;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return len;
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    t->response.headers[name] = std::string(TrimLine(line.substr(colon + 1)));
  } catch (...) {
    t->callback_failed = true;
    return 0;  // makes curl abort the transfer
  }
  return len;
}

std::size_t OnBody(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t len = size * count;
  t->body_bytes += len;
  if (t->body_bytes > t->request->max_reply_bytes) {
    t->too_large = true;
    return 0;
  }
  try {
    const int status = t->response.status;
    if (t->request->on_chunk && status >= 200 && status < 300) {
      if (!t->request->on_chunk(std::string_view(data, len))) {
        t->cancelled = true;
        return 0;
      }
    } else {
      t->response.body.append(data, len);
    }
  } catch (...) {
    t->callback_failed = true;
    return 0;
  }
  return len;
}

// Frees a curl_slist at scope exit.
struct SlistGuard {
  curl_slist* list = nullptr;
  ~SlistGuard() {
    if (list) curl_slist_free_all(list);
  }
};

bool HasLineBreak(const std::string& s) { return s.find_first_of("\r\n") != std::string::npos; }

}  // namespace

CurlHttpClient::CurlHttpClient() { CurlGlobalInitOnce(); }

CurlHttpClient::~CurlHttpClient() {
  std::lock_guard<std::mutex> lock(mu_);
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
  idle_.clear();
}

void* CurlHttpClient::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void CurlHttpClient::Release(void* handle) {
  if (!handle) return;
  try {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < kMaxIdleHandles) {
      idle_.push_back(handle);
      return;
    }
  } catch (...) {
    // fall through: free the handle instead of pooling it
  }
  curl_easy_cleanup(static_cast<CURL*>(handle));
}

Result<HttpResponse> CurlHttpClient::Post(const HttpRequest& request) {
  if (!CurlGlobalInitOnce()) return Status::Internal("http: libcurl initialisation failed");
  if (request.url.rfind("http://", 0) != 0 && request.url.rfind("https://", 0) != 0)
    return Status::InvalidArgument("http: URL must start with http:// or https://");
  if (HasLineBreak(request.url)) return Status::InvalidArgument("http: URL contains a line break");

  CURL* h = static_cast<CURL*>(Acquire());
  if (!h) return Status::Unavailable("http: cannot create a libcurl handle");
  // Whatever happens below, the handle goes back to the pool.
  struct HandleGuard {
    CurlHttpClient* owner;
    CURL* handle;
    ~HandleGuard() { owner->Release(handle); }
  } guard{this, h};

  try {
    SlistGuard headers;
    for (const auto& [name, value] : request.headers) {
      // A line break would smuggle another header into the request; the value
      // may be a secret, so only the name is reported.
      if (name.empty() || HasLineBreak(name) || HasLineBreak(value) || name.find(':') != std::string::npos)
        return Status::InvalidArgument("http: invalid request header '" +
                                       (HasLineBreak(name) ? std::string("?") : name) + "'");
      const std::string line = name + ": " + value;
      curl_slist* next = curl_slist_append(headers.list, line.c_str());
      if (!next) return Status::Internal("http: out of memory building headers");
      headers.list = next;
    }
    // No "Expect: 100-continue" round trip for large bodies.
    if (curl_slist* next = curl_slist_append(headers.list, "Expect:")) headers.list = next;

    Transfer transfer;
    transfer.request = &request;

    curl_easy_reset(h);  // keeps the connection and DNS caches
    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.list);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "engram");
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::max(0, request.connect_timeout_ms)));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max(0, request.total_timeout_ms)));
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &OnHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &OnBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);

    const CURLcode rc = curl_easy_perform(h);
    // Do not keep pointers into this stack frame in a pooled handle.
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, nullptr);

    if (transfer.too_large)
      return Status::Unavailable(transfer.header_bytes > kMaxReplyHeaderBytes
                                     ? "http: reply headers larger than " + std::to_string(kMaxReplyHeaderBytes) + " bytes"
                                     : "http: reply larger than " + std::to_string(request.max_reply_bytes) + " bytes");
    if (transfer.cancelled) return Status::Aborted("http: transfer cancelled by the receiver");
    if (transfer.callback_failed) return Status::Internal("http: reply handler failed");
    switch (rc) {
      case CURLE_OK:
        break;
      case CURLE_OPERATION_TIMEDOUT:
        return Status::Unavailable("http: timed out");
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL:
        return Status::InvalidArgument("http: malformed or unsupported URL");
      default:
        // curl_easy_strerror is a fixed text per code (no URL, no headers).
        return Status::Unavailable(std::string("http: ") + curl_easy_strerror(rc));
    }
    long code = 0;
    if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code > 0)
      transfer.response.status = static_cast<int>(code);
    return std::move(transfer.response);
  } catch (const std::exception&) {
    return Status::Internal("http: unexpected failure");
  } catch (...) {
    return Status::Internal("http: unexpected failure");
  }
}

}  // namespace engram
