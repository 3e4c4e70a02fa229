// The in-memory copy of a scope's full-text rows (retrieval/text_index.hpp)
// answers like FTS5 itself: the same rows in the same order (ties included)
// as store::SearchText on a SQLite store holding that one scope.
#include "retrieval/text_index.hpp"

#include <gtest/gtest.h>

#include <random>

#include "store/fulltext.hpp"
#include "store/open.hpp"
#include "store/scopes.hpp"
#include "testing/temp_dir.hpp"

namespace engram::retrieval {
namespace {

std::vector<std::int64_t> Rowids(const std::vector<store::TextHit>& hits) {
  std::vector<std::int64_t> out;
  for (const auto& h : hits) out.push_back(h.rowid);
  return out;
}

// Which of the query's terms each row found holds, as the search sees them
// (case folded, a term counted once per row however often it repeats): the
// context's facts read it to weigh what a fact holds of a question
// (retriever.cpp FactsAsked); and how many rows hold a term.
TEST(TextIndex, SaysWhichTermsEachRowFoundHolds) {
  TextIndex idx;
  idx.Add(30, "japan trip plan");
  idx.Add(10, "Japan japan cello");
  idx.Add(20, "dinner plan");
  idx.Add(40, "cello lessons");
  EXPECT_EQ(idx.Df("japan"), 2u);
  EXPECT_EQ(idx.Df("party"), 0u);
  std::vector<std::uint64_t> held;
  const std::vector<std::string> terms = {"japan", "party", "plan"};
  const auto rows = idx.Search(terms, 10, &held);
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(held.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::uint64_t want = rows[i] == 30 ? 0b101u : rows[i] == 10 ? 0b001u : 0b100u;
    EXPECT_EQ(held[i], want) << rows[i];
  }
  EXPECT_EQ(idx.Search(terms, 10), rows);  // the same rows without it
  EXPECT_TRUE(idx.Search({"party"}, 10, &held).empty());
  EXPECT_TRUE(held.empty());
}

TEST(TextIndex, RanksLikeFts5OnAOneScopeStore) {
  testing::TempDir dir;
  auto db = store::OpenWriter(dir.File("t.db"), {});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  sql::Db* d = db->get();
  // A small vocabulary: many rows share terms and lengths, so scores tie.
  const std::vector<std::string> vocab = {"cello", "japan", "trip", "dinner", "run",
                                          "book",  "paint", "dog",  "hike",   "jazz",
                                          "work",  "cook",  "a_b",  "x9"};
  std::mt19937 rng(7);
  std::int64_t scope = 0;
  {
    auto txn = sql::Txn::Begin(d);
    ASSERT_TRUE(txn.ok());
    auto id = store::EnsureScope(d, Scope{"t", "u", "a"}, 0);
    ASSERT_TRUE(id.ok());
    scope = *id;
    for (std::int64_t row = 1; row <= 300; ++row) {
      std::string doc;
      const int words = 1 + static_cast<int>(rng() % 6);
      for (int w = 0; w < words; ++w) doc += (doc.empty() ? "" : " ") + vocab[rng() % vocab.size()];
      ASSERT_TRUE(store::IndexText(d, store::FullText::kFacts, row * 3, scope, doc).ok());
    }
    ASSERT_TRUE((*txn)->Commit().ok());
  }
  TextIndex copy;
  ASSERT_TRUE(store::ScanTextRows(
                  d, store::FullText::kFacts, scope,
                  [&](std::int64_t rowid, const std::string& terms) { copy.Add(rowid, terms); })
                  .ok());
  EXPECT_EQ(copy.size(), 300u);
  EXPECT_TRUE(copy.exact());
  for (int q = 0; q < 200; ++q) {
    std::vector<std::string> terms;
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < n; ++i) {
      const std::string& t = q % 10 == 0 ? std::string("absent") : vocab[rng() % vocab.size()];
      if (std::find(terms.begin(), terms.end(), t) == terms.end()) terms.push_back(t);
    }
    ASSERT_TRUE(copy.CanSearch(terms));
    for (int limit : {5, 50, 1000}) {
      auto fts =
          store::SearchText(d, store::FullText::kFacts, store::ScopeToken(scope), terms, limit);
      ASSERT_TRUE(fts.ok());
      EXPECT_EQ(copy.Search(terms, limit), Rowids(*fts)) << "query " << q << " limit " << limit;
    }
  }
}

TEST(TextIndex, LeavesNonAsciiToTheStore) {
  TextIndex copy;
  copy.Add(1, "cafe jazz");
  EXPECT_TRUE(copy.exact());
  EXPECT_TRUE(copy.CanSearch({"jazz"}));
  EXPECT_FALSE(copy.CanSearch({"caf\xc3\xa9"}));  // unicode61 folds it: the store decides
  copy.Add(2, "caf\xc3\xa9");
  EXPECT_FALSE(copy.exact());
  EXPECT_FALSE(copy.CanSearch({"jazz"}));
}

}  // namespace
}  // namespace engram::retrieval
