// Reading and checking the arguments of a JSON request (MCP tool arguments,
// HTTP bodies and query parameters): the first problem is kept as a sentence
// naming the field and what is expected.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engram/types.hpp"

namespace engram::wire {

// A number as the shortest text a stream prints: 24 as "24", 1.5 as "1.5".
std::string CompactNumber(double v);

class Args {
 public:
  // `noun` names a field in messages: "argument" (MCP) or "field" (HTTP).
  explicit Args(const nlohmann::json& a, std::string noun = "argument") : a_(a), noun_(std::move(noun)) {}
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // The first field the error is about ("" when none or not about one field).
  const std::string& field() const { return field_; }
  // Fields not in the list are an error.
  void Only(std::initializer_list<const char*> keys);
  std::string Str(const char* key, bool required, bool non_empty = true);
  std::optional<std::string> OptStr(const char* key);
  std::optional<long long> Int(const char* key, long long min, long long max);
  std::optional<double> Num(const char* key, double min, double max);
  std::optional<bool> Bool(const char* key);
  // A JSON object field, as text ("" when absent).
  std::string Object(const char* key);
  // A time: ISO-8601 text or epoch milliseconds.
  std::optional<TimeMs> Time(const char* key);
  // A JSON object of ranking constants (RankingOptions, by field name) set
  // over `out`; an unknown name or a value out of its range is an error
  // naming "key.name" (sums of shares are checked by the engine).
  void Ranking(const char* key, RankingOptions* out);
  // Records a problem with `key` (kept only when it is the first).
  void Fail(const std::string& key, const std::string& message);

 private:
  std::string Name(const char* key) const { return noun_ + " '" + key + "'"; }
  const nlohmann::json& a_;
  std::string noun_;
  std::string error_;
  std::string field_;
};

}  // namespace engram::wire
