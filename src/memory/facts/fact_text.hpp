// Text helpers of the fact store: the lexical document of a fact, the FTS5
// query of a search, and the built-in entity extractor. Pure, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memory/facts/fact_store.hpp"

namespace engram::wordnet {
class WordNet;
}

namespace engram::memory::facts {

// Index terms of a text (text::Terms in FTS-safe form), plus the parts of
// compound terms ("gpt-4" -> gpt_4, gpt, 4; "node.js" -> node_js, node, js),
// the word a short form stands for (text::FullForm: "fave" -> favorit) and
// character bigrams of CJK runs, so that compounds, their parts and
// unsegmented scripts all match. Deduplicated, in order of first occurrence.
std::vector<std::string> LexicalTerms(std::string_view text);
// The terms of LexicalTerms(query) (`terms`) a memory's text is scored on:
// a short form's own term is left out ("bday", whose "birthday" follows it),
// since every memory saying the short form holds its full word's term too.
std::vector<std::string> ScoringTerms(std::vector<std::string> terms, std::string_view query);
// The stance a word of liking or disliking says: 1 for "like", "love",
// "enjoy", "prefer", "adore", "fond", "favorite" and their forms ("loves",
// "preferred"), -1 for "dislike", "hate", "detest", "loathe", "despise",
// "avoid" and theirs, 2 for the words of someone one works under ("boss",
// "manager", "supervisor"), 0 for any other token ("preferences" names what
// is liked and disliked alike). A memory saying one holds what a query
// saying another of the same stance asks for ("Maya loves jazz" for "What
// music does she like?", "My manager is Karen" for "Who is my boss?").
// `token`: one of text::Tokenize.
int Stance(std::string_view token);
inline constexpr int kSuperior = 2;  // the stance of "boss", "manager", "supervisor"
// The bit of a stance in StancesIn (0 for none).
int StanceBit(int stance);
// Whether `token` is the "to" of "report(s|ed|ing) to" (`prev` the token
// before it): the one reported to is a superior.
bool ReportsTo(std::string_view prev, std::string_view token);
// Stance(token) where the token before it is `prev` ("" at the start): a
// superior's word after a noun is none ("password manager").
int StanceAfter(std::string_view prev, std::string_view token);
// The stances the tokens of a text say: bit 0 liking, bit 1 disliking, bit 2
// a superior (one of those words, or "report(s|ed|ing) to": "reporting to
// Kate Liu" says who the boss is).
int StancesIn(std::string_view text);
// Whether a query (its text::Tokenize tokens) asks about someone's superior:
// a word of stance kSuperior ("Who is my boss?") or ReportsTo ("Who do I
// report to?").
bool AsksForSuperior(const std::vector<std::string>& tokens);
// The full-text terms of the words a memory says a superior with ("boss",
// "manager", "supervisor", "report"): such memories are candidates of
// those questions (fact search).
const std::vector<std::string>& SuperiorTerms();
// LexicalTerms joined by spaces (the facts_fts `terms` column).
std::string LexicalDocument(std::string_view text);

// Whether two texts say the same in other words: with "a", "an" and "the"
// left out they have as many tokens, and each pair in order is the same
// token, has the same stem, or is two words of letters, neither a stopword,
// that share their most frequent WordNet sense ("My car is red" and "My
// automobile is red", "I have two kids" and "I have two children"). So
// negations, numbers, words WordNet does not know (most names) and word
// order must match exactly, and a word never stands for its hypernym ("vegan"
// is not "vegetarian") or for a rarer sense ("nurse" is not "nanny"); and
// they agree in negation and numbers (AgreeInNegationAndNumbers). False
// without `wn`, and for texts of over 200 tokens.
bool SameInOtherWords(std::string_view a, std::string_view b, const wordnet::WordNet* wn);

// One new text checked by SameInOtherWords against many stored texts: its
// tokens and claims are made once.
class ParaphraseCheck {
 public:
  ParaphraseCheck(std::string_view text, const wordnet::WordNet* wn);
  // SameInOtherWords(text, other, wn).
  bool Matches(std::string_view other) const;

  // How many negations a text holds and the numbers it names, sorted
  // (what AgreeInNegationAndNumbers compares).
  using Claims = std::pair<std::size_t, std::vector<std::string>>;
  static Claims ClaimsOf(std::string_view text);

 private:
  const wordnet::WordNet* wn_;
  std::vector<std::string> tokens_;  // compared tokens (empty: matches nothing)
  Claims claims_;
};

// What a question asks, for a meaning (word vectors, an embedding): the
// question without the words that frame it: the "living" of "for a living"
// ("What does she do for a living?" asks for an occupation; neither "lives
// in Porto" nor "the living room" answers it), the "time" of "what time" or
// "which time", the "often", "long" or "soon" of "how often", "how long"
// and "how soon" (a time is matched as one, not by the meaning of "time";
// the "old" of "how old" stays: it means an age), the "kind", "type" or
// "sort" before "of" ("What kind of work ...?" is about work, not about a
// type), and the others fact_text.cpp's FrameWord lists ("think of", "come
// from", a closing "called", the "go" of "go bouldering"); the question
// itself otherwise.
std::string QuestionMeant(std::string_view question);
// The question for its words (LexicalTerms): without the same framing words,
// except the "living" of "for a living" (which only a memory naming an
// occupation matches); the question itself when no word would be left
// ("What time is it?").
std::string QuestionWords(std::string_view question);

// Whether a question asks for a number (tokens as text::Tokenize makes them):
// "how many", "how much", "how old", "what/which age", "what number",
// "what amount".
bool AsksHowMany(const std::vector<std::string>& tokens);
// Whether a text says a number: a token with a digit ("8", "$8m", "3pm"), a
// number word ("two", "twelve", "sixty", "million", "dozen"), or a word that
// counts ("twice", "couple", "pair", "twins").
bool HoldsNumber(std::string_view text);

// Whom a memory is about, by the words it opens with: the user ("I live in
// Leeds", "I'm ...", "We're moving ...", "The user ...", "My coffee order is
// ..."), someone else ("My sister lives in Lisbon", "Our son Eli ...", "The
// user's sister ...", "Bob's birthday ...", "Priya is vegetarian", "Grandpa
// Kenji ..."), or unknown (no subject, "Likes jazz"; or a thing, "Coffee
// keeps me awake"). Someone else's when it opens with "my", "our" or "the
// user's" and one of the next three words is a
// person by its most frequent WordNet noun sense that is not naming a thing
// (a person followed by a noun that is no verb, or after a singular person a
// noun in its bare form: "My dentist appointment", "My favourite colour" are
// the user's), unless the user is among the first words ("My partner and I
// ..."); or when it opens with a capitalised word that is a person in
// WordNet, no word WordNet knows (a name), or a possessive.
enum class Subject { kUnknown, kUser, kOther };
Subject MemorySubject(std::string_view memory, const wordnet::WordNet* wn);

// Whether a question asks about the user alone: it says "I", "me", "my" or
// "the user" (tokens as text::Tokenize makes them), and no "he", "she",
// "him", "his" or "her", no name (a capitalised word past the first) and no
// person by WordNet ("sister", "manager", "kids"): "Where do I live?", not
// "Where does my sister live?".
bool AsksAboutUser(std::string_view question, const std::vector<std::string>& tokens,
                   const wordnet::WordNet* wn);

// Whether a question asks about someone else by a pronoun: it says "he",
// "she", "him", "his" or "her" (tokens as text::Tokenize makes them), and no
// word of the user ("I", "me", "my", "we", "our", "the user"): "What is her
// occupation?", "When does he speak with his backers?"; not "What did my
// sister say about her job?" (whose subject the memory's words decide).
bool AsksAboutOther(const std::vector<std::string>& tokens);

// Whether a memory is the user's own words about themselves: MemorySubject
// says the user and it opens in the first person ("I'm a civil engineer",
// "My coffee order is ..."), not "The user ..." (which a question may call
// "he" or "she").
bool SaidByUserOfThemselves(std::string_view memory, const wordnet::WordNet* wn);

// Whether two texts agree in negation and numbers: each holds as many
// negations ("not", "no", "never", "nothing", "without", "don't", "isnt"
// ...), and they name the same numbers (tokens with digits and number words,
// "two", "dozen", "twice", as multisets). Texts whose embeddings are alike
// but disagree here say different things ("I am not allergic to peanuts",
// "The meeting moved to 13 May").
bool AgreeInNegationAndNumbers(std::string_view a, std::string_view b);

// Whether two texts agree in how their words relate: with articles left out
// and contractions spelt out ("I'm": "I am"), they hold the same function
// words (stopwords: "before"/"after", "to"/"from", "on"/"off", "he"/"she"),
// each leading to the same content word ("from Paris to Rome" is not "from
// Rome to Paris"; "on Sundays Alice plays the cello" is "Alice plays the
// cello on Sundays"). Texts whose embeddings are alike (a bag of hashed
// words leaves the stopwords out) but disagree here say different things
// ("Call me before lunch", "Call me after lunch").
bool AgreeInRelations(std::string_view a, std::string_view b);

// What a near-duplicate must agree in with the text it duplicates:
// AgreeInNegationAndNumbers, AgreeInRelations and the signs ("$500" is not
// "-500", "O+" is not "O-": text::Signs).
bool SayTheSame(std::string_view a, std::string_view b);

// The shape of a text for SameInOtherWords: a hash of its token count and
// of the tokens that must match exactly, in order (stopwords, negations,
// numbers, tokens not of letters), with a mark where a word may be another
// with the same sense. Two texts SameInOtherWords holds for have the same
// shape, so a store finds the candidates of a paraphrase by it; 0 when the
// text has no such word (its paraphrase is itself: the text hash finds it)
// or is too long to be checked.
std::uint64_t TextShape(std::string_view text);

// Built-in entities of a text: runs of capitalised words (proper names; a
// sentence's first word only when it is not a common word), quoted spans, and
// identifiers (tokens with digits or inner punctuation: gpt-4, node.js,
// v2.1). Deduplicated by normalised name.
std::vector<EntityRef> ExtractEntities(std::string_view text);
// The normalised form entities are stored and matched by (lower-case ASCII,
// trimmed, inner whitespace collapsed, trailing "'s" dropped).
std::string NormalizeEntity(std::string_view name);
// Names a query may refer to: its extracted entities and its tokens and
// token pairs, normalised and deduplicated.
std::vector<std::string> QueryEntityNames(std::string_view query);

}  // namespace engram::memory::facts
