// ExtractiveMaintainer: the deterministic, offline built-in maintenance
// engine. It needs no model: summaries are built from the dialogue's own most
// informative sentences, keywords by tf-idf, and facts/profile slots by
// first-person sentence rules. Every result is labelled degraded with
// model_calls = 0.
#pragma once

#include <string>
#include <vector>

#include "models/maintainer.hpp"

namespace engram {

class ExtractiveMaintainer final : public Maintainer {
 public:
  // Continuity: a page continues the previous one when the cosine of their
  // embeddings is >= kContinueCosine, or when their event times are within
  // kNearTimeWindowMs and the cosine is >= kNearTimeCosine. (Pages without
  // comparable embeddings use the cosine of their term-frequency vectors.)
  static constexpr double kContinueCosine = 0.2;
  static constexpr double kNearTimeCosine = 0.05;
  static constexpr TimeMs kNearTimeWindowMs = 30LL * 60 * 1000;
  // Bounds of generated text, in bytes.
  static constexpr std::size_t kChainSummaryBytes = 240;
  static constexpr std::size_t kSegmentSummaryBytes = 400;
  // Keyword counts.
  static constexpr std::size_t kMinPageKeywords = 3;
  static constexpr std::size_t kMaxPageKeywords = 8;
  static constexpr std::size_t kMaxSegmentKeywords = 10;
  // Keyword merge: an existing keyword at rank i scores kOldKeywordBase -
  // i * kOldKeywordDecay (at least kOldKeywordFloor); new evidence adds its
  // tf-idf score relative to the best new term (0..1).
  static constexpr double kOldKeywordBase = 0.6;
  static constexpr double kOldKeywordDecay = 0.03;
  static constexpr double kOldKeywordFloor = 0.3;
  // At most this many new (unconfirmed) keywords enter an existing segment per update.
  static constexpr std::size_t kMaxNewKeywords = 4;

  std::string Name() const override { return "builtin-extractive-v1"; }
  bool IsBuiltin() const override { return true; }

  // Per page: continuity (see above; the first page compares with
  // chain.previous when chain.has_previous), a chain summary of at most
  // kChainSummaryBytes (the most informative sentences of the chain so far,
  // always including one of this page, chronological, speaker-prefixed; a new
  // chain starts from this page alone) and 3..8 tf-idf keywords (lower-cased
  // surface words, not the speakers' names; fewer when the page has fewer
  // distinct content words). Thread-safe; never calls a model.
  [[nodiscard]] Result<BatchAnalysis> AnalyzePages(const ChainContext& chain,
                                                   const std::vector<PageDraft>& pages,
                                                   const IdfFn& idf) override;

  // Per segment: keywords = existing keywords merged with the new pages' top
  // tf-idf terms (at most 10; terms confirmed by new evidence rank first, at
  // most kMaxNewKeywords new ones; speakers' names are not keywords);
  // summary = the sentences of the old summary and the new pages that best
  // overlap those keywords (tf-idf weighted), at most kSegmentSummaryBytes,
  // chronological, speaker-prefixed. recent_page_texts are not used.
  [[nodiscard]] Result<SegmentBatch> SummarizeSegments(const std::vector<SegmentInput>& segments,
                                                       const IdfFn& idf) override;

  // Facts from first-person statements (user_text -> user facts about the user,
  // assistant_text -> assistant facts, incl. commitments), rewritten to the
  // third person with the speaker's name (see builtin/fact_rules.hpp), with
  // event_time = page.event_time and source_pages = {page_id}; identical facts
  // within the call are merged (their pages joined). Profile slot updates from
  // user_text (see builtin/profile_rules.hpp) folded into `profile`.
  [[nodiscard]] Result<Consolidation> Consolidate(const std::vector<ProfileSlot>& profile,
                                                  const std::vector<ConsolidationPage>& pages) override;

  // The continuity rule for two pages (exposed for tests).
  static bool Continues(const PageDraft& previous, const PageDraft& page);
};

}  // namespace engram
