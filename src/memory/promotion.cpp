#include "memory/promotion.hpp"

#include <algorithm>
#include <map>

#include "lineage/receipts.hpp"
#include "memory/mtm.hpp"
#include "memory/scope_store.hpp"
#include "memory/stm.hpp"
#include "memory/text_documents.hpp"
#include "store/fulltext.hpp"
#include "store/segments.hpp"

namespace engram::memory {

namespace {

// What the read phase gathers.
struct Snapshot {
  ScopeRow scope;
  std::vector<Turn> batch;
  std::int64_t stm_count = 0;
  ChainContext chain;
  std::int64_t chain_page_id = 0;
  std::int64_t chain_segment_id = 0;  // segment of the chain tail (0: none or archived)
  std::vector<SegmentRow> segments;  // live ones
  ScopeIdf idf;
};

// A segment as it will be after the batch (existing or new).
struct WorkingSegment {
  SegmentRow row;
  bool is_new = false;
  bool touched = false;
  std::vector<int> new_pages;  // indexes into the batch
};

PageDraft DraftFrom(const Turn& t) {
  PageDraft d;
  d.turn_id = t.id;
  d.user_text = t.user_text;
  d.assistant_text = t.assistant_text;
  d.user_name = t.user_name.empty() ? "User" : t.user_name;
  d.assistant_name = t.assistant_name.empty() ? "Assistant" : t.assistant_name;
  d.event_time = t.event_time;
  return d;
}

Result<Snapshot> ReadSnapshot(sql::Db* db, std::int64_t scope_id, const MemoryConfig& config) {
  Snapshot s{.idf = {}};
  ENGRAM_ASSIGN_OR_RETURN(s.scope, LoadScope(db, scope_id));
  s.stm_count = s.scope.stm_count;
  std::int64_t overflow = s.stm_count - config.stm_capacity;
  if (overflow <= 0) return s;
  ENGRAM_ASSIGN_OR_RETURN(s.batch,
                          LoadStm(db, scope_id, std::min<std::int64_t>(overflow, config.promote_batch_max)));
  if (s.scope.chain_page_id != 0) {
    ENGRAM_ASSIGN_OR_RETURN(auto tail, store::LoadChainPage(db, s.scope.chain_page_id));
    if (tail) {
      s.chain_segment_id = tail->segment_id;
      ENGRAM_ASSIGN_OR_RETURN(Turn prev, LoadTurn(db, tail->turn_id));
      s.chain.has_previous = true;
      s.chain.previous = DraftFrom(prev);
      s.chain.previous.embedding = std::move(tail->embedding);
      s.chain.chain_summary = s.scope.chain_summary;
      s.chain_page_id = s.scope.chain_page_id;
    }
  }
  ENGRAM_ASSIGN_OR_RETURN(s.segments, LoadSegments(db, scope_id, false));
  std::vector<std::string> texts;
  for (const auto& t : s.batch) texts.push_back(RenderExchange(t));
  ENGRAM_ASSIGN_OR_RETURN(s.idf, ScopeIdf::Load(db, scope_id, texts));
  return s;
}

// Assigns each page, in order, to a segment, updating the working centroids:
// a page that continues the dialogue chain (the maintainer's continuity
// judgement: same conversation, same topic) joins the segment of the page
// before it; any other page joins the live segment with the best
// cosine + keyword Jaccard when that reaches the threshold (a topic that comes
// back), else a new segment. `prev_segment` is the chain tail's segment (0: none).
std::vector<int> AssignSegments(std::vector<WorkingSegment>& segs,
                                const std::vector<PageDraft>& drafts,
                                const std::vector<PageAnalysis>& analysis, double threshold,
                                TimeMs now, std::int64_t prev_segment) {
  std::vector<int> assignment;
  int prev = -1;
  for (std::size_t k = 0; k < segs.size(); ++k) {
    if (prev_segment != 0 && segs[k].row.id == prev_segment) prev = static_cast<int>(k);
  }
  for (std::size_t i = 0; i < drafts.size(); ++i) {
    const bool follow_chain = analysis[i].continues_previous && prev >= 0;
    int best = follow_chain ? prev : -1;
    double best_score = threshold;
    for (std::size_t k = 0; k < segs.size() && !follow_chain; ++k) {
      const auto& row = segs[k].row;
      double score = Dot(drafts[i].embedding, row.embedding) + Jaccard(analysis[i].keywords, row.keywords);
      if (score >= best_score) {
        best_score = score;
        best = static_cast<int>(k);
      }
    }
    if (best < 0) {
      WorkingSegment ws;
      ws.is_new = true;
      ws.row.emb_sum.assign(drafts[i].embedding.size(), 0.0f);
      ws.row.last_access = now;
      ws.row.created_at = now;
      segs.push_back(std::move(ws));
      best = static_cast<int>(segs.size() - 1);
    }
    auto& seg = segs[static_cast<std::size_t>(best)];
    seg.touched = true;
    seg.new_pages.push_back(static_cast<int>(i));
    if (seg.row.emb_sum.size() != drafts[i].embedding.size()) {
      seg.row.emb_sum.assign(drafts[i].embedding.size(), 0.0f);
    }
    for (std::size_t d = 0; d < drafts[i].embedding.size(); ++d) {
      seg.row.emb_sum[d] += drafts[i].embedding[d];
    }
    seg.row.embedding = seg.row.emb_sum;
    Normalize(seg.row.embedding);
    for (const auto& kw : analysis[i].keywords) {
      if (std::find(seg.row.keywords.begin(), seg.row.keywords.end(), kw) == seg.row.keywords.end())
        seg.row.keywords.push_back(kw);
    }
    assignment.push_back(best);
    prev = best;
  }
  return assignment;
}

lineage::Receipt BaseReceipt(const Snapshot& s, const MemoryConfig& config,
                             const std::string& run_id, TimeMs now) {
  lineage::Receipt r;
  r.run_id = run_id;
  r.tenant = s.scope.scope.tenant;
  r.user_scope = s.scope.scope.user;
  r.assistant_scope = s.scope.scope.assistant;
  r.source_version = config.source_version;
  r.at_utc = now;
  return r;
}

Status WriteSegment(sql::Db* db, std::int64_t scope_id, WorkingSegment& ws, TimeMs now,
                    bool degraded) {
  const std::int64_t added = static_cast<std::int64_t>(ws.new_pages.size());
  if (ws.is_new) {
    ENGRAM_ASSIGN_OR_RETURN(ws.row.id, store::InsertSegment(db, scope_id, ws.row, added, now, degraded));
  } else {
    ENGRAM_RETURN_IF_ERROR(store::UpdateSegment(db, ws.row, added, now, degraded));
  }
  return store::ReindexText(db, store::FullText::kSegments, ws.row.id, scope_id,
                            SegmentDocument(ws.row.summary, ws.row.keywords));
}

}  // namespace

Result<PromotionResult> PromoteBatch(const WriterDb& w, std::int64_t scope_id,
                                     const MemoryConfig& config, const MemoryDeps& deps,
                                     const std::string& run_id) {
  PromotionResult out;
  // 1. Read phase (short hold of the writer connection).
  Snapshot snap{.idf = {}};
  {
    std::lock_guard<std::mutex> lock(*w.mu);
    ENGRAM_ASSIGN_OR_RETURN(snap, ReadSnapshot(w.db, scope_id, config));
  }
  if (snap.batch.empty()) return out;
  deps.Fault("promote.after_read");

  // 2. Model work, outside any transaction.
  std::vector<PageDraft> drafts;
  std::vector<std::string> texts;
  for (const auto& t : snap.batch) {
    drafts.push_back(DraftFrom(t));
    texts.push_back(RenderExchange(t));
  }
  ENGRAM_ASSIGN_OR_RETURN(auto vectors, deps.EmbedderFor(snap.scope.scope.tenant)->Embed(texts));
  if (vectors.size() != drafts.size()) return Status::Internal("embedder returned a wrong count");
  for (std::size_t i = 0; i < drafts.size(); ++i) drafts[i].embedding = std::move(vectors[i]);
  IdfFn idf = snap.idf.AsFn();
  ENGRAM_ASSIGN_OR_RETURN(BatchAnalysis analysis, deps.maintainer->AnalyzePages(snap.chain, drafts, idf));
  if (analysis.pages.size() != drafts.size()) {
    return Status::Unavailable("maintenance engine returned " +
                               std::to_string(analysis.pages.size()) + " page analyses for " +
                               std::to_string(drafts.size()) + " pages");
  }
  out.model_calls += analysis.model_calls;
  out.degraded = out.degraded || analysis.degraded;
  TimeMs now = deps.clock->NowMs();

  std::vector<WorkingSegment> segs;
  for (auto& row : snap.segments) segs.push_back(WorkingSegment{.row = std::move(row)});
  std::vector<int> assignment =
      AssignSegments(segs, drafts, analysis.pages, config.merge_threshold, now, snap.chain_segment_id);

  std::vector<SegmentInput> inputs;
  std::vector<int> input_seg;
  for (std::size_t k = 0; k < segs.size(); ++k) {
    if (!segs[k].touched) continue;
    SegmentInput in;
    in.summary = segs[k].row.summary;
    in.keywords = segs[k].row.keywords;
    for (int p : segs[k].new_pages) in.new_pages.push_back(drafts[static_cast<std::size_t>(p)]);
    inputs.push_back(std::move(in));
    input_seg.push_back(static_cast<int>(k));
  }
  ENGRAM_ASSIGN_OR_RETURN(SegmentBatch summaries, deps.maintainer->SummarizeSegments(inputs, idf));
  if (summaries.segments.size() != inputs.size()) {
    return Status::Unavailable("maintenance engine returned a wrong number of segment summaries");
  }
  out.model_calls += summaries.model_calls;
  out.degraded = out.degraded || summaries.degraded;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    auto& row = segs[static_cast<std::size_t>(input_seg[i])].row;
    row.summary = summaries.segments[i].summary;
    row.keywords = summaries.segments[i].keywords;
  }
  deps.Fault("promote.after_compute");

  // 3. One transaction commits everything.
  std::lock_guard<std::mutex> lock(*w.mu);
  sql::Db* db = w.db;
  ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
  // Still in STM? (Idempotent retry: a batch that was committed meanwhile is
  // reported as a concurrent change and re-read.)
  for (const auto& t : snap.batch) {
    ENGRAM_ASSIGN_OR_RETURN(bool in_stm, store::TurnInStm(db, t.id));
    if (!in_stm) return Status::Aborted("turn " + std::to_string(t.id) + " left STM concurrently");
  }
  ENGRAM_ASSIGN_OR_RETURN(ScopeRow scope_now, LoadScope(db, scope_id));
  if (scope_now.chain_page_id != snap.chain_page_id) return Status::Aborted("chain moved concurrently");

  lineage::Receipt base = BaseReceipt(snap, config, run_id, now);
  for (auto& ws : segs) {
    if (!ws.touched) continue;
    ENGRAM_RETURN_IF_ERROR(WriteSegment(db, scope_id, ws, now, out.degraded));
    lineage::Receipt r = base;
    r.memory_kind = "segment";
    r.memory_id = ws.row.id;
    r.version = ws.is_new ? 1 : ws.row.version + 1;
    r.from_tier = "stm";
    r.to_tier = "mtm";
    r.status = out.degraded ? "degraded" : "committed";
    r.outcome_receipt = std::string(ws.is_new ? "segment.create" : "segment.merge") +
                        " segments.id=" + std::to_string(ws.row.id);
    ENGRAM_RETURN_IF_ERROR(lineage::Write(db, r));
    if (ws.is_new) {
      ++out.segments_created;
    } else {
      out.segments_merged += static_cast<int>(ws.new_pages.size());
    }
  }

  std::int64_t prev_page = snap.chain_page_id;
  std::string chain_summary = snap.scope.chain_summary;
  for (std::size_t i = 0; i < drafts.size(); ++i) {
    const PageAnalysis& a = analysis.pages[i];
    std::int64_t linked_prev = (a.continues_previous && prev_page != 0) ? prev_page : 0;
    store::NewPage page;
    page.scope_id = scope_id;
    page.turn_id = drafts[i].turn_id;
    page.segment_id = segs[static_cast<std::size_t>(assignment[i])].row.id;
    page.prev_page = linked_prev;
    page.chain_summary = a.chain_summary;
    page.keywords = a.keywords;
    page.embedding = drafts[i].embedding;
    page.created_at = now;
    page.degraded = out.degraded;
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t page_id, store::InsertPage(db, page));
    ENGRAM_RETURN_IF_ERROR(AddTermsToScope(db, scope_id, texts[i]));
    lineage::Receipt r = base;
    r.memory_kind = "turn";
    r.memory_id = drafts[i].turn_id;
    r.from_tier = "stm";
    r.to_tier = "mtm";
    r.status = "committed";
    r.outcome_receipt = "pages.id=" + std::to_string(page_id);
    ENGRAM_RETURN_IF_ERROR(lineage::Write(db, r));
    prev_page = page_id;
    chain_summary = a.chain_summary;
    ++out.pages;
  }
  ENGRAM_RETURN_IF_ERROR(store::MoveChain(db, scope_id, prev_page, chain_summary, out.pages));

  // Archive the coldest segments over capacity; never one this batch touched.
  std::int64_t live = 0;
  for (const auto& ws : segs) live += ws.row.archived ? 0 : 1;
  if (live > config.mtm_capacity) {
    std::vector<std::pair<double, std::size_t>> cold;
    for (std::size_t k = 0; k < segs.size(); ++k) {
      if (!segs[k].touched) cold.emplace_back(Heat(segs[k].row, now, config.heat_tau_hours), k);
    }
    std::sort(cold.begin(), cold.end());
    for (std::size_t c = 0; c < cold.size() && live > config.mtm_capacity; ++c) {
      const SegmentRow& row = segs[cold[c].second].row;
      ENGRAM_RETURN_IF_ERROR(store::ArchiveSegment(db, row.id, now));
      lineage::Receipt r = base;
      r.memory_kind = "segment";
      r.memory_id = row.id;
      r.version = row.version + 1;
      r.from_tier = "mtm";
      r.to_tier = "archive";
      r.status = "committed";
      r.outcome_receipt = "segments.archived_at set";
      ENGRAM_RETURN_IF_ERROR(lineage::Write(db, r));
      --live;
      ++out.segments_archived;
    }
  }

  std::int64_t remaining = scope_now.stm_count - out.pages;
  out.more = remaining > config.stm_capacity;
  ENGRAM_RETURN_IF_ERROR(BumpDataVersion(db, scope_id));
  deps.Fault("promote.before_commit");
  ENGRAM_RETURN_IF_ERROR(txn->Commit());
  deps.Fault("promote.after_commit");
  return out;
}

}  // namespace engram::memory

