#include "store/fulltext.hpp"

#include <algorithm>

#include "core/json_lists.hpp"
#include "core/text.hpp"
#include "store/schema.hpp"

namespace engram::store {

namespace {

const char* TableName(FullText t) {
  switch (t) {
    case FullText::kTurns:
      return "turns_fts";
    case FullText::kSegments:
      return "segments_fts";
    case FullText::kFacts:
      return "facts_fts";
  }
  return "turns_fts";
}

// FTS5: scope:"s42" AND (terms:"a" OR terms:"b"); every term is quoted (terms
// hold no double quote: FtsTerm drops them).
std::string Fts5MatchImpl(const std::string& scope_token, const std::vector<std::string>& terms) {
  std::string any;
  for (const auto& t : terms) {
    if (!any.empty()) any += " OR ";
    any += "terms:\"" + t + "\"";
  }
  if (scope_token.empty()) return any;
  return "scope:" + scope_token + " AND (" + any + ")";
}

// tsquery: 'a' | 'b' (terms hold no single quote: FtsTerm maps it to '_').
std::string TsQueryImpl(const std::vector<std::string>& terms) {
  std::string q;
  for (const auto& t : terms) {
    if (!q.empty()) q += " | ";
    q += "'" + t + "'";
  }
  return q;
}

}  // namespace

std::string ScopeToken(std::int64_t scope_id) { return "s" + std::to_string(scope_id); }

std::string FtsDocument(const std::string& s) {
  std::string out;
  for (const auto& t : text::Terms(s)) {
    std::string f = text::FtsTerm(t);
    if (f.empty()) continue;
    if (!out.empty()) out.push_back(' ');
    out += f;
  }
  return out;
}

std::vector<std::string> QueryTerms(const std::string& query) {
  std::vector<std::string> out;
  auto add = [&](std::string f) {
    if (!f.empty() && std::find(out.begin(), out.end(), f) == out.end()) out.push_back(std::move(f));
  };
  for (const std::string& token : text::Tokenize(query)) {
    if (text::IsStopword(token)) continue;
    add(text::FtsTerm(text::Stem(token)));
    if (const std::string_view full = text::FullForm(token); !full.empty()) add(text::FtsTerm(text::Stem(full)));
  }
  return out;
}

Status IndexText(sql::Db* db, FullText table, std::int64_t rowid, std::int64_t scope_id, const std::string& doc) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(std::string("INSERT INTO ") + TableName(table) +
                                                      "(rowid, scope, terms, tenant) VALUES(?1, ?2, ?3, " +
                                                      ScopeTenantSql(4) + ")"));
  return st->Bind(1, rowid).Bind(2, ScopeToken(scope_id)).Bind(3, doc).Bind(4, scope_id).Run();
}

Status ReindexText(sql::Db* db, FullText table, std::int64_t rowid, std::int64_t scope_id, const std::string& doc) {
  ENGRAM_RETURN_IF_ERROR(UnindexText(db, table, rowid));
  return IndexText(db, table, rowid, scope_id, doc);
}

Status UnindexText(sql::Db* db, FullText table, std::int64_t rowid) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare(std::string("DELETE FROM ") + TableName(table) + " WHERE rowid = ?1"));
  return st->Bind(1, rowid).Run();
}

Result<std::vector<TextHit>> SearchText(sql::Db* db, FullText table, const std::string& scope_token,
                                        const std::vector<std::string>& terms, int limit) {
  std::vector<TextHit> out;
  if (terms.empty()) return out;
  const std::string t = TableName(table);
  sql::Stmt* st = nullptr;
  if (db->dialect() == sql::Dialect::kSqlite) {
    // bm25 is lower-is-better; column weights: scope 0, terms 1.
    ENGRAM_ASSIGN_OR_RETURN(st, db->Prepare("SELECT rowid, -bm25(" + t + ", 0.0, 1.0) AS s FROM " + t +
                                            " WHERE " + t + " MATCH ?1 ORDER BY s DESC LIMIT ?2"));
    st->Bind(1, Fts5MatchImpl(scope_token, terms)).Bind(2, std::int64_t{limit});
  } else {
    // (The scope as "scope = ?" only when given: "(? = '' OR scope = ?)"
    // keeps a generic plan from the scope's index.)
    const bool scoped = !scope_token.empty();
    ENGRAM_ASSIGN_OR_RETURN(
        st, db->Prepare("SELECT rowid, ts_rank(tsv, q) AS s FROM " + t +
                        ", to_tsquery('simple', ?1) q WHERE " + (scoped ? "scope = ?2 AND " : "") +
                        "tsv @@ q ORDER BY s DESC, rowid LIMIT " + (scoped ? "?3" : "?2")));
    st->Bind(1, TsQueryImpl(terms));
    if (scoped) st->Bind(2, scope_token);
    st->Bind(scoped ? 3 : 2, std::int64_t{limit});
  }
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back({st->Int(0), st->Double(1)});
  }
  st->Reset();
  return out;
}

Status ScanTextRows(sql::Db* db, FullText table, std::int64_t scope_id,
                    const std::function<void(std::int64_t rowid, const std::string& terms)>& sink) {
  if (db->dialect() != sql::Dialect::kSqlite) return Status::FailedPrecondition("full-text rows: SQLite only");
  const std::string t = TableName(table);
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare("SELECT rowid, terms FROM " + t + " WHERE " + t + " MATCH ?1 ORDER BY rowid"));
  st->Bind(1, "scope:" + ScopeToken(scope_id));
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    sink(st->Int(0), st->Text(1));
  }
  st->Reset();
  return Status::Ok();
}

Result<std::vector<TextSource>> TextSourcesAfter(sql::Db* db, FullText table, std::int64_t after, int limit) {
  const char* source = "";
  const char* columns = "";
  switch (table) {
    case FullText::kTurns:
      source = "turns";
      columns = "s.user_name, s.user_text, s.assistant_name, s.assistant_text";
      break;
    case FullText::kSegments:
      source = "segments";
      columns = "s.summary, s.keywords";
      break;
    case FullText::kFacts:
      source = "facts";
      columns = "s.text";
      break;
  }
  const std::string t = TableName(table);
  // The source's primary key leads (the index's rowid is its id); on
  // PostgreSQL the index's key is (tenant, rowid).
  const std::string join = db->dialect() == sql::Dialect::kSqlite ? "f.rowid = s.id"
                                                                   : "f.tenant = s.tenant AND f.rowid = s.id";
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st,
                          db->Prepare(std::string("SELECT s.id, s.scope_id, f.terms, ") + columns + " FROM " + source +
                                      " s JOIN " + t + " f ON " + join +
                                      " WHERE s.id > ?1 ORDER BY s.id LIMIT ?2"));
  st->Bind(1, after).Bind(2, std::int64_t{limit});
  std::vector<TextSource> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    TextSource x;
    x.rowid = st->Int(0);
    x.scope_id = st->Int(1);
    x.terms = st->Text(2);
    if (table == FullText::kSegments) {
      x.columns.push_back(st->Text(3));
      for (auto& k : json_lists::StringsFromJson(st->Text(4))) x.columns.push_back(std::move(k));
    } else {
      for (int c = 3; c < (table == FullText::kTurns ? 7 : 4); ++c) x.columns.push_back(st->Text(c));
    }
    out.push_back(std::move(x));
  }
  st->Reset();
  return out;
}

std::string Fts5MatchText(const std::string& scope_token, const std::vector<std::string>& terms) {
  return Fts5MatchImpl(scope_token, terms);
}

std::string TsQueryText(const std::vector<std::string>& terms) { return TsQueryImpl(terms); }

Status OptimizeText(sql::Db* db, FullText table) {
  if (db->dialect() != sql::Dialect::kSqlite) return Status::Ok();
  const std::string t = TableName(table);
  return db->Exec("INSERT INTO " + t + "(" + t + ") VALUES('optimize')");
}

}  // namespace engram::store
