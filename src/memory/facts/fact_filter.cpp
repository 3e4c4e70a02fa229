#include "core/json_limits.hpp"
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
  store::FactFilterField field;
};

using store::FactFilter;
using store::FactFilterOp;
using store::SqlArg;

struct Compiler {
  int conditions = 0;

  Result<Field> Resolve(const std::string& key, const std::string& where) {
    if (IdentityKeys().count(key)) {
      return Status::InvalidArgument(where + ": identity keys are given by the scope, not by filters");
    }
    using Kind = store::FactFilterField::Kind;
    static const std::set<std::string> text = {"kind", "role", "actor", "attributed_to", "status"};
    static const std::set<std::string> times = {"created_at", "updated_at", "event_time", "expires_at"};
    if (text.count(key)) return Field{FieldType::kText, {Kind::kColumn, key, {}}};
    if (times.count(key)) return Field{FieldType::kTime, {Kind::kColumn, key, {}}};
    if (key == "version") return Field{FieldType::kInt, {Kind::kColumn, key, {}}};
    std::string k = key.rfind("metadata.", 0) == 0 ? key.substr(9) : key;
    if (k.empty()) return Status::InvalidArgument(where + ": empty metadata key");
    std::vector<std::string> path;
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
      path.push_back(std::move(part));
      start = i + 1;
    }
    return Field{FieldType::kMeta, {Kind::kMetadata, "", std::move(path)}};
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

  Result<FactFilter> Compare(const Field& f, const std::string& op, const json& v, const std::string& where) {
    if (++conditions > kMaxConditions) return Status::InvalidArgument("filters: more than 200 conditions");
    FactFilter out;
    out.field = f.field;
    auto with = [&](FactFilterOp o, std::vector<SqlArg> values) {
      out.op = o;
      out.values = std::move(values);
      return out;
    };
    if (op == "eq" || op == "ne") {
      if (v.is_string() && v.get<std::string>() == "*" && op == "eq") return with(FactFilterOp::kNotNull, {});
      if (v.is_null()) return with(op == "eq" ? FactFilterOp::kIsNull : FactFilterOp::kNotNull, {});
      ENGRAM_ASSIGN_OR_RETURN(SqlArg a, Value(f, v, where));
      return with(op == "eq" ? FactFilterOp::kEq : FactFilterOp::kNe, {a});
    }
    if (op == "gt" || op == "gte" || op == "lt" || op == "lte") {
      const FactFilterOp o = op == "gt" ? FactFilterOp::kGt : op == "gte" ? FactFilterOp::kGte
                             : op == "lt" ? FactFilterOp::kLt : FactFilterOp::kLte;
      if (f.type != FieldType::kMeta || (v.is_number() && !v.is_boolean())) {
        ENGRAM_ASSIGN_OR_RETURN(SqlArg a, Value(f, v, where));
        return with(o, {a});
      }
      if (v.is_string()) {  // times, compared as instants
        auto t = ParseTime(v.get<std::string>());
        if (!t.ok()) return Status::InvalidArgument(where + ": expected a number or an ISO-8601 time");
        out.as_instant = true;
        return with(o, {SqlArg::Real(static_cast<double>(*t))});
      }
      return Status::InvalidArgument(where + ": expected a number or an ISO-8601 time");
    }
    if (op == "in" || op == "nin") {
      if (!v.is_array() || v.empty()) return Status::InvalidArgument(where + ": expected a non-empty array");
      std::vector<SqlArg> args;
      for (std::size_t i = 0; i < v.size(); ++i) {
        ENGRAM_ASSIGN_OR_RETURN(SqlArg a, Value(f, v[i], where + "[" + std::to_string(i) + "]"));
        args.push_back(std::move(a));
      }
      return with(op == "in" ? FactFilterOp::kIn : FactFilterOp::kNin, std::move(args));
    }
    if (op == "contains" || op == "icontains") {
      if (!v.is_string()) return Status::InvalidArgument(where + ": expected a string");
      return with(op == "icontains" ? FactFilterOp::kIContains : FactFilterOp::kContains,
                  {SqlArg::Text(v.get<std::string>())});
    }
    return Status::InvalidArgument(where + ": unknown operator \"" + op +
                                   "\" (eq ne gt gte lt lte in nin contains icontains)");
  }

  // An object: every key's condition (none: true).
  Result<FactFilter> Node(const json& j, const std::string& where, int depth) {
    if (depth > kMaxDepth) return Status::InvalidArgument(where + ": nested deeper than 16 levels");
    if (!j.is_object()) return Status::InvalidArgument(where + ": expected an object");
    FactFilter all;  // kAll
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string key = it.key();
      const std::string at = where + "." + key;
      FactFilter c;
      if (key == "AND" || key == "OR") {
        if (!it->is_array() || it->empty()) return Status::InvalidArgument(at + ": expected a non-empty array");
        c.op = key == "AND" ? FactFilterOp::kAll : FactFilterOp::kAny;
        for (std::size_t i = 0; i < it->size(); ++i) {
          ENGRAM_ASSIGN_OR_RETURN(FactFilter sub, Node((*it)[i], at + "[" + std::to_string(i) + "]", depth + 1));
          c.children.push_back(std::move(sub));
        }
      } else if (key == "NOT") {
        FactFilter sub;
        if (it->is_array()) {
          json both = {{"AND", *it}};
          ENGRAM_ASSIGN_OR_RETURN(sub, Node(both, at, depth + 1));
        } else {
          ENGRAM_ASSIGN_OR_RETURN(sub, Node(*it, at, depth + 1));
        }
        c.op = FactFilterOp::kNot;
        c.children.push_back(std::move(sub));
      } else {
        ENGRAM_ASSIGN_OR_RETURN(Field f, Resolve(key, at));
        if (it->is_object()) {
          if (it->empty()) return Status::InvalidArgument(at + ": expected at least one operator");
          for (auto op = it->begin(); op != it->end(); ++op) {  // c: kAll of the operators
            ENGRAM_ASSIGN_OR_RETURN(FactFilter one, Compare(f, op.key(), *op, at + "." + op.key()));
            c.children.push_back(std::move(one));
          }
        } else if (it->is_array()) {
          ENGRAM_ASSIGN_OR_RETURN(c, Compare(f, "in", *it, at));
        } else {
          ENGRAM_ASSIGN_OR_RETURN(c, Compare(f, "eq", *it, at));
        }
      }
      all.children.push_back(std::move(c));
    }
    return all;
  }
};

}  // namespace

Result<std::optional<FactFilter>> ParseFilter(const std::string& filters) {
  if (filters.find_first_not_of(" \t\r\n") == std::string::npos) return std::optional<FactFilter>();
  if (!json_limits::WithinDepth(filters)) return Status::InvalidArgument("filters: " + json_limits::TooDeepMessage());
  json j = json::parse(filters, nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument("filters: not valid JSON");
  Compiler c;
  ENGRAM_ASSIGN_OR_RETURN(FactFilter f, c.Node(j, "filters", 0));
  return std::optional<FactFilter>(std::move(f));
}

Result<std::string> CheckMetadata(const std::string& metadata) {
  if (metadata.find_first_not_of(" \t\r\n") == std::string::npos) return std::string("{}");
  if (metadata.size() > kMaxMetadataBytes) return Status::InvalidArgument("metadata: larger than 64 KiB");
  if (!json_limits::WithinDepth(metadata)) return Status::InvalidArgument("metadata: " + json_limits::TooDeepMessage());
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
