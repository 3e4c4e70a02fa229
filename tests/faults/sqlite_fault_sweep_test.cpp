// Injected I/O faults on SQLite (testing/fault_vfs): for each class of write
// (admission, promotion, consolidation, fact writes, key creation, erasure)
// and each fault (ENOSPC, EIO, a short write, a failed fsync), the fault is
// put on the n-th I/O call of that kind (every n, or a sample of 16 where an
// operation makes more: see FaultCalls), once (a transient error) and from
// the n-th call on (a fault that persists until it is cleared). Each time: the caller gets a clear error (store full
// or store unavailable), the store holds either the state before or the
// state after the operation (never a part of it), reads work while the fault
// lasts, the same engine writes again once it is cleared (no restart), and
// the store reopens whole (integrity and FTS checks, the health classifier
// explains every interruption). The fault points covered are counted and
// printed.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>

#include "faults/fault_support.hpp"

namespace engram::faults {
namespace {

constexpr TimeMs kStart = 1'700'000'000'000;

struct OpCase {
  const char* name;
  EngineOptions base_options;  // the baseline store's engine
  EngineOptions op_options;    // the engine that runs the operation
  std::function<void(Env&)> prepare;  // builds the baseline (no faults)
  std::function<void(Env&)> before;   // runs before the operation, each time (no faults)
  std::function<Status(Env&)> run;    // the operation
  std::function<Status(Env&)> read;   // a read that must work while the fault lasts
  bool retry_always = false;          // the operation is idempotent: retried after any error
  // Maintenance first folds the retrievals' hits into segment heat, in a
  // transaction of its own: a fault after it and before the consolidation
  // commits may leave that third state (and the next run consolidates).
  bool heat_first = false;
};

const Scope kAlice{"default", "alice", "assistant"};
const Scope kBob{"default", "bob", "assistant"};
MemoryScope AliceMemories() {
  MemoryScope s;
  s.user = "alice";
  return s;
}

TurnInput Turn(int i) {
  static const char* kTopics[] = {"I live in Porto near the river", "My sister Ana plays the cello",
                                  "I work as a ship engineer",      "We hike in the Geres park in May",
                                  "I am learning Japanese",         "My dog is called Bolt",
                                  "I prefer green tea to coffee",   "I broke my arm skiing in 2019"};
  TurnInput t;
  t.user_text = std::string(kTopics[i % 8]) + " (note " + std::to_string(i) + ")";
  t.assistant_text = "Noted: " + std::to_string(i);
  return t;
}

void Admit(Env& env, const Scope& scope, int from, int count) {
  for (int i = from; i < from + count; ++i) {
    auto r = env.engine->AddTurn(scope, Turn(i));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
}

std::vector<OpCase> Cases() {
  std::vector<OpCase> cases;
  EngineOptions plain;
  EngineOptions promote;
  promote.stm_capacity = 4;
  promote.promote_batch_max = 8;
  promote.heat_threshold = 1e9;  // promotion only
  EngineOptions consolidate = promote;
  consolidate.heat_threshold = 1.0;

  cases.push_back({"admission", plain, plain, [](Env& e) { Admit(e, kAlice, 0, 3); }, nullptr,
                   [](Env& e) {
                     AdmitOptions o;
                     o.idempotency_key = "admission-1";
                     return e.engine->AddTurns(kAlice, {Turn(3)}, o).status();
                   },
                   [](Env& e) { return e.engine->ListTurns(kAlice, 0, 100).status(); }, true});
  cases.push_back({"promotion", promote, promote, [](Env& e) { Admit(e, kAlice, 0, 10); }, nullptr,
                   [](Env& e) { return e.engine->Maintain(nullptr).status(); },
                   [](Env& e) { return e.engine->GetStats(&kAlice).status(); }, true});
  cases.push_back({"consolidation", promote, consolidate,
                   [](Env& e) {
                     Admit(e, kAlice, 0, 10);
                     auto m = e.engine->Maintain(nullptr);
                     ASSERT_TRUE(m.ok()) << m.status().ToString();
                   },
                   // Retrievals make segments hot: the next maintenance consolidates them.
                   [](Env& e) {
                     for (const char* q : {"Porto river", "sister cello", "ship engineer"}) {
                       ASSERT_TRUE(e.engine->Retrieve(kAlice, q, {}).ok());
                     }
                   },
                   [](Env& e) { return e.engine->Maintain(nullptr).status(); },
                   [](Env& e) { return e.engine->GetProfile(kAlice).status(); }, true, true});
  cases.push_back({"fact_write", plain, plain,
                   [](Env& e) {
                     ASSERT_TRUE(e.engine->AddMemoryText(AliceMemories(), "I am allergic to peanuts", {}).ok());
                   },
                   nullptr,
                   [](Env& e) {
                     MemoryAddOptions o;
                     o.idempotency_key = "fact-1";
                     return e.engine->AddMemoryText(AliceMemories(), "My favourite city is Kyoto and I drink green tea", o)
                         .status();
                   },
                   [](Env& e) { return e.engine->ListMemories(AliceMemories(), {}).status(); }, true});
  cases.push_back({"key_creation", plain, plain,
                   [](Env& e) { ASSERT_TRUE(e.keys->Create("default", {}, server::Role::kAdmin, "first", kStart).ok()); },
                   nullptr,
                   [](Env& e) {
                     return e.keys->Create("default", {"alice"}, server::Role::kWrite, "ci", kStart + 1).status();
                   },
                   [](Env& e) { return e.keys->List("default").status(); }, false});
  cases.push_back({"erasure", plain, plain,
                   [](Env& e) {
                     Admit(e, kAlice, 0, 2);
                     Admit(e, kBob, 2, 3);
                     MemoryScope bob;
                     bob.user = "bob";
                     ASSERT_TRUE(e.engine->AddMemoryText(bob, "I own a red bicycle", {}).ok());
                   },
                   nullptr, [](Env& e) { return e.engine->ForgetUser("default", "bob").status(); },
                   [](Env& e) { return e.engine->ListTurns(kAlice, 0, 100).status(); }, true});
  return cases;
}

const FaultVfs::Fault kKinds[] = {FaultVfs::Fault::kNoSpace, FaultVfs::Fault::kIoError,
                                  FaultVfs::Fault::kShortWrite, FaultVfs::Fault::kFsyncFails};

bool ClearError(FaultVfs::Fault kind, const Status& st) {
  return kind == FaultVfs::Fault::kNoSpace ? sql::IsStoreFull(st) : sql::IsStoreUnavailable(st);
}

// The n-th calls a fault is put on, out of the `calls` a clean run makes.
// Every n when there are at most kEveryCallUpTo (key creation's writes, every
// operation's syncs) or when ENGRAM_FAULT_SWEEP=full; otherwise a sample of
// kEveryCallUpTo: the first 6 calls (the transaction's opening writes, the
// first pages), the last 4 (the commit and the WAL checkpoint) and 6 spread
// evenly between. Every operation x fault x once/persisting is covered
// either way; the full sweep takes minutes and is for a deeper check.
constexpr std::int64_t kEveryCallUpTo = 16;
std::vector<std::int64_t> FaultCalls(std::int64_t calls) {
  std::vector<std::int64_t> out;
  const char* mode = std::getenv("ENGRAM_FAULT_SWEEP");
  const bool full = mode && std::string(mode) == "full";
  if (full || calls <= kEveryCallUpTo) {
    for (std::int64_t n = 1; n <= calls; ++n) out.push_back(n);
    return out;
  }
  std::set<std::int64_t> picked;
  for (std::int64_t n = 1; n <= 6; ++n) picked.insert(n);
  for (std::int64_t n = calls - 3; n <= calls; ++n) picked.insert(n);
  const std::int64_t span = calls - 10;  // calls 7 .. calls-4
  for (std::int64_t i = 1; i <= 6; ++i) picked.insert(6 + i * span / 7);
  return {picked.begin(), picked.end()};
}

class SqliteFaultSweep : public FaultVfsTest, public ::testing::WithParamInterface<int> {};

TEST_P(SqliteFaultSweep, EveryFaultPointGivesAClearErrorAndNoPartialState) {
  const OpCase op = Cases()[static_cast<std::size_t>(GetParam())];
  FaultVfs& vfs = FaultVfs::Get();
  testing::TempDir dir;
  auto clock = std::make_shared<FakeClock>(kStart);
  const std::string base = dir.File("base/engram.db");
  std::filesystem::create_directories(dir.File("base"));
  {
    Env env(base, clock, op.base_options);
    ASSERT_TRUE(env.Open().ok());
    op.prepare(env);
    if (::testing::Test::HasFatalFailure()) return;
  }
  StoreState before;  // as the operation finds it (read in the first clean run)
  int runs = 0;
  auto fresh = [&](Env& env) {
    CopyStore(base, env.path);
    vfs.Forget();
    ASSERT_TRUE(env.Open().ok());
    if (op.before) op.before(env);
  };

  // Two clean runs: the state after, the I/O calls the operation makes, and
  // which tables hold values that differ from run to run (random ids).
  StoreState after;
  std::set<std::string> counted_only;
  std::int64_t writes = 0, syncs = 0;
  for (int i = 0; i < 2; ++i) {
    Env env(dir.File("dry" + std::to_string(i) + "/engram.db"), clock, op.op_options);
    fresh(env);
    if (HasFatalFailure()) return;
    if (i == 0) before = ReadState(env.path);
    vfs.ResetCounts();
    Status st = op.run(env);
    ASSERT_TRUE(st.ok()) << op.name << ": " << st.ToString();
    writes = vfs.counts().writes;
    syncs = vfs.counts().syncs;
    env.Close();
    StoreState s = ReadState(env.path);
    if (i == 0) {
      after = s;
    } else {
      for (const auto& [name, t] : s) {
        if (!(after[name] == t)) counted_only.insert(name);
      }
    }
  }
  ASSERT_FALSE(SameState(after, before, counted_only)) << op.name << " changed nothing";
  std::optional<StoreState> heat;  // heat_first: the hits applied, nothing consolidated
  if (op.heat_first) {
    Env env(dir.File("heat/engram.db"), clock, op.op_options);
    fresh(env);
    if (HasFatalFailure()) return;
    env.Close();  // the engine folds its access log in when it closes
    heat = ReadState(env.path);
    ASSERT_FALSE(SameState(*heat, before, counted_only));
  }
  ASSERT_GT(writes, 0);
  ASSERT_GT(syncs, 0);

  std::map<std::string, int> covered;
  int total = 0, failed_calls = 0, after_on_error = 0;
  for (FaultVfs::Fault kind : kKinds) {
    const std::int64_t calls = kind == FaultVfs::Fault::kFsyncFails ? syncs : writes;
    for (int persistent = 0; persistent < 2; ++persistent) {
      for (std::int64_t n : FaultCalls(calls)) {
        const std::string where = std::string(op.name) + " " + FaultVfs::FaultName(kind) + " at call " +
                                  std::to_string(n) + (persistent ? " on" : " once");
        SCOPED_TRACE(where);
        Env env(dir.File("run" + std::to_string(++runs) + "/engram.db"), clock, op.op_options);
        fresh(env);
        if (HasFatalFailure()) return;
        const std::int64_t faults_before = vfs.counts().faults;
        vfs.Arm({kind, n, persistent ? 1 : 0, env.path});
        Status st = op.run(env);
        const bool fired = vfs.counts().faults > faults_before;
        if (!st.ok()) {
          ++failed_calls;
          EXPECT_TRUE(ClearError(kind, st)) << st.ToString();
          EXPECT_EQ(st.ToString().find('\n'), std::string::npos) << st.ToString();
        }
        if (persistent) {
          Status read = op.read(env);
          EXPECT_TRUE(read.ok()) << "a read while the fault lasts: " << read.ToString();
        }
        StoreState during = ReadState(env.path);
        const bool is_after = SameState(during, after, counted_only);
        const bool is_before = SameState(during, before, counted_only);
        if (st.ok()) {
          EXPECT_TRUE(is_after) << "acknowledged but not all there:" << Diff(after, during);
        } else {
          const bool is_heat = heat && SameState(during, *heat, counted_only);
          EXPECT_TRUE(is_after || is_before || is_heat)
              << "partial state; differs from before in" << Diff(before, during)
                                             << "; from after in" << Diff(after, during);
          after_on_error += is_after;
        }
        vfs.Disarm();
        // What the health classifier says once the fault is gone, before a
        // retry: no job failed for it (a store fault uses up no attempt), no
        // work is at risk but a run the fault left open (the store could not
        // record its end), and every finding has its reason.
        {
          auto h = env.engine->Health(HealthOptions{});
          ASSERT_TRUE(h.ok()) << h.status().ToString();
          EXPECT_EQ(h->counts[static_cast<int>(HealthState::kPromotionMissing)], 0);
          ExpectExplainedHealth(env.engine.get(), where + " (before the retry)", /*interrupted_runs=*/true);
        }
        // The same engine writes again once the fault is gone.
        if (!st.ok() && (!is_after || op.retry_always)) {
          Status again = op.run(env);
          EXPECT_TRUE(again.ok()) << "after the fault cleared: " << again.ToString();
        }
        EXPECT_TRUE(SameState(ReadState(env.path), after, counted_only))
            << "after the retry:" << Diff(after, ReadState(env.path));
        env.Close();
        EXPECT_EQ(Integrity(env.path), "ok");
        ASSERT_TRUE(env.Open().ok());
        ExpectExplainedHealth(env.engine.get(), where);
        env.Close();
        EXPECT_TRUE(SameState(ReadState(env.path), after, counted_only)) << "reopened:" << Diff(after, ReadState(env.path));
        std::filesystem::remove_all(std::filesystem::path(env.path).parent_path());
        if (fired) {
          ++covered[FaultVfs::FaultName(kind)];
          ++total;
        }
        if (HasFailure()) {
          ADD_FAILURE() << "stopping the sweep at the first failing point";
          return;
        }
      }
    }
  }
  std::printf("[ fault points ] %s: %d (", op.name, total);
  for (const auto& [k, v] : covered) std::printf(" %s=%d", k.c_str(), v);
  std::printf(" ); %lld writes (%zu of them faulted) and %lld syncs (%zu) per clean run, %d calls failed (%d of them "
              "committed whole)\n",
              static_cast<long long>(writes), FaultCalls(writes).size(), static_cast<long long>(syncs),
              FaultCalls(syncs).size(), failed_calls, after_on_error);
  EXPECT_GT(total, 0);
}

INSTANTIATE_TEST_SUITE_P(Operations, SqliteFaultSweep, ::testing::Range(0, 6), [](const auto& info) {
  return std::string(Cases()[static_cast<std::size_t>(info.param)].name);
});

}  // namespace
}  // namespace engram::faults
