#include "memory/facts/fact_filter.hpp"

#include <set>

#include <nlohmann/json.hpp>

#include "core/time.hpp"

namespace engram::memory::facts {

namespace {

using nlohmann::json;

constexpr int kMaxDepth = 16;
constexpr int kMaxConditions = 200;
constexpr std::size_t kMaxMetadataBytes = 64 * 1024;

const std::set<std::string>& IdentityKeys() {
  static const std::set<std::string> k = {"user_id", "agent_id", "run_id", "tenant", "tenant_id",
                                          "user",    "agent",    "run",    "scope",  "app_id",
                                          "org_id",  "project_id", "id",   "memory_id", "actor_id"};
  return k;
}

enum class FieldType { kText, kTime, kInt, kMeta };

struct Field {
  FieldType type;
  std::string expr;  // SQL expression
  std::string path;  // JSON path for metadata
};

struct Compiler {
  int conditions = 0;

  Result<Field> Resolve(const std::string& key, const std::string& where) {
    if (IdentityKeys().count(key)) {
      return Status::InvalidArgument(where + ": identity keys are given by the scope, not by filters");
    }
    static const std::set<std::string> text = {"kind", "role", "actor", "attributed_to", "status"};
    static const std::set<std::string> times = {"created_at", "updated_at", "event_time", "expires_at"};
    if (text.count(key)) return Field{FieldType::kText, "f." + key, ""};
    if (times.count(key)) return Field{FieldType::kTime, "f." + key, ""};
    if (key == "version") return Field{FieldType::kInt, "f.version", ""};
    std::string k = key.rfind("metadata.", 0) == 0 ? key.substr(9) : key;
    if (k.empty()) return Status::InvalidArgument(where + ": empty metadata key");
    std::string path = "$";
    std::size_t start = 0;
    for (std::size_t i = 0; i <= k.size(); ++i) {
      if (i < k.size() && k[i] != '.') continue;
      std::string part = k.substr(start, i - start);
      if (part.empty()) return Status::InvalidArgument(where + ": empty part in metadata key");
      for (unsigned char c : part) {
        if (c == '"' || c == '\\' || c < 0x20) {
          return Status::InvalidArgument(where + ": metadata keys may not contain quotes, backslashes or control characters");
        }
      }
      path += ".\"" + part + "\"";
      start = i + 1;
    }
    return Field{FieldType::kMeta, "json_extract(f.metadata, ?)", path};
  }

  // One value as an SQL argument for a field.
  Result<SqlArg> Value(const Field& f, const json& v, const std::string& where) {
    if (f.type == FieldType::kTime) {
      if (v.is_number_integer()) return SqlArg::Int(v.get<std::int64_t>());
      if (v.is_string()) {
        auto t = ParseTime(v.get<std::string>());
        if (t.ok()) return SqlArg::Int(*t);
      }
      return Status::InvalidArgument(where + ": expected an ISO-8601 time or epoch milliseconds");
    }
    if (f.type == FieldType::kInt) {
      if (v.is_number_integer()) return SqlArg::Int(v.get<std::int64_t>());
      return Status::InvalidArgument(where + ": expected an integer");
    }
    if (f.type == FieldType::kText) {
      if (v.is_string()) return SqlArg::Text(v.get<std::string>());
      return Status::InvalidArgument(where + ": expected a string");
    }
    if (v.is_boolean()) return SqlArg::Int(v.get<bool>() ? 1 : 0);
    if (v.is_number_integer()) return SqlArg::Int(v.get<std::int64_t>());
    if (v.is_number()) return SqlArg::Real(v.get<double>());
    if (v.is_string()) return SqlArg::Text(v.get<std::string>());
    return Status::InvalidArgument(where + ": expected a string, number or boolean");
  }

  // The field's expression with its path argument (metadata) prepended.
  SqlCond Expr(const Field& f) {
    SqlCond c;
    c.sql = f.expr;
    if (f.type == FieldType::kMeta) c.args.push_back(SqlArg::Text(f.path));
    return c;
  }

  Result<SqlCond> Compare(const Field& f, const std::string& op, const json& v, const std::string& where) {
    if (++conditions > kMaxConditions) return Status::InvalidArgument("filters: more than 200 conditions");
    SqlCond x = Expr(f);
    SqlCond out;
    auto with = [&](const std::string& sql, std::vector<SqlArg> tail) {
      // `sql` uses "X" for the expression (each occurrence re-binds its args).
      SqlCond c;
      std::size_t pos = 0;
      for (;;) {
        std::size_t at = sql.find('X', pos);
        c.sql += sql.substr(pos, at == std::string::npos ? std::string::npos : at - pos);
        if (at == std::string::npos) break;
        c.sql += x.sql;
        c.args.insert(c.args.end(), x.args.begin(), x.args.end());
        pos = at + 1;
      }
      c.args.insert(c.args.end(), tail.begin(), tail.end());
      return c;
    };
    if (op == "eq" || op == "ne") {
      if (v.is_string() && v.get<std::string>() == "*" && op == "eq") return with("X IS NOT NULL", {});
      if (v.is_null()) return with(op == "eq" ? "X IS NULL" : "X IS NOT NULL", {});
      ENGRAM_ASSIGN_OR_RETURN(SqlArg a, Value(f, v, where));
      return op == "eq" ? with("X = ?", {a}) : with("(X IS NULL OR X <> ?)", {a});
    }
    if (op == "gt" || op == "gte" || op == "lt" || op == "lte") {
      const std::string sym = op == "gt" ? ">" : op == "gte" ? ">=" : op == "lt" ? "<" : "<=";
      if (f.type != FieldType::kMeta) {
        ENGRAM_ASSIGN_OR_RETURN(SqlArg a, Value(f, v, where));
        return with("X " + sym + " ?", {a});
      }
      if (v.is_number() && !v.is_boolean()) {
        ENGRAM_ASSIGN_OR_RETURN(SqlArg a, Value(f, v, where));
        SqlCond c;
        c.sql = "json_type(f.metadata, ?) IN ('integer','real') AND json_extract(f.metadata, ?) " + sym + " ?";
        c.args = {SqlArg::Text(f.path), SqlArg::Text(f.path), a};
        return c;
      }
      if (v.is_string()) {  // times, compared as instants
        auto t = ParseTime(v.get<std::string>());
        if (!t.ok()) return Status::InvalidArgument(where + ": expected a number or an ISO-8601 time");
        return with("(julianday(X) - 2440587.5) * 86400000.0 " + sym + " ?",
                     {SqlArg::Real(static_cast<double>(*t))});
      }
      return Status::InvalidArgument(where + ": expected a number or an ISO-8601 time");
    }
    if (op == "in" || op == "nin") {
      if (!v.is_array() || v.empty()) return Status::InvalidArgument(where + ": expected a non-empty array");
      std::string list;
      std::vector<SqlArg> args;
      for (std::size_t i = 0; i < v.size(); ++i) {
        ENGRAM_ASSIGN_OR_RETURN(SqlArg a, Value(f, v[i], where + "[" + std::to_string(i) + "]"));
        args.push_back(std::move(a));
        list += i ? ",?" : "?";
      }
      return op == "in" ? with("X IN (" + list + ")", args) : with("(X IS NULL OR X NOT IN (" + list + "))", args);
    }
    if (op == "contains" || op == "icontains") {
      if (!v.is_string()) return Status::InvalidArgument(where + ": expected a string");
      const std::string s = v.get<std::string>();
      const bool ci = op == "icontains";
      const std::string test = ci ? "instr(lower(Y), lower(?)) > 0" : "instr(Y, ?) > 0";
      if (f.type != FieldType::kMeta) {
        std::string q = test;
        q.replace(q.find('Y'), 1, "X");
        return with(q, {SqlArg::Text(s)});
      }
      SqlCond c;  // arrays: any element; strings: substring
      std::string elem = test, scalar = test;
      elem.replace(elem.find('Y'), 1, "CAST(value AS TEXT)");
      scalar.replace(scalar.find('Y'), 1, "CAST(json_extract(f.metadata, ?) AS TEXT)");
      c.sql = "CASE WHEN json_type(f.metadata, ?) = 'array' THEN EXISTS (SELECT 1 FROM json_each(f.metadata, ?) "
              "WHERE " + elem + ") ELSE coalesce(" + scalar + ", 0) END";
      c.args = {SqlArg::Text(f.path), SqlArg::Text(f.path), SqlArg::Text(s), SqlArg::Text(f.path), SqlArg::Text(s)};
      return c;
    }
    return Status::InvalidArgument(where + ": unknown operator \"" + op +
                                   "\" (eq ne gt gte lt lte in nin contains icontains)");
  }

  Result<SqlCond> Node(const json& j, const std::string& where, int depth) {
    if (depth > kMaxDepth) return Status::InvalidArgument(where + ": nested deeper than 16 levels");
    if (!j.is_object()) return Status::InvalidArgument(where + ": expected an object");
    SqlCond all;
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string key = it.key();
      const std::string at = where + "." + key;
      SqlCond c;
      if (key == "AND" || key == "OR") {
        if (!it->is_array() || it->empty()) return Status::InvalidArgument(at + ": expected a non-empty array");
        for (std::size_t i = 0; i < it->size(); ++i) {
          ENGRAM_ASSIGN_OR_RETURN(SqlCond sub, Node((*it)[i], at + "[" + std::to_string(i) + "]", depth + 1));
          c.sql += (i ? (key == "AND" ? " AND " : " OR ") : "") + ("(" + sub.sql + ")");
          c.args.insert(c.args.end(), sub.args.begin(), sub.args.end());
        }
      } else if (key == "NOT") {
        SqlCond sub;
        if (it->is_array()) {
          json both = {{"AND", *it}};
          ENGRAM_ASSIGN_OR_RETURN(sub, Node(both, at, depth + 1));
        } else {
          ENGRAM_ASSIGN_OR_RETURN(sub, Node(*it, at, depth + 1));
        }
        c.sql = "NOT coalesce((" + sub.sql + "), 0)";
        c.args = sub.args;
      } else {
        ENGRAM_ASSIGN_OR_RETURN(Field f, Resolve(key, at));
        if (it->is_object()) {
          if (it->empty()) return Status::InvalidArgument(at + ": expected at least one operator");
          for (auto op = it->begin(); op != it->end(); ++op) {
            ENGRAM_ASSIGN_OR_RETURN(SqlCond one, Compare(f, op.key(), *op, at + "." + op.key()));
            c.And(one);
          }
        } else if (it->is_array()) {
          ENGRAM_ASSIGN_OR_RETURN(c, Compare(f, "in", *it, at));
        } else {
          ENGRAM_ASSIGN_OR_RETURN(c, Compare(f, "eq", *it, at));
        }
      }
      all.And(c);
    }
    if (all.sql.empty()) all.sql = "1";
    return all;
  }
};

}  // namespace

Result<SqlCond> CompileFilter(const std::string& filters) {
  if (filters.find_first_not_of(" \t\r\n") == std::string::npos) return SqlCond{};
  json j = json::parse(filters, nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument("filters: not valid JSON");
  Compiler c;
  return c.Node(j, "filters", 0);
}

Result<std::string> CheckMetadata(const std::string& metadata) {
  if (metadata.find_first_not_of(" \t\r\n") == std::string::npos) return std::string("{}");
  if (metadata.size() > kMaxMetadataBytes) return Status::InvalidArgument("metadata: larger than 64 KiB");
  json j = json::parse(metadata, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument("metadata: must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (IdentityKeys().count(it.key())) {
      return Status::InvalidArgument("metadata." + it.key() + ": identity keys are given by the scope, not by metadata");
    }
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace engram::memory::facts
