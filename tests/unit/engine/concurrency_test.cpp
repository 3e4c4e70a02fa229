// Many readers and writers at once: no errors, nothing lost.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "engram/engine.hpp"
#include "testing/dialogue.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

TEST(Concurrency, ReadersWritersAndTheWorkerTogether) {
  testing::TempDir dir;
  EngineOptions o;
  o.db_path = testing::StoreAt(dir.File("e.db"));
  o.background_maintenance = true;
  auto opened = Engine::Open(o);
  ASSERT_TRUE(opened.ok());
  Engine& e = **opened;
  constexpr int kWriters = 2, kTurnsEach = 60, kReaders = 3;
  std::atomic<int> errors{0};
  std::atomic<bool> writing{true};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      Scope s{"default", "user" + std::to_string(w), "a"};
      for (const auto& t : testing::SyntheticDialogue(kTurnsEach)) {
        if (!e.AddTurn(s, t).ok()) ++errors;
      }
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      Scope s{"default", "user" + std::to_string(r % kWriters), "a"};
      while (writing) {
        if (!e.Retrieve(s, "trip to Japan with the cello", {}).ok()) ++errors;
        if (!e.GetStats(&s).ok()) ++errors;
      }
    });
  }
  for (int w = 0; w < kWriters; ++w) threads[static_cast<std::size_t>(w)].join();
  writing = false;
  for (std::size_t i = kWriters; i < threads.size(); ++i) threads[i].join();
  EXPECT_EQ(errors, 0);
  ASSERT_TRUE(e.Maintain(nullptr).ok());
  for (int w = 0; w < kWriters; ++w) {
    Scope s{"default", "user" + std::to_string(w), "a"};
    auto st = e.GetStats(&s);
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(st->turns_admitted, kTurnsEach);
    EXPECT_EQ(st->stm_turns, 10);
    EXPECT_EQ(st->stm_turns + st->mtm_pages + st->archived_pages, kTurnsEach);
  }
}

}  // namespace
}  // namespace engram
