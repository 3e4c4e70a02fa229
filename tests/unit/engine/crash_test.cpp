// Crash safety: a child process is killed (SIGKILL) at every step of
// promotion and consolidation; the store is reopened and every admitted turn
// must be in exactly one tier, and maintenance must then complete without
// duplicates.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "core/clock.hpp"
#include "engram/engine.hpp"
#include "testing/dialogue.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

const char* g_crash_at = nullptr;

void CrashAt(const char* name) {
  if (g_crash_at && std::strcmp(name, g_crash_at) == 0) kill(getpid(), SIGKILL);
}

std::int64_t Count(const std::string& db_path, const std::string& sql) {
  return testing::CountStoreRows(db_path, sql);
}

class CrashTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CrashTest, KilledMaintenanceLosesAndDuplicatesNothing) {
  testing::TempDir dir;
  const std::string path = dir.File("engram.db");
  Scope scope{"default", "crash", "a"};
  constexpr int kTurns = 45;
  EngineOptions o;
  o.db_path = testing::StoreAt(path);
  o.heat_threshold = 3.0;
  o.promote_batch_max = 8;
  {
    auto e = Engine::Open(o);
    ASSERT_TRUE(e.ok());
    ASSERT_TRUE((*e)->AddTurns(scope, testing::SyntheticDialogue(kTurns)).ok());
  }
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    g_crash_at = GetParam();
    EngineOptions co = o;
    co.fault_point = &CrashAt;
    auto e = Engine::Open(co);
    if (!e.ok()) _exit(3);
    (void)(*e)->Maintain(nullptr);
    _exit(0);  // the fault point was not reached
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child did not reach " << GetParam();
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  auto check = [&] {
    EXPECT_EQ(Count(path, "SELECT count(*) FROM turns"), kTurns);
    // A turn is in STM (no page) or has exactly one page that points back.
    EXPECT_EQ(Count(path, "SELECT count(*) FROM turns t WHERE t.page_id IS NOT NULL AND NOT EXISTS "
                          "(SELECT 1 FROM pages p WHERE p.id = t.page_id AND p.turn_id = t.id)"),
              0);
    EXPECT_EQ(Count(path, "SELECT count(*) FROM pages p JOIN turns t ON t.id = p.turn_id "
                          "WHERE t.page_id IS DISTINCT FROM p.id"),
              0);
    EXPECT_EQ(Count(path, "SELECT count(*) FROM pages"), Count(path, "SELECT count(DISTINCT turn_id) FROM pages"));
    EXPECT_EQ(Count(path, "SELECT coalesce(sum(page_count), 0) FROM segments"), Count(path, "SELECT count(*) FROM pages"));
    EXPECT_EQ(Count(path, "SELECT count(*) FROM (SELECT 1 FROM facts WHERE status = 'live' "
                          "GROUP BY scope_id, kind, norm_hash HAVING count(*) > 1) AS dup"),
              0);
  };
  check();
  {
    auto e = Engine::Open(o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    auto r = (*e)->Maintain(nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto st = (*e)->GetStats(&scope);
    EXPECT_EQ(st->turns_admitted, kTurns);
    EXPECT_EQ(st->stm_turns, 10);
    EXPECT_EQ(st->mtm_pages + st->archived_pages, kTurns - 10);
    EXPECT_EQ(st->pending_jobs, 0);
    EXPECT_EQ(st->failed_jobs, 0);
  }
  check();
}

INSTANTIATE_TEST_SUITE_P(EveryStep, CrashTest,
                         ::testing::Values("promote.after_read", "promote.after_compute",
                                           "promote.before_commit", "promote.after_commit",
                                           "consolidate.after_compute", "consolidate.before_commit",
                                           "consolidate.after_commit"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& c : n) c = (c == '.') ? '_' : c;
                           return n;
                         });

}  // namespace
}  // namespace engram
