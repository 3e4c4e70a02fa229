// The PostgreSQL server of a test run, and a fresh database per test.
// Under ctest the suite shares one throwaway cluster (scripts/pg-test-cluster,
// started by the `pg_cluster_start` fixture; its socket folder arrives in
// ENGRAM_TEST_PG_HOST). A test binary run by hand starts its own cluster
// (testing/pg_cluster.hpp). Either way a missing or broken PostgreSQL makes
// the test fail, never skip.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>

#include "store/db.hpp"
#include "testing/pg_cluster.hpp"

namespace engram::testing {

// postgresql://engram@/DB?host=HOST of the run's server ("" after a failure).
inline std::string PgUrlOf(const std::string& database) {
  if (const char* host = std::getenv("ENGRAM_TEST_PG_HOST"); host && *host) {
    return "postgresql://engram@/" + database + "?host=" + host;
  }
  static std::unique_ptr<PgCluster> own = std::make_unique<PgCluster>();
  if (!own->ok()) return "";
  return own->UrlOf(database);
}

// A new empty database on the run's server; its URL ("" after a failure).
inline std::string FreshPgDatabase() {
  static std::atomic<int> counter{0};
  const std::string admin = PgUrlOf("engram");
  if (admin.empty()) {
    ADD_FAILURE() << "no PostgreSQL server for the test";
    return "";
  }
  auto db = sql::Db::Open(admin, {});
  if (!db.ok()) {
    ADD_FAILURE() << "PostgreSQL: " << db.status().ToString();
    return "";
  }
  const std::string name = "t" + std::to_string(getpid()) + "_" + std::to_string(++counter);
  if (Status st = (*db)->Exec("CREATE DATABASE " + name); !st.ok()) {
    ADD_FAILURE() << "PostgreSQL: " << st.ToString();
    return "";
  }
  return PgUrlOf(name);
}

// The backends a conformance test runs on ("sqlite", "postgres"), and a new
// empty store location for each: a file in `dir`, or a fresh database.
inline std::string FreshStore(const std::string& backend, const std::string& dir) {
  static std::atomic<int> counter{0};
  if (backend == "postgres") return FreshPgDatabase();
  return dir + "/store" + std::to_string(++counter) + ".db";
}

}  // namespace engram::testing

#include <map>
#include <mutex>

namespace engram::testing {

// The backend of this test process: ENGRAM_TEST_BACKEND=postgres runs the
// engine's conformance suite on PostgreSQL (CTest registers the engine tests
// once per backend); anything else is SQLite.
inline bool OnPostgres() {
  const char* b = std::getenv("ENGRAM_TEST_BACKEND");
  return b && std::string(b) == "postgres";
}

// The store location for a test's SQLite file path: the path itself on
// SQLite; on PostgreSQL a fresh database, the same one for every call with
// the same path (a test that reopens its store finds it again).
inline std::string StoreAt(const std::string& sqlite_path) {
  if (!OnPostgres()) return sqlite_path;
  static std::mutex mu;
  static std::map<std::string, std::string> urls;
  std::lock_guard<std::mutex> lock(mu);
  auto it = urls.find(sqlite_path);
  if (it != urls.end()) return it->second;
  std::string url = FreshPgDatabase();
  urls[sqlite_path] = url;
  return url;
}

}  // namespace engram::testing

namespace engram::testing {

// The first column of the first row of `sql` in the test's store (given by
// its SQLite path, see StoreAt); -1 when it cannot be read.
inline std::int64_t CountStoreRows(const std::string& sqlite_path, const std::string& sql) {
  sql::OpenOptions ro;
  ro.read_only = true;
  ro.create = false;
  auto db = sql::Db::Open(StoreAt(sqlite_path), ro);
  if (!db.ok()) return -1;
  auto st = (*db)->Prepare(sql);
  if (!st.ok()) return -1;
  auto row = (*st)->Step();
  std::int64_t v = row.ok() && *row ? (*st)->Int(0) : -1;
  (*st)->Reset();
  return v;
}

}  // namespace engram::testing

namespace engram::testing {

// The first column of the first row of `sql` as text ("" when none).
inline std::string StoreText(const std::string& sqlite_path, const std::string& sql) {
  sql::OpenOptions ro;
  ro.read_only = true;
  ro.create = false;
  auto db = sql::Db::Open(StoreAt(sqlite_path), ro);
  if (!db.ok()) return "";
  auto st = (*db)->Prepare(sql);
  if (!st.ok()) return "";
  auto row = (*st)->Step();
  std::string v = row.ok() && *row ? (*st)->Text(0) : "";
  (*st)->Reset();
  return v;
}

// Whether a table of the test's store has a column (either backend).
inline bool StoreHasColumn(const std::string& sqlite_path, const std::string& table, const std::string& column) {
  const std::string q =
      OnPostgres() ? "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() "
                     "AND table_name = '" + table + "' AND column_name = '" + column + "'"
                   : "SELECT count(*) FROM pragma_table_info('" + table + "') WHERE name = '" + column + "'";
  return CountStoreRows(sqlite_path, q) > 0;
}

// How many values of every table of a PostgreSQL store contain `needle` (as
// the text of each row); -1 when the store cannot be read.
inline std::int64_t PgOccurrences(const std::string& url, const std::string& needle) {
  auto db = sql::Db::Open(url, {});
  if (!db.ok()) return -1;
  auto names = (*db)->Prepare(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()");
  if (!names.ok()) return -1;
  std::vector<std::string> tables;
  for (;;) {
    auto row = (*names)->Step();
    if (!row.ok()) return -1;
    if (!*row) break;
    tables.push_back((*names)->Text(0));
  }
  (*names)->Reset();
  std::int64_t hits = 0;
  for (const auto& t : tables) {
    auto st = (*db)->Prepare("SELECT count(*) FROM \"" + t + "\" x WHERE strpos(CAST(x AS TEXT), ?1) > 0");
    if (!st.ok()) return -1;
    (*st)->Bind(1, needle);
    auto row = (*st)->Step();
    if (!row.ok()) return -1;
    hits += *row ? (*st)->Int(0) : 0;
    (*st)->Reset();
  }
  return hits;
}

}  // namespace engram::testing

#include <vector>

namespace engram::testing {

// The tables that hold a tenant's data (schema version 3: every table but
// meta), each with the tenant its rows must carry, as an SQL expression on
// the row alias x (the same text on both backends): the tenant of the row's
// scope (the full-text rows name it by its token "s<id>"; fact_entities
// through its fact). "" where the row has no scope to compare with (receipts,
// receipt_days, API keys, the embedding cache): there the tenant must only
// not be empty.
struct TenantTable {
  const char* name;
  const char* expected;
};
inline const std::vector<TenantTable>& TenantTables() {
  static const char* kOfScope = "(SELECT s.tenant FROM scopes s WHERE s.id = x.scope_id)";
  static const char* kOfToken = "(SELECT s.tenant FROM scopes s WHERE 's' || s.id = x.scope)";
  static const std::vector<TenantTable> tables = {
      {"scopes", "x.tenant"},
      {"turns", kOfScope},
      {"turns_fts", kOfToken},
      {"segments", kOfScope},
      {"segments_fts", kOfToken},
      {"pages", kOfScope},
      {"scope_terms", kOfScope},
      {"profile_slots", kOfScope},
      {"facts", kOfScope},
      {"facts_fts", kOfToken},
      {"fact_history", kOfScope},
      {"entities", kOfScope},
      {"fact_entities",
       "(SELECT s.tenant FROM facts f JOIN scopes s ON s.id = f.scope_id WHERE f.id = x.fact_id)"},
      {"fact_links", kOfScope},
      {"fact_requests", kOfScope},
      {"jobs", kOfScope},
      {"turn_requests", kOfScope},
      {"embed_cache", ""},
      {"receipts", ""},
      {"receipt_days", ""},
      {"api_keys", ""},
  };
  return tables;
}

// One tenant table of a store: its rows, and how many of them have an empty
// tenant or not the one of their scope (-1 each when the query failed).
struct TenantCheck {
  std::string table;
  std::int64_t rows = -1;
  std::int64_t wrong = -1;
};
inline std::vector<TenantCheck> CheckTenants(sql::Db* db) {
  std::vector<TenantCheck> out;
  for (const auto& t : TenantTables()) {
    const std::string expected = *t.expected ? t.expected : "x.tenant";
    const std::string q = std::string("SELECT count(*), coalesce(sum(CASE WHEN x.tenant = '' OR ") + expected +
                          " IS NULL OR x.tenant <> " + expected + " THEN 1 ELSE 0 END), 0) FROM " + t.name + " x";
    TenantCheck c;
    c.table = t.name;
    auto st = db->Prepare(q);
    if (st.ok()) {
      auto row = (*st)->Step();
      if (row.ok() && *row) {
        c.rows = (*st)->Int(0);
        c.wrong = (*st)->Int(1);
      }
      (*st)->Reset();
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace engram::testing
