#include "models/llm/llm_maintainer.hpp"

#include <gtest/gtest.h>

#include <deque>

#include "core/time.hpp"
#include "models/llm/model_json.hpp"
#include "testing/fakes.hpp"

namespace engram {
namespace {

using testing::ScriptedLlm;

std::vector<PageDraft> Pages(int n) {
  std::vector<PageDraft> v;
  for (int i = 0; i < n; ++i) {
    PageDraft p;
    p.turn_id = i + 1;
    p.user_text = "I adopted a cat named Miso " + std::to_string(i);
    p.assistant_text = "Lovely!";
    p.event_time = MakeTimeMs(2025, 5, 1 + i);
    v.push_back(p);
  }
  return v;
}

TEST(ModelJson, ExtractsFromFencesAndProse) {
  EXPECT_TRUE(llmjson::Extract("{\"a\":1}").ok());
  EXPECT_EQ((*llmjson::Extract("```json\n{\"a\":2}\n```"))["a"], 2);
  EXPECT_EQ((*llmjson::Extract("Sure! Here it is: {\"a\":3} Hope it helps."))["a"], 3);
  EXPECT_FALSE(llmjson::Extract("I cannot do that.").ok());
  EXPECT_FALSE(llmjson::Extract("").ok());
  // A reply nested beyond json_limits::kMaxDepth is no JSON object, in prose or not.
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  EXPECT_FALSE(llmjson::Extract(deep).ok());
  EXPECT_FALSE(llmjson::Extract("Here: {\"a\":" + deep + "} done").ok());
}

TEST(LlmMaintainer, AnalyzesABatchInOneCall) {
  auto llm = std::make_shared<ScriptedLlm>();
  llm->Say(R"({"pages":[{"page":1,"continues_previous":false,"chain_summary":"Adopting a cat.","keywords":["Cat","adoption"]},
                        {"page":2,"continues_previous":true,"chain_summary":"Adopting a cat, Miso.","keywords":["cat"]}]})");
  LlmMaintainer m(llm);
  auto r = m.AnalyzePages({}, Pages(2), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->model_calls, 1);
  EXPECT_FALSE(r->degraded);
  ASSERT_EQ(r->pages.size(), 2u);
  EXPECT_TRUE(r->pages[1].continues_previous);
  EXPECT_EQ(r->pages[0].keywords, (std::vector<std::string>{"cat", "adoption"}));
  EXPECT_TRUE(llm->requests[0].json_object);
}

TEST(LlmMaintainer, AcceptsFencedJsonAndABareArray) {
  auto llm = std::make_shared<ScriptedLlm>();
  llm->Say("```json\n[{\"continues_previous\":false,\"chain_summary\":\"x\",\"keywords\":[]}]\n```");
  LlmMaintainer m(llm);
  auto r = m.AnalyzePages({}, Pages(1), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->model_calls, 1);
}

TEST(LlmMaintainer, RetriesInvalidRepliesWithTheReason) {
  auto llm = std::make_shared<ScriptedLlm>();
  llm->Say(R"({"pages":[{"page":1,"continues_previous":"maybe","chain_summary":"x","keywords":[]}]})");
  llm->Say("");  // empty content
  llm->Say(R"({"pages":[{"page":1,"continues_previous":false,"chain_summary":"Cats.","keywords":["cat"]}]})");
  LlmMaintainer m(llm);
  auto r = m.AnalyzePages({}, Pages(1), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->model_calls, 3);
  // The retry names the problem.
  EXPECT_NE(llm->requests[1].messages.back().content.find("continues_previous"), std::string::npos);
}

TEST(LlmMaintainer, KeepsFailingRepliesAsAnErrorWithoutContent) {
  auto llm = std::make_shared<ScriptedLlm>();
  for (int i = 0; i < 3; ++i) llm->Say(R"({"pages": {"oops": "SECRET-REPLY-TEXT"}})");
  LlmMaintainer m(llm);
  auto r = m.AnalyzePages({}, Pages(2), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message().find("SECRET"), std::string::npos);
  // Wrong count is invalid too.
  llm->Say(R"({"pages":[{"continues_previous":false,"chain_summary":"x","keywords":[]}]})");
  llm->Say(R"({"pages":[]})");
  llm->Say(R"({"pages":[]})");
  EXPECT_FALSE(m.AnalyzePages({}, Pages(2), {}).ok());
}

TEST(LlmMaintainer, ProviderFailureIsReturnedAsIs) {
  auto llm = std::make_shared<ScriptedLlm>();  // no replies: the endpoint fails
  LlmMaintainer m(llm);
  auto r = m.SummarizeSegments({SegmentInput{}}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
}

TEST(LlmMaintainer, ConsolidatesWithSourcesAndDates) {
  auto llm = std::make_shared<ScriptedLlm>();
  llm->Say(R"({"profile":[{"dimension":"Pets","value":"a cat named Miso","evidence":[7, 99]}],
               "user_facts":[{"text":"The user adopted a cat named Miso on 30 April 2025.","pages":[7],"date":"2025-04-30"},
                             {"text":"Unsourced claim.","pages":[123]}],
               "assistant_facts":[]})");
  LlmMaintainer m(llm);
  ConsolidationPage p;
  p.page_id = 7;
  p.user_text = "I adopted a cat named Miso yesterday.";
  p.event_time = MakeTimeMs(2025, 5, 1);
  auto r = m.Consolidate({}, {p});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->slot_updates.size(), 1u);
  EXPECT_EQ(r->slot_updates[0].dimension, "pets");
  EXPECT_EQ(r->slot_updates[0].evidence_pages, std::vector<std::int64_t>{7});
  ASSERT_EQ(r->user_facts.size(), 1u);  // the unsourced fact is dropped
  EXPECT_EQ(r->user_facts[0].event_time, MakeTimeMs(2025, 4, 30));
  EXPECT_EQ(r->model_calls, 1);
}

}  // namespace
}  // namespace engram
