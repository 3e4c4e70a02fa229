// The shared wire layer: argument checking, JSON renderings, export reading.
#include <gtest/gtest.h>

#include <limits>

#include <nlohmann/json.hpp>

#include "wire/args.hpp"
#include "wire/exported_memories.hpp"
#include "wire/json.hpp"

namespace engram::wire {
namespace {

using nlohmann::json;

constexpr TimeMs kJune1At10 = 1748772000000;  // 2025-06-01T10:00:00Z

TEST(ArgsTest, MessagesNameTheFieldWithTheNoun) {
  json a = json::object();
  Args mcp(a);
  mcp.Str("query", true);
  EXPECT_EQ(mcp.error(), "missing required argument 'query' (a string)");
  EXPECT_EQ(mcp.field(), "query");

  Args http(a, "field");
  http.Str("query", true);
  EXPECT_EQ(http.error(), "missing required field 'query' (a string)");
}

TEST(ArgsTest, KeepsTheFirstError) {
  json a = {{"text", 5}, {"limit", "x"}};
  Args args(a);
  args.Str("text", true);
  args.Int("limit", 1, 10);
  EXPECT_EQ(args.error(), "argument 'text' must be a string");
  EXPECT_EQ(args.field(), "text");
  args.Fail("other", "ignored");
  EXPECT_EQ(args.field(), "text");
}

TEST(ArgsTest, OnlyRejectsUnknownFields) {
  json a = {{"query", "q"}, {"bogus", 1}};
  Args args(a, "field");
  args.Only({"query", "limit"});
  EXPECT_FALSE(args.ok());
  EXPECT_EQ(args.error(), "unknown field 'bogus'; expected: limit, query");
  EXPECT_EQ(args.field(), "bogus");

  Args none(a);
  none.Only({});
  EXPECT_NE(none.error().find("this tool takes no arguments"), std::string::npos);

  json only_query = {{"query", "q"}};
  Args fine(only_query);
  fine.Only({"query"});
  EXPECT_TRUE(fine.ok());
}

TEST(ArgsTest, IntRange) {
  json a = {{"a", 5}, {"b", 3.0}, {"c", 2.5}, {"d", 11}};
  Args args(a);
  EXPECT_EQ(args.Int("a", 1, 10), 5);
  EXPECT_EQ(args.Int("b", 1, 10), 3);
  EXPECT_EQ(args.Int("missing", 1, 10), std::nullopt);
  EXPECT_TRUE(args.ok());
  EXPECT_EQ(args.Int("d", 1, 10), std::nullopt);
  EXPECT_EQ(args.error(), "argument 'd' must be between 1 and 10");

  Args frac(a);
  EXPECT_EQ(frac.Int("c", 1, 10), std::nullopt);
  EXPECT_EQ(frac.error(), "argument 'c' must be an integer");
}

TEST(ArgsTest, TimeAcceptsIsoAndEpochMs) {
  json a = {{"iso", "2025-06-01T10:00:00Z"}, {"ms", kJune1At10}, {"junk", "soon"}, {"obj", json::object()}};
  Args args(a);
  EXPECT_EQ(args.Time("iso"), kJune1At10);
  EXPECT_EQ(args.Time("ms"), kJune1At10);
  EXPECT_TRUE(args.ok());
  EXPECT_EQ(args.Time("junk"), std::nullopt);
  EXPECT_EQ(args.field(), "junk");
  EXPECT_NE(args.error().find("is not a time"), std::string::npos);

  Args obj(a);
  EXPECT_EQ(obj.Time("obj"), std::nullopt);
  EXPECT_FALSE(obj.ok());

  // Milliseconds outside the years 1000..9999 (or beyond int64, which would
  // wrap) are refused: their ISO form would not parse back from an export.
  for (const json& ms : {json(9223372036854775808ULL), json(253402300800000LL), json(-30610224000001LL),
                         json(std::numeric_limits<std::int64_t>::min())}) {
    const json body = {{"t", ms}};  // (Args reads the document it is given, not a copy)
    Args far(body);
    EXPECT_EQ(far.Time("t"), std::nullopt) << ms;
    EXPECT_EQ(far.field(), "t");
    EXPECT_NE(far.error().find("out of range"), std::string::npos) << far.error();
  }
  const json latest = {{"t", 253402300799999LL}};
  Args last(latest);
  EXPECT_EQ(last.Time("t"), 253402300799999LL);
}

TEST(ArgsTest, BoolMustBeABoolean) {
  json a = {{"yes", true}, {"no", false}, {"text", "true"}};
  Args args(a, "field");
  EXPECT_EQ(args.Bool("yes"), true);
  EXPECT_EQ(args.Bool("no"), false);
  EXPECT_EQ(args.Bool("absent"), std::nullopt);
  EXPECT_TRUE(args.ok());
  EXPECT_EQ(args.Bool("text"), std::nullopt);
  EXPECT_EQ(args.error(), "field 'text' must be true or false");
}

TEST(DumpTest, ReplacesInvalidUtf8) {
  json j = {{"text", std::string("a\xFF" "b")}};
  std::string out;
  EXPECT_NO_THROW(out = Dump(j));
  EXPECT_EQ(out, "{\"text\":\"a\xEF\xBF\xBD" "b\"}");
  EXPECT_EQ(Dump(json{{"a", 1}}, 2), "{\n  \"a\": 1\n}");
}

TEST(ExportedMemoriesTest, ReadsFactLines) {
  std::string content =
      "{\"type\":\"turn\",\"user_text\":\"hi\"}\n"
      "{\"type\":\"fact\",\"kind\":\"user\",\"text\":\"consolidated, not re-added\"}\n"
      "{\"type\":\"fact\",\"kind\":\"memory\",\"tenant\":\"t\",\"user_id\":\"alice\",\"text\":\"likes tea\","
      "\"role\":\"assistant\",\"metadata\":{\"topic\":\"food\"},\"event_time\":\"2025-06-01T10:00:00Z\","
      "\"degraded\":true}\n";
  auto r = ParseExportedMemories(content, "export.jsonl");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  const auto& m = (*r)[0];
  EXPECT_EQ(m.scope.tenant, "t");
  EXPECT_EQ(m.scope.user, "alice");
  EXPECT_EQ(m.message.content, "likes tea");
  EXPECT_EQ(m.message.role, "assistant");
  EXPECT_EQ(m.options.metadata, "{\"topic\":\"food\"}");
  EXPECT_EQ(m.options.event_time, kJune1At10);
  EXPECT_FALSE(m.options.infer);
  EXPECT_TRUE(m.options.degraded);
  auto bad = ParseExportedMemories("{\"type\":\"fact\",\"kind\":\"memory\",\"user_id\":\"a\",\"text\":\"x\",\"degraded\":1}", "x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("degraded"), std::string::npos) << bad.status().message();
}

TEST(ExportedMemoriesTest, ErrorsNameLabelAndLine) {
  std::string content =
      "\n"
      "{\"type\":\"fact\",\"kind\":\"memory\",\"user_id\":\"alice\",\"text\":\"ok\"}\n"
      "{\"type\":\"fact\",\"kind\":\"memory\",\"text\":\"no scope\"}\n";
  auto r = ParseExportedMemories(content, "body");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("body: line 3: "), std::string::npos) << r.status().message();

  auto arr = ParseExportedMemories("[{\"type\":\"fact\"}]", "x");
  ASSERT_TRUE(arr.ok());
  EXPECT_TRUE(arr->empty());
}

TEST(ExportedMemoriesTest, DeepNestingIsRefusedNamingTheLine) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string content = "{\"type\":\"fact\",\"kind\":\"memory\",\"user_id\":\"alice\",\"text\":\"ok\"}\n"
                        "{\"type\":\"fact\",\"kind\":\"memory\",\"user_id\":\"alice\",\"text\":\"x\",\"metadata\":{\"k\":" +
                        deep + "}}\n";
  auto r = ParseExportedMemories(content, "export.jsonl");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "export.jsonl: line 2: JSON nested deeper than 128 levels");
  // A line of another type too: the whole line is refused before it is read.
  r = ParseExportedMemories("{\"type\":\"page\",\"x\":" + deep + "}", "body");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "body: line 1: JSON nested deeper than 128 levels");
  // Each memory knows its line.
  auto ok = ParseExportedMemories("\n" + content.substr(0, content.find('\n') + 1), "x");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_EQ(ok->front().line, 2);
}

TEST(MetadataJsonTest, DeepStoredMetadataReadsAsEmpty) {
  EXPECT_EQ(MetadataJson("{\"a\":[1]}"), json({{"a", {1}}}));
  EXPECT_EQ(MetadataJson("{\"a\":" + std::string(200, '[') + std::string(200, ']') + "}"), json::object());
  EXPECT_EQ(MetadataJson(""), json::object());
}

TEST(ToJsonTest, MemoryItemFieldNames) {
  MemoryItem m;
  m.id = "m1";
  m.memory = "likes tea";
  m.user = "alice";
  m.agent = "bot";
  m.metadata = "{\"topic\":\"food\"}";
  m.kind = "memory";
  m.status = "live";
  m.created_at = m.updated_at = m.event_time = kJune1At10;
  json j = ToJson(m);
  EXPECT_EQ(j["id"], "m1");
  EXPECT_EQ(j["memory"], "likes tea");
  EXPECT_EQ(j["user_id"], "alice");
  EXPECT_EQ(j["agent_id"], "bot");
  EXPECT_FALSE(j.contains("run_id"));
  EXPECT_EQ(j["metadata"]["topic"], "food");
  EXPECT_EQ(j["created_at"], "2025-06-01T10:00:00Z");
  EXPECT_TRUE(j["expiration_date"].is_null());
  EXPECT_FALSE(j.contains("score"));
}

TEST(ToJsonTest, TurnAndJob) {
  Turn t;
  t.id = 7;
  t.seq = 2;
  t.user_text = "hi";
  t.event_time = t.ingest_time = kJune1At10;
  json tj = ToJson(t);
  EXPECT_EQ(tj["tier"], "stm");
  EXPECT_TRUE(tj["page_id"].is_null());
  EXPECT_EQ(tj["metadata"], json::object());
  EXPECT_FALSE(tj.contains("user_name"));

  JobInfo job;
  job.id = 3;
  job.scope.user = "alice";
  job.kind = "promote";
  job.status = "failed";
  job.created_at = job.updated_at = kJune1At10;
  json jj = ToJson(job);
  EXPECT_EQ(jj["user"], "alice");
  EXPECT_EQ(jj["tenant"], "default");
  EXPECT_EQ(jj["updated_at"], "2025-06-01T10:00:00Z");
}

}  // namespace
}  // namespace engram::wire
