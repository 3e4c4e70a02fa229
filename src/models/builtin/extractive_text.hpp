// Extractive text helpers of the built-in engine: dialogue sentences with
// speakers, informativeness scores, bounded sentence selection, rendering of
// speaker-prefixed summaries and tf-idf keywords. Deterministic.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "models/maintainer.hpp"

namespace engram::builtin {

// Memoises an IdfFn for one call. A missing function gives 1.0 for every term;
// negative or non-finite values are clamped to 0 (negative) or 1 (NaN/inf).
// The IdfFn may throw; callers catch at the Maintainer boundary.
class IdfCache {
 public:
  explicit IdfCache(const IdfFn& fn) : fn_(fn) {}
  double operator()(const std::string& term);

 private:
  const IdfFn& fn_;
  std::unordered_map<std::string, double> cache_;
};

// One sentence of a dialogue.
struct Sentence {
  std::string speaker;    // "" when unknown
  std::string text;       // without the speaker prefix
  bool from_user = false;
  bool current = false;   // from the page(s) being analysed now (not an old summary)
  int order = 0;          // chronological position (index in the candidate list)
  double score = 0.0;
};

// Appends the sentences of a page: user text first, then assistant text.
void AppendPageSentences(const std::string& user_text, const std::string& assistant_text,
                         const std::string& user_name, const std::string& assistant_name,
                         std::vector<Sentence>& out);

// Appends the sentences of a rendered summary ("Caroline: a. b. Mel: c."):
// a "Name: " prefix sets the speaker for that and the following sentences.
// from_user is set when the speaker equals user_name.
void AppendSummarySentences(const std::string& summary, const std::string& user_name,
                            std::vector<Sentence>& out);

// Sum of the idf of the sentence's distinct non-stopword words (chatty words
// such as "great", "thanks" count x0.2), x0.5 for questions, x0.5 for fewer
// than 3 content words (x0.2 for fewer than 2), x1.25 for user sentences.
double InformationScore(const Sentence& s, IdfCache& idf);

// Picks sentences by descending score (ties: earlier first) while the rendered
// text stays within max_bytes, skipping those scoring below kMinRelativeScore
// of the best, then returns them in chronological order. The first pick is
// always kept (truncated when alone too long). With require_current, the best
// current sentence is picked first (unless it is below the cutoff itself).
inline constexpr double kMinRelativeScore = 0.25;
std::vector<Sentence> SelectSentences(const std::vector<Sentence>& candidates,
                                      std::size_t max_bytes, bool require_current);

// "Caroline: s1 s2 Melanie: s3": consecutive sentences of one speaker share a
// prefix; every sentence ends with terminal punctuation.
std::string RenderSentences(const std::vector<Sentence>& sentences);

struct RankedTerm {
  std::string stem;
  std::string surface;  // the most frequent lower-cased surface form
  double score = 0.0;   // (1 + ln tf) * idf, x0.2 for chatty words ("great", "thanks")
  int first = 0;        // first token position
};

// Terms of texts ranked by tf-idf, best first (ties: first seen). Stopwords,
// numbers-only tokens, single ASCII characters and `exclude` tokens (e.g. the
// speakers' names, lower-cased) are left out.
std::vector<RankedTerm> RankTerms(const std::vector<std::string>& texts, IdfCache& idf,
                                  const std::vector<std::string_view>& exclude = {});

// The surfaces of the top terms: at least min_count (when available), at most
// max_count, dropping terms below kKeywordCutoff of the best score.
inline constexpr double kKeywordCutoff = 0.3;
std::vector<std::string> PickKeywords(const std::vector<RankedTerm>& ranked, std::size_t min_count,
                                      std::size_t max_count);

}  // namespace engram::builtin
