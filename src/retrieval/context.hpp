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

// Lower-case words of a text separated by single spaces (ASCII letters
// lower-cased, digits and bytes from 0x80 kept, other ASCII bytes separate
// words), appended to `out`: the form in which the context's chain summaries
// are compared with what it already says (punctuation and speaker prefixes
// aside, two renderings of one sentence compare equal).
void AppendNormalised(std::string_view s, std::string& out);

// One sentence of a chain summary: its body and the speaker it is said by
// (its own "Name: " prefix, or the last one before it in the summary; length
// 0 when none), as offsets in the summary, and the body's word count.
// Sentences whose normal form is empty are left out.
struct SummarySentence {
  std::uint32_t speaker_off = 0, speaker_len = 0;
  std::uint32_t body_off = 0, body_len = 0;
  std::uint32_t words = 0;  // text::CountWords of the body
};

// Splits a chain summary into its sentences.
std::vector<SummarySentence> SummarySentences(std::string_view summary);

// A page's chain summary, with its sentences when they were split before
// (SummarySentences, kept with the page) or without (split when needed).
struct ChainView {
  ChainView() = default;
  ChainView(std::string_view s) : summary(s) {}  // NOLINT: a summary alone
  ChainView(const char* s) : summary(s) {}       // NOLINT
  ChainView(const std::string& s) : summary(s) {}  // NOLINT
  ChainView(std::string_view s, std::span<const SummarySentence> ss) : summary(s), sentences(ss) {}
  std::string_view summary;
  std::span<const SummarySentence> sentences;
};

// A fact offered to the context, with the pages it was drawn from. (Views:
// the caller keeps the text and the pages alive; only the facts the context
// takes are copied, with their text, into the result.)
struct FactCandidate {
  RetrievedItem item;      // its text may be left empty when `text` views it
  std::string_view text;   // "": item.text is the text
  std::uint32_t words = 0;  // text::CountWords(text) when known, 0: counted here
  std::span<const std::int64_t> pages;
  // The fact's own words (`text` without its date), when known: a fact that
  // a chosen message or recent turn says word for word is left out (a
  // memory stored as said, "I'm allergic to penicillin", beside the turn).
  std::string_view body;
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
  std::vector<ChainView> chain;
  std::span<const ProfileSlot> profile;
  std::vector<FactCandidate> user_facts;       // best first
  std::vector<FactCandidate> assistant_facts;
  // The time of the retrieval: recent turns said more than
  // ranking.recent_hours before it take no share (0: every turn is recent).
  TimeMs now = 0;
};

// Shares of the budget that recent STM turns, the profile and the facts may
// take at most are options.ranking's stm_share, profile_share and
// facts_share; what they leave goes to ranked messages. Recent turns older
// than ranking.recent_hours take no share: a conversation left days ago is
// not the one in progress (on LoCoMo, whose conversations ended years before
// the retrieval, evidence within 500 tokens 0.788 -> 0.793 on conversations
// 0-4 and 0.775 -> 0.790 on 5-9).
// (Measured on LoCoMo: 0.2/0.1/0.2 -> 0.1/0.05/0.1 raised evidence recall
// within 500 tokens from 0.648 to 0.692; facts 0.1 -> 0.05 raised it by 0.014
// more, and by 0.007 within 1,000 tokens: facts mostly restate messages, and
// relevant STM turns also enter by rank.)

// The context within in.options.budget_tokens. Packing order: recent STM
// turns, profile, ranked messages (leaving room for the facts' share), facts
// whose pages are not already in the context, then more messages in what is
// left, then older recent turns (newest first, no gap) in what is still
// left. Rendered as: profile, facts, relevant past messages (chronological,
// one date line per day; both sides of an exchange merge into one item of
// part "both", source_ref joined), recent conversation.
// context_tokens == text::EstimateTokens(context) <= budget.
// (By value: the ranked items move into the result.)
RetrievalResult AssembleContext(ContextInput in);

}  // namespace engram::retrieval
