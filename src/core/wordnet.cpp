#include "core/wordnet.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/process.hpp"
#include "core/text.hpp"

namespace engram::wordnet {

namespace {

bool ReadFile(const std::string& path, std::string& out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  out.clear();
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

// Calls `fn` with every line of a file (without its newline); false when the
// file cannot be read.
template <typename Fn>
bool ForEachLine(const std::string& path, Fn fn) {
  std::string data;
  if (!ReadFile(path, data)) return false;
  for (std::size_t start = 0; start < data.size();) {
    std::size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    fn(std::string_view(data.data() + start, end - start));
    start = end + 1;
  }
  return true;
}

// Splits on single spaces; empty fields are skipped.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    std::size_t j = line.find(' ', i);
    if (j == std::string_view::npos) j = line.size();
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

bool ParseUint(std::string_view s, int base, std::uint64_t& out) {
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return false;
    v = v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
  }
  out = v;
  return true;
}

int PosOf(std::string_view p) {
  if (p == "n") return 0;
  if (p == "v") return 1;
  if (p == "a" || p == "s") return 2;
  return -1;
}

constexpr int kTimeLexFile = 28;  // noun.time

std::string Normalise(std::string_view w) {
  std::string s(w);
  std::size_t paren = s.find('(');  // adjective markers: "beautiful(a)"
  if (paren != std::string::npos) s.resize(paren);
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == ' ') c = '_';
  }
  return s;
}

std::uint64_t Key(int pos, std::uint64_t offset) { return static_cast<std::uint64_t>(pos) << 32 | offset; }

struct Rule {
  const char* suffix;
  const char* ending;
};
const std::vector<Rule> kRules[3] = {
    {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
    {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
    {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}}};

constexpr char kMagic[8] = {'E', 'N', 'G', 'W', 'N', 'E', 'T', '4'};
constexpr std::size_t kHeaderWords = 19;  // u32 counts after the magic
constexpr std::uint8_t kNoTerm = 255;     // a word without one index term (a collocation, a stopword)
constexpr std::uint64_t kLexFiles = 45;   // lexicographer files of WordNet 3.0 (0-44)
constexpr std::uint8_t kLocationFile = 15;  // noun.location

// The database as parsed, before it becomes an image.
struct Parsed {
  struct Synset {
    std::vector<std::uint32_t> words;
    std::vector<std::uint32_t> hyponyms;     // synset indexes
    std::vector<std::uint32_t> derivations;  // word ids
    std::vector<std::uint32_t>
        parts;  // synset indexes: part meronyms of a named thing ("France": "Paris")
    std::uint8_t pos = 0;
    std::uint8_t lex = 0;  // lexicographer file (lexnames: 4 noun.act, 15 noun.location ...)
  };
  std::unordered_map<std::string, std::uint32_t> word_ids;
  std::vector<std::string> words;
  std::vector<std::vector<std::uint32_t>> word_synsets;  // per word id, by sense (index.*)
  std::vector<Synset> synsets;
  std::unordered_map<std::uint64_t, std::uint32_t> by_offset;  // pos << 32 | offset
  std::vector<std::vector<std::uint64_t>> pending_hyponyms;
  std::vector<std::vector<std::pair<std::uint64_t, int>>> pending_derivations;
  std::vector<std::vector<std::uint64_t>> pending_parts;
  std::vector<std::pair<std::string, std::vector<std::string>>> exceptions[3];  // in file order
  std::unordered_map<std::string, std::size_t> exception_at[3];

  std::uint32_t WordId(std::string_view w) {
    std::string key(w);
    auto [it, fresh] = word_ids.try_emplace(key, static_cast<std::uint32_t>(words.size()));
    if (fresh) {
      words.push_back(std::move(key));
      word_synsets.emplace_back();
    }
    return it->second;
  }

  bool LoadData(const std::string& path, std::uint8_t pos) {
    return ForEachLine(path, [&](std::string_view line) {
      if (line.empty() || line[0] == ' ') return;  // licence header
      const std::size_t bar = line.find(" | ");
      auto f = Fields(bar == std::string_view::npos ? line : line.substr(0, bar));
      std::uint64_t offset = 0, wcnt = 0, pcnt = 0;
      if (f.size() < 4 || !ParseUint(f[0], 10, offset) || !ParseUint(f[3], 16, wcnt)) return;
      std::size_t i = 4 + 2 * wcnt;
      if (i >= f.size() || !ParseUint(f[i], 10, pcnt)) return;
      const auto index = static_cast<std::uint32_t>(synsets.size());
      Synset syn;
      syn.pos = pos;
      std::uint64_t lex = 0;
      if (ParseUint(f[1], 10, lex) && lex < kLexFiles) syn.lex = static_cast<std::uint8_t>(lex);
      std::vector<std::string> lemmas;
      for (std::size_t w = 0; w < wcnt; ++w) lemmas.push_back(Normalise(f[4 + 2 * w]));
      for (const std::string& lemma : lemmas) {
        if (!IsTimeAbbreviation(syn.lex, lemma, lemmas)) syn.words.push_back(WordId(lemma));
      }
      std::vector<std::uint64_t> hypo;
      std::vector<std::pair<std::uint64_t, int>> deriv;
      std::vector<std::uint64_t> part;
      bool instance = false;  // an "@i" pointer: a named thing ("Portugal"), not a kind ("city")
      ++i;
      for (std::uint64_t p = 0; p < pcnt && i + 3 < f.size(); ++p, i += 4) {
        const std::string_view sym = f[i];
        std::uint64_t target = 0, st = 0;
        const int tpos = PosOf(f[i + 2]);
        if (tpos < 0 || !ParseUint(f[i + 1], 10, target) || !ParseUint(f[i + 3], 16, st)) continue;
        if (sym == "~" || sym == "~i") {
          if (tpos == pos) hypo.push_back(Key(tpos, target));
        } else if (sym == "+") {
          deriv.emplace_back(Key(tpos, target), static_cast<int>(st & 0xff));
        } else if (sym == "%p") {
          if (tpos == 0 && pos == 0) part.push_back(Key(tpos, target));
        } else if (sym == "@i") {
          instance = true;
        }
      }
      by_offset[Key(pos, offset)] = index;
      synsets.push_back(std::move(syn));
      pending_hyponyms.push_back(std::move(hypo));
      pending_derivations.push_back(std::move(deriv));
      // The parts of a named place only: those of a kind ("a city": its
      // "downtown") name no place of their own.
      if (!instance) part.clear();
      pending_parts.push_back(std::move(part));
    });
  }

  bool LoadIndex(const std::string& path, std::uint8_t pos) {
    return ForEachLine(path, [&](std::string_view line) {
      if (line.empty() || line[0] == ' ') return;
      auto f = Fields(line);
      std::uint64_t senses = 0, pcnt = 0;
      if (f.size() < 4 || !ParseUint(f[2], 10, senses) || !ParseUint(f[3], 10, pcnt)) return;
      const std::size_t first = 4 + pcnt + 2;  // pointers, sense_cnt, tagsense_cnt
      const std::uint32_t id = WordId(Normalise(f[0]));
      for (std::size_t k = first; k < f.size() && k < first + senses; ++k) {
        std::uint64_t offset = 0;
        if (!ParseUint(f[k], 10, offset)) continue;
        auto it = by_offset.find(Key(pos, offset));
        if (it == by_offset.end()) continue;
        // (not an abbreviation the synset left out: IsTimeAbbreviation)
        const Synset& syn = synsets[it->second];
        if (syn.lex == kTimeLexFile &&
            std::find(syn.words.begin(), syn.words.end(), id) == syn.words.end())
          continue;
        word_synsets[id].push_back(it->second);
      }
    });
  }

  bool LoadExceptions(const std::string& path, std::uint8_t pos) {
    return ForEachLine(path, [&](std::string_view line) {
      auto f = Fields(line);
      if (f.size() < 2) return;
      const std::string key = Normalise(f[0]);
      auto [it, fresh] = exception_at[pos].try_emplace(key, exceptions[pos].size());
      if (fresh) exceptions[pos].emplace_back(key, std::vector<std::string>{});
      auto& bases = exceptions[pos][it->second].second;
      for (std::size_t k = 1; k < f.size(); ++k) bases.push_back(Normalise(f[k]));
    });
  }

  // The most frequent noun sense of a lemma (null when it is no noun).
  const std::uint32_t* FirstNounOf(const std::string& lemma) {
    auto word = word_ids.find(Normalise(lemma));
    if (word == word_ids.end()) return nullptr;
    for (const std::uint32_t& s : word_synsets[word->second]) {
      if (synsets[s].pos == 0) return &s;
    }
    return nullptr;
  }

  // A preference: the word's first noun sense below its kind (the kind's
  // most frequent noun sense, or that sense itself) moves before its other
  // noun senses. False, with the entry in `error`, when the word or the kind
  // is no noun, or no later sense of the word is below the kind.
  bool Prefer(const names::NameSense& n, std::string* error) {
    const std::string where = names::Where(n);
    auto word = word_ids.find(Normalise(n.name));
    const std::uint32_t* kind = FirstNounOf(n.kinds.front());
    if (word == word_ids.end() || kind == nullptr) {
      if (error) *error = where + "\"" + (kind == nullptr ? n.kinds.front() : n.name) + "\" is no WordNet noun";
      return false;
    }
    // What is below the kind (at build time: the whole subtree).
    std::vector<bool> below(synsets.size(), false);
    std::vector<std::uint32_t> stack{*kind};
    below[*kind] = true;
    while (!stack.empty()) {
      const std::uint32_t x = stack.back();
      stack.pop_back();
      for (std::uint32_t h : synsets[x].hyponyms) {
        if (!below[h]) {
          below[h] = true;
          stack.push_back(h);
        }
      }
    }
    auto& senses = word_synsets[word->second];
    auto first = std::find_if(senses.begin(), senses.end(), [&](std::uint32_t x) { return synsets[x].pos == 0; });
    auto meant = std::find_if(first, senses.end(), [&](std::uint32_t x) { return synsets[x].pos == 0 && below[x]; });
    if (first == senses.end() || meant == senses.end() || meant == first) {
      if (error) {
        *error = where + "\"" + n.name + "\" has no later noun sense below \"" + n.kinds.front() + "\"" +
                 (meant == first && first != senses.end() ? " (its first is)" : "");
      }
      return false;
    }
    std::rotate(first, meant, meant + 1);
    return true;
  }

  // Each name sense a noun synset of its own under the most frequent noun
  // sense of each of its kinds (in the main kind's lexicographer file), the
  // name's first noun sense or its second (after WordNet's first). Runs after
  // Resolve. An entry that is "also" adds no sense: the word's most frequent
  // noun sense goes under its kinds as well; the preferences apply first
  // (Prefer). False, with the entry in `error`, when a kind (or such a word)
  // is no noun WordNet knows.
  bool AddNames(const std::vector<names::NameSense>& names, std::string* error) {
    for (const auto& n : names) {
      if (n.prefer && !Prefer(n, error)) return false;
    }
    for (const auto& n : names) {
      if (n.prefer) continue;
      std::vector<std::uint32_t> under;
      for (const auto& k : n.kinds) {
        const std::uint32_t* noun = FirstNounOf(k);
        if (noun == nullptr) {
          if (error) *error = names::Where(n) + "kind \"" + k + "\" is no WordNet noun";
          return false;
        }
        under.push_back(*noun);
      }
      if (under.empty()) {
        if (error) *error = names::Where(n) + "no kind";
        return false;
      }
      if (n.same) {
        // A synonym: a word of the kind's sense, which becomes its most frequent sense.
        const std::uint32_t word = WordId(Normalise(n.name));
        auto& words = synsets[under.front()].words;
        if (std::find(words.begin(), words.end(), word) == words.end()) words.push_back(word);
        auto& senses = word_synsets[word];
        std::erase(senses, under.front());
        senses.insert(senses.begin(), under.front());
        continue;
      }
      if (n.also) {
        // A word WordNet knows: its most frequent noun sense goes under the kinds.
        const std::uint32_t* sense = FirstNounOf(n.name);
        if (sense == nullptr) {
          if (error) *error = names::Where(n) + "\"" + n.name + "\" is no WordNet noun";
          return false;
        }
        for (std::uint32_t u : under) {
          if (u == *sense) continue;
          auto& hypo = synsets[u].hyponyms;
          if (std::find(hypo.begin(), hypo.end(), *sense) == hypo.end()) hypo.push_back(*sense);
        }
        continue;
      }
      const auto index = static_cast<std::uint32_t>(synsets.size());
      Synset syn;
      syn.pos = 0;
      syn.lex = synsets[under.front()].lex;
      const std::uint32_t word = WordId(Normalise(n.name));
      syn.words.push_back(word);
      synsets.push_back(std::move(syn));
      for (std::uint32_t u : under) synsets[u].hyponyms.push_back(index);
      auto& senses = word_synsets[word];
      auto at = senses.begin();
      if (!n.first) {
        at = std::find_if(senses.begin(), senses.end(), [&](std::uint32_t s) { return synsets[s].pos == 0; });
        if (at != senses.end()) ++at;
        else at = senses.begin();
      }
      senses.insert(at, index);
    }
    return true;
  }

  void Resolve() {
    for (std::size_t s = 0; s < synsets.size(); ++s) {
      for (std::uint64_t k : pending_hyponyms[s]) {
        auto it = by_offset.find(k);
        if (it != by_offset.end()) synsets[s].hyponyms.push_back(it->second);
      }
      for (std::uint64_t k : pending_parts[s]) {
        auto it = by_offset.find(k);
        if (it != by_offset.end()) synsets[s].parts.push_back(it->second);
      }
      for (const auto& [k, word] : pending_derivations[s]) {
        auto it = by_offset.find(k);
        if (it == by_offset.end()) continue;
        const auto& ws = synsets[it->second].words;
        if (word >= 1 && static_cast<std::size_t>(word) <= ws.size()) {
          synsets[s].derivations.push_back(ws[static_cast<std::size_t>(word - 1)]);
        }
      }
    }
  }
};

// Appends little-endian-as-stored u32 arrays and padded byte blobs.
class ImageWriter {
 public:
  void U32(std::uint32_t v) { Bytes(&v, 4); }
  void U32s(const std::vector<std::uint32_t>& v) {
    if (!v.empty()) Bytes(v.data(), 4 * v.size());
  }
  void Blob(const std::string& b) {
    Bytes(b.data(), b.size());
    while (out.size() % 4 != 0) out.push_back(0);
  }
  void Bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const std::uint8_t*>(p);
    out.insert(out.end(), c, c + n);
  }
  std::vector<std::uint8_t> out;
};

// Sorted strings: offsets (n + 1) and the characters.
void PutStrings(ImageWriter& w, const std::vector<std::string>& sorted) {
  std::vector<std::uint32_t> off{0};
  std::string chars;
  for (const auto& s : sorted) {
    chars += s;
    off.push_back(static_cast<std::uint32_t>(chars.size()));
  }
  w.U32s(off);
  w.Blob(chars);
}

void PutLists(ImageWriter& w, const std::vector<std::vector<std::uint32_t>>& lists) {
  std::vector<std::uint32_t> off{0}, data;
  for (const auto& l : lists) {
    data.insert(data.end(), l.begin(), l.end());
    off.push_back(static_cast<std::uint32_t>(data.size()));
  }
  w.U32s(off);
  w.U32s(data);
}

std::uint32_t Total(const std::vector<std::vector<std::uint32_t>>& lists) {
  std::size_t n = 0;
  for (const auto& l : lists) n += l.size();
  return static_cast<std::uint32_t>(n);
}

std::uint32_t CharBytes(const std::vector<std::string>& strings) {
  std::size_t n = 0;
  for (const auto& s : strings) n += s.size();
  return static_cast<std::uint32_t>(n);
}

// The image of a parsed database. Word ids become positions in the sorted
// word table; every list keeps its order.
std::vector<std::uint8_t> MakeImage(const Parsed& p) {
  std::vector<std::uint32_t> order(p.words.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return p.words[a] < p.words[b]; });
  std::vector<std::uint32_t> id_of(order.size());
  std::vector<std::string> words(order.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    id_of[order[i]] = i;
    words[i] = p.words[order[i]];
  }
  auto remap = [&](const std::vector<std::uint32_t>& ids) {
    std::vector<std::uint32_t> out;
    out.reserve(ids.size());
    for (auto id : ids) out.push_back(id_of[id]);
    return out;
  };
  std::vector<std::vector<std::uint32_t>> word_synsets(order.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) word_synsets[i] = p.word_synsets[order[i]];
  std::vector<std::vector<std::uint32_t>> syn_words, syn_hypo, syn_deriv, syn_parts;
  std::vector<std::uint32_t> parted;  // the synsets with parts, ascending (few: kept apart)
  std::string pos, lex;
  for (const auto& s : p.synsets) {
    syn_words.push_back(remap(s.words));
    syn_hypo.push_back(s.hyponyms);
    syn_deriv.push_back(remap(s.derivations));
    if (!s.parts.empty()) {
      parted.push_back(static_cast<std::uint32_t>(syn_words.size() - 1));
      syn_parts.push_back(s.parts);
    }
    pos.push_back(static_cast<char>(s.pos));
    lex.push_back(static_cast<char>(s.lex));
  }
  // Exceptions: keys sorted; bases that are not words can never be a base
  // form (BaseForms keeps only words), so only word ids are kept.
  std::vector<std::string> exc_keys[3];
  std::vector<std::vector<std::uint32_t>> exc_bases[3];
  for (int x = 0; x < 3; ++x) {
    auto entries = p.exceptions[x];
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, bases] : entries) {
      exc_keys[x].push_back(key);
      std::vector<std::uint32_t> ids;
      for (const auto& b : bases) {
        auto it = p.word_ids.find(b);
        if (it != p.word_ids.end()) ids.push_back(id_of[it->second]);
      }
      exc_bases[x].push_back(std::move(ids));
    }
  }
  // Each word's index term (text::Terms of the word, its '_' as spaces, when
  // that is one term), as the bytes of the word it keeps and the rest: query
  // expansion then needs no stemmer.
  std::string keep;
  std::vector<std::string> tails;
  for (const auto& word : words) {
    std::string spaced = word;
    std::replace(spaced.begin(), spaced.end(), '_', ' ');
    const std::vector<std::string> terms = text::Terms(spaced);
    std::size_t k = 0;
    if (terms.size() == 1) {
      const std::string& t = terms[0];
      while (k < t.size() && k < word.size() && k < kNoTerm - 1 && t[k] == word[k]) ++k;
      keep.push_back(static_cast<char>(k));
      tails.push_back(t.substr(k));
    } else {
      keep.push_back(static_cast<char>(kNoTerm));
      tails.emplace_back();
    }
  }
  ImageWriter w;
  w.Bytes(kMagic, sizeof kMagic);
  const std::uint32_t head[kHeaderWords] = {static_cast<std::uint32_t>(words.size()),
                                            CharBytes(words),
                                            Total(word_synsets),
                                            static_cast<std::uint32_t>(p.synsets.size()),
                                            Total(syn_words),
                                            Total(syn_hypo),
                                            Total(syn_deriv),
                                            static_cast<std::uint32_t>(exc_keys[0].size()),
                                            CharBytes(exc_keys[0]),
                                            Total(exc_bases[0]),
                                            static_cast<std::uint32_t>(exc_keys[1].size()),
                                            CharBytes(exc_keys[1]),
                                            Total(exc_bases[1]),
                                            static_cast<std::uint32_t>(exc_keys[2].size()),
                                            CharBytes(exc_keys[2]),
                                            Total(exc_bases[2]),
                                            CharBytes(tails),
                                            static_cast<std::uint32_t>(parted.size()),
                                            Total(syn_parts)};
  for (auto h : head) w.U32(h);
  PutStrings(w, words);
  PutLists(w, word_synsets);
  w.Blob(pos);
  w.Blob(lex);
  PutLists(w, syn_words);
  PutLists(w, syn_hypo);
  PutLists(w, syn_deriv);
  w.U32s(parted);
  PutLists(w, syn_parts);
  for (int x = 0; x < 3; ++x) {
    PutStrings(w, exc_keys[x]);
    PutLists(w, exc_bases[x]);
  }
  w.Blob(keep);
  PutStrings(w, tails);
  return std::move(w.out);
}

std::size_t Padded(std::size_t n) { return (n + 3) / 4 * 4; }

// Reads an image's sections in order, checking that each fits.
class ImageReader {
 public:
  ImageReader(const std::uint8_t* base, std::size_t size) : base_(base), size_(size) {}
  const std::uint32_t* U32s(std::size_t n) {
    return reinterpret_cast<const std::uint32_t*>(Take(4 * n));
  }
  const std::uint8_t* Blob(std::size_t n) { return Take(Padded(n)); }
  bool ok() const { return ok_; }
  bool done() const { return ok_ && at_ == size_; }

 private:
  const std::uint8_t* Take(std::size_t n) {
    if (!ok_ || n > size_ - at_) {
      ok_ = false;
      return nullptr;
    }
    const std::uint8_t* p = base_ + at_;
    at_ += n;
    return p;
  }
  const std::uint8_t* base_;
  std::size_t size_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

// Offsets ascend from 0 to `total`, and every id in the data is below `bound`.
bool ValidLists(const std::uint32_t* off, std::size_t n, const std::uint32_t* data, std::uint32_t total,
                std::uint32_t bound) {
  if (off[0] != 0 || off[n] != total) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (off[i] > off[i + 1]) return false;
  }
  for (std::size_t i = 0; i < total; ++i) {
    if (data[i] >= bound) return false;
  }
  return true;
}

bool ValidStrings(const std::uint32_t* off, std::size_t n, std::uint32_t chars) {
  if (off[0] != 0 || off[n] != chars) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (off[i] > off[i + 1]) return false;
  }
  return true;
}

// The image to map: "" when there is none ("off" or not found).
std::string DefaultImagePath() { return process::FindDataFile("ENGRAM_WORDNET", "engram-wordnet.bin"); }

// (An empty value is "off" too, as for the image: process::FindDataFile.)
bool WordNetOff() {
  const char* env = std::getenv("ENGRAM_WORDNET");
  return env && (*env == 0 || std::string_view(env) == "off");
}

// Default()'s source (DefaultSource), set once by its first call.
std::string& DefaultSourceText() {
  static std::string source;
  return source;
}

}  // namespace

bool IsTimeAbbreviation(int lexfile, std::string_view lemma,
                        const std::vector<std::string>& lemmas) {
  if (lexfile != kTimeLexFile || lemma.size() > 4) return false;
  return std::any_of(lemmas.begin(), lemmas.end(), [&](const std::string& other) {
    return other.size() > lemma.size() && other.compare(0, lemma.size(), lemma) == 0 &&
           other.find_first_of("_ -") == std::string::npos;
  });
}

long WordNet::Strings::Find(std::string_view s) const {
  std::uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    const int c = at(mid).compare(s);
    if (c == 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

WordNet::~WordNet() {
  if (mapped_ && base_) ::munmap(const_cast<std::uint8_t*>(base_), size_);
}

bool WordNet::Attach(const std::uint8_t* base, std::size_t size) {
  base_ = base;
  size_ = size;
  if (size < sizeof kMagic + 4 * kHeaderWords || std::memcmp(base, kMagic, sizeof kMagic) != 0) return false;
  std::uint32_t h[kHeaderWords];
  std::memcpy(h, base + sizeof kMagic, sizeof h);
  ImageReader r(base + sizeof kMagic + sizeof h, size - sizeof kMagic - sizeof h);
  const std::uint32_t n_words = h[0];
  n_synsets_ = h[3];
  words_.n = n_words;
  words_.off = r.U32s(std::size_t{n_words} + 1);
  words_.chars = reinterpret_cast<const char*>(r.Blob(h[1]));
  word_synsets_.off = r.U32s(std::size_t{n_words} + 1);
  word_synsets_.data = r.U32s(h[2]);
  synset_pos_ = r.Blob(n_synsets_);
  synset_lex_ = r.Blob(n_synsets_);
  Lists* syn[3] = {&synset_words_, &synset_hyponyms_, &synset_derivations_};
  for (int k = 0; k < 3; ++k) {
    syn[k]->off = r.U32s(std::size_t{n_synsets_} + 1);
    syn[k]->data = r.U32s(h[4 + k]);
  }
  n_parted_ = h[17];
  parted_ = r.U32s(n_parted_);
  synset_parts_.off = r.U32s(std::size_t{n_parted_} + 1);
  synset_parts_.data = r.U32s(h[18]);
  for (int x = 0; x < 3; ++x) {
    exception_keys_[x].n = h[7 + 3 * x];
    exception_keys_[x].off = r.U32s(std::size_t{exception_keys_[x].n} + 1);
    exception_keys_[x].chars = reinterpret_cast<const char*>(r.Blob(h[8 + 3 * x]));
    exception_bases_[x].off = r.U32s(std::size_t{exception_keys_[x].n} + 1);
    exception_bases_[x].data = r.U32s(h[9 + 3 * x]);
  }
  term_keep_ = r.Blob(n_words);
  term_tails_.n = n_words;
  term_tails_.off = r.U32s(std::size_t{n_words} + 1);
  term_tails_.chars = reinterpret_cast<const char*>(r.Blob(h[16]));
  if (!r.done() || n_synsets_ == 0) return false;
  // A damaged file must not send a lookup outside the image.
  if (!ValidStrings(words_.off, n_words, h[1]) ||
      !ValidLists(word_synsets_.off, n_words, word_synsets_.data, h[2], n_synsets_) ||
      !ValidLists(synset_words_.off, n_synsets_, synset_words_.data, h[4], n_words) ||
      !ValidLists(synset_hyponyms_.off, n_synsets_, synset_hyponyms_.data, h[5], n_synsets_) ||
      !ValidLists(synset_derivations_.off, n_synsets_, synset_derivations_.data, h[6], n_words) ||
      !ValidLists(synset_parts_.off, n_parted_, synset_parts_.data, h[18], n_synsets_)) {
    return false;
  }
  if (!ValidStrings(term_tails_.off, n_words, h[16])) return false;
  for (std::uint32_t k = 0; k < n_parted_; ++k) {
    if (parted_[k] >= n_synsets_ || (k > 0 && parted_[k] <= parted_[k - 1])) return false;
  }
  for (std::uint32_t s = 0; s < n_synsets_; ++s) {
    if (synset_lex_[s] >= kLexFiles) return false;
  }
  for (std::uint32_t i = 0; i < n_words; ++i) {
    if (term_keep_[i] != kNoTerm && term_keep_[i] > words_.at(i).size()) return false;
  }
  for (int x = 0; x < 3; ++x) {
    if (!ValidStrings(exception_keys_[x].off, exception_keys_[x].n, h[8 + 3 * x]) ||
        !ValidLists(exception_bases_[x].off, exception_keys_[x].n, exception_bases_[x].data, h[9 + 3 * x], n_words)) {
      return false;
    }
  }
  return true;
}

std::unique_ptr<WordNet> WordNet::Load(const std::string& dir) { return Load(dir, {}, nullptr); }

std::unique_ptr<WordNet> WordNet::Load(const std::string& dir, const std::vector<names::NameSense>& name_senses,
                                       std::string* error) {
  Parsed p;
  const char* names[3] = {"noun", "verb", "adj"};
  for (std::uint8_t pos = 0; pos < 3; ++pos) {
    if (!p.LoadData(dir + "/data." + names[pos], pos)) return nullptr;
    if (!p.LoadIndex(dir + "/index." + names[pos], pos)) return nullptr;
    p.LoadExceptions(dir + "/" + names[pos] + ".exc", pos);  // optional
  }
  if (p.synsets.empty()) return nullptr;
  p.Resolve();
  if (!p.AddNames(name_senses, error)) return nullptr;
  std::unique_ptr<WordNet> wn(new WordNet());
  wn->owned_ = MakeImage(p);
  if (!wn->Attach(wn->owned_.data(), wn->owned_.size())) return nullptr;
  return wn;
}

std::unique_ptr<WordNet> WordNet::Open(const std::string& path) {
  std::size_t size = 0;
  const unsigned char* m = process::MapReadOnly(path, 1, &size);
  if (!m) return nullptr;
  std::unique_ptr<WordNet> wn(new WordNet());
  wn->mapped_ = true;
  if (!wn->Attach(m, size)) return nullptr;  // unmapped by the destructor
  ::madvise(const_cast<unsigned char*>(m), size, MADV_WILLNEED);  // read ahead now, off the request path
  return wn;
}

bool WordNet::WriteImage(const std::string& path) const {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool wrote = std::fwrite(base_, 1, size_, f) == size_;
  return std::fclose(f) == 0 && wrote;
}

const WordNet* WordNet::Default() {
  static const std::unique_ptr<WordNet> instance = []() -> std::unique_ptr<WordNet> {
    if (WordNetOff()) return nullptr;
    const std::string image = DefaultImagePath();
    if (!image.empty()) {
      if (auto wn = Open(image)) {
        DefaultSourceText() = image;
        return wn;
      }
    }
    const char* env = std::getenv("WNSEARCHDIR");
    const std::string dir = env && *env ? env : "/usr/share/wordnet";
    std::unique_ptr<WordNet> wn;
    // Parsed on a thread of its own: with glibc its many allocations and
    // frees then happen in another malloc arena instead of fragmenting the
    // caller's (measured: +0.3 ms per later retrieval when loaded inline).
    try {
      std::thread loader([&] { wn = Load(dir); });
      loader.join();
    } catch (...) {  // no thread available: load here
      wn = Load(dir);
    }
    if (wn) DefaultSourceText() = "parsed from " + dir;
    return wn;
  }();
  return instance.get();
}

std::string WordNet::DefaultSource() {
  (void)Default();
  return DefaultSourceText();
}

void WordNet::PreloadDefault() {
  if (!DefaultImagePath().empty()) (void)Default();
}

int WordNet::FindWord(std::string_view w) const {
  const auto id = static_cast<int>(words_.Find(w));
  if (id >= 0 || std::all_of(w.begin(), w.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) return id;
  // "café" is WordNet's "cafe" (text::FoldLatin).
  const std::string folded = text::FoldLatin(w);
  return folded.empty() ? id : static_cast<int>(words_.Find(folded));
}

bool WordNet::HasPos(int word, std::uint8_t pos) const {
  if (word < 0) return false;
  for (std::uint32_t s : word_synsets_.at(static_cast<std::uint32_t>(word))) {
    if (synset_pos_[s] == pos) return true;
  }
  return false;
}

std::vector<std::string> WordNet::IrregularBaseTerms(std::string_view word) const {
  std::vector<std::string> out;
  for (std::uint8_t pos = 0; pos < 2; ++pos) {  // nouns and verbs
    const long ex = exception_keys_[pos].Find(word);
    if (ex < 0) continue;
    for (std::uint32_t b : exception_bases_[pos].at(static_cast<std::uint32_t>(ex))) {
      const std::uint8_t keep = term_keep_[b];
      if (keep == kNoTerm) continue;
      std::string term(words_.at(b).substr(0, keep));
      term += term_tails_.at(b);
      if (std::find(out.begin(), out.end(), term) == out.end()) out.push_back(std::move(term));
    }
  }
  return out;
}

bool WordNet::ForEachCandidate(const std::string& w, std::uint8_t pos,
                               const std::function<bool(const std::string&)>& fn) const {
  const long ex = exception_keys_[pos].Find(w);
  if (ex >= 0) {
    for (std::uint32_t b : exception_bases_[pos].at(static_cast<std::uint32_t>(ex))) {
      if (!fn(std::string(words_.at(b)))) return false;
    }
  }
  if (!fn(w)) return false;
  for (const Rule& r : kRules[pos]) {
    const std::string_view suf(r.suffix);
    if (w.size() > suf.size() + 1 && w.compare(w.size() - suf.size(), suf.size(), suf) == 0) {
      if (!fn(w.substr(0, w.size() - suf.size()) + r.ending)) return false;
    }
  }
  return true;
}

WordNet::SynsetSet WordNet::NounsUnder(const std::vector<std::string>& words, int max_senses, int lexfile,
                                       std::size_t limit) const {
  const std::size_t words_of_bits = (n_synsets_ + 63) / 64;
  SynsetSet set;
  set.bits.assign(words_of_bits, 0);
  // Each sense with what is below it, alone: a sense wider than `limit` is
  // left out (the others stay).
  auto under = [&](std::uint32_t root) {
    SynsetSet sense;
    sense.bits.assign(words_of_bits, 0);
    sense.Add(root);
    std::vector<std::uint32_t> level{root}, all{root};
    while (!level.empty() && sense.count <= limit) {
      std::vector<std::uint32_t> next;
      for (std::uint32_t x : level) {
        for (std::uint32_t h : synset_hyponyms_.at(x)) {
          if (sense.Add(h)) next.push_back(h);
        }
      }
      all.insert(all.end(), next.begin(), next.end());
      level = std::move(next);
    }
    if (sense.count > limit) return;
    for (std::uint32_t x : all) set.Add(x);
  };
  for (const auto& word : words) {
    ForEachCandidate(Normalise(word), 0, [&](const std::string& base) {
      const int id = FindWord(base);
      if (id < 0) return true;
      int rank = 0;
      for (std::uint32_t s : word_synsets_.at(static_cast<std::uint32_t>(id))) {
        if (synset_pos_[s] != 0) continue;
        if (++rank > max_senses) break;
        if ((lexfile < 0 || synset_lex_[s] == lexfile) && !set.Has(s)) under(s);
      }
      return true;
    });
  }
  return set;
}

WordNet::SynsetSet WordNet::NounsInFiles(std::uint32_t files) const {
  SynsetSet set;
  set.bits.assign((n_synsets_ + 63) / 64, 0);
  for (std::uint32_t s = 0; s < n_synsets_; ++s) {
    const std::uint8_t lex = synset_lex_[s];
    if (synset_pos_[s] == 0 && lex < 32 && ((files >> lex) & 1) != 0) set.Add(s);
  }
  return set;
}

std::vector<std::string> WordNet::TermsIn(const SynsetSet& set, std::size_t max) const {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  // The word's most frequent noun sense (the first of its synsets that is a
  // noun): is it in the set?
  auto first_in = [&](std::uint32_t w) {
    for (std::uint32_t x : word_synsets_.at(w)) {
      if (synset_pos_[x] == 0) return set.Has(x);
    }
    return false;
  };
  for (std::size_t i = 0; i < set.bits.size() && out.size() < max; ++i) {
    for (std::uint64_t b = set.bits[i]; b != 0 && out.size() < max; b &= b - 1) {
      const std::size_t s = i * 64 + static_cast<std::size_t>(__builtin_ctzll(b));
      if (s >= n_synsets_) break;
      for (std::uint32_t w : synset_words_.at(static_cast<std::uint32_t>(s))) {
        const std::uint8_t keep = term_keep_[w];
        if (keep == kNoTerm) continue;
        if (!first_in(w)) continue;
        std::string term(words_.at(w).substr(0, keep));
        term += term_tails_.at(w);
        if (seen.insert(term).second) out.push_back(std::move(term));
        if (out.size() >= max) break;
      }
    }
  }
  return out;
}

long WordNet::FirstNoun(std::string_view word) const { return NounSense(word, 0); }

long WordNet::NounSense(std::string_view word, int rank) const {
  long found = -1;
  ForEachCandidate(Normalise(word), 0, [&](const std::string& base) {
    const int id = FindWord(base);
    if (id < 0) return true;
    int seen = 0;
    for (std::uint32_t s : word_synsets_.at(static_cast<std::uint32_t>(id))) {
      if (synset_pos_[s] != 0) continue;
      if (seen++ == rank) {
        found = static_cast<long>(s);
        break;
      }
    }
    return seen == 0;  // the first base form that is a noun decides
  });
  return found;
}

int WordNet::NounClass(std::string_view word) const {
  const long s = FirstNoun(word);
  return s < 0 ? -1 : synset_lex_[s];
}

bool WordNet::IsVerb(std::string_view word) const {
  bool found = false;
  ForEachCandidate(Normalise(word), 1, [&](const std::string& base) {
    found = HasPos(FindWord(base), 1);
    return !found;
  });
  return found;
}

unsigned WordNet::LemmaPos(std::string_view word) const {
  const int id = FindWord(Normalise(word));
  return (HasPos(id, 0) ? kLemmaNoun : 0u) | (HasPos(id, 1) ? kLemmaVerb : 0u) |
         (HasPos(id, 2) ? kLemmaAdjective : 0u);
}

int WordNet::VerbSenses(std::string_view word) const {
  const int id = FindWord(Normalise(word));
  if (!HasPos(id, 1)) return 0;
  int n = 0;
  for (std::uint32_t s : word_synsets_.at(static_cast<std::uint32_t>(id)))
    n += synset_pos_[s] == 1 ? 1 : 0;
  return n;
}

bool WordNet::StartsCollocation(std::string_view word) const {
  const std::string prefix = Normalise(word) + "_";
  std::uint32_t lo = 0, hi = words_.n;  // the first word not before the prefix
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (words_.at(mid).compare(prefix) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < words_.n && words_.at(lo).starts_with(prefix);
}

std::vector<std::string> WordNet::BaseForms(std::string_view word) const {
  const std::string w = Normalise(word);
  std::vector<std::string> out;
  for (std::uint8_t pos = 0; pos < 3; ++pos) {
    ForEachCandidate(w, pos, [&](const std::string& s) {
      if (HasPos(FindWord(s), pos) && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
      return true;
    });
  }
  return out;
}

std::vector<std::uint32_t> WordNet::FirstSenses(std::string_view word) const {
  std::vector<std::uint32_t> out;
  for (const auto& b : BaseForms(word)) {
    const int id = FindWord(b);
    if (id < 0) continue;
    bool seen[3] = {false, false, false};
    for (std::uint32_t s : word_synsets_.at(static_cast<std::uint32_t>(id))) {
      const std::uint8_t pos = synset_pos_[s];
      if (pos > 2 || seen[pos]) continue;
      seen[pos] = true;
      out.push_back(s);
    }
  }
  return out;
}

bool WordNet::ShareFirstSense(std::string_view a, std::string_view b) const {
  const auto x = FirstSenses(a);
  if (x.empty()) return false;
  for (std::uint32_t s : FirstSenses(b)) {
    if (std::find(x.begin(), x.end(), s) != x.end()) return true;
  }
  return false;
}

std::vector<WordNet::Related> WordNet::ExpandIds(std::string_view word, const ExpandOptions& opt) const {
  std::vector<Related> out;
  std::unordered_set<std::uint32_t> seen_words;
  std::vector<std::uint32_t> roots;
  // Every base form of the word (BaseForms') is no expansion of it; the
  // senses of a part of speech come from the base forms of that part of
  // speech only: "studying" is the verb "study", and brings no noun "study"
  // (a room, a branch of knowledge) with it; "went" brings no game of go.
  const std::string w = Normalise(word);
  for (std::uint8_t pos = 0; pos < 3; ++pos) {
    const bool wanted =
        (pos == 0 && opt.nouns) || (pos == 1 && opt.verbs) || (pos == 2 && opt.adjectives);
    ForEachCandidate(w, pos, [&](const std::string& b) {
      const int id = FindWord(b);
      if (!HasPos(id, pos)) return true;
      seen_words.insert(static_cast<std::uint32_t>(id));
      if (!wanted) return true;
      int rank = 0;
      for (std::uint32_t s : word_synsets_.at(static_cast<std::uint32_t>(id))) {
        if (synset_pos_[s] != pos) continue;
        if (++rank > opt.max_senses) break;
        if (std::find(roots.begin(), roots.end(), s) == roots.end()) roots.push_back(s);
      }
      return true;
    });
  }
  // Whether synset s is the most frequent sense of its part of speech of
  // word w and of each of w's base forms ("kings": "king").
  auto first_of = [&](std::uint32_t w, std::uint32_t s) {
    if (!opt.first_senses) return false;
    const std::uint8_t pos = synset_pos_[s];
    auto first_is_s = [&](std::uint32_t id) {
      for (std::uint32_t x : word_synsets_.at(id)) {
        if (synset_pos_[x] == pos) return x == s;
      }
      return false;
    };
    if (!first_is_s(w)) return false;
    bool all = true;
    ForEachCandidate(std::string(words_.at(w)), pos, [&](const std::string& b) {
      const int id = FindWord(b);
      if (HasPos(id, pos) && static_cast<std::uint32_t>(id) != w)
        all = first_is_s(static_cast<std::uint32_t>(id));
      return all;
    });
    return all;
  };
  auto emit = [&](std::uint32_t w, std::uint32_t s, Relation rel, int depth) {
    if (out.size() >= opt.max_words || !seen_words.insert(w).second) return;
    out.push_back({w, rel, depth, first_of(w, s)});
  };
  for (std::uint32_t s : roots) {
    for (std::uint32_t w : synset_words_.at(s)) emit(w, s, Relation::kSynonym, 0);
  }
  // (A derivation is a word of another synset, which the image does not
  // keep: its sense is not known.)
  for (std::uint32_t s : roots) {
    for (std::uint32_t w : synset_derivations_.at(s)) {
      if (out.size() >= opt.max_words || !seen_words.insert(w).second) continue;
      out.push_back({w, Relation::kDerivation, 0, false});
    }
  }
  std::unordered_set<std::uint32_t> seen_synsets(roots.begin(), roots.end());
  std::vector<std::uint32_t> level = roots;
  for (int depth = 1; depth <= opt.hyponym_depth && !level.empty() && out.size() < opt.max_words; ++depth) {
    std::vector<std::uint32_t> next;
    for (std::uint32_t s : level) {
      for (std::uint32_t h : synset_hyponyms_.at(s)) {
        if (seen_synsets.insert(h).second) next.push_back(h);
      }
    }
    for (std::uint32_t s : next) {
      for (std::uint32_t w : synset_words_.at(s)) emit(w, s, Relation::kHyponym, depth);
    }
    level = std::move(next);
  }
  // The places within a place: the part meronyms of its location senses
  // ("Portugal": "Lisbon", "Porto"; "France": "Paris", "Normandy"), nearest
  // first, at most opt.max_parts, apart from max_words.
  if (opt.part_depth > 0 && opt.max_parts > 0) {
    std::size_t parts = 0;
    std::vector<std::uint32_t> places;
    for (std::uint32_t s : roots) {
      if (synset_pos_[s] == 0 && synset_lex_[s] == kLocationFile) places.push_back(s);
    }
    std::unordered_set<std::uint32_t> seen_places(places.begin(), places.end());
    for (int depth = 1; depth <= opt.part_depth && !places.empty() && parts < opt.max_parts;
         ++depth) {
      std::vector<std::uint32_t> next;
      for (std::uint32_t s : places) {
        for (std::uint32_t part : PartsOf(s)) {
          if (seen_places.insert(part).second) next.push_back(part);
        }
      }
      for (std::uint32_t s : next) {
        for (std::uint32_t w : synset_words_.at(s)) {
          if (parts >= opt.max_parts || !seen_words.insert(w).second) continue;
          out.push_back({w, Relation::kPart, depth, first_of(w, s)});
          ++parts;
        }
      }
      places = std::move(next);
    }
  }
  return out;
}

WordNet::Ids WordNet::PartsOf(std::uint32_t synset) const {
  const std::uint32_t* end = parted_ + n_parted_;
  const std::uint32_t* at = std::lower_bound(parted_, end, synset);
  if (at == end || *at != synset) return {nullptr, nullptr};
  return synset_parts_.at(static_cast<std::uint32_t>(at - parted_));
}

std::vector<RelatedWord> WordNet::Expand(std::string_view word, const ExpandOptions& opt) const {
  std::vector<RelatedWord> out;
  for (const Related& r : ExpandIds(word, opt)) {
    std::string text(words_.at(r.word));
    std::replace(text.begin(), text.end(), '_', ' ');
    out.push_back({std::move(text), r.relation, r.depth, r.first_sense});
  }
  return out;
}

std::vector<RelatedWord> WordNet::ExpandTerms(std::string_view word, const ExpandOptions& opt) const {
  std::vector<RelatedWord> out;
  for (const Related& r : ExpandIds(word, opt)) {
    const std::uint8_t keep = term_keep_[r.word];
    if (keep == kNoTerm) continue;
    std::string term(words_.at(r.word).substr(0, keep));
    term += term_tails_.at(r.word);
    out.push_back({std::move(term), r.relation, r.depth, r.first_sense});
  }
  return out;
}

}  // namespace engram::wordnet
