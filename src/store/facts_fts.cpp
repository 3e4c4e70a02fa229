#include "store/facts_fts.hpp"

#include "store/fulltext.hpp"

namespace engram::store {

namespace {

Result<std::vector<FactTextHit>> Collect(sql::Stmt* st) {
  std::vector<FactTextHit> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back(FactTextHit{st->Int(0), st->Double(1)});
  }
  st->Reset();
  return out;
}

}  // namespace

Result<std::vector<FactTextHit>> FindFactText(sql::Db* db, const std::vector<std::string>& terms,
                                              const std::string& scope_token, std::size_t limit) {
  if (terms.empty()) return std::vector<FactTextHit>{};
  sql::Stmt* st = nullptr;
  if (db->dialect() == sql::Dialect::kSqlite) {
    ENGRAM_ASSIGN_OR_RETURN(st, db->Prepare("SELECT rowid, bm25(facts_fts, 0.0, 1.0) AS s FROM facts_fts "
                                            "WHERE facts_fts MATCH ? ORDER BY s LIMIT ?"));
    st->Bind(1, Fts5MatchText(scope_token, terms)).Bind(2, static_cast<std::int64_t>(limit));
  } else {
    // (The scope as "x.scope = ?" only when given: "(? = '' OR x.scope = ?)"
    // keeps a generic plan from the scope's index.)
    const bool scoped = !scope_token.empty();
    ENGRAM_ASSIGN_OR_RETURN(
        st,
        db->Prepare(
            std::string(
                "SELECT x.rowid, -ts_rank(x.tsv, q) AS s FROM facts_fts x, to_tsquery('simple', "
                "?1) q WHERE x.tsv @@ q ") +
            (scoped ? "AND x.scope = ?2 ORDER BY s, x.rowid LIMIT ?3"
                    : "ORDER BY s, x.rowid LIMIT ?2")));
    st->Bind(1, TsQueryText(terms));
    if (scoped) st->Bind(2, scope_token);
    st->Bind(scoped ? 3 : 2, static_cast<std::int64_t>(limit));
  }
  return Collect(st);
}

Result<std::vector<FactTextHit>> FindFactTextWhere(sql::Db* db, const std::vector<std::string>& terms,
                                                   const std::string& scope_token, const FactSelector& selector,
                                                   std::size_t limit) {
  if (terms.empty()) return std::vector<FactTextHit>{};
  ENGRAM_ASSIGN_OR_RETURN(SqlCond c, FactCondition(db->dialect(), selector));
  sql::Stmt* st = nullptr;
  int next = 0;
  if (db->dialect() == sql::Dialect::kSqlite) {
    // CROSS JOIN keeps the FTS match as the outer loop (else SQLite may probe
    // the match once per filtered row).
    ENGRAM_ASSIGN_OR_RETURN(
        st, db->Prepare("SELECT f.id, bm25(facts_fts, 0.0, 1.0) AS s FROM facts_fts CROSS JOIN facts f ON f.id = "
                        "facts_fts.rowid AND f.tenant = facts_fts.tenant WHERE facts_fts MATCH ? AND " + c.sql +
                        " ORDER BY s LIMIT ?"));
    st->Bind(1, Fts5MatchText(scope_token, terms));
    next = 2;
  } else {
    const bool scoped = !scope_token.empty();
    ENGRAM_ASSIGN_OR_RETURN(
        st,
        db->Prepare("SELECT f.id, -ts_rank(x.tsv, q) AS s FROM facts_fts x CROSS JOIN "
                    "to_tsquery('simple', ?) q "
                    "JOIN facts f ON f.id = x.rowid AND f.tenant = x.tenant WHERE x.tsv @@ q AND " +
                    std::string(scoped ? "x.scope = ? AND " : "") + c.sql +
                    " ORDER BY s, f.id LIMIT ?"));
    st->Bind(1, TsQueryText(terms));
    if (scoped) st->Bind(2, scope_token);
    next = scoped ? 3 : 2;
  }
  BindArgs(st, c.args, next);
  st->Bind(static_cast<int>(c.args.size()) + next, static_cast<std::int64_t>(limit));
  return Collect(st);
}

}  // namespace engram::store
