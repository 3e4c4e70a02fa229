// Several engines on one store, as several processes would be (a server, a
// worker, `engram maintain`): jobs are leased so that no job runs twice and
// no admission during a run is lost, and an erasure is final for every
// engine's caches.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "engram/engine.hpp"
#include "models/builtin/extractive_maintainer.hpp"
#include "testing/dialogue.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

// Counts page analyses (one per promotion batch attempt).
class CountingMaintainer final : public Maintainer {
 public:
  std::atomic<int> analyses{0};
  std::string Name() const override { return inner_.Name(); }
  bool IsBuiltin() const override { return true; }
  Result<BatchAnalysis> AnalyzePages(const ChainContext& chain, const std::vector<PageDraft>& pages,
                                     const IdfFn& idf) override {
    ++analyses;
    return inner_.AnalyzePages(chain, pages, idf);
  }
  Result<SegmentBatch> SummarizeSegments(const std::vector<SegmentInput>& s, const IdfFn& idf) override {
    return inner_.SummarizeSegments(s, idf);
  }
  Result<Consolidation> Consolidate(const std::vector<ProfileSlot>& p,
                                    const std::vector<ConsolidationPage>& pages) override {
    return inner_.Consolidate(p, pages);
  }

 private:
  ExtractiveMaintainer inner_;
};

EngineOptions Options(const std::string& path, std::shared_ptr<Maintainer> m) {
  EngineOptions o;
  o.db_path = testing::StoreAt(path);
  o.stm_capacity = 4;
  o.promote_batch_max = 6;
  o.maintainer = std::move(m);
  return o;
}

// Before leases, `engram maintain` beside a live server failed now and then
// with "UNIQUE constraint failed: jobs.scope_id, jobs.kind", and both could
// run the same promotion (paying for its model calls twice).
TEST(SharedStore, TwoEnginesNeverRunOneJobTwiceNorCollide) {
  testing::TempDir dir;
  auto counting = std::make_shared<CountingMaintainer>();
  auto a = Engine::Open(Options(dir.File("s.db"), counting));
  auto b = Engine::Open(Options(dir.File("s.db"), counting));
  ASSERT_TRUE(a.ok() && b.ok());
  constexpr int kUsers = 4, kTurns = 90;
  std::atomic<bool> writing{true};
  std::atomic<int> promotions{0};
  std::vector<std::string> errors;
  std::mutex errors_mu;
  auto note = [&](const Status& st, const char* what) {
    if (st.ok()) return;
    std::lock_guard<std::mutex> l(errors_mu);
    errors.push_back(std::string(what) + ": " + st.ToString());
  };
  std::thread writer([&] {
    auto dialogue = testing::SyntheticDialogue(kTurns);
    for (int i = 0; i < kTurns; ++i) {
      for (int u = 0; u < kUsers; ++u) {
        note((*a)->AddTurn(Scope{"t", "u" + std::to_string(u), "a"}, dialogue[i]).status(), "admit");
      }
    }
    writing = false;
  });
  auto maintain = [&](Engine* e) {
    while (writing) {
      auto r = e->Maintain(nullptr);
      note(r.status(), "maintain");
      if (r.ok()) promotions += r->promotions;
    }
  };
  std::thread ma([&] { maintain(a->get()); });
  std::thread mb([&] { maintain(b->get()); });
  writer.join();
  ma.join();
  mb.join();
  for (Engine* e : {a->get(), b->get()}) {
    auto r = e->Maintain(nullptr);
    note(r.status(), "final maintain");
    if (r.ok()) promotions += r->promotions;
  }
  EXPECT_TRUE(errors.empty()) << errors.size() << " errors, first: " << errors.front();
  EXPECT_EQ(counting->analyses.load(), promotions.load())
      << "every page analysis was committed exactly once (no promotion ran twice)";
  for (int u = 0; u < kUsers; ++u) {
    Scope s{"t", "u" + std::to_string(u), "a"};
    auto st = (*b)->GetStats(&s);
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(st->turns_admitted, kTurns);
    EXPECT_LE(st->stm_turns, 4);
    EXPECT_EQ(st->stm_turns + st->mtm_pages + st->archived_pages, kTurns);
    EXPECT_EQ(st->pending_jobs + st->failed_jobs, 0);
  }
}

// The lost wake-up, forced: turns admitted (by another engine) right after a
// promotion's last commit, before its job is marked done.
Engine* g_other = nullptr;
std::atomic<int> g_injected{0};
void AdmitAfterCommit(const char* point) {
  if (std::string(point) != "promote.after_commit" || g_injected.exchange(1) != 0) return;
  for (const auto& t : testing::SyntheticDialogue(7, MakeTimeMs(2025, 6, 1, 9))) {
    ASSERT_TRUE(g_other->AddTurn(Scope{"t", "u", "a"}, t).ok());
  }
}

TEST(SharedStore, AdmissionsRacingTheEndOfAPromotionLeaveItDue) {
  testing::TempDir dir;
  auto other = Engine::Open(Options(dir.File("s.db"), std::make_shared<ExtractiveMaintainer>()));
  ASSERT_TRUE(other.ok());
  g_other = other->get();
  g_injected = 0;
  EngineOptions o = Options(dir.File("s.db"), std::make_shared<ExtractiveMaintainer>());
  o.fault_point = AdmitAfterCommit;
  auto e = Engine::Open(o);
  ASSERT_TRUE(e.ok());
  Scope s{"t", "u", "a"};
  for (const auto& t : testing::SyntheticDialogue(9)) ASSERT_TRUE((*e)->AddTurn(s, t).ok());
  auto r = (*e)->Maintain(nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(g_injected.load(), 1);
  auto st = (*e)->GetStats(&s);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->turns_admitted, 16);
  // Either the same call ran the re-armed job, or it is still due.
  EXPECT_TRUE(st->stm_turns <= 4 || st->pending_jobs == 1)
      << "STM holds " << st->stm_turns << " turns and no job is pending";
  g_other = nullptr;
}

// Readers hammer a user in two engines while one engine forgets it; then new
// users (another tenant with the same user id, and another user of the same
// tenant) get the fresh scope ids. Nothing of the erased user comes back to
// a retrieval that started after the erasure returned.
TEST(SharedStore, ErasureRacingRetrievalNeverServesErasedText) {
  testing::TempDir dir;
  auto e1 = Engine::Open(Options(dir.File("s.db"), std::make_shared<ExtractiveMaintainer>()));
  auto e2 = Engine::Open(Options(dir.File("s.db"), std::make_shared<ExtractiveMaintainer>()));
  ASSERT_TRUE(e1.ok() && e2.ok());
  Engine* engines[] = {e1->get(), e2->get()};
  for (int round = 0; round < 4; ++round) {
    const std::string marker = "zorblax" + std::string(1, static_cast<char>('a' + round));
    Scope victim{"t1", "victim", "a"};
    auto dialogue = testing::SyntheticDialogue(24);
    for (auto& t : dialogue) t.user_text += " The " + marker + " code word.";
    ASSERT_TRUE(engines[round % 2]->AddTurns(victim, dialogue).ok());
    ASSERT_TRUE(engines[round % 2]->Maintain(nullptr).ok());
    std::atomic<bool> erased{false}, stop{false};
    std::atomic<int> leaks{0}, reads{0};
    std::vector<std::thread> readers;
    const Scope probes[] = {victim, Scope{"t2", "victim", "a"}, Scope{"t1", "other", "a"}};
    for (int r = 0; r < 4; ++r) {
      readers.emplace_back([&, r] {
        Engine* e = engines[r % 2];
        while (!stop) {
          for (const Scope& p : probes) {
            const bool after = erased.load();
            auto got = e->Retrieve(p, "what is the " + marker + " code word", {});
            ++reads;
            if (after && got.ok() && got->context.find(marker) != std::string::npos) ++leaks;
          }
        }
      });
    }
    while (reads < 20) std::this_thread::yield();
    auto n = engines[(round + 1) % 2]->ForgetUser("t1", "victim");
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 24);
    erased = true;
    // New scopes right after the erasure: they must not inherit anything.
    for (const Scope& p : {probes[1], probes[2]}) {
      ASSERT_TRUE(engines[round % 2]->AddTurns(p, testing::SyntheticDialogue(12)).ok());
    }
    ASSERT_TRUE(engines[round % 2]->Maintain(nullptr).ok());
    const int seen = reads;
    while (reads < seen + 40) std::this_thread::yield();
    stop = true;
    for (auto& t : readers) t.join();
    EXPECT_EQ(leaks.load(), 0) << "round " << round;
    for (Engine* e : engines) {
      for (const Scope& p : probes) {
        auto got = e->Retrieve(p, marker, {});
        ASSERT_TRUE(got.ok());
        EXPECT_EQ(got->context.find(marker), std::string::npos);
      }
    }
    for (Engine* e : engines) {
      ASSERT_TRUE(e->ForgetUser("t2", "victim").ok());
      ASSERT_TRUE(e->ForgetUser("t1", "other").ok());
    }
  }
}

// A user's own memories are facts of each of its dialogues: what one engine
// adds, edits or purges there is what the other's cached snapshot of a
// dialogue shows at its next retrieval, and a purged memory is in no
// context of either, nor of another tenant's user of the same name.
TEST(SharedStore, AUsersMemoriesReachEveryEnginesDialogues) {
  testing::TempDir dir;
  auto e1 = Engine::Open(Options(dir.File("s.db"), std::make_shared<ExtractiveMaintainer>()));
  auto e2 = Engine::Open(Options(dir.File("s.db"), std::make_shared<ExtractiveMaintainer>()));
  ASSERT_TRUE(e1.ok() && e2.ok());
  Engine* writer = e1->get();
  Engine* reader = e2->get();
  const Scope dialogue{"t1", "ines", "a"};
  const Scope other_tenant{"t2", "ines", "a"};
  ASSERT_TRUE(writer->AddTurns(dialogue, testing::SyntheticDialogue(6)).ok());
  ASSERT_TRUE(writer->AddTurns(other_tenant, testing::SyntheticDialogue(6)).ok());
  auto context = [&](Engine* e, const Scope& s) {
    auto r = e->Retrieve(s, "quokka sanctuary volunteering", {});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->context : std::string();
  };
  EXPECT_EQ(context(reader, dialogue).find("quokka"), std::string::npos);  // cached now
  const MemoryScope own{"t1", "ines", "", "", false};
  MemoryAddOptions raw;
  raw.infer = false;
  auto added = writer->AddMemoryText(own, "Ines volunteers at the quokka sanctuary on Sundays", raw);
  ASSERT_TRUE(added.ok() && added->results.size() == 1u);
  EXPECT_NE(context(reader, dialogue).find("quokka sanctuary on Sundays"), std::string::npos);
  EXPECT_EQ(context(reader, other_tenant).find("quokka"), std::string::npos);
  MemoryUpdate u;
  u.text = "Ines volunteers at the quokka sanctuary on Saturdays";
  ASSERT_TRUE(writer->UpdateMemory(own, added->results.front().id, u).ok());
  const std::string updated = context(reader, dialogue);
  EXPECT_NE(updated.find("on Saturdays"), std::string::npos) << updated;
  EXPECT_EQ(updated.find("on Sundays"), std::string::npos) << updated;
  ASSERT_TRUE(writer->PurgeMemories(own).ok());
  for (Engine* e : {reader, writer}) {
    EXPECT_EQ(context(e, dialogue).find("quokka"), std::string::npos);
    auto listed = e->ListFacts(dialogue, "");
    ASSERT_TRUE(listed.ok());
    EXPECT_TRUE(listed->empty());
  }
}

}  // namespace
}  // namespace engram
