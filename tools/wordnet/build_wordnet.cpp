// Build-time maker of the WordNet image (core/wordnet.hpp): parses the
// WordNet database that Debian's `wordnet-base` installs (/usr/share/wordnet)
// and writes the compact image that each process then memory-maps instead of
// parsing the database at its first retrieval.
//
//   build_wordnet WORDNET_DIR OUT_FILE [--names NAMES_FILE]
//
// With --names, the name senses of that file (core/name_senses.hpp) are added.
#include <cstdio>
#include <string>
#include <vector>

#include "core/name_senses.hpp"
#include "core/wordnet.hpp"

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 5 && std::string(argv[3]) == "--names")) {
    std::fprintf(stderr, "usage: build_wordnet WORDNET_DIR OUT_FILE [--names NAMES_FILE]\n");
    return 2;
  }
  const std::string dir = argv[1], out = argv[2];
  std::vector<engram::names::NameSense> names;
  if (argc == 5) {
    auto read = engram::names::ReadNameSenses(argv[4]);
    if (!read.ok()) {
      std::fprintf(stderr, "build_wordnet: %s\n", read.status().message().c_str());
      return 1;
    }
    names = std::move(read).value();
  }
  std::string error;
  auto wn = engram::wordnet::WordNet::Load(dir, names, &error);
  if (!wn) {
    if (error.empty()) std::fprintf(stderr, "build_wordnet: cannot read the WordNet database in %s\n", dir.c_str());
    else std::fprintf(stderr, "build_wordnet: %s: %s\n", argc == 5 ? argv[4] : "", error.c_str());
    return 1;
  }
  const std::string tmp = out + ".tmp";
  if (!wn->WriteImage(tmp) || std::rename(tmp.c_str(), out.c_str()) != 0) {
    std::fprintf(stderr, "build_wordnet: cannot write %s\n", out.c_str());
    std::remove(tmp.c_str());
    return 1;
  }
  auto check = engram::wordnet::WordNet::Open(out);
  if (!check || check->synsets() != wn->synsets()) {
    std::fprintf(stderr, "build_wordnet: %s does not read back\n", out.c_str());
    return 1;
  }
  std::printf("build_wordnet: %zu synsets (%zu name senses), %zu bytes -> %s\n", wn->synsets(), names.size(),
              wn->ImageBytes(), out.c_str());
  return 0;
}
