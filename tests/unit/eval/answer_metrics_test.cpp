// Answer metrics and the LLM judge: hand-computed F1 / BLEU-1 cases, verdict
// parsing, and the judge's single retry (scripted model, no network).
#include "eval/answer_metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "eval/judge.hpp"
#include "testing/fakes.hpp"

namespace engram::eval {
namespace {

TEST(AnswerMetrics, NormalisationLowersStripsPunctuationAndArticles) {
  EXPECT_EQ(NormalizeAnswer("The Cat, sat on A mat!"), "cat sat on mat");
  EXPECT_EQ(NormalizeAnswer("  an  apple\tand\nthe pear. "), "apple and pear");
  // Punctuation goes without leaving a space; words only containing an article stay.
  EXPECT_EQ(NormalizeAnswer("don't stop; theatre, A-team"), "dont stop theatre ateam");
  EXPECT_EQ(NormalizeAnswer("\"Charlotte's Web\""), "charlottes web");
  EXPECT_EQ(NormalizeAnswer("7 May 2023"), "7 may 2023");
  EXPECT_EQ(NormalizeAnswer("Café ÉTÉ"), "café ÉtÉ");  // only ASCII is lower-cased
  EXPECT_EQ(NormalizeAnswer("the a an ..."), "");
  EXPECT_EQ(AnswerTokens("The red, red car"), (std::vector<std::string>{"red", "red", "car"}));
}

TEST(AnswerMetrics, TokenF1IsAMultisetOverlap) {
  EXPECT_DOUBLE_EQ(TokenF1("Lisbon", "lisbon."), 1.0);
  // [red car] vs [red bus]: overlap 1, P = R = 1/2.
  EXPECT_DOUBLE_EQ(TokenF1("a red car", "the red bus"), 0.5);
  // [cat cat dog] vs [cat dog dog bird]: overlap min(2,1) + min(1,2) = 2;
  // P = 2/3, R = 2/4, F1 = 2 * (1/3) / (7/6) = 4/7.
  EXPECT_NEAR(TokenF1("the the cat cat dog", "cat dog dog bird"), 4.0 / 7.0, 1e-12);
  // [she lives in lisbon] vs [lisbon]: P = 1/4, R = 1, F1 = 0.4.
  EXPECT_NEAR(TokenF1("She lives in Lisbon.", "Lisbon"), 0.4, 1e-12);
  EXPECT_DOUBLE_EQ(TokenF1("no idea", "Lisbon"), 0.0);
  EXPECT_DOUBLE_EQ(TokenF1("", "Lisbon"), 0.0);
  EXPECT_DOUBLE_EQ(TokenF1("the", "a"), 1.0);  // both normalise to nothing
}

TEST(AnswerMetrics, MultiHopF1AveragesTheBestMatchOfEachGoldPart) {
  const char* gold = "pottery, camping, painting";
  // One prediction part [she likes pottery and painting] (5 tokens): pottery 1/3,
  // camping 0, painting 1/3 -> mean 2/9.
  EXPECT_NEAR(MultiAnswerF1("She likes pottery and painting", gold), 2.0 / 9.0, 1e-12);
  // Prediction parts [pottery] [painting]: 1, 0, 1 -> 2/3.
  EXPECT_NEAR(MultiAnswerF1("Pottery, painting", gold), 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(MultiAnswerF1("painting, camping, pottery", gold), 1.0, 1e-12);
  // Empty parts are dropped on both sides.
  EXPECT_NEAR(MultiAnswerF1("pottery,, ", "pottery, ,"), 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(MultiAnswerF1(" , ", gold), 0.0);
  // A gold answer without commas is plain token F1.
  EXPECT_NEAR(MultiAnswerF1("She lives in Lisbon.", "Lisbon"), 0.4, 1e-12);
  // AnswerF1 uses the split only for category 1.
  EXPECT_NEAR(AnswerF1(1, "Pottery, painting", gold), 2.0 / 3.0, 1e-12);
  // Category 4: [pottery painting] vs [pottery camping painting]: P 1, R 2/3 -> 0.8.
  EXPECT_NEAR(AnswerF1(4, "Pottery, painting", gold), 0.8, 1e-12);
}

TEST(AnswerMetrics, OpenDomainGoldIsCutAtTheFirstSemicolon) {
  EXPECT_EQ(ScoringGold(3, "Likely yes; she said she loves dogs"), "Likely yes");
  EXPECT_EQ(ScoringGold(4, "a; b"), "a; b");
  EXPECT_DOUBLE_EQ(AnswerF1(3, "likely yes", "Likely yes; she said she loves dogs"), 1.0);
}

TEST(AnswerMetrics, Bleu1IsClippedPrecisionWithABrevityPenalty) {
  // [cat cat] vs [cat sat]: clipped 1/2, c = r -> BP 1.
  EXPECT_DOUBLE_EQ(Bleu1("the cat the cat", "cat sat"), 0.5);
  // [cat] vs [cat sat on mat]: precision 1, BP exp(1 - 4/1).
  EXPECT_NEAR(Bleu1("Cat", "the cat sat on the mat"), std::exp(-3.0), 1e-12);
  // Longer than the reference: no penalty, precision 2/5.
  EXPECT_DOUBLE_EQ(Bleu1("cat sat on mat today", "cat sat"), 0.4);
  // [in june 2023] vs [june 2023]: 2/3.
  EXPECT_NEAR(Bleu1("In June, 2023", "June 2023"), 2.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(Bleu1("", "cat"), 0.0);
  EXPECT_DOUBLE_EQ(Bleu1("", ""), 1.0);
  EXPECT_DOUBLE_EQ(Bleu1("dog", "cat"), 0.0);
}

TEST(Judge, PromptIsVersionedAndCarriesTheThreeTexts) {
  EXPECT_STREQ(kJudgePromptVersion, "engram-judge-v1");
  std::string u = JudgeUserPrompt("When did Mel paint?", "7 May 2023", "On May 7, 2023.");
  EXPECT_NE(u.find("Question: When did Mel paint?\n"), std::string::npos);
  EXPECT_NE(u.find("Gold answer: 7 May 2023\n"), std::string::npos);
  EXPECT_NE(u.find("Generated answer: On May 7, 2023.\n"), std::string::npos);
  std::string sys = kJudgeSystemPrompt;
  EXPECT_NE(sys.find("same day"), std::string::npos);
  EXPECT_NE(sys.find("{\"verdict\": \"CORRECT\"}"), std::string::npos);
}

TEST(Judge, VerdictParsingToleratesFencesAndCase) {
  EXPECT_EQ(*ParseVerdict(R"({"verdict": "CORRECT"})"), Verdict::kCorrect);
  EXPECT_EQ(*ParseVerdict("```json\n{\"verdict\": \"wrong\"}\n```"), Verdict::kWrong);
  EXPECT_EQ(*ParseVerdict("Sure. {\"verdict\": \" Correct \"} Done."), Verdict::kCorrect);
  EXPECT_FALSE(ParseVerdict("CORRECT").ok());
  EXPECT_FALSE(ParseVerdict(R"({"verdict": "MAYBE"})").ok());
  EXPECT_FALSE(ParseVerdict(R"({"answer": "CORRECT"})").ok());
  EXPECT_FALSE(ParseVerdict(R"(["CORRECT"])").ok());
  EXPECT_FALSE(ParseVerdict(R"({"verdict": true})").ok());
}

TEST(Judge, AnInvalidReplyIsRetriedOnceThenCountsAsAFailure) {
  testing::ScriptedLlm llm;
  llm.Say(R"({"verdict": "CORRECT"})");
  JudgeOutcome ok = JudgeAnswer(llm, "q", "gold", "answer");
  EXPECT_EQ(ok.verdict, Verdict::kCorrect);
  EXPECT_EQ(ok.calls, 1);
  EXPECT_EQ(ok.prompt_tokens, 10);
  ASSERT_EQ(llm.requests.size(), 1u);
  EXPECT_TRUE(llm.requests[0].json_object);
  EXPECT_EQ(llm.requests[0].temperature, 0.0);
  EXPECT_EQ(llm.requests[0].messages.at(0).content, kJudgeSystemPrompt);

  llm.Say("I think it is right");
  llm.Say(R"({"verdict": "WRONG"})");
  JudgeOutcome retried = JudgeAnswer(llm, "q", "gold", "answer");
  EXPECT_EQ(retried.verdict, Verdict::kWrong);
  EXPECT_EQ(retried.calls, 2);
  EXPECT_EQ(retried.completion_tokens, 20);
  EXPECT_TRUE(retried.error.empty());

  llm.Say("maybe");
  llm.Say("{\"verdict\": \"perhaps\"}");
  JudgeOutcome failed = JudgeAnswer(llm, "q", "gold", "answer");
  EXPECT_EQ(failed.verdict, Verdict::kFailed);
  EXPECT_EQ(failed.calls, 2);
  EXPECT_FALSE(failed.error.empty());
  EXPECT_EQ(failed.error.find("perhaps"), std::string::npos);  // never quotes the reply

  // A model that is down: two calls, a failure, no exception.
  JudgeOutcome down = JudgeAnswer(llm, "q", "gold", "answer");
  EXPECT_EQ(down.verdict, Verdict::kFailed);
  EXPECT_EQ(down.calls, 2);
  EXPECT_NE(down.error.find("llm endpoint"), std::string::npos);
}

}  // namespace
}  // namespace engram::eval
