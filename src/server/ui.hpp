// The inspector (ui/): its assets, embedded into the binary at build time
// (cmake/embed_ui.cmake), served at /ui/ with strict security headers. The
// inspector reads and writes only through the public /v1 API with the API key
// its user pastes, so it can do exactly what that key may do.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "server/http_server.hpp"

namespace engram::server {

struct UiAsset {
  const char* name;          // file name under ui/, e.g. "app.js"
  const char* content_type;
  const unsigned char* data;
  std::size_t size;
  const char* etag;          // quoted, from the content's hash
};

// Every embedded asset; the list ends with an entry whose name is null.
const UiAsset* UiAssets();
// The asset named `name`, or null.
const UiAsset* FindUiAsset(std::string_view name);

// The headers of every /ui response: a Content-Security-Policy that allows
// nothing but this origin's own scripts, styles and API (no inline script
// or style, no framing), nosniff, no referrer.
void AddUiSecurityHeaders(HttpResponse& r);

// The response for GET /ui/<name> (index.html for ""): 200 with the asset,
// 304 when `if_none_match` is its ETag, 404 when there is none (`not_found`
// makes that response).
HttpResponse UiResponse(std::string_view name, const std::string& if_none_match,
                        const std::function<HttpResponse()>& not_found);

}  // namespace engram::server
