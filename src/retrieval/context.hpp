// Context assembly: packs ranked messages, recent STM turns, the profile and
// facts into a context that never exceeds the token budget (the estimate of
// the whole rendered text, headings included, is tracked exactly while
// packing). Pure: every item arrives with its text.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engram/types.hpp"

namespace engram::retrieval {

// A fact offered to the context, with the pages it was drawn from.
struct FactCandidate {
  RetrievedItem item;  // text filled
  std::vector<std::int64_t> pages;
};

struct ContextInput {
  RetrieveOptions options;
  // Newest STM turns, oldest first; text is the whole rendered exchange.
  // (Views: the caller keeps the items, the texts and the slots alive until
  // AssembleContext returns; they are copied only into the result.)
  std::span<const RetrievedItem> recent;
  // Messages (pages and STM turns, one side each), best first; text is
  // "Name: message" and part is "user" or "assistant".
  std::vector<RetrievedItem> ranked;
  // Per ranked item: text::CountWords of its text, known from the snapshot
  // (shorter than `ranked`, or empty: the rest are counted here).
  std::vector<std::uint32_t> ranked_words;
  // Per ranked item: the chain summary of its page ("" when none).
  std::vector<std::string_view> chain;
  std::span<const ProfileSlot> profile;
  std::vector<FactCandidate> user_facts;       // best first
  std::vector<FactCandidate> assistant_facts;
};

// Shares of the budget that recent STM turns, the profile and the facts may
// take at most are options.ranking's stm_share, profile_share and
// facts_share; what they leave goes to ranked messages.
// (Measured on LoCoMo: 0.2/0.1/0.2 -> 0.1/0.05/0.1 raised evidence recall
// within 500 tokens from 0.648 to 0.692; facts 0.1 -> 0.05 raised it by 0.014
// more, and by 0.007 within 1,000 tokens: facts mostly restate messages, and
// relevant STM turns also enter by rank.)

// The context within in.options.budget_tokens. Packing order: recent STM
// turns, profile, ranked messages (leaving room for the facts' share), facts
// whose pages are not already in the context, then more messages in what is
// left. Rendered as: profile, facts, relevant past messages (chronological,
// one date line per day; both sides of an exchange merge into one item of
// part "both", source_ref joined), recent conversation.
// context_tokens == text::EstimateTokens(context) <= budget.
// (By value: the ranked items move into the result.)
RetrievalResult AssembleContext(ContextInput in);

}  // namespace engram::retrieval
