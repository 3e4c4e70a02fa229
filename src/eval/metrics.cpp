#include "eval/metrics.hpp"

#include <algorithm>
#include <cmath>

#include "core/text.hpp"

namespace engram::eval {

std::vector<std::string> SplitDiaIds(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == ';' || c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
        c == '\v') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::vector<std::string> NormalizeEvidence(const std::vector<std::string>& raw,
                                           const std::unordered_set<std::string>& known,
                                           int* skipped) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const auto& s : raw) {
    for (auto& id : SplitDiaIds(s)) {
      if (!known.count(id)) {
        if (skipped) ++*skipped;
        continue;
      }
      if (seen.insert(id).second) out.push_back(std::move(id));
    }
  }
  return out;
}

std::vector<std::string> FirstSlots(const std::vector<RetrievedItem>& ranked, int k) {
  std::vector<std::string> out;
  int slots = 0;
  for (const auto& item : ranked) {
    if (slots >= k) break;
    auto ids = SplitDiaIds(item.source_ref);
    if (ids.empty()) {
      ++slots;  // an empty slot
      continue;
    }
    for (auto& id : ids) {
      if (slots >= k) break;
      out.push_back(std::move(id));
      ++slots;
    }
  }
  return out;
}

std::unordered_set<std::string> ContextDiaIds(const std::vector<RetrievedItem>& items, const std::string& context) {
  std::unordered_set<std::string> out;
  for (const auto& item : items) {
    if (item.kind != ItemKind::kPage && item.kind != ItemKind::kStmTurn) continue;
    if (item.text.empty() || context.find(item.text) == std::string::npos) continue;
    for (auto& id : SplitDiaIds(item.source_ref)) out.insert(std::move(id));
  }
  return out;
}

std::size_t RepeatedLines(const std::string& context) {
  std::unordered_set<std::string_view> seen;
  std::size_t repeated = 0;
  std::string_view rest = context;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    // (A message's further lines are indented: the words count, not the margin.)
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty() || line.front() == '[' || line.rfind("## ", 0) == 0) continue;  // date lines, headings
    // A line of a multi-line message may be a bare "Name:" or a short word.
    if (std::count(line.begin(), line.end(), ' ') < 2) continue;
    if (!seen.insert(line).second) ++repeated;
    // A summary's sentence that the context says elsewhere ("  (context:
    // Ana: I ride to work. Ana: ...)" beside the message "Ana: I ride to work."):
    // each is said twice.
    constexpr std::string_view kSummary = "(context: ";
    if (!line.starts_with(kSummary) || !line.ends_with(")")) continue;
    const std::string_view inner = line.substr(kSummary.size(), line.size() - kSummary.size() - 1);
    for (std::string_view sentence : text::SentenceViews(inner)) {
      const std::size_t colon = sentence.find(": ");  // its speaker
      if (colon != std::string_view::npos &&
          sentence.substr(0, colon).find(' ') == std::string_view::npos)
        sentence.remove_prefix(colon + 2);
      if (std::count(sentence.begin(), sentence.end(), ' ') < 2) continue;
      const std::size_t first = context.find(sentence);
      if (first != std::string::npos && context.find(sentence, first + 1) != std::string::npos)
        ++repeated;
    }
  }
  return repeated;
}

double Recall(const std::vector<std::string>& evidence, const std::unordered_set<std::string>& found) {
  if (evidence.empty()) return 0.0;
  std::size_t hit = 0;
  for (const auto& id : evidence) hit += found.count(id);
  return static_cast<double>(hit) / static_cast<double>(evidence.size());
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  p = std::clamp(p, 0.0, 100.0);
  double pos = p / 100.0 * static_cast<double>(values.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, values.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

double Round(double x, int digits) {
  double f = std::pow(10.0, digits);
  return std::round(x * f) / f;
}

QuestionScore ScoreQuestion(const std::vector<std::string>& evidence,
                            const std::vector<RetrievedItem>& ranked,
                            const std::vector<const RetrievalResult*>& by_budget) {
  QuestionScore s;
  for (std::size_t i = 0; i < kRecallKs.size(); ++i) {
    auto slots = FirstSlots(ranked, kRecallKs[i]);
    s.recall[i] = Recall(evidence, {slots.begin(), slots.end()});
  }
  auto top = FirstSlots(ranked, kAllK);
  s.all_at_k = Recall(evidence, {top.begin(), top.end()}) == 1.0;
  for (const RetrievalResult* r : by_budget) {
    const std::unordered_set<std::string> in_context = ContextDiaIds(r->items, r->context);
    s.budget_recall.push_back(Recall(evidence, in_context));
    std::vector<std::string>& missing = s.context_missing.emplace_back();
    for (const auto& id : evidence) {
      if (!in_context.contains(id)) missing.push_back(id);
    }
    s.repeated_lines.push_back(RepeatedLines(r->context));
    s.context_tokens.push_back(r->context_tokens);
  }
  return s;
}

void GroupStats::Add(const QuestionScore& s) {
  ++questions_;
  for (std::size_t i = 0; i < recall_.size(); ++i) recall_[i] += s.recall[i];
  all_at_k_ += s.all_at_k ? 1.0 : 0.0;
  for (std::size_t b = 0; b < budget_recall_.size() && b < s.budget_recall.size(); ++b) {
    budget_recall_[b] += s.budget_recall[b];
    context_tokens_[b] += s.context_tokens[b];
    if (b < s.repeated_lines.size()) repeated_lines_ += s.repeated_lines[b];
  }
}

double GroupStats::MeanContextTokens(std::size_t b) const {
  if (questions_ == 0 || b >= context_tokens_.size()) return 0.0;
  return context_tokens_[b] / static_cast<double>(questions_);
}

nlohmann::json GroupStats::ToJson(const std::vector<int>& budgets) const {
  nlohmann::json j = nlohmann::json::object();
  const double n = static_cast<double>(questions_);
  auto mean = [&](double sum) -> nlohmann::json {
    if (questions_ == 0) return nullptr;
    return Round(sum / n, 4);
  };
  for (std::size_t i = 0; i < kRecallKs.size(); ++i) {
    j["recall@" + std::to_string(kRecallKs[i])] = mean(recall_[i]);
  }
  j["all@" + std::to_string(kAllK)] = mean(all_at_k_);
  for (std::size_t b = 0; b < budgets.size() && b < budget_recall_.size(); ++b) {
    j["budget_recall@" + std::to_string(budgets[b])] = mean(budget_recall_[b]);
  }
  j["questions"] = questions_;
  j["skipped_questions"] = skipped_;
  j["repeated_context_lines"] = repeated_lines_;
  return j;
}

}  // namespace engram::eval
