#include "wordnet_graph.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "core/text.hpp"

namespace engram::wordvec_tool {

namespace {

int PosIndex(char c) {
  switch (c) {
    case 'n': return 0;
    case 'v': return 1;
    case 'a': case 's': return 2;
    case 'r': return 3;
    default: return -1;
  }
}

std::uint64_t Key(int pos, std::uint64_t off) { return (static_cast<std::uint64_t>(pos) << 40) | off; }

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

}  // namespace

std::string WordNetGraph::StemOf(const std::string& lemma) {
  if (lemma.find('_') != std::string::npos) return "";
  auto t = engram::text::Terms(lemma);
  return t.size() == 1 ? t[0] : "";
}

bool WordNetGraph::Load(const std::string& dir, bool examples, std::string* error) {
  const char* names[4] = {"noun", "verb", "adj", "adv"};
  for (int pos = 0; pos < 4; ++pos) {
    if (!LoadData(dir + "/data." + names[pos], pos, examples)) {
      if (error) *error = "cannot read " + dir + "/data." + names[pos];
      return false;
    }
  }
  for (int pos = 0; pos < 4; ++pos) LoadIndex(dir + "/index." + names[pos], pos);
  Resolve();
  return true;
}

bool WordNetGraph::LoadData(const std::string& path, int pos, bool examples) {
  std::ifstream in(path);
  if (!in) return false;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == ' ') continue;  // the licence header
    const auto bar = line.find(" | ");
    const std::string head = bar == std::string::npos ? line : line.substr(0, bar);
    std::string gloss = bar == std::string::npos ? "" : line.substr(bar + 3);
    const auto quote = gloss.find('"');  // usage examples follow the definition
    if (quote != std::string::npos && !examples) gloss.resize(quote);
    auto f = Split(head);
    if (f.size() < 4) continue;
    Synset s;
    s.pos = pos;
    s.lexfile = std::stoi(f[1]);
    const std::uint64_t off = std::stoull(f[0]);
    const std::size_t wcnt = std::stoul(f[3], nullptr, 16);
    std::size_t i = 4 + 2 * wcnt;
    if (i >= f.size()) continue;
    const std::size_t pcnt = std::stoul(f[i]);
    ++i;
    std::vector<std::pair<std::string, std::uint64_t>> ptrs;
    for (std::size_t p = 0; p < pcnt && i + 3 < f.size(); ++p, i += 4) {
      const int tpos = PosIndex(f[i + 2][0]);
      if (tpos >= 0) ptrs.emplace_back(f[i], Key(tpos, std::stoull(f[i + 1])));
    }
    std::unordered_set<std::string> seen;
    for (const auto& t : engram::text::Terms(gloss)) {
      if (seen.insert(t).second) s.gloss_terms.push_back(t);
    }
    by_key_[Key(pos, off)] = static_cast<std::uint32_t>(syn_.size());
    syn_.push_back(std::move(s));
    raw_ptrs_.push_back(std::move(ptrs));
  }
  return true;
}

void WordNetGraph::LoadIndex(const std::string& path, int pos) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == ' ') continue;
    auto f = Split(line);
    if (f.size() < 4) continue;
    const std::string lemma = Lower(f[0]);
    const std::size_t senses = std::stoul(f[2]), pcnt = std::stoul(f[3]);
    const std::size_t first = 4 + pcnt + 2;
    auto& out = lemma_senses_[lemma];
    sense_count_[lemma] += static_cast<int>(senses);
    for (std::size_t k = first; k < f.size() && k < first + senses; ++k) {
      auto it = by_key_.find(Key(pos, std::stoull(f[k])));
      if (it != by_key_.end()) out.push_back(it->second);
    }
  }
}

void WordNetGraph::Resolve() {
  for (std::size_t k = 0; k < syn_.size(); ++k) {
    Synset& s = syn_[k];
    for (const auto& [sym, key] : raw_ptrs_[k]) {
      auto it = by_key_.find(key);
      if (it == by_key_.end()) continue;
      const std::uint32_t t = it->second;
      if (sym == "@" || sym == "@i") {
        s.hypernyms.push_back(t);
      } else if (sym == "~" || sym == "~i") {
        s.hyponyms.push_back(t);
      } else if (sym == "+" || sym == "&" || sym == "=" || sym == "\\" || sym == "^" || sym == ";c" ||
                 sym == "-c" || sym == ";r" || sym == "-r" || sym == "*" || sym == ">" || sym == "<" ||
                 sym == "$") {
        s.related.push_back(t);
      } else if (sym == "#m" || sym == "#p" || sym == "#s" || sym == "%m" || sym == "%p" || sym == "%s") {
        s.parts.push_back(t);
      }
    }
    std::sort(s.related.begin(), s.related.end());
    s.related.erase(std::unique(s.related.begin(), s.related.end()), s.related.end());
  }
  raw_ptrs_.clear();
  raw_ptrs_.shrink_to_fit();
  for (const auto& [lemma, senses] : lemma_senses_) {
    if (senses.empty()) continue;
    const std::string st = StemOf(lemma);
    if (!st.empty()) stem_lemmas_[st].push_back(lemma);
  }
}

int WordNetGraph::SenseCount(const std::string& stem) const {
  int n = 0;
  auto it = stem_lemmas_.find(stem);
  if (it == stem_lemmas_.end()) return 0;
  for (const auto& lemma : it->second) {
    auto c = sense_count_.find(lemma);
    if (c != sense_count_.end()) n = std::max(n, c->second);
  }
  return n;
}

std::vector<std::uint32_t> WordNetGraph::FirstSenses(const std::string& stem) const {
  std::vector<std::uint32_t> out;
  auto it = stem_lemmas_.find(stem);
  if (it == stem_lemmas_.end()) return out;
  for (const auto& lemma : it->second) {
    bool have[4] = {false, false, false, false};
    for (std::uint32_t s : lemma_senses_.at(lemma)) {
      if (have[syn_[s].pos]) continue;
      have[syn_[s].pos] = true;
      out.push_back(s);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace engram::wordvec_tool
