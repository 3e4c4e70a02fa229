// `engram eval locomo --answer`: the real binary on LoCoMo conv-26 against the
// fake OpenAI-compatible server. The fake model answers maintenance prompts
// with valid JSON, answers half of the questions with their gold answer (the
// rest with a word no gold answer contains), and judges half of them CORRECT
// (by a hash of the question), so the F1, BLEU-1, judge and usage figures of
// the report can be checked exactly. Also: nothing is admitted (no generated
// answer ever reappears in a later prompt's memory), and --answer without a
// model exits 2.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "testing/fake_maintenance_model.hpp"
#include "testing/fake_openai_server.hpp"
#include "testing/subprocess.hpp"
#include "testing/temp_dir.hpp"

namespace engram {
namespace {

using nlohmann::json;
namespace et = engram::testing;

const std::string kLocomo = ENGRAM_SOURCE_DIR "/../shared/data/locomo10.json";
constexpr const char* kFixedAnswer = "Xyzzy.";  // shares no token with any gold answer
constexpr int kMaxQuestions = 160;  // categories 1-4 and some 5

std::uint32_t Fnv1a(const std::string& s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}
bool JudgedCorrect(const std::string& q) { return Fnv1a(q) % 2 == 0; }
bool AnsweredWithGold(const std::string& q) { return (Fnv1a(q) >> 1) % 2 == 0; }

std::string After(const std::string& text, const std::string& marker) {
  auto p = text.find(marker);
  return p == std::string::npos ? "" : text.substr(p + marker.size());
}
std::string Line(const std::string& text, const std::string& label) {
  std::string rest = After(text, label);
  return rest.substr(0, rest.find('\n'));
}

struct Question {
  std::string text, gold;
  int category = 0;
};

// The first kMaxQuestions questions of conv-26 (file order).
std::vector<Question> Conv26Questions() {
  std::ifstream in(kLocomo);
  json all = json::parse(in, nullptr, false);
  std::vector<Question> out;
  for (const auto& s : all) {
    if (s.value("sample_id", "") != "conv-26") continue;
    for (const auto& q : s["qa"]) {
      if (static_cast<int>(out.size()) == kMaxQuestions) break;
      Question x;
      x.text = q["question"].get<std::string>();
      x.category = q["category"].get<int>();
      if (q.contains("answer")) x.gold = q["answer"].is_string() ? q["answer"].get<std::string>() : q["answer"].dump();
      out.push_back(x);
    }
  }
  return out;
}

class EvalAnswer : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok());
    et::WriteFile(dir_.File("engram.toml"), "[llm]\nmax_retries = 1\ntimeout_s = 5\n");
  }
  et::ProcessResult Run(std::vector<std::string> args, bool with_llm = true) const {
    args.insert(args.begin(), ENGRAM_BINARY);
    std::vector<std::string> env = {"ENGRAM_HOME=" + dir_.path(), "ENGRAM_DB=", "NO_PROXY=127.0.0.1",
                                    "no_proxy=127.0.0.1", "OPENAI_API_KEY=sk-test", "ENGRAM_EMBED_BASE_URL=",
                                    "ENGRAM_EMBED_MODEL="};
    env.push_back("ENGRAM_LLM_BASE_URL=" + (with_llm ? server_.base_url() : std::string()));
    env.push_back(std::string("ENGRAM_LLM_MODEL=") + (with_llm ? "fake-model" : ""));
    return et::RunProcess(args, "", env, std::chrono::seconds(300));
  }
  et::TempDir dir_;
  et::FakeOpenAiServer server_;
};

TEST_F(EvalAnswer, Conv26AgainstTheFakeServer) {
  if (!std::ifstream(kLocomo).good()) GTEST_SKIP() << kLocomo << " is absent";
  const std::vector<Question> questions = Conv26Questions();
  std::map<std::string, Question> by_text;
  std::vector<std::string> scored;  // categories 1-4, in order
  for (const auto& q : questions) {
    by_text[q.text] = q;
    if (q.category >= 1 && q.category <= 4) scored.push_back(q.text);
  }
  ASSERT_GT(scored.size(), 10u);
  const std::string failing = scored[0];  // the judge never gives a valid verdict
  const std::string retried = scored[1];  // the judge's first reply is invalid

  std::mutex mu;
  std::map<std::string, int> judge_calls;
  int answer_calls = 0, leaked = 0;
  server_.SetChatResponder([&](const json& req) -> std::string {
    const std::string prompt = et::LastUserMessage(req);
    std::lock_guard<std::mutex> l(mu);
    if (prompt.find("Generated answer: ") != std::string::npos && prompt.find("\"verdict\"") != std::string::npos) {
      const std::string q = Line(prompt, "Question: ");
      int n = ++judge_calls[q];
      if (q == failing) return "I cannot decide.";
      if (q == retried && n == 1) return "{\"verdict\": \"PROBABLY\"}";
      return JudgedCorrect(q) ? "```json\n{\"verdict\": \"CORRECT\"}\n```" : "{\"verdict\": \"WRONG\"}";
    }
    const std::string q = After(prompt, "the user says:\n");
    if (!q.empty()) {
      ++answer_calls;
      if (prompt.find(kFixedAnswer) != std::string::npos) ++leaked;  // an earlier answer in memory
      auto it = by_text.find(q);
      if (it != by_text.end() && AnsweredWithGold(q)) {
        const Question& x = it->second;
        // The scorer cuts open-domain gold answers at ';'.
        return x.category == 3 ? x.gold.substr(0, x.gold.find(';')) : x.gold;
      }
      return kFixedAnswer;
    }
    return et::MaintenanceReply(req, "ok");
  });

  auto r = Run({"eval", "locomo", kLocomo, "--conversations", "conv-26", "--max-questions",
                std::to_string(kMaxQuestions), "--answer", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out.substr(0, 500);
  ASSERT_TRUE(j.contains("answers"));
  const json& a = j["answers"];

  // Expected figures from the same rules.
  const double n = static_cast<double>(scored.size());
  double gold_answered = 0, correct = 0;
  for (const auto& q : scored) {
    if (AnsweredWithGold(q)) ++gold_answered;
    if (q != failing && JudgedCorrect(q)) ++correct;
  }
  EXPECT_EQ(j["questions_total"], kMaxQuestions);
  EXPECT_EQ(a["overall"]["questions"].get<double>(), n);
  EXPECT_NEAR(a["overall"]["f1"].get<double>(), gold_answered / n, 1e-4);
  EXPECT_NEAR(a["overall"]["bleu1"].get<double>(), gold_answered / n, 1e-4);
  EXPECT_NEAR(a["overall"]["judge"].get<double>(), correct / (n - 1), 1e-4);
  EXPECT_EQ(a["overall"]["judge_failures"], 1);
  double by_cat_questions = 0;
  for (const char* c : {"1", "2", "3", "4"}) {
    ASSERT_TRUE(a["by_category"].contains(c)) << c;
    const json& g = a["by_category"][c];
    by_cat_questions += g["questions"].get<double>();
    for (const char* k : {"f1", "bleu1", "judge"}) {
      if (g["questions"].get<int>() == 0) continue;
      ASSERT_TRUE(g[k].is_number()) << c << " " << k;
      EXPECT_GE(g[k].get<double>(), 0.0);
      EXPECT_LE(g[k].get<double>(), 1.0);
    }
  }
  EXPECT_EQ(by_cat_questions, n);
  EXPECT_FALSE(a["by_category"].contains("5"));
  EXPECT_EQ(a["judge_prompt_version"], "engram-judge-v1");
  EXPECT_EQ(a["usage_source"], "client_counters");
  EXPECT_EQ(a["answer_model"], "openai:fake-model");
  // One answer and one judge call per question, plus the retry and the
  // failure's second call; the fake server reports 11 + 7 tokens per call.
  // Maintenance calls (made before the questions) are not counted.
  const double calls = 2 * n + 2;
  EXPECT_NEAR(a["llm_calls_per_question"].get<double>(), calls / n, 1e-4);
  EXPECT_NEAR(a["prompt_tokens_per_question"].get<double>(), 11 * calls / n, 1e-3);
  EXPECT_NEAR(a["completion_tokens_per_question"].get<double>(), 7 * calls / n, 1e-3);
  EXPECT_GT(server_.chat_requests(), static_cast<int>(calls));  // LLM maintenance ran too
  EXPECT_EQ(answer_calls, static_cast<int>(n));
  EXPECT_EQ(judge_calls[failing], 2);
  EXPECT_EQ(judge_calls[retried], 2);
  // Nothing was admitted: no generated answer ever came back as memory, and
  // the store holds the conversation's turns only.
  EXPECT_EQ(leaked, 0);
  EXPECT_GT(j["ingest"]["turns"].get<int>(), 100);
  std::printf("conv-26, %d questions (%d answered): F1 %.4f, BLEU-1 %.4f, J %.4f, %d judge failure; "
              "%.3f LLM calls, %.1f prompt and %.1f completion tokens per question; %d chat requests in all\n",
              kMaxQuestions, static_cast<int>(n), a["overall"]["f1"].get<double>(),
              a["overall"]["bleu1"].get<double>(), a["overall"]["judge"].get<double>(),
              a["overall"]["judge_failures"].get<int>(), a["llm_calls_per_question"].get<double>(),
              a["prompt_tokens_per_question"].get<double>(), a["completion_tokens_per_question"].get<double>(),
              server_.chat_requests());

  // The table output has the answers section.
  auto t = Run({"eval", "locomo", kLocomo, "--conversations", "conv-26", "--max-questions", "3", "--answer"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("Answers (model openai:fake-model"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("engram-judge-v1"), std::string::npos);
  EXPECT_NE(t.out.find("LLM calls"), std::string::npos);
}

TEST_F(EvalAnswer, AnswerWithoutAModelExitsTwo) {
  auto r = Run({"eval", "locomo", kLocomo, "--answer", "--json"}, false);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no language model is configured"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ENGRAM_LLM_BASE_URL"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(server_.chat_requests(), 0);
}

TEST_F(EvalAnswer, WithoutAnswerNoModelIsCalled) {
  if (!std::ifstream(kLocomo).good()) GTEST_SKIP() << kLocomo << " is absent";
  auto r = Run({"eval", "locomo", kLocomo, "--conversations", "conv-26", "--max-questions", "5", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.contains("answers"));
  EXPECT_EQ(j["questions_total"], 5);
  EXPECT_EQ(server_.chat_requests(), 0);
}

}  // namespace
}  // namespace engram
