// The recent-requests log of the inspector: per tenant, newest first, bounded.
#include <gtest/gtest.h>

#include "server/request_log.hpp"
#include "server/ui.hpp"

namespace engram::server {
namespace {

RequestLogEntry Entry(int i) { return {"GET", "/v1/memories/{id}", 200, 1.5, 1000 + i, "req" + std::to_string(i)}; }

TEST(RequestLog, KeepsEachTenantsNewestEntriesApart) {
  RequestLog log;
  log.Record("a", Entry(1));
  log.Record("b", Entry(2));
  log.Record("a", Entry(3));
  auto a = log.Recent("a", 10);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].request_id, "req3");  // newest first
  EXPECT_EQ(a[1].request_id, "req1");
  EXPECT_EQ(log.Recent("b", 10).size(), 1u);
  EXPECT_TRUE(log.Recent("c", 10).empty());
  EXPECT_EQ(log.Recent("a", 1).size(), 1u);
}

TEST(RequestLog, IsBoundedPerTenantAndInTenants) {
  RequestLog log;
  for (int i = 0; i < 1000; ++i) log.Record("a", Entry(i));
  auto a = log.Recent("a", 100000);
  ASSERT_EQ(a.size(), RequestLog::kPerTenant);
  EXPECT_EQ(a.front().request_id, "req999");
  for (std::size_t t = 0; t <= RequestLog::kMaxTenants; ++t) log.Record("t" + std::to_string(t), Entry(0));
  // "a" was heard from longest ago: dropped to make room.
  EXPECT_TRUE(log.Recent("a", 10).empty());
  EXPECT_EQ(log.Recent("t" + std::to_string(RequestLog::kMaxTenants), 10).size(), 1u);
}

TEST(UiAssets, EveryFileIsEmbeddedWithItsTypeAndServedWithStrictHeaders) {
  const UiAsset* index = FindUiAsset("index.html");
  ASSERT_NE(index, nullptr);
  EXPECT_STREQ(index->content_type, "text/html; charset=utf-8");
  ASSERT_NE(FindUiAsset("app.js"), nullptr);
  EXPECT_STREQ(FindUiAsset("app.js")->content_type, "text/javascript; charset=utf-8");
  ASSERT_NE(FindUiAsset("app.css"), nullptr);
  EXPECT_EQ(FindUiAsset("../CMakeLists.txt"), nullptr);
  EXPECT_EQ(FindUiAsset(""), nullptr);

  auto not_found = [] {
    HttpResponse r;
    r.status = 404;
    return r;
  };
  HttpResponse r = UiResponse("", "", not_found);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.size(), index->size);
  auto header = [&r](const std::string& name) {
    for (const auto& [k, v] : r.headers) {
      if (k == name) return v;
    }
    return std::string();
  };
  const std::string csp = header("Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe"), std::string::npos);
  EXPECT_EQ(header("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(header("ETag"), index->etag);
  // The page never inlines a script or a style (the CSP would refuse them).
  EXPECT_EQ(r.body.find("<script>"), std::string::npos);
  EXPECT_EQ(r.body.find("style="), std::string::npos);
  EXPECT_EQ(r.body.find("<style"), std::string::npos);

  r = UiResponse("index.html", index->etag, not_found);
  EXPECT_EQ(r.status, 304);
  EXPECT_TRUE(r.body.empty());
  r = UiResponse("missing.js", "", not_found);
  EXPECT_EQ(r.status, 404);
  EXPECT_FALSE(header("Content-Security-Policy").empty());
}

}  // namespace
}  // namespace engram::server
