// Text processing shared by indexing, the built-in embedder and the built-in
// maintenance engine. All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace engram::text {

// A hash of strings that looks std::string keys up by string_view without
// making a string (C++20 heterogeneous lookup; use with std::equal_to<>).
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
// A map from strings that is looked up by string_view.
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

// Lower-cased word tokens of UTF-8 text. A token is a run of letters/digits
// of any script (ASCII and common Latin/Greek/Cyrillic capitals are
// lower-cased; other code points are kept as they are). A run of a script
// written without spaces (Chinese, Japanese kana, Thai, Lao, Khmer, Myanmar)
// gives each pair of adjacent letters, in order, then the run itself when it
// is one letter or more than two ("我喜欢喝咖啡": "我喜", "喜欢", "欢喝",
// "喝咖", "咖啡", "我喜欢喝咖啡"), so a word of it is found inside a
// sentence. A single inner '-', '.', '_' or '\'' between alphanumerics is kept
// and a "+"/"++"/"#" suffix after a letter is kept, so "gpt-4", "node.js",
// "e-mail", "3.5", "c++", "c#" stay one token; a trailing "'s" is dropped
// ("Caroline's" -> "caroline"); other punctuation, symbols, emoji, spaces and
// invalid UTF-8 bytes separate tokens. Tokens over 80 bytes are dropped.
std::vector<std::string> Tokenize(std::string_view text);

// A non-owning reference to a callable taking a token (for ForEachToken): no
// allocation; valid while the callable it was made from lives.
class TokenFn {
 public:
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, TokenFn>)
  TokenFn(F&& f)  // NOLINT(google-explicit-constructor): made at the call
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, std::string_view t) { (*static_cast<std::remove_reference_t<F>*>(o))(t); }) {}
  void operator()(std::string_view token) const { call_(obj_, token); }

 private:
  void* obj_;
  void (*call_)(void*, std::string_view);
};

// The tokens of Tokenize(text), in order, handed to `fn` one at a time
// without a vector or a string per token (each view is valid during its call).
void ForEachToken(std::string_view text, TokenFn fn);

// True for common function words (English list; short and conservative).
bool IsStopword(std::string_view token);

// True for a lower-case number word: a cardinal or ordinal ("two", "twelve",
// "sixty", "million", "third"), a count ("dozen", "twice", "half", "couple",
// "both"), or two of them joined by a hyphen ("fifty-five", "twenty-first").
bool IsNumberWord(std::string_view token);

// The word a short form of informal writing stands for ("fave": "favorite",
// "bday": "birthday", "fam": "family", "convo": "conversation"); "" for any
// other token. Only forms that stand for one word: "doc" (doctor or
// document), "app", "vet" and "bio" are not among them, nor "pic", which a
// chat says of every photo it shares. And a word written with one plus
// after its letters ("LGBTQ+", "Disney+"; the tokenizer keeps the sign, as
// for "C++"): the word itself ("lgbtq"), a view of `token`.
std::string_view FullForm(std::string_view token);

// A question to a memory store, or a memory, with "the user" said as a
// pronoun: "the user's" and "user's" become "their", "the user" and a
// sentence's subject "User" ("User likes jazz.", as the built-in facts and
// imported memories write it: capitalised, before a lower-case word) become
// "they" (whole words, otherwise in any case; "'s" or a typographic
// apostrophe). An agent asking "What does the
// user eat?" means the person the memories are of, as "I" or "she" would,
// not the word "user": as a word it matched "I use Neovim" by meaning ("use",
// "user"), and a memory's "User" matched "employer" or "boss" (a user is a
// person) whatever the memory said. Other text is returned as it is.
std::string UserAsPronoun(std::string_view text);

// The text with the names written apart that `known` knows as one word
// ("Raspberry Pi", "Home Assistant", "VS Code", "Fusion 360": the names of
// tools/wordvec/names.tsv are written whole, "raspberrypi") written as that
// word: each run of two or three words separated by single spaces, the first
// written with a capital letter and each other with a capital letter or a
// digit, none a stopword ("Did I" is no "didi"), whose lower-case
// concatenation `known` accepts, the longer run first; the rest of the text
// as it is (the text itself when no run is accepted).
std::string JoinNamesWrittenApart(std::string_view text,
                                  const std::function<bool(const std::string&)>& known);

// The text with its ASCII capitals lower-cased (other bytes as they are).
std::string AsciiLower(std::string_view text);

// A word of Latin letters with its diacritics taken off, lower-cased:
// "café" -> "cafe", "Résumé" -> "resume", "naïve", "jalapeño", "Straße" ->
// "strasse", "Łódź" -> "lodz" (Latin-1 and Latin Extended-A); other bytes
// as they are. "" when the text holds none of those letters.
std::string FoldLatin(std::string_view text);

// Snowball English stem of one lower-cased token (tokens with digits or
// inner punctuation are returned unchanged). Thread-safe (one stemmer per thread).
std::string Stem(std::string_view token);

// Index terms: Tokenize, drop stopwords, Stem. Order kept, duplicates kept.
std::vector<std::string> Terms(std::string_view text);

// The words of a hyphenated token ("gluten-free" -> "gluten", "free";
// "self-care" -> "self", "care"), for an index that should match the words
// written apart or alone as well as the whole token: each part of at least two
// bytes that holds a letter and is no stopword ("gpt-4" -> "gpt"; "e-mail" ->
// "mail"; "2023-05-08" -> none). Nothing for a token without a '-'.
void ForEachHyphenPart(std::string_view token, TokenFn fn);

// FTS5-safe form of a term: [a-z0-9_] and non-ASCII bytes are kept (A-Z is
// lower-cased), '"' is dropped and any other ASCII character becomes '_'
// ("gpt-4" -> "gpt_4", "node.js" -> "node_js", "c++" -> "c__").
std::string FtsTerm(std::string_view term);

// Normalised form used for exact-duplicate detection: NFC is not applied;
// lower-case ASCII, collapse whitespace, strip punctuation at the ends of
// words, trim. "  I LOVE  Hanoi!! " -> "i love hanoi".
std::string NormalizeForHash(std::string_view text);

// 64-bit hash (xxh3) of NormalizeForHash(text).
std::uint64_t ContentHash(std::string_view text);

// The signs of a text, in order: the symbols that are neither letters,
// digits, spaces nor sentence punctuation (. , ; : ! ? quotes, brackets,
// dashes and the other general punctuation), such as "$", "+", "-", "#",
// "%", "€", "★" and emoji. NormalizeForHash strips them at a word's ends, and
// they can be all that tells two facts apart ("owes $500" / "owes -500",
// "O+" / "O-", "C++" / "C#").
std::string Signs(std::string_view text);

// ContentHash(text) for a text without signs; otherwise a hash of the
// normalised text and its signs, so texts that differ in a sign hash apart.
std::uint64_t SignedContentHash(std::string_view text);

// The keys an embedding-cache entry of `text` may have, appended to `out`:
// SignedContentHash (what the cache keys by: "I code in C++" and "I code in
// C#" are embedded apart), then ContentHash when it differs (entries stored
// before the cache told signs apart), so that erasure finds both.
void AppendCacheKeys(std::string_view text, std::vector<std::int64_t>& out);

// Sentences of a text (split on . ! ? … followed by a space or the end, on
// 。！？ and on newlines; keeps abbreviations such as "Dr.", "e.g." and
// "etc.", initials and decimals like "3.5" inside a sentence; a sentence
// written in lower case ends at its "." as any other: "i start at 5am. my
// boss is great." is two). Closing quotes/brackets stay with their
// sentence. Trimmed, non-empty.
std::vector<std::string> SplitSentences(std::string_view text);
// The same sentences as views into `text`.
std::vector<std::string_view> SentenceViews(std::string_view text);

// Estimated LLM tokens of a text: max(ceil(1.3 * words), ceil(bytes / 4)),
// where words are whitespace-separated runs; never 0 for non-empty text.
int EstimateTokens(std::string_view text);
// The same estimate from a text's word count (CountWords) and byte count:
// estimates of texts measured once, or of texts joined by newlines (both
// counts add up).
int EstimateTokensOf(std::size_t words, std::size_t bytes);

// The words of EstimateTokens: runs of bytes other than ' ', \t, \n, \v,
// \f and \r.
std::size_t CountWords(std::string_view text);

// About how many content words a text says: its tokens (Tokenize) that are
// not stopwords, where a token of a script written without spaces (Chinese,
// Japanese kana, Thai, Lao, Khmer, Myanmar: Tokenize keeps such a run as one
// token) counts one word per two of its letters ("我对花生过敏": 3; "谢谢": 1;
// "Hi there": 0).
std::size_t ContentWords(std::string_view text);

// The text on one line: each run of whitespace that holds a line break (or
// a tab, vertical tab or form feed) becomes one space, and the ends are
// trimmed. A fact or profile value is one line of a context, whose line
// starts ("## ", "- (") are its structure: a value written over several
// lines could otherwise forge a section.
std::string OneLine(std::string_view text);

// A message's text as lines of a context: each line after the first
// indented by two spaces ("\r\n" and a lone "\r" end a line as "\n" does),
// so that only the context's own lines start at its margin ("## ", "[date]",
// "Name: "). Text without a line break comes back as it is.
std::string IndentContinuation(std::string_view text);

// Truncates UTF-8 text to at most max_bytes (the "..." included) without
// splitting a code point, adding "..." when cut (no "..." when max_bytes < 3).
std::string Truncate(std::string_view text, std::size_t max_bytes);

// Appends the UTF-8 encoding of a code point (assumed valid).
void AppendUtf8(std::string& out, char32_t cp);

// True when the text is valid UTF-8.
bool IsValidUtf8(std::string_view text);

// Why `text` cannot be stored as a text value ("not valid UTF-8", "holds a
// NUL character (U+0000)"), or nullptr when it can. PostgreSQL's text holds
// no NUL, so text with one would be kept on SQLite, refused on PostgreSQL
// and break a copy from one to the other: every backend refuses it.
const char* StorableTextProblem(std::string_view text);

// The value of a hexadecimal digit (either case); -1 for any other character.
inline int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace engram::text
