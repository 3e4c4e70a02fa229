// The PostgreSQL backend of the connection seam (store/postgres.hpp) against a
// real server: one throwaway cluster for the suite (testing/pg_cluster.hpp),
// a fresh database per test.
#include "store/postgres.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "testing/pg_cluster.hpp"
#include "testing/test_postgres.hpp"

namespace engram::sql {
namespace {

using engram::testing::PgCluster;

#define EXPECT_OK(expr)                                       \
  do {                                                        \
    const ::engram::Status _st = (expr);                      \
    EXPECT_TRUE(_st.ok()) << #expr << ": " << _st.ToString(); \
  } while (0)
#define ASSERT_OK(expr)                                       \
  do {                                                        \
    const ::engram::Status _st = (expr);                      \
    ASSERT_TRUE(_st.ok()) << #expr << ": " << _st.ToString(); \
  } while (0)

// --- Placeholders (no server) ----------------------------------------------

TEST(PgRewriteTest, NumbersBarePlaceholdersInOrder) {
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT ?"), "SELECT $1");
  EXPECT_EQ(PgDb::RewritePlaceholders("VALUES (?, ?, ?)"), "VALUES ($1, $2, $3)");
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT 1"), "SELECT 1");
  EXPECT_EQ(PgDb::RewritePlaceholders(""), "");
}

TEST(PgRewriteTest, NumberedPlaceholdersKeepTheirNumber) {
  EXPECT_EQ(PgDb::RewritePlaceholders("?1 + ?1"), "$1 + $1");
  EXPECT_EQ(PgDb::RewritePlaceholders("?2, ?1"), "$2, $1");
  EXPECT_EQ(PgDb::RewritePlaceholders("?12"), "$12");
  // As in SQLite, a bare ? follows the largest number used so far.
  EXPECT_EQ(PgDb::RewritePlaceholders("?3, ?"), "$3, $4");
  EXPECT_EQ(PgDb::RewritePlaceholders("?, ?1, ?"), "$1, $1, $2");
}

TEST(PgRewriteTest, LeavesLiteralsIdentifiersAndCommentsAlone) {
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT '?', ?"), "SELECT '?', $1");
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT 'it''s ?' || ?"), "SELECT 'it''s ?' || $1");
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT \"quoted ?\" FROM t WHERE a = ?"),
            "SELECT \"quoted ?\" FROM t WHERE a = $1");
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT \"a\"\"?\" , ?"), "SELECT \"a\"\"?\" , $1");
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT ? -- why?\n, ?"), "SELECT $1 -- why?\n, $2");
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT /* ? /* ? */ ? */ ?"), "SELECT /* ? /* ? */ ? */ $1");
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT $$ ? $$, ?"), "SELECT $$ ? $$, $1");
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT $fn$ '?' $x$ ? $fn$, ?"),
            "SELECT $fn$ '?' $x$ ? $fn$, $1");
  // E'' strings escape quotes with a backslash; standard strings do not.
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT E'\\' ?', ?"), "SELECT E'\\' ?', $1");
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT '\\', ?"), "SELECT '\\', $1");
  // $1 and identifiers with $ are no dollar quotes; unterminated text is kept.
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT $1, a$b$, ?"), "SELECT $1, a$b$, $1");
  EXPECT_EQ(PgDb::RewritePlaceholders("SELECT 'open ?"), "SELECT 'open ?");
  EXPECT_EQ(PgDb::RewritePlaceholders("x::text = ?"), "x::text = $1");
}

// --- Against a server --------------------------------------------------------

// A fresh database on the run's shared server (testing/test_postgres.hpp).
class PgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = engram::testing::FreshPgDatabase();
    ASSERT_FALSE(url_.empty()) << "no PostgreSQL server for the test";
  }

  std::unique_ptr<Db> Open(const OpenOptions& options = {}) {
    auto db = Db::Open(url_, options);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(db).value() : nullptr;
  }

  // The first column of the first row as an integer (-1 when no row).
  static std::int64_t Scalar(Db* db, const std::string& sql) {
    auto st = db->Prepare(sql);
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    if (!st.ok()) return -1;
    auto row = (*st)->Step();
    EXPECT_TRUE(row.ok()) << row.status().ToString();
    std::int64_t v = row.ok() && *row ? (*st)->Int(0) : -1;
    (*st)->Reset();
    return v;
  }

  std::string url_;
};

TEST_F(PgTest, OpensWithSessionSettings) {
  auto db = Open();
  ASSERT_TRUE(db);
  EXPECT_EQ(db->dialect(), Dialect::kPostgres);
  EXPECT_EQ(db->path(), url_);
  EXPECT_OK(db->Exec("SELECT 1"));
  auto st = db->Prepare(
      "SELECT current_setting('application_name'), current_setting('client_encoding'),"
      " current_setting('default_transaction_read_only')");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  auto row = (*st)->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*st)->Text(0), "engram");
  EXPECT_EQ((*st)->Text(1), "UTF8");
  EXPECT_EQ((*st)->Text(2), "off");
  // The URL's own settings win over the defaults.
  auto named = Db::Open(url_ + "&application_name=other&connect_timeout=2", {});
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(Scalar(named->get(),
                   "SELECT count(*) FROM pg_stat_activity"
                   " WHERE application_name = 'other'"),
            1);
  db.reset();  // closes
}

TEST_F(PgTest, ExecRunsSeveralStatements) {
  auto db = Open();
  ASSERT_TRUE(db);
  EXPECT_OK(db->Exec("CREATE TABLE t (a INT); INSERT INTO t VALUES (1), (2), (3)"));
  EXPECT_EQ(db->Changes(), 3);
  EXPECT_EQ(Scalar(db.get(), "SELECT count(*) FROM t"), 3);
  EXPECT_OK(db->Exec(""));
  EXPECT_OK(db->Exec("-- only a comment"));
}

TEST_F(PgTest, PlaceholdersOutsideLiteralsAndIdentifiers) {
  auto db = Open();
  ASSERT_TRUE(db);
  auto st = db->Prepare("SELECT '?' AS \"quoted ?\", ?, $$?$$");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  (*st)->Bind(1, "x");
  auto row = (*st)->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ((*st)->Text(0), "?");
  EXPECT_EQ((*st)->Text(1), "x");
  EXPECT_EQ((*st)->Text(2), "?");

  auto twice = db->Prepare("SELECT ?1::bigint + ?1::bigint");
  ASSERT_TRUE(twice.ok()) << twice.status().ToString();
  (*twice)->Bind(1, 21);
  ASSERT_TRUE(*(*twice)->Step());
  EXPECT_EQ((*twice)->Int(0), 42);

  auto swapped = db->Prepare("SELECT ?2 || ?1");
  ASSERT_TRUE(swapped.ok()) << swapped.status().ToString();
  (*swapped)->Bind(1, "a").Bind(2, "b");
  ASSERT_TRUE(*(*swapped)->Step());
  EXPECT_EQ((*swapped)->Text(0), "ba");
}

TEST_F(PgTest, BindsAndReadsEveryType) {
  auto db = Open();
  ASSERT_TRUE(db);
  ASSERT_OK(db->Exec(
      "CREATE TABLE v (k INT PRIMARY KEY, i BIGINT, d DOUBLE PRECISION, t TEXT, b BYTEA, n TEXT,"
      " f BOOLEAN)"));
  const std::int64_t big[] = {0, 1, -1, std::numeric_limits<std::int64_t>::max(),
                              std::numeric_limits<std::int64_t>::min()};
  const double dbl[] = {0.1, 1.0 / 3.0, -2.5, 1e308, 2.2250738585072014e-308};
  const unsigned char raw[] = {0, 1, 0x5c, 0x78, 0xff, 0x27};  // NUL, backslash, 'x', quote
  auto ins = db->Prepare("INSERT INTO v (k, i, d, t, b, n, f) VALUES (?, ?, ?, ?, ?, ?, ?)");
  ASSERT_TRUE(ins.ok()) << ins.status().ToString();
  for (int k = 0; k < 5; ++k) {
    (*ins)->Bind(1, k).Bind(2, big[k]).Bind(3, dbl[k]).Bind(4, "text \\ 'q' " + std::to_string(k));
    (*ins)->BindBlob(5, raw, k + 1).BindNull(6).Bind(7, k % 2);
    ASSERT_OK((*ins)->Run());
  }
  auto sel = db->Prepare("SELECT i, d, t, b, n, f, k FROM v ORDER BY k");
  ASSERT_TRUE(sel.ok());
  for (int k = 0; k < 5; ++k) {
    auto row = (*sel)->Step();
    ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
    EXPECT_EQ((*sel)->Int(0), big[k]);
    EXPECT_EQ((*sel)->Double(1), dbl[k]);
    EXPECT_EQ((*sel)->Text(2), "text \\ 'q' " + std::to_string(k));
    EXPECT_EQ((*sel)->Text(3), std::string(reinterpret_cast<const char*>(raw), k + 1));
    EXPECT_TRUE((*sel)->IsNull(4));
    EXPECT_FALSE((*sel)->IsNull(3));
    EXPECT_EQ((*sel)->Text(4), "");
    EXPECT_EQ((*sel)->Int(5), k % 2);  // boolean t / f
    EXPECT_EQ((*sel)->Int(6), k);
  }
  auto done = (*sel)->Step();
  ASSERT_TRUE(done.ok());
  EXPECT_FALSE(*done);

  auto special = db->Prepare(
      "SELECT 'Infinity'::float8, '-Infinity'::float8, 'NaN'::float8, 3.75::numeric, ?::float8");
  ASSERT_TRUE(special.ok());
  (*special)->Bind(1, -0.0);
  ASSERT_TRUE(*(*special)->Step());
  EXPECT_EQ((*special)->Double(0), std::numeric_limits<double>::infinity());
  EXPECT_EQ((*special)->Double(1), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan((*special)->Double(2)));
  EXPECT_EQ((*special)->Double(3), 3.75);
  EXPECT_EQ((*special)->Int(3), 3);  // truncated, as SQLite reads a REAL
  EXPECT_TRUE(std::signbit((*special)->Double(4)));
}

TEST_F(PgTest, FloatsRoundTripExactlyThroughBytea) {
  auto db = Open();
  ASSERT_TRUE(db);
  ASSERT_OK(db->Exec("CREATE TABLE e (id INT PRIMARY KEY, v BYTEA)"));
  const std::vector<float> floats = {0.0f,
                                     -0.0f,
                                     1.0f / 3.0f,
                                     -123456.789f,
                                     std::numeric_limits<float>::denorm_min(),
                                     std::numeric_limits<float>::max(),
                                     std::numeric_limits<float>::infinity(),
                                     std::numeric_limits<float>::quiet_NaN(),
                                     1e-30f};
  const int bytes = static_cast<int>(floats.size() * sizeof(float));
  auto ins = db->Prepare("INSERT INTO e (id, v) VALUES (?, ?)");
  ASSERT_TRUE(ins.ok());
  ASSERT_OK((*ins)->Bind(1, 1).BindBlob(2, floats.data(), bytes).Run());
  ASSERT_OK((*ins)->Bind(1, 2).BindBlob(2, floats.data(), 0).Run());
  auto sel = db->Prepare("SELECT v FROM e WHERE id = ?");
  ASSERT_TRUE(sel.ok());
  (*sel)->Bind(1, 1);
  ASSERT_TRUE(*(*sel)->Step());
  std::vector<float> back = (*sel)->Floats(0);
  ASSERT_EQ(back.size(), floats.size());
  EXPECT_EQ(std::memcmp(back.data(), floats.data(), static_cast<std::size_t>(bytes)), 0);
  (*sel)->Reset();
  (*sel)->Bind(1, 2);
  ASSERT_TRUE(*(*sel)->Step());
  EXPECT_FALSE((*sel)->IsNull(0));
  EXPECT_TRUE((*sel)->Floats(0).empty());

  // A blob where the server would infer another type goes as bytea too.
  auto echo = db->Prepare("SELECT ?");
  ASSERT_TRUE(echo.ok());
  (*echo)->BindBlob(1, floats.data(), bytes);
  auto row = (*echo)->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  back = (*echo)->Floats(0);
  ASSERT_EQ(back.size(), floats.size());
  EXPECT_EQ(std::memcmp(back.data(), floats.data(), static_cast<std::size_t>(bytes)), 0);
  (*echo)->Reset();
  (*echo)->Bind(1, "plain text");  // the same statement, as text again
  ASSERT_TRUE(*(*echo)->Step());
  EXPECT_EQ((*echo)->Text(0), "plain text");
}

TEST_F(PgTest, StepsOverManyRowsAndReusesStatements) {
  auto db = Open();
  ASSERT_TRUE(db);
  ASSERT_OK(db->Exec("CREATE TABLE r (n BIGINT)"));
  {
    auto txn = Txn::Begin(db.get());
    ASSERT_TRUE(txn.ok()) << txn.status().ToString();
    for (int i = 1; i <= 500; ++i) {
      auto ins = db->Prepare("INSERT INTO r (n) VALUES (?)");
      ASSERT_TRUE(ins.ok());
      ASSERT_OK((*ins)->Bind(1, i).Run());
    }
    ASSERT_OK((*txn)->Commit());
  }
  ASSERT_OK(db->Exec("INSERT INTO r (n) SELECT g FROM generate_series(501, 10000) g"));
  auto sel = db->Prepare("SELECT n FROM r ORDER BY n");
  ASSERT_TRUE(sel.ok());
  std::int64_t count = 0, sum = 0;
  for (;;) {
    auto row = (*sel)->Step();
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    if (!*row) break;
    ++count;
    sum += (*sel)->Int(0);
    ASSERT_EQ((*sel)->Int(0), count);
  }
  EXPECT_EQ(count, 10000);
  EXPECT_EQ(sum, 10000LL * 10001 / 2);
}

TEST_F(PgTest, ResetThenRunAgainWithOtherBindings) {
  auto db = Open();
  ASSERT_TRUE(db);
  ASSERT_OK(
      db->Exec("CREATE TABLE kv (k INT PRIMARY KEY, v TEXT);"
               "INSERT INTO kv VALUES (1, 'one'), (2, 'two')"));
  const std::string sql = "SELECT v FROM kv WHERE k = ?";
  auto st = db->Prepare(sql);
  ASSERT_TRUE(st.ok());
  (*st)->Bind(1, 1);
  ASSERT_TRUE(*(*st)->Step());
  EXPECT_EQ((*st)->Text(0), "one");
  (*st)->Reset();
  (*st)->Bind(1, 2);
  ASSERT_TRUE(*(*st)->Step());
  EXPECT_EQ((*st)->Text(0), "two");
  // The cache gives the same statement back, reset and unbound (NULL: no row).
  auto again = db->Prepare(sql);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *st);
  auto row = (*again)->Step();
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(*row);
  // Out-of-range bindings are reported by the next Step.
  (*again)->Bind(2, 1);
  EXPECT_FALSE((*again)->Step().ok());
  (*again)->Bind(1, 1);
  ASSERT_TRUE(*(*again)->Step());
  EXPECT_EQ((*again)->Text(0), "one");
}

TEST_F(PgTest, ChangesCountsRowsOfTheLastWrite) {
  auto db = Open();
  ASSERT_TRUE(db);
  ASSERT_OK(
      db->Exec("CREATE TABLE c (a INT); INSERT INTO c SELECT g FROM generate_series(1, 5) g"));
  auto up = db->Prepare("UPDATE c SET a = a + 10 WHERE a <= ?");
  ASSERT_TRUE(up.ok());
  ASSERT_OK((*up)->Bind(1, 3).Run());
  EXPECT_EQ(db->Changes(), 3);
  EXPECT_EQ(Scalar(db.get(), "SELECT count(*) FROM c"), 5);
  EXPECT_EQ(db->Changes(), 3);  // a SELECT leaves it alone
  ASSERT_OK(db->Exec("DELETE FROM c WHERE a = 4"));
  EXPECT_EQ(db->Changes(), 1);
  ASSERT_OK((*up)->Bind(1, 0).Run());
  EXPECT_EQ(db->Changes(), 0);
}

TEST_F(PgTest, LastInsertRowIdAndReturning) {
  auto db = Open();
  ASSERT_TRUE(db);
  ASSERT_OK(db->Exec(
      "CREATE TABLE items (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, name TEXT)"));
  {  // no sequence used yet: 0, and a transaction is not disturbed by asking
    auto txn = Txn::Begin(db.get());
    ASSERT_TRUE(txn.ok());
    EXPECT_EQ(db->LastInsertRowId(), 0);
    EXPECT_OK(db->Exec("INSERT INTO items (name) VALUES ('in txn')"));
    EXPECT_EQ(db->LastInsertRowId(), 1);
    EXPECT_OK((*txn)->Commit());
  }
  auto ins = db->Prepare("INSERT INTO items (name) VALUES (?)");
  ASSERT_TRUE(ins.ok());
  ASSERT_OK((*ins)->Bind(1, "a").Run());
  EXPECT_EQ(db->LastInsertRowId(), 2);
  ASSERT_OK((*ins)->Bind(1, "b").Run());
  EXPECT_EQ(db->LastInsertRowId(), 3);
  auto ret = db->Prepare("INSERT INTO items (name) VALUES (?) RETURNING id");
  ASSERT_TRUE(ret.ok());
  (*ret)->Bind(1, "c");
  auto row = (*ret)->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ((*ret)->Int(0), 4);
  EXPECT_EQ(db->Changes(), 1);
  EXPECT_EQ(db->LastInsertRowId(), 4);
}

TEST_F(PgTest, OnConflictDoNothingAndDoUpdate) {
  auto db = Open();
  ASSERT_TRUE(db);
  ASSERT_OK(db->Exec("CREATE TABLE u (k TEXT PRIMARY KEY, v INT); INSERT INTO u VALUES ('a', 1)"));
  auto nothing =
      db->Prepare("INSERT INTO u (k, v) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING k");
  ASSERT_TRUE(nothing.ok());
  (*nothing)->Bind(1, "a").Bind(2, 5);
  auto row = (*nothing)->Step();
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_FALSE(*row);
  EXPECT_EQ(db->Changes(), 0);
  auto upsert = db->Prepare(
      "INSERT INTO u (k, v) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET v = u.v + excluded.v");
  ASSERT_TRUE(upsert.ok());
  ASSERT_OK((*upsert)->Bind(1, "a").Bind(2, 10).Run());
  EXPECT_EQ(db->Changes(), 1);
  ASSERT_OK((*upsert)->Bind(1, "b").Bind(2, 7).Run());
  EXPECT_EQ(Scalar(db.get(), "SELECT v FROM u WHERE k = 'a'"), 11);
  EXPECT_EQ(Scalar(db.get(), "SELECT v FROM u WHERE k = 'b'"), 7);
}

TEST_F(PgTest, TxnCommitsAndRollsBackAsSeenFromAnotherConnection) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a && b);
  ASSERT_OK(a->Exec("CREATE TABLE t (n INT)"));
  {
    auto txn = Txn::Begin(a.get());
    ASSERT_TRUE(txn.ok()) << txn.status().ToString();
    ASSERT_OK(a->Exec("INSERT INTO t VALUES (1)"));
    EXPECT_EQ(Scalar(b.get(), "SELECT count(*) FROM t"), 0);  // not yet
    ASSERT_OK((*txn)->Commit());
  }
  EXPECT_EQ(Scalar(b.get(), "SELECT count(*) FROM t"), 1);
  {
    auto txn = Txn::Begin(a.get());
    ASSERT_TRUE(txn.ok());
    ASSERT_OK(a->Exec("INSERT INTO t VALUES (2)"));
  }  // rolled back by the destructor
  EXPECT_EQ(Scalar(b.get(), "SELECT count(*) FROM t"), 1);
  EXPECT_EQ(Scalar(a.get(), "SELECT count(*) FROM t"), 1);
  // As in SQLite: no COMMIT without a transaction, no BEGIN inside one.
  EXPECT_EQ(a->Commit().code(), StatusCode::kIoError);
  EXPECT_EQ(a->Rollback().code(), StatusCode::kIoError);
  ASSERT_OK(a->BeginWrite());
  EXPECT_EQ(a->BeginWrite().code(), StatusCode::kIoError);
  EXPECT_EQ(a->BeginRead().code(), StatusCode::kIoError);
  EXPECT_OK(a->Rollback());
}

TEST_F(PgTest, ReadTxnSeesOneSnapshot) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a && b);
  ASSERT_OK(a->Exec("CREATE TABLE t (n INT); INSERT INTO t VALUES (1)"));
  {
    auto read = ReadTxn::Begin(a.get());
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(Scalar(a.get(), "SELECT count(*) FROM t"), 1);
    ASSERT_OK(b->Exec("INSERT INTO t VALUES (2)"));
    EXPECT_EQ(Scalar(a.get(), "SELECT count(*) FROM t"), 1);  // the same snapshot
    Status write = a->Exec("INSERT INTO t VALUES (3)");
    EXPECT_EQ(write.code(), StatusCode::kPermissionDenied) << write.ToString();
  }
  EXPECT_EQ(Scalar(a.get(), "SELECT count(*) FROM t"), 2);
}

TEST_F(PgTest, ReadOnlyOptionRefusesWrites) {
  auto rw = Open();
  ASSERT_TRUE(rw);
  ASSERT_OK(rw->Exec("CREATE TABLE t (n INT); INSERT INTO t VALUES (1)"));
  OpenOptions options;
  options.read_only = true;
  auto ro = Open(options);
  ASSERT_TRUE(ro);
  EXPECT_EQ(Scalar(ro.get(), "SELECT count(*) FROM t"), 1);
  Status st = ro->Exec("INSERT INTO t VALUES (2)");
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied) << st.ToString();
  auto txn = Txn::Begin(ro.get());
  ASSERT_TRUE(txn.ok());
  st = ro->Exec("INSERT INTO t VALUES (2)");
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied) << st.ToString();
}

TEST_F(PgTest, ConstraintViolationsAreAlreadyExists) {
  auto db = Open();
  ASSERT_TRUE(db);
  ASSERT_OK(db->Exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INT NOT NULL)"));
  auto ins = db->Prepare("INSERT INTO t (k, v) VALUES (?, ?)");
  ASSERT_TRUE(ins.ok());
  ASSERT_OK((*ins)->Bind(1, "a").Bind(2, 1).Run());
  Status dup = (*ins)->Bind(1, "a").Bind(2, 2).Run();
  EXPECT_EQ(dup.code(), StatusCode::kAlreadyExists) << dup.ToString();
  EXPECT_NE(dup.message().find("SQLSTATE 23505"), std::string::npos) << dup.message();
  (*ins)->Reset();
  Status null = (*ins)->Bind(1, "b").BindNull(2).Run();
  EXPECT_EQ(null.code(), StatusCode::kAlreadyExists) << null.ToString();
  EXPECT_NE(null.message().find("SQLSTATE 23502"), std::string::npos) << null.message();
  EXPECT_EQ(Scalar(db.get(), "SELECT count(*) FROM t"), 1);
}

TEST_F(PgTest, SerializationFailureIsAborted) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a && b);
  ASSERT_OK(a->Exec("CREATE TABLE acc (id INT PRIMARY KEY, v INT); INSERT INTO acc VALUES (1, 0)"));
  ASSERT_OK(a->Exec("BEGIN ISOLATION LEVEL REPEATABLE READ"));
  EXPECT_EQ(Scalar(a.get(), "SELECT v FROM acc WHERE id = 1"), 0);  // takes the snapshot
  ASSERT_OK(b->Exec("UPDATE acc SET v = 1 WHERE id = 1"));
  Status st = a->Exec("UPDATE acc SET v = 2 WHERE id = 1");
  EXPECT_EQ(st.code(), StatusCode::kAborted) << st.ToString();
  EXPECT_NE(st.message().find("40001"), std::string::npos) << st.message();
  EXPECT_OK(a->Rollback());
  EXPECT_EQ(Scalar(a.get(), "SELECT v FROM acc WHERE id = 1"), 1);
}

TEST_F(PgTest, LockAndStatementTimeoutsAreUnavailable) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a && b);
  ASSERT_OK(a->Exec("CREATE TABLE acc (id INT PRIMARY KEY, v INT); INSERT INTO acc VALUES (1, 0)"));
  ASSERT_OK(a->BeginWrite());
  ASSERT_OK(a->Exec("UPDATE acc SET v = 5 WHERE id = 1"));
  Status st = b->Exec("SELECT v FROM acc WHERE id = 1 FOR UPDATE NOWAIT");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("55P03"), std::string::npos) << st.message();
  EXPECT_OK(a->Rollback());

  ASSERT_OK(b->Exec("SET statement_timeout = '100ms'"));
  const auto start = std::chrono::steady_clock::now();
  st = b->Exec("SELECT pg_sleep(5)");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("57014"), std::string::npos) << st.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_OK(b->Exec("SELECT 1"));
}

TEST_F(PgTest, SyntaxErrorIsIoErrorNamingTheSqlstate) {
  auto db = Open();
  ASSERT_TRUE(db);
  auto st = db->Prepare("SELEC 1");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.status().code(), StatusCode::kIoError);
  EXPECT_NE(st.status().message().find("(SQLSTATE 42601)"), std::string::npos)
      << st.status().message();
  EXPECT_EQ(st.status().message().rfind("prepare: syntax error", 0), 0u) << st.status().message();
  Status ex = db->Exec("SELEC 1");
  EXPECT_EQ(ex.code(), StatusCode::kIoError);
  EXPECT_NE(ex.message().find("SQLSTATE 42601"), std::string::npos) << ex.message();
  // Not cached: the same text fails again, and the connection is fine.
  EXPECT_FALSE(db->Prepare("SELEC 1").ok());
  EXPECT_EQ(Scalar(db.get(), "SELECT 7"), 7);
}

TEST_F(PgTest, FailedStatementInTransactionThenRollback) {
  auto db = Open();
  ASSERT_TRUE(db);
  ASSERT_OK(db->Exec("CREATE TABLE t (k INT PRIMARY KEY); INSERT INTO t VALUES (1)"));
  {
    auto txn = Txn::Begin(db.get());
    ASSERT_TRUE(txn.ok());
    ASSERT_OK(db->Exec("INSERT INTO t VALUES (2)"));
    EXPECT_EQ(db->Exec("INSERT INTO t VALUES (1)").code(), StatusCode::kAlreadyExists);
    Status next = db->Exec("INSERT INTO t VALUES (3)");
    EXPECT_EQ(next.code(), StatusCode::kAborted) << next.ToString();  // 25P02
    EXPECT_NE(next.message().find("25P02"), std::string::npos) << next.message();
  }  // rolled back
  EXPECT_EQ(Scalar(db.get(), "SELECT count(*) FROM t"), 1);
  // A COMMIT after a failed statement is a rollback: Aborted, not Ok.
  auto txn = Txn::Begin(db.get());
  ASSERT_TRUE(txn.ok());
  ASSERT_OK(db->Exec("INSERT INTO t VALUES (4)"));
  EXPECT_FALSE(db->Exec("INSERT INTO t VALUES (1)").ok());
  Status commit = (*txn)->Commit();
  EXPECT_EQ(commit.code(), StatusCode::kAborted) << commit.ToString();
  txn->reset();
  EXPECT_EQ(Scalar(db.get(), "SELECT count(*) FROM t"), 1);
  EXPECT_OK(db->Exec("INSERT INTO t VALUES (5)"));
}

TEST_F(PgTest, UnreachableServerIsUnavailableQuicklyWithoutPassword) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> urls = {
      "postgresql://engram:s3cret@/engram?host=/tmp/nowhere-engram-socket",
      "postgresql://engram:s3cret@127.0.0.1:1/engram",
      "postgresql://engram@/engram?host=/tmp/nowhere-engram&password=s3cret"};
  for (const std::string& url : urls) {
    auto db = Db::Open(url, {});
    ASSERT_FALSE(db.ok()) << url;
    EXPECT_EQ(db.status().code(), StatusCode::kUnavailable) << db.status().ToString();
    EXPECT_EQ(db.status().message().find("s3cret"), std::string::npos) << db.status().message();
    EXPECT_NE(db.status().message().find("***"), std::string::npos) << db.status().message();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  auto bad = Db::Open("postgresql://engram:s3cret@/engram?host=/tmp&bogus_option=1", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status().ToString();
  EXPECT_EQ(bad.status().message().find("s3cret"), std::string::npos) << bad.status().message();
}

TEST_F(PgTest, PasswordNeverInPathOrMessages) {
  // The test cluster trusts every local connection: a password is accepted and ignored.
  const std::string db_name = url_.substr(url_.find("@/") + 2);  // "<name>?host=DIR"
  const std::vector<std::string> urls = {"postgresql://engram:s3cret@/" + db_name,
                                         "postgresql://engram@/" + db_name + "&password=s3cret"};
  for (const std::string& url : urls) {
    auto db = Db::Open(url, {});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ((*db)->path().find("s3cret"), std::string::npos) << (*db)->path();
    EXPECT_NE((*db)->path().find("***"), std::string::npos) << (*db)->path();
    Status st = (*db)->Exec("SELECT 's3cret' FROM nowhere");
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(st.message().find("s3cret"), std::string::npos) << st.message();
  }
}

TEST_F(PgTest, TextMustBeUtf8WithoutNulAndUnicodeRoundTrips) {
  auto db = Open();
  ASSERT_TRUE(db);
  ASSERT_OK(db->Exec("CREATE TABLE s (id INT PRIMARY KEY, t TEXT)"));
  auto ins = db->Prepare("INSERT INTO s (id, t) VALUES (?, ?)");
  ASSERT_TRUE(ins.ok());
  const std::string unicode =
      "h\xC3\xA9llo \xF0\x9F\x91\x8B\xF0\x9F\x8F\xBD \xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D "
      "\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 \xE2\x80\x8F\xE4\xB8\xAD\xE6\x96\x87";
  ASSERT_OK((*ins)->Bind(1, 1).Bind(2, unicode).Run());
  Status bad = (*ins)->Bind(1, 2).Bind(2, std::string("bad \xFF\xFE utf-8")).Run();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument) << bad.ToString();
  EXPECT_NE(bad.message().find("22021"), std::string::npos) << bad.message();
  (*ins)->Reset();
  Status nul = (*ins)->Bind(1, 3).Bind(2, std::string("nul\0inside", 10)).Run();
  EXPECT_EQ(nul.code(), StatusCode::kInvalidArgument) << nul.ToString();
  auto sel = db->Prepare("SELECT t, length(t) FROM s");
  ASSERT_TRUE(sel.ok());
  ASSERT_TRUE(*(*sel)->Step());
  EXPECT_EQ((*sel)->Text(0), unicode);
  EXPECT_EQ((*sel)->Int(1), 23);  // characters, not bytes
  EXPECT_FALSE(*(*sel)->Step());
}

// Restarts a server: its own cluster, never the run's shared one.
class PgRestartTest : public PgTest {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<PgCluster>();
    ASSERT_TRUE(cluster_->ok()) << "the PostgreSQL test cluster did not start: " << cluster_->error();
    url_ = cluster_->url();
  }
  PgCluster* Cluster() { return cluster_.get(); }
  std::unique_ptr<PgCluster> cluster_;
};

TEST_F(PgRestartTest, LostConnectionIsUnavailableThenReconnects) {
  auto db = Open();
  auto in_txn = Open();
  ASSERT_TRUE(db && in_txn);
  ASSERT_OK(db->Exec("CREATE TABLE t (n INT); INSERT INTO t VALUES (1)"));
  auto sel = db->Prepare("SELECT count(*) FROM t WHERE n >= ?");
  ASSERT_TRUE(sel.ok());
  ASSERT_OK(in_txn->BeginWrite());
  ASSERT_OK(in_txn->Exec("INSERT INTO t VALUES (2)"));

  ASSERT_TRUE(Cluster()->Restart());

  // Outside a transaction: the call that finds out fails, the next reconnects.
  Status lost = db->Exec("SELECT 1");
  EXPECT_EQ(lost.code(), StatusCode::kUnavailable) << lost.ToString();
  EXPECT_OK(db->Exec("SELECT 1"));
  (*sel)->Bind(1, 0);  // prepared again on the new session
  auto row = (*sel)->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ((*sel)->Int(0), 1);
  (*sel)->Reset();

  // Inside one: every call fails until the transaction is ended.
  lost = in_txn->Exec("INSERT INTO t VALUES (3)");
  EXPECT_EQ(lost.code(), StatusCode::kUnavailable) << lost.ToString();
  lost = in_txn->Exec("INSERT INTO t VALUES (4)");
  EXPECT_EQ(lost.code(), StatusCode::kUnavailable) << lost.ToString();
  EXPECT_FALSE(in_txn->Prepare("SELECT 2").ok());
  EXPECT_OK(in_txn->Rollback());
  EXPECT_EQ(Scalar(in_txn.get(), "SELECT count(*) FROM t"), 1);

  // A commit on a lost connection reports the loss.
  ASSERT_OK(in_txn->BeginWrite());
  ASSERT_TRUE(Cluster()->Restart());
  Status commit = in_txn->Commit();
  EXPECT_EQ(commit.code(), StatusCode::kUnavailable) << commit.ToString();
  EXPECT_EQ(Scalar(in_txn.get(), "SELECT count(*) FROM t"), 1);
}

}  // namespace
}  // namespace engram::sql

namespace engram::sql {
namespace {

// The writer lock: one write transaction at a time across connections (as
// SQLite's BEGIN IMMEDIATE), waited for up to the busy timeout; reads never wait.
TEST_F(PgTest, WriteTransactionsAreSerialisedAcrossConnections) {
  auto a = Open();
  OpenOptions quick;
  quick.busy_timeout_ms = 200;
  auto b = Open(quick);
  auto reader = Open();
  ASSERT_TRUE(a && b && reader);
  ASSERT_OK(a->Exec("CREATE TABLE t (n INT)"));
  ASSERT_OK(a->BeginWrite());
  ASSERT_OK(a->Exec("INSERT INTO t VALUES (1)"));
  const auto start = std::chrono::steady_clock::now();
  Status busy = b->BeginWrite();
  EXPECT_EQ(busy.code(), StatusCode::kUnavailable) << busy.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(Scalar(b.get(), "SELECT count(*) FROM t"), 0) << "the refused transaction was rolled back";
  ASSERT_OK(reader->BeginRead());
  EXPECT_EQ(Scalar(reader.get(), "SELECT count(*) FROM t"), 0);
  ASSERT_OK(reader->Commit());
  ASSERT_OK(a->Commit());
  ASSERT_OK(b->BeginWrite());
  ASSERT_OK(b->Exec("INSERT INTO t VALUES (2)"));
  ASSERT_OK(b->Commit());
  EXPECT_EQ(Scalar(a.get(), "SELECT count(*) FROM t"), 2);
}

}  // namespace
}  // namespace engram::sql
