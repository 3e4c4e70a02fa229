// Engine::GetTenantUsage (the quotas of engram serve): what one tenant holds,
// on both backends; other tenants, derived facts and deleted memories are not
// counted, and replay_only admits nothing new.
#include <gtest/gtest.h>

#include "engram/engine.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

TEST(TenantUsage, CountsTurnsLiveMemoriesAndTheirBytesOfOneTenant) {
  testing::TempDir dir;
  auto opened = Engine::Open({.db_path = testing::StoreAt(dir.File("engram.db"))});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Engine& e = **opened;
  const Scope ann{"acme", "ann", "assistant"}, zed{"globex", "zed", "assistant"};
  ASSERT_TRUE(e.AddTurns(ann, {{.user_text = "héllo", .assistant_text = "hi"},
                               {.user_text = "bye", .assistant_text = "ciao"}}).ok());
  ASSERT_TRUE(e.AddTurn(zed, {.user_text = "other tenant", .assistant_text = "not counted"}).ok());
  MemoryScope m;
  m.tenant = "acme";
  m.user = "ann";
  MemoryAddOptions verbatim;
  verbatim.infer = false;
  auto kept = e.AddMemoryText(m, "Ann keeps bees", verbatim);
  auto gone = e.AddMemoryText(m, "Ann rows", verbatim);
  ASSERT_TRUE(kept.ok() && gone.ok());
  ASSERT_TRUE(e.DeleteMemory(m, gone->results.at(0).id, "test").ok());

  auto u = e.GetTenantUsage("acme");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->turns, 2);
  EXPECT_EQ(u->memories, 1);
  // Bytes, not characters: "héllo" is 6 bytes.
  EXPECT_EQ(u->bytes, 6 + 2 + 3 + 4 + static_cast<std::int64_t>(std::string("Ann keeps bees").size()));
  EXPECT_EQ(e.GetTenantUsage("nobody")->turns, 0);
  EXPECT_EQ(e.GetTenantUsage("").status().code(), StatusCode::kInvalidArgument);

  // Over a quota, only a retry passes.
  AdmitOptions first;
  first.idempotency_key = "k1";
  ASSERT_TRUE(e.AddTurns(ann, {{.user_text = "once", .assistant_text = "ok"}}, first).ok());
  AdmitOptions retry = first;
  retry.replay_only = true;
  auto replayed = e.AddTurns(ann, {{.user_text = "once", .assistant_text = "ok"}}, retry);
  ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
  EXPECT_TRUE(replayed->front().replayed);
  AdmitOptions fresh;
  fresh.idempotency_key = "k2";
  fresh.replay_only = true;
  EXPECT_EQ(e.AddTurns(ann, {{.user_text = "new", .assistant_text = "ok"}}, fresh).status().code(),
            StatusCode::kResourceExhausted);
  MemoryAddOptions memory_retry = verbatim;
  memory_retry.replay_only = true;
  EXPECT_EQ(e.AddMemoryText(m, "Ann likes figs", memory_retry).status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(e.GetTenantUsage("acme")->turns, 3);
  EXPECT_EQ(e.GetTenantUsage("acme")->memories, 1);
}

}  // namespace
}  // namespace engram
