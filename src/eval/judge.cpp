#include "eval/judge.hpp"

#include <cctype>

#include "models/llm/model_json.hpp"

namespace engram::eval {

const char* const kJudgeSystemPrompt =
    "You grade answers to questions about a long conversation between two people. You get the "
    "question, the gold answer (taken as true) and a generated answer, and decide whether the "
    "generated answer is CORRECT or WRONG.\n"
    "Be lenient about wording: paraphrases, synonyms, extra words, a longer or shorter phrasing "
    "and a different order of list items are fine, as long as the answer states the facts of the "
    "gold answer.\n"
    "Be strict about facts: a different person, place, object, number or event is WRONG, and so is "
    "an answer that contradicts the gold answer, hedges between several options, or declines to "
    "answer (says it does not know or that the information is not available). When the gold answer "
    "lists several items, the generated answer must give most of them and none that are false.\n"
    "Be strict about dates and times: the answer must name the same day, month or year as the gold "
    "answer at the precision the gold answer gives. A date written differently that names the same "
    "day counts as correct (\"7 May 2023\", \"May 7, 2023\" and \"2023-05-07\" are the same; so is "
    "\"the Sunday before 25 May 2023\" when that Sunday is 21 May 2023). A different day, month or "
    "year is WRONG.\n"
    "Reply with one JSON object and nothing else: {\"verdict\": \"CORRECT\"} or "
    "{\"verdict\": \"WRONG\"}.";

std::string JudgeUserPrompt(std::string_view question, std::string_view gold, std::string_view generated) {
  std::string s;
  s += "Question: ";
  s += question;
  s += "\nGold answer: ";
  s += gold;
  s += "\nGenerated answer: ";
  s += generated;
  s += "\n\nIs the generated answer CORRECT or WRONG? Reply {\"verdict\": \"CORRECT\"} or "
       "{\"verdict\": \"WRONG\"}.";
  return s;
}

Result<Verdict> ParseVerdict(std::string_view reply) {
  auto doc = llmjson::Extract(reply);
  if (!doc.ok()) return Status::InvalidArgument("judge reply: no JSON object");
  if (!doc->is_object()) return Status::InvalidArgument("judge reply: expected a JSON object");
  auto it = doc->find("verdict");
  if (it == doc->end() || !it->is_string()) return Status::InvalidArgument("judge reply: verdict missing");
  std::string v;
  for (char c : it->get<std::string>()) {
    if (!std::isspace(static_cast<unsigned char>(c))) v.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
  if (v == "CORRECT") return Verdict::kCorrect;
  if (v == "WRONG") return Verdict::kWrong;
  return Status::InvalidArgument("judge reply: verdict is neither CORRECT nor WRONG");
}

JudgeOutcome JudgeAnswer(Llm& judge, std::string_view question, std::string_view gold,
                         std::string_view generated) {
  ChatRequest req;
  req.messages = {{"system", kJudgeSystemPrompt}, {"user", JudgeUserPrompt(question, gold, generated)}};
  req.json_object = true;
  req.temperature = 0;
  JudgeOutcome out;
  for (int attempt = 0; attempt < 2; ++attempt) {
    ++out.calls;
    auto r = judge.Chat(req);
    if (!r.ok()) {
      out.error = r.status().ToString();
      continue;
    }
    out.prompt_tokens += r->prompt_tokens;
    out.completion_tokens += r->completion_tokens;
    auto v = ParseVerdict(r->content);
    if (v.ok()) {
      out.verdict = *v;
      out.error.clear();
      return out;
    }
    out.error = v.status().ToString();
  }
  out.verdict = Verdict::kFailed;
  return out;
}

}  // namespace engram::eval
