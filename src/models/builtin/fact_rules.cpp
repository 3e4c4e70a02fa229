// Fact rules of the built-in extractive engine (see fact_rules.hpp).
#include "models/builtin/fact_rules.hpp"

#include <cctype>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "core/text.hpp"
#include "core/time.hpp"
#include "models/builtin/english.hpp"

namespace engram::builtin {
namespace {

constexpr std::size_t kMaxFactBytes = 300;
constexpr std::size_t kMinFactWords = 3;

// Verbs whose first-person use states something lasting or an event worth
// remembering (matched by Snowball stem, so "moved", "moving" match "move").
bool IsDurableVerb(std::string_view w) {
  static const std::unordered_set<std::string> kStems = [] {
    std::unordered_set<std::string> stems;
    for (const char* v :
         {"work", "live", "love", "like", "enjoy", "hate", "prefer", "adore", "own", "go", "visit",
          "move", "start", "join", "buy", "adopt", "finish", "graduate", "study", "teach", "play",
          "learn", "begin", "quit", "leave", "win", "run", "write", "build", "meet", "marry",
          "travel", "attend", "volunteer", "sign", "complete", "create", "paint", "take",
          "collect", "cook", "bake", "grow", "practice", "practise", "read", "speak", "use",
          "drive", "ride", "dance", "sing", "swim", "hike", "climb", "compete", "celebrate",
          "lose", "found", "launch", "publish", "record", "perform", "open", "manage", "lead",
          "raise", "rescue", "foster", "train", "coach", "donate", "support", "mentor",
          "organize", "organise", "host", "renovate", "decorate", "knit", "sew", "garden", "camp",
          "surf", "ski", "skate", "jog", "bike", "cycle", "meditate", "pray", "eat", "drink",
          "avoid", "listen", "watch", "design", "develop", "code", "program", "fix", "repair",
          "make", "try", "receive", "spend", "save", "earn", "retire", "relocate", "apply",
          "enroll", "enrol", "pass", "fail", "injure", "recover", "give", "fly", "sell", "keep",
          "dislike", "stay", "return", "explore", "photograph", "draw", "sculpt", "invest"})
      stems.insert(text::Stem(v));
    return stems;
  }();
  static const std::unordered_set<std::string_view> kIrregular = {
      "went", "bought", "began", "left", "won", "ran", "wrote", "built", "met", "took", "grew",
      "taught", "drove", "rode", "sang", "swam", "read", "spoke", "ate", "drank", "made", "spent",
      "lost", "flew", "sold", "led", "quit", "gave", "kept", "founded"};
  return kIrregular.count(w) > 0 || kStems.count(text::Stem(w)) > 0;
}

// Cognition, speech and feeling verbs: "I think ...", "I heard ...".
bool IsExcludedVerb(std::string_view w) {
  static const std::unordered_set<std::string_view> kExcluded = {
      "think", "thought", "guess", "guessed", "know", "knew", "feel", "felt", "mean", "meant",
      "wish", "wished", "wonder", "wondered", "bet", "agree", "agreed", "understand",
      "understood", "suppose", "supposed", "say", "said", "tell", "told", "hear", "heard", "see",
      "saw", "appreciate", "appreciated", "imagine", "imagined", "realize", "realise", "realized",
      "realised", "notice", "noticed", "forget", "forgot", "figure", "figured", "assume",
      "assumed", "believe", "believed", "admire", "admired", "relate", "get", "need", "needed",
      "thank", "thanked", "apologize", "apologise", "hope", "miss", "missed", "remember",
      "remembered", "care", "cared", "worry", "worried", "doubt", "expect"};
  return kExcluded.count(w) > 0;
}

// Objects too vague to make a fact ("I love it", "I had a great time").
bool IsWeakWord(std::string_view w) {
  static const std::unordered_set<std::string_view> kWeak = {
      "lot", "lots", "thing", "things", "one", "much", "idea", "stuff", "way", "fun",
      "question", "feeling", "clue", "point", "time", "great", "good", "nice", "amazing",
      "awesome", "day", "night", "know", "sure", "mind", "well", "bit", "little", "glad",
      "happy", "sorry", "thanks", "thank", "kind", "pretty", "cool", "wonderful", "yet",
      "anymore", "either", "though", "right", "back", "guys", "week", "weekend", "month",
      "year", "last", "ago", "yesterday", "today", "tonight", "tomorrow", "morning", "evening",
      "afternoon", "soon", "later", "there"};
  return kWeak.count(w) > 0;
}

struct Ctx {
  std::string_view s;
  const std::vector<Word>& w;
  Role role;
  std::size_t n() const { return w.size(); }
  const std::string& at(std::size_t j) const {
    static const std::string kEmpty;
    return j < w.size() ? w[j].lower : kEmpty;
  }
};

// Past adverbs and (allow_not) a negation: "not", "no longer".
std::size_t SkipAdverbs(const Ctx& c, std::size_t j, bool allow_not) {
  while (j < c.n()) {
    if (IsAdverb(c.at(j)) || (allow_not && c.at(j) == "not")) {
      ++j;
    } else if (allow_not && c.at(j) == "no" && c.at(j + 1) == "longer") {
      j += 2;
    } else {
      break;
    }
  }
  return j;
}

// True when words [from, end) hold at least one content word.
bool HasContent(const Ctx& c, std::size_t from) {
  for (std::size_t k = from; k < c.n(); ++k) {
    const std::string& x = c.at(k);
    if (!text::IsStopword(x) && !IsWeakWord(x) && !IsAdverb(x)) return true;
  }
  return false;
}

bool IsNumber(std::string_view x) {
  static const std::vector<std::string_view> kNumbers = {
      "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twenty",
      "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};
  if (!x.empty() && x[0] >= '0' && x[0] <= '9') return true;
  return OneOf(x, kNumbers);
}

bool BeOk(const Ctx& c, std::size_t j) {
  j = SkipAdverbs(c, j, true);
  if (j >= c.n()) return false;
  const std::string& x = c.at(j);
  if (IsNumber(x)) return true;  // "I'm 32"
  if (x == "a" || x == "an")
    return !OneOf(c.at(j + 1), {"bit", "little", "tad", "lot", "mess", "fan"}) || c.at(j + 2) == "of";
  static const std::vector<std::string_view> kAccept = {
      "from", "into", "passionate", "interested", "allergic", "married", "engaged", "divorced",
      "widowed", "single", "pregnant", "retired", "vegetarian", "vegan", "originally", "based",
      "part", "member", "born", "raised", "the", "in", "on", "new", "self-employed",
      "unemployed", "employed", "obsessed", "addicted", "fluent", "certified", "lactose",
      "diabetic", "afraid", "scared", "terrified", "bilingual", "left-handed", "responsible"};
  if (OneOf(x, kAccept)) return HasContent(c, j) || x.size() > 3;
  if (x.size() > 4 && x.compare(x.size() - 3, 3, "ing") == 0) {
    static const std::vector<std::string_view> kTransient = {
        "doing", "feeling", "kidding", "saying", "wondering", "thinking", "asking", "talking",
        "getting", "looking", "having", "loving", "hoping", "rooting", "dying", "glad",
        "listening", "coming", "checking", "sending", "telling", "happening"};
    return !OneOf(x, kTransient) && HasContent(c, j + 1);
  }
  if (c.role == Role::kAssistant && OneOf(x, {"happy", "glad", "here", "able", "available", "ready"}) &&
      c.at(j + 1) == "to")
    return OneOf(c.at(j + 2), {"help", "assist", "share", "answer", "explain", "support",
                               "recommend", "walk", "suggest", "send", "provide", "review"});
  return false;
}

bool HaveObjectOk(const Ctx& c, std::size_t j) {
  const std::string& x = c.at(j);
  if (x.empty() || x == "to" || x == "no" || x == "been" || IsPastForm(x)) return false;
  for (std::size_t k = j; k < j + 3 && k < c.n(); ++k) {  // "I have a question about ..."
    if (OneOf(c.at(k), {"question", "questions", "idea", "feeling", "clue", "suggestion", "request"}))
      return false;
  }
  return HasContent(c, j);
}

bool HaveAuxOk(const Ctx& c, std::size_t j) {
  j = SkipAdverbs(c, j, true);
  const std::string& x = c.at(j);
  if (x == "been") return c.at(j + 1) == "to" ? HasContent(c, j + 2) : BeOk(c, j + 1);
  if (x == "got" || x == "gotten") return HaveObjectOk(c, j + 1);
  if (x.empty() || IsExcludedVerb(x)) return false;
  return IsPastForm(x) && HasContent(c, j + 1);
}

bool VerbOk(const Ctx& c, std::size_t j, bool after_modal) {
  j = SkipAdverbs(c, j, true);
  if (j >= c.n()) return false;
  const std::string& x = c.at(j);
  if (c.role == Role::kAssistant && OneOf(x, {"recommend", "suggest", "advise", "propose", "promise"}))
    return true;
  if (OneOf(x, {"hope", "hoped", "plan", "planned", "want", "wanted", "intend", "intended",
                "decided", "decide", "aim", "dream"})) {
    return c.at(j + 1) == "to" &&
           !OneOf(c.at(j + 2), {"say", "share", "tell", "let", "ask", "thank", "check", "know",
                                "see", "hear", "apologize", "apologise", "reach", "talk", "fill",
                                "update", "show"}) &&
           HasContent(c, j + 2);
  }
  if (IsExcludedVerb(x)) return false;
  if (x == "got" && (IsPastForm(c.at(j + 1)) || OneOf(c.at(j + 1), {"married", "engaged"})))
    return true;  // "I got promoted", "I got married"
  if (x == "have" || x == "has" || x == "had" || x == "got") return HaveObjectOk(c, j + 1);
  if (IsDurableVerb(x)) return HasContent(c, j + 1);
  if (!after_modal && IsPastForm(x) && !OneOf(x, {"was", "were", "did", "been"}))
    return HasContent(c, j + 1);
  return false;
}

// A promise of chat to keep the other informed ("I'll keep you posted",
// "we'll keep ya updated"): nothing to remember of the speaker.
bool KeepsPosted(const Ctx& c, std::size_t j) {
  return c.at(j) == "keep" && OneOf(c.at(j + 1), {"you", "ya", "u", "y'all", "everyone"}) &&
         OneOf(c.at(j + 2), {"posted", "updated", "informed", "in"});
}

bool WillOk(const Ctx& c, std::size_t j) {
  j = SkipAdverbs(c, j, false);
  if (KeepsPosted(c, j)) return false;
  if (c.role == Role::kAssistant) return j < c.n() && HasContent(c, j + 1);
  const std::string& x = c.at(j);
  if (x == "be") return BeOk(c, j + 1);
  return IsDurableVerb(x) && HasContent(c, j + 1);
}

bool WouldOk(const Ctx& c, std::size_t j) {
  j = SkipAdverbs(c, j, false);
  const std::string& x = c.at(j);
  if (x == "been" || (IsPastForm(x) && x != "been")) return HaveAuxOk(c, j);  // "I'd been", "I'd moved"
  return c.role == Role::kAssistant && OneOf(x, {"recommend", "suggest", "advise"});
}

bool CanOk(const Ctx& c, std::size_t j) {
  j = SkipAdverbs(c, j, false);
  const std::string& x = c.at(j);
  if (x.empty() || IsExcludedVerb(x) || OneOf(x, {"imagine", "only", "be", "totally", "relate", "sense"}))
    return false;
  if (c.role == Role::kAssistant) return HasContent(c, j + 1);
  return (IsDurableVerb(x) || OneOf(x, {"swim", "drive", "code", "sing", "dance", "knit", "sew"})) &&
         HasContent(c, j + 1);
}

// "I", "we" and their contractions: the speaker as a subject.
bool IsFirstPersonSubject(std::string_view x) {
  return OneOf(x, {"i", "i'm", "i've", "i'll", "i'd", "we", "we're", "we've", "we'll", "we'd"});
}

// Checks the pattern after a first-person subject at words[k].
bool DurableAfterSubject(const Ctx& c, std::size_t k) {
  const std::string& subj = c.at(k);
  if (subj == "i'm" || subj == "we're") return BeOk(c, k + 1);
  if (subj == "i've" || subj == "we've") return HaveAuxOk(c, k + 1);
  if (subj == "i'll" || subj == "we'll") return WillOk(c, k + 1);
  if (subj == "i'd" || subj == "we'd") return WouldOk(c, k + 1);
  if (BoundaryAfter(c.s, c.w, k)) return false;  // "I, for one, ..."
  const std::size_t j = SkipAdverbs(c, k + 1, false);
  const std::string& x = c.at(j);
  if (x == "am" || x == "are" || x == "was" || x == "were") return BeOk(c, j + 1);
  if (x == "have" || x == "has") return HaveAuxOk(c, j + 1) || HaveObjectOk(c, j + 1);
  if (x == "will" || x == "shall") return WillOk(c, j + 1);
  if (x == "would") return WouldOk(c, j + 1);
  if (x == "can") return CanOk(c, j + 1);
  if (x == "can't" || x == "cannot") return c.role == Role::kUser && VerbOk(c, j + 1, true);
  if (x == "do" || x == "did") return c.at(j + 1) == "not" && VerbOk(c, j + 2, true);
  if (x == "don't" || x == "didn't" || x == "never") return VerbOk(c, j + 1, true);
  if (x == "used") return c.at(j + 1) == "to" && VerbOk(c, j + 2, true);
  if (x.empty() || IsModal(x)) return false;
  return VerbOk(c, j, false);
}

bool IsPossessiveTopic(std::string_view w) {
  if (w.size() > 2 && w.substr(w.size() - 2) == "'s") w.remove_suffix(2);  // "my dog's name"
  // A short form of chat stands for its word: "my bday is ...", "my fam ...".
  if (const std::string_view full = text::FullForm(w); !full.empty()) w = full;
  static const std::unordered_set<std::string_view> kTopics = {
      "name", "job", "work", "favorite", "favourite", "hobby", "hobbies", "passion", "home",
      "house", "apartment", "car", "birthday", "goal", "dream", "company", "team", "boss",
      "business", "major", "degree", "school", "band", "project", "garden", "wife", "husband",
      "partner", "boyfriend", "girlfriend", "fiance", "fiancé", "fiancee", "spouse", "kids", "kid",
      "children", "child", "son", "sons", "daughter", "daughters", "mom", "mother", "mum", "dad",
      "father", "parents", "brother", "brothers", "sister", "sisters", "siblings", "grandma",
      "grandmother", "grandpa", "grandfather", "grandparents", "aunt", "uncle", "cousin", "niece",
      "nephew", "baby", "twins", "family", "dog", "dogs", "cat", "cats", "puppy", "kitten", "pet",
      "pets", "parrot", "rabbit", "hamster", "horse", "bird", "turtle", "best", "hometown",
      "neighborhood", "neighbourhood", "city", "town",
      // the people of work, home and care, and what an assistant keeps track of
      "manager", "supervisor", "coworker", "coworkers", "colleague", "colleagues", "roommate",
      "roommates", "flatmate", "landlord", "neighbor", "neighbors", "neighbour", "neighbours",
      "mentor", "coach", "teacher", "doctor", "dentist", "therapist", "office", "shift", "commute",
      "salary", "rent", "flight", "appointment", "allergy", "allergies", "diet", "medication",
      "wedding", "anniversary", "deadline", "exam", "thesis", "surgery", "gym", "bike", "laptop",
      "phone"};
  return kTopics.count(w) > 0;
}

bool IsObjectContext(std::string_view prev) {
  static const std::vector<std::string_view> kObjectContext = {
      "to",        "for",       "with",  "at",      "from",    "about",  "tell",   "told",
      "send",      "sent",      "give",  "gave",    "show",    "showed", "help",   "helped",
      "recommend", "ask",       "asked", "call",    "remind",  "meet",   "met",    "visit",
      "see",       "saw",       "join",  "invite",  "invited", "thank",  "teach",  "taught",
      "bring",     "introduce", "let",   "support", "guide",   "update", "inform", "keep",
      "have",      "has",       "had",   "behind",  "in",      "on",     "cheer",  "treat",
      "wish",      "wishing",   "take",  "taking"};
  return OneOf(prev, kObjectContext);
}

// True for "Mel and I", "my husband and I" (a plural subject, no agreement),
// false for "My name is Caroline and I live ..." (a new clause).
bool PluralSubject(const Ctx& c, std::size_t k, std::size_t start) {
  if (k < start + 2 || c.at(k - 1) != "and") return false;
  std::size_t j = k - 2;  // last word of the partner phrase
  if (!IsCapitalised(c.w[j]) && !IsPossessiveTopic(c.at(j)) && !OneOf(c.at(j), {"friend", "friends"}))
    return false;
  while (j > start && OneOf(c.at(j - 1), {"my", "our", "the", "his", "her", "their"})) --j;
  if (j == start || BoundaryAfter(c.s, c.w, j - 1)) return true;
  return OneOf(c.at(j - 1), {"yesterday", "today", "then", "so", "but", "when", "and", "recently",
                             "finally", "weekend", "week", "night", "year", "month", "morning"});
}

std::string Conjugate(const Word& w) {
  const std::string& x = w.lower;
  if (x == "am") return "is";
  if (x == "wanna") return "wants to";  // "I wanna start": no "wannas"
  if (x == "gotta") return "has to";
  if (x == "gonna") return "is going to";
  if (x == "have" || x == "do" || x == "don't" || x == "haven't") return ThirdPersonSingular(x);
  if (w.text != w.lower || !IsAlphaWord(x) || text::IsStopword(x)) return w.text;
  return ThirdPersonSingular(x);
}

bool WordChar(unsigned char ch) { return std::isalnum(ch) || ch >= 0x80; }

// Which words lie inside a closed quotation ("...", “...”, '...', ‘...’):
// a title or a quoted saying keeps its words ("I watched 'My Octopus
// Teacher'" is not Caroline's Octopus Teacher). A single quote opens only
// before a word and after none, and closes only after one (so "I'm" and
// "the kids' toys" are no quotes); a quotation left open is none.
std::vector<bool> QuotedWords(std::string_view s, const std::vector<Word>& words) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // [open, close) byte offsets
  std::size_t open = std::string_view::npos;
  char kind = 0;  // '"' or '\'' while open
  auto byte = [&](std::size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0; };
  for (std::size_t i = 0; i < s.size(); ++i) {
    char q = 0;
    bool opening = false, closing = false;
    std::size_t len = 1;
    if (s[i] == '"') {
      q = '"';
      opening = closing = true;
    } else if (s.compare(i, 3, "\xE2\x80\x9C") == 0 || s.compare(i, 3, "\xE2\x80\x9D") == 0) {
      q = '"';
      len = 3;
      opening = s[i + 2] == '\x9C';
      closing = !opening;
    } else if (s[i] == '\'' || s.compare(i, 3, "\xE2\x80\x98") == 0 || s.compare(i, 3, "\xE2\x80\x99") == 0) {
      q = '\'';
      len = s[i] == '\'' ? 1 : 3;
      const bool before = i > 0 && WordChar(byte(i - 1));
      const bool after = WordChar(byte(i + len));
      opening = !before && after;
      closing = before && !after;
    }
    if (q == 0) continue;
    if (open == std::string_view::npos && opening) {
      open = i;
      kind = q;
    } else if (open != std::string_view::npos && closing && q == kind) {
      spans.emplace_back(open, i);
      open = std::string_view::npos;
    }
    i += len - 1;
  }
  std::vector<bool> out(words.size(), false);
  for (std::size_t k = 0; k < words.size(); ++k) {
    for (const auto& [a, b] : spans) out[k] = out[k] || (words[k].begin > a && words[k].end <= b);
  }
  return out;
}

// True when the sentence's subject at `start` is a pronoun pointing back to
// what was said before it ("It reminds me ...", "That's why ...", "They
// always ...", "This is where ..."): the fact cannot say what it stands for.
// A demonstrative before a noun names its thing ("This book I read ...").
bool DanglingSubject(const Ctx& c, std::size_t start) {
  const std::string& x = c.at(start);
  if (OneOf(x, {"it", "it's", "its", "they", "they're", "they've", "she", "she's", "he", "he's",
                "there", "there's", "that's", "this's"}))
    return true;
  if (x != "this" && x != "that") return false;
  const std::string& next = c.at(start + 1);
  return OneOf(
      next, {"is",    "was",   "has",   "had",   "made",   "makes", "reminds", "reminded",  "gets",
             "got",   "means", "meant", "helps", "helped", "gives", "gave",    "keeps",     "kept",
             "takes", "took",  "feels", "felt",  "really", "just",  "always",  "definitely"});
}

// True when words [from, end) point back to something the sentence named
// before `from` ("... and Evan got it as a gift", "Tim loves their work"):
// a fact starting at `from` would lose what they stand for.
bool PointsBack(const Ctx& c, std::size_t from) {
  for (std::size_t k = from; k < c.n(); ++k) {
    const std::string& x = c.at(k);
    if (OneOf(x, {"it", "them", "their", "theirs", "her", "him", "these", "those", "there"}))
      return true;
    if ((x == "that" || x == "this") &&
        (BoundaryAfter(c.s, c.w, k) || OneOf(c.at(k + 1), {"happen", "happens", "happened"})))
      return true;  // "... help make that happen"
    if (x == "one" && k > from &&
        OneOf(c.at(k - 1), {"get", "got", "have", "had", "buy", "bought", "want", "need", "take",
                            "took", "find", "found", "adopt", "adopted", "pick", "picked"}))
      return true;  // "... I'll definitely get one someday"
  }
  return false;
}

// How many words of [from, to) carry content (not stopwords, weak words or adverbs).
std::size_t ContentWords(const Ctx& c, std::size_t from, std::size_t to) {
  std::size_t n = 0;
  for (std::size_t k = from; k < to && k < c.n(); ++k) {
    const std::string& x = c.at(k);
    n += !text::IsStopword(x) && !IsWeakWord(x) && !IsAdverb(x) ? 1 : 0;
  }
  return n;
}

// True when a mark that parts clauses or phrases (a comma, a dash, a semicolon,
// a colon, a bracket) or a sentence's end lies between words i and i + 1.
bool PartedAfter(const Ctx& c, std::size_t i) {
  if (i + 1 >= c.n()) return true;
  if (BoundaryAfter(c.s, c.w, i)) return true;
  const std::string_view gap = c.s.substr(c.w[i].end, c.w[i + 1].begin - c.w[i].end);
  return gap.find_first_of(",;:-()") != std::string_view::npos ||
         gap.find("\xE2\x80\x93") != std::string_view::npos ||  // en dash
         gap.find("\xE2\x80\x94") != std::string_view::npos;    // em dash
}

// True when the clause of the speaker's subject at `k` says nothing but what
// a bare pronoun as its object stands for ("I first watched it around 2019",
// "I'm going to check it out", "I never want to go through this again",
// "I've been waiting for this for a long time"): at most two words (its
// verbs) between the subject and the pronoun, and after the pronoun, up to
// the clause's end, nothing of content but numbers, time words, particles
// and the nouns of "give it a try". A demonstrative before a noun names its
// thing ("I made this bowl", "this month"), "like this" compares ("photos
// like this"), and "that" inside a clause is as often a relative pronoun; a
// clause of "when" or "because" says more ("I love it when you cook"); a
// pronoun after a mark or a link is another clause's subject ("... to the
// museum - it was so cool"); and words before the subject (from `start`)
// may name what it stands for ("The car project is doing well - I just
// finished restoring it").
bool DanglingObject(const Ctx& c, std::size_t start, std::size_t k) {
  if (ContentWords(c, start, k) >= 2) return false;
  std::size_t before = 0;
  std::size_t j = k + 1;
  for (; j < c.n(); ++j) {
    const std::string& x = c.at(j);
    if (OneOf(x, {"and", "but", "so", "because", "cause"})) return false;
    if (OneOf(x, {"it", "them", "this", "that", "these", "those"}) && c.at(j - 1) != "like") {
      // ("that" is as often a relative pronoun: "a movie that was awesome")
      const std::string& next = c.at(j + 1);
      if (x != "it" && x != "them" && !PartedAfter(c, j) &&
          (x == "that" || (!text::IsStopword(next) && !IsAdverb(next))))
        return false;  // "this bowl"
      break;
    }
    // (An assistant's offer is its fact: "I'm happy to help you with that.")
    if (c.role == Role::kAssistant && OneOf(x, {"help", "assist", "explain", "support", "answer"}))
      return false;
    if (!text::IsStopword(x) && !IsWeakWord(x) && !IsAdverb(x) && ++before > 2) return false;
    if (PartedAfter(c, j)) return false;
  }
  if (j >= c.n()) return false;
  for (bool parted = PartedAfter(c, j++); !parted && j < c.n(); parted = PartedAfter(c, j++)) {
    const std::string& x = c.at(j);
    if (OneOf(x, {"and", "but", "so"})) break;
    // (Particles, durations and the nouns of "give it a try")
    if (OneOf(x, {"around", "out", "up", "down", "off", "over", "away", "again", "through", "long",
                  "while", "try", "shot", "go", "whirl"}))
      continue;
    if (!text::IsStopword(x) && !IsWeakWord(x) && !IsAdverb(x) && !IsNumber(x) && !IsTimeWord(x))
      return false;
  }
  return true;
}

// Where the fact of a sentence with a dangling subject starts: at the first
// clause whose subject is the speaker and that states something durable,
// when a link or a mark opens it ("It reminds me why I love being a mom":
// "I love being a mom"; "It was a setback, but I'm trying to stay
// positive"; "It turns out I have a gluten intolerance"). The sentence stays whole without such a
// clause, and when the clause points back to what the sentence named before it or says less than
// the words before it. Not a clause of time or condition ("... even when I make mistakes"), of
// purpose ("... so I can write better"), of "since" ("It's been forever since I've been in
// nature"), a relative clause ("a painting that I finished", "a world where
// I'm ..."), nor the speaker as part of a plural subject ("She and I").
std::size_t OwnClause(const Ctx& c, std::size_t start) {
  if (!DanglingSubject(c, start)) return start;
  for (std::size_t k = start + 2; k < c.n(); ++k) {
    if (!IsFirstPersonSubject(c.at(k))) continue;
    const std::string& before = c.at(k - 1);
    const bool opens = BoundaryAfter(c.s, c.w, k - 1) ||
                       OneOf(before, {"and", "but", "so", "why", "because", "plus", "though",
                                      "although", "cause", "cuz"}) ||
                       (before == "that" && OneOf(c.at(k - 2), {"now", "out"})) ||
                       (before == "out" && OneOf(c.at(k - 2), {"turns", "turned"})) ||
                       (before == "where" &&
                        OneOf(c.at(k - 2), {"is", "was", "it's", "that's", "this's", "there's"}));
    const bool plural = before == "and" && k == start + 2;
    const bool purpose = before == "so" && OneOf(c.at(k + 1), {"can", "could"});
    if (!opens || plural || purpose || !DurableAfterSubject(c, k)) continue;
    // The clause says more than what it would leave out ("It was close until the final buzzer but
    // we got the win" stays whole), and names what it speaks of.
    return ContentWords(c, k, c.n()) > ContentWords(c, start, k) && !PointsBack(c, k) ? k : start;
  }
  return start;
}

// The first word after "I (just) wanted to tell you (that)", "I have to let
// you know", "I gotta tell ya", "(As) you know (that)" when a first-person
// clause follows; `start` otherwise.
std::size_t AfterTellingYou(const Ctx& c, std::size_t start) {
  std::size_t j = start;
  if (c.at(j) == "as") ++j;
  if (c.at(j) == "you" && c.at(j + 1) == "know") {
    j += 2;  // "You know I hate cilantro", "As you know I ..."
  } else if (c.at(j) == "i") {
    j = SkipAdverbs(c, j + 1, false);
    if (OneOf(c.at(j), {"wanted", "want", "have", "had", "got", "need", "needed"}) &&
        c.at(j + 1) == "to") {
      j += 2;
    } else if (OneOf(c.at(j), {"gotta", "must"})) {
      ++j;
    } else {
      return start;
    }
    if (!OneOf(c.at(j), {"tell", "let"}) || !OneOf(c.at(j + 1), {"you", "ya", "y'all"}))
      return start;
    j += 2;
    if (c.at(j) == "know") ++j;
  } else {
    return start;
  }
  if (c.at(j) == "that") ++j;
  if (j < c.n() && IsFirstPersonSubject(c.at(j)) && DurableAfterSubject(c, j)) return j;
  return start;
}

// The text without markdown's bold markers ("**bold**"), which a chat
// client's messages carry and a fact does not need. Underscores stay:
// "__init__.py" is a file name more often than emphasis.
std::string WithoutEmphasis(std::string_view s) {
  if (s.find("**") == std::string_view::npos) return std::string(s);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '*' && i + 1 < s.size() && s[i + 1] == '*') {
      while (i + 1 < s.size() && s[i + 1] == '*') ++i;
      continue;
    }
    out += s[i];
  }
  // Spaces the markers leave doubled or before punctuation.
  std::string tidy;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == ' ' && (tidy.empty() || tidy.back() == ' ')) continue;
    if (out[i] == ' ' && i + 1 < out.size() && std::strchr(".,;:!?", out[i + 1]) != nullptr) continue;
    tidy += out[i];
  }
  return tidy;
}

// Whether only a comma (and spaces) separates word i from the next.
bool CommaAfter(const Ctx& c, std::size_t i) {
  if (i + 1 >= c.n()) return false;
  const std::string_view gap = c.s.substr(c.w[i].end, c.w[i + 1].begin - c.w[i].end);
  return gap.find_first_not_of(" ,") == std::string_view::npos &&
         gap.find(',') != std::string_view::npos;
}

// A determiner or possessive before a noun ("the", "my", "this").
bool IsDeterminer(std::string_view x) {
  return OneOf(x, {"a", "an", "the", "my", "his", "her", "their", "our", "your", "this", "that",
                   "these", "those", "some"});
}

// A word that opens a clause of its own subject ("... when you cook and
// clean", "... that they love and share", "they're a great escape and get
// ..."), contracted or not.
bool IsClauseOpener(std::string_view x) {
  x = x.substr(0, x.find('\''));
  return OneOf(x, {"you",      "he",    "she",  "they", "we",      "it",     "i",      "who",
                   "that",     "which", "when", "if",   "because", "while",  "where",  "since",
                   "whenever", "what",  "how",  "so",   "until",   "unless", "though", "although"});
}

std::string Rewrite(const Ctx& c, std::size_t start, std::size_t end, const std::string& name,
                    const std::string& listener) {
  std::string out;
  bool conjugate = false;
  std::string next_as;  // what the next word becomes ("you are" -> "<listener> is")
  bool second_predicate = false;  // after the speaker's conjugated verb, in its clause
  std::size_t agree_at = end;     // a verb of a second predicate ("and meditate")
  bool we_seen = false;
  const std::string others = name + " and others";
  const std::vector<bool> quoted = QuotedWords(c.s, c.w);
  std::size_t pos = c.w[start].begin;
  for (std::size_t k = start; k < end; ++k) {
    out.append(c.s.substr(pos, c.w[k].begin - pos));
    pos = c.w[k].end;
    if (quoted[k]) {
      out += c.w[k].text;
      conjugate = false;
      next_as.clear();
      continue;
    }
    if (!next_as.empty()) {
      out += next_as;
      next_as.clear();
      continue;
    }
    const std::string& x = c.at(k);
    const std::string& next = c.at(k + 1);
    const bool participle_next = next == "been" || IsPastForm(next);
    if (conjugate) {
      if (IsAdverb(x) || IsLyAdverb(x) || (x == "no" && next == "longer") ||
          (x == "longer" && k > 0 && c.at(k - 1) == "no")) {
        out += c.w[k].text;
        continue;
      }
      const std::string said = Conjugate(c.w[k]);
      // A second predicate of the same subject agrees too ("practices yoga
      // and meditates"); not after a verb that keeps its form ("will cook
      // and clean", "doesn't smoke or drink") or takes a bare infinitive.
      second_predicate = said != c.w[k].text && !OneOf(x, {"don't", "haven't", "help", "let",
                                                           "make", "watch", "see", "hear"});
      out += said;
      conjugate = false;
      continue;
    }
    if (second_predicate) {
      if (OneOf(x, {"and", "or", "but"}) && k > start &&
          (!BoundaryAfter(c.s, c.w, k - 1) || CommaAfter(c, k - 1))) {
        std::size_t j = k + 1;
        while (j < end && (IsAdverb(c.at(j)) || IsLyAdverb(c.at(j)) || c.at(j) == "then")) ++j;
        const bool object_follows =
            j + 1 < end && !BoundaryAfter(c.s, c.w, j) &&
            (IsDeterminer(c.at(j + 1)) || OneOf(c.at(j + 1), {"it", "him", "them"}));
        if (j < end && !quoted[j] && !IsCapitalised(c.w[j]) &&
            IsCoordinatedVerb(c.at(j), object_follows))
          agree_at = j;
      } else if (IsClauseOpener(x) || (BoundaryAfter(c.s, c.w, k) && !CommaAfter(c, k)) ||
                 (x == "to" && k + 1 < end && !IsCapitalised(c.w[k + 1]) && !IsDeterminer(next))) {
        // A new clause, or an infinitive ("loves to cook and bake"; not "to Berlin").
        second_predicate = false;
      }
    }
    if (k == agree_at) {
      out += ThirdPersonSingular(x);
      continue;
    }
    if (x == "i") {
      out += name;  // no agreement for "Mel and I love ..." (plural subject)
      conjugate = !BoundaryAfter(c.s, c.w, k) && !PluralSubject(c, k, start);
    } else if (x == "i'm" || x == "i've") {
      // ("I'm vegan and cook ...", "I've cut down on meat and mostly eat
      // fish": a later predicate of the speaker agrees as after "I".)
      out += name + (x == "i'm" ? " is" : " has");
      second_predicate = true;
    } else if (x == "i'll")
      out += name + " will";
    else if (x == "i'd") out += name + (participle_next ? " had" : " would");
    else if (x == "me") out += name;
    else if (x == "my" || x == "mine") out += name + "'s";
    else if (x == "myself") out += "themself";
    else if (x == "we" || x == "we're" || x == "we've" || x == "we'll" || x == "we'd") {
      we_seen = true;
      out += others;
      if (x == "we're") out += " are";
      if (x == "we've") out += " have";
      if (x == "we'll") out += " will";
      if (x == "we'd") out += participle_next ? " had" : " would";
    } else if (x == "us" && c.w[k].text != "US") out += others;
    else if (x == "our") out += we_seen ? "their" : name + "'s";
    else if (x == "ours") out += name + "'s";
    else if (x == "ourselves") out += "themselves";
    else if (!listener.empty() && (x == "your" || x == "yours")) out += listener + "'s";
    else if (!listener.empty() && x == "yourself") out += listener;
    else if (!listener.empty() && x == "you" && k > start && IsObjectContext(c.at(k - 1)))
      out += listener;
    // The listener as a subject, where "you" cannot be anyone: its
    // contractions, and a past ("as you suggested", "what you told me");
    // a present "you" is often anyone ("you never know").
    else if (!listener.empty() && (x == "you're" || x == "you've" || x == "you'll" || x == "you'd")) {
      out += listener;
      if (x == "you're") out += " is";
      if (x == "you've") out += " has";
      if (x == "you'll") out += " will";
      if (x == "you'd") out += participle_next ? " had" : " would";
    } else if (!listener.empty() && x == "you" && !BoundaryAfter(c.s, c.w, k) &&
               (next == "are" || next == "were")) {
      out += listener;  // as "you're" ("just like you are doing", "while you were winning")
      next_as = next == "are" ? "is" : "was";
    } else if (!listener.empty() && x == "you" && !BoundaryAfter(c.s, c.w, k) &&
               ((next.size() > 3 && next.compare(next.size() - 2, 2, "ed") == 0 &&
                 IsPastForm(next)) ||
                OneOf(next, {"said", "told", "sent", "gave", "wrote", "made", "taught", "found",
                             "brought", "got", "knew", "thought", "showed", "shared"})))
      out += listener;
    else out += c.w[k].text;
  }
  if (end == c.n()) out.append(c.s.substr(pos));
  out = WithoutEmphasis(out);
  // Tidy: trim, capitalise, end with one period.
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  while (!out.empty() && out.back() == '!') out.pop_back();
  if (out.empty()) return out;
  if (out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 32);
  const char last = out.back();
  if (last != '.' && last != '?' && last != '"' && last != ')' && last != '\'') out += '.';
  return text::Truncate(out, kMaxFactBytes);
}

}  // namespace

std::string ExtractFact(std::string_view written, Role role, const std::string& speaker,
                        const std::string& listener) {
  const std::string casual = WithApostrophes(written);
  std::string_view sentence = WithoutQuestionTag(casual);
  if (speaker.empty() || IsQuestion(sentence)) return {};
  const std::vector<Word> words = SplitWords(sentence);
  std::size_t start = SkipLeadingFillers(sentence, words, FirstNameLower(listener));
  if (words.size() < start + 2) return {};
  const Ctx c{sentence, words, role};
  // "My name is Caroline and I ...", "I'm Caroline and I ...": the name is left
  // to the profile; the fact starts with the next clause (if any).
  if ((c.at(start) == "my" && OneOf(c.at(start + 1), {"name", "name's"})) ||
      (c.at(start) == "i'm" && start + 1 < c.n() && IsCapitalised(words[start + 1]))) {
    std::size_t k = start + 1;
    while (k < c.n() && c.at(k) != "and" && !BoundaryAfter(sentence, words, k - 1)) ++k;
    if (k < c.n() && c.at(k) == "and") ++k;
    start = k;
    if (words.size() < start + 2) return {};
  }
  // (The first word after a leading "and" or "but": "And here's a pic ...")
  const std::string& first = c.at(OneOf(c.at(start), {"and", "but"}) ? start + 1 : start);
  if (OneOf(first, {"if", "when", "whenever", "unless", "maybe", "perhaps", "please", "let's", "check", "look",
                    "here's"}))
    return {};  // conditions, suggestions, requests and "Check this pic I got ...", "Here's a pic I took"
  bool durable = false;
  for (std::size_t k = start; k < c.n() && !durable; ++k) {
    const std::string& x = c.at(k);
    if (IsFirstPersonSubject(x)) {
      durable = DurableAfterSubject(c, k) && !DanglingObject(c, start, k);
    } else if ((x == "my" || x == "our") &&
               (k == start || BoundaryAfter(sentence, words, k - 1) ||
                OneOf(c.at(k - 1), {"and", "but", "so", "because", "also"}))) {
      // "my name is X" is left to the profile ("Caroline's name is Caroline").
      durable = IsPossessiveTopic(c.at(k + 1)) && c.at(k + 1) != "name" && k + 3 <= c.n() &&
                HasContent(c, k + 2);
    }
  }
  if (!durable) return {};
  start = OwnClause(c, start);
  // A fact opens with what it says, not with the link to what was said
  // before it: "So I went to the tattoo parlor" -> "Audrey went to ...".
  if (OneOf(c.at(start), {"and", "but", "so", "well", "also", "plus", "btw"}) &&
      !BoundaryAfter(sentence, words, start) &&
      (IsFirstPersonSubject(c.at(start + 1)) || OneOf(c.at(start + 1), {"my", "our"}))) {
    ++start;
  }
  // The speaker telling the listener what follows: "I wanted to tell you I just joined a writers
  // group".
  start = AfterTellingYou(c, start);
  // A closing vocative goes: "I've had some tough times with my business, Jon."
  std::size_t end = c.n();
  const std::string vocative = FirstNameLower(listener);
  if (!vocative.empty() && end > start + 2 && c.at(end - 1) == vocative &&
      BoundaryAfter(sentence, words, end - 2))
    --end;
  std::string fact = Rewrite(c, start, end, speaker, listener);
  if (SplitWords(fact).size() < kMinFactWords) return {};
  return fact;
}

}  // namespace engram::builtin
