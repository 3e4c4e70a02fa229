#include "store/facts_filter_sql.hpp"

#include <set>

namespace engram::store {

namespace {

// Deeper trees are refused (memory::facts::ParseFilter stops at 16 levels).
constexpr int kMaxDepth = 64;

bool KnownColumn(const std::string& c) {
  static const std::set<std::string> k = {"kind",       "role",       "actor",      "attributed_to",
                                          "status",     "created_at", "updated_at", "event_time",
                                          "expires_at", "version"};
  return k.count(c) > 0;
}

// SQLite's JSON path: $."a"."b".
std::string SqlitePath(const std::vector<std::string>& parts) {
  std::string p = "$";
  for (const auto& part : parts) p += ".\"" + part + "\"";
  return p;
}

// PostgreSQL's text[] literal of a jsonb path: {"a","b"}.
std::string PgPath(const std::vector<std::string>& parts) {
  std::string p = "{";
  for (std::size_t i = 0; i < parts.size(); ++i) p += (i ? ",\"" : "\"") + parts[i] + "\"";
  return p + "}";
}

const char* Sym(FactFilterOp op) {
  switch (op) {
    case FactFilterOp::kGt: return ">";
    case FactFilterOp::kGte: return ">=";
    case FactFilterOp::kLt: return "<";
    default: return "<=";
  }
}

bool IsNumber(const SqlArg& a) { return a.type == SqlArg::kInt || a.type == SqlArg::kReal; }

// Builds a fragment: text, arguments ("?") and sub-fragments, in order.
struct Sql {
  SqlCond c;
  Sql& operator<<(std::string_view s) {
    c.sql += s;
    return *this;
  }
  Sql& operator<<(const SqlCond& sub) {
    c.sql += sub.sql;
    c.args.insert(c.args.end(), sub.args.begin(), sub.args.end());
    return *this;
  }
  Sql& Arg(SqlArg a) {
    c.sql += '?';
    c.args.push_back(std::move(a));
    return *this;
  }
  Sql& Args(const std::vector<SqlArg>& v) {  // ?,?,...
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) c.sql += ',';
      Arg(v[i]);
    }
    return *this;
  }
};

SqlCond Frag(std::string sql, std::vector<SqlArg> args = {}) { return SqlCond{std::move(sql), std::move(args)}; }

// ASCII case folding, as SQLite's lower() without ICU.
constexpr const char* kPgFold =
    ", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')";

// ISO-8601 times PostgreSQL can read, without and with a zone (anything
// else is not a time: NULL, as julianday() answers in SQLite).
constexpr const char* kPgNaiveTime =
    "'^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?)?$'";
constexpr const char* kPgZonedTime =
    "'^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?([Zz]|[+-][0-9]{2}:[0-9]{2})$'";

class Renderer {
 public:
  explicit Renderer(sql::Dialect d) : pg_(d == sql::Dialect::kPostgres) {}

  Result<SqlCond> Node(const FactFilter& f, int depth) {
    if (depth > kMaxDepth) return Status::InvalidArgument("filter: nested too deeply");
    switch (f.op) {
      case FactFilterOp::kAll:
      case FactFilterOp::kAny: {
        if (f.children.empty()) return Frag(pg_ ? "TRUE" : "1");
        Sql s;
        for (std::size_t i = 0; i < f.children.size(); ++i) {
          ENGRAM_ASSIGN_OR_RETURN(SqlCond sub, Node(f.children[i], depth + 1));
          if (i) s << (f.op == FactFilterOp::kAll ? " AND " : " OR ");
          s << "(" << sub << ")";
        }
        return s.c;
      }
      case FactFilterOp::kNot: {
        if (f.children.size() != 1) return Status::InvalidArgument("filter: NOT takes one condition");
        ENGRAM_ASSIGN_OR_RETURN(SqlCond sub, Node(f.children[0], depth + 1));
        // A condition that is NULL (an absent metadata key) counts as false.
        return (Sql() << "NOT coalesce((" << sub << (pg_ ? "), FALSE)" : "), 0)")).c;
      }
      default:
        return Compare(f);
    }
  }

 private:
  Result<SqlCond> Compare(const FactFilter& f) {
    meta_ = f.field.kind == FactFilterField::Kind::kMetadata;
    if (meta_ ? f.field.path.empty() : !KnownColumn(f.field.column)) {
      return Status::InvalidArgument("filter: unknown field \"" + f.field.column + "\"");
    }
    column_ = f.field.column;
    path_ = meta_ ? (pg_ ? PgPath(f.field.path) : SqlitePath(f.field.path)) : std::string();
    const auto& v = f.values;
    switch (f.op) {
      case FactFilterOp::kIsNull:
      case FactFilterOp::kNotNull:
        if (!v.empty()) break;
        return NullTest(f.op == FactFilterOp::kIsNull);
      case FactFilterOp::kEq:
      case FactFilterOp::kNe:
        if (v.size() != 1) break;
        return Equal(v, false, f.op == FactFilterOp::kNe);
      case FactFilterOp::kIn:
      case FactFilterOp::kNin:
        if (v.empty()) break;
        return Equal(v, true, f.op == FactFilterOp::kNin);
      case FactFilterOp::kGt:
      case FactFilterOp::kGte:
      case FactFilterOp::kLt:
      case FactFilterOp::kLte:
        if (v.size() != 1 || (meta_ && !IsNumber(v[0]))) break;
        return Order(Sym(f.op), v[0], f.as_instant);
      case FactFilterOp::kContains:
      case FactFilterOp::kIContains:
        if (v.size() != 1 || v[0].type != SqlArg::kText) break;
        return Contains(v[0], f.op == FactFilterOp::kIContains);
      default:
        break;
    }
    return Status::InvalidArgument("filter: wrong values for a condition on \"" +
                                   (meta_ ? SqlitePath(f.field.path) : column_) + "\"");
  }

  // The field as SQLite reads it (a metadata value as json_extract gives it).
  SqlCond X() const {
    if (!meta_) return Frag("f." + column_);
    return Frag("json_extract(f.metadata, ?)", {SqlArg::Text(path_)});
  }
  SqlCond SqliteType() const { return Frag("json_type(f.metadata, ?)", {SqlArg::Text(path_)}); }

  // PostgreSQL: the metadata value as jsonb (E), as text (S), its JSON type.
  SqlCond E() const { return Frag("(CAST(f.metadata AS jsonb) #> CAST(? AS text[]))", {SqlArg::Text(path_)}); }
  SqlCond S() const { return Frag("(CAST(f.metadata AS jsonb) #>> CAST(? AS text[]))", {SqlArg::Text(path_)}); }
  SqlCond Type() const { return (Sql() << "jsonb_typeof(" << E() << ")").c; }
  // The value SQLite compares with a number (a boolean is 1 or 0 unless
  // `numbers_only`; NULL for strings, as no number equals a text there).
  SqlCond PgNumber(bool numbers_only) const {
    Sql s;
    s << "CASE " << Type() << " WHEN 'number' THEN CAST(" << S() << " AS numeric)";
    if (!numbers_only) s << " WHEN 'boolean' THEN CAST(CAST(" << S() << " AS boolean) AS integer)";
    return (s << " END").c;
  }
  SqlCond PgText() const { return (Sql() << "CASE WHEN " << Type() << " = 'string' THEN " << S() << " END").c; }
  // A JSON value's text as SQLite's CAST(value AS TEXT) gives it.
  static SqlCond PgValueText(const SqlCond& v) {
    return (Sql() << "CASE WHEN jsonb_typeof(" << v << ") = 'boolean' THEN CASE WHEN CAST(" << v
                  << " #>> '{}' AS boolean) THEN '1' ELSE '0' END ELSE " << v << " #>> '{}' END")
        .c;
  }

  SqlCond NullTest(bool is_null) const {
    if (meta_ && pg_) return (Sql() << "coalesce(" << Type() << ", 'null') " << (is_null ? "=" : "<>") << " 'null'").c;
    return (Sql() << X() << (is_null ? " IS NULL" : " IS NOT NULL")).c;
  }

  // eq / ne (one value) and in / nin (a list).
  SqlCond Equal(const std::vector<SqlArg>& values, bool list, bool negate) const {
    if (!(meta_ && pg_)) {
      Sql s;
      if (negate) s << "(" << X() << " IS NULL OR ";
      s << X() << (negate ? (list ? " NOT IN (" : " <> ") : (list ? " IN (" : " = "));
      s.Args(values);
      return (s << (list ? ")" : "") << (negate ? ")" : "")).c;
    }
    // PostgreSQL metadata: numbers (and booleans) against numbers, texts
    // against texts, as SQLite compares values of different types unequal.
    std::vector<SqlArg> numbers, texts;
    for (const auto& a : values) (IsNumber(a) ? numbers : texts).push_back(a);
    Sql s;
    s << (negate ? "NOT coalesce((" : "(");
    if (!numbers.empty()) (s << PgNumber(false) << " IN (").Args(numbers) << ")";
    if (!numbers.empty() && !texts.empty()) s << " OR ";
    if (!texts.empty()) (s << PgText() << " IN (").Args(texts) << ")";
    return (s << (negate ? "), FALSE)" : ")")).c;
  }

  SqlCond Order(const char* sym, const SqlArg& value, bool as_instant) const {
    Sql s;
    if (!meta_) {
      s << X();
    } else if (!as_instant) {  // numbers only (not booleans)
      if (pg_) {
        s << PgNumber(true);
      } else {
        s << SqliteType() << " IN ('integer','real') AND " << X();
      }
    } else if (!pg_) {
      s << "(julianday(" << X() << ") - 2440587.5) * 86400000.0";
    } else {
      s << "CASE WHEN " << Type() << " <> 'string' THEN NULL WHEN " << S() << " ~ " << kPgNaiveTime
        << " THEN extract(epoch FROM CAST(" << S() << " AS timestamp)) * 1000 WHEN " << S() << " ~ "
        << kPgZonedTime << " THEN extract(epoch FROM CAST(" << S() << " AS timestamptz)) * 1000 END";
    }
    s << " " << sym << " ";
    return s.Arg(value).c;
  }

  // Whether `text` (SQL of a text value) contains the argument.
  Sql& Test(Sql& s, const SqlCond& text, const SqlArg& value, bool fold) const {
    if (pg_) {
      if (fold) {
        s << "strpos(translate(" << text << kPgFold << ", translate(CAST(";
        return s.Arg(value) << " AS text)" << kPgFold << ") > 0";
      }
      s << "strpos(" << text << ", CAST(";
      return s.Arg(value) << " AS text)) > 0";
    }
    s << (fold ? "instr(lower(" : "instr(") << text << (fold ? "), lower(" : ", ");
    return s.Arg(value) << (fold ? ")) > 0" : ") > 0");
  }

  SqlCond Contains(const SqlArg& value, bool fold) const {
    Sql s;
    if (!meta_) {
      return Test(s, pg_ ? (Sql() << "CAST(" << X() << " AS text)").c : X(), value, fold).c;
    }
    // Arrays: any element; anything else: its text.
    if (pg_) {
      s << "CASE WHEN " << Type() << " = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN "
        << Type() << " = 'array' THEN " << E() << " END) AS el(v) WHERE ";
      Test(s, PgValueText(Frag("el.v")), value, fold) << ") ELSE coalesce(";
      return (Test(s, PgValueText(E()), value, fold) << ", FALSE) END").c;
    }
    s << "CASE WHEN " << SqliteType() << " = 'array' THEN EXISTS (SELECT 1 FROM json_each(f.metadata, ";
    s.Arg(SqlArg::Text(path_)) << ") WHERE ";
    Test(s, Frag("CAST(value AS TEXT)"), value, fold) << ") ELSE coalesce(";
    return (Test(s, (Sql() << "CAST(" << X() << " AS TEXT)").c, value, fold) << ", 0) END").c;
  }

  bool pg_;
  bool meta_ = false;
  std::string column_;
  std::string path_;  // of the current metadata comparison, in the dialect's form
};

SqlCond ScopeSql(const FactScopeKey& k) {
  if (!k.narrower) {
    return Frag("f.tenant = ? AND f.scope_id = (SELECT id FROM scopes WHERE tenant = ? AND user_id = ? AND "
                "assistant_id = ?) AND f.user_id = ? AND f.agent_id = ? AND f.run_id = ?",
                {SqlArg::Text(k.row.tenant), SqlArg::Text(k.row.tenant), SqlArg::Text(k.row.user),
                 SqlArg::Text(k.row.assistant), SqlArg::Text(k.user), SqlArg::Text(k.agent), SqlArg::Text(k.run)});
  }
  // Narrower: the user id stays exact; an absent agent or run id matches any.
  SqlCond c = Frag("f.tenant = ? AND f.scope_id IN (SELECT id FROM scopes WHERE tenant = ? AND user_id = ?) AND "
                   "f.user_id = ?",
                   {SqlArg::Text(k.row.tenant), SqlArg::Text(k.row.tenant), SqlArg::Text(k.row.user),
                    SqlArg::Text(k.user)});
  if (!k.agent.empty()) {
    c.sql += " AND f.agent_id = ?";
    c.args.push_back(SqlArg::Text(k.agent));
  }
  if (!k.run.empty()) {
    c.sql += " AND f.run_id = ?";
    c.args.push_back(SqlArg::Text(k.run));
  }
  return c;
}

SqlCond StatesSql(FactStates states, TimeMs now) {
  switch (states) {
    case FactStates::kVisible:
      return Frag("f.status = 'live' AND (f.expires_at IS NULL OR f.expires_at > ?)", {SqlArg::Int(now)});
    case FactStates::kLive:
      return Frag("f.status = 'live'");
    case FactStates::kCurrent:
      return Frag("f.status <> 'superseded'");
    case FactStates::kUnpurged:
      break;
  }
  return Frag("f.status <> 'purged' AND f.status <> 'superseded'");
}

}  // namespace

void SqlCond::And(const SqlCond& other) {
  if (other.sql.empty()) return;
  sql = sql.empty() ? "(" + other.sql + ")" : sql + " AND (" + other.sql + ")";
  args.insert(args.end(), other.args.begin(), other.args.end());
}

void BindArgs(sql::Stmt* st, const std::vector<SqlArg>& args, int first) {
  int i = first;
  for (const auto& a : args) {
    switch (a.type) {
      case SqlArg::kInt: st->Bind(i, a.i); break;
      case SqlArg::kReal: st->Bind(i, a.d); break;
      case SqlArg::kText: st->Bind(i, a.s); break;
      case SqlArg::kNull: st->BindNull(i); break;
    }
    ++i;
  }
}

Result<SqlCond> FactCondition(sql::Dialect dialect, const FactSelector& sel) {
  SqlCond c = ScopeSql(sel.scope);
  c.And(StatesSql(sel.states, sel.now));
  if (sel.memory_id) c.And(Frag("f.memory_id = ?", {SqlArg::Text(*sel.memory_id)}));
  if (sel.filter) {
    ENGRAM_ASSIGN_OR_RETURN(SqlCond f, Renderer(dialect).Node(*sel.filter, 0));
    c.And(f);
  }
  return c;
}

}  // namespace engram::store
