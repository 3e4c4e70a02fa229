// The LLM judge of `engram eval locomo --answer`: one fixed prompt (kept here,
// versioned by kJudgePromptVersion; change the version whenever the wording
// changes, since judge accuracy is only comparable under one prompt), the
// parsing of its verdict, and one judged question with a single retry.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engram/result.hpp"
#include "models/llm.hpp"

namespace engram::eval {

inline constexpr const char* kJudgePromptVersion = "engram-judge-v1";

// The system message of the judge (fixed text).
extern const char* const kJudgeSystemPrompt;

// The user message: the question, the gold answer and the generated answer,
// one per labelled line ("Question: ...", "Gold answer: ...",
// "Generated answer: ..."), then the reply format.
std::string JudgeUserPrompt(std::string_view question, std::string_view gold, std::string_view generated);

enum class Verdict { kCorrect, kWrong, kFailed };

// The verdict of a judge reply: a JSON object {"verdict": "CORRECT"|"WRONG"}
// (case-insensitive value, surrounding spaces ignored), found fence- and
// prose-tolerantly (llmjson::Extract). InvalidArgument otherwise (never
// quoting the reply). Never returns kFailed.
Result<Verdict> ParseVerdict(std::string_view reply);

struct JudgeOutcome {
  Verdict verdict = Verdict::kFailed;
  int calls = 0;  // model calls made (1 or 2)
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::string error;  // why the verdict is kFailed ("" otherwise)
};

// Asks `judge` (temperature 0, JSON reply requested) whether `generated`
// answers `question` as `gold` does. An invalid reply or a failed call is
// retried once; a second failure gives kFailed (a judge failure, not a wrong
// answer). Never throws.
JudgeOutcome JudgeAnswer(Llm& judge, std::string_view question, std::string_view gold,
                         std::string_view generated);

}  // namespace engram::eval
