// Answer metrics of the LoCoMo harness (`engram eval locomo --answer`): the
// answer normalisation, token F1 and BLEU-1. Pure functions, no I/O;
// thread-compatible.
//
// Normalisation (NormalizeAnswer), our implementation of the description of
// LoCoMo's scorer: ASCII letters lower-cased; ASCII punctuation (the 32
// characters of Python's string.punctuation) removed without leaving a space
// ("don't" -> "dont", "a,b" -> "ab"); the text split on ASCII whitespace; the
// tokens "a", "an" and "the" dropped; tokens joined with single spaces. Bytes
// >= 0x80 (UTF-8) are kept as they are. Unlike the published scorer we do not
// Porter-stem tokens and do not drop "and", so our F1 can be slightly lower
// than the official script's on the same answers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace engram::eval {

// The normalised text (see above). "The Cat, sat on A mat!" -> "cat sat on mat".
std::string NormalizeAnswer(std::string_view text);

// The tokens of NormalizeAnswer(text).
std::vector<std::string> AnswerTokens(std::string_view text);

// Token F1 of two texts: the multiset overlap of their normalised tokens
// (each token counts min(times in prediction, times in gold)); precision =
// overlap / |prediction|, recall = overlap / |gold|, F1 their harmonic mean.
// 0 when the overlap is 0; 1 when both texts normalise to no tokens.
double TokenF1(std::string_view prediction, std::string_view gold);

// Multi-answer F1 (LoCoMo category 1, where a gold answer is a comma-separated
// list, e.g. "pottery, camping, painting"): the gold answer and the prediction
// are each split on ',' (before normalisation) and parts that are empty after
// trimming whitespace are dropped; for every gold part we take its best
// TokenF1 against any part of the prediction, and return the mean over the
// gold parts. This is what LoCoMo's scorer does for category 1. When the gold
// has no non-empty part, TokenF1 of the whole texts; a prediction with no
// non-empty part scores 0 (unless the gold has none either).
double MultiAnswerF1(std::string_view prediction, std::string_view gold);

// BLEU-1 of a prediction against one reference, on normalised tokens: clipped
// unigram precision (each prediction token counts at most as often as it
// occurs in the reference) times the brevity penalty exp(1 - r/c) when the
// prediction is shorter (c tokens) than the reference (r tokens), 1 otherwise.
// 0 for an empty prediction; 1 when both are empty.
double Bleu1(std::string_view prediction, std::string_view reference);

// The gold answer as the scorer uses it: for category 3 (open-domain) the part
// before the first ';' (LoCoMo's scorer does the same; the rest explains the
// answer), otherwise the answer unchanged.
std::string_view ScoringGold(int category, std::string_view gold);

// F1 of a prediction as LoCoMo scores the category: MultiAnswerF1 for
// category 1, TokenF1 otherwise; the gold passed through ScoringGold.
double AnswerF1(int category, std::string_view prediction, std::string_view gold);

}  // namespace engram::eval
