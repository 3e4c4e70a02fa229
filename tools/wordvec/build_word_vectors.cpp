// Build-time generator of the built-in word vectors (core/word_vectors.hpp):
// reads the WordNet database that Debian's `wordnet-base` installs
// (/usr/share/wordnet) and writes one compact binary file of int8 vectors,
// one per index term (the engine's own stem of a WordNet lemma).
//
//   build_word_vectors WORDNET_DIR OUT_FILE [--names NAMES_FILE]... [--probe word,word,...]
//
// With --names, the name senses of that file (core/name_senses.hpp:
// tools/wordvec/names.tsv, "tesla" a car, "neovim" a text editor) join
// WordNet's as senses of their own before anything below is made, and its
// everyday kinds (tools/wordvec/kinds.tsv: "dog" a "pet") become further
// hypernyms of the words' most frequent noun senses, and its preferences
// (tools/wordvec/senses.tsv: "printer" the machine first) reorder a word's
// senses before anything else; repeatable.
//
// How a vector is made (all deterministic, no randomness but fixed hashes):
//  1. Each synset is described by sparse features: itself; its hypernyms up to
//     four levels (decayed); its direct hyponyms; derivationally related,
//     similar, attribute, pertainym, domain and part/member synsets; its
//     lexicographer file (noun.food, noun.person, verb.consumption ...); the
//     synsets of the content words of its gloss (first senses); and those of
//     the collocations its gloss uses ("motor vehicle", "domesticated
//     animal"), at half the weight of a gloss word.
//  2. A lemma sums the features of its senses (the most frequent first,
//     weighted 1/rank); lemmas with the same stem are summed, each weighted
//     by its share of the stem's SemCor tag counts ("university" above
//     "universal", both "univers").
//  3. Features are weighted by inverse document frequency over the stems
//     (so "entity" or "abstraction", shared by everything, count little).
//  4. Random indexing: every feature has a fixed sparse signature of +-1 in
//     kDim dimensions; a stem's dense vector is the weighted sum (a random
//     projection of the sparse vector), normalised.
//  5. Second order: each vector is mixed with the mean vector of the gloss
//     words of its first senses, normalised.
//  6. Third order: each vector is mixed with the weighted mean of its WordNet
//     neighbourhood's vectors (the expansions below), normalised.
//  7. The mean vector and the strongest principal component (what every word
//     shares) are removed; the vectors are normalised and quantised to int8.
// A per-stem weight (1/sqrt(senses), generic words count less) goes with it,
// and its WordNet neighbourhood for document expansion (Builder::Expansions:
// synonyms, hypernyms to four levels, related, holonym, meronym and gloss
// words, the words of its synsets' multi-word synonyms ("tooth doctor"), the
// 64 strongest; each lemma of the stem weighed by its share of the stem's tag
// counts in cntlist.rev, so the rare adjective "preferred" brings
// little of its own to "prefer"), stored after the vectors as per-term offsets and entries
// (neighbour index << 8 | weight * 255); the header's fourth word counts them.
// Last come the irregular forms of WordNet's exception lists (*.exc:
// "children" -> child, "went" -> go, "mice" -> mouse) and the "-men" plurals
// whose own stem is no index term, as sorted strings with the index of their
// base form's term (Aliases); the header's fifth and sixth words count them
// and their bytes.
// The WV_* environment variables override the weights (for measurements only;
// the build uses the defaults). WV_EXPLAIN=a,b prints the features two stems
// share; --probe prints the nearest stems of some words.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/name_senses.hpp"
#include "core/text.hpp"
#include "core/wordnet.hpp"

namespace {

#ifndef WV_DIM
#define WV_DIM 256
#endif
constexpr int kDim = WV_DIM;
constexpr int kNonZeros = 12;

struct Synset {
  int pos = 0;      // 0 n, 1 v, 2 a, 3 r
  int lexfile = 0;
  std::vector<std::pair<char, std::uint64_t>> ptrs_raw;  // resolved below
  std::vector<std::pair<std::string, std::uint64_t>> ptr_sym;
  std::vector<std::uint32_t> hypernyms, hyponyms, related, parts, holonyms, meronyms;
  std::vector<std::string> gloss_stems;
  std::vector<std::string> gloss_words;     // lower-case words of the definition
  std::vector<std::uint32_t> gloss_collocs;  // first senses of its collocations ("motor vehicle")
  std::vector<std::string> lemma_parts;     // stems of its multi-word lemmas' words ("tooth doctor": tooth, doctor)
};

int PosIndex(char c) {
  switch (c) {
    case 'n': return 0;
    case 'v': return 1;
    case 'a': case 's': return 2;
    case 'r': return 3;
  }
  return -1;
}

std::uint64_t Key(int pos, std::uint64_t off) { return (static_cast<std::uint64_t>(pos) << 40) | off; }

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// The lower-case words of a gloss (runs of letters and '-'), as the gloss
// collocations are looked up.
std::vector<std::string> GlossWords(std::string_view gloss) {
  std::vector<std::string> out;
  std::string w;
  for (char ch : gloss) {
    const char c = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    if ((c >= 'a' && c <= 'z') || c == '-') w += c;
    else if (!w.empty()) { out.push_back(std::move(w)); w.clear(); }
  }
  if (!w.empty()) out.push_back(std::move(w));
  return out;
}

// The one index term of a single-word lemma ("" for collocations, stopwords).
std::string StemOf(const std::string& lemma) {
  if (lemma.find('_') != std::string::npos) return "";
  auto t = engram::text::Terms(lemma);
  return t.size() == 1 ? t[0] : "";
}

double Param(const char* name, double def) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : def;
}
const double kHyperDecay = Param("WV_HYPER", 0.7);
const double kIdfPower = Param("WV_IDF", 1.0);
const double kSecond = Param("WV_SECOND", 0.6);
const double kGloss = Param("WV_GLOSS", 0.8);
const double kHypo = Param("WV_HYPO", 0.5);
const double kLex = Param("WV_LEX", 0.4);
// The collocations a definition uses ("a domesticated animal kept for ...":
// domesticated_animal), against its single words (measured on the paraphrase
// sets, docs/PERFORMANCE.md).
const double kColloc = Param("WV_COLLOC", 0.5);
// Document expansion (measured on bench/data/paraphrase.jsonl, docs/PERFORMANCE.md).
constexpr int kExpandSenses = 3;
constexpr double kExpandHyper = 0.8;
constexpr double kExpandRelated = 0.8;
constexpr double kExpandGloss = 0.5;
// The words of a synset's multi-word lemmas ("dentist": "tooth doctor",
// "dental practitioner").
const double kExpandLemmaParts = Param("WV_LEMMA_PARTS", 0.3);
constexpr std::size_t kMaxExpansions = 64;  // per term, the strongest
// What a word is part, member or substance of ("wrist" -> arm, "kitchen" ->
// home, "Saturday" -> weekend), and its own parts, members and substances
// ("weekend" -> Saturday, "family" -> child, parent, sibling).
constexpr double kExpandHolo = 1.0;
constexpr double kExpandMero = 0.5;
// A stem's lemmas weigh in its neighbourhood by their SemCor tag counts
// (LemmaShare; measured on the paraphrase sets, docs/PERFORMANCE.md).
const double kLemmaShare = Param("WV_LEMMA_SHARE", 0.25);
// A stem's lemmas weigh in its vector by their tag counts too, LemmaShare's
// ratio to this power ("university" and "universal" are one stem; measured
// on the paraphrase sets, docs/PERFORMANCE.md).
const double kVecLemmaShare = Param("WV_VEC_LEMMA_SHARE", 0.5);

struct Builder {
  std::vector<Synset> syn;
  std::unordered_map<std::uint64_t, std::uint32_t> by_key;
  // lemma -> senses by frequency, per pos
  std::map<std::string, std::vector<std::uint32_t>> lemma_senses;
  std::unordered_map<std::string, int> lemma_sense_count;
  std::unordered_map<std::string, std::vector<std::string>> stem_lemmas;
  // Tag counts of SemCor (cntlist.rev) per lemma, all senses.
  std::unordered_map<std::string, int> lemma_count;
  // "lemma#synset key" of the abbreviations a synset of time lists beside
  // its name (wordnet::IsTimeAbbreviation: "wed" of Wednesday), left out.
  std::unordered_set<std::string> left_out;

  void LoadCounts(const std::string& path) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      auto f = Split(line);
      if (f.size() < 3) continue;
      const auto pct = f[0].find('%');
      if (pct == std::string::npos) continue;
      lemma_count[Lower(f[0].substr(0, pct))] += std::stoi(f[2]);
    }
  }

  // A lemma's share among the lemmas of its stem (in the neighbourhoods, the
  // adjective "preferred", whose synonyms include "pet", beside the verb
  // "prefer"): its tag count against the most tagged one's, both plus one,
  // to the power `power` (kLemmaShare, kVecLemmaShare).
  double LemmaShare(const std::string& stem, const std::string& lemma, double power) const {
    if (power == 0.0) return 1.0;
    auto count = [&](const std::string& l) {
      auto it = lemma_count.find(l);
      return it == lemma_count.end() ? 0 : it->second;
    };
    int most = 0;
    for (const auto& l : stem_lemmas.at(stem)) most = std::max(most, count(l));
    return std::pow((count(lemma) + 1.0) / (most + 1.0), power);
  }

  bool LoadData(const std::string& path, int pos) {
    std::ifstream in(path);
    if (!in) return false;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == ' ') continue;
      const auto bar = line.find(" | ");
      const std::string head = bar == std::string::npos ? line : line.substr(0, bar);
      std::string gloss = bar == std::string::npos ? "" : line.substr(bar + 3);
      const auto quote = gloss.find('"');  // examples follow the definition
      if (quote != std::string::npos && !std::getenv("WV_EXAMPLES")) gloss.resize(quote);
      auto f = Split(head);
      if (f.size() < 4) continue;
      Synset s;
      s.pos = pos;
      s.lexfile = std::stoi(f[1]);
      const std::uint64_t off = std::stoull(f[0]);
      const std::size_t wcnt = std::stoul(f[3], nullptr, 16);
      std::vector<std::string> lemmas;
      for (std::size_t k = 0; k < wcnt && 4 + 2 * k < f.size(); ++k)
        lemmas.push_back(Lower(f[4 + 2 * k]));
      for (const std::string& lemma : lemmas) {
        if (engram::wordnet::IsTimeAbbreviation(s.lexfile, lemma, lemmas))
          left_out.insert(lemma + '#' + std::to_string(Key(pos, off)));
      }
      for (std::size_t k = 0; k < wcnt && 4 + 2 * k < f.size(); ++k) {
        std::string lemma = Lower(f[4 + 2 * k]);
        if (lemma.find('_') == std::string::npos) continue;
        for (char& c : lemma) if (c == '_') c = ' ';
        for (const auto& t : engram::text::Terms(lemma))
          if (std::find(s.lemma_parts.begin(), s.lemma_parts.end(), t) == s.lemma_parts.end()) s.lemma_parts.push_back(t);
      }
      std::size_t i = 4 + 2 * wcnt;
      if (i >= f.size()) continue;
      const std::size_t pcnt = std::stoul(f[i]);
      ++i;
      for (std::size_t p = 0; p < pcnt && i + 3 < f.size(); ++p, i += 4) {
        const int tpos = PosIndex(f[i + 2][0]);
        if (tpos < 0) continue;
        s.ptr_sym.emplace_back(f[i], Key(tpos, std::stoull(f[i + 1])));
      }
      s.gloss_words = GlossWords(gloss);
      std::unordered_set<std::string> seen;
      for (const auto& t : engram::text::Terms(gloss)) {
        if (seen.insert(t).second) s.gloss_stems.push_back(t);
      }
      by_key[Key(pos, off)] = static_cast<std::uint32_t>(syn.size());
      syn.push_back(std::move(s));
    }
    return true;
  }

  bool LoadIndex(const std::string& path, int pos) {
    std::ifstream in(path);
    if (!in) return false;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == ' ') continue;
      auto f = Split(line);
      if (f.size() < 4) continue;
      const std::string lemma = Lower(f[0]);
      const std::size_t senses = std::stoul(f[2]), pcnt = std::stoul(f[3]);
      const std::size_t first = 4 + pcnt + 2;
      auto& out = lemma_senses[lemma];
      lemma_sense_count[lemma] += static_cast<int>(senses);
      for (std::size_t k = first; k < f.size() && k < first + senses; ++k) {
        const std::uint64_t key = Key(pos, std::stoull(f[k]));
        auto it = by_key.find(key);
        if (it != by_key.end() && !left_out.count(lemma + '#' + std::to_string(key)))
          out.push_back(it->second);
      }
    }
    return true;
  }

  void Resolve() {
    for (auto& s : syn) {
      for (const auto& [sym, key] : s.ptr_sym) {
        auto it = by_key.find(key);
        if (it == by_key.end()) continue;
        const std::uint32_t t = it->second;
        if (sym == "@" || sym == "@i") s.hypernyms.push_back(t);
        else if (sym == "~" || sym == "~i") s.hyponyms.push_back(t);
        else if (sym == "+" || sym == "&" || sym == "=" || sym == "\\" || sym == "^" || sym == ";c" ||
                 sym == "-c" || sym == "*" || sym == ">" || sym == "<" || sym == "$")
          s.related.push_back(t);
        else if (sym == "#m" || sym == "#p" || sym == "#s" || sym == "%m" || sym == "%p" || sym == "%s")
          s.parts.push_back(t);
        if (sym == "#m" || sym == "#p" || sym == "#s") s.holonyms.push_back(t);
        else if (sym == "%m" || sym == "%p" || sym == "%s") s.meronyms.push_back(t);
      }
      std::sort(s.related.begin(), s.related.end());
      s.related.erase(std::unique(s.related.begin(), s.related.end()), s.related.end());
      s.ptr_sym.clear();
      s.ptr_sym.shrink_to_fit();
    }
    for (const auto& [lemma, senses] : lemma_senses) {
      if (senses.empty()) continue;
      const std::string st = StemOf(lemma);
      if (!st.empty()) stem_lemmas[st].push_back(lemma);
    }
    if (kColloc > 0) {
      for (auto& s : syn) {
        const auto& w = s.gloss_words;
        for (std::size_t i = 0; i + 1 < w.size(); ++i) {
          for (std::size_t n = 3; n >= 2; --n) {
            if (i + n > w.size()) continue;
            std::string c = w[i];
            for (std::size_t k = 1; k < n; ++k) c += "_" + w[i + k];
            auto it = lemma_senses.find(c);
            if (it == lemma_senses.end() || it->second.empty()) continue;
            s.gloss_collocs.push_back(it->second.front());
            i += n - 1;
            break;
          }
        }
        s.gloss_words.clear();
        s.gloss_words.shrink_to_fit();
      }
    }
  }

  // The most frequent noun sense of a lemma (-1 when it is no noun).
  long FirstNounOf(const std::string& lemma) const {
    auto it = lemma_senses.find(Lower(lemma));
    if (it == lemma_senses.end()) return -1;
    for (std::uint32_t x : it->second) {
      if (syn[x].pos == 0) return x;
    }
    return -1;
  }

  // Whether synset `x` is `kind` or below it (its hypernyms, before Resolve:
  // the raw pointers and the kinds already added).
  bool Below(std::uint32_t x, std::uint32_t kind) const {
    std::vector<std::uint32_t> stack{x};
    std::unordered_set<std::uint32_t> seen{x};
    while (!stack.empty()) {
      const std::uint32_t y = stack.back();
      stack.pop_back();
      if (y == kind) return true;
      auto visit = [&](std::uint32_t h) {
        if (seen.insert(h).second) stack.push_back(h);
      };
      for (const auto& [sym, key] : syn[y].ptr_sym) {
        if (sym != "@" && sym != "@i") continue;
        if (auto it = by_key.find(key); it != by_key.end()) visit(it->second);
      }
      for (std::uint32_t h : syn[y].hypernyms) visit(h);
    }
    return false;
  }

  // A preference (core/name_senses.hpp): the word's first noun sense below
  // its kind moves before its other noun senses. Runs before Resolve and
  // before the other entries. False, with the entry in `error`, when the
  // word or the kind is no noun, or no later sense of the word is below it.
  bool Prefer(const engram::names::NameSense& n, std::string* error) {
    const std::string where = engram::names::Where(n);
    const long kind = FirstNounOf(n.kinds.front());
    auto word = lemma_senses.find(Lower(n.name));
    if (kind < 0 || word == lemma_senses.end()) {
      *error = where + "\"" + (kind < 0 ? n.kinds.front() : n.name) + "\" is no WordNet noun";
      return false;
    }
    auto& senses = word->second;
    auto first = std::find_if(senses.begin(), senses.end(), [&](std::uint32_t x) { return syn[x].pos == 0; });
    auto meant = std::find_if(first, senses.end(), [&](std::uint32_t x) {
      return syn[x].pos == 0 && Below(x, static_cast<std::uint32_t>(kind));
    });
    if (first == senses.end() || meant == senses.end() || meant == first) {
      *error = where + "\"" + n.name + "\" has no later noun sense below \"" + n.kinds.front() + "\"" +
               (meant == first && first != senses.end() ? " (its first is)" : "");
      return false;
    }
    std::rotate(first, meant, meant + 1);
    return true;
  }

  // Each name sense (core/name_senses.hpp) a noun synset of its own: its
  // hypernyms the most frequent noun sense of each of its kinds (the main
  // kind's lexicographer file its own), its gloss as WordNet's are read; the
  // name's first noun sense or its second (after WordNet's first). Runs
  // before Resolve. An entry that is "also" adds no sense: the word's most
  // frequent noun sense gains its kinds as further hypernyms. False, with the
  // entry in `error`, when a kind (or such a word) is no noun WordNet knows.
  bool AddNames(const std::vector<engram::names::NameSense>& names, std::string* error) {
    for (const auto& n : names) {
      if (n.prefer && !Prefer(n, error)) return false;
    }
    for (const auto& n : names) {
      if (n.prefer) continue;
      std::vector<std::uint32_t> under;
      for (const auto& k : n.kinds) {
        const long noun = FirstNounOf(k);
        if (noun < 0) {
          *error = engram::names::Where(n) + "kind \"" + k + "\" is no WordNet noun";
          return false;
        }
        under.push_back(static_cast<std::uint32_t>(noun));
      }
      if (under.empty()) {
        *error = engram::names::Where(n) + "no kind";
        return false;
      }
      // A synonym of a word WordNet knows ("supplement") changes only the
      // WordNet image's classes: a sense more here would move every vector a
      // little (a feature's idf and the common component are taken over all
      // words), as measured. One WordNet lacks ("app") is a sense below its kind.
      if (n.same && lemma_senses.count(n.name) > 0) continue;
      if (n.also) {
        // A word WordNet knows: its most frequent noun sense goes under the kinds.
        const long sense = FirstNounOf(n.name);
        if (sense < 0) {
          *error = engram::names::Where(n) + "\"" + n.name + "\" is no WordNet noun";
          return false;
        }
        const auto x = static_cast<std::uint32_t>(sense);
        for (std::uint32_t u : under) {
          if (u == x) continue;
          syn[x].hypernyms.push_back(u);
          syn[u].hyponyms.push_back(x);
        }
        continue;
      }
      Synset s;
      s.pos = 0;
      s.lexfile = syn[under.front()].lexfile;
      s.hypernyms = under;
      s.gloss_words = GlossWords(n.gloss);
      std::unordered_set<std::string> seen;
      for (const auto& t : engram::text::Terms(n.gloss)) {
        if (seen.insert(t).second) s.gloss_stems.push_back(t);
      }
      const auto index = static_cast<std::uint32_t>(syn.size());
      syn.push_back(std::move(s));
      for (std::uint32_t u : under) syn[u].hyponyms.push_back(index);
      auto& senses = lemma_senses[n.name];
      auto at = senses.begin();
      if (!n.first) {
        at = std::find_if(senses.begin(), senses.end(), [&](std::uint32_t x) { return syn[x].pos == 0; });
        at = at == senses.end() ? senses.begin() : at + 1;
      }
      senses.insert(at, index);
      ++lemma_sense_count[n.name];
    }
    return true;
  }

  // First sense of each part of speech of the lemmas with this stem.
  std::vector<std::uint32_t> FirstSenses(const std::string& stem) const {
    std::vector<std::uint32_t> out;
    auto it = stem_lemmas.find(stem);
    if (it == stem_lemmas.end()) return out;
    for (const auto& lemma : it->second) {
      bool have[4] = {false, false, false, false};
      for (std::uint32_t s : lemma_senses.at(lemma)) {
        if (have[syn[s].pos]) continue;
        have[syn[s].pos] = true;
        out.push_back(s);
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  using Sparse = std::unordered_map<std::uint32_t, float>;

  static void Add(Sparse& v, std::uint32_t f, float w) {
    float& x = v[f];
    x = std::max(x, w);
  }

  std::uint32_t LexFeature(int lexfile) const { return static_cast<std::uint32_t>(syn.size()) + lexfile; }

  void SynsetFeatures(std::uint32_t s, float w, Sparse& v) const {
    const Synset& x = syn[s];
    Add(v, s, w);
    Add(v, LexFeature(x.lexfile), static_cast<float>(kLex) * w);
    // Hypernyms, four levels, decayed.
    std::vector<std::uint32_t> level = x.hypernyms;
    float d = static_cast<float>(kHyperDecay);
    std::unordered_set<std::uint32_t> seen{s};
    for (int depth = 1; depth <= 4 && !level.empty(); ++depth, d *= static_cast<float>(kHyperDecay)) {
      std::vector<std::uint32_t> next;
      for (std::uint32_t h : level) {
        if (!seen.insert(h).second) continue;
        Add(v, h, d * w);
        for (std::uint32_t hh : syn[h].hypernyms) next.push_back(hh);
      }
      level = std::move(next);
    }
    const float hw = static_cast<float>(kHypo) / std::sqrt(std::max<float>(1.0f, static_cast<float>(x.hyponyms.size()) / 4.0f));
    for (std::uint32_t h : x.hyponyms) Add(v, h, hw * w);
    for (std::uint32_t r : x.related) {
      Add(v, r, 0.6f * w);
      for (std::uint32_t h : syn[r].hypernyms) Add(v, h, 0.35f * w);
    }
    for (std::uint32_t p : x.parts) Add(v, p, 0.3f * w);
    if (kColloc > 0 && !x.gloss_collocs.empty()) {
      const float cw = static_cast<float>(kColloc * kGloss) / std::sqrt(static_cast<float>(std::max<std::size_t>(1, x.gloss_stems.size())));
      for (std::uint32_t gs : x.gloss_collocs) {
        Add(v, gs, cw * w);
        for (std::uint32_t h : syn[gs].hypernyms) Add(v, h, 0.5f * cw * w);
      }
    }
    if (!x.gloss_stems.empty()) {
      const float gw = static_cast<float>(kGloss) / std::sqrt(static_cast<float>(x.gloss_stems.size()));
      for (const auto& g : x.gloss_stems) {
        for (std::uint32_t gs : FirstSenses(g)) {
          Add(v, gs, gw * w);
          for (std::uint32_t h : syn[gs].hypernyms) Add(v, h, 0.5f * gw * w);
        }
      }
    }
  }

  // The WordNet neighbourhood of a stem, for document expansion: for its three
  // most frequent senses of each part of speech (weighted 1/rank), the
  // synset's other words (1), its hypernyms' words up to four levels (0.8 per
  // level), the words of related synsets (0.8), of its holonyms (1) and
  // meronyms (0.5), the words of its multi-word lemmas (0.3: "dentist" ->
  // tooth, dental) and, for the first sense, the gloss words (0.5). Each
  // neighbour keeps its largest weight.
  std::unordered_map<std::string, float> Expansions(const std::string& stem,
                                                    const std::vector<std::vector<std::string>>& synset_stems) const {
    std::unordered_map<std::string, float> out;
    auto put = [&](const std::string& t, double w) {
      if (t == stem || w <= 0) return;  // (a relation weighted 0 is left out)
      float& x = out[t];
      x = std::max(x, static_cast<float>(w));
    };
    auto it = stem_lemmas.find(stem);
    if (it == stem_lemmas.end()) return out;
    for (const auto& lemma : it->second) {
      int rank[4] = {0, 0, 0, 0};
      const double share = LemmaShare(stem, lemma, kLemmaShare);
      for (std::uint32_t s : lemma_senses.at(lemma)) {
        const int r = ++rank[syn[s].pos];
        if (r > kExpandSenses) continue;
        const double base = share / r;
        for (const auto& t : synset_stems[s]) put(t, base);
        std::vector<std::uint32_t> level = syn[s].hypernyms;
        std::unordered_set<std::uint32_t> seen;
        double d = kExpandHyper;
        for (int depth = 1; depth <= 4 && !level.empty(); ++depth, d *= kExpandHyper) {
          std::vector<std::uint32_t> next;
          for (std::uint32_t h : level) {
            if (!seen.insert(h).second) continue;
            for (const auto& t : synset_stems[h]) put(t, base * d);
            next.insert(next.end(), syn[h].hypernyms.begin(), syn[h].hypernyms.end());
          }
          level = std::move(next);
        }
        for (std::uint32_t rel : syn[s].related)
          for (const auto& t : synset_stems[rel]) put(t, base * kExpandRelated);
        for (std::uint32_t h : syn[s].holonyms)
          for (const auto& t : synset_stems[h]) put(t, base * kExpandHolo);
        for (std::uint32_t m : syn[s].meronyms)
          for (const auto& t : synset_stems[m]) put(t, base * kExpandMero);
        if (r == 1)
          for (const auto& t : syn[s].gloss_stems) put(t, base * kExpandGloss);
        for (const auto& t : syn[s].lemma_parts) put(t, base * kExpandLemmaParts);
      }
    }
    return out;
  }

  Sparse StemFeatures(const std::string& stem, std::vector<std::string>* gloss) const {
    Sparse v;
    for (const auto& lemma : stem_lemmas.at(stem)) {
      int rank[4] = {0, 0, 0, 0};
      const double share = LemmaShare(stem, lemma, kVecLemmaShare);
      for (std::uint32_t s : lemma_senses.at(lemma)) {
        const int r = ++rank[syn[s].pos];
        if (r > 6) continue;
        SynsetFeatures(s, static_cast<float>(share / r), v);
        if (gloss && r == 1) {
          for (const auto& g : syn[s].gloss_stems) gloss->push_back(g);
        }
      }
    }
    return v;
  }
};

void Signature(std::uint32_t feature, int* pos, float* sign) {
  std::uint64_t h = Mix(0x51ed2701ULL ^ (static_cast<std::uint64_t>(feature) * 0x100000001b3ULL));
  for (int k = 0; k < kNonZeros; ++k) {
    h = Mix(h + static_cast<std::uint64_t>(k));
    pos[k] = static_cast<int>(h % kDim);
    sign[k] = (h >> 32) & 1 ? 1.0f : -1.0f;
  }
}

void Normalise(std::vector<float>& v) {
  double ss = 0;
  for (float x : v) ss += static_cast<double>(x) * x;
  if (ss <= 0) return;
  const float inv = static_cast<float>(1.0 / std::sqrt(ss));
  for (float& x : v) x *= inv;
}

float Cos(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (int i = 0; i < kDim; ++i) s += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(s);
}


// Eigen-decomposition of a symmetric matrix (cyclic Jacobi): eigenvalues in
// `values`, eigenvectors in the columns of `vectors` (both n x n, row-major).
void Jacobi(std::vector<double> a, int n, std::vector<double>& values, std::vector<double>& vectors) {
  vectors.assign(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) vectors[static_cast<std::size_t>(i) * n + i] = 1.0;
  auto at = [&](std::vector<double>& m, int r, int c) -> double& { return m[static_cast<std::size_t>(r) * n + c]; };
  for (int sweep = 0; sweep < 30; ++sweep) {
    double off = 0;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) off += at(a, p, q) * at(a, p, q);
    if (off < 1e-18) break;
    for (int p = 0; p < n; ++p) {
      for (int q = p + 1; q < n; ++q) {
        const double apq = at(a, p, q);
        if (std::fabs(apq) < 1e-15) continue;
        const double theta = (at(a, q, q) - at(a, p, p)) / (2 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < n; ++k) {
          const double akp = at(a, k, p), akq = at(a, k, q);
          at(a, k, p) = c * akp - s * akq;
          at(a, k, q) = s * akp + c * akq;
        }
        for (int k = 0; k < n; ++k) {
          const double apk = at(a, p, k), aqk = at(a, q, k);
          at(a, p, k) = c * apk - s * aqk;
          at(a, q, k) = s * apk + c * aqk;
        }
        for (int k = 0; k < n; ++k) {
          const double vkp = at(vectors, k, p), vkq = at(vectors, k, q);
          at(vectors, k, p) = c * vkp - s * vkq;
          at(vectors, k, q) = s * vkp + c * vkq;
        }
      }
    }
  }
  values.resize(n);
  for (int i = 0; i < n; ++i) values[i] = at(a, i, i);
}

// Principal components of the vectors: the mean is removed, the `drop`
// strongest components (directions every word shares) are removed, and the
// others are rescaled by (eigenvalue)^(power/2) (power 1: unchanged; 0: whitened).
void Reweight(std::vector<std::vector<float>>& v, int drop, double power) {
  const std::size_t n = v.size();
  std::vector<double> mean(kDim, 0.0);
  for (const auto& x : v)
    for (int k = 0; k < kDim; ++k) mean[k] += x[k];
  for (auto& m : mean) m /= static_cast<double>(n);
  std::vector<double> cov(static_cast<std::size_t>(kDim) * kDim, 0.0);
  std::vector<double> row(kDim);
  for (auto& x : v) {
    for (int k = 0; k < kDim; ++k) {
      x[k] -= static_cast<float>(mean[k]);
      row[k] = x[k];
    }
    for (int a = 0; a < kDim; ++a) {
      const double ra = row[a];
      double* c = &cov[static_cast<std::size_t>(a) * kDim];
      for (int b = a; b < kDim; ++b) c[b] += ra * row[b];
    }
  }
  for (int a = 0; a < kDim; ++a)
    for (int b = 0; b < a; ++b) cov[static_cast<std::size_t>(a) * kDim + b] = cov[static_cast<std::size_t>(b) * kDim + a];
  std::vector<double> values, vecs;
  Jacobi(cov, kDim, values, vecs);
  std::vector<int> order(kDim);
  for (int i = 0; i < kDim; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return values[a] > values[b]; });
  const double top = std::max(values[order[0]], 1e-12);
  std::vector<float> out(kDim);
  for (auto& x : v) {
    for (int j = 0; j < kDim; ++j) {
      const int c = order[j];
      double proj = 0;
      for (int k = 0; k < kDim; ++k) proj += x[k] * vecs[static_cast<std::size_t>(k) * kDim + c];
      const double scale = j < drop ? 0.0 : std::pow(std::max(values[c], 1e-12) / top, (power - 1.0) / 2.0);
      out[j] = static_cast<float>(proj * scale);
    }
    x = out;
    Normalise(x);
  }
}

// Random-indexed sparse features of each stem, mixed with its gloss words'.
std::vector<std::vector<float>> FeatureVectors(const Builder& b, const std::vector<std::string>& stems,
                                               const std::unordered_map<std::string, std::size_t>& index) {
  const std::size_t n = stems.size();
  // Sparse features per stem, then document frequencies.
  std::vector<Builder::Sparse> sparse(n);
  std::vector<std::vector<std::string>> gloss(n);
  std::unordered_map<std::uint32_t, std::uint32_t> df;
  for (std::size_t i = 0; i < n; ++i) {
    sparse[i] = b.StemFeatures(stems[i], &gloss[i]);
    for (const auto& [f, w] : sparse[i]) ++df[f];
  }
  if (const char* ex = std::getenv("WV_EXPLAIN")) {
    std::string pair(ex);
    const auto comma = pair.find(',');
    auto ia = index.find(pair.substr(0, comma)), ib = index.find(pair.substr(comma + 1));
    if (ia != index.end() && ib != index.end()) {
      const double logn = std::log(static_cast<double>(n));
      auto weighted = [&](const Builder::Sparse& v) {
        std::unordered_map<std::uint32_t, double> out;
        double ss = 0;
        for (const auto& [f, w] : v) {
          double idf = logn - std::log(static_cast<double>(df[f]));
          if (idf <= 0) continue;
          out[f] = w * std::pow(idf, kIdfPower);
          ss += out[f] * out[f];
        }
        for (auto& [f, w] : out) w /= std::sqrt(ss);
        return out;
      };
      auto a = weighted(sparse[ia->second]), c = weighted(sparse[ib->second]);
      std::vector<std::pair<double, std::uint32_t>> shared;
      double total = 0;
      for (const auto& [f, w] : a) {
        auto it = c.find(f);
        if (it != c.end()) { shared.emplace_back(w * it->second, f); total += w * it->second; }
      }
      std::sort(shared.rbegin(), shared.rend());
      std::cout << "features " << a.size() << " / " << c.size() << ", cosine " << total << "\n";
      for (std::size_t k = 0; k < shared.size() && k < 20; ++k) {
        const std::uint32_t f = shared[k].second;
        std::string name = f >= b.syn.size() ? "LEX" + std::to_string(f - b.syn.size()) : "?";
        if (f < b.syn.size()) {
          for (const auto& [lemma, senses] : b.lemma_senses) {
            if (std::find(senses.begin(), senses.end(), f) != senses.end()) { name = lemma; break; }
          }
        }
        std::cout << "  " << name << " " << shared[k].first << " df " << df[f] << "\n";
      }
    }
  }
  // Random indexing.
  std::vector<std::vector<float>> dense(n, std::vector<float>(kDim, 0.0f));
  int pos[kNonZeros];
  float sign[kNonZeros];
  const double logn = std::log(static_cast<double>(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& [f, w] : sparse[i]) {
      double idf = logn - std::log(static_cast<double>(df[f]));
      if (idf <= 0) continue;
      idf = std::pow(idf, kIdfPower);
      const float x = static_cast<float>(w * idf);
      Signature(f, pos, sign);
      for (int k = 0; k < kNonZeros; ++k) dense[i][pos[k]] += sign[k] * x;
    }
    Normalise(dense[i]);
    Builder::Sparse().swap(sparse[i]);
  }
  // Second order: mix in the mean of the gloss words' vectors.
  std::vector<std::vector<float>> final(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<float> g(kDim, 0.0f);
    int used = 0;
    for (const auto& w : gloss[i]) {
      auto it = index.find(w);
      if (it == index.end() || it->second == i) continue;
      for (int k = 0; k < kDim; ++k) g[k] += dense[it->second][k];
      ++used;
    }
    Normalise(g);
    final[i] = dense[i];
    if (used > 0) {
      for (int k = 0; k < kDim; ++k) final[i][k] += static_cast<float>(kSecond) * g[k];
    }
    Normalise(final[i]);
  }

  return final;
}

// Third order: each vector mixed with the weighted mean of the vectors of its
// WordNet neighbourhood (the expansions below: synonyms, hypernyms, related
// words, parts and wholes, gloss words), once, before the common components
// are removed: a word's vector leans towards what its neighbours are near
// ("tooth" and "dentist" -0.04 -> 0.03, "supervisor" and "boss" 0.18 ->
// 0.27; measured on the paraphrase sets, docs/PERFORMANCE.md).
const double kNeighbourhood = Param("WV_NEIGHBOURHOOD", 0.5);

void MixNeighbourhoods(const std::vector<std::vector<std::pair<float, std::uint32_t>>>& expansions,
                       std::vector<std::vector<float>>& vectors) {
  if (kNeighbourhood <= 0) return;
  std::vector<std::vector<float>> mixed(vectors.size());
  std::vector<float> g(kDim);
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    std::fill(g.begin(), g.end(), 0.0f);
    bool any = false;
    for (const auto& [w, j] : expansions[i]) {
      if (j == i) continue;
      for (int k = 0; k < kDim; ++k) g[k] += w * vectors[j][k];
      any = true;
    }
    mixed[i] = vectors[i];
    if (any) {
      Normalise(g);
      for (int k = 0; k < kDim; ++k) mixed[i][k] += static_cast<float>(kNeighbourhood) * g[k];
    }
    Normalise(mixed[i]);
  }
  vectors.swap(mixed);
}

// The irregular forms of the exception lists (DIR/{noun,verb,adj,adv}.exc,
// lines "form base...") and the "-men" plurals whose stem is no index term,
// each with the index of its first base form's term (the noun list first),
// sorted by form.
std::vector<std::pair<std::string, std::uint32_t>> Aliases(
    const std::string& dir, const std::unordered_map<std::string, std::size_t>& index) {
  std::map<std::string, std::uint32_t> out;
  for (const char* name : {"noun", "verb", "adj", "adv"}) {
    std::ifstream in(dir + "/" + name + ".exc");
    for (std::string line; std::getline(in, line);) {
      const auto f = Split(line);
      if (f.size() < 2) continue;
      const std::string form = StemOf(Lower(f[0]));
      if (form.empty() || index.count(form) || out.count(form)) continue;
      for (std::size_t k = 1; k < f.size(); ++k) {
        auto it = index.find(StemOf(Lower(f[k])));
        if (it == index.end()) continue;
        out.emplace(form, static_cast<std::uint32_t>(it->second));
        break;
      }
    }
  }
  // Morphy's one irregular detachment rule the stemmer lacks: "-men" is the
  // plural of "-man" ("women", "firemen").
  for (const auto& [stem, i] : index) {
    if (stem.size() < 4 || stem.compare(stem.size() - 3, 3, "man") != 0) continue;
    const std::string form = StemOf(stem.substr(0, stem.size() - 3) + "men");
    if (!form.empty() && !index.count(form)) out.emplace(form, static_cast<std::uint32_t>(i));
  }
  return {out.begin(), out.end()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: build_word_vectors WORDNET_DIR OUT_FILE [--names NAMES_FILE]... [--probe w1,w2,...]\n";
    return 2;
  }
  const std::string dir = argv[1], out_path = argv[2];
  std::vector<std::string> probes;
  std::vector<engram::names::NameSense> name_senses;
  for (int a = 3; a + 1 < argc; a += 2) {
    const std::string opt = argv[a];
    if (opt == "--probe") {
      std::stringstream ss(argv[a + 1]);
      for (std::string w; std::getline(ss, w, ',');) probes.push_back(w);
    } else if (opt == "--names") {
      auto read = engram::names::ReadNameSenses(argv[a + 1]);
      if (!read.ok()) {
        std::cerr << "build_word_vectors: " << read.status().message() << "\n";
        return 1;
      }
      for (auto& n : read.value()) name_senses.push_back(std::move(n));
    } else {
      std::cerr << "build_word_vectors: unknown option " << opt << "\n";
      return 2;
    }
  }
  Builder b;
  const char* names[4] = {"noun", "verb", "adj", "adv"};
  for (int pos = 0; pos < 4; ++pos) {
    if (!b.LoadData(dir + "/data." + names[pos], pos)) {
      std::cerr << "build_word_vectors: cannot read " << dir << "/data." << names[pos] << "\n";
      return 1;
    }
  }
  for (int pos = 0; pos < 4; ++pos) b.LoadIndex(dir + "/index." + names[pos], pos);
  b.LoadCounts(dir + "/cntlist.rev");
  if (std::string error; !b.AddNames(name_senses, &error)) {
    std::cerr << "build_word_vectors: " << error << "\n";
    return 1;
  }
  b.Resolve();

  std::vector<std::string> stems;
  for (const auto& [stem, lemmas] : b.stem_lemmas) stems.push_back(stem);
  std::sort(stems.begin(), stems.end());
  const std::size_t n = stems.size();

  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index[stems[i]] = i;
  std::vector<std::vector<float>> final = FeatureVectors(b, stems, index);
  // Each stem's WordNet neighbourhood, the strongest first: the third order's
  // and the file's expansions.
  std::vector<std::vector<std::string>> synset_stems(b.syn.size());
  for (const auto& [lemma, senses] : b.lemma_senses) {
    const std::string st = StemOf(lemma);
    if (st.empty()) continue;
    for (std::uint32_t s : senses) synset_stems[s].push_back(st);
  }
  std::vector<std::vector<std::pair<float, std::uint32_t>>> expansions(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& e = expansions[i];
    for (const auto& [t, w] : b.Expansions(stems[i], synset_stems)) {
      auto it = index.find(t);
      if (it != index.end()) e.emplace_back(w, static_cast<std::uint32_t>(it->second));
    }
    std::sort(e.begin(), e.end(), [](const auto& x, const auto& y) {
      return x.first > y.first || (x.first == y.first && x.second < y.second);
    });
    if (e.size() > kMaxExpansions) e.resize(kMaxExpansions);
  }
  MixNeighbourhoods(expansions, final);
  // Measured on bench/data/paraphrase.jsonl (docs/PERFORMANCE.md): removing
  // the mean and the strongest component (what every word shares) helps;
  // rescaling the others does not.
  Reweight(final, static_cast<int>(Param("WV_DROP", 1)), Param("WV_POWER", 1.0));

  if (!probes.empty()) {
    for (const auto& p : probes) {
      auto t = engram::text::Terms(p);
      if (t.empty() || !index.count(t[0])) {
        std::cout << p << ": unknown\n";
        continue;
      }
      const auto& q = final[index[t[0]]];
      std::vector<std::pair<float, std::size_t>> best;
      for (std::size_t i = 0; i < n; ++i) best.emplace_back(Cos(q, final[i]), i);
      std::partial_sort(best.begin(), best.begin() + 15, best.end(), std::greater<>());
      std::cout << p << ":";
      for (int k = 0; k < 15; ++k) std::cout << " " << stems[best[k].second] << "(" << best[k].first << ")";
      std::cout << "\n";
    }
  }

  // Expansions: per term, (neighbour index << 8 | weight * 255), strongest first.
  std::vector<std::uint32_t> exp_offsets{0}, exp_entries;
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& [w, j] : expansions[i]) {
      const auto q = static_cast<std::uint32_t>(std::clamp(std::lround(w * 255.0f), 1L, 255L));
      exp_entries.push_back((j << 8) | q);
    }
    exp_offsets.push_back(static_cast<std::uint32_t>(exp_entries.size()));
  }

  // The file: header, offsets, strings, weights, scales, int8 vectors, then
  // the expansions (offsets per term, entries).
  std::string strings;
  std::vector<std::uint32_t> offsets;
  std::vector<float> weights, scales;
  std::vector<std::int8_t> codes;
  codes.reserve(n * kDim);
  for (std::size_t i = 0; i < n; ++i) {
    offsets.push_back(static_cast<std::uint32_t>(strings.size()));
    strings += stems[i];
    int senses = 0;
    for (const auto& lemma : b.stem_lemmas[stems[i]]) senses = std::max(senses, b.lemma_sense_count[lemma]);
    weights.push_back(1.0f / std::sqrt(static_cast<float>(std::max(1, senses))));
    float mx = 0;
    for (float x : final[i]) mx = std::max(mx, std::fabs(x));
    const float scale = mx > 0 ? mx / 127.0f : 1.0f;
    // Quantise, then record the factor that makes the int8 vector unit length.
    double ss = 0;
    for (float x : final[i]) {
      const int q = static_cast<int>(std::lround(x / scale));
      codes.push_back(static_cast<std::int8_t>(std::clamp(q, -127, 127)));
      ss += static_cast<double>(q) * q;
    }
    scales.push_back(ss > 0 ? static_cast<float>(1.0 / std::sqrt(ss)) : 0.0f);
  }
  offsets.push_back(static_cast<std::uint32_t>(strings.size()));
  while (strings.size() % 4) strings.push_back('\0');

  // Irregular forms: offsets (count + 1), base term indexes, then the strings.
  const auto aliases = Aliases(dir, index);
  std::vector<std::uint32_t> alias_offsets{0}, alias_targets;
  std::string alias_strings;
  for (const auto& [form, target] : aliases) {
    alias_strings += form;
    alias_offsets.push_back(static_cast<std::uint32_t>(alias_strings.size()));
    alias_targets.push_back(target);
  }
  while (alias_strings.size() % 4) alias_strings.push_back('\0');

  const std::string tmp = out_path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    std::cerr << "build_word_vectors: cannot write " << tmp << "\n";
    return 1;
  }
  const char magic[8] = {'E', 'N', 'G', 'W', 'V', 'E', 'C', '2'};
  const std::uint32_t head[6] = {static_cast<std::uint32_t>(kDim), static_cast<std::uint32_t>(n),
                                 static_cast<std::uint32_t>(strings.size()),
                                 static_cast<std::uint32_t>(exp_entries.size()),
                                 static_cast<std::uint32_t>(aliases.size()),
                                 static_cast<std::uint32_t>(alias_strings.size())};
  bool ok = std::fwrite(magic, 1, 8, f) == 8 && std::fwrite(head, 4, 6, f) == 6 &&
            std::fwrite(offsets.data(), 4, offsets.size(), f) == offsets.size() &&
            std::fwrite(strings.data(), 1, strings.size(), f) == strings.size() &&
            std::fwrite(weights.data(), 4, n, f) == n && std::fwrite(scales.data(), 4, n, f) == n &&
            std::fwrite(codes.data(), 1, codes.size(), f) == codes.size() &&
            std::fwrite(exp_offsets.data(), 4, exp_offsets.size(), f) == exp_offsets.size() &&
            std::fwrite(exp_entries.data(), 4, exp_entries.size(), f) == exp_entries.size() &&
            (aliases.empty() ||
             std::fwrite(alias_offsets.data(), 4, alias_offsets.size(), f) == alias_offsets.size()) &&
            std::fwrite(alias_targets.data(), 4, alias_targets.size(), f) == alias_targets.size() &&
            std::fwrite(alias_strings.data(), 1, alias_strings.size(), f) == alias_strings.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    std::cerr << "build_word_vectors: cannot write " << out_path << "\n";
    return 1;
  }
  std::cerr << "build_word_vectors: " << n << " terms, " << kDim << " dimensions, " << exp_entries.size()
            << " expansions, " << aliases.size() << " irregular forms -> " << out_path << "\n";
  return 0;
}
