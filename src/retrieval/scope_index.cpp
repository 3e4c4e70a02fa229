#include "retrieval/scope_index.hpp"

#include <algorithm>
#include <unordered_set>

#include "core/text.hpp"
#include "core/time.hpp"
#include "memory/scope_store.hpp"

namespace engram::retrieval {

bool HasTimeExpression(const std::string& s) {
  static const std::unordered_set<std::string> kWords = {
      "yesterday", "today", "tomorrow", "tonight", "ago", "last", "next", "week", "weekend",
      "month", "year", "morning", "evening", "afternoon", "night", "recently", "since", "weeks",
      "months", "years", "days", "monday", "tuesday", "wednesday", "thursday", "friday",
      "saturday", "sunday", "january", "february", "march", "april", "may", "june", "july",
      "august", "september", "october", "november", "december", "summer", "winter", "spring",
      "autumn", "fall", "earlier", "soon", "upcoming"};
  for (const auto& t : text::Tokenize(s)) {
    if (kWords.count(t)) return true;
    if (t.size() == 4 && (t[0] == '1' || t[0] == '2') &&
        std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return true;
    }
  }
  return false;
}

const std::string& SpeakerName(const TurnEntry& e, int side) {
  static const std::string kDefault[2] = {"User", "Assistant"};
  return e.names[side].empty() ? kDefault[side] : e.names[side];
}

void IndexMessages(std::vector<TurnEntry>& entries, MessageIndex& index, std::vector<MessageDoc>& docs) {
  for (std::size_t e = 0; e < entries.size(); ++e) {
    TurnEntry& t = entries[e];
    for (int side = 0; side < 2; ++side) {
      MessageTerms terms;
      terms.text = text::Terms(t.texts[side]);
      if (t.texts[side].find_first_not_of(" \t\r\n") == std::string::npos) continue;
      const std::string& name = SpeakerName(t, side);
      terms.name = text::Terms(name);
      t.lines[side] = name + ": " + t.texts[side];
      t.tokens[side] = text::EstimateTokens(t.lines[side]);
      t.dated[side] = HasTimeExpression(t.texts[side]);
      t.docs[side] = static_cast<int>(index.size());
      index.Add(terms);
      docs.push_back({static_cast<std::uint32_t>(e), static_cast<std::uint8_t>(side)});
    }
  }
}

std::size_t ScopeIndex::MemoryBytes() const {
  std::size_t text = 0;
  for (const auto& [id, f] : facts) text += sizeof(FactEntry) + 16 + f.text.size() + f.line.size();
  for (const auto& e : entries) {
    text += sizeof(TurnEntry) + e.texts[0].size() + e.texts[1].size() + e.names[0].size() +
            e.names[1].size() + e.refs[0].size() + e.refs[1].size() + e.source_ref.size() +
            e.chain_summary.size() + e.lines[0].size() + e.lines[1].size();
  }
  return pages.MemoryBytes() + segments.MemoryBytes() + user_facts.MemoryBytes() +
         assistant_facts.MemoryBytes() + page_refs.size() * 64 + turn_page.size() * 32 + text +
         page_entry.size() * 32 + messages.MemoryBytes() + message_docs.size() * sizeof(MessageDoc);
}

Result<std::shared_ptr<const ScopeIndex>> LoadScopeIndex(sql::Db* db, std::int64_t scope_id,
                                                         std::int64_t data_version) {
  auto idx = std::make_shared<ScopeIndex>();
  idx->scope_id = scope_id;
  idx->data_version = data_version;
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * s,
      db->Prepare("SELECT id, embedding, archived_at IS NOT NULL FROM segments WHERE scope_id = ? "
                  "ORDER BY id"));
  s->Bind(1, scope_id);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    idx->segments.Add(s->Int(0), s->Floats(1));
    idx->segment_archived[s->Int(0)] = s->Int(2) != 0;
  }
  s->Reset();
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * p,
      db->Prepare("SELECT p.id, p.turn_id, p.segment_id, p.prev_page, p.next_page, p.embedding, "
                  "p.chain_summary, t.seq, t.event_time, t.user_name, t.user_text, "
                  "t.assistant_name, t.assistant_text, t.source_ref, t.user_source_ref, "
                  "t.assistant_source_ref FROM pages p JOIN turns t ON t.id = p.turn_id "
                  "WHERE p.scope_id = ? ORDER BY t.seq"));
  p->Bind(1, scope_id);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, p->Step());
    if (!row) break;
    std::int64_t id = p->Int(0);
    PageRef ref{p->Int(1), p->Int(2), p->IsNull(3) ? 0 : p->Int(3), p->IsNull(4) ? 0 : p->Int(4)};
    idx->pages.Add(id, p->Floats(5));
    idx->page_refs[id] = ref;
    idx->turn_page[ref.turn_id] = id;
    TurnEntry e;
    e.page_id = id;
    e.turn_id = ref.turn_id;
    e.segment_id = ref.segment_id;
    auto arch = idx->segment_archived.find(ref.segment_id);
    e.tier = arch != idx->segment_archived.end() && arch->second ? Tier::kArchive : Tier::kMtm;
    e.chain_summary = p->Text(6);
    e.seq = p->Int(7);
    e.event_time = p->Int(8);
    e.names[0] = p->Text(9);
    e.texts[0] = p->Text(10);
    e.names[1] = p->Text(11);
    e.texts[1] = p->Text(12);
    e.source_ref = p->Text(13);
    e.refs[0] = p->Text(14);
    e.refs[1] = p->Text(15);
    idx->page_entry[id] = static_cast<std::uint32_t>(idx->entries.size());
    idx->entries.push_back(std::move(e));
  }
  p->Reset();
  IndexMessages(idx->entries, idx->messages, idx->message_docs);
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * f,
      db->Prepare("SELECT id, kind, embedding, text, version, event_time, source_pages, expires_at FROM facts "
                  "WHERE scope_id = ? AND status = 'live' "
                  "AND kind IN ('user','assistant') "
                  "ORDER BY id"));
  f->Bind(1, scope_id);
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, f->Step());
    if (!row) break;
    (f->Text(1) == "user" ? idx->user_facts : idx->assistant_facts).Add(f->Int(0), f->Floats(2));
    FactEntry fe{f->Int(4), f->Int(5), f->Text(3), "", 0, memory::IdsFromJson(f->Text(6))};
    fe.line = "- (" + FormatHumanDate(fe.event_time) + ") " + fe.text;
    fe.tokens = text::EstimateTokens(fe.line);
    if (!f->IsNull(7)) {
      fe.expires_at = f->Int(7);
      idx->expiring_facts.emplace_back(f->Int(0), f->Int(7));
    }
    idx->facts[f->Int(0)] = std::move(fe);
  }
  f->Reset();
  return std::shared_ptr<const ScopeIndex>(std::move(idx));
}

}  // namespace engram::retrieval
