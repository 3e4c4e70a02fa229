#include "memory/text_documents.hpp"

#include <charconv>

#include "memory/facts/fact_text.hpp"
#include "memory/stm.hpp"
#include "store/fulltext.hpp"
#include "store/schema.hpp"

namespace engram::memory {

namespace {

// The version a meta value records (0 when missing or not a number).
int VersionOf(const std::string& value) {
  int v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  return ec == std::errc() && end == value.data() + value.size() && v > 0 ? v : 0;
}

std::string DocumentOf(store::FullText table, const std::vector<std::string>& c) {
  switch (table) {
    case store::FullText::kTurns:
      return c.size() == 4 ? TurnDocument(c[0], c[1], c[2], c[3]) : std::string();
    case store::FullText::kSegments:
      return c.empty() ? std::string() : SegmentDocument(c[0], std::vector<std::string>(c.begin() + 1, c.end()));
    case store::FullText::kFacts:
      return c.size() == 1 ? facts::LexicalDocument(c[0]) : std::string();
  }
  return {};
}

}  // namespace

std::string TurnDocument(const std::string& user_name, const std::string& user_text,
                         const std::string& assistant_name, const std::string& assistant_text) {
  // Speaker names are indexed with the text: questions name people.
  return store::FtsDocument(RenderExchange(user_name, user_text, assistant_name, assistant_text));
}

std::string SegmentDocument(const std::string& summary, const std::vector<std::string>& keywords) {
  std::string doc = store::FtsDocument(summary);
  for (const auto& k : keywords) doc += " " + store::FtsDocument(k);
  return doc;
}

Status RefreshTextDocuments(sql::Db* db, int batch) {
  if (batch < 1) batch = 1;
  ENGRAM_ASSIGN_OR_RETURN(std::string recorded, store::GetMeta(db, kTextRulesMeta));
  if (VersionOf(recorded) >= kTextRulesVersion) return Status::Ok();
  {
    // A store that cannot be written says so here, before a pass over its
    // rows (the value written is the one read: nothing changes).
    ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
    ENGRAM_RETURN_IF_ERROR(store::SetMeta(db, kTextRulesMeta, recorded));
    ENGRAM_RETURN_IF_ERROR(txn->Commit());
  }
  for (store::FullText table : {store::FullText::kTurns, store::FullText::kSegments, store::FullText::kFacts}) {
    std::int64_t after = 0;
    for (;;) {
      // Read and rewrite in one transaction: a source changed by another
      // writer meanwhile is rewritten by that writer under the same rules.
      ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(db));
      ENGRAM_ASSIGN_OR_RETURN(std::vector<store::TextSource> rows, store::TextSourcesAfter(db, table, after, batch));
      for (const auto& r : rows) {
        const std::string doc = DocumentOf(table, r.columns);
        if (doc != r.terms) ENGRAM_RETURN_IF_ERROR(store::ReindexText(db, table, r.rowid, r.scope_id, doc));
      }
      if (!rows.empty()) after = rows.back().rowid;
      const bool last = static_cast<int>(rows.size()) < batch;
      if (last && table == store::FullText::kFacts) {
        ENGRAM_RETURN_IF_ERROR(store::SetMeta(db, kTextRulesMeta, std::to_string(kTextRulesVersion)));
      }
      ENGRAM_RETURN_IF_ERROR(txn->Commit());
      if (last) break;
    }
  }
  return Status::Ok();
}

}  // namespace engram::memory
