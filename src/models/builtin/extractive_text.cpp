// Extractive text helpers of the built-in engine (see extractive_text.hpp).
#include "models/builtin/extractive_text.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

#include "core/text.hpp"
#include "models/builtin/english.hpp"

namespace engram::builtin {
namespace {

constexpr std::size_t kMaxSpeakerBytes = 40;
constexpr double kChattyWeight = 0.2;  // "great", "thanks", "went": little information

bool IsChatty(std::string_view w) {
  static const std::unordered_set<std::string_view> kChatty = {
      "thanks", "thank", "great", "good", "nice", "cool", "awesome", "amazing", "glad", "sure",
      "yep", "lol", "haha", "wow", "gonna", "wanna", "lot", "lots", "thing", "things",
      "something", "anything", "everything", "nothing", "pretty", "totally", "definitely",
      "stuff", "know", "think", "feel", "sound", "sounds", "love", "like", "want", "get", "got",
      "go", "going", "make", "made", "see", "say", "said", "tell", "told", "one", "way", "time",
      "much", "many", "well", "maybe", "kind", "sort", "bit", "little", "hear", "happy", "sorry",
      "super", "wonderful", "fantastic", "incredible", "hmm", "btw", "still", "even", "back",
      "right", "mean", "actually", "definitely", "absolutely", "sounds", "fun", "day", "today",
      "yesterday", "tomorrow", "cute", "true", "excited", "hope", "hey", "omg", "aww", "went",
      "felt", "keep", "last", "every", "next", "ago", "week", "weekend", "month", "year",
      "happened", "happen", "guess", "yeah", "wish", "let", "made", "lately", "recently", "one",
      "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "new", "first",
      "via", "per", "fine", "usually", "mostly", "never", "always", "often", "sometimes",
      "probably", "ideally", "along", "around", "soon", "took", "take", "look", "looking", "try",
      "trying", "use", "using", "need", "used", "please", "ha", "lovely", "interesting", "nope"};
  return kChatty.count(w) > 0;
}

bool NumbersOnly(std::string_view t) {
  return std::all_of(t.begin(), t.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ',' || c == '\'' || c == '_';
  });
}

std::string EnsureTerminal(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  if (s.empty()) return s;
  const char last = s.back();
  if (last != '.' && last != '!' && last != '?' && last != '"' && last != ')' &&
      last != '\'' && (static_cast<unsigned char>(last) < 0x80))
    s += '.';
  return s;
}

// Upper bound of the rendered bytes of a sentence: "Name: " + text + '.' + ' '.
std::size_t Cost(const Sentence& s) {
  return (s.speaker.empty() ? 0 : s.speaker.size() + 2) + s.text.size() + 2;
}

// Splits "Name: rest" when the prefix looks like a speaker name.
bool SplitSpeaker(const std::string& sentence, std::string& speaker, std::string& rest) {
  const std::size_t colon = sentence.find(": ");
  if (colon == std::string::npos || colon == 0 || colon > kMaxSpeakerBytes) return false;
  const std::string prefix = sentence.substr(0, colon);
  int spaces = 0;
  for (char c : prefix) {
    if (c == '.' || c == '!' || c == '?' || c == ':' || c == ',' || c == '"') return false;
    spaces += c == ' ';
  }
  if (spaces > 3) return false;
  speaker = prefix;
  rest = sentence.substr(colon + 2);
  return !rest.empty();
}

}  // namespace

double IdfCache::operator()(const std::string& term) {
  auto it = cache_.find(term);
  if (it != cache_.end()) return it->second;
  double v = fn_ ? fn_(term) : 1.0;
  if (std::isnan(v) || std::isinf(v)) v = 1.0;
  if (v < 0.0) v = 0.0;
  cache_.emplace(term, v);
  return v;
}

void AppendPageSentences(const std::string& user_text, const std::string& assistant_text,
                         const std::string& user_name, const std::string& assistant_name,
                         std::vector<Sentence>& out) {
  for (int side = 0; side < 2; ++side) {
    const std::string& body = side == 0 ? user_text : assistant_text;
    for (std::string& s : text::SplitSentences(body)) {
      Sentence sent;
      sent.speaker = side == 0 ? user_name : assistant_name;
      sent.text = std::move(s);
      sent.from_user = side == 0;
      sent.current = true;
      sent.order = static_cast<int>(out.size());
      out.push_back(std::move(sent));
    }
  }
}

void AppendSummarySentences(const std::string& summary, const std::string& user_name,
                            std::vector<Sentence>& out) {
  std::string speaker;
  for (std::string& s : text::SplitSentences(summary)) {
    Sentence sent;
    std::string rest;
    if (SplitSpeaker(s, speaker, rest)) s = std::move(rest);
    sent.speaker = speaker;
    sent.text = std::move(s);
    sent.from_user = !speaker.empty() && speaker == user_name;
    sent.order = static_cast<int>(out.size());
    out.push_back(std::move(sent));
  }
}

double InformationScore(const Sentence& s, IdfCache& idf) {
  std::vector<std::string> tokens = text::Tokenize(s.text);
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  double score = 0.0;
  std::size_t content = 0;
  for (const std::string& token : tokens) {
    if (text::IsStopword(token)) continue;
    const double w = IsChatty(token) ? kChattyWeight : 1.0;
    score += w * idf(text::Stem(token));
    content += w == 1.0;
  }
  if (IsQuestion(s.text)) score *= 0.5;
  if (content < 3) score *= content < 2 ? 0.2 : 0.5;
  if (s.from_user) score *= 1.25;
  return score;
}

std::vector<Sentence> SelectSentences(const std::vector<Sentence>& candidates,
                                      std::size_t max_bytes, bool require_current) {
  std::vector<std::size_t> idx(candidates.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    if (candidates[a].score != candidates[b].score) return candidates[a].score > candidates[b].score;
    return candidates[a].order < candidates[b].order;
  });
  const double best = idx.empty() ? 0.0 : candidates[idx.front()].score;
  if (require_current) {  // move the best current sentence to the front, unless it is filler
    auto cur = std::find_if(idx.begin(), idx.end(), [&](std::size_t i) { return candidates[i].current; });
    if (cur != idx.end() && candidates[*cur].score >= kMinRelativeScore * best)
      std::rotate(idx.begin(), cur, cur + 1);
  }
  std::vector<Sentence> picked;
  std::size_t used = 0;
  for (std::size_t i : idx) {
    Sentence s = candidates[i];
    if (!picked.empty() && s.score < kMinRelativeScore * best) continue;  // greetings, fillers
    const std::size_t cost = Cost(s);
    if (picked.empty() && cost > max_bytes) {  // the best sentence alone is too long
      if (s.speaker.size() + 4 + 16 > max_bytes) s.speaker.clear();
      const std::size_t overhead = s.speaker.empty() ? 2 : s.speaker.size() + 4;
      s.text = text::Truncate(s.text, max_bytes > overhead ? max_bytes - overhead : 0);
    } else if (used + cost > max_bytes) {
      continue;
    }
    used += Cost(s);
    picked.push_back(std::move(s));
  }
  std::sort(picked.begin(), picked.end(),
            [](const Sentence& a, const Sentence& b) { return a.order < b.order; });
  return picked;
}

std::string RenderSentences(const std::vector<Sentence>& sentences) {
  std::string out;
  const std::string* last_speaker = nullptr;
  for (const Sentence& s : sentences) {
    const std::string body = EnsureTerminal(s.text);
    if (body.empty()) continue;
    if (!out.empty()) out += ' ';
    if (!s.speaker.empty() && (last_speaker == nullptr || *last_speaker != s.speaker)) {
      out += s.speaker;
      out += ": ";
    }
    last_speaker = &s.speaker;
    out += body;
  }
  return out;
}

std::vector<RankedTerm> RankTerms(const std::vector<std::string>& texts, IdfCache& idf,
                                  const std::vector<std::string_view>& exclude) {
  struct Surface {
    int count = 0;
    int first = 0;
  };
  struct Acc {
    int tf = 0;
    int first = 0;
    std::map<std::string, Surface> surfaces;
  };
  std::map<std::string, Acc> acc;
  int pos = 0;
  for (const std::string& body : texts) {
    for (const std::string& token : text::Tokenize(body)) {
      ++pos;
      if (text::IsStopword(token) || NumbersOnly(token) || OneOf(token, exclude)) continue;
      if (token.size() < 2) continue;  // single ASCII letters
      const std::string stem = text::Stem(token);
      auto [it, inserted] = acc.try_emplace(stem);
      if (inserted) it->second.first = pos;
      ++it->second.tf;
      Surface& surface = it->second.surfaces[token];
      if (surface.count++ == 0) surface.first = pos;
    }
  }
  std::vector<RankedTerm> out;
  out.reserve(acc.size());
  for (const auto& [stem, a] : acc) {
    RankedTerm t;
    t.stem = stem;
    t.first = a.first;
    int best = -1, best_first = 0;
    for (const auto& [surface, info] : a.surfaces) {  // most frequent, then first seen
      if (info.count > best || (info.count == best && info.first < best_first)) {
        best = info.count;
        best_first = info.first;
        t.surface = surface;
      }
    }
    t.score = (1.0 + std::log(static_cast<double>(a.tf))) * idf(stem);
    if (IsChatty(t.surface) || IsChatty(stem)) t.score *= kChattyWeight;
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(), [](const RankedTerm& a, const RankedTerm& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.first < b.first;
  });
  return out;
}

std::vector<std::string> PickKeywords(const std::vector<RankedTerm>& ranked, std::size_t min_count,
                                      std::size_t max_count) {
  std::vector<std::string> out;
  const double top = ranked.empty() ? 0.0 : ranked.front().score;
  for (const RankedTerm& t : ranked) {
    if (out.size() >= max_count) break;
    if (out.size() >= min_count && t.score < kKeywordCutoff * top) break;
    if (std::find(out.begin(), out.end(), t.surface) == out.end()) out.push_back(t.surface);
  }
  return out;
}

}  // namespace engram::builtin
