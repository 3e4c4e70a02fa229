// The names file (core/name_senses.hpp): entries as written, every malformed
// line refused with its line number and field.
#include "core/name_senses.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "testing/temp_dir.hpp"

namespace engram::names {
namespace {

class NameSensesFile : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    const std::string path = dir_.path() + "/names.tsv";
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  testing::TempDir dir_;
};

TEST_F(NameSensesFile, ReadsEntriesSkippingCommentsAndBlankLines) {
  auto r = ReadNameSenses(Write("# name\tkind\torder\tgloss\n\n"
                                "tesla\tcar\tfirst\tan electric car\n"
                                "apple\tcomputer\tsecond\ta maker of phones and computers\r\n"
                                "spotify\tapplication_program,company\tfirst\ta music app\n"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].name, "tesla");
  EXPECT_EQ((*r)[0].kinds, std::vector<std::string>{"car"});
  EXPECT_TRUE((*r)[0].first);
  EXPECT_EQ((*r)[0].gloss, "an electric car");
  EXPECT_EQ((*r)[0].line, 3);
  EXPECT_FALSE((*r)[1].first);
  EXPECT_EQ((*r)[1].gloss, "a maker of phones and computers");  // the CR of a CRLF file is no part of it
  EXPECT_EQ((*r)[2].kinds, (std::vector<std::string>{"application_program", "company"}));  // the main kind first
  EXPECT_FALSE((*r)[0].also);
  EXPECT_EQ((*r)[0].file, dir_.path() + "/names.tsv");
}

TEST_F(NameSensesFile, AnAlsoEntryGivesAKnownWordMoreKinds) {
  auto r = ReadNameSenses(Write("dog\tpet\talso\tdogs are kept as pets\nmanager\tboss,leader\talso\tthe one you report to\n"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_TRUE((*r)[0].also);
  EXPECT_EQ((*r)[1].kinds, (std::vector<std::string>{"boss", "leader"}));
}

TEST_F(NameSensesFile, APreferenceNamesOneKindAndMayComeWithAnAlsoEntry) {
  auto r = ReadNameSenses(Write("yoga\texercise\tprefer\tthe exercise, not the discipline\n"
                                "yoga\thobby\talso\tpeople take it up in their free time\n"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_TRUE((*r)[0].prefer);
  EXPECT_FALSE((*r)[0].also);
  EXPECT_TRUE((*r)[1].also);
  auto two = ReadNameSenses(Write("yoga\texercise,sport\tprefer\tx\n"));
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("one kind"), std::string::npos) << two.status().message();
  auto twice = ReadNameSenses(Write("yoga\texercise\tprefer\tx\nyoga\tsport\tprefer\ty\n"));
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("listed twice"), std::string::npos) << twice.status().message();
}

TEST_F(NameSensesFile, ASynonymNamesOneKind) {
  auto r = ReadNameSenses(Write("app\tapplication_program\tsame\ta program on a phone\n"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_TRUE((*r)[0].same);
  EXPECT_TRUE((*r)[0].first);  // (the word vectors' order for it)
  auto two = ReadNameSenses(Write("app\tapplication_program,software\tsame\tx\n"));
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("one kind"), std::string::npos) << two.status().message();
}

TEST_F(NameSensesFile, RefusesMalformedLinesNamingTheLineAndField) {
  const std::pair<const char*, const char*> cases[] = {
      {"tesla car first an electric car\n", "4 tab-separated fields"},
      {"tesla\tcar\tfirst\n", "found 3"},
      {"Tesla\tcar\tfirst\tan electric car\n", "name"},
      {"model 3\tcar\tfirst\tan electric car\n", "name"},
      {"tesla\tCar Maker\tfirst\tan electric car\n", "kind"},
      {"tesla\tcar\tmaybe\tan electric car\n", "order"},
      {"tesla\tcar,\tfirst\tan electric car\n", "kind"},
      {"tesla\t,car\tfirst\tan electric car\n", "kind"},
      {"tesla\tcar,company,car\tfirst\tan electric car\n", "\"car\" is listed twice"},
      {"tesla\tcar,company,brand,maker\tfirst\tan electric car\n", "more than three"},
      {"tesla\tcar\tfirst\t\n", "gloss"},
      {"tesla\tcar\tfirst\ta\ntesla\tcar\tsecond\tb\n", "listed twice"},
  };
  for (const auto& [text, want] : cases) {
    auto r = ReadNameSenses(Write(text));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("names.tsv:"), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(ReadNameSenses(dir_.path() + "/nowhere.tsv").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace engram::names
