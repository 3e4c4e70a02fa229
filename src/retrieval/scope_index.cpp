#include "retrieval/scope_index.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_set>
#include <utility>

#include "core/text.hpp"
#include "core/time.hpp"
#include "core/wordnet.hpp"
#include "memory/facts/fact_store.hpp"
#include "memory/lpm.hpp"
#include "memory/scope_store.hpp"
#include "retrieval/expansion.hpp"
#include "store/fulltext.hpp"
#include "store/snapshot_reads.hpp"

namespace engram::retrieval {

namespace {

// The longest word an exception list is looked up for (the longest
// irregular form of WordNet 3.0's noun and verb lists is shorter).
constexpr std::size_t kMaxIrregular = 24;

// text::Terms of many texts as ids of the index, each word's other terms
// after it (ForEachOtherTerm: "gluten-free" is found by "gluten", "gluten
// free" and "gluten-free", "made" by "make"), remembering what each word
// is (a stopword or the id of its stem, and whether it is a time word): in a
// dialogue the same words recur, and stemming and the look-ups of each word
// were most of the cost of indexing. The words live in an open-addressing
// table over one buffer of their bytes (a look-up is a hash, a probe or two
// and a comparison, with no node to chase and no string per word).
class TermMaker {
 public:
  explicit TermMaker(MessageIndex& index) : index_(index), slots_(1024) {}
  // The ids of the terms of `text` (as text::Terms, each word followed by
  // its other terms), in `ids` (replaced),
  // whether it holds a time expression, and its first- and second-person
  // words (into `cues`, when given).
  void Ids(std::string_view text, std::vector<int>& ids, bool* dated, MessageCues* cues = nullptr) {
    ids.clear();
    bool time = false;
    int person[4] = {0, 0, 0, 0};
    std::uint32_t kinds = 0;
    text::ForEachToken(text, [&](std::string_view token) {
      const Slot& w = Find(token);
      time = time || w.time;
      kinds |= w.kind;
      ++person[w.person];
      if (w.id >= 0) ids.push_back(w.id);
      if (w.parts_len > 0) ids.insert(ids.end(), parts_.begin() + w.parts_off, parts_.begin() + w.parts_off + w.parts_len);
    });
    if (dated) *dated = time;
    if (cues) {
      cues->first_person = person[1];
      cues->second_person = person[2];
      cues->third_person = person[3];
      cues->kinds = kinds;
    }
  }

 private:
  struct Slot {
    std::size_t hash = 0;
    std::size_t off = 0;     // the word in bytes_
    std::uint32_t len = 0;   // 0: a free slot
    int id = -1;                     // -1: a stopword
    bool time = false;
    std::uint8_t person = 0;         // PersonOf
    std::uint32_t kind = 0;          // NounKindBit of the kind of thing it names (NounKindOf)
    std::uint8_t parts_len = 0;      // ids of its other terms (ForEachOtherTerm)
    std::uint32_t parts_off = 0;     // ... in parts_
  };
  const Slot& Find(std::string_view token) {
    const std::size_t h = std::hash<std::string_view>{}(token);
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.len == 0) break;
      if (s.hash == h && s.len == token.size() && std::memcmp(bytes_.data() + s.off, token.data(), s.len) == 0) return s;
    }
    if (2 * (count_ + 1) > slots_.size()) {  // at most half full
      std::vector<Slot> old(2 * slots_.size());
      old.swap(slots_);
      mask = slots_.size() - 1;
      for (const Slot& s : old) {
        if (s.len == 0) continue;
        std::size_t i = s.hash & mask;
        while (slots_[i].len != 0) i = (i + 1) & mask;
        slots_[i] = s;
      }
    }
    std::size_t i = h & mask;
    while (slots_[i].len != 0) i = (i + 1) & mask;
    Slot& s = slots_[i];
    s.hash = h;
    s.off = bytes_.size();
    s.len = static_cast<std::uint32_t>(token.size());  // tokens are 1..80 bytes
    s.time = IsTimeWord(token);
    s.person = static_cast<std::uint8_t>(PersonOf(token));
    s.kind = NounKindOf(token);
    s.id = text::IsStopword(token) ? -1 : index_.Intern(text::Stem(token));
    s.parts_off = static_cast<std::uint32_t>(parts_.size());
    ForEachOtherTerm(token, [&](std::string term) {
      const int id = index_.Intern(term);
      // (An 80-byte token has at most 27 parts of two bytes or more, and a
      // word a few base forms.)
      if (id != s.id && std::find(parts_.begin() + s.parts_off, parts_.end(), id) == parts_.end()) {
        parts_.push_back(id);
      }
    });
    s.parts_len = static_cast<std::uint8_t>(std::min<std::size_t>(parts_.size() - s.parts_off, 255));
    bytes_.append(token);
    ++count_;
    return s;
  }

  MessageIndex& index_;
  std::vector<Slot> slots_;  // a power of two
  std::string bytes_;
  std::vector<int> parts_;  // the slots' part ids, each slot's together
  std::size_t count_ = 0;
};

}  // namespace

std::int8_t MessageCues::Person() const {
  const long long n = static_cast<long long>(first_person) + second_person;
  return static_cast<std::int8_t>(n == 0 ? 0 : (100LL * (first_person - second_person)) / n);
}

void ForEachOtherTerm(std::string_view token, const std::function<void(std::string)>& fn) {
  if (text::IsStopword(token)) return;
  text::ForEachHyphenPart(token, [&](std::string_view part) { fn(text::Stem(part)); });
  if (const std::string_view full = text::FullForm(token); !full.empty()) fn(text::Stem(full));
  if (const wordnet::WordNet* wn = wordnet::WordNet::Default(); wn != nullptr && token.size() <= kMaxIrregular) {
    for (std::string& t : wn->IrregularBaseTerms(token)) {
      if (!text::IsStopword(t)) fn(std::move(t));  // ("did": "do")
    }
  }
}

int PersonOf(std::string_view token) {
  static const std::unordered_set<std::string_view> kFirst = {
      "i", "i'm", "i've", "i'll", "i'd", "im", "ive", "me", "my", "mine", "myself",
      "we", "we're", "we've", "we'll", "we'd", "us", "our", "ours", "ourselves"};
  static const std::unordered_set<std::string_view> kSecond = {
      "you", "you're", "you've", "you'll", "you'd", "youre", "your", "yours", "yourself", "yourselves", "ya"};
  static const std::unordered_set<std::string_view> kThird = {
      "he",  "he's",  "he'd",  "he'll",  "him", "his",  "himself",
      "she", "she's", "she'd", "she'll", "her", "hers", "herself"};
  if (token.size() > 10) return 0;
  if (kFirst.count(token)) return 1;
  if (kSecond.count(token)) return 2;
  if (kThird.count(token)) return 3;
  return 0;
}

namespace {
bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
}  // namespace

void ForEachNamedWord(std::string_view text, const std::function<bool(std::string_view)>& fn) {
  bool sentence_start = true;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (!IsAsciiLetter(c)) {
      if (c == '.' || c == '!' || c == '?' || c == '\n') sentence_start = true;
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && IsAsciiLetter(text[end])) ++end;
    const std::string_view word = text.substr(i, end - i);
    // (A word is letters; one glued to digits or an apostrophe before it,
    // "3D", "don'T", is no name.)
    const bool glued = i > 0 && (text[i - 1] == '\'' || (text[i - 1] >= '0' && text[i - 1] <= '9'));
    if (!sentence_start && !glued && c >= 'A' && c <= 'Z' && word != "I" && !fn(word)) return;
    sentence_start = false;
    i = end;
  }
}

namespace {
// True when a message's text says something (not only blanks): an empty
// side of an exchange is no message.
bool Said(const std::string& text) {
  return text.find_first_not_of(" \t\r\n") != std::string::npos;
}

// True when `word` is the first word of one of the `speakers`' names.
bool IsSpeakerWord(std::string_view word, std::span<const std::string_view> speakers) {
  for (const std::string_view name : speakers) {
    std::size_t len = 0;
    while (len < name.size() && IsAsciiLetter(name[len])) ++len;
    if (len > 0 && word == name.substr(0, len)) return true;
  }
  return false;
}
}  // namespace

int NamedWords(std::string_view text, std::span<const std::string_view> speakers, int cap) {
  int n = 0;
  if (cap <= 0) return 0;
  ForEachNamedWord(text, [&](std::string_view word) {
    if (!IsSpeakerWord(word, speakers)) ++n;
    return n < cap;
  });
  return n;
}

namespace {
// "Name: text" into `out` (replaced): the one rendering of a message, which
// the snapshot counts (words, tokens) and the context shows; a name on one
// line and the text's further lines indented (text::OneLine,
// text::IndentContinuation: no line of a message starts a line of the
// context's own).
// (Each test is one pass of memchr per byte sought: find_first_of calls
// memchr on its set for every byte of the text, a fifth of a retrieval's time
// for the hundred lines it renders.)
bool HasAny(std::string_view s, std::string_view bytes) {
  for (const char b : bytes) {
    if (std::memchr(s.data(), b, s.size()) != nullptr) return true;
  }
  return false;
}

void RenderLine(std::string& out, const std::string& name, const std::string& text) {
  out.reserve(name.size() + 2 + text.size());
  if (!HasAny(name, "\r\n\t\v\f")) {
    out.assign(name);
  } else {
    out.assign(text::OneLine(name));
  }
  out += ": ";
  if (!HasAny(text, "\r\n")) {
    out += text;
  } else {
    out += text::IndentContinuation(text);
  }
}
}  // namespace

std::string MessageLine(const TurnEntry& e, int side) {
  if (!Said(e.texts[side])) return {};
  std::string line;
  RenderLine(line, SpeakerName(e, side), e.texts[side]);
  return line;
}

const std::string& SpeakerName(const TurnEntry& e, int side) {
  static const std::string kDefault[2] = {"User", "Assistant"};
  return e.names[side].empty() ? kDefault[side] : e.names[side];
}

std::span<const SummarySentence> LazySentences::Of(std::string_view text) const {
  if (text.empty() && made_.IfMade() == nullptr) return {};
  return made_.Get([&] { return SummarySentences(text); });
}

std::size_t LazySentences::MemoryBytes() const {
  const std::vector<SummarySentence>* made = made_.IfMade();
  return made ? sizeof(*made) + made->capacity() * sizeof(SummarySentence) : 0;
}

const TurnMeaning& MeaningOfTurn(const TurnEntry& e, const wordvec::WordVectors& words) {
  return e.meaning.Get([&] {
    TurnMeaning t;
    for (int side = 0; side < 2; ++side) {
      if (e.texts[side].empty()) continue;
      const std::vector<long> known = words.KnownWords(text::Terms(words.Meant(e.texts[side])));
      MessageMeaning& m = t.side[side];
      m.known.assign(known.begin(), known.end());
      m.mean = wordvec::Quantize(words.MeanOf(known));
    }
    return t;
  });
}

EntryList& EntryList::operator=(std::vector<TurnEntry> entries) {
  chunks_.clear();
  size_ = 0;
  for (auto& e : entries) push_back(std::move(e));
  return *this;
}

std::vector<TurnEntry>& EntryList::Own(std::size_t chunk) {
  auto& c = chunks_[chunk];
  // Only this list can reach a chunk whose count is 1: no reader can be
  // copying it meanwhile.
  if (c.use_count() > 1) c = std::make_shared<std::vector<TurnEntry>>(*c);
  return *c;
}

void EntryList::push_back(TurnEntry e) { emplace_back() = std::move(e); }

TurnEntry& EntryList::emplace_back() {
  if (size_ % kChunk == 0) {
    chunks_.push_back(std::make_shared<std::vector<TurnEntry>>());
    chunks_.back()->reserve(kChunk);
  }
  TurnEntry& e = Own(size_ / kChunk).emplace_back();
  ++size_;
  return e;
}

std::size_t EntryList::SharedChunks(const EntryList& other) const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < chunks_.size() && i < other.chunks_.size(); ++i) n += chunks_[i] == other.chunks_[i];
  return n;
}

void TurnIdSet::insert(std::int64_t turn_id) {
  if (ids_.empty() || ids_.back() < turn_id) {
    ids_.push_back(turn_id);  // the usual case: turns arrive in id order
  } else {
    auto at = std::lower_bound(ids_.begin(), ids_.end(), turn_id);
    if (at == ids_.end() || *at != turn_id) ids_.insert(at, turn_id);
  }
}

namespace {

// The message before a side of `entry` in its session: the other side of
// its exchange, or the last message of the exchange before (`before`, null
// for the first) within kSessionGapMs; null when there is none.
const std::string* PreviousMessage(const TurnEntry& entry, int side, const TurnEntry* before) {
  if (side == 1 && Said(entry.texts[0])) return &entry.texts[0];
  if (before == nullptr || entry.event_time - before->event_time > kSessionGapMs) return nullptr;
  if (Said(before->texts[1])) return &before->texts[1];
  return Said(before->texts[0]) ? &before->texts[0] : nullptr;
}

// Appends to `ids` the terms of the people a message about "him" or "her"
// may mean: the named words of the message before it (`previous`), at most
// kMaxReferents, the speakers' names and time words ("Monday", "May")
// aside.
void AddReferents(TermMaker& maker, std::string_view previous,
                  std::span<const std::string_view> speakers, std::vector<int>& ids) {
  thread_local std::vector<int> word_ids;
  int taken = 0;
  ForEachNamedWord(previous, [&](std::string_view word) {
    if (IsSpeakerWord(word, speakers)) return true;
    bool time = false;
    maker.Ids(word, word_ids, &time);
    if (time || word_ids.empty()) return true;
    ids.insert(ids.end(), word_ids.begin(), word_ids.end());
    return ++taken < kMaxReferents;
  });
}

template <typename Entries, typename Docs>
void IndexMessagesOf(Entries& entries, MessageIndex& index, Docs& docs, std::size_t first) {
  TermMaker maker(index);
  std::vector<int> text_ids;
  std::string line;  // a rendered message, for its counts (MessageLine)
  // The speakers' names recur message after message: their ids are made
  // once per name.
  struct Name {
    std::string name;
    std::vector<int> ids;
    std::uint16_t speaker = 0;
  } names[2];
  bool named[2] = {false, false};
  for (std::size_t e = first; e < entries.size(); ++e) {
    TurnEntry& t = entries[e];
    for (int side = 0; side < 2; ++side) {
      if (!Said(t.texts[side])) continue;
      bool dated = false;
      MessageCues cues;
      maker.Ids(t.texts[side], text_ids, &dated, &cues);
      const std::string& name = SpeakerName(t, side);
      Name& n = names[side];
      if (!named[side] || n.name != name) {
        n.name = name;
        maker.Ids(name, n.ids, nullptr);
        // A name that is a stopword ("Will", "Can") is still a name: its
        // term holds the speaker's messages (the texts' "will" stays out).
        text::ForEachToken(name, [&](std::string_view token) {
          if (text::IsStopword(token)) n.ids.push_back(index.Intern(text::Stem(token)));
        });
        n.speaker = index.SpeakerId(name);
        named[side] = true;
      }
      RenderLine(line, name, t.texts[side]);
      t.words[side] = static_cast<std::uint32_t>(text::CountWords(line));
      t.tokens[side] = text::EstimateTokensOf(t.words[side], line.size());
      t.dated[side] = dated;
      // (Only a message with a time word can say one: the others are not tokenised again.)
      t.said[side] = dated ? DayWindow::Of(SaidWindow(text::Tokenize(t.texts[side]), t.event_time)) : DayWindow{};
      t.docs[side] = static_cast<int>(index.size());
      const std::string_view speakers[2] = {SpeakerName(t, 0), SpeakerName(t, 1)};
      const int named_words = NamedWords(t.texts[side], speakers);
      if (cues.third_person > 0 && named_words == 0) {
        const std::string* previous = PreviousMessage(t, side, e > 0 ? &entries[e - 1] : nullptr);
        if (previous != nullptr) AddReferents(maker, *previous, speakers, text_ids);
      }
      index.AddIds(text_ids, n.ids, cues.kinds);
      MessageDoc doc;
      doc.entry = static_cast<std::uint32_t>(e);
      doc.speaker = n.speaker;
      doc.side = side & 1;
      doc.dated = t.dated[side] ? 1 : 0;
      doc.asks = t.texts[side].find('?') != std::string::npos ? 1 : 0;
      doc.names = static_cast<std::uint8_t>(named_words);
      doc.person = cues.Person();
      doc.time = t.event_time;
      doc.said = t.said[side].empty() ? 0 : 1;
      doc.opens = docs.empty() || doc.time - docs.back().time > kSessionGapMs ? 1 : 0;
      docs.push_back(doc);
    }
  }
}

}  // namespace

void IndexMessages(std::vector<TurnEntry>& entries, MessageIndex& index, std::vector<MessageDoc>& docs,
                   std::size_t first) {
  IndexMessagesOf(entries, index, docs, first);
}

void IndexMessages(EntryList& entries, MessageIndex& index, SharedList<MessageDoc>& docs, std::size_t first) {
  IndexMessagesOf(entries, index, docs, first);
}

std::size_t EntryBytes(const TurnEntry& e) {
  return sizeof(TurnEntry) + e.texts[0].size() + e.texts[1].size() + e.names[0].size() +
         e.names[1].size() + e.refs[0].size() + e.refs[1].size() + e.source_ref.size() +
         e.chain_summary.size() + e.chain_sentences.MemoryBytes();
}

std::size_t ScopeIndex::MemoryBytes() const {
  std::size_t text = entry_bytes;
  for (const auto& [id, f] : facts) {
    text += sizeof(FactEntry) + 16 + f.text.size() + f.line.size() + f.meaning.codes.capacity() +
            f.known.capacity() * sizeof(long);
  }
  return segment_text.MemoryBytes() + fact_text.MemoryBytes() + pages.MemoryBytes() + segments.MemoryBytes() + user_facts.MemoryBytes() +
         assistant_facts.MemoryBytes() + turn_page.size() * 8 + text +
         page_entry.size() * 32 + messages.MemoryBytes() + message_docs.capacity() * sizeof(MessageDoc);
}

namespace {

Status LoadSegments(sql::Db* db, ScopeIndex* idx) {
  return store::ScanSegmentVectors(db, idx->scope_id, [&](store::SegmentVectorRow& r) {
    idx->segments.Add(r.id, r.embedding);
    idx->segment_archived[r.id] = r.archived;
  });
}

// Copies the page part of `previous` into `idx` when its last page is still
// the page of its turn (pages are only appended within a generation); false
// (idx untouched) otherwise.
Result<bool> ReusePages(sql::Db* db, const ScopeIndex& previous, ScopeIndex* idx) {
  if (previous.entries.empty() || previous.page_vectors != idx->page_vectors) return false;
  const TurnEntry& last = previous.entries.back();
  ENGRAM_ASSIGN_OR_RETURN(auto now, store::PageOfTurnAt(db, idx->scope_id, last.seq));
  if (now.page_id != last.page_id || now.turn_id != last.turn_id) return false;
  constexpr std::size_t kRoom = 1024;  // appending a few batches moves nothing again
  idx->pages.AssignWithRoom(previous.pages, previous.pages.size() + kRoom);
  idx->turn_page = previous.turn_page;
  idx->entries = previous.entries;  // shares the chunks
  idx->entry_bytes = previous.entry_bytes;
  idx->page_entry = previous.page_entry;
  idx->messages = previous.messages;  // shares the postings and per-message arrays
  idx->message_docs = previous.message_docs;
  return true;
}

// Reads and appends the pages after turn `after_seq` (all pages when 0).
Status AppendPages(sql::Db* db, std::int64_t after_seq, ScopeIndex* idx) {
  return store::ScanSnapshotPages(db, idx->scope_id, after_seq, idx->page_vectors, [&](store::SnapshotPageRow& p) {
    const std::int64_t id = p.link.page_id;
    if (idx->page_vectors) idx->pages.Add(id, p.embedding);
    idx->turn_page.insert(p.link.turn_id);
    TurnEntry& e = idx->entries.emplace_back();
    e.page_id = id;
    e.turn_id = p.link.turn_id;
    e.segment_id = p.link.segment_id;
    e.chain_summary = std::move(p.chain_summary);
    e.seq = p.seq;
    e.event_time = p.event_time;
    e.names[0] = std::move(p.user_name);
    e.texts[0] = std::move(p.user_text);
    e.names[1] = std::move(p.assistant_name);
    e.texts[1] = std::move(p.assistant_text);
    e.source_ref = std::move(p.source_ref);
    e.refs[0] = std::move(p.user_source_ref);
    e.refs[1] = std::move(p.assistant_source_ref);
    if (idx->page_vectors) idx->page_entry[id] = static_cast<std::uint32_t>(idx->entries.size() - 1);
  });
}

bool Archived(const std::unordered_map<std::int64_t, bool>& archived, std::int64_t segment) {
  auto it = archived.find(segment);
  return it != archived.end() && it->second;
}

// True when some segment is archived in one map and not in the other.
bool TiersMoved(const std::unordered_map<std::int64_t, bool>& before,
                const std::unordered_map<std::int64_t, bool>& now) {
  for (const auto& [segment, archived] : before) {
    if (archived != Archived(now, segment)) return true;
  }
  for (const auto& [segment, archived] : now) {
    if (archived && !Archived(before, segment)) return true;
  }
  return false;
}

// The scope's live facts. A fact row never changes (a new version is a new
// row), so what `previous` made of a row it holds is taken as it is.
Status LoadFacts(sql::Db* db, ScopeIndex* idx, const ScopeIndex* previous) {
  ENGRAM_ASSIGN_OR_RETURN(idx->user_scope_id, memory::facts::UserRowOf(db, idx->scope_id));
  const wordvec::WordVectors* words = wordvec::WordVectors::Default();
  return store::ScanSnapshotFacts(db, idx->scope_id, idx->user_scope_id, [&](store::SnapshotFactRow& f) {
    const bool user = f.kind == "user";
    const bool indexed = (user ? idx->user_facts : idx->assistant_facts).Add(f.id, f.embedding);
    const FactEntry* made = nullptr;  // by `previous`
    if (previous != nullptr) {
      auto was = previous->facts.find(f.id);
      if (was != previous->facts.end() && was->second.version == f.version) made = &was->second;
    }
    FactEntry fe;
    if (made != nullptr) {
      fe = *made;
    } else {
      fe.version = f.version;
      fe.event_time = f.event_time;
      fe.text = std::move(f.text);
      fe.source_pages = memory::IdsFromJson(f.source_pages);
      fe.line = "- (" + FormatHumanDate(fe.event_time) + ") " + text::OneLine(fe.text);
      fe.words = static_cast<std::uint32_t>(text::CountWords(fe.line));
      fe.tokens = text::EstimateTokensOf(fe.words, fe.line.size());
      if (words != nullptr && fe.source_pages.empty()) {
        fe.known = words->KnownWords(text::Terms(words->Meant(fe.text)));
        fe.meaning = wordvec::Quantize(words->MeanOf(fe.known));
      }
      fe.expires_at = f.expires_at;
    }
    fe.in_vectors = indexed ? (user ? 1 : 2) : 0;
    idx->facts_with_meaning += fe.meaning.empty() ? 0 : 1;
    if (fe.expires_at) idx->expiring_facts.emplace_back(f.id, *fe.expires_at);
    idx->facts[f.id] = std::move(fe);
  });
}

}  // namespace

Result<std::shared_ptr<const ScopeIndex>> LoadScopeIndex(sql::Db* db, std::int64_t scope_id,
                                                         std::int64_t generation, std::int64_t data_version,
                                                         const ScopeIndex* previous, bool page_vectors) {
  auto idx = std::make_shared<ScopeIndex>();
  idx->scope_id = scope_id;
  idx->generation = generation;
  idx->data_version = data_version;
  idx->page_vectors = page_vectors;
  ENGRAM_RETURN_IF_ERROR(LoadSegments(db, idx.get()));
  std::int64_t after_seq = 0;
  if (previous && previous->scope_id == scope_id && previous->generation == generation) {
    ENGRAM_ASSIGN_OR_RETURN(bool reused, ReusePages(db, *previous, idx.get()));
    if (reused) after_seq = idx->entries.back().seq;
  }
  const std::size_t first_new = idx->entries.size();
  ENGRAM_RETURN_IF_ERROR(AppendPages(db, after_seq, idx.get()));
  // Archiving moves old pages too: all pages are looked at when a segment
  // changed its tier since `previous` (a walk over every entry, 6 ms at
  // 100k pages), the new ones otherwise.
  const bool tiers_moved = first_new == 0 || TiersMoved(previous->segment_archived, idx->segment_archived);
  std::int64_t seen_segment = -1;  // neighbouring pages mostly share a segment
  Tier seen_tier = Tier::kMtm;
  for (std::size_t i = tiers_moved ? 0 : first_new; i < idx->entries.size(); ++i) {
    const TurnEntry& e = std::as_const(idx->entries)[i];
    if (e.segment_id != seen_segment) {
      seen_segment = e.segment_id;
      seen_tier = Archived(idx->segment_archived, e.segment_id) ? Tier::kArchive : Tier::kMtm;
    }
    if (e.tier != seen_tier) idx->entries[i].tier = seen_tier;  // copies that chunk only
  }
  IndexMessages(idx->entries, idx->messages, idx->message_docs, first_new);
  for (std::size_t i = first_new; i < idx->entries.size(); ++i) {
    idx->entry_bytes += EntryBytes(std::as_const(idx->entries)[i]);
  }
  ENGRAM_RETURN_IF_ERROR(LoadFacts(db, idx.get(), previous && previous->scope_id == scope_id &&
                                                          previous->generation == generation ? previous : nullptr));
  ENGRAM_ASSIGN_OR_RETURN(idx->profile, memory::LoadProfile(db, scope_id));
  if (db->dialect() == sql::Dialect::kSqlite) {
    ENGRAM_RETURN_IF_ERROR(store::ScanTextRows(db, store::FullText::kSegments, scope_id,
                                               [&](std::int64_t rowid, const std::string& terms) {
                                                 idx->segment_text.Add(rowid, terms);
                                               }));
    for (std::int64_t facts_of : {scope_id, idx->user_scope_id}) {
      if (facts_of == 0) continue;
      ENGRAM_RETURN_IF_ERROR(store::ScanTextRows(
          db, store::FullText::kFacts, facts_of,
          [&](std::int64_t rowid, const std::string& terms) { idx->fact_text.Add(rowid, terms); }));
    }
    idx->text_in_memory = true;
  }
  return std::shared_ptr<const ScopeIndex>(std::move(idx));
}

}  // namespace engram::retrieval
