// Engine::Chat: answers are grounded, admitted with a dependency receipt, and
// a provider failure admits nothing.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "core/clock.hpp"
#include "engram/engine.hpp"
#include "testing/dialogue.hpp"
#include "testing/fakes.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

class ChatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EngineOptions o;
    o.db_path = testing::StoreAt(dir_.File("e.db"));
    o.clock = &clock_;
    o.llm = llm_;
    auto e = Engine::Open(o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    ASSERT_TRUE(engine_->AddTurns(scope_, testing::SyntheticDialogue(30)).ok());
    ASSERT_TRUE(engine_->Maintain(&scope_).ok());
  }
  std::string Query(const std::string& sql) { return testing::StoreText(dir_.File("e.db"), sql); }
  testing::TempDir dir_;
  FakeClock clock_{MakeTimeMs(2025, 3, 1)};
  std::shared_ptr<testing::ScriptedLlm> llm_ = std::make_shared<testing::ScriptedLlm>();
  std::unique_ptr<Engine> engine_;
  Scope scope_{"default", "alice", "helper"};
};

TEST_F(ChatTest, AnswerIsGroundedAndAdmittedWithItsDependencies) {
  llm_->Say("You are learning the cello.");
  std::string streamed;
  ChatOptions o;
  o.on_delta = [&](std::string_view d) { streamed += d; };
  auto r = engine_->Chat(scope_, "Which instrument am I learning?", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->answer, "You are learning the cello.");
  EXPECT_EQ(streamed, r->answer);
  EXPECT_GT(r->turn_id, 0);
  EXPECT_FALSE(r->used.empty());
  // The prompt carried the memory, dated, and the timeframe instruction.
  const auto& msgs = llm_->requests.back().messages;
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_NE(msgs[1].content.find("cello"), std::string::npos);
  EXPECT_NE(msgs[1].content.find("2025"), std::string::npos);
  EXPECT_NE(msgs[1].content.find("dates"), std::string::npos);
  auto st = engine_->GetStats(&scope_);
  EXPECT_EQ(st->turns_admitted, 31);
  std::string deps = Query("SELECT depends_on_version FROM receipts WHERE memory_kind = 'generation'");
  EXPECT_NE(deps.find("page:"), std::string::npos) << deps;
  const std::string same_run = "SELECT count(*) FROM receipts WHERE run_id = '" + r->run_id + "'";
  EXPECT_EQ(Query(same_run), "2");  // the admission and the generation share the run
}

TEST_F(ChatTest, ProviderFailureAdmitsNothing) {
  // No scripted reply: the endpoint fails after its retries.
  auto r = engine_->Chat(scope_, "Which instrument am I learning?", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  auto st = engine_->GetStats(&scope_);
  EXPECT_EQ(st->turns_admitted, 30);
  EXPECT_EQ(Query("SELECT count(*) FROM turns WHERE assistant_text LIKE '%rror%'"), "0");
  // An empty answer is a failure too.
  llm_->Say("   ");
  EXPECT_FALSE(engine_->Chat(scope_, "hello?", {}).ok());
  EXPECT_EQ(engine_->GetStats(&scope_)->turns_admitted, 30);
}

// An exchange answered outside the engine (the memory proxy) is admitted
// with the same generation receipt as Chat's, naming what was in the prompt.
TEST_F(ChatTest, AnAnswerFromOutsideIsAdmittedWithItsReceipt) {
  auto memory = engine_->Retrieve(scope_, "Which instrument am I learning?", {});
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  ASSERT_FALSE(memory->items.empty());
  TurnInput turn;
  turn.user_text = "Which instrument am I learning?";
  turn.assistant_text = "The cello.";
  auto admitted = engine_->AdmitAnswer(scope_, turn, memory->items, "proxy:fake-model", "");
  ASSERT_TRUE(admitted.ok()) << admitted.status().ToString();
  EXPECT_GT(admitted->turn_id, 0);
  EXPECT_EQ(engine_->GetStats(&scope_)->turns_admitted, 31);
  const std::string receipt = "SELECT depends_on_version || '|' || source_version FROM receipts "
                              "WHERE memory_kind = 'generation' AND memory_id = " +
                              std::to_string(admitted->turn_id);
  const std::string r = Query(receipt);
  EXPECT_NE(r.find(":"), std::string::npos) << r;
  EXPECT_NE(r.find("answer=proxy:fake-model"), std::string::npos) << r;
  // A turn that is not valid is refused and admits nothing.
  TurnInput empty;
  EXPECT_FALSE(engine_->AdmitAnswer(scope_, empty, memory->items, "proxy:fake-model", "").ok());
  EXPECT_EQ(engine_->GetStats(&scope_)->turns_admitted, 31);
}

TEST(ChatWithoutModel, SaysHowToConfigureOne) {
  testing::TempDir dir;
  EngineOptions o;
  o.db_path = testing::StoreAt(dir.File("e.db"));
  auto e = Engine::Open(o);
  ASSERT_TRUE(e.ok());
  auto r = (*e)->Chat({"default", "u", "a"}, "hi", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("ENGRAM_LLM_BASE_URL"), std::string::npos);
}

}  // namespace
}  // namespace engram
