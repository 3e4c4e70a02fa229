// English helpers for the built-in extractive engine (see english.hpp).
#include "models/builtin/english.hpp"

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

#include "core/text.hpp"
#include "core/wordnet.hpp"

namespace engram::builtin {
namespace {

bool IsAsciiAlnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Byte length of the UTF-8 lead byte (1 for invalid bytes).
std::size_t SeqLen(unsigned char b) {
  if (b >= 0xF0 && b < 0xF8) return 4;
  if (b >= 0xE0) return b < 0xF0 ? 3 : 1;
  if (b >= 0xC0) return 2;
  return 1;
}

enum class Cls { kWord, kApostrophe, kHyphen, kSep };

// Classifies the character at s[i] and reports its byte length.
Cls Classify(std::string_view s, std::size_t i, std::size_t& len) {
  const auto b = static_cast<unsigned char>(s[i]);
  len = 1;
  if (b < 0x80) {
    if (IsAsciiAlnum(b)) return Cls::kWord;
    if (b == '\'') return Cls::kApostrophe;
    if (b == '-') return Cls::kHyphen;
    return Cls::kSep;
  }
  len = std::min(SeqLen(b), s.size() - i);
  if (b < 0xC2 || len < 2) return Cls::kSep;  // continuation or invalid lead byte
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if (b == 0xC2) return b1 == 0xAA || b1 == 0xB5 || b1 == 0xBA ? Cls::kWord : Cls::kSep;
  if (b == 0xE2 && b1 == 0x80 && len == 3) {  // U+2000..U+203F
    const auto b2 = static_cast<unsigned char>(s[i + 2]);
    if (b2 == 0x98 || b2 == 0x99) return Cls::kApostrophe;  // ‘ ’
    if (b2 == 0x90 || b2 == 0x91) return Cls::kHyphen;
    return Cls::kSep;
  }
  if (b == 0xE2 && b1 >= 0x80 && b1 <= 0xAF) return Cls::kSep;  // punctuation, symbols, arrows
  if (b == 0xE3 && b1 == 0x80) return Cls::kSep;                 // CJK punctuation
  if (b == 0xEF && (b1 == 0xB8 || b1 == 0xBB || b1 == 0xBC)) return Cls::kSep;
  if (b == 0xF0 && b1 == 0x9F) return Cls::kSep;  // emoji
  return Cls::kWord;
}

}  // namespace

std::vector<Word> SplitWords(std::string_view s) {
  std::vector<Word> words;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t len = 0;
    if (Classify(s, i, len) != Cls::kWord) {
      i += len;
      continue;
    }
    Word w;
    w.begin = i;
    std::size_t end = i;
    while (end < s.size()) {
      std::size_t l = 0;
      const Cls c = Classify(s, end, l);
      if (c == Cls::kWord) {
        end += l;
        continue;
      }
      if (c == Cls::kApostrophe || c == Cls::kHyphen) {  // inner only
        std::size_t l2 = 0;
        if (end + l < s.size() && Classify(s, end + l, l2) == Cls::kWord) {
          end += l;
          continue;
        }
      }
      break;
    }
    w.end = end;
    w.text.assign(s.substr(w.begin, end - w.begin));
    for (std::size_t k = w.begin; k < end;) {
      std::size_t l = 0;
      const Cls c = Classify(s, k, l);
      if (c == Cls::kApostrophe) w.lower += '\'';
      else if (c == Cls::kHyphen) w.lower += '-';
      else
        for (std::size_t m = k; m < k + l; ++m)
          w.lower += (s[m] >= 'A' && s[m] <= 'Z') ? static_cast<char>(s[m] + 32) : s[m];
      k += l;
    }
    words.push_back(std::move(w));
    i = end;
  }
  return words;
}

bool BoundaryAfter(std::string_view s, const std::vector<Word>& words, std::size_t i) {
  if (i >= words.size()) return true;
  const std::size_t from = words[i].end;
  const std::size_t to = i + 1 < words.size() ? words[i + 1].begin : s.size();
  if (i + 1 >= words.size()) return true;
  const std::string_view gap = s.substr(from, to - from);
  if (gap == ". " && OneOf(words[i].lower, {"st", "dr", "mr", "mrs", "ms", "mt", "jr", "sr", "prof"}))
    return false;  // "St. Mary's", "Dr. Lee"
  for (char c : gap) {
    if (c == ',' || c == ';' || c == ':' || c == '.' || c == '!' || c == '?' || c == '(' ||
        c == ')' || c == '[' || c == ']' || c == '"')
      return true;
  }
  // en/em dashes and curly double quotes
  return gap.find("\xE2\x80\x93") != std::string_view::npos ||
         gap.find("\xE2\x80\x94") != std::string_view::npos ||
         gap.find("\xE2\x80\x9C") != std::string_view::npos ||
         gap.find("\xE2\x80\x9D") != std::string_view::npos;
}

std::string Slice(std::string_view s, const std::vector<Word>& words, std::size_t first,
                  std::size_t last) {
  if (first >= last || last > words.size()) return {};
  return std::string(s.substr(words[first].begin, words[last - 1].end - words[first].begin));
}

bool IsQuestion(std::string_view s) {
  while (!s.empty()) {
    const char c = s.back();
    if (c == ' ' || c == '"' || c == '\'' || c == ')' || c == '\n' || c == '\t') {
      s.remove_suffix(1);
    } else if (s.size() >= 3 && s.substr(s.size() - 3) == "\xE2\x80\x9D") {
      s.remove_suffix(3);
    } else {
      break;
    }
  }
  return !s.empty() && s.back() == '?';
}

std::string_view WithoutQuestionTag(std::string_view sentence) {
  if (!IsQuestion(sentence)) return sentence;
  const std::size_t comma = sentence.rfind(',');
  if (comma == std::string_view::npos || comma == 0) return sentence;
  std::string tag;
  for (char ch : sentence.substr(comma + 1)) {
    const auto u = static_cast<unsigned char>(ch);
    if (std::isalpha(u) || ch == '\'' || (ch == ' ' && !tag.empty() && tag.back() != ' '))
      tag += static_cast<char>(std::tolower(u));
  }
  while (!tag.empty() && tag.back() == ' ') tag.pop_back();
  static const std::vector<std::string_view> kTags = {"right",
                                                      "you know",
                                                      "remember",
                                                      "ok",
                                                      "okay",
                                                      "yeah",
                                                      "yes",
                                                      "huh",
                                                      "eh",
                                                      "no",
                                                      "correct",
                                                      "isn't it",
                                                      "wasn't it",
                                                      "aren't i",
                                                      "don't i",
                                                      "didn't i",
                                                      "haven't i",
                                                      "don't you think",
                                                      "don't you remember",
                                                      "you remember",
                                                      "remember that",
                                                      "as you know",
                                                      "am i right"};
  if (!OneOf(tag, kTags)) return sentence;
  // A question before its tag stays one: "Did I tell you I moved, right?"
  static const std::vector<std::string_view> kAsking = {
      "did",   "do",    "does",   "is",    "are",    "was",     "were",  "have",  "has",
      "had",   "can",   "could",  "would", "will",   "should",  "shall", "may",   "might",
      "am",    "what",  "who",    "whom",  "whose",  "where",   "when",  "why",   "how",
      "which", "isn't", "aren't", "don't", "didn't", "doesn't", "won't", "can't", "wasn't"};
  std::string first;
  for (char ch : sentence) {
    const auto u = static_cast<unsigned char>(ch);
    if (std::isalpha(u) || ch == '\'') {
      first += static_cast<char>(std::tolower(u));
    } else if (!first.empty()) {
      break;
    }
  }
  if (OneOf(first, kAsking)) return sentence;
  std::string_view out = sentence.substr(0, comma);
  while (!out.empty() && out.back() == ' ') out.remove_suffix(1);
  return out.empty() || IsQuestion(out) ? sentence : out;
}

std::string FirstNameLower(std::string_view name) {
  std::string out;
  for (char ch : name.substr(0, name.find(' '))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

namespace {

// BoundaryAfter, or a hyphen standing alone after the word ("believe it -
// I got ..."; a word's own hyphens are inside it).
bool BoundaryOrDashAfter(std::string_view s, const std::vector<Word>& words, std::size_t i) {
  if (BoundaryAfter(s, words, i)) return true;
  return s.substr(words[i].end, words[i + 1].begin - words[i].end).find('-') != std::string_view::npos;
}

}  // namespace

std::size_t SkipLeadingFillers(std::string_view s, const std::vector<Word>& words, std::string_view vocative) {
  // Phrases that say nothing of their own before what is said.
  static const std::vector<std::vector<std::string_view>> kPhrases = {
      {"you", "know"},
      {"thank", "you"},
      {"guess", "what"},
      {"fun", "fact"},
      {"by", "the", "way"},
      {"you", "know", "what"},
      {"you", "won't", "believe", "it"},
      {"you", "won't", "believe", "this"},
      {"believe", "it", "or", "not"},
      {"to", "be", "honest"},
      {"as", "you", "know"},
      {"so", "you", "know"},
      {"just", "so", "you", "know"},
      {"funny", "you", "mention", "that"},
      {"funny", "you", "mention", "it"},
      {"funny", "you", "should", "mention", "that"},
      {"speaking", "of", "which"},
      {"you", "see"},
      {"to", "be", "fair"}};
  static const std::vector<std::string_view> kFillers = {
      "oh", "yeah", "yes", "yep", "well", "so", "wow", "haha", "hahaha", "lol", "hey", "hi",
      "hello", "thanks", "ok", "okay", "ah", "aw", "aww", "um", "uh", "honestly", "actually",
      "anyway", "anyways", "btw", "omg", "gosh", "sure", "right", "no", "nope", "hmm", "great",
      "cool", "awesome", "wow", "totally", "absolutely", "congrats", "congratulations"};
  std::size_t k = 0;
  while (k < words.size()) {
    const std::string& w = words[k].lower;
    std::size_t next = k;
    // The longest phrase that starts here and ends at a boundary.
    std::size_t phrase = 0;
    for (const auto& p : kPhrases) {
      if (p.size() <= phrase || k + p.size() > words.size()) continue;
      bool same = true;
      for (std::size_t i = 0; i < p.size() && same; ++i) same = words[k + i].lower == p[i];
      if (same && BoundaryOrDashAfter(s, words, k + p.size() - 1)) phrase = p.size();
    }
    if (phrase > 0) {
      next = k + phrase;
    } else if (OneOf(w, kFillers) || (!vocative.empty() && w == vocative)) {
      // A run of fillers with one boundary at its end: "Oh yeah, ...",
      // "Oh wow, ...", "Yeah no, ...".
      std::size_t j = k;
      while (j + 1 < words.size() && OneOf(words[j].lower, kFillers) &&
             !BoundaryOrDashAfter(s, words, j) && OneOf(words[j + 1].lower, kFillers)) {
        ++j;
      }
      next = j + 1;
    } else if ((w == "and" || w == "but") && k + 1 < words.size() && OneOf(words[k + 1].lower, kFillers)) {
      next = k + 2;  // "And yes, ...", "But honestly, ..."
    } else {
      break;
    }
    // A vocative name may follow a greeting: "Hey Mel, ..."
    if (!BoundaryAfter(s, words, next - 1) && next < words.size() && IsCapitalised(words[next]) &&
        words[next].lower != "i" && BoundaryAfter(s, words, next))
      ++next;
    if (!BoundaryOrDashAfter(s, words, next - 1)) break;
    k = next;
  }
  return k;
}

bool IsCapitalised(const Word& w) {
  if (w.text.empty()) return false;
  const auto c = static_cast<unsigned char>(w.text[0]);
  if (c >= 'A' && c <= 'Z') return true;
  if (c != 0xC3 || w.text.size() < 2) return false;  // Latin-1 capitals: U+00C0..U+00DE
  const auto c1 = static_cast<unsigned char>(w.text[1]);
  return c1 >= 0x80 && c1 <= 0x9E && c1 != 0x97;
}

bool IsAdverb(std::string_view w) {
  static const std::unordered_set<std::string_view> kAdverbs = {
      "really", "also", "just", "recently", "finally", "actually", "usually", "always", "still",
      "now", "currently", "absolutely", "totally", "definitely", "often", "sometimes", "even",
      "already", "generally", "mostly", "truly", "honestly", "originally", "kinda", "literally",
      "seriously", "mainly", "normally", "probably", "basically", "personally", "ever", "never",
      "once", "lately", "officially", "proudly", "happily", "secretly", "somehow", "too",
      "eventually", "initially", "typically", "regularly", "occasionally", "certainly", "so",
      "genuinely", "especially", "newly", "first", "only", "rarely", "seldom", "hardly", "barely",
      "frequently", "constantly", "strictly", "exclusively", "primarily", "largely", "nearly", "almost"};
  return kAdverbs.count(w) > 0;
}

bool IsLyAdverb(std::string_view w) {
  if (w.size() < 4 || w.substr(w.size() - 2) != "ly" || !IsAlphaWord(w)) return false;
  if (OneOf(w, {"apply", "reply", "rely", "supply", "comply", "imply", "multiply", "ally", "rally",
                "tally", "bully", "sully", "dally"}))
    return false;
  const wordnet::WordNet* wn = wordnet::WordNet::Default();
  return wn == nullptr || (wn->LemmaPos(w) & wordnet::WordNet::kLemmaVerb) == 0;
}

bool IsAdjectiveWord(std::string_view w) {
  const wordnet::WordNet* wn = wordnet::WordNet::Default();
  return wn != nullptr && IsAlphaWord(w) &&
         (wn->LemmaPos(w) & wordnet::WordNet::kLemmaAdjective) != 0;
}

bool IsCoordinatedVerb(std::string_view w, bool object_follows) {
  // (A word as written: "swimming" and "dogs" are no verb's base form; "sing" and "discuss" are.)
  if (w.size() < 3 || !IsAlphaWord(w) || text::IsStopword(w) || IsModal(w) || IsPastForm(w))
    return false;
  const wordnet::WordNet* wn = wordnet::WordNet::Default();
  if (wn == nullptr) return false;
  const unsigned pos = wn->LemmaPos(w);
  if ((pos & wordnet::WordNet::kLemmaVerb) == 0) return false;
  return object_follows ||
         (pos & (wordnet::WordNet::kLemmaNoun | wordnet::WordNet::kLemmaAdjective)) == 0;
}

bool IsPastForm(std::string_view w) {
  static const std::unordered_set<std::string_view> kIrregular = {
      "went", "was", "were", "had", "did", "got", "made", "took", "saw", "came", "bought",
      "began", "left", "won", "ran", "wrote", "built", "met", "grew", "taught", "flew", "drove",
      "rode", "sang", "swam", "read", "found", "gave", "lost", "spent", "became", "brought",
      "sold", "kept", "fell", "felt", "knew", "thought", "told", "said", "heard", "caught",
      "chose", "drew", "ate", "drank", "forgot", "held", "led", "paid", "put", "quit", "set",
      "shot", "slept", "spoke", "stood", "stole", "threw", "understood", "woke", "wore", "sent",
      "fought", "hung", "hid", "sat", "shut", "sought", "lent", "meant", "broke", "been", "done",
      "gone", "seen", "taken", "given", "written", "begun", "known", "grown", "flown", "driven",
      "ridden", "sung", "swum", "eaten", "fallen", "chosen", "spoken", "stolen", "thrown", "woken",
      "worn", "forgotten", "gotten", "hurt", "cut", "let", "learnt", "dreamt", "burnt", "lit"};
  if (w.size() > 3 && w.substr(w.size() - 2) == "ed") {
    // "need", "feed", "succeed" are base forms; "agreed", "freed" are past.
    if (w.substr(w.size() - 3) == "eed") return OneOf(w, {"agreed", "freed", "guaranteed", "decreed"});
    return !OneOf(w, {"embed", "shred"});
  }
  return kIrregular.count(w) > 0;
}

bool IsModal(std::string_view w) {
  static const std::unordered_set<std::string_view> kModals = {
      "can", "could", "will", "would", "shall", "should", "may", "might", "must", "can't",
      "cannot", "couldn't", "won't", "wouldn't", "shouldn't", "mustn't", "didn't", "wasn't",
      "weren't", "hadn't", "ought"};
  return kModals.count(w) > 0;
}

std::string ThirdPersonSingular(std::string_view v) {
  if (v == "am" || v == "are" || v == "be") return "is";
  if (v == "have") return "has";
  if (v == "do") return "does";
  if (v == "go") return "goes";
  if (v == "don't") return "doesn't";
  if (v == "haven't") return "hasn't";
  if (v == "aren't") return "isn't";
  if (v.empty() || !IsAlphaWord(v) || IsModal(v) || IsPastForm(v)) return std::string(v);
  const auto ends = [&](std::string_view suf) {
    return v.size() > suf.size() && v.substr(v.size() - suf.size()) == suf;
  };
  if (ends("s") || ends("sh") || ends("ch") || ends("x") || ends("z") || ends("o"))
    return std::string(v) + "es";
  if (ends("y") && v.size() >= 2 &&
      std::string_view("aeiou").find(v[v.size() - 2]) == std::string_view::npos)
    return std::string(v.substr(0, v.size() - 1)) + "ies";
  return std::string(v) + "s";
}

bool IsAlphaWord(std::string_view w) {
  if (w.empty()) return false;
  return std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

bool OneOf(std::string_view w, const std::vector<std::string_view>& list) {
  return std::find(list.begin(), list.end(), w) != list.end();
}

std::string WithApostrophes(std::string_view sentence) {
  static const std::unordered_map<std::string_view, std::string_view> kForms = {
      {"im", "I'm"},           {"ive", "I've"},
      {"dont", "don't"},       {"cant", "can't"},
      {"didnt", "didn't"},     {"doesnt", "doesn't"},
      {"isnt", "isn't"},       {"wasnt", "wasn't"},
      {"arent", "aren't"},     {"werent", "weren't"},
      {"havent", "haven't"},   {"hasnt", "hasn't"},
      {"hadnt", "hadn't"},     {"couldnt", "couldn't"},
      {"wouldnt", "wouldn't"}, {"shouldnt", "shouldn't"},
      {"thats", "that's"},     {"whats", "what's"},
      {"youre", "you're"},     {"theyre", "they're"},
      {"weve", "we've"},       {"theyve", "they've"},
      {"youve", "you've"},     {"shes", "she's"},
      {"itll", "it'll"}};
  std::string out;
  out.reserve(sentence.size() + 8);
  std::size_t i = 0;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  while (i < sentence.size()) {
    if (!letter(sentence[i])) {
      out += sentence[i++];
      continue;
    }
    std::size_t j = i;
    while (j < sentence.size() && letter(sentence[j])) ++j;
    const std::string_view word = sentence.substr(i, j - i);
    // (A word joined to the next by an apostrophe or a hyphen is another word.)
    const bool joined = j < sentence.size() && (sentence[j] == '\'' || sentence[j] == '-');
    auto it = kForms.end();
    if (!joined && word.size() >= 2 && word.size() <= 8) {  // the forms' lengths
      char lower[8];
      for (std::size_t k = 0; k < word.size(); ++k)
        lower[k] = static_cast<char>(std::tolower(static_cast<unsigned char>(word[k])));
      it = kForms.find(std::string_view(lower, word.size()));
    }
    if (it == kForms.end()) {
      out += word;
    } else {
      std::string form(it->second);
      if (form[0] != 'I' && word[0] >= 'A' && word[0] <= 'Z')
        form[0] = static_cast<char>(form[0] - 32);
      out += form;
    }
    i = j;
  }
  return out;
}

}  // namespace engram::builtin
