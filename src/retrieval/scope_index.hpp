// An immutable in-memory snapshot of one scope's paged memory: the vectors of
// pages, segments and facts, the text of every page's turn (so that ranking
// and context assembly need no per-item reads) and a lexical index with one
// document per message (each side of an exchange). Keyed by the scope's
// data_version so readers share it until the next commit changes the scope.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "core/shared_list.hpp"
#include "core/word_vectors.hpp"
#include "engram/result.hpp"
#include "engram/types.hpp"
#include "index/flat_index.hpp"
#include "retrieval/context.hpp"
#include "retrieval/lexical.hpp"
#include "retrieval/query_dates.hpp"
#include "retrieval/text_index.hpp"
#include "store/sqlite.hpp"

namespace engram::retrieval {

// A value made on first use and kept (thread-safe: a snapshot's entries are
// shared by its readers; of two readers making it at once, one's is kept). A
// copy starts empty; a move takes it.
template <class T>
class Lazy {
 public:
  Lazy() = default;
  Lazy(const Lazy&) noexcept {}
  Lazy& operator=(const Lazy&) noexcept {
    Reset();
    return *this;
  }
  // (noexcept moves: containers of entries move them instead of copying.)
  Lazy(Lazy&& o) noexcept : made_(o.made_.exchange(nullptr)) {}
  Lazy& operator=(Lazy&& o) noexcept {
    if (this != &o) delete made_.exchange(o.made_.exchange(nullptr));
    return *this;
  }
  ~Lazy() { Reset(); }
  // The value, made by make() (returning a T) on the first call.
  template <class Make>
  const T& Get(Make&& make) const {
    const T* made = made_.load(std::memory_order_acquire);
    if (made == nullptr) {
      auto fresh = std::make_unique<const T>(make());
      if (made_.compare_exchange_strong(made, fresh.get(), std::memory_order_acq_rel))
        made = fresh.release();
      // (else another reader made it first: `made` holds its copy)
    }
    return *made;
  }
  // The value when made, else nullptr.
  const T* IfMade() const { return made_.load(std::memory_order_acquire); }

 private:
  void Reset() { delete made_.exchange(nullptr); }
  mutable std::atomic<const T*> made_{nullptr};
};

// SummarySentences of a text, made once on first use and kept.
class LazySentences {
 public:
  std::span<const SummarySentence> Of(std::string_view text) const;
  std::size_t MemoryBytes() const;

 private:
  Lazy<std::vector<SummarySentence>> made_;
};

// What a message means to the built-in word vectors: the indexes of its
// known words (wordvec::WordVectors::Meant, KnownWords) and their mean,
// quantised (empty when it has none).
struct MessageMeaning {
  std::vector<std::int32_t> known;
  wordvec::QuantizedVector mean;
};
// Both sides of a turn's.
struct TurnMeaning {
  MessageMeaning side[2];
};

// One turn with its page (or an STM turn, page_id 0), as ranking and context
// assembly need it.
struct TurnEntry {
  std::int64_t page_id = 0;
  std::int64_t turn_id = 0;
  std::int64_t segment_id = 0;
  std::int64_t seq = 0;
  TimeMs event_time = 0;
  Tier tier = Tier::kMtm;
  std::string names[2];  // user, assistant
  std::string texts[2];
  std::string refs[2];   // per-side source refs ("" when not given)
  int tokens[2] = {0, 0};           // of MessageLine
  std::uint32_t words[2] = {0, 0};  // text::CountWords of MessageLine (context packing reads it)
  bool dated[2] = {false, false};  // the message holds a time expression
  DayWindow said[2];                // the days that expression points to (SaidWindow)
  std::string source_ref;
  std::string chain_summary;
  // The chain summary's sentences, split by the first retrieval that needs
  // them (most pages are never in a context: splitting every summary cost
  // a snapshot build more time and memory than the retrievals it saves).
  LazySentences chain_sentences;
  // What its messages mean (MeaningOfTurn), made by the first ranking that
  // reads the meaning of every message (RankingOptions::meaning: a question
  // whose words say little), and kept for the next.
  Lazy<TurnMeaning> meaning;
  int docs[2] = {-1, -1};  // message document per side, -1 when the side is empty
};
// (Vectors of entries grow by moving them only when a move cannot throw.)
static_assert(std::is_nothrow_move_constructible_v<TurnEntry>);

// The meaning of a turn's messages by `words` (made on first use, kept).
const TurnMeaning& MeaningOfTurn(const TurnEntry& e, const wordvec::WordVectors& words);

// The paged turns of a snapshot, in shared immutable chunks: a snapshot made
// from the previous one shares its chunks and copies only a chunk it changes
// (copy on write), so an update costs the new pages, not all of them.
// Readers see a plain random-access list.
class EntryList {
 public:
  static constexpr std::size_t kChunk = 1024;

  EntryList() = default;
  EntryList& operator=(std::vector<TurnEntry> entries);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const TurnEntry& operator[](std::size_t i) const { return (*chunks_[i / kChunk])[i % kChunk]; }
  // Copies the entry's chunk first when another snapshot shares it.
  TurnEntry& operator[](std::size_t i) { return Own(i / kChunk)[i % kChunk]; }
  const TurnEntry& back() const { return (*this)[size_ - 1]; }
  void push_back(TurnEntry e);
  // Appends a default entry and returns it, to be filled in place (an entry
  // is ~330 bytes: a first load of 100k pages moved each twice).
  TurnEntry& emplace_back();
  // Chunks shared with `other` (the same objects, not copies): for tests.
  std::size_t SharedChunks(const EntryList& other) const;

 private:
  std::vector<TurnEntry>& Own(std::size_t chunk);
  std::vector<std::shared_ptr<std::vector<TurnEntry>>> chunks_;
  std::size_t size_ = 0;
};

// A message document: which side of which entry, with what ranking reads
// of every message (its entry's time and whether it holds a time
// expression), so that a scan over all messages stays in this small array.
struct MessageDoc {
  std::uint32_t entry = 0;
  // MessageIndex::SpeakerId of SpeakerName(entries[entry], side) in the
  // index the document belongs to.
  std::uint16_t speaker = MessageIndex::kNoSpeaker;
  std::uint8_t side : 1 = 0;   // 0 user, 1 assistant
  std::uint8_t dated : 1 = 0;  // == entries[entry].dated[side]
  // Cues of the message itself (RankingOptions::question, names,
  // self_reference): it holds a "?"; its capitalised words that do not
  // start a sentence, speakers aside (NamedWords, at most kMaxNamedWords); the balance of
  // its first- over second-person words x 100 (MessageCues::Person).
  std::uint8_t asks : 1 = 0;
  std::uint8_t names : 3 = 0;
  // It opens a session: the first of its list, or the first after more than
  // kSessionGapMs without messages (RankingOptions::opener).
  std::uint8_t opens : 1 = 0;
  // Its time expression points to days (entries[entry].said[side] is not empty).
  std::uint8_t said : 1 = 0;
  std::int8_t person = 0;
  TimeMs time = 0;  // == entries[entry].event_time
};
// The named words a message's document counts at most (RankingOptions::names
// is the factor of this many).
inline constexpr int kMaxNamedWords = 5;
static_assert(kMaxNamedWords < 8, "MessageDoc::names has 3 bits");
// (16 bytes: a snapshot holds two per page, and an update copies them.)
static_assert(sizeof(MessageDoc) == 16);
// A session opens after an hour without messages.
inline constexpr TimeMs kSessionGapMs = 60 * 60 * 1000;

// The first- and second-person words of one message (IndexMessages counts
// them with its term look-ups).
struct MessageCues {
  int first_person = 0, second_person = 0;
  int third_person = 0;     // "he", "she", "him", "her" ... (PersonOf 3)
  std::uint32_t kinds = 0;  // the kinds of things it names (NounKindOf of its words, or'ed)
  // Their balance x 100, in [-100, 100] (0 when it has none).
  std::int8_t Person() const;
};
// 1 for a first-person word ("i", "my", "we", "us", "i'm" ...), 2 for a
// second-person one ("you", "your", "you're" ...), 3 for a third-person
// singular one ("he", "she", "him", "her", "his" ...), 0 otherwise
// (lower-cased tokens, as text::Tokenize gives).
int PersonOf(std::string_view token);
// Calls fn(word) for each capitalised word of `text` that does not start a
// sentence (a run of ASCII letters starting with a capital, not glued to a
// digit or an apostrophe before it; "I" aside), in order, until fn returns
// false.
void ForEachNamedWord(std::string_view text, const std::function<bool(std::string_view)>& fn);
// Capitalised words of `text` that do not start a sentence (ForEachNamedWord;
// a word equal to the first word of one of the `speakers` aside), at most
// `cap`.
int NamedWords(std::string_view text, std::span<const std::string_view> speakers, int cap = kMaxNamedWords);

// The people a message may mean by "he" or "she" when it names nobody
// itself: a message's document also holds the terms of the named words
// (NamedWords) of the message before it in the same session (the other
// side of its exchange, or the last message of the exchange before within
// kSessionGapMs), at most kMaxReferents of them ("Poor Claire. Is she
// feeling okay?" - "She's back at the middle school library": the reply is
// also about Claire).
inline constexpr int kMaxReferents = 3;

// The index terms a token stands for besides its own stem: its hyphenated
// parts' (text::ForEachHyphenPart: "gluten-free" -> "gluten", "free"), the
// word a short form stands for (text::FullForm: "fave" -> "favorite") and
// the base forms of an irregular noun or verb (WordNet's exception lists:
// "made" -> "make", "went" -> "go", "children" -> "child"; none without
// WordNet), in that order, possibly repeated; none for a stopword, and no
// stopword ("did" -> "do"). The message index holds them, so that "make"
// finds "made" (a question's "made" is not widened to "make": on LoCoMo 0-4
// that gave recall@10 0.808 against 0.809).
void ForEachOtherTerm(std::string_view token, const std::function<void(std::string)>& fn);

// The name a message is rendered and indexed under: the side's speaker name,
// or "User" / "Assistant" when the turn gives none.
const std::string& SpeakerName(const TurnEntry& e, int side);

// The memory an entry holds: itself and its strings (with the chain
// summary's sentences when split).
std::size_t EntryBytes(const TurnEntry& e);

// A side's message as the context renders it ("Name: text"; "" for an empty
// side). Made when asked (most messages are never in a context: kept in
// every entry, they were a second copy of every text).
std::string MessageLine(const TurnEntry& e, int side);

// The page's chain summary with its sentences (split on first use).
inline ChainView PreparedChain(const TurnEntry& e) {
  return ChainView(e.chain_summary, e.chain_sentences.Of(e.chain_summary));
}

// Renders each side's line and splits turns into message documents (in entry
// order, user side first) and indexes them, from entry `first` on. Entries should be in chronological order: neighbouring
// documents are then neighbouring messages.
void IndexMessages(std::vector<TurnEntry>& entries, MessageIndex& index, std::vector<MessageDoc>& docs,
                   std::size_t first = 0);
void IndexMessages(EntryList& entries, MessageIndex& index, SharedList<MessageDoc>& docs, std::size_t first = 0);

// Turn ids, sorted: which turns have a page in the snapshot.
class TurnIdSet {
 public:
  std::size_t count(std::int64_t turn_id) const {
    return std::binary_search(ids_.begin(), ids_.end(), turn_id) ? 1 : 0;
  }
  void insert(std::int64_t turn_id);
  std::size_t size() const { return ids_.size(); }

 private:
  std::vector<std::int64_t> ids_;
};

struct FactEntry {
  std::int64_t version = 1;
  TimeMs event_time = 0;
  std::string text;
  std::string line;  // rendered for the context: "- (date) text"
  int tokens = 0;
  std::uint32_t words = 0;  // text::CountWords(line)
  std::vector<std::int64_t> source_pages;
  // Hidden from retrieval from then on. Checked at query time: an expiry
  // passing does not change data_version, so the snapshot keeps the fact.
  std::optional<TimeMs> expires_at;
  // Which vector index holds the fact: 1 user_facts, 2 assistant_facts, 0
  // neither (a vector of another dimension).
  std::uint8_t in_vectors = 0;
  // Its meaning for the built-in engine (wordvec::WordVectors::Default(),
  // when present; facts drawn from no page only): the word-vector mean of
  // its words, and the indexes of its words the vectors know (their WordNet
  // neighbourhoods expand it).
  wordvec::QuantizedVector meaning;
  std::vector<long> known;
};

struct ScopeIndex {
  std::int64_t scope_id = 0;
  // The row of the user's own memories whose facts the snapshot holds
  // beside the scope's (memory::facts::UserRowOf; 0: none).
  std::int64_t user_scope_id = 0;
  std::int64_t generation = 0;  // of the scope row (erasures bump it)
  std::int64_t data_version = -1;
  // Page vectors: only for a semantic embedder (ranking uses them only then;
  // with the built-in embedder `pages` stays empty and page_vectors false).
  bool page_vectors = true;
  FlatIndex pages;
  TurnIdSet turn_page;                                       // turns with a page
  EntryList entries;                                         // paged turns by seq
  std::size_t entry_bytes = 0;  // EntryBytes of the entries, each counted when it was appended
  std::unordered_map<std::int64_t, std::uint32_t> page_entry;  // page id -> entry (with page vectors only)
  MessageIndex messages;
  SharedList<MessageDoc> message_docs;  // shared with the snapshots made from this one
  FlatIndex segments;                                         // live and archived
  std::unordered_map<std::int64_t, bool> segment_archived;
  FlatIndex user_facts;
  FlatIndex assistant_facts;
  std::unordered_map<std::int64_t, FactEntry> facts;  // live facts by id
  // Facts drawn from no page with a FactEntry::meaning (the built-in
  // engine's meaning is looked for among these only).
  std::size_t facts_with_meaning = 0;
  std::vector<std::pair<std::int64_t, TimeMs>> expiring_facts;  // (id, expires_at) of facts with an expiry
  std::vector<ProfileSlot> profile;  // written only with a data_version change
  // The scope's rows of segments_fts and facts_fts, searched in memory
  // instead of by a statement (SQLite stores only: the copy reproduces FTS5's
  // bm25; text_in_memory false elsewhere).
  bool text_in_memory = false;
  TextIndex segment_text;
  TextIndex fact_text;

  std::size_t MemoryBytes() const;
};

// Loads the snapshot of a scope at its current data_version (read inside
// the caller's read transaction), with the page vectors when `page_vectors`.
//
// `previous` (optional): an older snapshot of the same scope and generation. Pages are only
// ever appended (in turn order), their texts, vectors and segments never
// change, and none is removed without a new generation (erasure,
// re-embedding), so when the previous snapshot's last page is still the page
// of its turn, its page vectors, texts and message index are copied and only
// the new pages are read and indexed; what can change on old pages (the
// archive tier, from their segment) and the segments, facts, profile and
// full-text rows are read again. Otherwise (the caller must not pass a
// snapshot from before an erasure) the snapshot is built from scratch. Both
// give the same snapshot.
Result<std::shared_ptr<const ScopeIndex>> LoadScopeIndex(sql::Db* db, std::int64_t scope_id,
                                                         std::int64_t generation, std::int64_t data_version,
                                                         const ScopeIndex* previous = nullptr,
                                                         bool page_vectors = true);

}  // namespace engram::retrieval
