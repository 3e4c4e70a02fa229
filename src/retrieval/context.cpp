#include "retrieval/context.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "core/text.hpp"
#include "core/time.hpp"

namespace engram::retrieval {

namespace {

constexpr const char* kProfileTitle = "User profile";
constexpr const char* kUserFactsTitle = "Facts about the user";
constexpr const char* kAssistantFactsTitle = "Facts about the assistant";
constexpr const char* kPastTitle = "Relevant past conversation";
constexpr const char* kRecentTitle = "Recent conversation";

// Words and bytes of a text, the two inputs of text::EstimateTokens; both are
// additive over texts joined by newlines, so the estimate of the whole
// context is known exactly while it is being packed.
struct Size {
  std::size_t words = 0;
  std::size_t bytes = 0;
  Size operator+(Size o) const { return {words + o.words, bytes + o.bytes}; }
};

Size Measure(std::string_view s) { return {text::CountWords(s), s.size()}; }

int Tokens(Size s) { return text::EstimateTokensOf(s.words, s.bytes); }

// Every section is "\n## Title\n" (the leading newline separates it from the
// previous section; counted even for the first one, a one-byte overestimate).
Size HeadingSize(const char* title) { return Measure(std::string("\n## ") + title + "\n"); }

std::string DayLine(TimeMs t) {
  std::string s = "[";
  s += FormatHumanDate(t);
  s += ']';
  return s;
}

struct Packer {
  int budget;
  Size used;
  bool truncated = false;
  bool Take(Size add, int limit) {
    if (Tokens(used + add) > std::min(limit, budget)) {
      truncated = true;
      return false;
    }
    used = used + add;
    return true;
  }
};

// A fact's text (its view, or else its item's) is all it adds to its section.
std::string_view TextOf(const FactCandidate& f) { return f.text.empty() ? f.item.text : f.text; }
Size SizeOf(const FactCandidate& f) {
  return f.words > 0 && !f.text.empty() ? Size{f.words, f.text.size()} : Measure(TextOf(f));
}

// A section packed under its own cap (tokens of its lines, headings aside).
struct Section {
  const char* title;
  int cap;
  int spent = 0;
  bool open = false;
  bool Take(Packer& pack, std::string_view line) { return Take(pack, Measure(line)); }
  bool Take(Packer& pack, Size s) {
    if (!Fits(pack, s)) {
      pack.truncated = true;
      return false;
    }
    s.bytes += 1;  // its newline
    pack.used = pack.used + (open ? s : s + HeadingSize(title));
    spent += Tokens(s);
    open = true;
    return true;
  }
  // Whether Take would take it (nothing changes): within the section's cap
  // and, with the heading when it opens the section, within the budget.
  bool Fits(const Packer& pack, Size s) const {
    s.bytes += 1;
    const Size add = open ? s : s + HeadingSize(title);
    return spent + Tokens(s) <= cap && Tokens(pack.used + add) <= pack.budget;
  }
};

// Two items of one turn (user then assistant) as one item of part "both".
// `words`: the merged text's word count (each side's, added: a newline
// joins no words).
RetrievedItem Merge(const RetrievedItem& a, const RetrievedItem& b, std::size_t words) {
  RetrievedItem m = a;
  m.part = "both";
  m.text.reserve(a.text.size() + 1 + b.text.size());
  m.text += '\n';
  m.text += b.text;
  m.tokens = Tokens({words, m.text.size()});
  m.score = std::max(a.score, b.score);
  if (b.score > a.score) m.why = b.why;  // the reasons of the better side
  if (a.source_ref != b.source_ref && !a.source_ref.empty() && !b.source_ref.empty()) {
    m.source_ref = a.source_ref + "," + b.source_ref;
  } else if (m.source_ref.empty()) {
    m.source_ref = b.source_ref;
  }
  return m;
}

// What AppendNormalised makes of each byte: ASCII letters lower-cased and digits
// (std::isalnum and std::tolower of the C locale), bytes from 0x80 as they
// are; 0 for the other ASCII bytes, which separate words.
constexpr std::array<char, 256> kNormalChar = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 256; ++c) {
    if (c >= 'A' && c <= 'Z') {
      t[c] = static_cast<char>(c - 'A' + 'a');
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80) {
      t[c] = static_cast<char>(c);
    }
  }
  return t;
}();

// A set of 64-bit keys (days, page ids) for the few dozen that one assembly
// holds: open addressing, no allocation per key.
class KeySet {
 public:
  // True when the key was not there.
  bool insert(std::int64_t key) {
    if (2 * (count_ + 1) > slots_.size()) Grow();
    std::size_t i = Slot(key);
    while (used_[i]) {
      if (slots_[i] == key) return false;
      i = (i + 1) & (slots_.size() - 1);
    }
    used_[i] = true;
    slots_[i] = key;
    ++count_;
    return true;
  }
  bool contains(std::int64_t key) const {
    if (count_ == 0) return false;
    for (std::size_t i = Slot(key); used_[i]; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == key) return true;
    }
    return false;
  }

 private:
  std::size_t Slot(std::int64_t key) const {
    const std::uint64_t h = static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h >> 32) & (slots_.size() - 1);
  }
  void Grow() {
    std::vector<std::int64_t> old_slots = std::move(slots_);
    std::vector<bool> old_used = std::move(used_);
    const std::size_t n = old_slots.empty() ? 64 : 2 * old_slots.size();
    slots_.assign(n, 0);
    used_.assign(n, false);
    count_ = 0;
    for (std::size_t i = 0; i < old_slots.size(); ++i) {
      if (old_used[i]) insert(old_slots[i]);
    }
  }
  std::vector<std::int64_t> slots_;
  std::vector<bool> used_;
  std::size_t count_ = 0;
};

// Normal forms of summary sentences searched for in what the context says,
// with the size `said` had then (kFound: found; the context only grows, so
// a sentence found stays said, and one not found can only appear in what was
// added since): the summaries of one chain's pages repeat most of their
// sentences, and each byte of `said` is searched once per sentence.
using Searched = text::StringMap<std::size_t>;
constexpr std::size_t kFound = static_cast<std::size_t>(-1);

// True when `said` holds `part`, searching only what was added since the
// last search for it (memmem: std::string::find compares at every
// occurrence of the first byte).
bool Holds(const std::string& said, std::string_view part, Searched& searched) {
  auto it = searched.find(part);
  if (it == searched.end()) it = searched.emplace(std::string(part), 0).first;
  if (it->second == kFound) return true;
  // A match not in said[0, L) ends after L: it starts at L - |part| + 1 or later.
  const std::size_t from = it->second >= part.size() ? it->second - part.size() + 1 : 0;
  if (memmem(said.data() + from, said.size() - from, part.data(), part.size()) != nullptr) {
    it->second = kFound;
    return true;
  }
  it->second = said.size();
  return false;
}

// The sentences of a summary whose words the context has not said yet
// (`said`: normalised texts, one per line), joined as they were written; ""
// when every sentence is already there.
std::string Unsaid(const ChainView& chain, const std::string& said, Searched& searched) {
  std::string out;
  std::string_view written;  // the last speaker written
  std::string norm;
  for (const SummarySentence& s : chain.sentences) {
    norm.clear();
    AppendNormalised(chain.summary.substr(s.body_off, s.body_len), norm);
    if (Holds(said, norm, searched)) continue;
    const std::string_view speaker = chain.summary.substr(s.speaker_off, s.speaker_len);
    if (!out.empty()) out += ' ';
    if (!speaker.empty() && speaker != written) {
      out += speaker;
      out += ": ";
      written = speaker;
    }
    out += chain.summary.substr(s.body_off, s.body_len);
  }
  return out;
}

}  // namespace

void AppendNormalised(std::string_view s, std::string& out) {
  const std::size_t start = out.size();
  out.resize(start + s.size());  // never longer than its text: a space replaces a gap
  char* const begin = out.data() + start;
  char* w = begin;
  // Without a branch per byte (a text's word boundaries are too many to
  // predict: 2.3 ns a byte with branches, 0.9 without): each byte writes its
  // normal form or a space, and the space stays only after a word's last
  // byte; a trailing one is dropped.
  char prev = 0;
  for (char ch : s) {
    const char c = kNormalChar[static_cast<unsigned char>(ch)];
    *w = c != 0 ? c : ' ';
    w += static_cast<int>(c != 0) | static_cast<int>(prev != 0);
    prev = c;
  }
  if (w != begin && w[-1] == ' ') --w;
  out.resize(static_cast<std::size_t>(w - out.data()));
}

std::vector<SummarySentence> SummarySentences(std::string_view summary) {
  std::vector<SummarySentence> out;
  std::string norm;
  SummarySentence s;
  for (std::string_view body : text::SentenceViews(summary)) {
    // "Name: text": a speaker prefix of a few words, kept for what follows.
    const auto colon = body.find(": ");
    if (colon != std::string_view::npos && colon <= 40 &&
        body.substr(0, colon).find_first_of(".!?") == std::string_view::npos) {
      s.speaker_off = static_cast<std::uint32_t>(body.data() - summary.data());
      s.speaker_len = static_cast<std::uint32_t>(colon);
      body.remove_prefix(colon + 2);
    }
    norm.clear();
    AppendNormalised(body, norm);
    if (norm.empty()) continue;
    s.body_off = static_cast<std::uint32_t>(body.data() - summary.data());
    s.body_len = static_cast<std::uint32_t>(body.size());
    s.words = static_cast<std::uint32_t>(text::CountWords(body));
    out.push_back(s);
  }
  out.shrink_to_fit();
  return out;
}

RetrievalResult AssembleContext(ContextInput in) {
  RetrievalResult out;
  const int budget = std::max(0, in.options.budget_tokens);
  Packer pack{budget, {}};

  // 1. Recent STM turns, newest first, within their share.
  Section recent{kRecentTitle, static_cast<int>(budget * in.options.ranking.stm_share)};
  std::vector<const RetrievedItem*> recent_items;
  KeySet recent_turns;
  // (Newest first: the first turn said before the window ends the section.)
  const double hours = in.options.ranking.recent_hours;
  const TimeMs said_after = in.now > 0 && hours > 0 ? in.now - static_cast<TimeMs>(hours * 3600000.0) : kMinTimeMs;
  if (in.options.include_stm) {
    for (auto it = in.recent.rbegin(); it != in.recent.rend(); ++it) {
      if (it->event_time < said_after || !recent.Take(pack, it->text)) break;
      recent_items.push_back(&*it);
      recent_turns.insert(it->turn_id);
    }
    std::reverse(recent_items.begin(), recent_items.end());
  }
  // 2. Profile.
  Section profile{kProfileTitle, static_cast<int>(budget * in.options.ranking.profile_share)};
  std::vector<RetrievedItem> profile_items;
  for (const auto& slot : in.profile) {
    RetrievedItem item;
    item.kind = ItemKind::kProfile;
    item.tier = Tier::kLpm;
    item.text = text::OneLine(slot.dimension + ": " + slot.value);
    item.tokens = text::EstimateTokens(item.text);
    item.event_time = slot.updated_at;
    if (!profile.Take(pack, item.text)) continue;
    profile_items.push_back(std::move(item));
  }
  // 3. Messages by rank, leaving room for the facts; one date line per day.
  const int facts_cap = static_cast<int>(budget * in.options.ranking.facts_share);
  int facts_need = 0;
  for (const auto* src : {&in.user_facts, &in.assistant_facts}) {
    for (std::size_t i = 0; i < src->size() && static_cast<int>(i) < in.options.max_facts; ++i) {
      facts_need += Tokens(SizeOf((*src)[i])) + 1;
    }
  }
  const int facts_reserve = std::min(facts_cap, facts_need);
  std::vector<std::size_t> chosen;
  std::vector<bool> taken(in.ranked.size(), false);
  KeySet days, pages_in;
  bool past_open = false;
  const std::size_t max_messages = in.options.max_pages > 0 ? 2 * static_cast<std::size_t>(in.options.max_pages)
                                                             : in.ranked.size();
  // Each item's size and its date line's, measured once (both passes and
  // every item that does not fit would measure them again).
  struct Sizes {
    bool ready = false;
    Size text, day_line;
  };
  std::vector<Sizes> sizes(in.ranked.size());
  std::unordered_map<std::int64_t, Size> day_lines;  // by day
  const Size past_heading = HeadingSize(kPastTitle);
  auto pack_messages = [&](int limit) {
    for (std::size_t i = 0; i < in.ranked.size() && chosen.size() < max_messages; ++i) {
      const RetrievedItem& item = in.ranked[i];
      if (taken[i] || item.text.empty()) continue;
      if (item.kind == ItemKind::kStmTurn && recent_turns.contains(item.turn_id)) continue;
      Sizes& z = sizes[i];
      if (!z.ready) {
        z.text = i < in.ranked_words.size() ? Size{in.ranked_words[i], item.text.size()} : Measure(item.text);
        z.text.bytes += 1;
        auto [dl, fresh] = day_lines.try_emplace(DayOf(item.event_time));
        if (fresh) dl->second = Measure(DayLine(item.event_time) + "\n");
        z.day_line = dl->second;
        z.ready = true;
      }
      Size add = z.text;
      const std::int64_t day = DayOf(item.event_time);
      if (!days.contains(day)) add = add + z.day_line;
      if (!past_open) add = add + past_heading;
      if (!pack.Take(add, limit)) continue;
      past_open = true;
      days.insert(day);
      taken[i] = true;
      chosen.push_back(i);
      if (item.kind == ItemKind::kPage) pages_in.insert(item.id);
    }
  };
  pack_messages(budget - facts_reserve);
  // 4. Facts not drawn from pages already present (unless changed since)
  //    nor said word for word by a chosen message or recent turn,
  //    alternating kinds by rank, up to max_facts each, in one share.
  Section user_facts{kUserFactsTitle, facts_cap}, assistant_facts{kAssistantFactsTitle, facts_cap};
  std::vector<const FactCandidate*> facts[2];
  // The normalised texts of the chosen messages and of the recent turns, one
  // per line (their order does not matter: a search never crosses a line),
  // each appended once by catch_up when first needed; the summaries below add
  // theirs.
  std::string said;
  std::vector<bool> ranked_said(in.ranked.size(), false);
  std::vector<bool> recent_said(in.recent.size(), false);
  auto catch_up = [&] {
    for (std::size_t k : chosen) {
      if (ranked_said[k]) continue;
      ranked_said[k] = true;
      AppendNormalised(in.ranked[k].text, said);
      said += '\n';
    }
    for (const auto* it : recent_items) {
      const auto r = static_cast<std::size_t>(it - in.recent.data());
      if (recent_said[r]) continue;
      recent_said[r] = true;
      AppendNormalised(it->text, said);
      said += '\n';
    }
  };
  std::string body;
  auto said_already = [&](std::string_view fact) {
    body.clear();
    AppendNormalised(fact, body);
    // (A fact of one or two words is no repetition: "vegan" is in many texts.)
    if (std::count(body.begin(), body.end(), ' ') < 2) return false;
    catch_up();
    return memmem(said.data(), said.size(), body.data(), body.size()) != nullptr;
  };
  std::vector<bool> fact_taken[2] = {std::vector<bool>(in.user_facts.size(), false),
                                     std::vector<bool>(in.assistant_facts.size(), false)};
  // The facts of both kinds, by rank, up to `cap` tokens for both.
  auto pack_facts = [&](int cap) {
    const std::size_t n = std::max(in.user_facts.size(), in.assistant_facts.size());
    for (std::size_t i = 0; i < n; ++i) {
      for (int k = 0; k < 2; ++k) {
        const auto& src = k == 0 ? in.user_facts : in.assistant_facts;
        if (i >= src.size() || fact_taken[k][i] ||
            static_cast<int>(facts[k].size()) >= in.options.max_facts) {
          continue;
        }
        // (A fact changed since it was drawn, by the memory API or by
        // consolidation, may say what its pages do not: "Alice collects
        // vintage harmonicas from Brno" after an edit.)
        const auto& pages = src[i].pages;
        if (src[i].item.version <= 1 && !pages.empty() &&
            std::all_of(pages.begin(), pages.end(),
                        [&](std::int64_t p) { return pages_in.contains(p); })) {
          continue;
        }
        Section& sec = k == 0 ? user_facts : assistant_facts;
        sec.cap = cap - (k == 0 ? assistant_facts.spent : user_facts.spent);
        // (What cannot fit is not searched for in what is said: once the
        // messages fill the budget, no fact is.)
        if (!sec.Fits(pack, SizeOf(src[i]))) {
          pack.truncated = true;
          continue;
        }
        if (!src[i].body.empty() && said_already(src[i].body)) continue;
        if (sec.Take(pack, SizeOf(src[i]))) {
          facts[k].push_back(&src[i]);
          fact_taken[k][i] = true;
        }
      }
    }
  };
  pack_facts(facts_cap);
  // 5. More messages in what is left.
  pack_messages(budget);
  // 6. Older recent turns in what is still left (nothing ranked claims it:
  //    a query nothing matches still gets the conversation so far), newest
  //    first and without a gap: up to a turn the messages already hold.
  if (in.options.include_stm && recent_items.size() < in.recent.size()) {
    KeySet ranked_turns;
    for (std::size_t i : chosen) {
      if (in.ranked[i].kind == ItemKind::kStmTurn) ranked_turns.insert(in.ranked[i].turn_id);
    }
    recent.cap = budget;
    std::vector<const RetrievedItem*> older;
    for (auto it = in.recent.rbegin() + static_cast<std::ptrdiff_t>(recent_items.size()); it != in.recent.rend();
         ++it) {
      if (ranked_turns.contains(it->turn_id) || !recent.Take(pack, it->text)) break;
      older.push_back(&*it);
    }
    recent_items.insert(recent_items.begin(), older.rbegin(), older.rend());
  }
  // 7. More facts in what is left after that: the facts' share is what they
  //    take before the messages, not all they may have (the memories of a
  //    user who has said little in this dialogue fill its context).
  pack_facts(budget);
  std::sort(chosen.begin(), chosen.end());
  // Chain summaries where budget remains, best messages first, once per page,
  // with only what the context does not already say: a summary's sentences
  // that a chosen message or an earlier summary holds are left out (an
  // extractive summary is made of the chain's own messages).
  std::vector<std::string> summary(in.ranked.size());
  KeySet summarised;
  Searched searched;
  std::vector<std::vector<SummarySentence>> split_here;  // of summaries that arrive unsplit
  const Size shortest = Measure("  (context: x.)") + Size{0, 1};
  for (std::size_t i : chosen) {
    if (Tokens(pack.used + shortest) > budget) break;  // no summary fits any more
    if (i >= in.chain.size() || in.chain[i].summary.empty() || !summarised.insert(in.ranked[i].turn_id)) continue;
    ChainView chain = in.chain[i];
    if (chain.sentences.empty()) chain.sentences = split_here.emplace_back(SummarySentences(chain.summary));
    // What is said of the summary is whole sentences: when even its
    // shortest sentence would not fit, nothing of it can (a budget filled by
    // messages leaves a few tokens, which most sentences exceed).
    // ("  (context: " + news + ")" and its newline: one word and 14 bytes
    // besides the news, which hold at least one body.)
    Size least{~std::size_t{0}, ~std::size_t{0}};
    for (const SummarySentence& ss : chain.sentences) {
      least.words = std::min<std::size_t>(least.words, ss.words);
      least.bytes = std::min<std::size_t>(least.bytes, ss.body_len);
    }
    if (chain.sentences.empty() || Tokens(pack.used + Size{1, 14} + least) > budget) continue;
    catch_up();
    const std::string news = Unsaid(chain, said, searched);
    if (news.empty()) continue;
    std::string s = "  (context: " + news + ")";
    Size add = Measure(s);
    add.bytes += 1;
    if (Tokens(pack.used + add) <= budget) {
      pack.used = pack.used + add;
      summary[i] = std::move(s);
      AppendNormalised(news, said);
      said += '\n';
    }
  }

  // Render: sections in a fixed order; messages chronologically.
  std::string ctx;
  ctx.reserve(pack.used.bytes + 64);
  auto heading = [&](const char* title) { ctx += std::string(ctx.empty() ? "" : "\n") + "## " + title + "\n"; };
  auto section = [&](const char* title, const std::vector<const RetrievedItem*>& items) {
    if (items.empty()) return;
    heading(title);
    for (const auto* it : items) {
      ctx += it->text;
      ctx += '\n';
      out.items.push_back(*it);
    }
  };
  std::vector<const RetrievedItem*> profile_ptrs;
  for (const auto& p : profile_items) profile_ptrs.push_back(&p);
  section(kProfileTitle, profile_ptrs);
  for (int k = 0; k < 2; ++k) {
    std::vector<RetrievedItem> items;
    std::vector<const RetrievedItem*> ptrs;
    items.reserve(facts[k].size());
    for (const FactCandidate* f : facts[k]) {
      items.push_back(f->item);
      if (!f->text.empty()) items.back().text = std::string(f->text);
      ptrs.push_back(&items.back());
    }
    section(k == 0 ? kUserFactsTitle : kAssistantFactsTitle, ptrs);
  }
  if (!chosen.empty()) {
    std::vector<std::size_t> order = chosen;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const RetrievedItem& x = in.ranked[a];
      const RetrievedItem& y = in.ranked[b];
      if (x.event_time != y.event_time) return x.event_time < y.event_time;
      if (x.turn_id != y.turn_id) return x.turn_id < y.turn_id;
      return x.part == "user" && y.part != "user";
    });
    heading(kPastTitle);
    std::int64_t day = 0;
    bool first = true;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const RetrievedItem& item = in.ranked[order[k]];
      if (first || DayOf(item.event_time) != day) {
        day = DayOf(item.event_time);
        ctx += DayLine(item.event_time) + "\n";
        first = false;
      }
      const std::string* tail = &summary[order[k]];
      if (k + 1 < order.size() && in.ranked[order[k + 1]].turn_id == item.turn_id &&
          in.ranked[order[k + 1]].kind == item.kind && in.ranked[order[k + 1]].part != item.part) {
        // (sizes of chosen items are known: their words, and bytes with a newline)
        out.items.push_back(Merge(item, in.ranked[order[k + 1]], sizes[order[k]].text.words + sizes[order[k + 1]].text.words));
        if (tail->empty()) tail = &summary[order[k + 1]];
        ++k;
      } else {
        out.items.push_back(item);
      }
      ctx += out.items.back().text;
      ctx += '\n';
      if (!tail->empty()) {
        ctx += *tail;
        ctx += '\n';
      }
    }
  }
  section(kRecentTitle, recent_items);
  out.ranked = std::move(in.ranked);
  out.context = std::move(ctx);
  out.context_tokens = text::EstimateTokens(out.context);
  out.truncated = pack.truncated;
  return out;
}

}  // namespace engram::retrieval
