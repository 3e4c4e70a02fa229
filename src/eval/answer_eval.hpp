// The answer part of the LoCoMo harness (`--answer`): one question answered
// through Engine::Chat without admitting anything, scored with token F1,
// BLEU-1 and the LLM judge; per-group sums and the usage of the models.
// Category 5 (adversarial: no gold answer) is not answered or scored.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dialogue_formats.hpp"
#include "engram/engine.hpp"
#include "eval/judge.hpp"
#include "models/llm.hpp"

namespace engram::eval {

// The answer length asked of the chat path (ChatOptions.answer_length).
inline constexpr const char* kEvalAnswerLength = "a short phrase";

// True for the categories whose answers are scored (1-4).
inline bool AnswerScored(int category) { return category >= 1 && category <= 4; }

struct AnswerScore {
  double f1 = 0;
  double bleu1 = 0;
  Verdict verdict = Verdict::kFailed;
};

// Sums of the answer scores of one group.
class AnswerGroup {
 public:
  void Add(const AnswerScore& s);
  std::size_t questions() const { return questions_; }
  // {"f1","bleu1","judge","judge_failures","questions"}: f1/bleu1 means over
  // the questions, judge = CORRECT / (CORRECT + WRONG) (judge failures left
  // out); rounded to 4 places; null when there is nothing to average.
  nlohmann::json ToJson() const;

 private:
  std::size_t questions_ = 0, correct_ = 0, wrong_ = 0, failures_ = 0;
  double f1_ = 0, bleu1_ = 0;
};

// Model usage of the answer phase. Counted from the OpenAI clients' counters
// (deltas around each conversation's questions) when every model in use is an
// OpenAiClient, else from the replies (ChatReply and judge outcomes).
class AnswerUsage {
 public:
  AnswerUsage(std::shared_ptr<Llm> answer, std::shared_ptr<Llm> judge);
  void BeginConversation();
  void EndConversation();
  void AddReplies(std::int64_t calls, std::int64_t prompt, std::int64_t completion);
  // {"llm_calls_per_question","prompt_tokens_per_question",
  //  "completion_tokens_per_question","usage_source"} over `questions`.
  nlohmann::json ToJson(std::size_t questions) const;

 private:
  struct Counts {
    std::int64_t calls = 0, prompt = 0, completion = 0;
  };
  Counts Snapshot() const;
  std::vector<std::shared_ptr<Llm>> models_;  // distinct
  bool counters_ = false;
  Counts start_, from_counters_, from_replies_;
};

// The answer results of a run (categories 1-4).
struct AnswerTotals {
  AnswerTotals(std::shared_ptr<Llm> answer, std::shared_ptr<Llm> judge);
  std::shared_ptr<Llm> answer_llm, judge_llm;
  AnswerGroup overall;
  std::map<int, AnswerGroup> by_category;
  AnswerUsage usage;
  // The "answers" object of the report (see locomo_eval.hpp).
  nlohmann::json ToJson(int budget) const;
};

// Answers one question (category 1-4) with Engine::Chat (admit = false, the
// retrieval options with the given budget, kEvalAnswerLength), scores it and
// adds it to `t`. Errors of the chat call are returned (the harness stops);
// judge failures are counted.
Status AnswerQuestion(Engine& engine, const Scope& scope, const LocomoQuestion& q, int budget,
                      const RetrieveOptions& retrieve, AnswerTotals& t);

}  // namespace engram::eval
