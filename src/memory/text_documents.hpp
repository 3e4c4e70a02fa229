// The full-text documents of turns, segments and facts as this build makes
// them, and the pass that brings a store's documents up to these rules when
// they change. A document is the index terms of its source (store/fulltext):
// a new tokenizer rule, stemmer, short form of chat or lexical term changes
// what a text's document holds, and rows indexed before would otherwise keep
// the old one: a question asking for "girlfriend" would not find a fact
// written "my gf" before short forms were indexed.
#pragma once

#include <string>
#include <vector>

#include "engram/status.hpp"
#include "store/db.hpp"

namespace engram::memory {

// The rules' version: bump it whenever a change makes any document differ
// (text::Terms, text::FtsTerm, text::FullForm, facts::LexicalTerms,
// RenderExchange). The test TextDocuments.DocumentsChangeOnlyWithTheVersion
// pins the documents of sample texts to it.
inline constexpr int kTextRulesVersion = 1;
// The store's meta key that records the version its documents follow.
inline constexpr const char* kTextRulesMeta = "text_rules_version";

// A turn's document: its two messages with their speakers' names.
std::string TurnDocument(const std::string& user_name, const std::string& user_text,
                         const std::string& assistant_name, const std::string& assistant_text);
// A segment's document: its summary and keywords.
std::string SegmentDocument(const std::string& summary, const std::vector<std::string>& keywords);
// (A fact's: facts::LexicalDocument.)

// When the store's meta `text_rules_version` is missing or below
// kTextRulesVersion, every indexed row's document is made again from its
// source row and replaced where it differs, `batch` rows per write
// transaction (other writers wait one batch at most); then the meta records
// the version. A store at a later version (written by a newer build) is left
// alone. Idempotent and safe to interrupt: a pass that stops is run again in
// full by the next open, and finds the rows it rewrote equal. A store that
// cannot be written (read-only media) gives PermissionDenied at once, before
// any row is read.
Status RefreshTextDocuments(sql::Db* db, int batch = 500);

}  // namespace engram::memory
