#include "server/ui.hpp"

#include <cstring>

namespace engram::server {

const UiAsset* FindUiAsset(std::string_view name) {
  for (const UiAsset* a = UiAssets(); a->name; ++a) {
    if (name == a->name) return a;
  }
  return nullptr;
}

void AddUiSecurityHeaders(HttpResponse& r) {
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                         "connect-src 'self'; font-src 'none'; object-src 'none'; frame-ancestors 'none'; "
                         "base-uri 'none'; form-action 'none'");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("Cross-Origin-Opener-Policy", "same-origin");
}

HttpResponse UiResponse(std::string_view name, const std::string& if_none_match,
                        const std::function<HttpResponse()>& not_found) {
  const UiAsset* a = FindUiAsset(name.empty() ? std::string_view("index.html") : name);
  HttpResponse r;
  if (!a) {
    r = not_found();
  } else if (if_none_match == a->etag) {
    r.status = 304;
    r.content_type = a->content_type;
    r.headers.emplace_back("ETag", a->etag);
  } else {
    r.content_type = a->content_type;
    r.body.assign(reinterpret_cast<const char*>(a->data), a->size);
    r.headers.emplace_back("ETag", a->etag);
  }
  // Revalidated on every load (the ETag makes that cheap), so a new binary's
  // assets are never mixed with an old one's.
  r.headers.emplace_back("Cache-Control", "no-cache");
  AddUiSecurityHeaders(r);
  return r;
}

}  // namespace engram::server
