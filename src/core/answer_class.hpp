// What kind of thing a question asks for, and whether a text names a thing of
// that kind, from WordNet's is-a hierarchy: "What bird does he keep?" asks
// for a bird and "Theo's parrot can say twenty words" names one; "Which
// instrument is he practising?" and "Aiden is learning the guitar"; "What is
// her profession?" (or "What does he do for a living?") asks for an
// occupation and "Anya is an architect" names one. Shared by fact search and
// dialogue retrieval. Thread-safe; no exceptions escape.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/wordnet.hpp"

namespace engram::answer {

class Memo;  // what the process remembers of WordNet's answers (answer_class.cpp)

// The question's focus: the first noun WordNet knows among the four words
// after its first "what" ("what's") or "which" (short ones too: "art",
// "pet"; not a single letter), skipping stopwords, "kind", "type", "sort",
// verbs that are seldom the thing asked for ("made", "going", "like") and
// names (capitalised words, possessives). Lower-cased; "" when there is none.
std::string QuestionFocus(std::string_view question, const wordnet::WordNet& wn);

// The focus of a keyword query ("occupation", "Carmen's job", "favourite
// sport"): its last noun WordNet knows, when the query asks nothing in
// words of a question and holds at most four content words; "" otherwise.
std::string KeywordFocus(std::string_view query, const wordnet::WordNet& wn);

// Whether a lower-case word is a verb that is a noun too but, after "what did
// Ana ...", is never the thing asked for ("like", "going", "made").
bool IsVerbNotThing(std::string_view word);

class AnswerClass {
 public:
  AnswerClass() = default;
  // The class a question asks for: the focus noun's six most frequent noun
  // senses with everything below them, each sense left out when that is
  // over 1,000 synsets (a sense so wide says nothing: "activity", "person";
  // the focus of a question asking whether someone has or does a thing, "Do
  // I have pets?", is its last noun); for "food" or "foods" (not modifying
  // a noun: "What food preferences ...?"), every food (WordNet's noun.food
  // and whatever is a kind of food), as for a "what" question naming no
  // thing whose verb is one of eating ("What can't I eat?"; drinking asks
  // for a beverage); or, for a question about someone's work ("job",
  // "occupation", "profession", "career", "trade", "for a living", "what
  // does she do?"), the people's roles of working life (workers,
  // professionals, creators, experts, leaders, officials, performers, ...);
  // or, for a question opening with "where" that names no kind, the places
  // (WordNet's noun.location and noun.object: "Lisbon", "Patagonia", "a
  // lake"), and when it asks where someone works ("work", "employed",
  // "job") also groups, organisations ("Spotify", "a logistics firm") and
  // the buildings of work ("hospital", "bakery", "office"); or, for a
  // question opening with "who", "whom" or "whose", the people (WordNet's
  // noun.person: "therapist", "grandmother"), where a name written with a
  // capital that WordNet does not know ("Marcus", "Dana") names one too.
  // Empty without WordNet or when the question asks for no class.
  static AnswerClass Of(std::string_view question, const wordnet::WordNet* wn);

  bool empty() const { return set_ == nullptr; }
  // The question's noun ("" when the question asks about work in other words).
  const std::string& focus() const { return focus_; }
  bool occupation() const { return occupation_; }
  // Whether the question asks whether someone has or does a thing of the
  // class ("Do I have pets?", "Do I commute for my job?"), rather than which.
  bool yes_no() const { return yes_no_; }
  // The index terms (text::Terms) of the class's words, sorted, at most
  // 8,000 (made once per class and kept): what a full-text index finds its
  // members by. Empty for an empty class.
  const std::vector<std::string>& Terms() const;
  // Whether a lower-case token names a thing of the class by its most frequent
  // noun sense ("parrot" for "bird"; "head", a body part first, is no
  // "leader"). The focus word itself is not counted: words match it anyway;
  // nor, for where someone works, a word of working ("works", a factory).
  bool Names(std::string_view token) const;
  // Whether a text holds such a token, not as a name (the words after
  // "named" or "called": "a dog named Rex" holds no king); for an
  // occupation, one said of someone (within four words after "as", or after
  // an "a" or "an" following a word of being: "is an ICU nurse", "works as a
  // backend engineer", "is now a carpenter", "is a high school chemistry
  // teacher"; not "bought a new office printer", a person in WordNet's first
  // sense). Past a sentence's start, a word written with a capital may also
  // name its second noun sense ("at Apple", "in Vancouver"; not a day's or a
  // month's name). Where someone works is also held by what a text says
  // they work at or for, whatever the word ("works at Acme", "works as a
  // backend engineer at a fintech startup"; not "at night", "at 9").
  bool HeldBy(std::string_view text) const;

 private:
  const wordnet::WordNet* wn_ = nullptr;
  Memo* memo_ = nullptr;
  std::shared_ptr<const wordnet::WordNet::SynsetSet> set_;
  std::shared_ptr<const std::vector<std::string>> terms_;
  std::string focus_;
  bool occupation_ = false;
  bool yes_no_ = false;
  bool workplace_ = false;  // the class of where someone works
  bool people_ = false;     // the class of who
};

}  // namespace engram::answer
