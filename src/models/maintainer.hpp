// Maintainer: the model work of memory maintenance (continuity, chain and
// segment summaries, keywords, profile and fact extraction). The built-in
// extractive engine and LLM-backed engines implement it. Implementations do no
// storage: the memory layer calls them outside any transaction and commits the
// results itself.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engram/result.hpp"
#include "engram/types.hpp"
#include "models/embedder.hpp"

namespace engram {

// Inverse document frequency of an index term (see text::Terms) within the
// scope being maintained; unknown terms get the maximum.
using IdfFn = std::function<double(const std::string& term)>;

struct PageDraft {
  std::int64_t turn_id = 0;
  std::string user_text;
  std::string assistant_text;
  std::string user_name = "User";
  std::string assistant_name = "Assistant";
  TimeMs event_time = 0;
  Vector embedding;  // of the page text, normalised
};

// The tail of the dialogue chain before the batch (empty when none).
struct ChainContext {
  bool has_previous = false;
  PageDraft previous;
  std::string chain_summary;
};

struct PageAnalysis {
  bool continues_previous = false;  // same dialogue chain as the page before it
  std::string chain_summary;        // running summary of the chain up to this page
  std::vector<std::string> keywords;  // 3..8 lower-case keywords
};

struct BatchAnalysis {
  std::vector<PageAnalysis> pages;  // one per input page, in order
  int model_calls = 0;
  bool degraded = false;
};

struct SegmentInput {
  std::string summary;                // current summary ("" for a new segment)
  std::vector<std::string> keywords;  // current keywords
  std::vector<PageDraft> new_pages;   // pages joining it now
  std::vector<std::string> recent_page_texts;  // a few existing pages, newest last
};

struct SegmentSummary {
  std::string summary;
  std::vector<std::string> keywords;  // at most 10
};

struct SegmentBatch {
  std::vector<SegmentSummary> segments;  // one per input, in order
  int model_calls = 0;
  bool degraded = false;
};

struct ConsolidationPage {
  std::int64_t page_id = 0;
  std::string user_text;
  std::string assistant_text;
  std::string user_name = "User";
  std::string assistant_name = "Assistant";
  TimeMs event_time = 0;
};

struct SlotUpdate {
  std::string dimension;  // e.g. "name", "location", "occupation", "interests"
  std::string value;
  std::vector<std::int64_t> evidence_pages;
};

struct ExtractedFact {
  std::string text;  // self-contained statement
  std::vector<std::int64_t> source_pages;
  TimeMs event_time = 0;
};

struct Consolidation {
  std::vector<SlotUpdate> slot_updates;
  std::vector<ExtractedFact> user_facts;       // about the user
  std::vector<ExtractedFact> assistant_facts;  // about the assistant / what it committed to
  int model_calls = 0;
  bool degraded = false;
};

class Maintainer {
 public:
  virtual ~Maintainer() = default;
  virtual std::string Name() const = 0;
  virtual bool IsBuiltin() const = 0;

  // Continuity, chain summaries and keywords for a batch of consecutive
  // pages. Must return exactly one PageAnalysis per page or an error.
  virtual Result<BatchAnalysis> AnalyzePages(const ChainContext& chain,
                                             const std::vector<PageDraft>& pages,
                                             const IdfFn& idf) = 0;

  // New summary and keywords for each segment that pages are joining.
  virtual Result<SegmentBatch> SummarizeSegments(const std::vector<SegmentInput>& segments,
                                                 const IdfFn& idf) = 0;

  // Profile slot updates and facts from pages not analysed before.
  virtual Result<Consolidation> Consolidate(const std::vector<ProfileSlot>& profile,
                                            const std::vector<ConsolidationPage>& pages) = 0;
};

}  // namespace engram
