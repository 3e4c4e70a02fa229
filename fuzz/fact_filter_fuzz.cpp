// The memory filter compiler: filter JSON (Mem0 syntax) parsed and checked by
// memory/facts/fact_filter, rendered to SQL by store/facts_filter_sql for
// both dialects, and run by the engine over a few stored memories (SQLite in
// memory). The input is the filter text; the metadata checker of writes is
// fed the same text. Invariants: refusals are InvalidArgument; a tree the
// parser accepted renders for SQLite and PostgreSQL alike; the engine either
// lists with it or refuses it as InvalidArgument (an SQL error or an internal
// error is a finding); the listed memories are among those stored.
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "engram/engine.hpp"
#include "fuzz_support.hpp"
#include "memory/facts/fact_filter.hpp"
#include "store/facts_filter_sql.hpp"

namespace {

using engram::MemoryScope;
using engram::StatusCode;

struct Fixture {
  std::unique_ptr<engram::Engine> engine;
  MemoryScope scope{"default", "alice", "", ""};
  std::set<std::string> ids;

  Fixture() {
    auto e = engram::Engine::Open({.db_path = ":memory:", .verify_on_open = false});
    FUZZ_CHECK(e.ok(), e.status().ToString());
    engine = std::move(*e);
    const char* metas[] = {
        R"({"rating":5,"tags":["a","b"],"city":"Hanoi","when":"2025-06-01T10:00:00Z","ok":true})",
        R"({"rating":2.5,"tags":"a","city":"Paris","nested":{"k":1},"ok":false})",
        R"({"rating":null,"city":"","x.y":"dot"})",
        "",
    };
    int i = 0;
    for (const char* m : metas) {
      engram::MemoryAddOptions o;
      o.metadata = m;
      o.infer = false;
      auto r = engine->AddMemoryText(scope, "memory number " + std::to_string(i++) + " about Hanoi", o);
      FUZZ_CHECK(r.ok(), r.status().ToString());
      for (const auto& ev : r->results) ids.insert(ev.id);
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture fx;
  const std::string text(engram::fuzz::AsText(data, size));

  auto meta = engram::memory::facts::CheckMetadata(text);
  if (!meta.ok()) FUZZ_CHECK(meta.status().code() == StatusCode::kInvalidArgument, meta.status().ToString());

  auto parsed = engram::memory::facts::ParseFilter(text);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == StatusCode::kInvalidArgument, parsed.status().ToString());
  } else if (parsed->has_value()) {
    engram::store::FactSelector sel;
    sel.scope.row = engram::Scope{"default", "alice", "assistant"};
    sel.scope.user = "alice";
    sel.filter = &**parsed;
    auto lite = engram::store::FactCondition(engram::sql::Dialect::kSqlite, sel);
    auto pg = engram::store::FactCondition(engram::sql::Dialect::kPostgres, sel);
    FUZZ_CHECK(lite.ok(), "an accepted filter does not render for SQLite: " + lite.status().ToString());
    FUZZ_CHECK(pg.ok(), "an accepted filter does not render for PostgreSQL: " + pg.status().ToString());
    std::size_t marks = 0;
    for (const char c : lite->sql) marks += c == '?';
    FUZZ_CHECK(marks == lite->args.size(), "placeholders and arguments differ in number: " + lite->sql);
  }

  engram::MemoryListOptions o;
  o.filters = text;
  auto page = fx.engine->ListMemories(fx.scope, o);
  if (!page.ok()) {
    FUZZ_CHECK(page.status().code() == StatusCode::kInvalidArgument,
               "the engine failed on a filter: " + page.status().ToString());
  } else {
    FUZZ_CHECK(parsed.ok(), "the engine listed with a filter the parser refused");
    for (const auto& item : page->items) FUZZ_CHECK(fx.ids.count(item.id) == 1, "an unknown memory: " + item.id);
  }
  return 0;
}
