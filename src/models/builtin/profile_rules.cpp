// Profile rules of the built-in extractive engine (see profile_rules.hpp).
#include "models/builtin/profile_rules.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "core/wordnet.hpp"
#include "models/builtin/english.hpp"

namespace engram::builtin {
namespace {

constexpr std::size_t kMaxValueWords = 6;
constexpr std::size_t kMaxSlotValueBytes = 80;

using List = std::vector<std::string_view>;

const List kSubjects = {"i", "i'm", "i've", "we", "we're", "we've", "i'd", "we'd"};
const List kClauseWords = {"and", "but", "because", "since", "so", "when", "while", "where",
                           "which", "who", "that", "if", "though", "although", "until", "or",
                           "whenever", "as", "than", "after", "before", "cause", "whereas"};
const List kTimeWords = {"yesterday", "today", "tonight", "tomorrow", "recently", "lately", "now",
                         "soon", "again", "anymore", "last", "next", "this", "ago", "years",
                         "months", "weeks", "days", "every", "too", "also", "though"};
const List kFamily = {"wife", "husband", "partner", "boyfriend", "girlfriend", "fiance", "fiancé",
                      "fiancee", "spouse", "kids", "kid", "children", "child", "son", "sons",
                      "daughter", "daughters", "mom", "mother", "mum", "dad", "father", "parents",
                      "brother", "brothers", "sister", "sisters", "siblings", "grandma",
                      "grandmother", "grandpa", "grandfather", "grandparents", "aunt", "uncle",
                      "cousin", "niece", "nephew", "baby", "twins", "stepson", "stepdaughter"};
const List kPets = {"dog", "dogs", "cat", "cats", "puppy", "puppies", "kitten", "kittens",
                    "parrot", "rabbit", "bunny", "hamster", "horse", "fish", "goldfish", "bird",
                    "turtle", "tortoise", "snake", "lizard", "ferret", "chinchilla", "gecko",
                    "pony", "budgie", "hedgehog", "pup", "pets", "pet"};
const List kNonNames = {"american", "canadian", "british", "english", "french", "german",
                        "italian", "spanish", "mexican", "chinese", "japanese", "korean",
                        "indian", "australian", "irish", "scottish", "russian", "brazilian",
                        "dutch", "swedish", "polish", "vietnamese", "catholic", "christian",
                        "jewish", "muslim", "buddhist", "hindu", "i", "ok", "okay", "not",
                        "so", "sorry", "glad", "happy", "fine", "good", "here", "monday",
                        "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"};
const List kPronounObjects = {"it", "that", "this", "these", "those", "them", "him", "her", "you",
                              "your", "how", "what", "when", "where", "why", "who", "which", "so",
                              "too", "much", "seeing", "hearing", "being", "having", "getting",
                              "talking", "doing", "everything", "anything", "all", "my", "our",
                              "his", "their", "its", "one", "ones"};

// Words before a subject that make its clause relative: what follows the
// verb is not its object ("the things I love make writing fun", "a beach
// that I love - the sand ...", "those we love").
const List kRelativeHeads = {"that", "which", "what", "whatever", "things", "thing", "something",
                             "everything", "anything", "stuff", "those", "one", "ones", "people",
                             "someone", "everyone", "place", "places"};
// Verbs too light to say what someone likes without their object ("I love
// going on road trips" gives "going", cut at "on"; "I'd rather wait").
const List kLightVerbs = {"go", "going", "come", "coming", "get", "getting", "make", "making", "do",
                          "doing", "have", "having", "be", "being", "turn", "wait", "try", "trying",
                          "work", "working", "see", "seeing", "take", "taking", "keep", "keeping",
                          "start", "starting", "stay", "staying", "sharing", "share", "use", "using"};
// Qualities of something else, liked alone ("I love the color and
// texture", "I really like the idea and the acting"): no interest of the
// speaker's by themselves ("the connection to nature" is one).
const List kQualities = {"idea", "color", "colour", "colors", "colours", "texture", "taste", "smell",
                         "sound", "look", "looks", "feel", "feeling", "vibe", "vibes", "atmosphere",
                         "energy", "rush", "connection", "freedom", "way", "concept", "detail",
                         "details", "design", "style", "acting", "story", "message", "thought", "thoughts"};
// Prepositions that are no stopwords, left at a phrase's end when it is cut
// ("going to this park near").
const List kTrailingPrepositions = {"near", "around", "across", "behind", "beside", "beyond", "inside",
                                    "outside", "toward", "towards", "upon", "within", "without", "along",
                                    "among", "like"};
// Words that end an item of a liking ("hiking with friends": "hiking").
const List kItemStops = {"with", "because", "especially", "like", "at", "on", "for"};
// A value's first word when it opens a clause of its own ("... and it'd be
// great to share it", "... and it's much easier").
const List kClauseOpeners = {"it's", "it'd", "it'll", "that's", "there's", "here's", "is", "are", "was",
                             "were", "makes", "make", "has", "have", "had", "can", "will", "would"};

bool IsJobNoun(std::string_view w) {
  static const List kJobs = {
      "nurse", "doctor", "teacher", "chef", "lawyer", "engineer", "developer", "designer",
      "artist", "writer", "student", "manager", "consultant", "programmer", "scientist",
      "researcher", "professor", "accountant", "pilot", "firefighter", "officer", "cook",
      "baker", "barista", "painter", "musician", "photographer", "therapist", "counselor",
      "counsellor", "dentist", "pharmacist", "veterinarian", "vet", "mechanic", "electrician",
      "plumber", "carpenter", "farmer", "journalist", "editor", "librarian", "analyst",
      "architect", "entrepreneur", "founder", "ceo", "cto", "intern", "freelancer", "nanny",
      "caregiver", "worker", "coach", "trainer", "instructor", "tutor", "actor", "actress",
      "singer", "dancer", "athlete", "soldier", "clerk", "cashier", "driver", "waiter",
      "waitress", "bartender", "paramedic", "surgeon", "physician", "psychologist", "author",
      "poet", "director", "producer", "administrator", "secretary", "assistant", "technician",
      "salesperson", "realtor", "agent", "banker", "broker", "economist", "professional",
      "volunteer", "nutritionist", "mentor", "principal", "lecturer", "student", "miner",
      "fisherman", "builder", "tailor", "hairdresser", "stylist", "guide", "sculptor", "potter"};
  if (OneOf(w, kJobs)) return true;
  const auto ends = [&](std::string_view suf) {
    return w.size() > suf.size() + 2 && w.substr(w.size() - suf.size()) == suf;
  };
  return (ends("ist") && !OneOf(w, {"list", "twist", "wrist"})) || ends("eer") || ends("ician") ||
         ends("grapher");
}

struct Ctx {
  std::string_view s;
  const std::vector<Word>& w;
  std::string vocative;  // the listener's first name, lower-cased ("" when not known)
  std::size_t n() const { return w.size(); }
  const std::string& at(std::size_t j) const {
    static const std::string kEmpty;
    return j < w.size() ? w[j].lower : kEmpty;
  }
};

// True when a first-person subject precedes words[p] closely (within `window`
// words, no clause punctuation in between).
bool SubjectBefore(const Ctx& c, std::size_t p, std::size_t window = 4) {
  for (std::size_t back = 1; back <= window && back <= p; ++back) {
    const std::size_t k = p - back;
    if (BoundaryAfter(c.s, c.w, k) && back > 1) return false;
    if (OneOf(c.at(k), kSubjects)) return true;
  }
  return false;
}

// True when the first-person subject closest before words[p] heads a
// relative clause (see kRelativeHeads).
bool InRelativeClause(const Ctx& c, std::size_t p, std::size_t window = 4) {
  for (std::size_t back = 1; back <= window && back <= p; ++back) {
    const std::size_t k = p - back;
    if (!OneOf(c.at(k), kSubjects)) continue;
    return k > 0 && OneOf(c.at(k - 1), kRelativeHeads) && !BoundaryAfter(c.s, c.w, k - 1);
  }
  return false;
}

bool Negated(const Ctx& c, std::size_t p) {
  for (std::size_t back = 1; back <= 3 && back <= p; ++back) {
    if (OneOf(c.at(p - back), {"don't", "not", "never", "didn't", "can't", "won't", "would", "i'd"}))
      return true;
  }
  return false;
}

// End (exclusive) of a phrase starting at `from`: at most max_words, stopping
// before a clause/time word or `stops`, and after clause punctuation. Trailing
// stopwords and adverbs are trimmed. Returns `from` when empty.
std::size_t PhraseEnd(const Ctx& c, std::size_t from, std::size_t max_words, const List& stops,
                      bool allow_cap_links = false) {
  std::size_t e = from;
  while (e < c.n() && e - from < max_words) {
    const std::string& x = c.at(e);
    const bool link = allow_cap_links && OneOf(x, {"in", "near", "of", "outside"}) &&
                      e + 1 < c.n() && IsCapitalised(c.w[e + 1]) && e > from;
    // ("that's", "who's": a clause word with its verb)
    const std::string_view head = std::string_view(x).substr(0, x.find('\''));
    if (!link && e > from && (OneOf(head, kClauseWords) || OneOf(x, kTimeWords) || OneOf(x, stops)))
      break;
    if (e > from && x == "right" && c.at(e + 1) == "now") break;
    ++e;
    if (BoundaryAfter(c.s, c.w, e - 1)) break;
  }
  while (e > from && (text::IsStopword(c.at(e - 1)) || IsAdverb(c.at(e - 1)) ||
                      OneOf(c.at(e - 1), kTrailingPrepositions)))
    --e;
  return e;
}

// End of a run of capitalised name words at `from` (at most max), `from` if none.
std::size_t NameEnd(const Ctx& c, std::size_t from, std::size_t max) {
  std::size_t e = from;
  while (e < c.n() && e - from < max && IsCapitalised(c.w[e]) && !OneOf(c.at(e), kNonNames)) {
    ++e;
    if (BoundaryAfter(c.s, c.w, e - 1)) break;
  }
  return e;
}

// A value in the third person: a profile line is read by a model as said of
// the user, so "running my own studio" is "running their own studio". ""
// for a value that speaks to someone ("show you a photo"): no trait of the
// speaker; nor one whose pronoun points back to what was said before it
// ("doing it"): a profile line cannot say what it stands for. A
// demonstrative becomes "the" ("this amazing raspberry tart": the one a
// photo showed).
std::string ThirdPersonValue(const std::string& value) {
  std::string out;
  std::size_t pos = 0;
  const std::vector<Word> words = SplitWords(value);
  for (std::size_t k = 0; k < words.size(); ++k) {
    const Word& w = words[k];
    if (OneOf(w.lower, {"you", "your", "yours", "yourself", "you're", "you've", "you'll", "you'd",
                        "it", "them"}))
      return {};
    const char* with = nullptr;
    // ("those" stays: "helping those in need" names no thing shown.)
    if (w.lower == "this" || w.lower == "these") {
      // A pronoun ("doing this", "doing this every day") points back; a determiner names its thing.
      if (k + 1 == words.size() || text::IsStopword(words[k + 1].lower)) return {};
      with = "the";
    } else if (w.lower == "my" || w.lower == "our")
      with = "their";
    else if (w.lower == "mine" || w.lower == "ours") with = "theirs";
    else if (w.lower == "me" || w.lower == "us") with = "them";
    else if (w.lower == "myself" || w.lower == "ourselves") with = "themselves";
    if (with == nullptr || (w.lower == "us" && w.text == "US")) continue;
    out.append(value, pos, w.begin - pos);
    out += with;
    pos = w.end;
  }
  out.append(value, pos);
  return out;
}

void Push(std::vector<SlotHit>& out, std::string dim, const std::string& value) {
  const std::string said = ThirdPersonValue(value);
  if (said.empty()) return;
  out.push_back({std::move(dim), text::Truncate(said, kMaxSlotValueBytes)});
}

// True when words [b, e) cannot be what someone likes or prefers: a clause
// of its own ("it'd be great to share") or one light verb alone ("going").
bool NoLiking(const Ctx& c, std::size_t b, std::size_t e) {
  return b >= e || OneOf(c.at(b), kClauseOpeners) || (e == b + 1 && OneOf(c.at(b), kLightVerbs));
}

bool HasCapital(const Ctx& c, std::size_t b, std::size_t e) {
  for (std::size_t k = b; k < e; ++k)
    if (IsCapitalised(c.w[k])) return true;
  return false;
}

// WordNet's lexicographer file of places (noun.location).
constexpr int kPlaceFile = 15;

// Where the longest run of words from b (to e at most) ends that WordNet
// names as one place by its most frequent noun sense and that no kind of
// place is below ("porto", "new york", the "lisbon" of "lisbon now"; not
// "city" or "town", which are kinds, nor a phrase opening with a stopword):
// b when there is none. A writer in lower case names places so.
std::size_t PlaceEnd(const Ctx& c, std::size_t b, std::size_t e) {
  const wordnet::WordNet* wn = wordnet::WordNet::Default();
  // ("the city" is London's, in WordNet: a place's name opens with no stopword.)
  if (wn == nullptr || b >= e || text::IsStopword(c.at(b))) return b;
  wordnet::ExpandOptions kinds;
  kinds.hyponym_depth = 1;
  kinds.max_senses = 1;
  for (std::size_t k = std::min(e, b + 3); k > b; --k) {
    std::string joined;
    for (std::size_t i = b; i < k; ++i) joined += (i > b ? "_" : "") + c.at(i);
    if (wn->NounClass(joined) != kPlaceFile) continue;
    const auto related = wn->Expand(joined, kinds);
    if (std::none_of(related.begin(), related.end(), [](const wordnet::RelatedWord& r) {
          return r.relation == wordnet::Relation::kHyponym;
        }))
      return k;
  }
  return b;
}

// Splits an object phrase "hiking, painting and jazz" into items.
void PushItems(const Ctx& c, std::size_t from, const std::string& dim, const std::string& prefix,
               std::vector<SlotHit>& out) {
  if (from >= c.n() || OneOf(c.at(from), kPronounObjects)) return;
  std::size_t k = from;
  for (int items = 0; k < c.n() && items < 4; ++items) {
    while (k < c.n() && OneOf(c.at(k), {"a", "an", "the", "my", "our", "some", "and", "or"})) ++k;
    std::size_t e = PhraseEnd(c, k, 5, kItemStops);
    if (e == k) return;
    // Cut by its length in the middle of a phrase ("making jewelry out of
    // recycled" of "... recycled stuff"): the words before that phrase.
    if (e == k + 5 && e < c.n() && !BoundaryAfter(c.s, c.w, e - 1) && !IsCapitalised(c.w[e - 1])) {
      const List links = {"of", "out", "in", "with", "for", "to", "from", "on", "at"};
      std::size_t cut = e - 1;
      while (cut > k + 1 && !OneOf(c.at(cut), links)) --cut;
      while (cut > k + 1 && OneOf(c.at(cut - 1), links)) --cut;  // "out of"
      if (cut > k + 1) e = cut;
    }
    // Adjectives in a row before their noun: "creating a safe, inviting
    // place" is one item, not "creating a safe" and "inviting place".
    if (e >= k + 2 && e < c.n() && OneOf(c.at(e - 2), {"a", "an", "the"}) &&
        IsAdjectiveWord(c.at(e - 1)) && BoundaryAfter(c.s, c.w, e - 1) &&
        c.s.substr(c.w[e - 1].end, 1) == ",") {
      const std::size_t noun = PhraseEnd(c, e, 4, kItemStops);
      if (noun >= e + 2) e = noun;
    }
    // A light verb takes its place or thing along: "going on road trips",
    // "working with kids".
    if (e == k + 1 && OneOf(c.at(k), kLightVerbs) && OneOf(c.at(e), {"on", "to", "for", "into", "with", "at"}) &&
        !BoundaryAfter(c.s, c.w, k)) {
      const std::size_t more = PhraseEnd(c, e + 1, 4, kItemStops);
      if (more > e + 1) e = more;
    }
    // ... and a verb its particle: "curling up with a good book" is no
    // "curling", "chilling out" no "chilling".
    const std::string& verb = c.at(k);
    if (e == k + 1 && verb.size() > 4 && verb.compare(verb.size() - 3, 3, "ing") == 0 &&
        OneOf(c.at(e), {"up", "out", "down", "off", "away", "around", "over", "back"}) && !BoundaryAfter(c.s, c.w, k)) {
      ++e;
      if (!BoundaryAfter(c.s, c.w, e - 1) && OneOf(c.at(e), {"with", "on", "in", "at", "to"})) {
        const std::size_t more = PhraseEnd(c, e + 1, 4, kItemStops);
        if (more > e + 1) e = more;
      }
    }
    // The person spoken to, named after the liking: "I love the thought Nate!"
    if (e > k + 1 && !c.vocative.empty() && c.at(e - 1) == c.vocative && IsCapitalised(c.w[e - 1])) --e;
    for (std::size_t m = k; m < e; ++m)
      if (OneOf(c.at(m), {"it", "you", "your", "them", "him", "me", "us"})) return;
    if (!NoLiking(c, k, e) && (e > k + 1 || !OneOf(c.at(k), kQualities)))
      Push(out, dim, prefix + Slice(c.s, c.w, k, e));
    k = e;
    if (OneOf(c.at(k), {"and", "or"}) || (k > 0 && BoundaryAfter(c.s, c.w, k - 1) &&
                                          c.s.substr(c.w[k - 1].end, 2).find(',') != std::string_view::npos))
      continue;
    return;
  }
}

void NameRules(const Ctx& c, std::size_t k, std::vector<SlotHit>& out) {
  std::size_t from = 0;
  if (c.at(k) == "my" && c.at(k + 1) == "name" && c.at(k + 2) == "is") from = k + 3;
  else if (c.at(k) == "my" && c.at(k + 1) == "name's") from = k + 2;
  else if (c.at(k) == "call" && c.at(k + 1) == "me") from = k + 2;
  else if (c.at(k) == "i'm" || (c.at(k) == "i" && c.at(k + 1) == "am")) from = k + (c.at(k) == "i'm" ? 1 : 2);
  if (from == 0) return;
  const bool strict = c.at(k) == "i'm" || c.at(k) == "i";
  std::size_t e = NameEnd(c, from, 3);
  // "my name is caroline": after the words that say a name comes, one word in
  // lower case is a name too, written with its capital (not after "I'm",
  // where it is as often a state, "i'm tired", nor after "call me", as in
  // "call me later").
  if (e == from && c.at(k) == "my" && from < c.n() && !text::IsStopword(c.at(from)) &&
      !OneOf(c.at(from), kNonNames) &&
      std::all_of(c.at(from).begin(), c.at(from).end(),
                  [](char ch) { return ch >= 'a' && ch <= 'z'; }) &&
      (from + 1 == c.n() || BoundaryAfter(c.s, c.w, from) ||
       OneOf(c.at(from + 1), {"and", "but"}))) {
    std::string name = c.at(from);
    name[0] = static_cast<char>(name[0] - 32);
    Push(out, "name", name);
    return;
  }
  if (e == from || c.at(e - 1).find("'s") != std::string::npos) return;
  if (strict && !(e == c.n() || BoundaryAfter(c.s, c.w, e - 1) || OneOf(c.at(e), {"and", "but", "by", "here"})))
    return;
  Push(out, "name", Slice(c.s, c.w, from, e));
}

void LocationRules(const Ctx& c, std::size_t p, std::vector<SlotHit>& out) {
  const std::string& x = c.at(p);
  const std::string& prev = c.at(p > 0 ? p - 1 : c.n());
  bool origin = false;
  if (x == "in" && OneOf(prev, {"live", "living", "based", "settled"})) {
  } else if (x == "to" && OneOf(prev, {"moved", "moving", "relocated", "relocating"})) {
  } else if (x == "from" && OneOf(prev, {"i'm", "am", "come", "originally", "we're", "are"})) {
    origin = true;
  } else {
    return;
  }
  if (!SubjectBefore(c, p)) return;
  for (std::size_t back = 1; back <= 4 && back <= p; ++back) {
    if (OneOf(c.at(p - back), {"used", "never", "not", "lived"})) return;  // past or negated
  }
  const std::size_t e = PhraseEnd(c, p + 1, kMaxValueWords,
                                  {"with", "for", "to", "about", "around", "on", "at", "during", "in",
                                   "back", "near", "a", "an"},
                                  true);
  if (e == p + 1) return;
  std::size_t end = e;
  if (!HasCapital(c, p + 1, e) && (end = PlaceEnd(c, p + 1, e)) == p + 1) return;
  Push(out, "location", (origin ? "from " : "") + Slice(c.s, c.w, p + 1, end));
}

void OccupationRules(const Ctx& c, std::size_t p, std::vector<SlotHit>& out) {
  const List role_stops = {"at", "for", "in", "with", "to", "on", "of", "from", "by"};
  const std::string& x = c.at(p);
  const std::string& prev = c.at(p > 0 ? p - 1 : c.n());
  // "I hope to work in the future", "I'd love to work as a nurse": a wish.
  if (p >= 2 && OneOf(prev, {"work", "working"}) && c.at(p - 2) == "to") return;
  auto with_org = [&](std::size_t role_end, std::string role) {
    if (OneOf(c.at(role_end), {"at", "for"})) {
      const std::size_t oe = PhraseEnd(c, role_end + 1, 5, {"in", "since", "for", "as", "with", "on"}, true);
      if (oe > role_end + 1 && HasCapital(c, role_end + 1, oe))
        role += " " + c.at(role_end) + " " + Slice(c.s, c.w, role_end + 1, oe);
    }
    Push(out, "occupation", role);
  };
  if (x == "as" && OneOf(prev, {"work", "works", "working", "job", "employed", "career"}) &&
      (SubjectBefore(c, p, 6) || c.at(p > 1 ? p - 2 : c.n()) == "my")) {
    std::size_t b = p + 1;
    if (OneOf(c.at(b), {"a", "an"})) ++b;
    const std::size_t e = PhraseEnd(c, b, 5, role_stops);
    if (e > b) with_org(e, Slice(c.s, c.w, b, e));
  } else if (OneOf(x, {"at", "for", "in"}) && OneOf(prev, {"work", "working"}) && SubjectBefore(c, p)) {
    const std::size_t e = PhraseEnd(c, p + 1, 5, {"as", "since", "for", "on", "with"}, true);
    if (e > p + 1 && (x == "in" || HasCapital(c, p + 1, e)))
      Push(out, "occupation", "works " + x + " " + Slice(c.s, c.w, p + 1, e));
  } else if (OneOf(x, {"a", "an"}) && (prev == "i'm" || (prev == "am" && c.at(p - 2) == "i") ||
                                      (IsAdverb(prev) && SubjectBefore(c, p)))) {
    const std::size_t e = PhraseEnd(c, p + 1, 4, role_stops);
    if (e > p + 1 && IsJobNoun(c.at(e - 1))) with_org(e, Slice(c.s, c.w, p + 1, e));
  }
}

void InterestRules(const Ctx& c, std::size_t p, std::vector<SlotHit>& out) {
  const std::string& x = c.at(p);
  const std::string& prev = c.at(p > 0 ? p - 1 : c.n());
  std::size_t obj = 0;
  if (OneOf(x, {"love", "like", "enjoy", "adore"}) && SubjectBefore(c, p) && !Negated(c, p)) {
    std::size_t k = p;
    while (k > 0 && IsAdverb(c.at(k - 1))) --k;
    if (k == 0 || !OneOf(c.at(k - 1), {"i", "we"})) return;
    obj = c.at(p + 1) == "to" ? p + 2 : p + 1;
  } else if (x == "into" && OneOf(prev, {"i'm", "am", "we're", "really", "totally", "also", "big"}) &&
             SubjectBefore(c, p)) {
    obj = p + 1;
  } else if ((x == "about" && prev == "passionate") || (x == "in" && prev == "interested") ||
             (x == "with" && prev == "obsessed") || (x == "of" && prev == "fan")) {
    if (!SubjectBefore(c, p) || Negated(c, p)) return;
    obj = p + 1;
  } else if (x == "my" && OneOf(c.at(p + 1), {"hobby", "hobbies", "passion", "passions"}) &&
             OneOf(c.at(p + 2), {"is", "are", "include", "includes"})) {
    obj = p + 3;
  } else {
    return;
  }
  if (InRelativeClause(c, p)) return;
  PushItems(c, obj, "interests", "", out);
}

// Family members and pets: "my sister Anna", "dog named Max", "I have two kids".
void MemberRules(const Ctx& c, std::size_t p, const List& nouns, const std::string& dim,
                 std::vector<SlotHit>& out) {
  const std::string& x = c.at(p);
  std::string noun = x;
  if (noun.size() > 2 && noun.compare(noun.size() - 2, 2, "'s") == 0) noun.resize(noun.size() - 2);
  if (!OneOf(noun, nouns)) return;
  // Determiner/possessor up to two adjectives before the noun.
  std::size_t d = p;
  while (d > 0 && p - d < 3 && !OneOf(c.at(d - 1), {"my", "our", "a", "an", "two", "three", "four",
                                                   "one", "five"}) && !text::IsStopword(c.at(d - 1)))
    --d;
  const std::string& det = c.at(d > 0 ? d - 1 : c.n());
  // Name: "my sister Anna", "my dog's name is Max", "a dog named Max".
  std::size_t name_from = 0;
  if (noun != x && c.at(p + 1) == "name" && c.at(p + 2) == "is") name_from = p + 3;
  else if (OneOf(c.at(p + 1), {"named", "called"})) name_from = p + 2;
  else if (noun == x && OneOf(det, {"my", "our"})) name_from = p + 1;
  if (name_from != 0 && (det == "my" || det == "our" || OneOf(c.at(p + 1), {"named", "called"}))) {
    const std::size_t e = NameEnd(c, name_from, 2);
    if (e > name_from && c.at(e - 1).find("'s") == std::string::npos) {
      Push(out, dim, noun + " " + Slice(c.s, c.w, name_from, e));
      return;
    }
  }
  // Possession: "I have two kids", "we adopted a puppy"; not a toy one
  // ("that stuffed animal dog you gave me").
  for (std::size_t m = d; m < p; ++m) {
    if (OneOf(c.at(m), {"stuffed", "toy", "plush", "robot", "fake", "imaginary"})) return;
  }
  const std::string& verb = c.at(d >= 2 ? d - 2 : c.n());
  if (d >= 2 && OneOf(verb, {"have", "has", "got", "own", "adopted", "rescued", "bought", "welcomed"}) &&
      SubjectBefore(c, d - 2 + 1) && !Negated(c, d - 1)) {
    const std::string count = OneOf(det, {"a", "an", "one"}) ? "" : det + " ";
    Push(out, dim, count + Slice(c.s, c.w, d, p + 1));
  }
}

void StatusRules(const Ctx& c, std::size_t p, std::vector<SlotHit>& out) {
  const std::string& x = c.at(p);
  if (!OneOf(x, {"married", "engaged", "divorced", "widowed"}) || !SubjectBefore(c, p) || Negated(c, p))
    return;
  std::string value = x;
  if (c.at(p + 1) == "to") {
    const std::size_t e = NameEnd(c, p + 2, 2);
    if (e > p + 2) value += " to " + Slice(c.s, c.w, p + 2, e);
  }
  Push(out, "family", value);
}

void ParentRules(const Ctx& c, std::size_t p, std::vector<SlotHit>& out) {
  if (!OneOf(c.at(p), {"a", "an"}) || !SubjectBefore(c, p) || Negated(c, p)) return;
  // Being one now ("I'm a mom", "I am now a dad", "I love being a mom", "I've
  // been a mom for ten years"), not wishing or becoming ("I'm ready to be a
  // mom", "I want to become a dad").
  std::size_t v = p - 1;  // (p > 0: a subject is before it)
  if (v > 0 &&
      OneOf(c.at(v), {"now", "also", "finally", "officially", "proudly", "already", "still"}))
    --v;
  if (!OneOf(c.at(v), {"i'm", "im", "am", "being", "been"})) return;
  std::size_t k = p + 1;
  if (OneOf(c.at(k), {"single", "proud", "new", "stay-at-home", "working"})) ++k;
  if (!OneOf(c.at(k), {"mom", "mother", "mum", "dad", "father", "parent", "grandmother", "grandma",
                       "grandfather", "grandpa", "stepmom", "stepdad"}))
    return;
  std::size_t e = k + 1;
  if (c.at(e) == "of" && !c.at(e + 1).empty()) e = PhraseEnd(c, e, 4, {});
  // "is a mom of two": the speaker is the parent ("family: mom" would say they have one).
  Push(out, "family", "is " + Slice(c.s, c.w, p, std::max(e, k + 1)));
}

void PreferenceRules(const Ctx& c, std::size_t p, std::vector<SlotHit>& out) {
  const std::string& x = c.at(p);
  if ((x == "prefer" && SubjectBefore(c, p) && !Negated(c, p)) ||
      (x == "rather" && OneOf(c.at(p - 1), {"i'd", "would"}))) {
    const std::size_t b = c.at(p + 1) == "to" ? p + 2 : p + 1;  // "I'd prefer to walk": "walk"
    const std::size_t e = PhraseEnd(c, b, 8, {"because", "since"});
    if (!NoLiking(c, b, e) && !OneOf(c.at(b), kPronounObjects))
      Push(out, "preferences", Slice(c.s, c.w, b, e));
  } else if (x == "my" && OneOf(c.at(p + 1), {"favorite", "favourite"})) {
    std::size_t v = p + 2;
    while (v < c.n() && v < p + 5 && !OneOf(c.at(v), {"is", "are", "has", "was"})) ++v;
    if (v == p + 2 || !OneOf(c.at(v), {"is", "are"})) return;
    const std::size_t e = PhraseEnd(c, v + 1, kMaxValueWords, {});
    if (e > v + 1)
      Push(out, "preferences", "favorite " + Slice(c.s, c.w, p + 2, v) + ": " + Slice(c.s, c.w, v + 1, e));
  } else if ((OneOf(x, {"hate", "dislike", "detest"}) && SubjectBefore(c, p) &&
              !OneOf(c.at(p - 1), {"would", "i'd"})) ||
             (OneOf(x, {"like", "enjoy"}) && OneOf(c.at(p - 1), {"don't", "not"}) && SubjectBefore(c, p)) ||
             (x == "stand" && OneOf(c.at(p - 1), {"can't", "cannot"}) && SubjectBefore(c, p))) {
    PushItems(c, c.at(p + 1) == "to" ? p + 2 : p + 1, "preferences", "dislikes ", out);
  }
}

}  // namespace

std::vector<SlotHit> ExtractSlotHits(std::string_view written, std::string_view listener) {
  std::vector<SlotHit> out;
  const std::string casual = WithApostrophes(written);  // "im a nurse" says "I'm a nurse"
  const std::string_view sentence = casual;
  if (IsQuestion(sentence)) return out;
  const std::vector<Word> words = SplitWords(sentence);
  const Ctx c{sentence, words, FirstNameLower(listener)};
  for (std::size_t p = 0; p < c.n(); ++p) {
    NameRules(c, p, out);
    LocationRules(c, p, out);
    OccupationRules(c, p, out);
    InterestRules(c, p, out);
    MemberRules(c, p, kFamily, "family", out);
    MemberRules(c, p, kPets, "pets", out);
    StatusRules(c, p, out);
    ParentRules(c, p, out);
    PreferenceRules(c, p, out);
  }
  return out;
}

}  // namespace engram::builtin
