// Text helpers of the fact store: the lexical document of a fact, the FTS5
// query of a search, and the built-in entity extractor. Pure, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "memory/facts/fact_store.hpp"

namespace engram::memory::facts {

// Index terms of a text (text::Terms in FTS-safe form), plus the parts of
// compound terms ("gpt-4" -> gpt_4, gpt, 4; "node.js" -> node_js, node, js)
// and character bigrams of CJK runs, so that compounds, their parts and
// unsegmented scripts all match. Deduplicated, in order of first occurrence.
std::vector<std::string> LexicalTerms(std::string_view text);
// LexicalTerms joined by spaces (the facts_fts `terms` column).
std::string LexicalDocument(std::string_view text);

// Built-in entities of a text: runs of capitalised words (proper names; a
// sentence's first word only when it is not a common word), quoted spans, and
// identifiers (tokens with digits or inner punctuation: gpt-4, node.js,
// v2.1). Deduplicated by normalised name.
std::vector<EntityRef> ExtractEntities(std::string_view text);
// The normalised form entities are stored and matched by (lower-case ASCII,
// trimmed, inner whitespace collapsed, trailing "'s" dropped).
std::string NormalizeEntity(std::string_view name);
// Names a query may refer to: its extracted entities and its tokens and
// token pairs, normalised and deduplicated.
std::vector<std::string> QueryEntityNames(std::string_view query);

}  // namespace engram::memory::facts
