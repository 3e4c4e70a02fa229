// PostgreSQL faults under the engine and the API keys: a connection lost in
// the middle of a write transaction (its backend terminated while the write
// waits on a lock), a server restarted (a private cluster, never the run's
// shared one) between and during transactions, a statement that waits
// beyond its timeout, a serialization failure and a full disk (raised by a
// trigger). Each time the caller gets a clear error (store unavailable:
// retry; aborted: retry; store full), nothing is half done (the tables are as
// before the call), reads go on, and the next call on the same engine works
// (the connection is made again).
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include "engram/engine.hpp"
#include "server/api_keys.hpp"
#include "store/db.hpp"
#include "store/errors.hpp"
#include "testing/pg_cluster.hpp"
#include "testing/test_postgres.hpp"

namespace engram::faults {
namespace {

const Scope kAlice{"default", "alice", "assistant"};
const Scope kBob{"default", "bob", "assistant"};

TurnInput Turn(const std::string& text) {
  TurnInput t;
  t.user_text = text;
  t.assistant_text = "ok";
  return t;
}
MemoryScope Mem(const std::string& user) {
  MemoryScope s;
  s.user = user;
  return s;
}

std::unique_ptr<sql::Db> Connect(const std::string& url) {
  auto db = sql::Db::Open(url, {});
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(*db) : nullptr;
}

std::int64_t Scalar(sql::Db* db, const std::string& q) {
  auto st = db->Prepare(q);
  if (!st.ok()) return -1;
  auto row = (*st)->Step();
  std::int64_t v = row.ok() && *row ? (*st)->Int(0) : -1;
  (*st)->Reset();
  return v;
}

// Every table but the job bookkeeping and receipts: its rows as text, hashed.
std::map<std::string, std::string> Content(sql::Db* db) {
  std::map<std::string, std::string> out;
  std::vector<std::string> tables;
  auto names = db->Prepare("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                           "AND table_type = 'BASE TABLE' ORDER BY 1");
  if (!names.ok()) return out;
  while (true) {
    auto row = (*names)->Step();
    if (!row.ok() || !*row) break;
    tables.push_back((*names)->Text(0));
  }
  (*names)->Reset();
  for (const auto& t : tables) {
    if (t == "jobs" || t == "receipts" || t == "receipt_days") continue;
    auto st = db->Prepare("SELECT count(*) || ':' || coalesce(md5(string_agg(x::text, ',' ORDER BY x::text)), '') FROM \"" +
                          t + "\" x");
    if (!st.ok()) continue;
    auto row = (*st)->Step();
    out[t] = row.ok() && *row ? (*st)->Text(0) : "?";
    (*st)->Reset();
  }
  return out;
}

std::string Diff(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b) {
  std::string out;
  for (const auto& [t, v] : a) {
    auto it = b.find(t);
    if (it == b.end() || it->second != v) out += " " + t;
  }
  return out.empty() ? " none" : out;
}

// Waits (up to a minute) until a session of this database waits on a lock.
bool WaitForLockWaiter(sql::Db* control) {
  for (int i = 0; i < 6000; ++i) {
    if (Scalar(control, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()") > 0) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

struct Stores {
  std::unique_ptr<Engine> engine;
  std::unique_ptr<server::ApiKeys> keys;
  explicit Stores(const std::string& url) {
    auto e = Engine::Open({.db_path = url});
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    if (e.ok()) engine = std::move(*e);
    auto k = server::ApiKeys::Open(url);
    EXPECT_TRUE(k.ok()) << k.status().ToString();
    if (k.ok()) keys = std::move(*k);
  }
};

struct WriteCase {
  const char* name;
  const char* table;  // the table the write waits on (locked in SHARE mode by another session)
  std::function<Status(Stores&)> run;
};

std::vector<WriteCase> Writes() {
  return {
      {"admission", "turns", [](Stores& s) { return s.engine->AddTurn(kAlice, Turn("And I work at the port")).status(); }},
      {"fact_write", "facts",
       [](Stores& s) {
         // A new text each call: a text already stored is deduplicated (no INSERT).
         static int n = 0;
         MemoryAddOptions o;
         o.infer = false;
         return s.engine->AddMemoryText(Mem("alice"), "I own boat number " + std::to_string(++n), o).status();
       }},
      {"key_creation", "api_keys",
       [](Stores& s) { return s.keys->Create("default", {}, server::Role::kWrite, "ci", 1000).status(); }},
      {"erasure", "turns", [](Stores& s) { return s.engine->ForgetUser("default", "bob").status(); }},
  };
}

class PgFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = testing::FreshPgDatabase();
    ASSERT_FALSE(url_.empty());
  }
  void Seed(Stores& s) {
    ASSERT_TRUE(s.engine->AddTurn(kAlice, Turn("I live in Porto")).ok());
    ASSERT_TRUE(s.engine->AddTurn(kBob, Turn("I own a red bicycle")).ok());
    ASSERT_TRUE(s.engine->AddMemoryText(Mem("alice"), "I like green tea", {}).ok());
  }
  std::string url_;
};

// The backend of each write is terminated while the write waits on a lock in
// the middle of its transaction: a retryable error, nothing of it applied,
// reads go on, and the same engine does the write on its next call.
TEST_F(PgFaults, ConnectionLostInTheMiddleOfAWriteIsRetryableAndNeverHalfDone) {
  Stores s(url_);
  ASSERT_TRUE(s.engine && s.keys);
  Seed(s);
  auto control = Connect(url_);
  ASSERT_TRUE(control);
  for (const WriteCase& w : Writes()) {
    SCOPED_TRACE(w.name);
    const auto before = Content(control.get());
    ASSERT_TRUE(control->Exec(std::string("BEGIN; LOCK TABLE ") + w.table + " IN SHARE MODE").ok());
    Status st;
    std::thread writer([&] { st = w.run(s); });
    ASSERT_TRUE(WaitForLockWaiter(control.get())) << "the write never waited on the lock";
    EXPECT_GE(Scalar(control.get(), "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                    "WHERE datname = current_database() AND wait_event_type = 'Lock' "
                                    "AND pid <> pg_backend_pid()"),
              1);
    writer.join();
    ASSERT_TRUE(control->Exec("ROLLBACK").ok());
    EXPECT_TRUE(sql::IsStoreUnavailable(st)) << st.ToString();
    EXPECT_EQ(Content(control.get()), before) << "half done; changed:" << Diff(before, Content(control.get()));
    auto read = s.engine->ListTurns(kAlice, 0, 100);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    Status again = w.run(s);
    EXPECT_TRUE(again.ok()) << "the next call: " << again.ToString();
    EXPECT_NE(Content(control.get()), before);
  }
  // Sessions ended between transactions (idle): the next call reconnects at once.
  ASSERT_GE(Scalar(control.get(), "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                  "WHERE datname = current_database() AND pid <> pg_backend_pid()"),
            1);
  auto japanese = s.engine->AddTurn(kAlice, Turn("I am learning Japanese"));
  EXPECT_TRUE(japanese.ok()) << japanese.status().ToString();
  auto listed = s.engine->ListTurns(kAlice, 0, 100);
  EXPECT_TRUE(listed.ok()) << listed.status().ToString();
  auto keys = s.keys->List("default");
  EXPECT_TRUE(keys.ok()) << keys.status().ToString();
  // The same for the key writes that run outside a transaction: a revocation
  // and the record of a key's last use.
  auto made = s.keys->Create("default", {}, server::Role::kRead, "idle", 5000);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  auto end_idle_sessions = [&] {
    ASSERT_GE(Scalar(control.get(), "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"),
              1);
  };
  end_idle_sessions();
  auto who = s.keys->Authenticate(made->second, 6'000'000);
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_TRUE(who->has_value());
  EXPECT_EQ(Scalar(control.get(), "SELECT count(*) FROM api_keys WHERE name = 'idle' AND last_used_at IS NOT NULL"), 1)
      << "the last use was not recorded after the session ended";
  end_idle_sessions();
  Status revoked = s.keys->Revoke(made->first.id, 7'000'000);
  EXPECT_TRUE(revoked.ok()) << revoked.ToString();
  EXPECT_EQ(Scalar(control.get(), "SELECT count(*) FROM api_keys WHERE name = 'idle' AND revoked_at IS NOT NULL"), 1);
  // Maintenance whose connection is lost while it waits: nothing half done
  // (every turn in one tier), and it completes once the lock is gone.
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(s.engine->AddTurn(kAlice, Turn("note " + std::to_string(i))).ok());
  ASSERT_TRUE(control->Exec("BEGIN; LOCK TABLE pages IN SHARE MODE").ok());
  Status maintained;
  std::thread maint([&] { maintained = s.engine->Maintain(nullptr).status(); });
  ASSERT_TRUE(WaitForLockWaiter(control.get()));
  Scalar(control.get(), "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
                        "current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()");
  ASSERT_TRUE(control->Exec("ROLLBACK").ok());
  maint.join();
  EXPECT_TRUE(maintained.ok() || sql::IsStoreUnavailable(maintained)) << maintained.ToString();
  EXPECT_EQ(Scalar(control.get(), "SELECT count(*) FROM turns t WHERE t.page_id IS NOT NULL AND NOT EXISTS "
                                  "(SELECT 1 FROM pages p WHERE p.id = t.page_id AND p.turn_id = t.id)"),
            0);
  ASSERT_TRUE(s.engine->RetryFailedJobs().ok());
  auto m = s.engine->Maintain(nullptr);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto stats = s.engine->GetStats(&kAlice);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->pending_jobs, 0);
  EXPECT_EQ(stats->stm_turns + stats->mtm_pages + stats->archived_pages, stats->turns_admitted);
}

// A write that waits on a lock beyond its timeout gets a retryable error,
// never a hang; reads go on meanwhile. Both timeouts: the writer lock timeout
// the store sets (its busy timeout) and a statement_timeout from the URL.
TEST_F(PgFaults, AWriteWaitingBeyondItsTimeoutIsRetryableAndReadsGoOn) {
  for (const bool statement_timeout : {false, true}) {
    SCOPED_TRACE(statement_timeout ? "statement_timeout" : "lock_timeout");
    const std::string base = statement_timeout ? testing::FreshPgDatabase() : url_;
    const std::string url = statement_timeout ? base + "&options=-c%20statement_timeout%3D300" : base;
    Stores s(url);
    ASSERT_TRUE(s.engine);
    ASSERT_TRUE(s.engine->AddTurn(kAlice, Turn("I live in Porto")).ok());
    auto control = Connect(base);
    const auto before = Content(control.get());
    ASSERT_TRUE(control->Exec("BEGIN; LOCK TABLE turns IN SHARE MODE").ok());
    Status st = s.engine->AddTurn(kAlice, Turn("And I work at the port")).status();
    EXPECT_TRUE(sql::IsStoreUnavailable(st)) << st.ToString();
    EXPECT_TRUE(st.message().find(statement_timeout ? "57014" : "55P03") != std::string::npos) << st.ToString();
    auto read = s.engine->ListTurns(kAlice, 0, 100);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->size(), 1u);
    ASSERT_TRUE(control->Exec("ROLLBACK").ok());
    EXPECT_EQ(Content(control.get()), before);
    EXPECT_TRUE(s.engine->AddTurn(kAlice, Turn("And I work at the port")).ok());
    EXPECT_EQ(s.engine->ListTurns(kAlice, 0, 100)->size(), 2u);
  }
}

// Errors raised inside the write's transaction by the server: a
// serialization failure is Aborted (retry the request), a full disk is
// store full; either way nothing of the write is applied and the next call
// works once the cause is gone.
TEST_F(PgFaults, SerializationFailureAndFullDiskAreReportedAndNothingIsApplied) {
  Stores s(url_);
  ASSERT_TRUE(s.engine && s.keys);
  Seed(s);
  auto control = Connect(url_);
  ASSERT_TRUE(control->Exec("CREATE FUNCTION engram_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                            "RAISE EXCEPTION 'injected by the test' USING ERRCODE = TG_ARGV[0]; END $$")
                  .ok());
  for (const char* state : {"40001", "40P01", "53100"}) {
    for (const WriteCase& w : Writes()) {
      SCOPED_TRACE(std::string(w.name) + " " + state);
      const auto before = Content(control.get());
      const std::string ev = std::string(w.name) == "erasure" ? "DELETE" : "INSERT";
      ASSERT_TRUE(control->Exec(std::string("CREATE TRIGGER engram_test_fail BEFORE ") + ev + " ON " + w.table +
                                " FOR EACH ROW EXECUTE FUNCTION engram_test_fail('" + state + "')")
                      .ok());
      Status st = w.run(s);
      if (std::string(state) == "53100") {
        EXPECT_TRUE(sql::IsStoreFull(st)) << st.ToString();
      } else {
        EXPECT_EQ(st.code(), StatusCode::kAborted) << st.ToString();
      }
      EXPECT_EQ(Content(control.get()), before) << "half done; changed:" << Diff(before, Content(control.get()));
      EXPECT_TRUE(s.engine->ListTurns(kAlice, 0, 100).ok());
      ASSERT_TRUE(control->Exec(std::string("DROP TRIGGER engram_test_fail ON ") + w.table).ok());
      Status again = w.run(s);
      EXPECT_TRUE(again.ok()) << again.ToString();
      if (std::string(w.name) == "erasure") {
        ASSERT_TRUE(s.engine->AddTurn(kBob, Turn("I am back")).ok());
      }
    }
  }
}

// A restarted server (a private cluster): between transactions the next
// call reconnects and succeeds; during one, the call gets a retryable error,
// nothing of it is applied, and the call after works.
TEST(PgRestartFaults, ARestartedServerIsReconnectedToAndNothingIsHalfDone) {
  testing::PgCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  const std::string url = cluster.url();
  Stores s(url);
  ASSERT_TRUE(s.engine && s.keys);
  ASSERT_TRUE(s.engine->AddTurn(kAlice, Turn("I live in Porto")).ok());
  ASSERT_TRUE(s.keys->Create("default", {}, server::Role::kAdmin, "first", 1000).ok());

  ASSERT_TRUE(cluster.Restart());
  auto added = s.engine->AddTurn(kAlice, Turn("And I work at the port"));
  EXPECT_TRUE(added.ok()) << "after a restart: " << added.status().ToString();
  auto turns = s.engine->ListTurns(kAlice, 0, 100);
  ASSERT_TRUE(turns.ok()) << turns.status().ToString();
  EXPECT_EQ(turns->size(), 2u);
  auto second = s.keys->Create("default", {}, server::Role::kRead, "second", 2000);
  EXPECT_TRUE(second.ok()) << "after a restart: " << second.status().ToString();

  // During a transaction: the write waits on a lock when the server restarts.
  // The lock is held by a prepared transaction, which outlives the restart: a
  // lock of a session would be released when the shutdown ends that session,
  // and the write, granted it in that moment, could commit before its own
  // session ends (then it is whole and acknowledged, but this test would not
  // see a write cut inside its transaction).
  auto control = Connect(url);
  ASSERT_TRUE(control->Exec("BEGIN; LOCK TABLE turns IN SHARE MODE; PREPARE TRANSACTION 'hold_turns'").ok());
  Status st;
  std::thread writer([&] { st = s.engine->AddTurn(kAlice, Turn("We hike in May")).status(); });
  ASSERT_TRUE(WaitForLockWaiter(control.get()));
  ASSERT_TRUE(cluster.Restart());
  writer.join();
  EXPECT_TRUE(sql::IsStoreUnavailable(st)) << st.ToString();
  control = Connect(url);
  ASSERT_TRUE(control->Exec("ROLLBACK PREPARED 'hold_turns'").ok());
  EXPECT_EQ(Scalar(control.get(), "SELECT count(*) FROM turns"), 2);
  EXPECT_TRUE(s.engine->AddTurn(kAlice, Turn("We hike in May")).ok());
  EXPECT_EQ(Scalar(control.get(), "SELECT count(*) FROM turns"), 3);
  EXPECT_EQ(s.keys->List("default")->size(), 2u);
}

}  // namespace
}  // namespace engram::faults
