// The health classifier on hand-built evidence: one fixture per state (eight
// cases), the precedence rules of docs/LINEAGE.md, expiry, purges and
// compaction. No engine: the evidence is written directly.
#include <gtest/gtest.h>

#include "lineage/health.hpp"

namespace engram::lineage {
namespace {

constexpr TimeMs kT0 = 1'700'000'000'000;  // 2023-11-14
constexpr TimeMs kMin = 60'000;
constexpr const char* kSv = "engram/0.1.0;stm=2;emb=test";

// A store with one healthy scope A (user u1, assistant a1): turns 1 and 2 on
// pages 10 and 11 of segment 5, fact 7, a finished promotion job 3, a
// retrieval and a generation that name what they used. Scope B shares the
// user but not the assistant; it holds turn 20 on page 30 of segment 6.
class Fixture {
 public:
  Scope a{"t", "u1", "a1"}, b{"t", "u1", "a2"};
  Evidence e;
  Policy p;

  Fixture() {
    p.now = kT0 + 10 * kMin;
    p.horizon_ms = 24 * 60 * kMin;
    p.promotion_wait_ms = 60 * kMin;
    p.stm_capacity = 2;
    e.scopes = {{1, a}, {2, b}};
    PromotedTurn(a, 1, 1, 1, 10, 5, "run-admit", "run-promote");
    PromotedTurn(a, 1, 2, 2, 11, 5, "run-admit", "run-promote");
    e.segments.push_back({5, 1, 2, kT0, 0, false});
    R(a, "segment", 5, "stm", "mtm", "committed", kT0 + kMin, "run-promote").outcome_receipt =
        "segment.create segments.id=5";
    e.facts.push_back({7, 1, 1, "live", kT0 + 2 * kMin, false});
    R(a, "fact", 7, "mtm", "lpm", "committed", kT0 + 2 * kMin, "run-consolidate").outcome_receipt = "facts.id=7";
    e.jobs.push_back({3, 1, "promote", "done", 1, kT0, kT0 + kMin});
    R(a, "job", 3, "stm", "mtm", "started", kT0 + kMin, "run-promote");
    R(a, "job", 3, "stm", "mtm", "committed", kT0 + kMin, "run-promote");
    R(a, "retrieval", 0, "store", "retrieval", "committed", kT0 + 3 * kMin, "run-r1").depends_on_version =
        "page:10@1,user_fact:7@1";
    Generation(a, kT0 + 4 * kMin, "run-g1", "page:10@1,user_fact:7@1", 2);
    PromotedTurn(b, 2, 20, 1, 30, 6, "run-admit-b", "run-promote-b");
    e.segments.push_back({6, 2, 1, kT0, 0, false});
    R(b, "segment", 6, "stm", "mtm", "committed", kT0 + kMin, "run-promote-b").outcome_receipt =
        "segment.create segments.id=6";
  }

  Receipt& R(const Scope& s, const std::string& kind, std::int64_t id, const std::string& from,
             const std::string& to, const std::string& status, TimeMs at, const std::string& run) {
    Receipt r;
    r.id = static_cast<std::int64_t>(e.receipts.size()) + 1;
    r.run_id = run;
    r.tenant = s.tenant;
    r.user_scope = s.user;
    r.assistant_scope = s.assistant;
    r.memory_kind = kind;
    r.memory_id = id;
    r.version = 1;
    r.source_version = kSv;
    r.from_tier = from;
    r.to_tier = to;
    r.status = status;
    r.at_utc = at;
    e.receipts.push_back(r);
    return e.receipts.back();
  }
  // A turn admitted at kT0 and promoted onto `page` at kT0 + 1 min.
  void PromotedTurn(const Scope& s, std::int64_t scope_id, std::int64_t id, std::int64_t seq, std::int64_t page,
                    std::int64_t segment, const std::string& run, const std::string& promote_run) {
    e.turns.push_back({id, scope_id, seq, page, kT0});
    e.pages.push_back({page, scope_id, id, segment, 0, 0, false});
    R(s, "turn", id, "input", "stm", "committed", kT0, run).outcome_receipt = "turns.id=" + std::to_string(id);
    R(s, "turn", id, "stm", "mtm", "committed", kT0 + kMin, promote_run).outcome_receipt =
        "pages.id=" + std::to_string(page);
  }
  void StmTurn(const Scope& s, std::int64_t scope_id, std::int64_t id, std::int64_t seq, TimeMs at) {
    e.turns.push_back({id, scope_id, seq, 0, at});
    R(s, "turn", id, "input", "stm", "committed", at, "run-admit-" + std::to_string(id));
  }
  Receipt& Generation(const Scope& s, TimeMs at, const std::string& run, const std::string& deps,
                      std::int64_t answer_turn) {
    Receipt& g = R(s, "generation", answer_turn, "retrieval", "answer", "committed", at, run);
    g.depends_on_version = deps;
    g.outcome_receipt = "turns.id=" + std::to_string(answer_turn);
    return g;
  }

  HealthReport Run() const { return Classify(e, p); }
  static const ScopeHealth* ScopeOf(const HealthReport& r, const Scope& s) {
    for (const auto& sh : r.scopes) {
      if (sh.scope.user == s.user && sh.scope.assistant == s.assistant) return &sh;
    }
    return nullptr;
  }
  static HealthState StateOf(const HealthReport& r, const Scope& s) {
    const ScopeHealth* sh = ScopeOf(r, s);
    return sh ? sh->state : HealthState::kHealthy;
  }
  static const HealthItem* Finding(const HealthReport& r, const std::string& kind, std::int64_t id) {
    for (const auto& f : r.findings) {
      if (f.kind == kind && f.id == id) return &f;
    }
    return nullptr;
  }
};

std::string Name(HealthState s) { return HealthStateName(s); }

// --- The eight states, one fixture each -------------------------------------

TEST(HealthStates, Healthy) {
  Fixture f;
  auto r = f.Run();
  EXPECT_EQ(Name(r.overall), "healthy");
  EXPECT_EQ(Name(Fixture::StateOf(r, f.a)), "healthy");
  EXPECT_TRUE(r.findings.empty());
  // turns 1, 2, 20; segments 5, 6; fact 7; job 3; one generation
  EXPECT_EQ(r.items, 8);
  EXPECT_EQ(r.counts[static_cast<int>(HealthState::kHealthy)], 8);
}

TEST(HealthStates, Waiting) {
  Fixture f;
  f.StmTurn(f.a, 1, 4, 3, kT0 + 5 * kMin);  // STM below capacity (2)
  auto r = f.Run();
  EXPECT_EQ(Name(Fixture::StateOf(r, f.a)), "waiting");
  ASSERT_TRUE(r.oldest_waiting);
  EXPECT_EQ(r.oldest_waiting->id, 4);
  EXPECT_EQ(r.oldest_waiting->since, kT0 + 5 * kMin);
  EXPECT_TRUE(r.green());
}

TEST(HealthStates, Uncertain) {
  Fixture f;
  f.e.receipts[0].version = 0;  // turn 1's admission: version missing
  auto r = f.Run();
  EXPECT_EQ(Name(Fixture::StateOf(r, f.a)), "uncertain");
  ASSERT_TRUE(Fixture::Finding(r, "turn", 1));
  EXPECT_EQ(Name(Fixture::Finding(r, "turn", 1)->state), "uncertain");
  EXPECT_FALSE(r.green());
}

TEST(HealthStates, GenerationUnverified) {
  Fixture f;
  f.Generation(f.a, kT0 + 6 * kMin, "run-g2", "", 2);  // an answer naming no versions
  auto r = f.Run();
  EXPECT_EQ(Name(Fixture::StateOf(r, f.a)), "generation_unverified");
}

TEST(HealthStates, StaleRetrieval) {
  Fixture f;
  // Fact 7 became version 2 before a retrieval that still returned version 1.
  f.e.facts[0].version = 2;
  f.R(f.a, "fact", 7, "lpm", "lpm", "committed", kT0 + 5 * kMin, "run-update").version = 2;
  f.R(f.a, "retrieval", 0, "store", "retrieval", "committed", kT0 + 6 * kMin, "run-r2").depends_on_version =
      "user_fact:7@1";
  auto r = f.Run();
  EXPECT_EQ(Name(Fixture::StateOf(r, f.a)), "stale_retrieval");
  ASSERT_TRUE(Fixture::Finding(r, "fact", 7));
  EXPECT_EQ(Name(Fixture::Finding(r, "fact", 7)->state), "stale_retrieval");
}

TEST(HealthStates, StaleRetrievalOfASupersededVersionRow) {
  Fixture f;
  // Versions kept as rows of one memory: row 7 (v1) was superseded by row 8 (v2).
  f.e.facts[0].memory = "m_1";
  f.e.facts[0].status = "superseded";
  f.e.facts.push_back({8, 1, 2, "live", kT0 + 5 * kMin, false, "m_1"});
  f.R(f.a, "fact", 8, "api", "lpm", "committed", kT0 + 5 * kMin, "run-update").version = 2;
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.a)), "healthy");  // row 7 was read before the update
  f.R(f.a, "retrieval", 0, "store", "retrieval", "committed", kT0 + 6 * kMin, "run-r2").depends_on_version =
      "user_fact:7@1";
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.a)), "stale_retrieval");
}

TEST(HealthStates, PromotionMissing) {
  Fixture f;
  for (int i = 0; i < 4; ++i) f.StmTurn(f.a, 1, 40 + i, 3 + i, kT0 + i * kMin);  // 4 > capacity 2
  f.p.now = kT0 + 3 * 60 * kMin;  // past the one-hour wait
  f.p.horizon_ms = 0;
  auto r = f.Run();
  EXPECT_EQ(Name(Fixture::StateOf(r, f.a)), "promotion_missing");
  EXPECT_EQ(r.counts[static_cast<int>(HealthState::kPromotionMissing)], 2);  // the two oldest
  // Within the wait the same store is only waiting.
  f.p.now = kT0 + 10 * kMin;
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.a)), "waiting");
}

TEST(HealthStates, SourceAtRisk) {
  Fixture f;
  f.e.receipts.erase(f.e.receipts.begin() + 1);  // turn 1's promotion commit receipt is gone
  auto r = f.Run();
  EXPECT_EQ(Name(Fixture::StateOf(r, f.a)), "source_at_risk");
  ASSERT_TRUE(Fixture::Finding(r, "turn", 1));
  EXPECT_EQ(Name(Fixture::Finding(r, "turn", 1)->state), "source_at_risk");
}

TEST(HealthStates, ScopeConflict) {
  Fixture f;
  // Right user, wrong assistant: B's retrieval returned A's page.
  f.R(f.b, "retrieval", 0, "store", "retrieval", "committed", kT0 + 5 * kMin, "run-rb").depends_on_version =
      "page:30@1,page:10@1";
  auto r = f.Run();
  EXPECT_EQ(Name(Fixture::StateOf(r, f.b)), "scope_conflict");
  EXPECT_EQ(Name(Fixture::StateOf(r, f.a)), "scope_conflict");  // its turn 1 went to another lane
  EXPECT_EQ(Name(r.overall), "scope_conflict");
}

// --- Precedence ---------------------------------------------------------------

TEST(HealthPrecedence, ConflictFollowedByHealthyGenerationIsStillAConflict) {
  Fixture f;
  // One run admits into A and answers in B (same user, another assistant)...
  f.StmTurn(f.a, 1, 50, 3, kT0 + 5 * kMin);
  f.e.receipts.back().run_id = "run-x";
  f.e.turns.push_back({51, 2, 2, 0, kT0 + 5 * kMin});
  f.R(f.b, "turn", 51, "input", "stm", "committed", kT0 + 5 * kMin, "run-x");
  f.Generation(f.b, kT0 + 5 * kMin, "run-x", "page:30@1", 51);
  // ...then B answers again, correctly.
  f.Generation(f.b, kT0 + 7 * kMin, "run-y", "page:30@1", 51);
  auto r = f.Run();
  EXPECT_EQ(Name(Fixture::StateOf(r, f.b)), "scope_conflict");
  EXPECT_EQ(Name(Fixture::StateOf(r, f.a)), "scope_conflict");
}

TEST(HealthPrecedence, StaleRetrievalIsNotRedeemedByAGoodAnswer) {
  Fixture f;
  f.e.facts[0].version = 2;
  f.R(f.a, "fact", 7, "lpm", "lpm", "committed", kT0 + 5 * kMin, "run-update").version = 2;
  f.R(f.a, "retrieval", 0, "store", "retrieval", "committed", kT0 + 6 * kMin, "run-r2").depends_on_version =
      "user_fact:7@1";
  f.Generation(f.a, kT0 + 7 * kMin, "run-g3", "user_fact:7@2", 2);  // a fluent, current answer
  auto r = f.Run();
  EXPECT_EQ(Name(Fixture::StateOf(r, f.a)), "stale_retrieval");
}

TEST(HealthPrecedence, MissingVersionFieldsGiveUncertainNeverHealthy) {
  for (int field = 0; field < 4; ++field) {
    Fixture f;
    Receipt& r = f.e.receipts[1];  // turn 1's promotion commit
    if (field == 0) r.version = 0;
    if (field == 1) r.source_version = "";
    if (field == 2) r.run_id = "";
    if (field == 3) r.source_version = "0.1.0";  // no engram implementation version
    auto rep = f.Run();
    EXPECT_EQ(Name(Fixture::StateOf(rep, f.a)), "uncertain") << "field " << field;
  }
  Fixture f;  // an unreadable dependency list
  f.Generation(f.a, kT0 + 6 * kMin, "run-g4", "page:10", 2);
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.a)), "uncertain");
}

TEST(HealthPrecedence, SourceRiskOutranksLaterActivity) {
  Fixture f;
  f.R(f.a, "job", 3, "stm", "mtm", "started", kT0 + 5 * kMin, "run-crashed");  // never finished
  f.Generation(f.a, kT0 + 6 * kMin, "run-g5", "page:10@1", 2);
  auto r = f.Run();
  EXPECT_EQ(Name(Fixture::StateOf(r, f.a)), "source_at_risk");
  const HealthItem* job = Fixture::Finding(r, "job", 3);
  ASSERT_TRUE(job);
  EXPECT_NE(std::find(job->run_ids.begin(), job->run_ids.end(), "run-crashed"), job->run_ids.end());
  // A reconciliation receipt closes the run.
  f.R(f.a, "job", 3, "stm", "mtm", "verified", kT0 + 7 * kMin, "run-crashed");
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.a)), "healthy");
}

TEST(HealthPrecedence, PromotionMissingOutranksStaleAndUnverified) {
  Fixture f;
  for (int i = 0; i < 4; ++i) f.StmTurn(f.a, 1, 40 + i, 3 + i, kT0 + i * kMin);
  f.Generation(f.a, kT0 + 6 * kMin, "run-g2", "", 2);
  f.p.now = kT0 + 3 * 60 * kMin;
  f.p.horizon_ms = 0;
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.a)), "promotion_missing");
}

// --- Expiry, verification, purge, compaction, filters -------------------------

TEST(HealthExpiry, ExpiredEvidenceIsUncertainUntilVerified) {
  Fixture f;
  f.p.now = kT0 + 25 * 60 * kMin;  // one day and an hour later
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.a)), "uncertain");
  f.R(f.a, "scope", 1, "store", "verified", "verified", f.p.now - kMin, "run-v");
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.a)), "healthy");
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.b)), "uncertain");  // B was not verified
  f.p.horizon_ms = 0;  // never expire
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.b)), "healthy");
}

TEST(HealthExpiry, ExpiryNeverHidesAConflict) {
  Fixture f;
  f.R(f.b, "retrieval", 0, "store", "retrieval", "committed", kT0 + 5 * kMin, "run-rb").depends_on_version =
      "page:10@1";
  f.p.now = kT0 + 48 * 60 * kMin;
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.b)), "scope_conflict");
}

TEST(HealthPurge, ReceiptsOfAnErasedScopeDescribeNothing) {
  Fixture f;
  // B is erased: its rows are gone, its receipts stay, with a purge receipt.
  std::erase_if(f.e.turns, [](const TurnRec& t) { return t.scope_id == 2; });
  std::erase_if(f.e.pages, [](const PageRec& p) { return p.scope_id == 2; });
  std::erase_if(f.e.segments, [](const SegmentRec& s) { return s.scope_id == 2; });
  f.e.scopes.pop_back();
  auto before = f.Run();
  EXPECT_EQ(Name(Fixture::StateOf(before, f.b)), "source_at_risk");  // rows vanished without a purge
  f.R(f.b, "scope", 2, "store", "purged", "committed", kT0 + 8 * kMin, "run-purge");
  auto r = f.Run();
  EXPECT_EQ(Fixture::ScopeOf(r, f.b), nullptr);
  EXPECT_EQ(Name(r.overall), "healthy");
}

TEST(HealthCompaction, CompactedReceiptsAreNotMissingCommits) {
  Fixture f;
  f.e.receipts.erase(f.e.receipts.begin(), f.e.receipts.begin() + 2);  // turn 1's receipts compacted
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.a)), "source_at_risk");
  f.e.compacted_through[ScopeKey(f.a)] = kT0 + kMin;
  // Not at risk any more; but with no receipt left, nothing vouches for it...
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.a)), "uncertain");
  // ...until a verification does.
  f.R(f.a, "scope", 1, "store", "verified", "verified", f.p.now - kMin, "run-v");
  EXPECT_EQ(Name(Fixture::StateOf(f.Run(), f.a)), "healthy");
}

TEST(HealthFilter, ReportsOnlyTheRequestedUser) {
  Fixture f;
  Scope c{"t", "u2", "a1"};
  f.e.scopes.push_back({3, c});
  f.e.turns.push_back({60, 3, 1, 99, kT0});  // at risk: its page does not exist
  f.R(c, "turn", 60, "input", "stm", "committed", kT0, "run-c");
  f.p.user = "u1";
  f.p.tenant = "t";
  auto r = f.Run();
  EXPECT_EQ(Name(r.overall), "healthy");
  EXPECT_EQ(r.scopes.size(), 2u);
  f.p.user = "u2";
  EXPECT_EQ(Name(f.Run().overall), "source_at_risk");
}

TEST(HealthReceipts, VersionRefsRoundTrip) {
  std::vector<VersionRef> refs;
  ASSERT_TRUE(ParseVersionRefs("page:12@1,user_fact:3@2", &refs));
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[1].kind, "user_fact");
  EXPECT_EQ(refs[1].id, 3);
  EXPECT_EQ(refs[1].version, 2);
  EXPECT_EQ(FormatVersionRefs(refs), "page:12@1,user_fact:3@2");
  EXPECT_TRUE(ParseVersionRefs("", &refs));
  EXPECT_TRUE(refs.empty());
  for (const char* bad : {"page:12", "page@1", ":1@1", "page:x@1", "page:1@0", "page:1@1,"}) {
    EXPECT_FALSE(ParseVersionRefs(bad, &refs)) << bad;
  }
}

}  // namespace
}  // namespace engram::lineage
