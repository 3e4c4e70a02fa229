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

// --- Appended for the embedding cache and reembed tests. ---
#include <mutex>
#include <vector>

namespace engram::testing {

// A non-builtin embedder with meaningful vectors (the built-in hashed
// features at its own dimension, so similar texts stay similar) under its own
// name. Counts calls and texts, records every text it embedded, and fails
// (Unavailable, like an endpoint that is down) from call number
// `fail_from_call` on when that is > 0.
class CountingEmbedder final : public Embedder {
 public:
  explicit CountingEmbedder(std::string name = "fake-embed", int dim = 64)
      : name_(std::move(name)), inner_(dim) {}
  std::atomic<int> calls{0};
  std::atomic<int> texts{0};
  std::atomic<int> fail_from_call{0};

  std::string Name() const override { return name_; }
  int Dimension() const override { return inner_.Dimension(); }
  bool IsBuiltin() const override { return false; }
  Result<std::vector<Vector>> Embed(const std::vector<std::string>& in) override {
    const int n = ++calls;
    if (fail_from_call > 0 && n >= fail_from_call)
      return Status::Unavailable("embeddings endpoint: HTTP 503 after 5 attempts (fake)");
    texts += static_cast<int>(in.size());
    {
      std::lock_guard<std::mutex> l(mu_);
      embedded_.insert(embedded_.end(), in.begin(), in.end());
    }
    return inner_.Embed(in);
  }
  std::vector<std::string> Embedded() const {
    std::lock_guard<std::mutex> l(mu_);
    return embedded_;
  }

 private:
  std::string name_;
  HashEmbedder inner_;
  mutable std::mutex mu_;
  std::vector<std::string> embedded_;
};

}  // namespace engram::testing
