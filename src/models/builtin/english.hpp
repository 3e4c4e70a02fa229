// Small English helpers for the built-in extractive engine: word spans of a
// sentence with offsets (so rewrites keep the original wording), clause
// boundaries, verb agreement and a few closed word lists. Pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace engram::builtin {

// One word of a sentence: `text` is the original bytes [begin, end);
// `lower` is ASCII-lower-cased with the typographic apostrophe (’) as '\''.
struct Word {
  std::string text;
  std::string lower;
  std::size_t begin = 0;
  std::size_t end = 0;
};

// Words of one sentence: runs of letters/digits (any script) with inner
// apostrophes and hyphens ("I'm", "e-mail"). Punctuation, emoji and spaces
// separate words.
std::vector<Word> SplitWords(std::string_view sentence);

// True when clause punctuation (, ; : . ! ? brackets, quotes, dashes) lies
// between words[i] and words[i+1], or after words[i] when it is the last word.
bool BoundaryAfter(std::string_view sentence, const std::vector<Word>& words, std::size_t i);

// The original text of words [first, last) including the gaps between them.
// REQUIRES: first < last <= words.size().
std::string Slice(std::string_view sentence, const std::vector<Word>& words, std::size_t first,
                  std::size_t last);

// A sentence with the apostrophes of its contractions written in where chat
// leaves them out ("im vegetarian", "i dont eat meat", "ive got two cats"):
// only forms that are no word of their own ("id", "ill", "its", "wont",
// "lets", "hell", "were" and "shell" are words, and stay), in any case
// ("Im", "IM": the pronoun is capitalised); the rest as written.
std::string WithApostrophes(std::string_view sentence);

// True when the sentence ends with '?' (ignoring closing quotes/brackets/spaces).
bool IsQuestion(std::string_view sentence);

// A statement closed by a question tag, without the tag: "You know I hate
// cilantro, right?" -> "You know I hate cilantro" (also "..., you know?",
// "..., remember?", "..., isn't it?", "..., don't you think?", "..., ok?").
// Any other sentence, and a question before its tag ("Did I ..., right?"),
// is returned as it is.
std::string_view WithoutQuestionTag(std::string_view sentence);

// Index of the first word after leading interjections and greetings that are
// followed by a comma or '!' ("Oh, ", "Yeah, ", "Hey Mel, ", "You know, ",
// "You won't believe it - "), and the name `vocative` (lower-case; the person
// spoken to) so followed ("Gina, ").
std::size_t SkipLeadingFillers(std::string_view sentence, const std::vector<Word>& words,
                               std::string_view vocative = {});

// The first word of a name, ASCII-lower-cased as a Word's `lower` ("Mel
// Smith" -> "mel"): the vocative SkipLeadingFillers and the profile rules skip.
std::string FirstNameLower(std::string_view name);

// True when the word starts with an upper-case ASCII or Latin-1 letter
// (names, places).
bool IsCapitalised(const Word& word);

// Degree/time adverbs that may sit between a subject and its verb
// ("I really love", "I've always wanted").
bool IsAdverb(std::string_view lower);
// An adverb by its "-ly" ("I completely agree", "I deeply regret"): a word of
// four letters or more ending in "ly" that is no verb ("apply", "rely",
// "fly"). Only where a verb is expected: "family" and "July" end alike.
bool IsLyAdverb(std::string_view lower);
// Whether WordNet knows a lower-case word as written as an adjective ("safe",
// "quiet"; it may be a noun too); false without WordNet.
bool IsAdjectiveWord(std::string_view lower);
// A verb's base form that may follow "and" in a second predicate of the
// same subject ("I practice yoga and meditate"): a verb WordNet knows as
// written and no noun or adjective ("meditate", "compete"), or a verb
// that is also a noun when `object_follows` ("and feed the cat").
bool IsCoordinatedVerb(std::string_view lower, bool object_follows);

// Past forms: "-ed" endings and common irregular pasts ("went", "bought").
bool IsPastForm(std::string_view lower);

// Modal and auxiliary forms that never take an "-s" ("can", "will", "didn't").
bool IsModal(std::string_view lower);

// Third-person singular of a base-form verb ("love" -> "loves", "go" ->
// "goes", "study" -> "studies", "have" -> "has", "am" -> "is").
std::string ThirdPersonSingular(std::string_view verb);

// True for ASCII words made only of letters.
bool IsAlphaWord(std::string_view lower);

// True when lower is one of the words of list (a small closed list).
bool OneOf(std::string_view lower, const std::vector<std::string_view>& list);

}  // namespace engram::builtin
