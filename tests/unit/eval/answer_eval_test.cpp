// `RunLocomoEval` with answers: a scripted in-process model answers and judges
// a tiny LoCoMo-format file; checks the arithmetic of the "answers" report,
// that nothing is admitted, --max-questions, and the errors.
#include <gtest/gtest.h>

#include <memory>

#include "engram/engine.hpp"
#include "eval/answer_eval.hpp"
#include "eval/locomo_eval.hpp"
#include "eval/metrics.hpp"
#include "testing/fakes.hpp"
#include "testing/temp_dir.hpp"

namespace engram::eval {
namespace {

using testing::ScriptedLlm;
using testing::TempDir;
using testing::WriteFile;

// 6 turns; questions of categories 4, 1, 2, 5 and 3 (category 5 is not answered).
constexpr const char* kFixture = R"([
 {"sample_id": "s1",
  "conversation": {
   "speaker_a": "Alice", "speaker_b": "Bob",
   "session_1_date_time": "1:56 pm on 8 May, 2023",
   "session_1": [
    {"speaker": "Alice", "dia_id": "D1:1", "text": "I adopted a golden retriever puppy named Max."},
    {"speaker": "Bob", "dia_id": "D1:2", "text": "Golden retrievers are wonderful family dogs."},
    {"speaker": "Alice", "dia_id": "D1:3", "text": "My sister Clara is moving to Lisbon for a teaching job."},
    {"speaker": "Bob", "dia_id": "D1:4", "text": "Lisbon is lovely. Will you visit her there?"}],
   "session_2_date_time": "10:04 am on 19 June, 2023",
   "session_2": [
    {"speaker": "Alice", "dia_id": "D2:1", "text": "We ran the city marathon in under four hours."},
    {"speaker": "Bob", "dia_id": "D2:2", "text": "Finishing a marathon is a huge achievement."},
    {"speaker": "Alice", "dia_id": "D2:3", "text": "Clara sent me photos of the old tram."},
    {"speaker": "Bob", "dia_id": "D2:4", "text": "The yellow trams there are famous."}]},
  "qa": [
   {"question": "Where is Clara moving?", "answer": "Lisbon", "evidence": ["D1:3"], "category": 4},
   {"question": "Where does the sister who sent tram photos live?", "answer": "Lisbon",
    "evidence": ["D1:3; D2:3"], "category": 1},
   {"question": "When did Alice run the city marathon?", "answer": "June 2023",
    "evidence": ["D2:1"], "category": 2},
   {"question": "What is the name of Bob's violin teacher?", "adversarial_answer": "Clara",
    "evidence": ["D1:1"], "category": 5},
   {"question": "What pets might Alice own?", "answer": "a dog; she adopted a puppy",
    "evidence": ["D1:1"], "category": 3}]}
])";

class AnswerEvalTest : public ::testing::Test {
 protected:
  void SetUp() override { WriteFile(path_, kFixture); }
  EvalOptions Options() {
    EvalOptions o;
    o.budgets = {2000, 60};
    o.work_dir = dir_.File("work");
    o.engine.stm_capacity = 2;
    o.engine.llm = llm_;
    o.answer = true;
    return o;
  }
  TempDir dir_;
  std::string path_ = dir_.File("locomo.json");
  std::shared_ptr<ScriptedLlm> llm_ = std::make_shared<ScriptedLlm>();
};

TEST_F(AnswerEvalTest, ScoresAnswersAndJudgeVerdicts) {
  // Per answered question: the answer, then the judge's reply (or two).
  llm_->Say("Lisbon");                                      // cat 4: F1 1, BLEU 1
  llm_->Say(R"({"verdict": "CORRECT"})");
  llm_->Say("She lives in Lisbon.");                        // cat 1: F1 0.4, BLEU 0.25
  llm_->Say("```json\n{\"verdict\": \"wrong\"}\n```");
  llm_->Say("In June 2023");                                // cat 2: F1 0.8, BLEU 2/3
  llm_->Say("maybe");                                       // invalid twice: judge failure
  llm_->Say("still not sure");
  llm_->Say("A dog");                                       // cat 3 (gold cut at ';'): F1 1, BLEU 1
  llm_->Say("no json here");                                // invalid, then valid on the retry
  llm_->Say(R"({"verdict": "CORRECT"})");
  auto r = RunLocomoEval(path_, Options());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(llm_->calls.load(), 10);
  EXPECT_TRUE(llm_->replies.empty());
  const nlohmann::json& a = (*r)["answers"];
  ASSERT_TRUE(a.is_object()) << r->dump(2);
  EXPECT_EQ(a["overall"]["questions"], 4);
  EXPECT_DOUBLE_EQ(a["overall"]["f1"].get<double>(), 0.8);  // (1 + 0.4 + 0.8 + 1) / 4
  EXPECT_DOUBLE_EQ(a["overall"]["bleu1"].get<double>(), Round((1 + 0.25 + 2.0 / 3.0 + 1) / 4, 4));
  EXPECT_DOUBLE_EQ(a["overall"]["judge"].get<double>(), 0.6667);  // 2 correct of 3 judged
  EXPECT_EQ(a["overall"]["judge_failures"], 1);
  EXPECT_DOUBLE_EQ(a["by_category"]["1"]["judge"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(a["by_category"]["1"]["f1"].get<double>(), 0.4);
  EXPECT_TRUE(a["by_category"]["2"]["judge"].is_null());  // its only verdict failed
  EXPECT_EQ(a["by_category"]["2"]["judge_failures"], 1);
  EXPECT_EQ(a["by_category"]["3"]["name"], "open-domain");
  EXPECT_FALSE(a["by_category"].contains("5"));
  // 4 answers + 6 judge calls; 10 prompt and 10 completion tokens per scripted reply.
  EXPECT_DOUBLE_EQ(a["llm_calls_per_question"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(a["prompt_tokens_per_question"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(a["completion_tokens_per_question"].get<double>(), 25.0);
  EXPECT_EQ(a["usage_source"], "replies");
  EXPECT_EQ(a["judge_prompt_version"], "engram-judge-v1");
  EXPECT_EQ(a["budget"], 2000);
  // The answer prompt asked for a short phrase; the judge saw the question.
  EXPECT_NE(llm_->requests[0].messages[0].content.find("a short phrase"), std::string::npos);
  EXPECT_NE(llm_->requests[1].messages[1].content.find("Question: Where is Clara moving?"), std::string::npos);
  // Retrieval figures are unchanged by answering, and nothing was admitted.
  EXPECT_EQ((*r)["questions_total"], 5);
  EXPECT_EQ((*r)["ingest"]["turns"], 4);
  EngineOptions eo;
  eo.db_path = dir_.File("work") + "/sample-0.db";
  auto engine = Engine::Open(eo);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto stats = (*engine)->GetStats(nullptr);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->turns_admitted, 4);
}

TEST_F(AnswerEvalTest, WithoutAnswerThereIsNoAnswersObjectAndNoCall) {
  EvalOptions o = Options();
  o.answer = false;
  auto r = RunLocomoEval(path_, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->contains("answers"));
  EXPECT_EQ(llm_->calls.load(), 0);
}

TEST_F(AnswerEvalTest, MaxQuestionsAndASeparateJudge) {
  auto judge = std::make_shared<ScriptedLlm>();
  llm_->Say("Lisbon");
  llm_->Say("Lisbon");
  judge->Say(R"({"verdict": "CORRECT"})");
  judge->Say(R"({"verdict": "CORRECT"})");
  EvalOptions o = Options();
  o.max_questions = 2;
  o.judge = judge;
  auto r = RunLocomoEval(path_, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["questions_total"], 2);
  EXPECT_EQ((*r)["answers"]["overall"]["questions"], 2);
  EXPECT_DOUBLE_EQ((*r)["answers"]["overall"]["judge"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ((*r)["answers"]["llm_calls_per_question"].get<double>(), 2.0);
  EXPECT_EQ(llm_->calls.load(), 2);
  EXPECT_EQ(judge->calls.load(), 2);
}

TEST_F(AnswerEvalTest, Errors) {
  EvalOptions o = Options();
  o.engine.llm = nullptr;
  auto r = RunLocomoEval(path_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  o = Options();
  o.max_questions = -1;
  EXPECT_EQ(RunLocomoEval(path_, o).status().code(), StatusCode::kInvalidArgument);
  // The model is down: the chat call fails and the run stops with its error.
  r = RunLocomoEval(path_, Options());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("llm endpoint"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("s1"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace engram::eval
