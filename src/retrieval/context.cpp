#include "retrieval/context.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "core/time.hpp"
#include "memory/lpm.hpp"
#include "memory/stm.hpp"

namespace engram::retrieval {

namespace {

constexpr int kRankedWithText = 50;
// Tokens set aside for the section headings of the rendered context.
constexpr int kHeadingReserve = 24;

Status FillTurnItem(sql::Db* db, RetrievedItem& item, std::string* chain_summary) {
  ENGRAM_ASSIGN_OR_RETURN(Turn t, memory::LoadTurn(db, item.turn_id));
  item.event_time = t.event_time;
  item.source_ref = t.source_ref;
  item.text = "[" + FormatHumanDateTime(t.event_time) + "] " + memory::RenderExchange(t);
  item.tokens = text::EstimateTokens(item.text);
  if (chain_summary && item.kind == ItemKind::kPage) {
    ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare("SELECT chain_summary FROM pages WHERE id = ?"));
    st->Bind(1, item.id);
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    *chain_summary = row ? st->Text(0) : std::string();
    st->Reset();
  }
  return Status::Ok();
}

Result<RetrievedItem> FactItem(sql::Db* db, std::int64_t id, double score, ItemKind kind) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st, db->Prepare("SELECT text, version, event_time FROM facts WHERE id = ?"));
  st->Bind(1, id);
  ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) {
    st->Reset();
    return Status::NotFound("fact");
  }
  RetrievedItem item;
  item.kind = kind;
  item.tier = Tier::kLpm;
  item.id = id;
  item.score = score;
  item.version = st->Int(1);
  item.event_time = st->Int(2);
  item.text = "- (" + FormatHumanDate(item.event_time) + ") " + st->Text(0);
  item.tokens = text::EstimateTokens(item.text);
  st->Reset();
  return item;
}

struct Packer {
  int budget;
  int used = 0;
  bool truncated = false;
  bool Take(int tokens, int cap_left) {
    if (tokens > budget - used || tokens > cap_left) {
      truncated = true;
      return false;
    }
    used += tokens;
    return true;
  }
};

}  // namespace

Result<RetrievalResult> AssembleContext(sql::Db* db, const ContextInput& in) {
  RetrievalResult out;
  const int budget = std::max(0, in.options.budget_tokens);
  Packer pack{std::max(0, budget - kHeadingReserve)};

  // Ranked list with text (for callers and evaluation).
  std::vector<std::string> chain(in.ranked.size());
  for (std::size_t i = 0; i < in.ranked.size(); ++i) {
    RetrievedItem item = in.ranked[i];
    if (static_cast<int>(i) < kRankedWithText) {
      ENGRAM_RETURN_IF_ERROR(FillTurnItem(db, item, &chain[i]));
    }
    out.ranked.push_back(std::move(item));
  }

  // 1. Recent STM turns, newest first, within their share.
  std::vector<RetrievedItem> stm_items;
  int stm_cap = static_cast<int>(budget * kStmShare);
  if (in.options.include_stm) {
    for (auto it = in.stm.rbegin(); it != in.stm.rend(); ++it) {
      RetrievedItem item;
      item.kind = ItemKind::kStmTurn;
      item.tier = Tier::kStm;
      item.id = it->id;
      item.turn_id = it->id;
      ENGRAM_RETURN_IF_ERROR(FillTurnItem(db, item, nullptr));
      if (!pack.Take(item.tokens, stm_cap)) break;
      stm_cap -= item.tokens;
      stm_items.push_back(std::move(item));
    }
    std::reverse(stm_items.begin(), stm_items.end());
  }
  // 2. Profile.
  std::vector<RetrievedItem> profile_items;
  int profile_cap = static_cast<int>(budget * kProfileShare);
  for (const auto& slot : in.profile) {
    RetrievedItem item;
    item.kind = ItemKind::kProfile;
    item.tier = Tier::kLpm;
    item.text = slot.dimension + ": " + slot.value;
    item.tokens = text::EstimateTokens(item.text);
    item.event_time = slot.updated_at;
    if (!pack.Take(item.tokens, profile_cap)) continue;
    profile_cap -= item.tokens;
    profile_items.push_back(std::move(item));
  }
  // 3. Facts, alternating kinds by rank, up to max_facts each.
  std::vector<RetrievedItem> user_facts, assistant_facts;
  int facts_cap = static_cast<int>(budget * kFactsShare);
  std::size_t n = std::max(in.user_facts.size(), in.assistant_facts.size());
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < 2; ++k) {
      const auto& src = k == 0 ? in.user_facts : in.assistant_facts;
      auto& dst = k == 0 ? user_facts : assistant_facts;
      if (i >= src.size() || static_cast<int>(dst.size()) >= in.options.max_facts) continue;
      auto item = FactItem(db, src[i].first, src[i].second,
                           k == 0 ? ItemKind::kUserFact : ItemKind::kAssistantFact);
      if (!item.ok()) continue;
      if (!pack.Take(item->tokens, facts_cap)) continue;
      facts_cap -= item->tokens;
      dst.push_back(std::move(*item));
    }
  }
  // 4. Pages (and query-matching STM turns not already present), by rank,
  //    with all remaining budget.
  std::vector<std::pair<RetrievedItem, std::string>> pages;
  int taken = 0;
  for (std::size_t i = 0; i < out.ranked.size() && taken < in.options.max_pages; ++i) {
    const RetrievedItem& item = out.ranked[i];
    if (item.text.empty()) break;
    if (item.kind == ItemKind::kStmTurn) {
      bool present = std::any_of(stm_items.begin(), stm_items.end(),
                                 [&](const RetrievedItem& s) { return s.turn_id == item.turn_id; });
      if (present) continue;
    }
    if (!pack.Take(item.tokens, budget)) continue;
    pages.emplace_back(item, chain[i]);
    ++taken;
  }
  // Chain summaries where budget remains, best pages first.
  std::vector<std::string> summaries(pages.size());
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (pages[i].second.empty()) continue;
    std::string s = "  (context: " + pages[i].second + ")";
    int t = text::EstimateTokens(s);
    if (t <= pack.budget - pack.used) {
      pack.used += t;
      summaries[i] = s;
    }
  }
  // Pages in chronological order in the context.
  std::vector<std::size_t> order(pages.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return pages[a].first.event_time < pages[b].first.event_time;
  });

  std::string ctx;
  auto section = [&](const char* title, const std::vector<RetrievedItem>& items) {
    if (items.empty()) return;
    ctx += std::string(ctx.empty() ? "" : "\n") + "## " + title + "\n";
    for (const auto& it : items) {
      ctx += it.text + "\n";
      out.items.push_back(it);
    }
  };
  section("User profile", profile_items);
  section("Facts about the user", user_facts);
  section("Facts about the assistant", assistant_facts);
  if (!pages.empty()) {
    ctx += std::string(ctx.empty() ? "" : "\n") + "## Relevant past conversation\n";
    for (std::size_t i : order) {
      ctx += pages[i].first.text + "\n";
      if (!summaries[i].empty()) ctx += summaries[i] + "\n";
      out.items.push_back(pages[i].first);
    }
  }
  section("Recent conversation", stm_items);
  out.context = std::move(ctx);
  out.context_tokens = text::EstimateTokens(out.context);
  out.truncated = pack.truncated;
  return out;
}

}  // namespace engram::retrieval
