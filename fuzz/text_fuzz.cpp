// UTF-8 and the tokenizer (core/text), against two other UTF-8 checkers (the
// MCP layer's and nlohmann's). Invariants: the checkers agree; tokens are
// non-empty, at most 80 bytes, and valid UTF-8 when the text is; index terms
// and FTS terms are tokens' forms; Truncate keeps its bound and never splits
// a code point; the hash normalisation is idempotent; sentences are trimmed
// and non-empty; the token estimate is positive for non-empty text.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "fuzz_support.hpp"
#include "mcp/protocol.hpp"

namespace text = engram::text;

namespace {

bool NlohmannAcceptsUtf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();  // strict: throws type_error 316 on invalid UTF-8
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string s(engram::fuzz::AsText(data, size));
  const bool valid = text::IsValidUtf8(s);
  FUZZ_CHECK(valid == engram::mcp::IsValidUtf8(s), "text::IsValidUtf8 and mcp::IsValidUtf8 disagree");
  FUZZ_CHECK(valid == NlohmannAcceptsUtf8(s), "text::IsValidUtf8 and nlohmann disagree");

  for (const std::string& tok : text::Tokenize(s)) {
    FUZZ_CHECK(!tok.empty() && tok.size() <= 80, "token of " + std::to_string(tok.size()) + " bytes");
    if (valid) FUZZ_CHECK(text::IsValidUtf8(tok), "invalid UTF-8 token from valid text");
    for (const char c : tok) FUZZ_CHECK(!IsSpace(c) && c != '\0', "space or NUL in a token");
    const std::string fts = text::FtsTerm(tok);
    for (const char c : fts) {
      const auto u = static_cast<unsigned char>(c);
      FUZZ_CHECK(u >= 0x80 || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_', "FtsTerm kept " + fts);
    }
  }
  std::vector<std::string> each;
  text::ForEachToken(s, [&](std::string_view tok) { each.emplace_back(tok); });
  FUZZ_CHECK(each == text::Tokenize(s), "ForEachToken and Tokenize disagree");
  for (const std::string& term : text::Terms(s)) {
    FUZZ_CHECK(!term.empty(), "empty term");
  }

  const std::string norm = text::NormalizeForHash(s);
  FUZZ_CHECK(text::NormalizeForHash(norm) == norm, "NormalizeForHash is not idempotent");
  FUZZ_CHECK(text::ContentHash(s) == text::ContentHash(norm), "ContentHash differs from its normal form's");

  for (const std::string& sentence : text::SplitSentences(s)) {
    FUZZ_CHECK(!sentence.empty(), "empty sentence");
    FUZZ_CHECK(!IsSpace(sentence.front()) && !IsSpace(sentence.back()), "untrimmed sentence");
  }

  const int tokens = text::EstimateTokens(s);
  FUZZ_CHECK(tokens >= 0 && (s.empty() || tokens > 0), "EstimateTokens " + std::to_string(tokens));

  for (const std::size_t max : {std::size_t{0}, std::size_t{2}, std::size_t{3}, std::size_t{7}, size / 2, size}) {
    const std::string cut = text::Truncate(s, max);
    if (s.size() <= max) FUZZ_CHECK(cut == s, "Truncate changed a text within its bound");
    else FUZZ_CHECK(cut.size() <= max, "Truncate to " + std::to_string(max) + " gave " + std::to_string(cut.size()));
    if (valid) FUZZ_CHECK(text::IsValidUtf8(cut), "Truncate split a code point");
  }
  return 0;
}
