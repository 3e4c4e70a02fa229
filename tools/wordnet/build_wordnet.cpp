// Build-time maker of the WordNet image (core/wordnet.hpp): parses the
// WordNet database that Debian's `wordnet-base` installs (/usr/share/wordnet)
// and writes the compact image that each process then memory-maps instead of
// parsing the database at its first retrieval.
//
//   build_wordnet WORDNET_DIR OUT_FILE
#include <cstdio>
#include <string>

#include "core/wordnet.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: build_wordnet WORDNET_DIR OUT_FILE\n");
    return 2;
  }
  const std::string dir = argv[1], out = argv[2];
  auto wn = engram::wordnet::WordNet::Load(dir);
  if (!wn) {
    std::fprintf(stderr, "build_wordnet: cannot read the WordNet database in %s\n", dir.c_str());
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
  std::printf("build_wordnet: %zu synsets, %zu bytes -> %s\n", wn->synsets(), wn->ImageBytes(),
              out.c_str());
  return 0;
}
