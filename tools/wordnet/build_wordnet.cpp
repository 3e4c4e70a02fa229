// Build-time maker of the WordNet image (core/wordnet.hpp): parses the
// WordNet database that Debian's `wordnet-base` installs (/usr/share/wordnet)
// and writes the compact image that each process then memory-maps instead of
// parsing the database at its first retrieval.
//
//   build_wordnet WORDNET_DIR OUT_FILE [--names NAMES_FILE]...
//
// With --names, the name senses of that file (core/name_senses.hpp) are added,
// its everyday kinds ("also" entries: tools/wordvec/kinds.tsv) and its
// preferred senses ("prefer": tools/wordvec/senses.tsv); repeatable.
#include <cstdio>
#include <string>
#include <vector>

#include "core/name_senses.hpp"
#include "core/wordnet.hpp"

int main(int argc, char** argv) {
  bool usage = argc < 3 || (argc - 3) % 2 != 0;
  for (int a = 3; !usage && a < argc; a += 2) usage = std::string(argv[a]) != "--names";
  if (usage) {
    std::fprintf(stderr, "usage: build_wordnet WORDNET_DIR OUT_FILE [--names NAMES_FILE]...\n");
    return 2;
  }
  const std::string dir = argv[1], out = argv[2];
  std::vector<engram::names::NameSense> names;
  for (int a = 4; a < argc; a += 2) {
    auto read = engram::names::ReadNameSenses(argv[a]);
    if (!read.ok()) {
      std::fprintf(stderr, "build_wordnet: %s\n", read.status().message().c_str());
      return 1;
    }
    for (auto& n : read.value()) names.push_back(std::move(n));
  }
  std::string error;
  auto wn = engram::wordnet::WordNet::Load(dir, names, &error);
  if (!wn) {
    if (error.empty())
      std::fprintf(stderr, "build_wordnet: cannot read the WordNet database in %s\n", dir.c_str());
    else
      std::fprintf(stderr, "build_wordnet: %s\n", error.c_str());
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
  std::size_t kinds = 0, preferred = 0, synonyms = 0;
  for (const auto& n : names) {
    kinds += n.also ? 1 : 0;
    preferred += n.prefer ? 1 : 0;
    synonyms += n.same ? 1 : 0;
  }
  std::printf(
      "build_wordnet: %zu synsets (%zu name senses, %zu everyday kinds, %zu preferred senses, %zu "
      "synonyms), %zu bytes -> %s\n",
      wn->synsets(), names.size() - kinds - preferred - synonyms, kinds, preferred, synonyms,
      wn->ImageBytes(), out.c_str());
  return 0;
}
