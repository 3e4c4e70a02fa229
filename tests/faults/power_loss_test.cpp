// Power loss on SQLite (testing/fault_vfs): a sequence of acknowledged
// writes (admissions, fact writes, key creation, maintenance, an erasure)
// runs until the power is cut at its n-th mutating I/O call, for every n;
// every write not yet synced is then discarded (files put back to their last
// synced image, files never synced removed) and the store is reopened. With
// durability full, everything acknowledged is there, nothing is half
// written, and the health classifier explains interrupted jobs. With
// durability normal, the newest acknowledged commits may be lost, but the
// store is whole and holds a prefix of what was acknowledged.
#include <algorithm>
#include <cstdio>
#include <functional>

#include "faults/fault_support.hpp"

namespace engram::faults {
namespace {

constexpr TimeMs kStart = 1'700'000'000'000;
const Scope kAlice{"default", "alice", "assistant"};
const Scope kBob{"default", "bob", "assistant"};

MemoryScope Mem(const std::string& user) {
  MemoryScope s;
  s.user = user;
  return s;
}

TurnInput Turn(const std::string& text) {
  TurnInput t;
  t.user_text = text;
  t.assistant_text = "ok: " + text;
  return t;
}

// What the sequence had acknowledged when the power went.
struct Acked {
  std::vector<std::string> alice_turns;   // in admission order
  std::vector<std::string> memory_ids;    // alice's memories
  std::vector<std::string> key_ids;       // keys created
  bool bob_forgotten = false;
  int maintained = 0;
  int steps = 0;  // steps acknowledged
};

// The writes of the sequence, each acknowledged when it returns Ok.
std::vector<std::function<Status(Env&, Acked&)>> Sequence() {
  std::vector<std::function<Status(Env&, Acked&)>> steps;
  auto admit = [](const std::string& text) {
    return [text](Env& e, Acked& a) {
      auto r = e.engine->AddTurn(kAlice, Turn(text));
      if (r.ok()) a.alice_turns.push_back(text);
      return r.status();
    };
  };
  auto remember = [](const std::string& text) {
    return [text](Env& e, Acked& a) {
      MemoryAddOptions o;
      o.infer = false;
      auto r = e.engine->AddMemoryText(Mem("alice"), text, o);
      if (r.ok()) {
        for (const auto& ev : r->results) a.memory_ids.push_back(ev.id);
      }
      return r.status();
    };
  };
  auto key = [](const std::string& name) {
    return [name](Env& e, Acked& a) {
      auto r = e.keys->Create("default", {"alice"}, server::Role::kWrite, name, kStart);
      if (r.ok()) a.key_ids.push_back(r->first.id);
      return r.status();
    };
  };
  steps.push_back(admit("I live in Porto near the river"));
  steps.push_back(remember("I am allergic to peanuts"));
  steps.push_back(admit("My sister Ana plays the cello"));
  steps.push_back(key("ci"));
  steps.push_back(admit("I work as a ship engineer"));
  steps.push_back(admit("We hike in the Geres park in May"));
  steps.push_back(admit("I am learning Japanese"));
  steps.push_back([](Env& e, Acked& a) {  // promotion (STM holds 4)
    auto r = e.engine->Maintain(nullptr);
    if (r.ok()) ++a.maintained;
    return r.status();
  });
  steps.push_back(remember("My favourite city is Kyoto"));
  steps.push_back([](Env& e, Acked& a) {
    auto r = e.engine->ForgetUser("default", "bob");
    if (r.ok()) a.bob_forgotten = true;
    return r.status();
  });
  steps.push_back(admit("My dog is called Bolt"));
  steps.push_back(key("backup"));
  return steps;
}

EngineOptions Options(EngineOptions::Durability d) {
  EngineOptions o;
  o.stm_capacity = 4;
  o.promote_batch_max = 8;
  o.durability = d;
  return o;
}

// The baseline: a store with bob's turns and a memory (erased by the sequence).
void MakeBaseline(const std::string& path, const std::shared_ptr<FakeClock>& clock) {
  Env env(path, clock, Options(EngineOptions::Durability::kFull));
  ASSERT_TRUE(env.Open().ok());
  for (const char* t : {"I own a red bicycle", "I collect stamps"}) {
    ASSERT_TRUE(env.engine->AddTurn(kBob, Turn(t)).ok());
  }
  ASSERT_TRUE(env.engine->AddMemoryText(Mem("bob"), "I have two cats", {}).ok());
}

// Runs the sequence until a step fails (the power went off).
Acked RunSequence(Env& env) {
  Acked a;
  for (auto& step : Sequence()) {
    if (!step(env, a).ok()) break;
    ++a.steps;
    env.clock->Advance(1000);
  }
  return a;
}

std::int64_t Rows(const std::string& path, const std::string& sql) { return testing::CountRows(path, sql); }

// The invariants of the tiers (as the crash tests): a turn is in STM or has
// exactly one page that points back; segment page counts add up; no live
// duplicate facts.
void ExpectTiersWhole(const std::string& path) {
  EXPECT_EQ(Rows(path, "SELECT count(*) FROM turns t WHERE t.page_id IS NOT NULL AND NOT EXISTS "
                       "(SELECT 1 FROM pages p WHERE p.id = t.page_id AND p.turn_id = t.id)"),
            0);
  EXPECT_EQ(Rows(path, "SELECT count(*) FROM pages p JOIN turns t ON t.id = p.turn_id WHERE t.page_id IS NOT p.id"), 0);
  EXPECT_EQ(Rows(path, "SELECT coalesce(sum(page_count), 0) FROM segments"), Rows(path, "SELECT count(*) FROM pages"));
  EXPECT_EQ(Rows(path, "SELECT count(*) FROM (SELECT 1 FROM facts WHERE status = 'live' "
                       "GROUP BY scope_id, kind, norm_hash HAVING count(*) > 1)"),
            0);
}

// Alice's turns after the reopen, in admission order.
std::vector<std::string> AliceTurns(Engine* e) {
  std::vector<std::string> out;
  auto turns = e->ListTurns(kAlice, 0, 1000);
  EXPECT_TRUE(turns.ok()) << turns.status().ToString();
  if (turns.ok()) {
    for (const auto& t : *turns) out.push_back(t.user_text);
  }
  return out;
}

class PowerLoss : public FaultVfsTest {};

TEST_F(PowerLoss, WithDurabilityFullEveryAcknowledgedWriteSurvivesACutAtEveryIoCall) {
  FaultVfs& vfs = FaultVfs::Get();
  testing::TempDir dir;
  auto clock = std::make_shared<FakeClock>(kStart);
  const std::string base = dir.File("base/engram.db");
  std::filesystem::create_directories(dir.File("base"));
  MakeBaseline(base, clock);
  if (HasFatalFailure()) return;

  // A clean run: how many mutating I/O calls the sequence makes.
  std::int64_t calls = 0;
  {
    Env env(dir.File("dry/engram.db"), clock, Options(EngineOptions::Durability::kFull));
    CopyStore(base, env.path);
    vfs.Forget();
    ASSERT_TRUE(env.Open().ok());
    vfs.ResetCounts();
    Acked a = RunSequence(env);
    ASSERT_EQ(a.steps, static_cast<int>(Sequence().size()));
    calls = vfs.counts().mutating();
  }
  ASSERT_GT(calls, 10);

  int cuts = 0, mid_step = 0;
  for (std::int64_t n = 1; n <= calls + 1; ++n) {
    const std::string where = "power cut at mutating call " + std::to_string(n) + " of " + std::to_string(calls);
    SCOPED_TRACE(where);
    Env env(dir.File("cut" + std::to_string(n) + "/engram.db"), clock, Options(EngineOptions::Durability::kFull));
    CopyStore(base, env.path);
    vfs.Forget();
    ASSERT_TRUE(env.Open().ok());
    vfs.Arm({FaultVfs::Fault::kPowerCut, n, 0, ""});
    Acked a = RunSequence(env);
    const bool cut = vfs.power_off();
    if (!cut) vfs.Arm({FaultVfs::Fault::kPowerCut, 1, 0, ""});  // after the last step: cut before the close
    env.Close();  // the process is gone: its last writes are refused
    vfs.CutPower();
    ++cuts;
    mid_step += a.steps < static_cast<int>(Sequence().size());

    EXPECT_EQ(Integrity(env.path), "ok");
    Status opened = env.Open();
    ASSERT_TRUE(opened.ok()) << opened.ToString();
    // Every acknowledged turn, in order; at most one more (the step in flight), whole.
    std::vector<std::string> turns = AliceTurns(env.engine.get());
    ASSERT_GE(turns.size(), a.alice_turns.size());
    EXPECT_LE(turns.size(), a.alice_turns.size() + 1);
    for (std::size_t i = 0; i < a.alice_turns.size(); ++i) EXPECT_EQ(turns[i], a.alice_turns[i]);
    for (const auto& id : a.memory_ids) {
      auto m = env.engine->GetMemory(Mem("alice"), id);
      EXPECT_TRUE(m.ok()) << "acknowledged memory " << id << ": " << m.status().ToString();
    }
    auto keys = env.keys->List("default");
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();
    for (const auto& id : a.key_ids) {
      EXPECT_TRUE(std::any_of(keys->begin(), keys->end(), [&](const auto& k) { return k.id == id; }))
          << "an acknowledged key is gone: " << id;
    }
    EXPECT_LE(keys->size(), a.key_ids.size() + 1);
    if (a.bob_forgotten) {
      EXPECT_EQ(Rows(env.path, "SELECT count(*) FROM turns t JOIN scopes s ON s.id = t.scope_id WHERE s.user_id = 'bob'"), 0);
      EXPECT_EQ(Rows(env.path, "SELECT count(*) FROM facts f JOIN scopes s ON s.id = f.scope_id WHERE s.user_id = 'bob'"), 0);
    }
    ExpectTiersWhole(env.path);
    ExpectExplainedHealth(env.engine.get(), where, /*interrupted_runs=*/true);
    // Interrupted work completes: maintenance takes over the jobs of the
    // process that lost its power, and the store is green. A restarted
    // process sees that holder's pid gone and takes its leases at once; here
    // the holder is this very process (its pid lives on), so its leases are
    // taken once they expire.
    env.clock->Advance(static_cast<TimeMs>(EngineOptions{}.job_lease_seconds) * 1000 + 1);
    auto m = env.engine->Maintain(nullptr);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    auto h = env.engine->Health(HealthOptions{});
    ASSERT_TRUE(h.ok());
    EXPECT_TRUE(h->green()) << HealthStateName(h->overall) << ": "
                            << (h->findings.empty() ? "" : h->findings.front().kind + " " + h->findings.front().reason);
    env.Close();
    std::filesystem::remove_all(std::filesystem::path(env.path).parent_path());
    if (HasFailure()) {
      ADD_FAILURE() << "stopping at the first failing cut";
      return;
    }
  }
  std::printf("[ power cuts   ] durability full: %d cuts over %lld mutating I/O calls (%d in the middle of the sequence)\n",
              cuts, static_cast<long long>(calls), mid_step);
}

TEST_F(PowerLoss, WithDurabilityNormalTheNewestCommitsMayBeLostButTheStoreIsWhole) {
  FaultVfs& vfs = FaultVfs::Get();
  testing::TempDir dir;
  auto clock = std::make_shared<FakeClock>(kStart);
  const std::string base = dir.File("base/engram.db");
  std::filesystem::create_directories(dir.File("base"));
  MakeBaseline(base, clock);
  if (HasFatalFailure()) return;
  Env env(dir.File("normal/engram.db"), clock, Options(EngineOptions::Durability::kNormal));
  CopyStore(base, env.path);
  vfs.Forget();
  ASSERT_TRUE(env.Open().ok());
  Acked a = RunSequence(env);
  ASSERT_EQ(a.steps, static_cast<int>(Sequence().size()));
  // The sequence ends with a key, whose connection always commits with
  // synchronous=FULL (and so syncs the whole WAL): the turns admitted after it
  // are the ones normal durability may lose.
  for (const char* text : {"I prefer green tea to coffee", "I broke my arm skiing in 2019"}) {
    auto r = env.engine->AddTurn(kAlice, Turn(text));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    a.alice_turns.push_back(text);
  }
  vfs.Arm({FaultVfs::Fault::kPowerCut, 1, 0, ""});
  env.Close();
  vfs.CutPower();

  EXPECT_EQ(Integrity(env.path), "ok");
  ASSERT_TRUE(env.Open().ok());
  std::vector<std::string> turns = AliceTurns(env.engine.get());
  ASSERT_LE(turns.size(), a.alice_turns.size());
  for (std::size_t i = 0; i < turns.size(); ++i) EXPECT_EQ(turns[i], a.alice_turns[i]) << "not a prefix";
  ExpectTiersWhole(env.path);
  ExpectExplainedHealth(env.engine.get(), "durability normal");
  const std::size_t lost = a.alice_turns.size() - turns.size();
  std::printf("[ power cuts   ] durability normal: %zu of %zu acknowledged turns lost, the store whole\n", lost,
              a.alice_turns.size());
  // Normal syncs the WAL only at checkpoints: the commits since the last one are gone.
  EXPECT_GT(lost, 0u);
}

}  // namespace
}  // namespace engram::faults
