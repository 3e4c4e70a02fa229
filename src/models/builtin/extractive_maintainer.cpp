// ExtractiveMaintainer: orchestration of the built-in extractive engine.
#include "models/builtin/extractive_maintainer.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <string_view>
#include <unordered_map>

#include "core/relative_time.hpp"
#include "core/text.hpp"
#include "models/builtin/english.hpp"
#include "models/builtin/extractive_text.hpp"
#include "models/builtin/fact_rules.hpp"
#include "models/builtin/profile_rules.hpp"

namespace engram {
namespace {

using builtin::IdfCache;
using builtin::Sentence;

std::string OrDefault(const std::string& name, const char* fallback) {
  return name.empty() ? std::string(fallback) : name;
}

// Cosine of the term-frequency vectors of two texts.
double BagCosine(const std::string& a, const std::string& b) {
  std::map<std::string, double> ta, tb;
  for (const std::string& t : text::Terms(a)) ta[t] += 1.0;
  for (const std::string& t : text::Terms(b)) tb[t] += 1.0;
  double dot = 0.0, na = 0.0, nb = 0.0;
  for (const auto& [t, v] : ta) {
    na += v * v;
    auto it = tb.find(t);
    if (it != tb.end()) dot += v * it->second;
  }
  for (const auto& [t, v] : tb) nb += v * v;
  return na > 0.0 && nb > 0.0 ? dot / std::sqrt(na * nb) : 0.0;
}

// Lower-cased tokens of the speakers' names (kept out of keywords).
void AddNameTokens(const std::string& name, std::vector<std::string>& names) {
  for (std::string& t : text::Tokenize(name)) names.push_back(std::move(t));
}

std::vector<std::string_view> Views(const std::vector<std::string>& v) {
  return std::vector<std::string_view>(v.begin(), v.end());
}

std::string KeywordKey(const std::string& keyword) {
  std::string key;
  for (const std::string& t : text::Terms(keyword)) {
    if (!key.empty()) key += ' ';
    key += t;
  }
  return key.empty() ? text::NormalizeForHash(keyword) : key;
}

// Keywords of one segment: old ones merged with the new pages' evidence.
std::vector<std::string> MergeKeywords(const SegmentInput& seg, IdfCache& idf) {
  struct Cand {
    std::string key, surface;
    double score = 0.0;
    bool old = false;
    int order = 0;
  };
  std::vector<Cand> cands;
  for (const std::string& kw : seg.keywords) {
    const std::string key = KeywordKey(kw);
    if (kw.empty() || key.empty()) continue;
    if (std::any_of(cands.begin(), cands.end(), [&](const Cand& c) { return c.key == key; })) continue;
    const double rank = static_cast<double>(cands.size());
    const double score = std::max(ExtractiveMaintainer::kOldKeywordFloor,
                                  ExtractiveMaintainer::kOldKeywordBase -
                                      rank * ExtractiveMaintainer::kOldKeywordDecay);
    cands.push_back({key, kw, score, true, static_cast<int>(cands.size())});
  }
  std::vector<std::string> texts, names;
  for (const PageDraft& p : seg.new_pages) {
    texts.push_back(p.user_text);
    texts.push_back(p.assistant_text);
    AddNameTokens(p.user_name, names);
    AddNameTokens(p.assistant_name, names);
  }
  const std::vector<builtin::RankedTerm> ranked = builtin::RankTerms(texts, idf, Views(names));
  const double top = ranked.empty() ? 0.0 : ranked.front().score;
  std::size_t added = 0;
  for (std::size_t j = 0; j < ranked.size() && j < ExtractiveMaintainer::kMaxSegmentKeywords; ++j) {
    if (top <= 0.0) break;
    const double norm = ranked[j].score / top;
    auto same = std::find_if(cands.begin(), cands.end(),
                             [&](const Cand& c) { return c.key == ranked[j].stem; });
    if (same != cands.end()) {
      same->score += norm;  // confirmed by new evidence
    } else if (norm >= builtin::kKeywordCutoff &&
               (seg.keywords.empty() || added < ExtractiveMaintainer::kMaxNewKeywords)) {
      cands.push_back({ranked[j].stem, ranked[j].surface, norm, false, 1000 + static_cast<int>(j)});
      ++added;
    }
  }
  std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.old != b.old) return a.old;
    return a.order < b.order;
  });
  std::vector<std::string> out;
  for (const Cand& c : cands) {
    if (out.size() >= ExtractiveMaintainer::kMaxSegmentKeywords) break;
    out.push_back(c.surface);
  }
  return out;
}

// Segment summary: sentences central to the keywords, within the byte bound.
std::string BuildSegmentSummary(const SegmentInput& seg, const std::vector<std::string>& keywords,
                           IdfCache& idf) {
  std::unordered_map<std::string, double> weight;
  for (std::size_t i = 0; i < keywords.size(); ++i) {
    const double w = 1.0 - 0.05 * static_cast<double>(i);
    for (const std::string& t : text::Terms(keywords[i])) weight[t] = std::max(weight[t], w);
  }
  const std::string user_name =
      seg.new_pages.empty() ? std::string() : OrDefault(seg.new_pages.front().user_name, "User");
  std::vector<Sentence> cands;
  builtin::AppendSummarySentences(seg.summary, user_name, cands);
  for (const PageDraft& p : seg.new_pages) {
    builtin::AppendPageSentences(p.user_text, p.assistant_text, OrDefault(p.user_name, "User"),
                                 OrDefault(p.assistant_name, "Assistant"), cands);
  }
  if (cands.empty()) return seg.summary;
  for (Sentence& s : cands) {
    std::vector<std::string> terms = text::Terms(s.text);
    std::sort(terms.begin(), terms.end());
    terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
    double score = 0.0;
    for (const std::string& t : terms) {
      auto it = weight.find(t);
      score += idf(t) * (it != weight.end() ? it->second : 0.15);
    }
    if (builtin::IsQuestion(s.text)) score *= 0.5;
    if (terms.size() < 3) score *= 0.5;
    if (s.from_user) score *= 1.2;
    s.score = score;
  }
  const bool has_new = std::any_of(cands.begin(), cands.end(), [](const Sentence& s) { return s.current; });
  return builtin::RenderSentences(
      builtin::SelectSentences(cands, ExtractiveMaintainer::kSegmentSummaryBytes, has_new));
}

void AddFact(std::vector<ExtractedFact>& facts, std::unordered_map<std::string, std::size_t>& seen,
             std::string text, const ConsolidationPage& page) {
  if (text.empty()) return;
  // The fact is read later than it was said: its "yesterday" is a date.
  if (page.event_time != 0) text = WithAbsoluteTimes(text, page.event_time);
  const std::string key = text::NormalizeForHash(text);
  auto it = seen.find(key);
  if (it != seen.end()) {
    std::vector<std::int64_t>& pages = facts[it->second].source_pages;
    if (std::find(pages.begin(), pages.end(), page.page_id) == pages.end()) pages.push_back(page.page_id);
    return;
  }
  seen.emplace(key, facts.size());
  facts.push_back({std::move(text), {page.page_id}, page.event_time});
}

}  // namespace

bool ExtractiveMaintainer::Continues(const PageDraft& previous, const PageDraft& page) {
  double cosine = 0.0;
  if (!previous.embedding.empty() && previous.embedding.size() == page.embedding.size()) {
    cosine = Dot(previous.embedding, page.embedding);
  } else {
    cosine = BagCosine(previous.user_text + "\n" + previous.assistant_text,
                       page.user_text + "\n" + page.assistant_text);
  }
  if (cosine >= kContinueCosine) return true;
  const TimeMs gap = page.event_time >= previous.event_time ? page.event_time - previous.event_time
                                                            : previous.event_time - page.event_time;
  return gap <= kNearTimeWindowMs && cosine >= kNearTimeCosine;
}

Result<BatchAnalysis> ExtractiveMaintainer::AnalyzePages(const ChainContext& chain,
                                                         const std::vector<PageDraft>& pages,
                                                         const IdfFn& idf) {
  try {
    IdfCache cache(idf);
    BatchAnalysis out;
    out.degraded = true;
    out.model_calls = 0;
    const PageDraft* prev = chain.has_previous ? &chain.previous : nullptr;
    std::string prev_summary = chain.has_previous ? chain.chain_summary : std::string();
    for (const PageDraft& page : pages) {
      PageAnalysis a;
      a.continues_previous = prev != nullptr && Continues(*prev, page);
      const std::string user_name = OrDefault(page.user_name, "User");
      std::vector<Sentence> cands;
      if (a.continues_previous) builtin::AppendSummarySentences(prev_summary, user_name, cands);
      builtin::AppendPageSentences(page.user_text, page.assistant_text, user_name,
                                   OrDefault(page.assistant_name, "Assistant"), cands);
      for (Sentence& s : cands) s.score = builtin::InformationScore(s, cache);
      a.chain_summary =
          builtin::RenderSentences(builtin::SelectSentences(cands, kChainSummaryBytes, true));
      if (a.chain_summary.empty() && a.continues_previous) a.chain_summary = prev_summary;
      std::vector<std::string> names;
      AddNameTokens(page.user_name, names);
      AddNameTokens(page.assistant_name, names);
      a.keywords = builtin::PickKeywords(
          builtin::RankTerms({page.user_text, page.assistant_text}, cache, Views(names)),
          kMinPageKeywords, kMaxPageKeywords);
      prev = &page;
      prev_summary = a.chain_summary;
      out.pages.push_back(std::move(a));
    }
    return out;
  } catch (const std::exception& e) {
    return Status::Internal(std::string("extractive maintainer: analyze pages: ") + e.what());
  }
}

Result<SegmentBatch> ExtractiveMaintainer::SummarizeSegments(const std::vector<SegmentInput>& segments,
                                                             const IdfFn& idf) {
  try {
    IdfCache cache(idf);
    SegmentBatch out;
    out.degraded = true;
    out.model_calls = 0;
    for (const SegmentInput& seg : segments) {
      SegmentSummary s;
      s.keywords = MergeKeywords(seg, cache);
      s.summary = BuildSegmentSummary(seg, s.keywords, cache);
      out.segments.push_back(std::move(s));
    }
    return out;
  } catch (const std::exception& e) {
    return Status::Internal(std::string("extractive maintainer: summarize segments: ") + e.what());
  }
}

Result<Consolidation> ExtractiveMaintainer::Consolidate(const std::vector<ProfileSlot>& profile,
                                                        const std::vector<ConsolidationPage>& pages) {
  try {
    Consolidation out;
    out.degraded = true;
    out.model_calls = 0;
    builtin::ProfileAccumulator acc(profile);
    std::unordered_map<std::string, std::size_t> seen_user, seen_assistant;
    for (const ConsolidationPage& page : pages) {
      const std::string user = OrDefault(page.user_name, "User");
      const std::string assistant = OrDefault(page.assistant_name, "Assistant");
      for (const std::string& s : text::SplitSentences(page.user_text)) {
        for (const builtin::SlotHit& hit : builtin::ExtractSlotHits(s, assistant)) acc.Add(hit, page.page_id);
        AddFact(out.user_facts, seen_user,
                builtin::ExtractFact(s, builtin::Role::kUser, user, assistant), page);
      }
      for (const std::string& s : text::SplitSentences(page.assistant_text)) {
        AddFact(out.assistant_facts, seen_assistant,
                builtin::ExtractFact(s, builtin::Role::kAssistant, assistant, user), page);
      }
    }
    out.slot_updates = acc.Updates();
    return out;
  } catch (const std::exception& e) {
    return Status::Internal(std::string("extractive maintainer: consolidate: ") + e.what());
  }
}

}  // namespace engram
