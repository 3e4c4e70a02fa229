// Test doubles for the model seams: a maintainer that can be told to fail or
// to return malformed results, and an embedder with another identity.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string>

#include "models/builtin/extractive_maintainer.hpp"
#include "models/builtin/hash_embedder.hpp"
#include "models/llm.hpp"

namespace engram::testing {

enum class MaintainerFault {
  kNone,
  kUnavailable,     // the provider failed (after its retries)
  kWrongPageCount,  // a reply that parsed but does not cover every page
  kWrongSegments,   // segment summaries missing
  kConsolidateFail,
};

class FaultyMaintainer final : public Maintainer {
 public:
  std::atomic<MaintainerFault> fault{MaintainerFault::kNone};
  std::atomic<int> calls{0};

  std::string Name() const override { return inner_.Name(); }
  bool IsBuiltin() const override { return true; }
  Result<BatchAnalysis> AnalyzePages(const ChainContext& chain, const std::vector<PageDraft>& pages,
                                     const IdfFn& idf) override {
    ++calls;
    if (fault == MaintainerFault::kUnavailable)
      return Status::Unavailable("Error: Could not get response from LLM.");
    auto r = inner_.AnalyzePages(chain, pages, idf);
    if (r.ok() && fault == MaintainerFault::kWrongPageCount && !r->pages.empty()) r->pages.pop_back();
    return r;
  }
  Result<SegmentBatch> SummarizeSegments(const std::vector<SegmentInput>& segments,
                                         const IdfFn& idf) override {
    ++calls;
    auto r = inner_.SummarizeSegments(segments, idf);
    if (r.ok() && fault == MaintainerFault::kWrongSegments) r->segments.clear();
    return r;
  }
  Result<Consolidation> Consolidate(const std::vector<ProfileSlot>& profile,
                                    const std::vector<ConsolidationPage>& pages) override {
    ++calls;
    if (fault == MaintainerFault::kConsolidateFail || fault == MaintainerFault::kUnavailable)
      return Status::Unavailable("Error: Could not get response from LLM.");
    return inner_.Consolidate(profile, pages);
  }

 private:
  ExtractiveMaintainer inner_;
};

// Same vectors as the built-in embedder, another name and dimension.
class OtherEmbedder final : public Embedder {
 public:
  std::string Name() const override { return "other-embedder"; }
  int Dimension() const override { return 64; }
  bool IsBuiltin() const override { return false; }
  Result<std::vector<Vector>> Embed(const std::vector<std::string>& texts) override {
    std::vector<Vector> out(texts.size(), Vector(64, 0.0f));
    for (auto& v : out) v[0] = 1.0f;
    return out;
  }
};

// A scripted model (in-process, for layers below the HTTP client): replies
// in order, then fails like an endpoint that is down.
class ScriptedLlm final : public Llm {
 public:
  std::deque<Result<ChatResult>> replies;
  std::atomic<int> calls{0};
  std::vector<ChatRequest> requests;
  std::string Name() const override { return "scripted"; }
  Result<ChatResult> Chat(const ChatRequest& r) override {
    ++calls;
    requests.push_back(r);
    if (replies.empty()) return Status::Unavailable("llm endpoint: HTTP 500 after 5 attempts");
    auto out = replies.front();
    replies.pop_front();
    if (out.ok() && r.on_delta) r.on_delta(out->content);
    return out;
  }
  void Say(const std::string& content) { replies.push_back(ChatResult{content, "stop", 10, 10}); }
};

}  // namespace engram::testing
