// The LoCoMo retrieval benchmark: ingests each conversation of a LoCoMo file
// into a fresh store, runs maintenance, asks every question and measures
// which evidence turns come back (no LLM; see docs in benchmarks.md). With
// EvalOptions.answer, also answers and judges the questions with an LLM
// (eval/answer_eval.hpp).
//
// Deterministic for deterministic engines (the built-in one): the same file
// and options give the same metrics; only the timing fields vary.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engram/options.hpp"
#include "engram/result.hpp"
#include "engram/types.hpp"
#include "eval/metrics.hpp"
#include "core/dialogue_formats.hpp"

namespace engram::eval {

struct EvalOptions {
  // Sample ids to evaluate, in any order (evaluated in file order); empty = all.
  std::vector<std::string> conversations;
  // Context budgets in tokens (each > 0). Sorted and deduplicated by the harness.
  std::vector<int> budgets{500, 1000, 2000};
  // Directory for the temporary stores (one file per conversation, replaced
  // when present). Created when missing and left in place; when empty, the
  // harness makes a fresh temporary directory and removes it afterwards.
  std::string work_dir;
  // Engine configuration; db_path is set by the harness (one store per
  // conversation) and background_maintenance is forced off.
  EngineOptions engine;
  // At most this many questions per conversation (the first ones, in file
  // order); 0 = all.
  int max_questions = 0;
  // What every retrieval asks for: a caller's defaults unless set (the
  // budget is each of `budgets`). Whatever differs from RetrieveOptions{}
  // is listed in the report's config.changed.
  RetrieveOptions retrieve;
  // Conversations at this index of the file and after (file order, 0-based)
  // are held out: the ranking was never tuned on them. The report gives them
  // and the others ("tuned") apart as well as together.
  int held_out_from = 5;
  // The timed retrieval of each question is made this many times in a row
  // [1, 1000]; the report's latency_ms stays that of the first call (what
  // a question asked once costs), and latency_ms.warm gives the fastest of
  // each question's calls (the cost without a shared host's noise or the
  // first call's caches; for comparing builds). Results come from the first
  // call.
  int repeat = 1;
  // Called once per scored question (evidence found) with the conversation,
  // the question, its normalised evidence, its score and the ranked source
  // refs (best first, at most 20): what a failure analysis needs.
  std::function<void(const std::string& conversation, const LocomoQuestion& q,
                     const std::vector<std::string>& evidence, const QuestionScore& score,
                     const std::vector<std::string>& ranked_refs)>
      on_question;
  // Answer scoring (needs engine.llm): every question of categories 1-4 is
  // answered through Engine::Chat (admit = false: nothing enters memory;
  // budget = the largest budget; answer_length "a short phrase") and scored
  // with token F1, BLEU-1 and the LLM judge (eval/judge.hpp).
  bool answer = false;
  // The judge model; null = engine.llm.
  std::shared_ptr<Llm> judge;
  // Called after each conversation's ingest+maintenance (done += its turns)
  // and after each question (done += 1); total = turns + questions.
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// Runs the benchmark on the LoCoMo file at `locomo_path`. For each selected
// conversation: scope {tenant "default", user = sample id, assistant
// "assistant"}; the turns of ParseDialogueText(kLocomo) admitted with
// AddTurns (batches of 500, timed); Maintain(nullptr) to completion (timed);
// then every question retrieved once per budget (largest budget first; that
// call is timed and its `ranked` list gives recall@k).
//
// Evidence ids are split on ';' ',' and whitespace and deduplicated; ids that
// match no utterance of the conversation are dropped and counted
// ("skipped_evidence"); a question left without evidence is not scored and
// is counted in its group's "skipped_questions".
//
// Result (JSON object):
//   overall       categories 1-4: {"recall@5","recall@10","recall@20","all@10",
//                 "budget_recall@<B>"..., "questions", "skipped_questions"}
//                 (metrics are means over scored questions; null when none)
//   by_category   {"1".."5" (always) and any other id seen: same keys + "name"}
//   config        {"benchmark","embedder","maintainer","wordnet","budgets","engram_version",
//                  "conversations","held_out_from","retrieve" (every option,
//                  ranking constants included),"changed" (the options that
//                  differ from a caller's defaults: name -> value),"ranking"}
//   splits        {"tuned","held_out"}: each {"conversations", "overall",
//                 "by_category"} over the conversations before / from
//                 held_out_from (a split with no conversation is left out)
//   ingest        {"turns","utterances","add_s","turns_per_s","maintain_s","jobs_failed"}
//   latency_ms    {"p50","p95","p99","mean","cpu_p50","calls","budget"}: one
//                 retrieval per question (all categories), under the largest
//                 budget; with repeat > 1 also "warm": {"p50","p95","mean",
//                 "repeat"} of each question's fastest call
//   context_tokens {"<B>": mean context tokens over the overall questions}
//   skipped_evidence  count of evidence ids matching no utterance
//   questions_total   questions asked (all categories)
//   answers       only with opt.answer:
//                 {"overall": {"f1","bleu1","judge","judge_failures","questions"}
//                  (categories 1-4; judge = CORRECT / judged, failures apart),
//                  "by_category": {"1".."4": same keys + "name"},
//                  "llm_calls_per_question", "prompt_tokens_per_question",
//                  "completion_tokens_per_question" (answer + judge calls of
//                  the question phase; maintenance excluded), "usage_source",
//                  "judge_prompt_version", "answer_model", "judge_model",
//                  "answer_length", "budget", "excluded"}
//                 Category 5 is not answered (no gold answer).
//
// Errors: NotFound/IoError for the file, InvalidArgument for a malformed file,
// an unknown conversation id, a budget <= 0 or no budget, max_questions < 0,
// repeat outside [1, 1000],
// answer without engine.llm; any engine error, including a failed chat call
// (prefixed with the conversation id). Never throws.
Result<nlohmann::json> RunLocomoEval(const std::string& locomo_path, const EvalOptions& opt);

// Name of a LoCoMo category id: 1 multi-hop, 2 temporal, 3 open-domain,
// 4 single-hop, 5 adversarial; "unknown" otherwise.
const char* LocomoCategoryName(int category);

// Every retrieval option of `o` (all) and those that differ from a caller's
// defaults (changed), as the reports' config prints them.
void RetrieveConfig(const RetrieveOptions& o, nlohmann::json& all, nlohmann::json& changed);

// The WordNet the run used, as the reports' config prints it: the image's
// path, "parsed from <dir>", or null (none: ENGRAM_WORDNET=off).
nlohmann::json WordNetSource();

}  // namespace engram::eval
