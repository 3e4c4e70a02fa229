// LlmMaintainer: memory maintenance by a chat model. One call analyses a whole
// promotion batch (continuity, chain summaries, keywords), one call rewrites
// the summaries of every segment the batch touched, and one call consolidates
// a batch of pages into profile slots and facts. Replies are JSON, parsed
// fence-tolerantly and validated; an invalid reply is retried with the
// reason, and a call that stays invalid fails with the reason (never the
// reply text), so the memory layer keeps its source where it was.
#pragma once

#include <memory>
#include <string>

#include "models/llm.hpp"
#include "models/maintainer.hpp"

namespace engram {

struct LlmMaintainerOptions {
  // The language summaries and facts are written in; "" = the language of
  // the conversation.
  std::string language;
  int max_attempts = 3;     // per call, including retries for invalid replies
  int max_tokens = 4000;    // reply budget per call
};

class LlmMaintainer final : public Maintainer {
 public:
  LlmMaintainer(std::shared_ptr<Llm> llm, LlmMaintainerOptions options = {});

  std::string Name() const override;
  bool IsBuiltin() const override { return false; }
  Result<BatchAnalysis> AnalyzePages(const ChainContext& chain, const std::vector<PageDraft>& pages,
                                     const IdfFn& idf) override;
  Result<SegmentBatch> SummarizeSegments(const std::vector<SegmentInput>& segments,
                                         const IdfFn& idf) override;
  Result<Consolidation> Consolidate(const std::vector<ProfileSlot>& profile,
                                    const std::vector<ConsolidationPage>& pages) override;

 private:
  // Sends the prompt; parses and validates with `validate` (which returns
  // InvalidArgument naming what is wrong); retries invalid replies. Counts
  // every model call in *calls.
  template <typename T, typename Validate>
  Result<T> Ask(const std::string& system, const std::string& user, Validate validate, int* calls);

  std::shared_ptr<Llm> llm_;
  LlmMaintainerOptions options_;
};

}  // namespace engram
