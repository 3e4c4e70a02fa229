// Text processing shared by indexing, the built-in embedder and the built-in
// maintenance engine. All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engram::text {

// Lower-cased word tokens of UTF-8 text. A token is a run of letters/digits
// (any script; non-ASCII code points are kept as they are, ASCII is
// lower-cased). Inner '-', '.', '_', '\'' , '+', '#' joining alphanumerics are kept
// so that "gpt-4", "node.js", "e-mail", "c++", "c#" stay one token; a
// trailing "'s" is dropped ("Caroline's" -> "caroline"). Invalid UTF-8 bytes
// are treated as separators.
std::vector<std::string> Tokenize(std::string_view text);

// True for common function words (English list; short and conservative).
bool IsStopword(std::string_view token);

// Snowball English stem of one lower-cased token (tokens with digits or
// inner punctuation are returned unchanged). Thread-safe (one stemmer per thread).
std::string Stem(std::string_view token);

// Index terms: Tokenize, drop stopwords, Stem. Order kept, duplicates kept.
std::vector<std::string> Terms(std::string_view text);

// FTS5-safe form of a term: characters outside [a-z0-9_] and non-ASCII
// bytes are kept except '"' ; inner punctuation is mapped to '_'
// ("gpt-4" -> "gpt_4", "node.js" -> "node_js").
std::string FtsTerm(std::string_view term);

// Normalised form used for exact-duplicate detection: NFC is not applied;
// lower-case ASCII, collapse whitespace, strip punctuation at the ends of
// words, trim. "  I LOVE  Hanoi!! " -> "i love hanoi".
std::string NormalizeForHash(std::string_view text);

// 64-bit hash (xxh3) of NormalizeForHash(text).
std::uint64_t ContentHash(std::string_view text);

// Sentences of a text (split on . ! ? and newlines; keeps abbreviations
// such as "Dr." and decimals like "3.5" inside a sentence). Trimmed, non-empty.
std::vector<std::string> SplitSentences(std::string_view text);

// Estimated LLM tokens of a text (about 4 characters or 0.75 words per token;
// never 0 for non-empty text). Deterministic.
int EstimateTokens(std::string_view text);

// Truncates UTF-8 text to at most max_bytes without splitting a code point,
// adding "..." when cut.
std::string Truncate(std::string_view text, std::size_t max_bytes);

// True when the text is valid UTF-8.
bool IsValidUtf8(std::string_view text);

}  // namespace engram::text
