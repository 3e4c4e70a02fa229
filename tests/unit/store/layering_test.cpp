// SQL lives only in the data layer: no other layer prepares or runs a
// statement, or spells one out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

TEST(Layering, SqlOnlyInTheStoreLayer) {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(ENGRAM_SOURCE_DIR) / "src";
  ASSERT_TRUE(fs::is_directory(src)) << src;
  // A call into the connection seam, or a statement in a string literal.
  const std::regex sql(R"((->|\.)(Prepare|Exec)\(|"\s*(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE TABLE)\b)");
  std::vector<std::string> found;
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const auto ext = e.path().extension();
    if (ext != ".cpp" && ext != ".hpp") continue;
    const auto rel = fs::relative(e.path(), src).generic_string();
    if (rel.rfind("store/", 0) == 0) continue;
    ++files;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (std::regex_search(line, sql)) found.push_back(rel + ":" + std::to_string(n) + ": " + line);
    }
  }
  EXPECT_GT(files, 50);
  std::ostringstream all;
  for (const auto& f : found) all << f << "\n";
  EXPECT_TRUE(found.empty()) << "SQL outside src/store:\n" << all.str();
}

}  // namespace
