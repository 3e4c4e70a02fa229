#include "core/answer_class.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "core/text.hpp"

namespace engram::answer {

namespace {

// WordNet's lexicographer file of people (noun.person).
constexpr int kPersonFile = 18;
constexpr int kArtifactFile = 6;
constexpr int kFoodFile = 13;
// A sense of a question's noun with more synsets below it than this says
// nothing of what is asked ("food", "activity", "person").
constexpr std::size_t kMaxSenseSynsets = 1000;
constexpr int kClassSenses = 6;

// Words: letters and apostrophes, as written.
std::vector<std::string_view> Words(std::string_view text) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '\''; };
  std::vector<std::string_view> words;
  for (std::size_t i = 0; i < text.size();) {
    if (!letter(text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && letter(text[j])) ++j;
    words.push_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

bool OneOf(std::string_view w, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), w) != list.end();
}

// A question about someone's work: its focus names work itself, or it asks
// what someone does "for a living", "for work", "professionally", or plainly
// "what does she do?". The word that says so ("" for the last) goes to
// `said`. (`t`: the question's tokens, text::Tokenize.)
bool AsksOccupation(const std::vector<std::string>& t, const std::string& focus,
                    std::string& said) {
  if (OneOf(focus, {"job", "jobs", "occupation", "occupations", "profession", "professions", "career", "careers",
                    "trade", "tradesman", "living", "livelihood", "vocation", "employment", "work"})) {
    // ("to work", "at work", "from work": a place or a time of work, not
    // one: "way to work" asks how someone commutes.)
    const auto at = std::find(t.begin(), t.end(), focus);
    if (focus == "work" && at != t.begin() && at != t.end() &&
        OneOf(*(at - 1), {"to", "at", "from", "after", "before", "into"})) {
      return false;
    }
    said = focus;
    return true;
  }
  const std::size_t n = t.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (t[i] == "living" && i >= 2 && t[i - 1] == "a" && t[i - 2] == "for") {
      said = "living";
      return true;
    }
    if (t[i] == "professionally") {
      said = t[i];
      return true;
    }
    if (t[i] != "do" || i < 2 || t[0] != "what") continue;
    if (i + 3 == n && t[i + 1] == "for" && t[i + 2] == "work") {
      said = "work";
      return true;
    }
    if (i + 1 == n || (i + 2 == n && (t[i + 1] == "now" || t[i + 1] == "nowadays"))) {
      said.clear();
      return true;
    }
  }
  return false;
}

// A question asking where, and for nothing of a kind ("Where does Ines
// live?"; not "Where is her piano?" which asks nothing of a place's kind
// once its noun is the subject, nor "where" inside a clause).
bool AsksWhere(const std::vector<std::string>& t) {
  return !t.empty() && t[0] == "where";
}

// A question asking who ("Who is my manager?", "Whom does she report to?",
// "Whose wedding is coming up?"): a person is asked for.
bool AsksWho(const std::vector<std::string>& t) {
  return !t.empty() && (t[0] == "who" || t[0] == "whom" || t[0] == "whose");
}

// WordNet's lexicographer files of places and natural places (noun.location,
// noun.object: "Lisbon", "Patagonia", "the coast", "a lake").
constexpr std::uint32_t kPlaceFiles = (1u << 15) | (1u << 17);
// ... and of groups (noun.group: companies, firms, schools, agencies,
// teams), which a question asking where someone works is answered by too.
constexpr std::uint32_t kGroupFile = 1u << 14;

// Adds every synset of `more` to `set` (both made for the same WordNet).
void AddAll(wordnet::WordNet::SynsetSet& set, const wordnet::WordNet::SynsetSet& more) {
  for (std::size_t w = 0; w < more.bits.size(); ++w) {
    for (std::uint64_t b = more.bits[w]; b != 0; b &= b - 1) {
      set.Add(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(b))));
    }
  }
}

bool IsFood(std::string_view focus) { return focus == "food" || focus == "foods"; }

// Whether the question's focus modifies the noun after it ("What food
// preferences ...?" asks for preferences): the next word is a noun WordNet
// knows, and neither a stopword nor a verb.
bool ModifiesANoun(const std::vector<std::string>& t, const std::string& focus,
                   const wordnet::WordNet& wn) {
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i] != focus) continue;
    const std::string& next = t[i + 1];
    return !text::IsStopword(next) && wn.NounClass(next) >= 0 && !wn.IsVerb(next);
  }
  return false;
}

// What a question opening with "what" or "which" and naming no thing asks
// for by its verb of eating or drinking: "food" ("What can't I eat?"),
// "beverage" ("What does he drink in the morning?"); "" otherwise (not "What
// did she have for breakfast?": "have" says no more).
std::string_view WhatIsTaken(const std::vector<std::string>& t) {
  if (t.empty() || (t[0] != "what" && t[0] != "which")) return {};
  for (const std::string& w : t) {
    if (OneOf(w, {"eat", "eats", "eating", "ate", "eaten"})) return "food";
    if (OneOf(w, {"drink", "drinks", "drinking", "drank"})) return "beverage";
  }
  return {};
}

// Foods: WordNet's noun.food and whatever is a kind of food (a wide class,
// and one that says what it asks for all the same: "What food can't she
// eat?" is answered by any dish, fruit or nut a memory names; WordNet files
// the edible nuts as food and makes them kinds of the botanical nut).
wordnet::WordNet::SynsetSet MakeFoodSet(const wordnet::WordNet& wn) {
  wordnet::WordNet::SynsetSet set = wn.NounsInFiles(1u << kFoodFile);
  AddAll(set, wn.NounsUnder({"food"}, 2, -1, 1u << 20));
  return set;
}

constexpr int kTimeFile = 28;  // WordNet's noun.time

// What may stand between "at" or "for" and the place ("at a startup", "for
// the United Nations", "at my father's bakery").
bool IsDeterminer(std::string_view w) {
  return OneOf(w, {"a", "an", "the", "my", "our", "his", "her", "their", "its", "your", "this",
                   "that", "some"});
}

// A word of working: what "at" or "for" after it says the place of.
bool IsWorkWord(std::string_view w) {
  return OneOf(w, {"work", "works", "worked", "working", "employed", "job", "jobs"});
}

// A number, in figures or words ("for 5 years", "for two years", "for many
// years").
bool IsNumberWord(std::string_view w) {
  return (!w.empty() && w[0] >= '0' && w[0] <= '9') || text::IsNumberWord(w) ||
         OneOf(w, {"few", "several", "many"});
}

// Whether a question asking where asks where someone works ("Where does she
// work?", "Where is he employed?", "Where's her job?").
bool AsksWhereWorking(const std::vector<std::string>& tokens) {
  return std::any_of(tokens.begin(), tokens.end(),
                     [](const std::string& t) { return IsWorkWord(t) || t == "employer"; });
}

// The places someone works at: places, groups and organisations, and the
// buildings and establishments of work (noun.artifact: "hospital",
// "bakery", "cafe", "office", "shop", "lab", "studio").
wordnet::WordNet::SynsetSet MakeWorkplaceSet(const wordnet::WordNet& wn) {
  wordnet::WordNet::SynsetSet set = wn.NounsInFiles(kPlaceFiles | kGroupFile);
  static const std::vector<std::string> roots = {
      "building",          "establishment",           "facility", "workplace", "building_complex",
      "place_of_business", "mercantile_establishment"};
  // (and whatever is a kind of organisation, wherever WordNet files it: a
  // name of the names file, "Spotify", is a company filed with its product)
  static const std::vector<std::string> groups = {"organization", "company", "institution",
                                                  "enterprise"};
  AddAll(set, wn.NounsUnder(roots, 3, kArtifactFile, 1u << 20));
  AddAll(set, wn.NounsUnder(groups, 2, -1, 1u << 20));
  return set;
}

// The people's roles of working life: noun.person synsets under these (and
// the words' own noun.person senses).
wordnet::WordNet::SynsetSet MakeOccupationSet(const wordnet::WordNet& wn) {
  static const std::vector<std::string> roots = {
      "worker",   "professional", "creator",  "businessperson", "expert",      "lawman",      "serviceman",
      "operator", "scientist",    "employee", "leader",         "official",    "performer",   "communicator",
      "engineer", "financier",    "enrollee", "athlete",        "firefighter", "practitioner", "specialist"};
  return wn.NounsUnder(roots, 4, kPersonFile, 1u << 20);
}

using SetPtr = std::shared_ptr<const wordnet::WordNet::SynsetSet>;
using TermsPtr = std::shared_ptr<const std::vector<std::string>>;
// A class and its words' index terms.
struct Made {
  SetPtr set;
  TermsPtr terms;
};
constexpr std::size_t kMaxClassTerms = 8000;

Made MakeClass(const wordnet::WordNet& wn, wordnet::WordNet::SynsetSet set) {
  Made m;
  if (set.empty()) return m;
  // Only words that name a thing of the class by their most frequent sense,
  // as Names counts them: "Berlin" (the composer) or "hope" (the comedian)
  // would find memories that HeldBy then refuses, in place of those it holds.
  std::vector<std::string> terms = wn.TermsIn(set, kMaxClassTerms);
  std::sort(terms.begin(), terms.end());
  m.terms = std::make_shared<const std::vector<std::string>>(std::move(terms));
  m.set = std::make_shared<const wordnet::WordNet::SynsetSet>(std::move(set));
  return m;
}

}  // namespace

// What the process remembers of one WordNet (the process has one; another
// starts afresh), bounded: the last 16 classes asked for (a bit per synset,
// 15 KB, and their words' index terms), and each token's most frequent noun
// sense (the memories a question's candidates are hold the same words again
// and again, and a look-up tries several base forms, each a binary search).
class Memo {
 public:
  static Memo& Of(const wordnet::WordNet& wn) {
    static Memo memo;
    std::lock_guard<std::mutex> lock(memo.mu_);
    if (memo.wn_ != &wn) {
      memo.wn_ = &wn;
      memo.occupation_made_ = false;
      memo.occupation_ = {};
      memo.places_made_ = false;
      memo.places_ = {};
      memo.workplaces_made_ = false;
      memo.workplaces_ = {};
      memo.people_made_ = false;
      memo.people_ = {};
      memo.classes_.clear();
      memo.nouns_.clear();
    }
    return memo;
  }

  Made Occupation() { return Once(occupation_made_, occupation_, MakeOccupationSet); }
  Made Workplaces() { return Once(workplaces_made_, workplaces_, MakeWorkplaceSet); }

  Made People() {
    return Once(people_made_, people_,
                [](const wordnet::WordNet& wn) { return wn.NounsInFiles(1u << kPersonFile); });
  }

  Made Places() {
    return Once(places_made_, places_,
                [](const wordnet::WordNet& wn) { return wn.NounsInFiles(kPlaceFiles); });
  }

  // The class of a focus word; `food`: all foods (MakeFoodSet).
  Made Class(const std::string& focus, bool food) {
    const std::string key = food ? "\x01food" : focus;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = classes_.find(key);
      if (it != classes_.end()) return it->second;
    }
    Made out = MakeClass(*wn_, food ? MakeFoodSet(*wn_)
                                    : wn_->NounsUnder({focus}, kClassSenses, -1, kMaxSenseSynsets));
    std::lock_guard<std::mutex> lock(mu_);
    if (classes_.size() >= 16) classes_.clear();
    classes_.emplace(key, out);
    return out;
  }

  long FirstNoun(std::string_view token) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = nouns_.find(token);
      if (it != nouns_.end()) return it->second;
    }
    const long noun = wn_->FirstNoun(token);
    std::lock_guard<std::mutex> lock(mu_);
    if (nouns_.size() >= 50000) nouns_.clear();
    nouns_.emplace(std::string(token), noun);
    return noun;
  }

 private:
  std::mutex mu_;
  const wordnet::WordNet* wn_ = nullptr;
  // A class made once, when first asked for, and kept.
  template <typename MakeSet>
  Made Once(bool& made, Made& slot, MakeSet make) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!made) {
      slot = MakeClass(*wn_, make(*wn_));
      made = true;
    }
    return slot;
  }

  bool occupation_made_ = false, places_made_ = false, workplaces_made_ = false,
       people_made_ = false;
  Made occupation_, places_, workplaces_, people_;
  text::StringMap<Made> classes_;
  text::StringMap<long> nouns_;
};

bool IsVerbNotThing(std::string_view w) {
  return OneOf(w, {"like", "likes", "liked", "going", "went", "make", "made", "makes", "gets", "got", "goes", "done"});
}

namespace {

// Whether `w` (a view into `question`) is a part of a hyphenated word that
// modifies the noun after it ("Which single-board computer ...?", "What
// part-time job ...?": the thing asked for is the computer, the job): a part
// before a hyphen, or the last part when the next word is a lower-case noun.
// The last part of a hyphenated word that ends the phrase is its head ("Which
// e-reader ...?": a reader).
bool InCompoundModifier(std::string_view question, std::string_view w, std::string_view next,
                        const wordnet::WordNet& wn) {
  const std::size_t begin = static_cast<std::size_t>(w.data() - question.data());
  const std::size_t end = begin + w.size();
  if (end < question.size() && question[end] == '-') return true;
  if (begin == 0 || question[begin - 1] != '-') return false;
  if (next.empty() || next[0] < 'a' || next[0] > 'z') return false;
  const std::string l = text::AsciiLower(next);
  return !text::IsStopword(l) && !IsVerbNotThing(l) && wn.NounClass(l) >= 0;
}

}  // namespace

std::string QuestionFocus(std::string_view question, const wordnet::WordNet& wn) {
  const std::vector<std::string_view> words = Words(question);
  std::size_t at = 0;
  auto opens = [&](std::string_view w) {
    const std::string l = text::AsciiLower(w);
    return l == "what" || l == "which" || l == "what's";
  };
  while (at < words.size() && !opens(words[at])) ++at;
  int seen = 0;
  for (std::size_t i = at + 1; i < words.size() && seen < 4; ++i) {
    const std::string_view w = words[i];
    // Names: capitalised, or possessive ("Caroline's"); a single letter is
    // what a typographic apostrophe leaves of one ("Caroline’s": "s").
    if ((w[0] >= 'A' && w[0] <= 'Z') || (w.size() > 2 && w.substr(w.size() - 2) == "'s") || w.size() < 2) continue;
    ++seen;
    const std::string l = text::AsciiLower(w);
    if (OneOf(l, {"kind", "kinds", "type", "types", "sort", "sorts"})) continue;
    // "the name of her dog", "which brand of coffee": the thing is what
    // follows (neither word counts among the four).
    if (OneOf(l, {"name", "names", "brand", "brands", "model", "models"}) && i + 1 < words.size() &&
        text::AsciiLower(words[i + 1]) == "of") {
      --seen;
      ++i;
      continue;
    }
    if (text::IsStopword(l) || IsVerbNotThing(l) || wn.NounClass(l) < 0) continue;
    if (InCompoundModifier(question, w, i + 1 < words.size() ? words[i + 1] : std::string_view(),
                           wn))
      continue;
    return l;
  }
  return {};
}

std::string KeywordFocus(std::string_view query, const wordnet::WordNet& wn) {
  if (query.find('?') != std::string_view::npos) return {};
  const std::vector<std::string_view> words = Words(query);
  std::string focus;
  int content = 0;
  for (std::string_view w : words) {
    const std::string l = text::AsciiLower(w);
    if (OneOf(l, {"what", "which", "who", "whom", "whose", "where", "when", "why", "how", "is", "are", "was",
                  "were", "do", "does", "did", "can", "could", "should", "would", "will", "tell", "list", "show",
                  "give", "find"})) {
      return {};
    }
    if (l.size() < 2 || text::IsStopword(l)) continue;
    if (++content > 4) return {};
    // A possessive names whose thing it is ("Carmen's job").
    if (l.ends_with("'s") || l.ends_with("'")) continue;
    if (!IsVerbNotThing(l) && wn.NounClass(l) >= 0) focus = l;
  }
  return focus;
}

namespace {

// The focus of a question asking whether someone has or does a thing ("Do I
// have pets?", "Does she play an instrument?", "Has he got any
// allergies?"): its last noun WordNet knows, lower-case and not a name, when
// it opens with "do", "does", "did", "have", "has" or "had"; "" otherwise.
std::string YesNoFocus(std::string_view question, const wordnet::WordNet& wn) {
  const std::vector<std::string_view> words = Words(question);
  if (words.empty() || !OneOf(text::AsciiLower(words[0]), {"do", "does", "did", "have", "has", "had"}))
    return {};
  std::string focus;
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string_view w = words[i];
    if ((w[0] >= 'A' && w[0] <= 'Z') || w.size() < 3) continue;  // a name ("I" too)
    const std::string l = text::AsciiLower(w);
    if (text::IsStopword(l) || l.ends_with("'s") || IsVerbNotThing(l)) continue;
    if (wn.NounClass(l) >= 0) focus = l;
  }
  return focus;
}

}  // namespace

AnswerClass AnswerClass::Of(std::string_view question, const wordnet::WordNet* wn) {
  AnswerClass c;
  if (wn == nullptr) return c;
  c.wn_ = wn;
  c.focus_ = QuestionFocus(question, *wn);
  if (c.focus_.empty()) c.focus_ = KeywordFocus(question, *wn);
  if (c.focus_.empty()) {
    c.focus_ = YesNoFocus(question, *wn);
    c.yes_no_ = !c.focus_.empty();
  }
  std::string said;
  Memo& memo = Memo::Of(*wn);
  c.memo_ = &memo;
  Made made;
  const std::vector<std::string> tokens = text::Tokenize(question);
  if (AsksOccupation(tokens, c.focus_, said)) {
    c.focus_ = said;
    c.occupation_ = true;
    made = memo.Occupation();
  } else if (!c.focus_.empty()) {
    // (a wide class only for the thing asked for, not for a word that
    // modifies it: "What food preferences ...?")
    made = memo.Class(c.focus_, IsFood(c.focus_) && !ModifiesANoun(tokens, c.focus_, *wn));
  } else if (AsksWhere(tokens)) {
    c.workplace_ = AsksWhereWorking(tokens);
    made = c.workplace_ ? memo.Workplaces() : memo.Places();
  } else if (AsksWho(tokens)) {
    c.people_ = true;
    made = memo.People();
  } else if (const std::string_view eaten = WhatIsTaken(tokens); !eaten.empty()) {
    made = memo.Class(std::string(eaten), eaten == "food");
  }
  c.set_ = std::move(made.set);
  c.terms_ = std::move(made.terms);
  if (c.set_ == nullptr) c.occupation_ = c.workplace_ = c.people_ = false;
  return c;
}

const std::vector<std::string>& AnswerClass::Terms() const {
  static const std::vector<std::string> kNone;
  return terms_ ? *terms_ : kNone;
}

bool AnswerClass::Names(std::string_view token) const {
  if (set_ == nullptr || token.size() < 3 || token == focus_ || text::IsStopword(token)) return false;
  // (the words of working say where only by what follows them: "works" is
  // a factory by its first noun sense)
  if (workplace_ && IsWorkWord(token)) return false;
  const long noun = memo_->FirstNoun(token);
  return noun >= 0 && set_->Has(static_cast<std::uint32_t>(noun));
}

namespace {

// Each word of a text (Words) written with a capital past the start of a
// sentence or a line (not "I"), lower-cased, its quotes and a trailing "'s"
// left out.
template <typename Fn>
void ForEachNameWritten(std::string_view text, Fn fn) {
  for (std::string_view w : Words(text)) {
    // (what stands before it, spaces, quotes and brackets aside)
    std::size_t at = static_cast<std::size_t>(w.data() - text.data());
    while (at > 0 && std::string_view(" \t\"([").find(text[at - 1]) != std::string_view::npos) --at;
    const bool starts = at == 0 || std::string_view(".!?:\n").find(text[at - 1]) != std::string_view::npos;
    while (!w.empty() && w.front() == '\'') w.remove_prefix(1);
    if (w.ends_with("'s")) w.remove_suffix(2);
    while (!w.empty() && w.back() == '\'') w.remove_suffix(1);
    if (starts || w.empty() || w[0] < 'A' || w[0] > 'Z' || w == "I") continue;
    fn(text::AsciiLower(w));
  }
}

// A word before "a" or "an" that says what someone is ("is a", "became an",
// "I'm a"; a pronoun alone is what "she's a" leaves, its "'s" dropped).
bool SaysBeing(std::string_view w) {
  return OneOf(w, {"is", "was", "am", "are", "were", "be", "been", "being", "become", "became", "becomes",
                   "becoming", "remain", "remains", "remained", "i'm", "you're", "we're", "they're", "he", "she",
                   "who", "that"});
}

// A word that may stand between those and the article ("is now a").
bool BeingAdverb(std::string_view w) {
  return OneOf(w, {"now", "also", "still", "currently", "once", "already", "actually", "officially", "finally",
                   "just", "really", "not", "no", "longer"});
}

}  // namespace

bool AnswerClass::HeldBy(std::string_view said) const {
  if (set_ == nullptr) return false;
  // A name written apart is the name ("a Raspberry Pi" names a computer).
  const std::string joined = text::JoinNamesWrittenApart(
      said, [this](const std::string& w) { return wn_->NounClass(w) >= 0; });
  const std::string_view text = joined;
  bool held = false;
  // An occupation is said of someone: the word comes within four words
  // after "as" or after an "a" or "an" that follows a word of being ("is an
  // ICU nurse", "works as a backend engineer", "became a teacher"), not as
  // a thing in passing ("the office printer", "bought a new office
  // printer", "my manager is Karen").
  int after_article = 99;
  // The words after "named" or "called" are a name, not a thing of the
  // class ("a dog named Rex" holds no king, "called Hope" no hope).
  int after_naming = 99;
  // Where someone works: the word after "at" or "for" within six words
  // after a word of working, a determiner aside ("works at Acme", "work as
  // a backend engineer at a fintech startup"), unless it says a time ("at
  // night", "for two years").
  int after_work = 99;
  bool place_next = false;
  std::string prev, prev2;  // (copies: a token's view lasts its call)
  text::ForEachToken(text, [&](std::string_view t) {
    if (held) return;
    ++after_article;
    ++after_naming;
    if (workplace_) {
      ++after_work;
      if (place_next && !IsDeterminer(t)) {
        place_next = false;
        held = !text::IsStopword(t) && !IsNumberWord(t) && wn_->NounClass(t) != kTimeFile;
        if (held) return;
      }
      if (IsWorkWord(t)) {
        after_work = 0;
      } else if (OneOf(t, {"and", "but", "then", "while", "so", "because", "or"})) {
        after_work = 99;  // another clause
      } else if ((t == "at" || t == "for") && after_work <= 6) {
        place_next = true;
      }
    }
    const bool article = t == "as" || ((t == "a" || t == "an") &&
                                       (SaysBeing(prev) || (BeingAdverb(prev) && SaysBeing(prev2))));
    prev2.swap(prev);
    prev.assign(t);
    if (t == "named" || t == "called") {
      after_naming = 0;
      return;
    }
    if (article) {
      after_article = 0;
      return;
    }
    held = (!occupation_ || after_article <= 4) && after_naming > 2 && Names(t);
  });
  if (held || occupation_) return held;
  // A word written with a capital past a sentence's start is a name, and a
  // name may mean its second sense as well as its first: a place or a person
  // WordNet knows by one name ("Vancouver" the navigator, then the city), a
  // name the project's names file puts after WordNet's first sense ("works
  // at Apple", "shops at Target"), an event named after its kind ("the
  // Chicago Marathon"); not a day's, a month's or a holiday's, which are
  // written so anyway ("on Mondays" is no monday.com).
  ForEachNameWritten(text, [&](const std::string& name) {
    if (held || name.size() < 3 || name == focus_) return;
    const int file = wn_->NounClass(name);
    if (file == kTimeFile) return;
    // (For who: a name WordNet does not know is someone's, "Marcus",
    // "Dana", or an organisation's, which answers who too.)
    if (people_ && file < 0) {
      held = true;
      return;
    }
    const long noun = wn_->NounSense(name, 1);
    held = noun >= 0 && set_->Has(static_cast<std::uint32_t>(noun));
  });
  return held;
}

}  // namespace engram::answer
