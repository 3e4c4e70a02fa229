// Retrieval metrics of the benchmark harness: pure functions over the
// RetrievalResult of one question, and per-group accumulators. No I/O, no
// clocks; thread-compatible (no shared state).
//
// Units: "dia_ids" are the dataset's turn ids ("D1:3"). A ranked item or a
// context item holds the dia_ids of its source_ref ("D1:3,D1:4"); an item
// holding one message (part "user" or "assistant") carries that message's own
// reference (the LoCoMo parser gives every side its dia_id), so it takes one
// slot and counts only the utterance it holds.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "engram/types.hpp"

namespace engram::eval {

// The cut-offs of recall@k, in slots (one slot per dia_id).
inline constexpr std::array<int, 3> kRecallKs{5, 10, 20};
// The cut-off of all@k (every evidence id within the first k slots).
inline constexpr int kAllK = 10;

// Splits a list of dia_ids on ';', ',' and ASCII whitespace, dropping empty
// pieces; order and duplicates kept. "D8:6; D9:17" -> {"D8:6", "D9:17"}.
std::vector<std::string> SplitDiaIds(std::string_view text);

// Normalised evidence of one question: every string of `raw` split with
// SplitDiaIds, deduplicated (first occurrence kept), ids not in `known`
// dropped. Adds the number of dropped (unknown) ids to *skipped when non-null.
std::vector<std::string> NormalizeEvidence(const std::vector<std::string>& raw,
                                           const std::unordered_set<std::string>& known,
                                           int* skipped);

// The dia_ids in the first k slots of a ranked list: items in order, each
// source_ref expanded, one slot per dia_id (an item with two ids takes two
// slots; the last item may be cut). An item with an empty source_ref (e.g.
// past the items whose text the engine filled) takes one slot and holds no id.
// Returns at most k ids (fewer when the list runs out or has empty slots).
std::vector<std::string> FirstSlots(const std::vector<RetrievedItem>& ranked, int k);

// dia_ids of the items of kind page or stm_turn whose text the rendered
// `context` holds (the turns that entered it); facts and profile lines are
// ignored.
std::unordered_set<std::string> ContextDiaIds(const std::vector<RetrievedItem>& items, const std::string& context);

// Lines of a context (of three words or more; headings and date lines aside)
// that an earlier line already holds word for word, and the sentences of its
// summary lines ("(context: ...)", of three words or more) that the context
// says elsewhere too: the context should say nothing twice.
std::size_t RepeatedLines(const std::string& context);

// |evidence ∩ found| / |evidence|. REQUIRES: evidence non-empty, deduplicated.
double Recall(const std::vector<std::string>& evidence, const std::unordered_set<std::string>& found);

// The p-th percentile (0 <= p <= 100) with linear interpolation between the
// closest ranks (numpy's default); 0 for an empty vector.
double Percentile(std::vector<double> values, double p);

// x rounded to `digits` decimal places (for stable, readable JSON).
double Round(double x, int digits);

// The scores of one question with evidence.
struct QuestionScore {
  std::array<double, kRecallKs.size()> recall{};  // recall at each of kRecallKs
  bool all_at_k = false;                           // every evidence id in the first kAllK slots
  std::vector<double> budget_recall;               // one per budget, in budget order
  std::vector<int> context_tokens;                 // one per budget
  std::vector<std::size_t> repeated_lines;         // one per budget (RepeatedLines)
  // One per budget: the evidence ids whose text that budget's context does
  // not hold, in evidence order (what a failure analysis reads).
  std::vector<std::vector<std::string>> context_missing;
};

// Scores one question. `evidence`: normalised (non-empty); `ranked`: the
// ranked list of one retrieval; `by_budget`: the retrieval under each budget
// (items and context_tokens are read), in budget order.
QuestionScore ScoreQuestion(const std::vector<std::string>& evidence,
                            const std::vector<RetrievedItem>& ranked,
                            const std::vector<const RetrievalResult*>& by_budget);

// Sums of the scores of one group of questions (a category, or overall).
class GroupStats {
 public:
  explicit GroupStats(std::size_t budgets = 0)
      : budget_recall_(budgets, 0.0), context_tokens_(budgets, 0.0) {}

  void Add(const QuestionScore& s);
  // A question that has no usable evidence (not scored).
  void AddSkipped() { ++skipped_; }
  std::size_t questions() const { return questions_; }
  // Mean context tokens under budget index b over the scored questions (0 when none).
  double MeanContextTokens(std::size_t b) const;

  // {"recall@5", "recall@10", "recall@20", "all@10", "budget_recall@<B>"...,
  //  "questions", "skipped_questions", "repeated_context_lines" (a sum over
  //  every context)}; means over the scored questions,
  // rounded to 4 places; null when no question was scored.
  // REQUIRES: budgets.size() == the size given at construction.
  nlohmann::json ToJson(const std::vector<int>& budgets) const;

 private:
  std::size_t questions_ = 0;
  std::size_t skipped_ = 0;
  std::array<double, kRecallKs.size()> recall_{};
  double all_at_k_ = 0;
  std::vector<double> budget_recall_;
  std::vector<double> context_tokens_;
  std::size_t repeated_lines_ = 0;
};

}  // namespace engram::eval
