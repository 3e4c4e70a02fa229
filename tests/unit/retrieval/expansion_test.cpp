// WordNet query expansion on a tiny database in the Princeton format.
#include "retrieval/expansion.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/wordnet.hpp"
#include "retrieval/ranking.hpp"

namespace engram::retrieval {
namespace {

class Expansion : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "engram-wnx-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    Write("data.noun",
          "00000001 06 n 01 instrument 0 002 ~ 00000002 n 0000 ~ 00000003 n 0000 | a device\n"
          "00000002 06 n 01 violin 0 000 | bowed\n"
          "00000003 06 n 01 clarinet 0 000 | reed\n");
    Write("index.noun",
          "clarinet n 1 0 1 0 00000003\ninstrument n 1 1 ~ 1 0 00000001\nviolin n 1 0 1 0 00000002\n");
    for (const char* f : {"data.verb", "index.verb", "data.adj", "index.adj"}) Write(f, "");
    wn_ = wordnet::WordNet::Load(dir_);
    ASSERT_NE(wn_, nullptr);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void Write(const std::string& name, const std::string& data) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << data;
  }
  std::string dir_;
  std::unique_ptr<wordnet::WordNet> wn_;
};

TEST_F(Expansion, AddsAcceptedRelatedTermsBelowTheQuerysOwn) {
  const std::string q = "What instruments does Ana play?";
  const auto base = QueryTerms(q);
  auto terms = ExpandQueryTerms(q, base, [](const std::string& t) { return t == "violin"; },
                                DefaultExpansionParams(), wn_.get());
  ASSERT_EQ(terms.size(), base.size() + 1);
  for (std::size_t i = 0; i < base.size(); ++i) {
    EXPECT_EQ(terms[i].term, base[i].term);
    EXPECT_EQ(terms[i].weight, 1.0);
  }
  EXPECT_EQ(terms.back().term, "violin");
  EXPECT_DOUBLE_EQ(terms.back().weight, DefaultExpansionParams().hyponym);
}

TEST_F(Expansion, LeavesTheQueryAloneWithoutMatches) {
  const std::string q = "instrument violin";
  const auto base = QueryTerms(q);
  // "violin" is a query term already; "clarinet" is not accepted.
  auto terms = ExpandQueryTerms(q, base, [](const std::string& t) { return t != "clarinet"; },
                                DefaultExpansionParams(), wn_.get());
  ASSERT_EQ(terms.size(), base.size());
  EXPECT_EQ(terms[1].weight, 1.0);
  EXPECT_EQ(ExpandQueryTerms("", {}, [](const std::string&) { return true; }, DefaultExpansionParams(),
                             wn_.get()).size(), 0u);
}

}  // namespace
}  // namespace engram::retrieval
