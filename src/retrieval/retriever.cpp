#include "retrieval/retriever.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/text.hpp"
#include "core/time.hpp"
#include "memory/lpm.hpp"
#include "memory/stm.hpp"
#include "retrieval/context.hpp"

namespace engram::retrieval {

namespace {

constexpr double kRrfK = 60.0;
constexpr int kLexicalCandidates = 200;
constexpr int kVectorCandidates = 200;
constexpr int kStmForContext = 64;

// Lexical ranking of rows of an FTS5 table for the query, best first.
Result<std::vector<std::int64_t>> Lexical(sql::Db* db, const char* table, std::int64_t scope_id,
                                          const std::string& query, int limit) {
  std::vector<std::int64_t> out;
  std::string match = memory::FtsQuery(scope_id, query);
  if (match.empty()) return out;
  std::string sql = std::string("SELECT rowid FROM ") + table + " WHERE " + table +
                    " MATCH ? ORDER BY bm25(" + table + ", 0.0, 1.0) LIMIT ?";
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(sql));
  st->Bind(1, match).Bind(2, limit);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back(st->Int(0));
  }
  st->Reset();
  return out;
}

void AddRrf(std::unordered_map<std::int64_t, double>& scores, const std::vector<std::int64_t>& ranked,
            double weight) {
  for (std::size_t r = 0; r < ranked.size(); ++r) {
    scores[ranked[r]] += weight / (kRrfK + static_cast<double>(r) + 1.0);
  }
}

std::vector<std::int64_t> Ids(const std::vector<std::pair<std::int64_t, float>>& hits) {
  std::vector<std::int64_t> out;
  for (const auto& h : hits) out.push_back(h.first);
  return out;
}

std::vector<std::pair<std::int64_t, double>> Sorted(const std::unordered_map<std::int64_t, double>& m) {
  std::vector<std::pair<std::int64_t, double>> v(m.begin(), m.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
  return v;
}

// Facts of one kind ranked by lexical + vector fusion.
Result<std::vector<std::pair<std::int64_t, double>>> RankFacts(sql::Db* db, const RetrievalInput& in,
                                                               const FlatIndex& index,
                                                               const std::vector<std::int64_t>& lexical) {
  std::unordered_map<std::int64_t, double> scores;
  std::unordered_set<std::int64_t> mine;
  for (std::size_t r = 0; r < index.size(); ++r) mine.insert(index.id(r));
  std::vector<std::int64_t> lex;
  for (auto id : lexical) {
    if (mine.count(id)) lex.push_back(id);
  }
  AddRrf(scores, lex, 1.0);
  AddRrf(scores, Ids(index.Search(in.query_embedding, kVectorCandidates)), 1.0);
  (void)db;
  return Sorted(scores);
}

}  // namespace

Result<RetrievalResult> Retrieve(sql::Db* db, const RetrievalInput& in, memory::AccessLog* access) {
  const ScopeIndex& idx = *in.index;
  const std::int64_t scope_id = in.scope->id;
  const RetrieveOptions& opt = in.options;

  // Pages: direct lexical and vector hits.
  ENGRAM_ASSIGN_OR_RETURN(auto lex_turns, Lexical(db, "turns_fts", scope_id, in.query, kLexicalCandidates));
  std::vector<std::int64_t> lex_pages;
  std::vector<std::int64_t> lex_stm;
  for (auto turn_id : lex_turns) {
    auto it = idx.turn_page.find(turn_id);
    if (it != idx.turn_page.end()) {
      lex_pages.push_back(it->second);
    } else {
      lex_stm.push_back(turn_id);
    }
  }
  auto vec_pages = idx.pages.Search(in.query_embedding, kVectorCandidates);

  // Segments: vector + lexical over summaries and keywords; then the pages of
  // the best segments ranked by their own similarity (two-stage).
  ENGRAM_ASSIGN_OR_RETURN(auto lex_segs, Lexical(db, "segments_fts", scope_id, in.query, 50));
  std::unordered_map<std::int64_t, double> seg_scores;
  AddRrf(seg_scores, lex_segs, 1.0);
  AddRrf(seg_scores, Ids(idx.segments.Search(in.query_embedding, 50)), 1.0);
  auto seg_ranked = Sorted(seg_scores);
  if (static_cast<int>(seg_ranked.size()) > opt.max_segments) seg_ranked.resize(opt.max_segments);
  std::unordered_set<std::int64_t> top_segments;
  for (const auto& [id, s] : seg_ranked) top_segments.insert(id);
  std::vector<std::int64_t> staged;
  for (const auto& [page_id, score] : vec_pages) {
    auto it = idx.page_refs.find(page_id);
    if (it != idx.page_refs.end() && top_segments.count(it->second.segment_id)) staged.push_back(page_id);
  }

  std::unordered_map<std::int64_t, double> page_scores;
  AddRrf(page_scores, lex_pages, 1.0);
  AddRrf(page_scores, Ids(vec_pages), 1.0);
  AddRrf(page_scores, staged, 0.5);
  auto ranked_pages = Sorted(page_scores);

  // Segment hits feed heat (recorded by the caller, never written here).
  for (const auto& [id, s] : seg_ranked) {
    if (idx.segment_archived.count(id) && !idx.segment_archived.at(id)) {
      auto& e = (*access)[id];
      e.first += 1;
      e.second = std::max(e.second, in.now);
    }
  }

  ContextInput ctx;
  ctx.options = opt;
  // Only the newest STM turns can fit the context; STM may hold more while
  // promotion is pending.
  ENGRAM_ASSIGN_OR_RETURN(ctx.stm, memory::LoadStmNewest(db, scope_id, kStmForContext));
  // STM turns that match the query rank with the pages.
  std::unordered_map<std::int64_t, double> stm_scores;
  AddRrf(stm_scores, lex_stm, 1.0);
  const std::size_t keep = std::max<std::size_t>(50, static_cast<std::size_t>(opt.max_pages));
  std::vector<std::tuple<double, std::int64_t, bool>> merged;  // score, id, is_page
  for (std::size_t i = 0; i < ranked_pages.size() && i < keep; ++i)
    merged.emplace_back(ranked_pages[i].second, ranked_pages[i].first, true);
  for (const auto& [turn_id, s] : stm_scores) merged.emplace_back(s, turn_id, false);
  std::stable_sort(merged.begin(), merged.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
  for (const auto& [score, id, is_page] : merged) {
    RetrievedItem item;
    item.score = score;
    if (is_page) {
      const PageRef& ref = idx.page_refs.at(id);
      item.kind = ItemKind::kPage;
      item.id = id;
      item.turn_id = ref.turn_id;
      item.segment_id = ref.segment_id;
      item.tier = idx.segment_archived.count(ref.segment_id) && idx.segment_archived.at(ref.segment_id)
                      ? Tier::kArchive
                      : Tier::kMtm;
    } else {
      item.kind = ItemKind::kStmTurn;
      item.tier = Tier::kStm;
      item.id = id;
      item.turn_id = id;
    }
    ctx.ranked.push_back(std::move(item));
  }

  if (opt.include_profile) {
    ENGRAM_ASSIGN_OR_RETURN(ctx.profile, memory::LoadProfile(db, scope_id));
  }
  ENGRAM_ASSIGN_OR_RETURN(auto lex_facts, Lexical(db, "facts_fts", scope_id, in.query, 100));
  ENGRAM_ASSIGN_OR_RETURN(ctx.user_facts, RankFacts(db, in, idx.user_facts, lex_facts));
  ENGRAM_ASSIGN_OR_RETURN(ctx.assistant_facts, RankFacts(db, in, idx.assistant_facts, lex_facts));
  return AssembleContext(db, ctx);
}

}  // namespace engram::retrieval
