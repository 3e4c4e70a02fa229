// Text processing: UTF-8 tokenisation, stopwords, Snowball stemming, hashing,
// sentence splitting and token estimates. See text.hpp for the contracts.
#include "core/text.hpp"

#include <libstemmer.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace engram::text {
namespace {

constexpr std::size_t kMaxTokenBytes = 80;  // longer runs (hashes, blobs) are dropped
constexpr std::size_t kMaxStemBytes = 64;
// Stems a thread remembers (about 100 bytes each: at most about 2 MB a thread).
constexpr std::size_t kStemMemo = 16384;

// Decodes the code point at s[i]. Returns its byte length (1..4), or 0 when the
// byte does not start a valid sequence (overlong, surrogate, > U+10FFFF, cut).
std::size_t Decode(std::string_view s, std::size_t i, char32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  std::size_t len = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

void Append(std::string& out, char32_t cp) { AppendUtf8(out, cp); }

bool IsAsciiAlnum(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// True for non-ASCII code points that separate words: controls, spaces,
// punctuation and symbol blocks (emoji included). Letters, marks and digits of
// any script are not separators.
bool IsNonAsciiSeparator(char32_t c) {
  if (c < 0xA0) return true;  // C1 controls
  if (c <= 0xBF) return c != 0xAA && c != 0xB5 && c != 0xBA;
  if (c == 0xD7 || c == 0xF7) return true;
  if (c >= 0x2000 && c <= 0x206F) return true;  // general punctuation, spaces
  if (c >= 0x20A0 && c <= 0x20CF) return true;  // currency
  if (c >= 0x2100 && c <= 0x214F) return true;  // letterlike symbols
  if (c >= 0x2190 && c <= 0x2BFF) return true;  // arrows, maths, shapes, dingbats
  if (c >= 0x2E00 && c <= 0x2E7F) return true;  // supplemental punctuation
  if (c >= 0x3000 && c <= 0x303F) return c != 0x3005 && c != 0x3006 && c != 0x3007;
  if (c == 0x30FB || c == 0xFEFF) return true;
  if (c >= 0xFE00 && c <= 0xFE0F) return true;  // variation selectors
  if (c >= 0xFE10 && c <= 0xFE6F) return true;  // CJK compatibility / small forms
  if (c >= 0xFF00 && c <= 0xFF0F) return true;  // fullwidth punctuation
  if ((c >= 0xFF1A && c <= 0xFF20) || (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65))
    return true;
  if (c >= 0xFFF0 && c <= 0xFFFF) return true;
  if (c >= 0x1F000 && c <= 0x1FAFF) return true;  // emoji and pictographs
  if (c >= 0xE0000 && c <= 0xE007F) return true;  // tags
  switch (c) {  // script punctuation (Greek, Armenian, Hebrew, Arabic, Indic, ...)
    case 0x037E: case 0x0387: case 0x0589: case 0x05BE: case 0x05C0: case 0x05C3:
    case 0x060C: case 0x061B: case 0x061F: case 0x066A: case 0x066C: case 0x066D:
    case 0x06D4: case 0x0964: case 0x0965: case 0x0970: case 0x0E4F: case 0x0E5A:
    case 0x0E5B: case 0x104A: case 0x104B: case 0x10FB: case 0x166D: case 0x166E:
    case 0x1680: case 0x17D4: case 0x17D5: case 0x17D6:
      return true;
    default:
      return (c >= 0x055A && c <= 0x055F) || (c >= 0x1361 && c <= 0x1368) ||
             (c >= 0x1800 && c <= 0x180A);
  }
}

// Letters of the scripts written without spaces between words.
bool IsUnspacedLetter(char32_t c) {
  return (c >= 0x0E00 && c <= 0x0EFF) ||  // Thai, Lao
         (c >= 0x1000 && c <= 0x109F) ||  // Myanmar
         (c >= 0x1780 && c <= 0x17FF) ||  // Khmer
         (c >= 0x3040 && c <= 0x30FF) ||  // Hiragana, Katakana
         (c >= 0x3400 && c <= 0x4DBF) ||  // CJK extension A
         (c >= 0x4E00 && c <= 0x9FFF) ||  // CJK unified ideographs
         (c >= 0xF900 && c <= 0xFAFF) ||  // CJK compatibility ideographs
         (c >= 0x20000 && c <= 0x3FFFF);  // CJK extensions B on
}

// Simple lower-casing of common Latin, Greek and Cyrillic capitals.
char32_t Lower(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c < 0xC0) return c;
  if (c <= 0xDE) return c == 0xD7 ? c : c + 0x20;
  if (c >= 0x100 && c <= 0x137) return c == 0x130 ? c : (c | 1);
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c + 1 : c;
  if (c >= 0x14A && c <= 0x177) return c | 1;
  if (c == 0x178) return 0xFF;
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 0x20;
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  return c;
}

bool IsInnerJoiner(char c) { return c == '-' || c == '.' || c == '_' || c == '\''; }

// Completes a token: keeps a "++"/"#" suffix after a letter ("c++", "c#"),
// drops a trailing "'s", and hands it to `emit` when non-empty and not
// oversized; `cur` is empty afterwards.
template <typename Emit>
void FinishToken(std::string& cur, std::string_view trailing, Emit& emit) {
  if (cur.empty()) return;
  const char last = cur.back();
  if (!trailing.empty() && last >= 'a' && last <= 'z') {
    for (std::size_t k = 0; k < trailing.size() && k < 2 && (trailing[k] == '+' || trailing[k] == '#'); ++k)
      cur += trailing[k];
  }
  if (cur.size() > 2 && cur.compare(cur.size() - 2, 2, "'s") == 0) cur.resize(cur.size() - 2);
  if (cur.size() <= kMaxTokenBytes) emit(cur);
  cur.clear();
}

// What an ASCII byte is to the tokenizer: part of a word (its lower-case
// form), a joiner ('-', '.', '_', '\'', '+', '#': kept or not by what follows)
// or a separator.
enum : unsigned char { kSep = 0, kJoin = 1 };
struct AsciiClass {
  unsigned char c[128];  // kSep, kJoin, or the lower-case letter or digit
  constexpr AsciiClass() : c{} {
    for (int i = 0; i < 128; ++i) {
      if (i >= 'a' && i <= 'z') c[i] = static_cast<unsigned char>(i);
      else if (i >= 'A' && i <= 'Z') c[i] = static_cast<unsigned char>(i + 32);
      else if (i >= '0' && i <= '9') c[i] = static_cast<unsigned char>(i);
      else if (i == '-' || i == '.' || i == '_' || i == '\'' || i == '+' || i == '#') c[i] = kJoin;
    }
  }
};
constexpr AsciiClass kAscii;

// The tokenizer (see Tokenize): emit(std::string&) receives each token in
// order; `cur` and `pending` are its working buffers (kept by the caller so
// that their capacity is reused).
template <typename Emit>
void TokenizeWith(std::string_view text, std::string& cur, std::string& pending, Emit&& emit) {
  cur.clear();
  pending.clear();
  // A run of letters of a script written without spaces ("我喜欢喝咖啡") has
  // no word boundaries to split on: it gives each pair of adjacent letters
  // as a token, as they come ("我喜", "喜欢", ...), and then the run itself
  // when it is one letter or longer than two (a search for "咖啡" finds the
  // sentence; a store indexed before pairs existed still finds a run whole).
  std::size_t run = 0;      // letters in the run `cur` holds (0: not a run)
  std::size_t last_at = 0;  // where the run's last letter starts in `cur`
  std::string pair;
  auto finish = [&] {
    if (run == 2) cur.clear();  // (the run is its one pair, given already)
    else FinishToken(cur, pending, emit);
    run = 0;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (run == 0 && pending.empty() && b < 0x80 && kAscii.c[b] > kJoin) {
      // A run of ASCII letters and digits outside a run of unspaced letters
      // and after no joiner (most of a text): each byte is its lower-case
      // form appended, as below, all at once.
      std::size_t j = i + 1;
      while (j < text.size() && static_cast<unsigned char>(text[j]) < 0x80 &&
             kAscii.c[static_cast<unsigned char>(text[j])] > kJoin)
        ++j;
      const std::size_t at = cur.size();
      cur.resize(at + (j - i));
      for (std::size_t k = i; k < j; ++k)
        cur[at + (k - i)] = static_cast<char>(kAscii.c[static_cast<unsigned char>(text[k])]);
      i = j;
      continue;
    }
    char32_t cp = 0;
    char joiner = 0;
    bool word = false;
    if (b < 0x80) {  // ASCII: one table look-up
      ++i;
      const unsigned char k = kAscii.c[b];
      if (k == kJoin) joiner = static_cast<char>(b);
      else if (k != kSep) word = true, cp = k;
    } else {
      const std::size_t len = Decode(text, i, cp);
      i += len == 0 ? 1 : len;
      if (len == 0) {  // invalid byte: separator
        finish();
        pending.clear();
        continue;
      }
      if (cp == 0x2019 || cp == 0x2018) joiner = '\'';
      else if (cp == 0x2010 || cp == 0x2011) joiner = '-';
      else word = !IsNonAsciiSeparator(cp);
      if (word) cp = Lower(cp);
    }
    if (joiner != 0) {
      if (!cur.empty()) pending += joiner;
      continue;
    }
    if (!word) {
      finish();
      pending.clear();
      continue;
    }
    const bool unspaced = cp >= 0x0E00 && IsUnspacedLetter(cp);
    if (run > 0 && (!unspaced || !pending.empty())) {  // the run ends
      finish();
      pending.clear();
    }
    if (unspaced) {
      if (run == 0 && !cur.empty()) {  // a word of another script ends
        FinishToken(cur, pending, emit);
        pending.clear();
      }
      const std::size_t at = cur.size();
      Append(cur, cp);
      if (run++ > 0) {
        pair.assign(cur, last_at, std::string::npos);
        if (pair.size() <= kMaxTokenBytes) emit(pair);
      }
      last_at = at;
      continue;
    }
    if (!pending.empty()) {
      if (pending.size() == 1 && IsInnerJoiner(pending[0])) cur += pending;
      else FinishToken(cur, std::string_view(), emit);
      pending.clear();
    }
    if (cp < 0x80) cur += static_cast<char>(cp);
    else Append(cur, cp);
  }
  finish();
}

sb_stemmer* ThreadStemmer() {
  struct Deleter {
    void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
  };
  thread_local std::unique_ptr<sb_stemmer, Deleter> stemmer(sb_stemmer_new("english", nullptr));
  return stemmer.get();
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The word before a "." without the brackets and quotes that open it.
std::string_view WithoutOpeners(std::string_view word) {
  while (!word.empty() && (word.front() == '(' || word.front() == '"' || word.front() == '\''))
    word.remove_prefix(1);
  return word;
}

// Whether a word of at most six bytes is one of `list` in lower case.
bool InLowerCase(std::string_view word, const std::unordered_set<std::string_view>& list) {
  if (word.empty() || word.size() > 6) return false;
  char lower[6];
  for (std::size_t k = 0; k < word.size(); ++k)
    lower[k] = (word[k] >= 'A' && word[k] <= 'Z') ? static_cast<char>(word[k] + 32) : word[k];
  return list.count(std::string_view(lower, word.size())) > 0;
}

bool IsAbbreviation(std::string_view word) {
  static const std::unordered_set<std::string_view> kAbbrev = {
      "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "e.g", "i.e", "a.m", "p.m",
      "u.s", "u.k", "approx", "dept", "fig", "inc", "ltd"};
  word = WithoutOpeners(word);
  if (word.size() == 1 && word[0] >= 'A' && word[0] <= 'Z') return true;  // an initial
  return InLowerCase(word, kAbbrev);
}

// Whether a word ending in a "." that a lower-case word follows is an
// abbreviation, not a sentence's last word: one written with dots inside
// ("e.g.", "a.m.", "Ph.D."), an initial other than the pronoun "i" ("j. k.
// rowling"), or a short form that is no everyday word ("etc.", "approx.",
// "Aug."). A text written in lower case starts its sentences with lower-case
// words ("i start at 5am. my boss is great."): those end where the dot is.
bool AbbreviationBeforeLower(std::string_view word) {
  static const std::unordered_set<std::string_view> kShort = {
      "etc",  "vs",   "cf",   "approx", "ca",  "incl", "esp", "vol",  "pp",    "fig", "figs",
      "eq",   "dept", "govt", "misc",   "jan", "feb",  "apr", "jun",  "jul",   "aug", "sep",
      "sept", "oct",  "nov",  "dec",    "tue", "tues", "thu", "thur", "thurs", "fri", "viz"};
  word = WithoutOpeners(word);
  if (word.empty() || word.size() > 6) return false;
  if (word.find('.') != std::string_view::npos) return true;
  if (word.size() == 1) return word[0] != 'i' && word[0] != 'I';
  return InLowerCase(word, kShort);
}

bool IsSentenceCloser(char32_t c) {
  return c == '"' || c == '\'' || c == ')' || c == ']' || c == 0x201D || c == 0x2019 ||
         c == 0x300D || c == 0x300F || c == 0xFF09 ||
         c == '*';  // markdown's emphasis closing after the stop: "done.** Next"
}

}  // namespace

std::vector<std::string> Tokenize(std::string_view text) {
  std::vector<std::string> out;
  std::string cur, pending;
  TokenizeWith(text, cur, pending, [&](std::string& token) { out.push_back(std::move(token)); });
  return out;
}

void ForEachToken(std::string_view text, TokenFn fn) {
  std::string cur, pending;  // (short tokens stay in their inline buffer)
  TokenizeWith(text, cur, pending, [&](std::string& token) { fn(token); });
}

bool IsNumberWord(std::string_view t) {
  static const std::unordered_set<std::string_view> kWords = {
      "zero",    "one",       "two",      "three",    "four",    "five",     "six",      "seven",
      "eight",   "nine",      "ten",      "eleven",   "twelve",  "thirteen", "fourteen", "fifteen",
      "sixteen", "seventeen", "eighteen", "nineteen", "twenty",  "thirty",   "forty",    "fifty",
      "sixty",   "seventy",   "eighty",   "ninety",   "hundred", "thousand", "million",  "billion",
      "dozen",   "once",      "twice",    "thrice",   "half",    "first",    "second",   "third",
      "fourth",  "fifth",     "sixth",    "seventh",  "eighth",  "ninth",    "tenth",    "single",
      "double",  "triple",    "both",     "couple",   "pair"};
  if (kWords.count(t) > 0) return true;
  // A number written with a hyphen ("fifty-five", "twenty-first"): each part one.
  const std::size_t dash = t.find('-');
  return dash != std::string_view::npos && dash > 0 && dash + 1 < t.size() &&
         kWords.count(t.substr(0, dash)) > 0 && IsNumberWord(t.substr(dash + 1));
}

bool IsStopword(std::string_view token) {
  static const std::unordered_set<std::string_view> kStop = {
      "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
      "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
      "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each",
      "either", "else", "ever", "few", "for", "from", "further", "had", "has", "have", "having",
      "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in",
      "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself",
      "neither", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other",
      "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some",
      "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there",
      "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very",
      "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "whose",
      "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "shall",
      "must", "might", "oh", "ok", "okay", "yeah", "yes", "hey", "hi", "hello", "um", "uh",
      "really", "i'm", "i've", "i'll", "i'd", "you're", "you've", "you'll", "you'd", "we're",
      "we've", "we'll", "we'd", "they're", "they've", "they'll", "they'd", "he'd", "she'd",
      "he'll", "she'll", "don't", "doesn't", "didn't", "can't", "cannot", "won't", "wouldn't",
      "couldn't", "shouldn't", "isn't", "aren't", "wasn't", "weren't", "haven't", "hasn't",
      "hadn't", "let", "ain't"};
  return kStop.count(token) > 0;
}

namespace {

// A byte of a word: a letter or figure, '_', or a byte of a non-ASCII letter.
bool WordChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return IsAsciiAlnum(u) || c == '_' || u >= 0x80;
}

// Whether `text` holds `word` (lower case) at `at`, in any case.
bool WordAt(std::string_view text, std::size_t at, std::string_view word) {
  if (text.size() - at < word.size()) return false;
  for (std::size_t k = 0; k < word.size(); ++k) {
    char c = text[at + k];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != word[k]) return false;
  }
  return true;
}

// The length of a possessive "'s" or "’s" at `at` that ends a word, 0 when none.
std::size_t PossessiveAt(std::string_view text, std::size_t at) {
  std::size_t n = 0;
  if (WordAt(text, at, "'s")) n = 2;
  else if (WordAt(text, at, "\xE2\x80\x99s")) n = 4;
  return n > 0 && (at + n == text.size() || !WordChar(text[at + n])) ? n : 0;
}

// Whether `at` starts a sentence: the text's start, or after ". ", "! ",
// "? ", "; " or a line break (blanks between).
bool SentenceStartsAt(std::string_view text, std::size_t at) {
  std::size_t k = at;
  while (k > 0 && (text[k - 1] == ' ' || text[k - 1] == '\t')) --k;
  if (k == 0) return true;
  const char c = text[k - 1];
  return (c == '.' || c == '!' || c == '?' || c == ';' || c == '\n' || c == '\r') && k < at;
}

}  // namespace

std::string JoinNamesWrittenApart(std::string_view text,
                                  const std::function<bool(const std::string&)>& known) {
  // Most texts hold no two words in a row that could be one name: found in a
  // pass without allocating.
  const auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto alnum = [&](char c) { return upper(c) || digit(c) || (c >= 'a' && c <= 'z'); };
  bool maybe = false;
  for (std::size_t i = 1, start = 0; i + 1 < text.size() && !maybe; ++i) {
    if (!alnum(text[i - 1])) start = i;
    maybe = text[i] == ' ' && alnum(text[i - 1]) && upper(text[start]) &&
            (upper(text[i + 1]) || digit(text[i + 1]));
  }
  if (!maybe) return std::string(text);
  struct Word {
    std::size_t begin, end;
  };
  std::vector<Word> words;
  for (std::size_t i = 0; i < text.size();) {
    if (!alnum(text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && alnum(text[j])) ++j;
    words.push_back({i, j});
    i = j;
  }
  // A word that may take part: a capital first (a digit past the run's
  // first), and no stopword.
  auto part = [&](std::size_t k, bool first) {
    const char c = text[words[k].begin];
    if (!upper(c) && (first || !digit(c))) return false;
    return !IsStopword(AsciiLower(text.substr(words[k].begin, words[k].end - words[k].begin)));
  };
  std::string out;
  std::size_t copied = 0;  // text[0, copied) is in out
  for (std::size_t k = 0; k + 1 < words.size();) {
    std::size_t taken = 0;
    if (part(k, true)) {
      for (std::size_t n = std::min<std::size_t>(3, words.size() - k); n >= 2 && taken == 0; --n) {
        bool ok = true;
        std::string joined;
        for (std::size_t m = k; m < k + n && ok; ++m) {
          if (m > k && (words[m].begin != words[m - 1].end + 1 || text[words[m - 1].end] != ' ' ||
                        !part(m, false))) {
            ok = false;
            break;
          }
          joined += AsciiLower(text.substr(words[m].begin, words[m].end - words[m].begin));
        }
        if (ok && known(joined)) {
          out.append(text.substr(copied, words[k].begin - copied));
          out += joined;
          copied = words[k + n - 1].end;
          taken = n;
        }
      }
    }
    k += taken > 0 ? taken : 1;
  }
  if (copied == 0) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

std::string UserAsPronoun(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    if (i == 0 || !WordChar(in[i - 1])) {
      // "the" and blanks, then "user" ending a word or followed by a possessive.
      std::size_t user = i;
      const bool the = WordAt(in, i, "the") && i + 3 < in.size() && in[i + 3] == ' ';
      if (the) {
        user = i + 3;
        while (user < in.size() && in[user] == ' ') ++user;
      }
      if (WordAt(in, user, "user")) {
        const std::size_t end = user + 4;
        const std::size_t poss = PossessiveAt(in, end);
        if (poss > 0) {
          out += "their";
          i = end + poss;
          continue;
        }
        if (the && (end == in.size() || !WordChar(in[end]))) {
          out += "they";
          i = end;
          continue;
        }
        // "User likes jazz.": the subject of a sentence, as the built-in
        // facts and many imported memories write it.
        if (!the && in[i] == 'U' && SentenceStartsAt(in, i) && end + 1 < in.size() &&
            in[end] == ' ' && in[end + 1] >= 'a' && in[end + 1] <= 'z') {
          out += "they";
          i = end;
          continue;
        }
      }
    }
    out += in[i++];
  }
  return out;
}

std::string_view FullForm(std::string_view token) {
  // "lgbtq+", "disney+": the word without its plus ("c++" keeps both, "a+" is a grade).
  if (token.size() >= 3 && token.back() == '+' && token[token.size() - 2] >= 'a' &&
      token[token.size() - 2] <= 'z') {
    return token.substr(0, token.size() - 1);
  }
  // clang-format off
  static const std::unordered_map<std::string_view, std::string_view> kFull = {
      {"fam", "family"},             {"edu", "education"},          {"bday", "birthday"},
      {"b-day", "birthday"},         {"convo", "conversation"},     {"convos", "conversation"},
      {"vid", "video"},              {"vids", "video"},             {"vacay", "vacation"},
      {"fav", "favorite"},           {"fave", "favorite"},          {"faves", "favorite"},
      {"favs", "favorite"},          {"bro", "brother"},            {"sis", "sister"},
      {"hubby", "husband"},          {"kiddo", "kid"},              {"kiddos", "kid"},
      {"grandma", "grandmother"},    {"grandpa", "grandfather"},    {"gf", "girlfriend"},
      {"bf", "boyfriend"},           {"bff", "friend"},             {"info", "information"},
      {"mins", "minute"},            {"hrs", "hour"},               {"uni", "university"},
      {"grad", "graduate"},          {"grads", "graduate"},         {"yr", "year"},
      {"yrs", "year"},               {"fest", "festival"},          {"fests", "festival"},
      {"tourney", "tournament"},     {"tourneys", "tournament"},    {"ppl", "people"},
      {"roomie", "roommate"},        {"roomies", "roommate"},       {"champ", "champion"},
      {"prof", "professor"}};
  // clang-format on
  if (token.size() < 2 || token.size() > 8) return {};  // ("tourneys": the longest)
  const auto it = kFull.find(token);
  return it == kFull.end() ? std::string_view{} : it->second;
}

std::string Stem(std::string_view token) {
  if (token.empty() || token.size() > kMaxStemBytes) return std::string(token);
  bool ascii = true;
  for (char c : token) {
    if ((c >= '0' && c <= '9') || IsInnerJoiner(c) || c == '+' || c == '#') return std::string(token);
    if (static_cast<unsigned char>(c) >= 0x80) ascii = false;
  }
  if (!ascii && !IsValidUtf8(token)) return std::string(token);
  // Stems already made by this thread: a query's words are stemmed by each
  // of the retrieval's readers (ranking, full-text terms, the embedder,
  // expansions), and the words of a conversation recur; the stemmer costs
  // several times a look-up. Bounded: emptied when full.
  thread_local StringMap<std::string> memo;
  if (auto it = memo.find(token); it != memo.end()) return it->second;
  sb_stemmer* stemmer = ThreadStemmer();
  if (stemmer == nullptr) return std::string(token);
  const sb_symbol* out = sb_stemmer_stem(stemmer, reinterpret_cast<const sb_symbol*>(token.data()),
                                         static_cast<int>(token.size()));
  if (out == nullptr) return std::string(token);
  std::string stem(reinterpret_cast<const char*>(out), static_cast<std::size_t>(sb_stemmer_length(stemmer)));
  if (memo.size() >= kStemMemo) memo.clear();
  memo.emplace(std::string(token), stem);
  return stem;
}

std::string FoldLatin(std::string_view text) {
  // U+00C0-U+017F: the base letters, one string per code point ("" for the
  // signs of U+00D7 and U+00F7).
  static const char* const kLatin1[64] = {
      "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
      "d", "n", "o", "o", "o", "o", "o", "",  "o", "u", "u", "u", "u", "y", "th", "ss",
      "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
      "d", "n", "o", "o", "o", "o", "o", "",  "o", "u", "u", "u", "u", "y", "th", "y"};
  // U+0100-U+017F by ranges of a base letter.
  struct Range {
    char32_t last;
    const char* base;
  };
  static const Range kExtendedA[] = {
      {0x105, "a"}, {0x10D, "c"}, {0x111, "d"}, {0x11B, "e"}, {0x123, "g"}, {0x127, "h"}, {0x131, "i"},
      {0x133, "ij"}, {0x135, "j"}, {0x138, "k"}, {0x142, "l"}, {0x14B, "n"}, {0x151, "o"}, {0x153, "oe"},
      {0x159, "r"}, {0x161, "s"}, {0x167, "t"}, {0x173, "u"}, {0x175, "w"}, {0x178, "y"}, {0x17E, "z"},
      {0x17F, "s"}};
  std::string out;
  bool folded = false;
  for (std::size_t i = 0; i < text.size();) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    if (b0 < 0x80) {
      out += static_cast<char>(b0 >= 'A' && b0 <= 'Z' ? b0 + 32 : b0);
      ++i;
      continue;
    }
    // Two-byte sequences C3 80 - C5 BF are U+00C0 - U+017F.
    if (i + 1 < text.size() && b0 >= 0xC3 && b0 <= 0xC5) {
      const auto b1 = static_cast<unsigned char>(text[i + 1]);
      if ((b1 & 0xC0) == 0x80) {
        const char32_t cp = static_cast<char32_t>((b0 & 0x1F) << 6 | (b1 & 0x3F));
        const char* base = nullptr;
        if (cp >= 0xC0 && cp <= 0xFF) {
          base = kLatin1[cp - 0xC0];
        } else if (cp >= 0x100) {
          for (const Range& r : kExtendedA) {
            if (cp <= r.last) {
              base = r.base;
              break;
            }
          }
        }
        if (base != nullptr && *base != '\0') {
          out += base;
          folded = true;
          i += 2;
          continue;
        }
      }
    }
    out += static_cast<char>(b0);
    ++i;
  }
  return folded ? out : std::string();
}

std::vector<std::string> Terms(std::string_view text) {
  std::vector<std::string> terms;
  // One word of ASCII letters (a thesaurus entry, a name, a question's
  // word): its one token is the word lower-cased, without the tokenizer.
  if (!text.empty() && text.size() <= kMaxTokenBytes &&
      std::all_of(text.begin(), text.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); })) {
    std::string token(text);
    for (char& c : token) c = c <= 'Z' ? static_cast<char>(c + 32) : c;
    if (!IsStopword(token)) terms.push_back(Stem(token));
    return terms;
  }
  ForEachToken(text, [&](std::string_view token) {
    if (!IsStopword(token)) terms.push_back(Stem(token));
  });
  return terms;
}

void ForEachHyphenPart(std::string_view token, TokenFn fn) {
  if (token.find('-') == std::string_view::npos) return;
  std::size_t start = 0;
  while (start <= token.size()) {
    std::size_t end = token.find('-', start);
    if (end == std::string_view::npos) end = token.size();
    const std::string_view part = token.substr(start, end - start);
    // (Any byte from 0x80 is part of a letter of another script.)
    const bool letter = std::any_of(part.begin(), part.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || static_cast<unsigned char>(c) >= 0x80;
    });
    if (part.size() >= 2 && letter && !IsStopword(part)) fn(part);
    start = end + 1;
  }
}

std::string FtsTerm(std::string_view term) {
  std::string out;
  out.reserve(term.size());
  for (char c : term) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"') continue;
    if (u >= 0x80 || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') out += c;
    else if (c >= 'A' && c <= 'Z') out += static_cast<char>(c + 32);
    else out += '_';
  }
  return out;
}

std::string NormalizeForHash(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    std::size_t j = i;
    while (j < text.size() && !IsSpace(text[j])) ++j;
    // Strip punctuation/symbols (ASCII or not) at both ends of the word.
    std::size_t b = i, e = j;
    while (b < e) {
      char32_t cp = 0;
      const std::size_t len = Decode(text, b, cp);
      if (len == 0 || (cp < 0x80 ? IsAsciiAlnum(cp) : !IsNonAsciiSeparator(cp))) break;
      b += len;
    }
    while (e > b) {
      std::size_t s = e - 1;
      while (s > b && (static_cast<unsigned char>(text[s]) & 0xC0) == 0x80) --s;
      char32_t cp = 0;
      const std::size_t len = Decode(text, s, cp);
      if (len != e - s || (cp < 0x80 ? IsAsciiAlnum(cp) : !IsNonAsciiSeparator(cp))) break;
      e = s;
    }
    if (b < e) {
      if (!out.empty()) out += ' ';
      for (std::size_t k = b; k < e; ++k) {
        const char c = text[k];
        out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
      }
    }
    i = j;
  }
  return out;
}

std::uint64_t ContentHash(std::string_view text) {
  const std::string norm = NormalizeForHash(text);
  return XXH3_64bits(norm.data(), norm.size());
}

std::string Signs(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t len = Decode(text, i, cp);
    if (len == 0) {
      ++i;
      continue;
    }
    bool sign = false;
    if (cp < 0x80) {
      static constexpr std::string_view kPunctuation = ".,;:!?'\"()[]{}`";
      sign = cp > 0x20 && cp < 0x7f && !IsAsciiAlnum(cp) && kPunctuation.find(static_cast<char>(cp)) == std::string_view::npos;
    } else {
      sign = cp > 0xA0 && IsNonAsciiSeparator(cp) && !(cp >= 0x2000 && cp <= 0x206F) &&  // general punctuation
             !(cp >= 0x3000 && cp <= 0x303F) && !(cp >= 0xFE00 && cp <= 0xFE0F) &&       // CJK; variation selectors
             cp != 0xAB && cp != 0xBB && cp != 0xBF && cp != 0xA1;                        // « » ¿ ¡
    }
    if (sign) out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

std::uint64_t SignedContentHash(std::string_view text) {
  const std::string signs = Signs(text);
  if (signs.empty()) return ContentHash(text);
  std::string key = NormalizeForHash(text);
  key += '\x1f';
  key += signs;
  return XXH3_64bits(key.data(), key.size());
}

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

void AppendCacheKeys(std::string_view text, std::vector<std::int64_t>& out) {
  const std::uint64_t plain = ContentHash(text), signed_hash = SignedContentHash(text);
  out.push_back(static_cast<std::int64_t>(signed_hash));
  if (plain != signed_hash) out.push_back(static_cast<std::int64_t>(plain));
}

std::vector<std::string> SplitSentences(std::string_view text) {
  const std::vector<std::string_view> views = SentenceViews(text);
  return {views.begin(), views.end()};
}

std::vector<std::string_view> SentenceViews(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  auto emit = [&](std::size_t end, std::size_t next) {
    const std::string_view s = TrimSpace(text.substr(start, end - start));
    if (!s.empty()) out.push_back(s);
    start = next;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    // ASCII other than a terminator or a line break: nothing to decode.
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80 && b != '.' && b != '!' && b != '?' && b != '\n' && b != '\r') {
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t len = Decode(text, i, cp);
    if (len == 0) {
      ++i;
      continue;
    }
    if (cp == '\n' || cp == '\r') {
      emit(i, i + 1);
      ++i;
      continue;
    }
    const bool wide = cp == 0x3002 || cp == 0xFF01 || cp == 0xFF1F;  // 。！？
    if (!wide && cp != '.' && cp != '!' && cp != '?' && cp != 0x2026) {
      i += len;
      continue;
    }
    std::size_t j = i + len;  // absorb further terminators and closing quotes
    while (j < text.size()) {
      char32_t c2 = 0;
      const std::size_t l2 = Decode(text, j, c2);
      if (l2 == 0) break;
      const bool term = c2 == '.' || c2 == '!' || c2 == '?' || c2 == 0x2026 || c2 == 0x3002 ||
                        c2 == 0xFF01 || c2 == 0xFF1F;
      if (!term && !IsSentenceCloser(c2)) break;
      j += l2;
    }
    const bool at_break = j >= text.size() || IsSpace(text[j]);
    bool split = wide || at_break;
    if (split && !wide && cp == '.' && j == i + 1 && j < text.size()) {
      std::size_t w = i;  // the word before the dot
      while (w > start && !IsSpace(text[w - 1])) --w;
      std::size_t n = j;  // the next non-space character
      while (n < text.size() && IsSpace(text[n]) && text[n] != '\n') ++n;
      const bool next_lower = n < text.size() && text[n] >= 'a' && text[n] <= 'z';
      const std::string_view before = text.substr(w, i - w);
      if (IsAbbreviation(before) || (next_lower && AbbreviationBeforeLower(before))) split = false;
    }
    if (split) emit(j, j);
    i = j;
  }
  emit(text.size(), text.size());
  return out;
}

std::size_t CountWords(std::string_view text) {
  if (text.empty()) return 0;
  // A word starts at a non-space byte that follows a space (or the start).
  // Branch-free over pairs of bytes, summed in chunks of 32-bit counts: the
  // loop vectorises (a context of 2,000 tokens is measured in about 3 us
  // instead of 15).
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  auto space = [](unsigned char c) -> unsigned {
    return static_cast<unsigned>(c == ' ') | static_cast<unsigned>(static_cast<unsigned char>(c - 9) < 5);
  };
  std::size_t words = space(p[0]) ^ 1u;
  for (std::size_t i = 1; i < n;) {
    const std::size_t end = std::min(n, i + 4096);
    std::uint32_t chunk = 0;
    for (; i < end; ++i) chunk += (space(p[i]) ^ 1u) & space(p[i - 1]);
    words += chunk;
  }
  return words;
}

std::size_t ContentWords(std::string_view text) {
  // Letters of unspaced scripts, counted over the text itself: Tokenize
  // drops a token over 80 bytes, which such a sentence's one run can be.
  std::size_t unspaced = 0, run = 0;
  auto close = [&] {
    unspaced += run >= 2 ? run / 2 : run;
    run = 0;
  };
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t len = Decode(text, i, cp);
    if (len == 0) {
      close();
      ++i;
      continue;
    }
    if (IsUnspacedLetter(cp)) {
      ++run;
    } else {
      close();
    }
    i += len;
  }
  close();
  std::size_t words = 0;
  ForEachToken(text, [&](std::string_view token) {
    if (IsStopword(token)) return;
    for (std::size_t i = 0; i < token.size();) {
      char32_t cp = 0;
      const std::size_t len = Decode(token, i, cp);
      if (len == 0 || IsUnspacedLetter(cp)) return;  // (counted above)
      i += len;
    }
    ++words;
  });
  return words + unspaced;
}

int EstimateTokens(std::string_view text) { return EstimateTokensOf(CountWords(text), text.size()); }

int EstimateTokensOf(std::size_t words, std::size_t bytes) {
  if (bytes == 0) return 0;
  const std::size_t by_words = (words * 13 + 9) / 10;
  const std::size_t by_chars = (bytes + 3) / 4;
  const std::size_t est = by_words > by_chars ? by_words : by_chars;
  return est == 0 ? 1 : static_cast<int>(est > 0x7fffffff ? 0x7fffffff : est);
}

std::string OneLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool gap = false;  // inside a run of whitespace
  bool breaks = false;  // ... that holds a line break
  std::size_t run = 0;  // where the run starts in `out`
  for (char c : text) {
    const bool space = c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f';
    if (space) {
      if (!gap) run = out.size();
      gap = true;
      breaks = breaks || c != ' ';
      out += c;
      continue;
    }
    if (gap && breaks) {
      out.resize(run);
      if (!out.empty()) out += ' ';
    }
    gap = breaks = false;
    out += c;
  }
  if (gap) out.resize(run);  // trailing whitespace
  std::size_t lead = 0;
  while (lead < out.size() && out[lead] == ' ') ++lead;
  return out.substr(lead);
}

std::string IndentContinuation(std::string_view text) {
  if (text.find_first_of("\r\n") == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '\n' && c != '\r') {
      out += c;
      continue;
    }
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    out += "\n  ";
  }
  return out;
}

std::string Truncate(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  const bool ellipsis = max_bytes >= 3;
  std::size_t cut = ellipsis ? max_bytes - 3 : max_bytes;
  // Back off continuation bytes so no code point is split.
  std::size_t guard = 0;
  while (cut > 0 && guard < 4 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut, ++guard;
  std::string out(text.substr(0, cut));
  while (!out.empty() && IsSpace(out.back())) out.pop_back();
  if (ellipsis) out += "...";
  return out;
}

const char* StorableTextProblem(std::string_view text) {
  if (!IsValidUtf8(text)) return "not valid UTF-8";
  if (text.find('\0') != std::string_view::npos) return "holds a NUL character (U+0000)";
  return nullptr;
}

void AppendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool IsValidUtf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    char32_t cp = 0;
    const std::size_t len = Decode(text, i, cp);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace engram::text
