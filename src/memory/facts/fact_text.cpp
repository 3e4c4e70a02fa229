#include "memory/facts/fact_text.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/text.hpp"
#include "core/wordnet.hpp"

namespace engram::memory::facts {

namespace {

bool AnyOf(std::string_view w, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), w) != list.end();
}

// Decodes UTF-8 into code points (invalid bytes skipped).
std::u32string Decode(std::string_view s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    std::size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
      ++i;
      continue;
    }
    char32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += len;
  }
  return out;
}

bool IsCjk(char32_t c) {
  return (c >= 0x3040 && c <= 0x30FF) || (c >= 0x3400 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF) ||
         (c >= 0xF900 && c <= 0xFAFF);
}

void Push(std::vector<std::string>& out, std::unordered_set<std::string>& seen, std::string t) {
  if (t.empty()) return;
  if (seen.insert(t).second) out.push_back(std::move(t));
}

// Common words that start sentences in capitals without naming anything.
const std::unordered_set<std::string>& SentenceStarters() {
  static const std::unordered_set<std::string> k = {
      "i", "i'm", "i've", "i'll", "i'd", "my", "our", "we", "you", "your", "he", "she", "it", "they",
      "the", "a", "an", "this", "that", "these", "those", "there", "here", "yes", "no", "ok", "okay",
      "hi", "hello", "hey", "thanks", "thank", "please", "well", "so", "but", "and", "or", "also",
      "then", "today", "yesterday", "tomorrow", "now", "when", "what", "where", "who", "why", "how",
      "user", "assistant", "sure", "great", "oh", "wow", "maybe", "perhaps", "recently", "last",
      "next", "every", "after", "before", "if", "in", "on", "at", "for", "with", "from", "to", "of"};
  return k;
}

// WordNet's lexicographer files of groups, places and people (noun.group,
// noun.location, noun.person).
constexpr int kGroupFile = 14;
constexpr int kLocationFile = 15;
constexpr int kPersonFile = 18;

// Calls fn(at, end) for each run of ASCII letters of `s`, in order.
template <typename Fn>
void ForEachLetterRun(std::string_view s, Fn fn) {
  for (std::size_t at = 0; at < s.size();) {
    std::size_t end = at;
    while (end < s.size() && std::isalpha(static_cast<unsigned char>(s[end]))) ++end;
    if (end == at) {
      ++at;
      continue;
    }
    fn(at, end);
    at = end;
  }
}

std::string StripWord(std::string w) {
  while (!w.empty() && std::ispunct(static_cast<unsigned char>(w.back())) && w.back() != '+' &&
         w.back() != '#')
    w.pop_back();
  while (!w.empty() && std::ispunct(static_cast<unsigned char>(w.front()))) w.erase(0, 1);
  return w;
}

}  // namespace

std::vector<std::string> LexicalTerms(std::string_view text) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  text::ForEachToken(text, [&](std::string_view token) {
    if (text::IsStopword(token)) return;
    const std::string t = text::Stem(token);
    std::string f = text::FtsTerm(t);
    if (f.empty()) return;
    Push(out, seen, f);
    if (const std::string_view full = text::FullForm(token); !full.empty()) Push(out, seen, text::Stem(full));
    if (f.find('_') != std::string::npos) {
      std::size_t start = 0;
      for (std::size_t i = 0; i <= f.size(); ++i) {
        if (i == f.size() || f[i] == '_') {
          if (i > start) Push(out, seen, f.substr(start, i - start));
          start = i + 1;
        }
      }
    }
    std::u32string cps = Decode(t);
    if (cps.size() >= 2 && std::all_of(cps.begin(), cps.end(), IsCjk)) {
      for (std::size_t i = 0; i + 1 < cps.size(); ++i) {
        std::string bi;
        text::AppendUtf8(bi, cps[i]);
        text::AppendUtf8(bi, cps[i + 1]);
        Push(out, seen, bi);
      }
    }
  });
  return out;
}

std::vector<std::string> ScoringTerms(std::vector<std::string> terms, std::string_view query) {
  std::vector<std::string> shorts;  // the short forms' own terms ("hubbi" of "hubby")
  text::ForEachToken(query, [&](std::string_view token) {
    if (!text::FullForm(token).empty()) shorts.push_back(text::FtsTerm(text::Stem(token)));
  });
  std::erase_if(terms, [&](const std::string& t) { return std::find(shorts.begin(), shorts.end(), t) != shorts.end(); });
  return terms;
}

int Stance(std::string_view token) {
  // clang-format off
  static const std::unordered_map<std::string_view, int> kStance = {
      {"like", 1},       {"likes", 1},      {"liked", 1},      {"liking", 1},    {"love", 1},
      {"loves", 1},      {"loved", 1},      {"loving", 1},     {"enjoy", 1},     {"enjoys", 1},
      {"enjoyed", 1},    {"enjoying", 1},   {"prefer", 1},     {"prefers", 1},   {"preferred", 1},
      {"preferring", 1}, {"adore", 1},      {"adores", 1},     {"adored", 1},    {"fond", 1},
      {"favorite", 1},   {"favourite", 1},  {"fave", 1},       {"dislike", -1},  {"dislikes", -1},
      {"disliked", -1},  {"hate", -1},      {"hates", -1},     {"hated", -1},    {"detest", -1},
      {"detests", -1},   {"loathe", -1},    {"loathes", -1},   {"despise", -1},  {"despises", -1},
      {"avoid", -1},     {"avoids", -1},    {"avoided", -1},
      {"boss", kSuperior},       {"bosses", kSuperior},      {"manager", kSuperior},
      {"managers", kSuperior},   {"supervisor", kSuperior},  {"supervisors", kSuperior}};
  // clang-format on
  const auto it = kStance.find(token);
  return it == kStance.end() ? 0 : it->second;
}

int StanceBit(int stance) {
  return stance == 1 ? 1 : stance == -1 ? 2 : stance == kSuperior ? 4 : 0;
}

bool ReportsTo(std::string_view prev, std::string_view token) {
  return token == "to" && AnyOf(prev, {"report", "reports", "reported", "reporting"});
}

int StanceAfter(std::string_view prev, std::string_view token) {
  const int st = Stance(token);
  // A superior's word after a noun names a thing ("password manager", "task
  // manager"): only after a possessive, an article, a few adjectives of a
  // role, or nothing.
  if (st == kSuperior && !prev.empty() &&
      !AnyOf(prev, {"my", "your", "his", "her", "our", "their", "the", "a", "an", "line", "direct",
                    "new", "old", "current", "former", "whose", "who's"}))
    return 0;
  return st;
}

bool AsksForSuperior(const std::vector<std::string>& tokens) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string_view prev = i > 0 ? std::string_view(tokens[i - 1]) : std::string_view();
    if (StanceAfter(prev, tokens[i]) == kSuperior || ReportsTo(prev, tokens[i])) return true;
  }
  return false;
}

const std::vector<std::string>& SuperiorTerms() {
  static const std::vector<std::string> kTerms = [] {
    std::vector<std::string> out;
    for (const char* w : {"boss", "manager", "supervisor", "report"})
      out.push_back(text::FtsTerm(text::Stem(w)));
    return out;
  }();
  return kTerms;
}

int StancesIn(std::string_view text) {
  int bits = 0;
  std::string prev;  // (a token's view lasts its call)
  text::ForEachToken(text, [&](std::string_view token) {
    bits |= StanceBit(StanceAfter(prev, token));
    // "reporting to Kate", "I report to the CTO": the one reported to is a superior.
    if (ReportsTo(prev, token)) bits |= StanceBit(kSuperior);
    prev.assign(token);
  });
  return bits;
}

std::string LexicalDocument(std::string_view text) {
  std::string out;
  for (const auto& t : LexicalTerms(text)) {
    if (!out.empty()) out.push_back(' ');
    out += t;
  }
  return out;
}

std::string NormalizeEntity(std::string_view name) {
  std::string out;
  bool space = false;
  for (char c : name) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (out.size() > 2 && (out.ends_with("'s") || out.ends_with("\xE2\x80\x99s")))
    out.erase(out.size() - (out.ends_with("'s") ? 2 : 4));
  return out.size() > 120 ? std::string() : out;
}

std::vector<EntityRef> ExtractEntities(std::string_view text) {
  std::vector<EntityRef> out;
  std::set<std::string> seen;
  auto add = [&](std::string name, const char* type) {
    std::string norm = NormalizeEntity(name);
    if (norm.size() < 2 || !seen.insert(norm).second) return;
    out.push_back({std::move(name), type});
  };
  // Quoted spans.
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"') continue;
    std::size_t j = text.find('"', i + 1);
    if (j == std::string_view::npos) break;
    if (j - i - 1 >= 2 && j - i - 1 <= 60) add(std::string(text.substr(i + 1, j - i - 1)), "quoted");
    i = j;
  }
  // Identifiers.
  for (const auto& t : text::Tokenize(text)) {
    bool digit = false, alpha = false, inner = false;
    for (char c : t) {
      digit |= std::isdigit(static_cast<unsigned char>(c)) != 0;
      alpha |= std::isalpha(static_cast<unsigned char>(c)) != 0;
      inner |= c == '-' || c == '.' || c == '_' || c == '+' || c == '#';
    }
    if (alpha && (digit || inner)) add(t, "identifier");
  }
  // Proper names: runs of capitalised words.
  for (const auto& sentence : text::SplitSentences(text)) {
    std::vector<std::string> run;
    bool first = true;
    auto flush = [&] {
      if (!run.empty()) {
        std::string name;
        for (const auto& w : run) name += (name.empty() ? "" : " ") + w;
        add(name, "name");
      }
      run.clear();
    };
    std::size_t i = 0;
    while (i < sentence.size()) {
      std::size_t j = sentence.find(' ', i);
      if (j == std::string::npos) j = sentence.size();
      std::string raw = sentence.substr(i, j - i);
      std::string w = StripWord(raw);
      i = j + 1;
      bool cap = !w.empty() && std::isupper(static_cast<unsigned char>(w[0]));
      std::string lower = NormalizeEntity(w);
      bool starter = first && SentenceStarters().count(lower);
      if (lower == "i" || lower.rfind("i'", 0) == 0) cap = false;
      if (cap && !starter) {
        run.push_back(w);
      } else {
        flush();
      }
      first = false;
      if (!raw.empty() && std::ispunct(static_cast<unsigned char>(raw.back())) && raw.back() != '\'') flush();
    }
    flush();
  }
  return out;
}

std::vector<std::string> QueryEntityNames(std::string_view query) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const auto& e : ExtractEntities(query)) Push(out, seen, NormalizeEntity(e.name));
  // A word the query writes in lower case that WordNet knows as a thing of a
  // kind is no name of it ("piano" in "Does Emma have a piano?", which
  // matched the name a memory's first word made: "Piano lessons for Emma");
  // a name typed in lower case ("what does emma like") still is.
  const wordnet::WordNet* wn = wordnet::WordNet::Default();
  std::unordered_set<std::string> lower_things;
  if (wn != nullptr) {
    ForEachLetterRun(query, [&](std::size_t at, std::size_t end) {
      if (!std::islower(static_cast<unsigned char>(query[at]))) return;
      const std::string word(query.substr(at, end - at));
      const int file = wn->NounClass(word);
      if (file >= 0 && file != kGroupFile && file != kLocationFile && file != kPersonFile) {
        lower_things.insert(word);
      }
    });
  }
  auto tokens = text::Tokenize(query);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!text::IsStopword(tokens[i]) && !lower_things.count(tokens[i]))
      Push(out, seen, NormalizeEntity(tokens[i]));
    if (i + 1 < tokens.size()) Push(out, seen, NormalizeEntity(tokens[i] + " " + tokens[i + 1]));
  }
  return out;
}

namespace {

// Longer texts are not checked for paraphrases (a memory is a statement; a
// long text checked word by word would cost a WordNet look-up per word).
constexpr std::size_t kMaxParaphraseTokens = 200;

// Articles: a paraphrase check leaves them out.
bool IsArticle(std::string_view t) { return t == "a" || t == "an" || t == "the"; }

// The tokens a paraphrase check compares.
std::vector<std::string> ComparedTokens(std::string_view text) {
  std::vector<std::string> out;
  text::ForEachToken(text, [&](std::string_view t) {
    if (!IsArticle(t)) out.emplace_back(t);
  });
  return out;
}

std::size_t CountCompared(std::string_view text) {
  std::size_t n = 0;
  text::ForEachToken(text, [&](std::string_view t) { n += !IsArticle(t); });
  return n;
}

// A negation: a word that denies, or a contraction with "n't" (also without
// its apostrophe, or with the apostrophe split off: "don", "t").
bool IsNegation(std::string_view t, std::string_view before) {
  static const std::unordered_set<std::string_view> kWords = {
      "not", "no", "never", "nor", "neither", "none", "nobody", "nothing", "nowhere", "cannot", "without",
      "dont", "doesnt", "didnt", "cant", "couldnt", "wont", "wouldnt", "shouldnt", "isnt", "arent", "wasnt",
      "werent", "hasnt", "havent", "hadnt", "aint", "mustnt", "neednt", "mightnt", "shant"};
  if (kWords.count(t)) return true;
  if (t.size() > 3 && t.substr(t.size() - 3) == "n't") return true;
  return t == "t" && !before.empty() && before.back() == 'n';
}

}  // namespace

namespace {

// Whether a lower-case word, between the two words before it and the one
// after, frames what a question asks rather than saying what it is about:
// the "living" of "for a living", the "time" of "what time", the "often",
// "long" and "soon" of "how often", "how long" and "how soon", the "kind",
// "type" or "sort" of "what kind of", and the "think", "feel" or "opinion"
// of "what do I think of", "how does she feel about", "my opinion on" (what
// someone thinks of a thing is said in words of liking, or not said at all:
// "I can't stand cilantro" for "What do I think of cilantro?"), and the
// "come" of "where does it come from" (an origin or a cause, said in any
// words: "back pain from an old skiing injury"), and the "called" or "named"
// that ends "what are my cats called?" (a name, which a memory says without
// the word: "two cats, Miso and Pepper"), and the "go" of "go bouldering" or
// "went fishing" (the activity is what is asked: "Loves bouldering at indoor
// climbing walls" holds all of "Where does the user go bouldering?"), and
// the "go" of a question opening with "where" and going on after it ("Where
// am I going for our anniversary?": a destination, which a memory names
// without the verb, "a weekend in the Scottish Highlands"). `first` is the
// sentence's first word.
bool FrameWord(const std::string& w, const std::string& before2, const std::string& before1,
               const std::string& after, const std::string& first) {
  if (w == "living") return before2 == "for" && before1 == "a";
  if (w == "time") return before1 == "what" || before1 == "which";
  if (w == "often" || w == "long" || w == "soon") return before1 == "how";
  if (w == "kind" || w == "kinds" || w == "type" || w == "types" || w == "sort" || w == "sorts") {
    return after == "of";
  }
  if (w == "think" || w == "thinks" || w == "feel" || w == "feels" || w == "opinion" ||
      w == "opinions") {
    return after == "of" || after == "about" || (after == "on" && w.starts_with("opinion"));
  }
  if (w == "come" || w == "comes" || w == "came") return after == "from";
  if (w == "go" || w == "goes" || w == "went" || w == "going") {
    return (after.size() > 5 && after.ends_with("ing")) || (first == "where" && !after.empty());
  }
  if (w == "called" || w == "named") return after.empty();
  return false;
}

// The question without its framing words (FrameWord); with `keep_living`,
// the "living" of "for a living" stays.
std::string WithoutFrame(std::string_view question, bool keep_living) {
  // Words are runs of letters, lower-cased; a framing word is cut from the
  // text where it stands, everything else kept as written.
  struct Word {
    std::size_t at, end;
    std::string lower;
  };
  std::vector<Word> words;
  ForEachLetterRun(question, [&](std::size_t at, std::size_t end) {
    std::string w(question.substr(at, end - at));
    for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    words.push_back({at, end, std::move(w)});
  });
  static const std::string kNone;
  std::string out;
  out.reserve(question.size());
  std::size_t copied = 0;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& b2 = i >= 2 ? words[i - 2].lower : kNone;
    const std::string& b1 = i >= 1 ? words[i - 1].lower : kNone;
    const std::string& a1 = i + 1 < words.size() ? words[i + 1].lower : kNone;
    if (!FrameWord(words[i].lower, b2, b1, a1, words[0].lower) ||
        (keep_living && words[i].lower == "living"))
      continue;
    out.append(question.substr(copied, words[i].at - copied));
    copied = words[i].end;
  }
  out.append(question.substr(copied));
  return out;
}

}  // namespace

std::string QuestionMeant(std::string_view question) { return WithoutFrame(question, false); }

std::string QuestionWords(std::string_view question) {
  std::string words = WithoutFrame(question, true);
  return LexicalTerms(words).empty() ? std::string(question) : words;
}

bool AsksHowMany(const std::vector<std::string>& tokens) {
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    const std::string& n = tokens[i + 1];
    if (t == "how" && (n == "many" || n == "much" || n == "old")) return true;
    if ((t == "what" || t == "which") && (n == "age" || n == "number" || n == "amount")) return true;
  }
  return false;
}

bool HoldsNumber(std::string_view text) {
  static const std::unordered_set<std::string_view> kCounts = {"dozens", "hundreds", "thousands", "millions",
                                                               "twins", "triplets"};
  static const std::unordered_set<std::string_view> kNotCounts = {"one", "once", "half", "first", "second", "third",
                                                                  "single", "double", "triple", "both"};
  bool found = false;
  text::ForEachToken(text, [&](std::string_view t) {
    found = found || std::any_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
            (text::IsNumberWord(t) && !kNotCounts.count(t)) || kCounts.count(t) > 0;
  });
  return found;
}

namespace {

bool IsPerson(std::string_view lower, const wordnet::WordNet* wn) {
  return wn && lower != "user" && wn->NounClass(lower) == kPersonFile;
}

// Whether a lower-case word is an inflected form ("lives", "moved", "went"),
// not its own base form.
bool Inflected(const std::string& w, const wordnet::WordNet& wn) {
  if (w.size() > 2 && (w.back() == 's' || w.compare(w.size() - 2, 2, "ed") == 0)) return true;
  const std::vector<std::string> base = wn.BaseForms(w);
  return !base.empty() && std::find(base.begin(), base.end(), w) == base.end();
}

// The words of a text as written, without the punctuation around them
// (inner apostrophes and hyphens kept).
std::vector<std::string_view> RawWords(std::string_view text, std::size_t max) {
  std::vector<std::string_view> out;
  auto inner = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || (c & 0x80) != 0;
  };
  std::size_t i = 0;
  while (i < text.size() && out.size() < max) {
    while (i < text.size() && text[i] == ' ') ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ') ++j;
    std::size_t b = i, e = j;
    while (b < e && !inner(text[b])) ++b;
    while (e > b && !inner(text[e - 1])) --e;
    if (b < e) out.push_back(text.substr(b, e - b));
    i = j;
  }
  return out;
}

bool IsUserWord(std::string_view lower) {
  static const std::unordered_set<std::string_view> kUser = {
      "i",  "i'm",   "i've",  "i'd",  "i'll",  "im", "ive",  "me",
      "we", "we're", "we've", "we'd", "we'll", "us", "user", "user's"};
  return kUser.count(lower) > 0;
}

}  // namespace

Subject MemorySubject(std::string_view memory, const wordnet::WordNet* wn) {
  const std::vector<std::string_view> words = RawWords(memory, 5);
  if (words.empty()) return Subject::kUnknown;
  const std::string first = text::AsciiLower(words[0]);
  const std::string second = words.size() > 1 ? text::AsciiLower(words[1]) : std::string();
  // Where the words after the user's possessive start: "my", "our",
  // "user's", "the user's" (0: none).
  std::size_t owned = first == "my" || first == "our" || first == "user's" ? 1 : 0;
  if (first == "the" && second == "user's") owned = 2;
  if (owned == 0 && IsUserWord(first)) return Subject::kUser;
  if (first == "the" && second == "user") return Subject::kUser;
  if (owned > 0) {
    bool other = false;
    for (std::size_t k = owned; k < words.size(); ++k) {
      std::string w = text::AsciiLower(words[k]);
      if (w == "i" || w == "me" || w == "we") return Subject::kUser;  // "My partner and I ..."
      const bool possessive = w.size() > 2 && w.compare(w.size() - 2, 2, "'s") == 0;
      if (possessive) w.resize(w.size() - 2);
      if (other || k > owned + 2 || !IsPerson(w, wn)) continue;
      // A person followed by a thing names the thing ("My dentist
      // appointment", "My favourite colour": after one person a verb is
      // inflected, so a bare word that is a noun too is the noun); followed
      // by a verb, a name or another person, the person is the subject ("My
      // sister lives", "My kids love", "My boss Karen", "My twin brother").
      if (!possessive && k + 1 < words.size()) {
        const std::string_view next = words[k + 1];
        const std::string n = text::AsciiLower(next);
        const bool plural = w.size() > 3 && w.back() == 's';
        if (next[0] >= 'a' && next[0] <= 'z' && wn->NounClass(n) >= 0 && !IsPerson(n, wn) &&
            (!wn->IsVerb(n) || (!plural && !Inflected(n, *wn))))
          continue;
      }
      other = true;
    }
    return other ? Subject::kOther : Subject::kUser;
  }
  const std::string_view raw = words[0];
  if (raw[0] >= 'A' && raw[0] <= 'Z') {
    const bool possessive = first.size() > 2 && first.compare(first.size() - 2, 2, "'s") == 0;
    const std::string base = possessive ? first.substr(0, first.size() - 2) : first;
    if (possessive || IsPerson(base, wn) ||
        (wn && wn->NounClass(base) < 0 && !text::IsStopword(base))) {
      return Subject::kOther;
    }
  }
  return Subject::kUnknown;
}

namespace {

bool IsThirdPerson(std::string_view t) {
  static const std::unordered_set<std::string_view> kThird = {"he",  "she",  "him",     "his",
                                                              "her", "hers", "himself", "herself"};
  return kThird.count(t) > 0;
}

// "I", "me", "my" ... or "the user" at tokens[k].
bool IsSelf(const std::vector<std::string>& tokens, std::size_t k) {
  static const std::unordered_set<std::string_view> kSelf = {"i",   "me",   "my",  "mine", "myself",
                                                             "i'm", "i've", "i'd", "i'll"};
  return kSelf.count(tokens[k]) > 0 || (tokens[k] == "user" && k > 0 && tokens[k - 1] == "the");
}

}  // namespace

bool AsksAboutOther(const std::vector<std::string>& tokens) {
  static const std::unordered_set<std::string_view> kWe = {"we", "us", "our", "ours", "ourselves"};
  bool third = false;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    if (IsSelf(tokens, k) || kWe.count(tokens[k])) return false;
    third = third || IsThirdPerson(tokens[k]);
  }
  return third;
}

bool SaidByUserOfThemselves(std::string_view memory, const wordnet::WordNet* wn) {
  const std::vector<std::string_view> words = RawWords(memory, 1);
  if (words.empty()) return false;
  const std::string first = text::AsciiLower(words[0]);
  return first != "user" && first != "user's" &&
         (IsUserWord(first) || first == "my" || first == "our") &&
         MemorySubject(memory, wn) == Subject::kUser;
}

bool AsksAboutUser(std::string_view question, const std::vector<std::string>& tokens,
                   const wordnet::WordNet* wn) {
  bool self = false;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    const std::string& t = tokens[k];
    if (IsThirdPerson(t)) return false;
    if (IsSelf(tokens, k)) self = true;
    if (!text::IsStopword(t) && IsPerson(t, wn)) return false;
  }
  if (!self) return false;
  const std::vector<std::string_view> words = RawWords(question, 64);
  for (std::size_t k = 1; k < words.size(); ++k) {
    const std::string_view w = words[k];
    if (w[0] >= 'A' && w[0] <= 'Z' && !IsUserWord(text::AsciiLower(w))) return false;  // a name
  }
  return true;
}

// How many negations a text holds and the numbers it names (sorted).
ParaphraseCheck::Claims ParaphraseCheck::ClaimsOf(std::string_view text) {
  Claims out;
  std::string before;
  text::ForEachToken(text, [&](std::string_view t) {
    if (IsNegation(t, before)) ++out.first;
    if (text::IsNumberWord(t) ||
        std::any_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      out.second.emplace_back(t);
    }
    before.assign(t);
  });
  std::sort(out.second.begin(), out.second.end());
  return out;
}

namespace {

bool Letters(std::string_view t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

// A token SameInOtherWords lets be another word: of letters, not a
// stopword, a negation or a number word.
bool Flexible(std::string_view t) {
  return Letters(t) && !text::IsStopword(t) && !IsNegation(t, {}) && !text::IsNumberWord(t);
}

}  // namespace

bool AgreeInNegationAndNumbers(std::string_view a, std::string_view b) {
  return ParaphraseCheck::ClaimsOf(a) == ParaphraseCheck::ClaimsOf(b);
}

namespace {

// The word a contraction's tail stands for ("m" of "I'm": "am"); "" when
// `tail` is none.
std::string_view SpeltTail(std::string_view tail) {
  if (tail == "m") return "am";
  if (tail == "re") return "are";
  if (tail == "ve") return "have";
  if (tail == "ll") return "will";
  if (tail == "d") return "would";
  if (tail == "s") return "is";
  return {};
}

// The tokens of a text, articles left out, with contractions spelt out
// ("I'm" -> "i", "am"; "don't" -> "do", "not"; "won't" -> "will", "not"),
// also when a typographic apostrophe split them ("I’m" tokenises to "i",
// "m"), so "I'm" and "I am" compare equal.
std::vector<std::string> SpeltOut(std::string_view text) {
  std::vector<std::string> out;
  auto negate = [&](std::string head) {
    if (head == "ca") head = "can";
    if (head == "wo") head = "will";
    if (head == "sha") head = "shall";
    if (!head.empty()) out.push_back(std::move(head));
    out.emplace_back("not");
  };
  text::ForEachToken(text, [&](std::string_view t) {
    if (IsArticle(t)) return;
    const std::size_t apostrophe = t.find('\'');
    if (apostrophe != std::string_view::npos) {
      std::string_view head = t.substr(0, apostrophe), tail = t.substr(apostrophe + 1);
      if (tail == "t" && !head.empty() && head.back() == 'n') return negate(std::string(head.substr(0, head.size() - 1)));
      if (std::string_view w = SpeltTail(tail); !w.empty()) {
        out.emplace_back(head);
        out.emplace_back(w);
        return;
      }
    } else if (!out.empty()) {
      if (t == "t" && out.back().size() > 1 && out.back().back() == 'n') {
        std::string head = std::move(out.back());
        out.pop_back();
        head.pop_back();
        return negate(std::move(head));
      }
      if (std::string_view w = SpeltTail(t); !w.empty() && t != "s") {
        out.emplace_back(w);
        return;
      }
    }
    out.emplace_back(t);
  });
  return out;
}

// Each function word (stopword) of a text with the content word it leads to
// (the next token that is none; "" at the end), sorted: "from Paris to Rome"
// gives "from paris", "to rome"; "on Sundays Alice plays cello" and "Alice
// plays cello on Sundays" both give "on sundays".
std::vector<std::string> FunctionWordLinks(std::string_view text) {
  std::vector<std::string> out;
  std::size_t open = 0;  // links of `out` from `open` on wait for their content word
  for (const auto& t : SpeltOut(text)) {
    if (text::IsStopword(t)) {
      out.push_back(t + '\x1f');
      continue;
    }
    for (; open < out.size(); ++open) out[open] += t;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool AgreeInRelations(std::string_view a, std::string_view b) { return FunctionWordLinks(a) == FunctionWordLinks(b); }

bool SayTheSame(std::string_view a, std::string_view b) {
  return AgreeInNegationAndNumbers(a, b) && AgreeInRelations(a, b) && text::Signs(a) == text::Signs(b);
}

std::uint64_t TextShape(std::string_view text) {
  std::string key;
  std::size_t n = 0;
  bool flexible = false;
  text::ForEachToken(text, [&](std::string_view t) {
    if (IsArticle(t)) return;
    ++n;
    if (Flexible(t)) {
      key += '\x01';
      flexible = true;
    } else {
      key += t;
    }
    key += '\x00';
  });
  if (!flexible || n > kMaxParaphraseTokens) return 0;
  key += std::to_string(n);
  const std::uint64_t h = std::hash<std::string>{}(key);
  return h == 0 ? 1 : h;
}

ParaphraseCheck::ParaphraseCheck(std::string_view text, const wordnet::WordNet* wn) : wn_(wn) {
  if (wn == nullptr) return;
  tokens_ = ComparedTokens(text);
  if (tokens_.size() > kMaxParaphraseTokens) tokens_.clear();
  if (!tokens_.empty()) claims_ = ClaimsOf(text);
}

bool ParaphraseCheck::Matches(std::string_view other) const {
  // (Counted first: most texts differ in length, and counting allocates nothing.)
  if (tokens_.empty() || CountCompared(other) != tokens_.size()) return false;
  const auto y = ComparedTokens(other);
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const std::string& x = tokens_[i];
    if (x == y[i]) continue;
    if (!Flexible(x) || !Flexible(y[i])) return false;  // (so both have one TextShape)
    if (text::Stem(x) == text::Stem(y[i])) continue;
    if (!wn_->ShareFirstSense(x, y[i])) return false;
  }
  return ClaimsOf(other) == claims_;  // (a negation split at its apostrophe: "don", "t")
}

bool SameInOtherWords(std::string_view a, std::string_view b, const wordnet::WordNet* wn) {
  return ParaphraseCheck(a, wn).Matches(b);
}

}  // namespace engram::memory::facts
