// The LoCoMo harness: metric arithmetic on hand-built results, and a run on a
// tiny inline LoCoMo-format file (two samples).
#include "eval/locomo_eval.hpp"

#include <gtest/gtest.h>

#include "eval/metrics.hpp"
#include "testing/temp_dir.hpp"

namespace engram::eval {
namespace {

using testing::TempDir;
using testing::WriteFile;

RetrievedItem Item(const std::string& refs, ItemKind kind = ItemKind::kPage) {
  RetrievedItem i;
  i.kind = kind;
  i.source_ref = refs;
  return i;
}

// ------------------------------------------------------------- arithmetic

TEST(EvalMetrics, SplitDiaIdsAcceptsTheDatasetsOddForms) {
  EXPECT_EQ(SplitDiaIds("D1:3,D1:4"), (std::vector<std::string>{"D1:3", "D1:4"}));
  EXPECT_EQ(SplitDiaIds("D8:6; D9:17"), (std::vector<std::string>{"D8:6", "D9:17"}));
  EXPECT_EQ(SplitDiaIds(" D9:1 D4:4\tD4:6 "), (std::vector<std::string>{"D9:1", "D4:4", "D4:6"}));
  EXPECT_TRUE(SplitDiaIds("").empty());
  EXPECT_TRUE(SplitDiaIds(" ;, ").empty());
}

TEST(EvalMetrics, NormalizeEvidenceDedupsAndCountsUnknownIds) {
  std::unordered_set<std::string> known{"D1:1", "D1:2", "D2:1"};
  int skipped = 0;
  auto ev = NormalizeEvidence({"D1:2; D2:1", "D1:2", "D", "D:11:26", "D2:1"}, known, &skipped);
  EXPECT_EQ(ev, (std::vector<std::string>{"D1:2", "D2:1"}));
  EXPECT_EQ(skipped, 2);
}

TEST(EvalMetrics, EachDiaIdTakesOneSlotAndTheLastItemMayBeCut) {
  std::vector<RetrievedItem> ranked = {Item("D1:1,D1:2"), Item("D1:3"), Item("D1:4,D1:5"), Item("D1:6")};
  EXPECT_EQ(FirstSlots(ranked, 1), (std::vector<std::string>{"D1:1"}));
  EXPECT_EQ(FirstSlots(ranked, 2), (std::vector<std::string>{"D1:1", "D1:2"}));
  EXPECT_EQ(FirstSlots(ranked, 4), (std::vector<std::string>{"D1:1", "D1:2", "D1:3", "D1:4"}));
  EXPECT_EQ(FirstSlots(ranked, 20).size(), 6u);  // the list runs out
  // An item without a source_ref still takes a slot.
  std::vector<RetrievedItem> gap = {Item(""), Item("D1:1")};
  EXPECT_TRUE(FirstSlots(gap, 1).empty());
  EXPECT_EQ(FirstSlots(gap, 2), (std::vector<std::string>{"D1:1"}));
}

TEST(EvalMetrics, OneMessageTakesOneSlot) {
  RetrievedItem user = Item("D1:3"), both = Item("D1:1,D1:2");
  user.part = "user";
  both.part = "both";
  EXPECT_EQ(FirstSlots({user, both}, 2), (std::vector<std::string>{"D1:3", "D1:1"}));
}

TEST(EvalMetrics, ScoreCountsSlotsAndContextTurnsOnly) {
  // Four two-id items then the evidence: D1:9 sits in slot 9 (recall@5 0, @10 1).
  std::vector<RetrievedItem> ranked = {Item("D1:1,D1:2"), Item("D1:3,D1:4"), Item("D1:5,D1:6"),
                                       Item("D1:7,D1:8"), Item("D1:9"), Item("D2:1")};
  RetrievalResult small, large;
  small.items = {Item("D1:9", ItemKind::kUserFact), Item("D1:1,D1:2")};  // facts do not count
  small.context_tokens = 40;
  large.items = {Item("D1:9", ItemKind::kStmTurn), Item("D2:1")};
  large.context_tokens = 90;
  for (auto* r : {&small, &large}) {
    for (auto& item : r->items) {
      item.text = "Ana: turn " + item.source_ref;
      r->context += item.text + "\n";
    }
  }
  std::vector<std::string> evidence{"D1:9", "D2:5"};
  QuestionScore s = ScoreQuestion(evidence, ranked, {&small, &large});
  EXPECT_DOUBLE_EQ(s.recall[0], 0.0);
  EXPECT_DOUBLE_EQ(s.recall[1], 0.5);
  EXPECT_DOUBLE_EQ(s.recall[2], 0.5);
  EXPECT_FALSE(s.all_at_k);
  ASSERT_EQ(s.budget_recall.size(), 2u);
  EXPECT_DOUBLE_EQ(s.budget_recall[0], 0.0);
  EXPECT_DOUBLE_EQ(s.budget_recall[1], 0.5);
  EXPECT_EQ(s.context_tokens, (std::vector<int>{40, 90}));

  QuestionScore all = ScoreQuestion({"D1:2", "D1:7"}, ranked, {});
  EXPECT_TRUE(all.all_at_k);
  EXPECT_DOUBLE_EQ(all.recall[0], 0.5);  // D1:7 is slot 7
}

TEST(EvalMetrics, BudgetRecallCountsOnlyTextTheContextHolds) {
  RetrievalResult r;
  r.items = {Item("D1:1"), Item("D1:2")};
  r.items[0].text = "Ana: I planted tomatoes.";
  r.items[1].text = "Ben: Patch kits are cheap.";
  r.context = "## Relevant past conversation\nAna: I planted tomatoes.\n";  // the second is not there
  QuestionScore s = ScoreQuestion({"D1:1", "D1:2"}, {}, {&r});
  ASSERT_EQ(s.budget_recall.size(), 1u);
  EXPECT_DOUBLE_EQ(s.budget_recall[0], 0.5);
  EXPECT_EQ(s.context_missing, (std::vector<std::vector<std::string>>{{"D1:2"}}));
  EXPECT_EQ(s.repeated_lines, (std::vector<std::size_t>{0}));
}

TEST(EvalMetrics, RepeatedLinesAreCounted) {
  EXPECT_EQ(RepeatedLines("## A\n[1 May 2023]\nAna: I planted tomatoes.\n[1 May 2023]\n## A\n"), 0u);
  EXPECT_EQ(RepeatedLines("Ana: I planted tomatoes.\nBen: ok\nAna: I planted tomatoes.\nBen: ok\n"), 1u);
  EXPECT_EQ(RepeatedLines("Ana:\nAna:\n"), 0u);  // bare lines of multi-line messages
  // A summary's sentence that a message of the context says.
  EXPECT_EQ(RepeatedLines("ana: i start at 5am. my boss is marta.\n"
                          "  (context: ana: i got a job. i start at 5am. my boss is marta.)\n"),
            2u);
  EXPECT_EQ(RepeatedLines("Ana: I start at 5am.\n  (context: Ana: I got a job at the bakery.)\n"),
            0u);
}

TEST(EvalMetrics, GroupMeansAndNullsWhenEmpty) {
  GroupStats g(1);
  auto empty = g.ToJson({500});
  EXPECT_TRUE(empty["recall@5"].is_null());
  EXPECT_TRUE(empty["budget_recall@500"].is_null());
  EXPECT_EQ(empty["questions"], 0);

  QuestionScore a, b;
  a.recall = {1.0, 1.0, 1.0};
  a.all_at_k = true;
  a.budget_recall = {1.0};
  a.context_tokens = {100};
  b.recall = {0.0, 0.5, 1.0};
  b.budget_recall = {0.0};
  b.context_tokens = {300};
  g.Add(a);
  g.Add(b);
  g.AddSkipped();
  auto j = g.ToJson({500});
  EXPECT_DOUBLE_EQ(j["recall@5"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["recall@10"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(j["recall@20"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["all@10"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["budget_recall@500"].get<double>(), 0.5);
  EXPECT_EQ(j["questions"], 2);
  EXPECT_EQ(j["skipped_questions"], 1);
  EXPECT_DOUBLE_EQ(g.MeanContextTokens(0), 200.0);
}

TEST(EvalMetrics, PercentileInterpolatesBetweenRanks) {
  EXPECT_DOUBLE_EQ(Percentile({}, 50), 0.0);
  EXPECT_DOUBLE_EQ(Percentile({7}, 99), 7.0);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4, 5}, 100), 5.0);
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4, 5}, 0), 1.0);
  EXPECT_NEAR(Percentile({1, 2, 3, 4, 5}, 95), 4.8, 1e-12);
}

// ------------------------------------------------------------- a whole run

// Sample "s1": 12 utterances in 2 sessions (6 turns of two dia_ids each) and
// 5 questions: a literal turn (cat 4), evidence in one odd string (cat 1), an
// id that matches nothing (cat 2), an adversarial one (cat 5), one without
// evidence (cat 3). Sample "s2": 4 utterances, 1 question.
constexpr const char* kFixture = R"([
 {"sample_id": "s1",
  "conversation": {
   "speaker_a": "Alice", "speaker_b": "Bob",
   "session_1_date_time": "1:56 pm on 8 May, 2023",
   "session_1": [
    {"speaker": "Alice", "dia_id": "D1:1", "text": "I adopted a golden retriever puppy named Max last weekend."},
    {"speaker": "Bob", "dia_id": "D1:2", "text": "Congratulations! Golden retrievers are wonderful family dogs."},
    {"speaker": "Alice", "dia_id": "D1:3", "text": "My sister Clara is moving to Lisbon for a teaching job."},
    {"speaker": "Bob", "dia_id": "D1:4", "text": "Lisbon is lovely. Will you visit her there?"},
    {"speaker": "Alice", "dia_id": "D1:5", "text": "I have been practising the violin every evening."},
    {"speaker": "Bob", "dia_id": "D1:6", "text": "Violin takes patience; keep it up."}],
   "session_2_date_time": "10:04 am on 19 June, 2023",
   "session_2": [
    {"speaker": "Alice", "dia_id": "D2:1", "text": "We ran the city marathon in under four hours."},
    {"speaker": "Bob", "dia_id": "D2:2", "text": "Finishing a marathon is a huge achievement."},
    {"speaker": "Alice", "dia_id": "D2:3", "text": "Max chewed my running shoes yesterday."},
    {"speaker": "Bob", "dia_id": "D2:4", "text": "Puppies chew everything, hide your shoes!"},
    {"speaker": "Alice", "dia_id": "D2:5", "text": "Clara sent me photos of the old tram."},
    {"speaker": "Bob", "dia_id": "D2:6", "text": "The yellow trams there are famous."}]},
  "qa": [
   {"question": "My sister Clara is moving to Lisbon for a teaching job.", "answer": "Lisbon",
    "evidence": ["D1:3"], "category": 4},
   {"question": "Where does the sister who sent tram photos live?", "answer": "Lisbon",
    "evidence": ["D1:3; D2:5"], "category": 1},
   {"question": "When did Alice run the city marathon?", "answer": "June 2023",
    "evidence": ["D2:1", "D9:99"], "category": 2},
   {"question": "What is the name of Bob's violin teacher?", "adversarial_answer": "Clara",
    "evidence": ["D1:5"], "category": 5},
   {"question": "What pets might Alice own?", "answer": "a dog", "evidence": [], "category": 3}]},
 {"sample_id": "s2",
  "conversation": {
   "speaker_a": "Cem", "speaker_b": "Dana",
   "session_1_date_time": "9:00 am on 1 March, 2023",
   "session_1": [
    {"speaker": "Cem", "dia_id": "D1:1", "text": "I planted tomatoes in the garden."},
    {"speaker": "Dana", "dia_id": "D1:2", "text": "Tomatoes love the sun."}],
   "session_2_date_time": "9:00 am on 2 March, 2023",
   "session_2": [
    {"speaker": "Cem", "dia_id": "D2:1", "text": "My bike got a flat tyre."},
    {"speaker": "Dana", "dia_id": "D2:2", "text": "Patch kits are cheap."}]},
  "qa": [
   {"question": "What did Cem plant in the garden?", "answer": "tomatoes", "evidence": ["D1:1"], "category": 4}]}
])";

class LocomoEvalTest : public ::testing::Test {
 protected:
  void SetUp() override { WriteFile(path_, kFixture); }
  EvalOptions Options(std::vector<std::string> conversations = {"s1"}) {
    EvalOptions o;
    o.conversations = std::move(conversations);
    o.budgets = {2000, 60};
    o.work_dir = dir_.File("work");
    o.engine.stm_capacity = 2;  // so that maintenance promotes turns to pages
    return o;
  }
  TempDir dir_;
  std::string path_ = dir_.File("locomo.json");
};

TEST_F(LocomoEvalTest, ReportsEveryKeyAndScoresTheLiteralTurn) {
  std::size_t last_done = 0, last_total = 0;
  EvalOptions o = Options();
  o.progress = [&](std::size_t done, std::size_t total) {
    EXPECT_GE(done, last_done);
    last_done = done;
    last_total = total;
  };
  auto r = RunLocomoEval(path_, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const nlohmann::json& j = *r;
  EXPECT_EQ(last_total, 6u + 5u);  // turns + questions
  EXPECT_EQ(last_done, last_total);

  for (const char* k : {"recall@5", "recall@10", "recall@20", "all@10", "budget_recall@60",
                        "budget_recall@2000", "questions", "skipped_questions"}) {
    EXPECT_TRUE(j["overall"].contains(k)) << k;
  }
  EXPECT_FALSE(j["overall"].contains("budget_recall@500"));  // budget keys follow the request
  EXPECT_EQ(j["config"]["budgets"], (std::vector<int>{60, 2000}));
  EXPECT_EQ(j["config"]["conversations"], (std::vector<std::string>{"s1"}));
  EXPECT_FALSE(j["config"]["embedder"].get<std::string>().empty());
  EXPECT_TRUE(j["config"].contains("wordnet"));  // the image's path, or null without WordNet
  EXPECT_TRUE(j["context_tokens"].contains("60") && j["context_tokens"].contains("2000"));
  EXPECT_LE(j["context_tokens"]["60"].get<double>(), j["context_tokens"]["2000"].get<double>());
  EXPECT_EQ(j["ingest"]["turns"], 6);
  EXPECT_EQ(j["ingest"]["utterances"], 12);
  EXPECT_EQ(j["ingest"]["jobs_failed"], 0);
  EXPECT_EQ(j["latency_ms"]["calls"], 5);  // one timed call per question, all categories
  EXPECT_EQ(j["questions_total"], 5);
  EXPECT_EQ(j["skipped_evidence"], 1);  // D9:99

  // Category 5 is reported but not in overall; cat 3 has no evidence.
  const auto& cats = j["by_category"];
  for (const char* c : {"1", "2", "3", "4", "5"}) ASSERT_TRUE(cats.contains(c)) << c;
  EXPECT_EQ(cats["1"]["name"], "multi-hop");
  EXPECT_EQ(cats["5"]["name"], "adversarial");
  EXPECT_EQ(cats["5"]["questions"], 1);
  EXPECT_EQ(cats["3"]["questions"], 0);
  EXPECT_EQ(cats["3"]["skipped_questions"], 1);
  EXPECT_TRUE(cats["3"]["recall@5"].is_null());
  EXPECT_EQ(j["overall"]["questions"], 3);
  EXPECT_EQ(j["overall"]["skipped_questions"], 1);

  // The question that is the literal text of turn D1:3 finds it in the top slots.
  EXPECT_DOUBLE_EQ(cats["4"]["recall@5"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(cats["4"]["all@10"].get<double>(), 1.0);
  // The whole conversation (about 150 tokens) fits into 2000 tokens.
  EXPECT_DOUBLE_EQ(j["overall"]["budget_recall@2000"].get<double>(), 1.0);
  for (const auto& [name, g] : cats.items()) {
    for (const auto& [k, v] : g.items()) {
      if (v.is_number_float()) {
        EXPECT_GE(v.get<double>(), 0.0) << name << " " << k;
        EXPECT_LE(v.get<double>(), 1.0) << name << " " << k;
      }
    }
  }
}

TEST_F(LocomoEvalTest, SameNumbersTwice) {
  auto a = RunLocomoEval(path_, Options({}));
  auto b = RunLocomoEval(path_, Options({}));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)["overall"], (*b)["overall"]);
  EXPECT_EQ((*a)["by_category"], (*b)["by_category"]);
  EXPECT_EQ((*a)["context_tokens"], (*b)["context_tokens"]);
  EXPECT_EQ((*a)["config"]["conversations"], (std::vector<std::string>{"s1", "s2"}));
  EXPECT_EQ((*a)["ingest"]["turns"], 8);
}

// Repeated timed calls change no figure but the latency: the report keeps
// the first call's and adds the fastest of each question's calls.
TEST_F(LocomoEvalTest, RepeatedCallsReportTheirFastestBesideTheFirst) {
  auto once = RunLocomoEval(path_, Options({}));
  EvalOptions o = Options({});
  o.repeat = 5;
  auto repeated = RunLocomoEval(path_, o);
  ASSERT_TRUE(once.ok() && repeated.ok()) << repeated.status().ToString();
  EXPECT_EQ((*once)["overall"], (*repeated)["overall"]);
  EXPECT_EQ((*once)["by_category"], (*repeated)["by_category"]);
  EXPECT_FALSE((*once)["latency_ms"].contains("warm"));
  const nlohmann::json& lat = (*repeated)["latency_ms"];
  ASSERT_TRUE(lat.contains("warm")) << lat.dump();
  EXPECT_EQ(lat["warm"]["repeat"], 5);
  EXPECT_EQ(lat["calls"], (*once)["latency_ms"]["calls"]);
  EXPECT_GT(lat["warm"]["p50"].get<double>(), 0.0);
  EXPECT_LE(lat["warm"]["mean"].get<double>(), lat["mean"].get<double>());  // each the fastest of 5

  for (int bad : {0, 1001}) {
    o.repeat = bad;
    auto r = RunLocomoEval(path_, o);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("repeat"), std::string::npos) << r.status().message();
  }
}

TEST_F(LocomoEvalTest, HeldOutSplitAndChangedDefaultsAreReported) {
  EvalOptions o = Options({});
  o.held_out_from = 1;
  auto r = RunLocomoEval(path_, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const nlohmann::json& j = *r;
  EXPECT_EQ(j["config"]["held_out_from"], 1);
  EXPECT_EQ(j["splits"]["tuned"]["conversations"], (std::vector<std::string>{"s1"}));
  EXPECT_EQ(j["splits"]["held_out"]["conversations"], (std::vector<std::string>{"s2"}));
  EXPECT_EQ(j["splits"]["tuned"]["overall"]["questions"].get<int>() +
                j["splits"]["held_out"]["overall"]["questions"].get<int>(),
            j["overall"]["questions"].get<int>());
  EXPECT_TRUE(j["config"]["changed"].empty()) << j["config"]["changed"].dump();
  EXPECT_EQ(j["config"]["retrieve"]["max_pages"], RetrieveOptions{}.max_pages);
  EXPECT_DOUBLE_EQ(j["config"]["retrieve"]["ranking"]["bm25_k1"].get<double>(), RankingOptions{}.bm25_k1);
  EXPECT_EQ(j["overall"]["repeated_context_lines"], 0);

  o.retrieve.max_pages = 3;
  o.retrieve.ranking.bm25_k1 = 1.2;
  o.held_out_from = 5;  // nothing held out in a two-conversation file
  auto changed = RunLocomoEval(path_, o);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_EQ((*changed)["config"]["changed"],
            (nlohmann::json{{"max_pages", 3}, {"ranking.bm25_k1", 1.2}}));
  EXPECT_FALSE((*changed)["splits"].contains("held_out"));

  o.retrieve.ranking.bm25_b = 2;
  auto bad = RunLocomoEval(path_, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("ranking.bm25_b"), std::string::npos) << bad.status().message();
}

TEST_F(LocomoEvalTest, OwnTemporaryDirectoryWhenNoneIsGiven) {
  EvalOptions o = Options({"s2"});
  o.work_dir.clear();
  auto r = RunLocomoEval(path_, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["by_category"]["4"]["questions"], 1);
}

TEST_F(LocomoEvalTest, Errors) {
  auto missing = RunLocomoEval(dir_.File("nope.json"), Options());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  auto unknown = RunLocomoEval(path_, Options({"s1", "s9"}));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("s9"), std::string::npos);

  EvalOptions bad = Options();
  bad.budgets = {500, 0};
  EXPECT_EQ(RunLocomoEval(path_, bad).status().code(), StatusCode::kInvalidArgument);
  bad.budgets.clear();
  EXPECT_EQ(RunLocomoEval(path_, bad).status().code(), StatusCode::kInvalidArgument);

  WriteFile(dir_.File("broken.json"), "[{\"sample_id\": ");
  auto broken = RunLocomoEval(dir_.File("broken.json"), Options({}));
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace engram::eval
