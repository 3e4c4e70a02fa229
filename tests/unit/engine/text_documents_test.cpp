// The full-text documents of a store follow this build's text rules
// (memory/text_documents.hpp): documents an older build wrote are made again
// when the engine opens the store, once; a store a newer build wrote is left
// alone. On both backends (the engine suite runs once per backend).
#include "memory/text_documents.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/clock.hpp"
#include "engram/engine.hpp"
#include "memory/facts/fact_text.hpp"
#include "store/db.hpp"
#include "testing/dialogue.hpp"
#include "testing/fakes.hpp"
#include "testing/store_query.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

// What each rule makes of sample texts under kTextRulesVersion. A change of
// the tokenizer, stemmer, short forms or lexical terms that changes one of
// these changes what stores hold: bump memory::kTextRulesVersion (stores
// then get their documents made again when opened) and write the new
// documents here.
TEST(TextDocuments, DocumentsChangeOnlyWithTheVersion) {
  ASSERT_EQ(memory::kTextRulesVersion, 1);
  EXPECT_EQ(memory::TurnDocument("Ana", "My gf and I went hiking in the Alps!", "assistant", "Sounds great."),
            "ana gf went hike alp assist sound great");
  EXPECT_EQ(memory::SegmentDocument("Ana talks about hiking trips", {"hiking", "gluten-free snacks"}),
            "ana talk hike trip hike gluten_free snack");
  EXPECT_EQ(memory::facts::LexicalDocument("My gf's fave food is pho, 3 bowls a week"),
            "gf girlfriend fave favorit food pho 3 bowl week");
}

class TextDocumentsTest : public ::testing::Test {
 protected:
  std::string Location() { return testing::StoreAt(dir_.File("engram.db")); }
  std::unique_ptr<Engine> Open() {
    EngineOptions o;
    o.db_path = Location();
    o.clock = &clock_;
    o.background_maintenance = false;
    auto e = Engine::Open(std::move(o));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  // Runs statements on the store beside the engine (what another build wrote).
  void Exec(const std::string& sql) {
    auto db = sql::Db::Open(Location(), {});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    Status st = (*db)->Exec(sql);
    ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << sql;
  }
  std::int64_t Count(const std::string& sql) { return testing::FirstInt(Location(), sql); }
  std::string Meta() {
    return testing::FirstValue(Location(), "SELECT value FROM meta WHERE key = 'text_rules_version'");
  }
  // A store with rows in all three indexes: turns (some promoted into
  // segments) and a memory written with a short form of chat.
  void Fill() {
    auto e = Open();
    ASSERT_NE(e, nullptr);
    Scope s;
    s.user = "ana";
    s.assistant = "assistant";
    ASSERT_TRUE(e->AddTurns(s, testing::SyntheticDialogue(16)).ok());
    ASSERT_TRUE(e->Maintain(&s).ok());
    MemoryAddOptions ao;
    ao.infer = false;
    auto r = e->AddMemoryText(User(), "My gf Meera teaches yoga", ao);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  static MemoryScope User() {
    MemoryScope m;
    m.user = "ana";
    return m;
  }

  testing::TempDir dir_;
  FakeClock clock_{MakeTimeMs(2025, 3, 1)};
};

TEST_F(TextDocumentsTest, DocumentsAnOlderBuildWroteAreMadeAgainOnOpen) {
  Fill();
  EXPECT_EQ(Meta(), std::to_string(memory::kTextRulesVersion));  // a new store follows this build's rules
  for (const char* t : {"turns_fts", "segments_fts", "facts_fts"}) {
    ASSERT_GT(Count(std::string("SELECT count(*) FROM ") + t), 0) << t;
  }
  // What an older build left: other documents, and no version.
  Exec("UPDATE turns_fts SET terms = 'stale'");
  Exec("UPDATE segments_fts SET terms = 'stale'");
  Exec("UPDATE facts_fts SET terms = 'my gf meera teach yoga'");  // before short forms held their full word
  Exec("DELETE FROM meta WHERE key = 'text_rules_version'");
  {
    auto e = Open();
    ASSERT_NE(e, nullptr);
    MemorySearchOptions so;
    so.explain = true;
    auto r = e->SearchMemories(User(), "Who is my girlfriend?", so);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_FALSE(r->empty());
    EXPECT_EQ(r->front().memory, "My gf Meera teaches yoga");
    ASSERT_TRUE(r->front().score_details);
    EXPECT_GT(r->front().score_details->lexical, 0.0);  // "girlfriend" is in its document again
  }
  EXPECT_EQ(Count("SELECT count(*) FROM turns_fts WHERE terms = 'stale'"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM segments_fts WHERE terms = 'stale'"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM facts_fts WHERE terms = 'my gf meera teach yoga'"), 0);
  EXPECT_EQ(Meta(), std::to_string(memory::kTextRulesVersion));
  // Once: a document changed after the pass stays as it is at the next open.
  Exec("UPDATE turns_fts SET terms = 'stale'");
  ASSERT_NE(Open(), nullptr);
  EXPECT_GT(Count("SELECT count(*) FROM turns_fts WHERE terms = 'stale'"), 0);
}

TEST_F(TextDocumentsTest, AStoreANewerBuildWroteIsLeftAlone) {
  Fill();
  const std::string later = std::to_string(memory::kTextRulesVersion + 1);
  Exec("UPDATE meta SET value = '" + later + "' WHERE key = 'text_rules_version'");
  Exec("UPDATE facts_fts SET terms = 'newer rules'");
  ASSERT_NE(Open(), nullptr);
  EXPECT_GT(Count("SELECT count(*) FROM facts_fts WHERE terms = 'newer rules'"), 0);
  EXPECT_EQ(Meta(), later);
}

}  // namespace
}  // namespace engram
