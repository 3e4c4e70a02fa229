#include "eval/answer_eval.hpp"

#include <algorithm>

#include "eval/answer_metrics.hpp"
#include "eval/locomo_eval.hpp"
#include "eval/metrics.hpp"
#include "models/openai/openai_client.hpp"

namespace engram::eval {

namespace {

nlohmann::json MeanOrNull(double sum, std::size_t n) {
  if (n == 0) return nullptr;
  return Round(sum / static_cast<double>(n), 4);
}

}  // namespace

void AnswerGroup::Add(const AnswerScore& s) {
  ++questions_;
  f1_ += s.f1;
  bleu1_ += s.bleu1;
  switch (s.verdict) {
    case Verdict::kCorrect: ++correct_; break;
    case Verdict::kWrong: ++wrong_; break;
    case Verdict::kFailed: ++failures_; break;
  }
}

nlohmann::json AnswerGroup::ToJson() const {
  return {{"f1", MeanOrNull(f1_, questions_)},
          {"bleu1", MeanOrNull(bleu1_, questions_)},
          {"judge", MeanOrNull(static_cast<double>(correct_), correct_ + wrong_)},
          {"judge_failures", failures_},
          {"questions", questions_}};
}

AnswerUsage::AnswerUsage(std::shared_ptr<Llm> answer, std::shared_ptr<Llm> judge) {
  for (auto& m : {std::move(answer), std::move(judge)}) {
    if (m && std::find(models_.begin(), models_.end(), m) == models_.end()) models_.push_back(m);
  }
  counters_ = !models_.empty() && std::all_of(models_.begin(), models_.end(), [](const auto& m) {
    return dynamic_cast<const OpenAiClient*>(m.get()) != nullptr;
  });
}

AnswerUsage::Counts AnswerUsage::Snapshot() const {
  Counts c;
  if (!counters_) return c;
  for (const auto& m : models_) {
    ClientStats s = static_cast<const OpenAiClient*>(m.get())->Stats();
    c.calls += s.chat_calls;
    c.prompt += s.prompt_tokens;
    c.completion += s.completion_tokens;
  }
  return c;
}

void AnswerUsage::BeginConversation() { start_ = Snapshot(); }

void AnswerUsage::EndConversation() {
  Counts now = Snapshot();
  from_counters_.calls += now.calls - start_.calls;
  from_counters_.prompt += now.prompt - start_.prompt;
  from_counters_.completion += now.completion - start_.completion;
  start_ = now;
}

void AnswerUsage::AddReplies(std::int64_t calls, std::int64_t prompt, std::int64_t completion) {
  from_replies_.calls += calls;
  from_replies_.prompt += prompt;
  from_replies_.completion += completion;
}

nlohmann::json AnswerUsage::ToJson(std::size_t questions) const {
  const Counts& c = counters_ ? from_counters_ : from_replies_;
  auto per = [&](std::int64_t x) { return MeanOrNull(static_cast<double>(x), questions); };
  return {{"llm_calls_per_question", per(c.calls)},
          {"prompt_tokens_per_question", per(c.prompt)},
          {"completion_tokens_per_question", per(c.completion)},
          {"usage_source", counters_ ? "client_counters" : "replies"}};
}

AnswerTotals::AnswerTotals(std::shared_ptr<Llm> answer, std::shared_ptr<Llm> judge)
    : answer_llm(answer), judge_llm(judge), usage(answer, judge) {
  for (int c = 1; c <= 4; ++c) by_category.try_emplace(c);
}

nlohmann::json AnswerTotals::ToJson(int budget) const {
  nlohmann::json j;
  j["overall"] = overall.ToJson();
  nlohmann::json cats = nlohmann::json::object();
  for (const auto& [c, g] : by_category) {
    nlohmann::json cj = g.ToJson();
    cj["name"] = LocomoCategoryName(c);
    cats[std::to_string(c)] = std::move(cj);
  }
  j["by_category"] = std::move(cats);
  j.update(usage.ToJson(overall.questions()));
  j["judge_prompt_version"] = kJudgePromptVersion;
  j["answer_model"] = answer_llm ? answer_llm->Name() : "";
  j["judge_model"] = judge_llm ? judge_llm->Name() : "";
  j["answer_length"] = kEvalAnswerLength;
  j["budget"] = budget;
  j["excluded"] = "category 5 (adversarial, no gold answer) is not answered or scored";
  return j;
}

Status AnswerQuestion(Engine& engine, const Scope& scope, const LocomoQuestion& q, int budget,
                      const RetrieveOptions& retrieve, AnswerTotals& t) {
  ChatOptions co;
  co.admit = false;
  co.answer_length = kEvalAnswerLength;
  co.retrieve = retrieve;
  co.retrieve.budget_tokens = budget;
  ENGRAM_ASSIGN_OR_RETURN(ChatReply reply, engine.Chat(scope, q.question, co));
  AnswerScore s;
  s.f1 = AnswerF1(q.category, reply.answer, q.answer);
  s.bleu1 = Bleu1(reply.answer, ScoringGold(q.category, q.answer));
  JudgeOutcome judged = JudgeAnswer(*t.judge_llm, q.question, q.answer, reply.answer);
  s.verdict = judged.verdict;
  t.usage.AddReplies(reply.model_calls + judged.calls, reply.prompt_tokens + judged.prompt_tokens,
                     reply.completion_tokens + judged.completion_tokens);
  t.overall.Add(s);
  t.by_category[q.category].Add(s);
  return Status::Ok();
}

}  // namespace engram::eval
