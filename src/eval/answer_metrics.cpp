#include "eval/answer_metrics.hpp"

#include <cmath>
#include <map>

namespace engram::eval {

namespace {

bool IsAsciiPunct(unsigned char c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
}

bool IsAsciiSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool IsArticle(const std::string& t) { return t == "a" || t == "an" || t == "the"; }

// Overlap of two token multisets.
std::size_t Overlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::map<std::string, int> counts;
  for (const auto& t : b) ++counts[t];
  std::size_t common = 0;
  for (const auto& t : a) {
    auto it = counts.find(t);
    if (it != counts.end() && it->second > 0) {
      --it->second;
      ++common;
    }
  }
  return common;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && IsAsciiSpace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> CommaParts(std::string_view s) {
  std::vector<std::string_view> out;
  while (true) {
    auto pos = s.find(',');
    std::string_view part = Trim(s.substr(0, pos));
    if (!part.empty()) out.push_back(part);
    if (pos == std::string_view::npos) break;
    s.remove_prefix(pos + 1);
  }
  return out;
}

double F1OfTokens(const std::vector<std::string>& pred, const std::vector<std::string>& gold) {
  if (pred.empty() && gold.empty()) return 1.0;
  std::size_t common = Overlap(pred, gold);
  if (common == 0) return 0.0;
  double p = static_cast<double>(common) / static_cast<double>(pred.size());
  double r = static_cast<double>(common) / static_cast<double>(gold.size());
  return 2 * p * r / (p + r);
}

}  // namespace

std::vector<std::string> AnswerTokens(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty() && !IsArticle(cur)) out.push_back(cur);
    cur.clear();
  };
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (IsAsciiSpace(c)) {
      flush();
    } else if (IsAsciiPunct(c)) {
      continue;  // removed without a space
    } else if (c >= 'A' && c <= 'Z') {
      cur.push_back(static_cast<char>(c - 'A' + 'a'));
    } else {
      cur.push_back(ch);
    }
  }
  flush();
  return out;
}

std::string NormalizeAnswer(std::string_view text) {
  std::string out;
  for (const auto& t : AnswerTokens(text)) {
    if (!out.empty()) out.push_back(' ');
    out += t;
  }
  return out;
}

double TokenF1(std::string_view prediction, std::string_view gold) {
  return F1OfTokens(AnswerTokens(prediction), AnswerTokens(gold));
}

double MultiAnswerF1(std::string_view prediction, std::string_view gold) {
  auto golds = CommaParts(gold);
  if (golds.empty()) return TokenF1(prediction, gold);
  auto preds = CommaParts(prediction);
  if (preds.empty()) return 0.0;
  std::vector<std::vector<std::string>> pred_tokens;
  for (auto p : preds) pred_tokens.push_back(AnswerTokens(p));
  double sum = 0;
  for (auto g : golds) {
    auto gt = AnswerTokens(g);
    double best = 0;
    for (const auto& pt : pred_tokens) best = std::max(best, F1OfTokens(pt, gt));
    sum += best;
  }
  return sum / static_cast<double>(golds.size());
}

double Bleu1(std::string_view prediction, std::string_view reference) {
  auto pred = AnswerTokens(prediction);
  auto ref = AnswerTokens(reference);
  if (pred.empty()) return ref.empty() ? 1.0 : 0.0;
  const double c = static_cast<double>(pred.size());
  const double r = static_cast<double>(ref.size());
  double precision = static_cast<double>(Overlap(pred, ref)) / c;
  double bp = c > r ? 1.0 : std::exp(1.0 - r / c);
  return precision * bp;
}

std::string_view ScoringGold(int category, std::string_view gold) {
  if (category == 3) {
    auto pos = gold.find(';');
    if (pos != std::string_view::npos) return Trim(gold.substr(0, pos));
  }
  return gold;
}

double AnswerF1(int category, std::string_view prediction, std::string_view gold) {
  gold = ScoringGold(category, gold);
  return category == 1 ? MultiAnswerF1(prediction, gold) : TokenF1(prediction, gold);
}

}  // namespace engram::eval
