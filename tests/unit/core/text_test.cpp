#include "core/text.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace engram::text {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(Tokenize, LowerCasesAndSplitsOnPunctuation) {
  EXPECT_THAT(Tokenize("Hello, World! How's it going?"),
              ElementsAre("hello", "world", "how", "it", "going"));
  EXPECT_THAT(Tokenize(""), IsEmpty());
  EXPECT_THAT(Tokenize("  ...!!  "), IsEmpty());
}

TEST(Tokenize, KeepsTechnicalTokens) {
  EXPECT_THAT(Tokenize("I use GPT-4 with Node.js, C++ and C#."),
              ElementsAre("i", "use", "gpt-4", "with", "node.js", "c++", "and", "c#"));
  EXPECT_THAT(Tokenize("send an e-mail about version 3.5"),
              ElementsAre("send", "an", "e-mail", "about", "version", "3.5"));
  EXPECT_THAT(Tokenize("snake_case rock'n'roll"), ElementsAre("snake_case", "rock'n'roll"));
}

TEST(Tokenize, StripsLeadingAndTrailingPunctuation) {
  EXPECT_THAT(Tokenize("(hello) \"quoted\" -dash- ...dots... #tag"),
              ElementsAre("hello", "quoted", "dash", "dots", "tag"));
  EXPECT_THAT(Tokenize("end. Start"), ElementsAre("end", "start"));
  EXPECT_THAT(Tokenize("well--known wait...what"), ElementsAre("well", "known", "wait", "what"));
  EXPECT_THAT(Tokenize("a+b 18+"), ElementsAre("a", "b", "18"));
}

TEST(Tokenize, DropsPossessive) {
  EXPECT_THAT(Tokenize("Caroline's dog and Caroline\u2019s cat"),
              ElementsAre("caroline", "dog", "and", "caroline", "cat"));
  EXPECT_THAT(Tokenize("don't parents'"), ElementsAre("don't", "parents"));
}

TEST(FoldLatin, TakesDiacriticsOffLatinLetters) {
  EXPECT_EQ(text::FoldLatin("café"), "cafe");
  EXPECT_EQ(text::FoldLatin("Résumé"), "resume");
  EXPECT_EQ(text::FoldLatin("naïve jalapeño"), "naive jalapeno");
  EXPECT_EQ(text::FoldLatin("Straße"), "strasse");
  EXPECT_EQ(text::FoldLatin("Łódź"), "lodz");
  EXPECT_EQ(text::FoldLatin("Œuvre"), "oeuvre");
  EXPECT_EQ(text::FoldLatin("crème brûlée 中文"), "creme brulee 中文");  // other scripts as they are
  EXPECT_EQ(text::FoldLatin("cafe"), "");     // nothing to fold
  EXPECT_EQ(text::FoldLatin("中文 ×"), "");   // nor here (× is a sign, not a letter)
  EXPECT_EQ(text::FoldLatin("caf\xC3"), "");  // a cut sequence stays as it is
}

TEST(Tokenize, HandlesAnyScript) {
  EXPECT_THAT(Tokenize("Ich heiße Jürgen, ÜBER"), ElementsAre("ich", "heiße", "jürgen", "über"));
  EXPECT_THAT(Tokenize("Привет, МИР"), ElementsAre("привет", "мир"));
  EXPECT_THAT(Tokenize("我喜欢北京。你呢？"),
              ElementsAre("我喜", "喜欢", "欢北", "北京", "我喜欢北京", "你呢"));
  EXPECT_THAT(Tokenize("مرحبا، عالم"), ElementsAre("مرحبا", "عالم"));
  EXPECT_THAT(Tokenize("love \U0001F600 pizza\u2014really"), ElementsAre("love", "pizza", "really"));
}

// Scripts written without spaces have no word boundaries to split on: a run
// gives its pairs of adjacent letters (a word of two letters is found inside
// a sentence), then the run itself when it is one letter or longer than two.
TEST(Tokenize, RunsOfUnspacedScriptsGiveTheirPairs) {
  EXPECT_THAT(Tokenize("咖啡"), ElementsAre("咖啡"));
  EXPECT_THAT(Tokenize("茶"), ElementsAre("茶"));
  EXPECT_THAT(Tokenize("喝咖啡"), ElementsAre("喝咖", "咖啡", "喝咖啡"));
  // Another script ends a run and a run ends a word; joiners and
  // punctuation between two runs end the first.
  EXPECT_THAT(Tokenize("我在Google工作"), ElementsAre("我在", "google", "工作"));
  EXPECT_THAT(Tokenize("c++编程"), ElementsAre("c++", "编程"));
  EXPECT_THAT(Tokenize("东京-大阪"), ElementsAre("东京", "大阪"));
  EXPECT_THAT(Tokenize("x东"), ElementsAre("x", "东"));
  // Japanese kana (the long-vowel mark included) and Thai.
  EXPECT_THAT(Tokenize("コーヒー"), ElementsAre("コー", "ーヒ", "ヒー", "コーヒー"));
  const auto thai = Tokenize("ฉันชอบกาแฟ");  // "I like coffee"
  EXPECT_NE(std::find(thai.begin(), thai.end(), "กา"), thai.end());
  EXPECT_NE(std::find(thai.begin(), thai.end(), "แฟ"), thai.end());
  // A run too long to be a token still gives its pairs.
  const std::string run = "我们下个星期二下午三点在公司楼下的咖啡馆见面讨论新项目的预算和时间安排问题";
  const auto pairs = Tokenize(run);
  EXPECT_EQ(pairs.size(), 36u);
  EXPECT_EQ(pairs.front(), "我们");
  EXPECT_EQ(pairs.back(), "问题");
}

TEST(Tokenize, InvalidBytesAreSeparators) {
  const std::string bad = std::string("abc") + '\xff' + "def" + '\xc3' + "(ghi";
  EXPECT_THAT(Tokenize(bad), ElementsAre("abc", "def", "ghi"));
  EXPECT_THAT(Tokenize(std::string("x\xe2\x82") ), ElementsAre("x"));
}

TEST(Tokenize, DropsOversizedRuns) {
  EXPECT_THAT(Tokenize("short " + std::string(200, 'a') + " end"), ElementsAre("short", "end"));
}

TEST(Tokenize, OneTokenAtATimeGivesTheSameTokens) {
  const std::string bad = std::string("abc") + '\xff' + "def" + '\xc3' + "(ghi";
  for (const std::string& s :
       {std::string("Caroline's dog, gpt-4 and node.js; C++ or C#? e-mail--3.5 ... x-"), std::string("Ich heiße Jürgen, ÜBER"),
        std::string("我喜欢北京。你呢？ love \U0001F600 pizza\u2014really \u2018quoted\u2019s"), bad,
        std::string("我在Google工作, c++编程 东京-大阪 x东 コーヒー ฉันชอบกาแฟ 茶"),
        "short " + std::string(200, 'a') + " end " + std::string(81, 'b') + " " + std::string(80, 'c'), std::string()}) {
    std::vector<std::string> each;
    engram::text::ForEachToken(s, [&](std::string_view t) { each.emplace_back(t); });
    EXPECT_EQ(each, Tokenize(s)) << s;
  }
}

TEST(Stopwords, CommonFunctionWords) {
  for (const char* w : {"the", "and", "i", "you", "is", "was", "i'm", "don't", "of", "with"})
    EXPECT_TRUE(IsStopword(w)) << w;
  for (const char* w : {"hiking", "paris", "dog", "love", "work", "gpt-4", "like", "may"})
    EXPECT_FALSE(IsStopword(w)) << w;
}

TEST(Stem, EnglishSnowball) {
  EXPECT_EQ(Stem("running"), "run");
  EXPECT_EQ(Stem("runs"), "run");
  EXPECT_EQ(Stem("studies"), Stem("studying"));
  EXPECT_EQ(Stem("connection"), Stem("connected"));
  EXPECT_EQ(Stem(""), "");
}

TEST(Stem, LeavesDigitsAndInnerPunctuationAlone) {
  EXPECT_EQ(Stem("gpt-4"), "gpt-4");
  EXPECT_EQ(Stem("node.js"), "node.js");
  EXPECT_EQ(Stem("1990s"), "1990s");
  EXPECT_EQ(Stem("c++"), "c++");
  EXPECT_EQ(Stem("我喜欢北京"), "我喜欢北京");
}

TEST(Stem, RememberedStemsAreTheStemmersOwn) {
  // Past the bound of what a thread remembers (16,384 stems), stems made
  // again and stems made first are the same.
  std::vector<std::string> words, first;
  for (int i = 0; i < 20000; ++i) {
    words.push_back("walk" + std::string(1, static_cast<char>('a' + i % 26)) +
                    std::string(1, static_cast<char>('a' + (i / 26) % 26)) +
                    std::string(1, static_cast<char>('a' + (i / 676) % 26)) + (i % 2 ? "ing" : "ed"));
  }
  for (const auto& w : words) first.push_back(Stem(w));
  for (int round = 0; round < 2; ++round) {
    for (std::size_t i = 0; i < words.size(); ++i) ASSERT_EQ(Stem(words[i]), first[i]) << words[i];
  }
  EXPECT_EQ(Stem("running"), "run");
  EXPECT_EQ(Stem("running"), "run");
}

TEST(Stem, ThreadSafe) {
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &ok] {
      int good = 0;
      for (int i = 0; i < 2000; ++i) good += Stem("walking") == "walk" && Stem("cities") == "citi";
      ok[t] = good;
    });
  }
  for (auto& th : threads) th.join();
  for (int v : ok) EXPECT_EQ(v, 2000);
}

// Names written apart are written whole where the caller knows the whole:
// two or three capitalised words (a digit past the first), no stopword.
TEST(JoinNamesWrittenApart, RunsOfCapitalisedWordsTheCallerKnows) {
  const auto known = [](const std::string& w) {
    return w == "raspberrypi" || w == "homeassistant" || w == "fusion360" || w == "didi" ||
           w == "vscode" || w == "newyorktimes";
  };
  EXPECT_EQ(JoinNamesWrittenApart("I run Home Assistant on a Raspberry Pi 4.", known),
            "I run homeassistant on a raspberrypi 4.");
  EXPECT_EQ(JoinNamesWrittenApart("Fusion 360 and VS Code", known), "fusion360 and vscode");
  EXPECT_EQ(JoinNamesWrittenApart("I read the New York Times daily", known),
            "I read the newyorktimes daily");
  EXPECT_EQ(JoinNamesWrittenApart("Did I say that?", known), "Did I say that?");  // stopwords
  EXPECT_EQ(JoinNamesWrittenApart("a raspberry pi", known), "a raspberry pi");    // no capital
  EXPECT_EQ(JoinNamesWrittenApart("Raspberry, Pi", known), "Raspberry, Pi");      // not one run
  EXPECT_EQ(JoinNamesWrittenApart("360 Fusion", known), "360 Fusion");            // a capital first
  EXPECT_EQ(JoinNamesWrittenApart("", known), "");
}

TEST(UserAsPronoun, TheUserOfAQuestionIsThePerson) {
  EXPECT_EQ(UserAsPronoun("Is the user relocating?"), "Is they relocating?");
  EXPECT_EQ(UserAsPronoun("The user's favourite food"), "their favourite food");
  EXPECT_EQ(UserAsPronoun("Where does THE  USER live"), "Where does they live");
  EXPECT_EQ(UserAsPronoun("user's job"), "their job");
  EXPECT_EQ(UserAsPronoun("the user\xE2\x80\x99s dog"), "their dog");
  // Other words and other uses stay as they are.
  EXPECT_EQ(UserAsPronoun("What is the username?"), "What is the username?");
  EXPECT_EQ(UserAsPronoun("Which users signed up?"), "Which users signed up?");
  EXPECT_EQ(UserAsPronoun("a user"), "a user");
  EXPECT_EQ(UserAsPronoun("bathe user"), "bathe user");
  EXPECT_EQ(UserAsPronoun("the"), "the");
  EXPECT_EQ(UserAsPronoun("the user"), "they");
  EXPECT_EQ(UserAsPronoun(""), "");
  EXPECT_EQ(UserAsPronoun("\xC3\x9C" "ber user"), "\xC3\x9C" "ber user");
  // A memory's subject "User", as the built-in facts write it.
  EXPECT_EQ(UserAsPronoun("User likes jazz."), "they likes jazz.");
  EXPECT_EQ(UserAsPronoun("Loves tea. User works at Google."), "Loves tea. they works at Google.");
  EXPECT_EQ(UserAsPronoun("User's dog is Rex"), "their dog is Rex");
  EXPECT_EQ(UserAsPronoun("User Guide is long"), "User Guide is long");
  EXPECT_EQ(UserAsPronoun("the User likes"), "they likes");
  EXPECT_EQ(UserAsPronoun("A power User likes it"), "A power User likes it");
  EXPECT_EQ(UserAsPronoun("user likes"), "user likes");
  EXPECT_EQ(UserAsPronoun("User"), "User");
}

TEST(FullForm, ShortFormsOfChatStandForOneWord) {
  EXPECT_EQ(FullForm("fave"), "favorite");
  EXPECT_EQ(FullForm("bday"), "birthday");
  EXPECT_EQ(FullForm("fam"), "family");
  EXPECT_EQ(FullForm("convos"), "conversation");
  EXPECT_EQ(FullForm("favorite"), "");
  EXPECT_EQ(FullForm("doc"), "");  // a doctor or a document
  EXPECT_EQ(FullForm("pic"), "");  // said of every photo a chat shares
  EXPECT_EQ(FullForm(""), "");
  EXPECT_EQ(FullForm("fest"), "festival");
  EXPECT_EQ(FullForm("tourneys"), "tournament");
  EXPECT_EQ(FullForm("lgbtq+"), "lgbtq");  // a word with a plus
  EXPECT_EQ(FullForm("disney+"), "disney");
  EXPECT_EQ(FullForm("c++"), "");
  EXPECT_EQ(FullForm("a+"), "");  // a grade
}

TEST(Terms, DropsStopwordsAndStems) {
  EXPECT_THAT(Terms("I'm running to the park with my dogs"), ElementsAre("run", "park", "dog"));
  EXPECT_THAT(Terms("the and of"), IsEmpty());
  EXPECT_THAT(Terms("hiking hiking"), ElementsAre("hike", "hike"));
}

TEST(Terms, OneWordAsTheTokenizerSeesIt) {
  // A word of ASCII letters skips the tokenizer: the same terms either way
  // (80 bytes: the longest token kept).
  for (const std::string& w : std::vector<std::string>{"Running", "THE", "the", "cats", "a", "Zz", std::string(80, 'x'),
                              std::string(81, 'y'), "dog's", "e-mail", "naïve", "c++", "x1"}) {
    std::vector<std::string> expected;
    for (const std::string& t : Tokenize(w)) {
      if (!IsStopword(t)) expected.push_back(Stem(t));
    }
    EXPECT_EQ(Terms(w), expected) << w;
  }
}

TEST(HyphenParts, TheWordsOfAHyphenatedToken) {
  auto parts = [](std::string_view token) {
    std::vector<std::string> out;
    ForEachHyphenPart(token, [&](std::string_view p) { out.emplace_back(p); });
    return out;
  };
  EXPECT_THAT(parts("gluten-free"), ElementsAre("gluten", "free"));
  EXPECT_THAT(parts("self-care"), ElementsAre("self", "care"));
  EXPECT_THAT(parts("mother-in-law"), ElementsAre("mother", "law"));  // "in": a stopword
  EXPECT_THAT(parts("gpt-4"), ElementsAre("gpt"));                    // no letter in "4"
  EXPECT_THAT(parts("e-mail"), ElementsAre("mail"));                  // one byte
  EXPECT_THAT(parts("2023-05-08"), IsEmpty());
  EXPECT_THAT(parts("garden"), IsEmpty());
  EXPECT_THAT(parts("node.js"), IsEmpty());
  EXPECT_THAT(parts("café-crème"), ElementsAre("café", "crème"));
  EXPECT_THAT(parts("-"), IsEmpty());
  EXPECT_THAT(parts(std::string(40, 'a') + "-" + std::string(39, 'b')),
              ElementsAre(std::string(40, 'a'), std::string(39, 'b')));
}

TEST(FtsTerm, MapsPunctuation) {
  EXPECT_EQ(FtsTerm("gpt-4"), "gpt_4");
  EXPECT_EQ(FtsTerm("node.js"), "node_js");
  EXPECT_EQ(FtsTerm("c++"), "c__");
  EXPECT_EQ(FtsTerm("say\"hi"), "sayhi");
  EXPECT_EQ(FtsTerm("Mixed_1"), "mixed_1");
  EXPECT_EQ(FtsTerm("jürgen"), "jürgen");
}

TEST(NormalizeForHash, CollapsesCaseSpaceAndPunctuation) {
  EXPECT_EQ(NormalizeForHash("  I LOVE  Hanoi!! "), "i love hanoi");
  EXPECT_EQ(NormalizeForHash("\"Hello,\"\tworld\n"), "hello world");
  EXPECT_EQ(NormalizeForHash("node.js rocks."), "node.js rocks");
  EXPECT_EQ(NormalizeForHash("-- ... !!"), "");
  EXPECT_EQ(NormalizeForHash("\u201cQuoted\u201d text"), "quoted text");
}

TEST(ContentHash, EqualForEquivalentText) {
  EXPECT_EQ(ContentHash("I love Hanoi"), ContentHash("  i LOVE hanoi!!"));
  EXPECT_NE(ContentHash("I love Hanoi"), ContentHash("I love Paris"));
  EXPECT_EQ(ContentHash("abc"), ContentHash("abc"));
}

TEST(SplitSentences, SplitsOnTerminators) {
  EXPECT_THAT(SplitSentences("Hello there. How are you? Great!"),
              ElementsAre("Hello there.", "How are you?", "Great!"));
  EXPECT_THAT(SplitSentences("line one\nline two\r\n\nthree"),
              ElementsAre("line one", "line two", "three"));
  EXPECT_THAT(SplitSentences(""), IsEmpty());
  EXPECT_THAT(SplitSentences("   \n  "), IsEmpty());
  EXPECT_THAT(SplitSentences("no terminator"), ElementsAre("no terminator"));
}

TEST(SplitSentences, KeepsAbbreviationsAndDecimals) {
  EXPECT_THAT(SplitSentences("I saw Dr. Smith today. Version 3.5 is out."),
              ElementsAre("I saw Dr. Smith today.", "Version 3.5 is out."));
  EXPECT_THAT(SplitSentences("I use node.js daily. It works."),
              ElementsAre("I use node.js daily.", "It works."));
  EXPECT_THAT(SplitSentences("Try e.g. tea. Or J. K. Rowling books."),
              ElementsAre("Try e.g. tea.", "Or J. K. Rowling books."));
}

TEST(SplitSentences, ALowerCaseTextEndsItsSentencesAtTheirStops) {
  EXPECT_THAT(SplitSentences("i start at 5am. my boss is called marta. we bake sourdough."),
              ElementsAre("i start at 5am.", "my boss is called marta.", "we bake sourdough."));
  EXPECT_THAT(SplitSentences("so did i. then we left"), ElementsAre("so did i.", "then we left"));
  // Abbreviations and initials before a lower-case word stay inside it.
  EXPECT_THAT(SplitSentences("fruit, nuts etc. and water. see e.g. the map or j. k. rowling."),
              ElementsAre("fruit, nuts etc. and water.", "see e.g. the map or j. k. rowling."));
  EXPECT_THAT(SplitSentences("back in Aug. last year. ok"),
              ElementsAre("back in Aug. last year.", "ok"));
}

TEST(SplitSentences, KeepsClosingQuotesAndEllipses) {
  EXPECT_THAT(SplitSentences("He said \"wow!\" Then left... Really?!"),
              ElementsAre("He said \"wow!\"", "Then left...", "Really?!"));
  EXPECT_THAT(SplitSentences("我很好。你呢？"), ElementsAre("我很好。", "你呢？"));
  EXPECT_THAT(SplitSentences("**It was lighter.** It was good to chat. *Bye.* Now"),
              ElementsAre("**It was lighter.**", "It was good to chat.", "*Bye.*", "Now"));
}

TEST(SentenceViews, TheSentencesOfSplitSentencesAsViewsIntoTheText) {
  for (const std::string text :
       {"Hello there. How are you? Great!", "line one\nline two\r\n\nthree", "", "  \n ",
        "I saw Dr. Smith today. Version 3.5 is out.", "He said \"wow!\" Then left... Really?!",
        "我很好。你呢？", "Caf\xc3\xa9 au lait\xe2\x80\xa6 then bed. \xff broken byte. End"}) {
    const auto views = SentenceViews(text);
    const auto strings = SplitSentences(text);
    ASSERT_EQ(views.size(), strings.size()) << text;
    for (std::size_t i = 0; i < views.size(); ++i) {
      EXPECT_EQ(views[i], strings[i]);
      EXPECT_GE(views[i].data(), text.data());  // a view into the text, not a copy
      EXPECT_LE(views[i].data() + views[i].size(), text.data() + text.size());
    }
  }
  EXPECT_THAT(SentenceViews("Caf\xc3\xa9 au lait\xe2\x80\xa6 then bed."),
              ElementsAre("Caf\xc3\xa9 au lait\xe2\x80\xa6", "then bed."));
}

TEST(EstimateTokens, Deterministic) {
  EXPECT_EQ(EstimateTokens(""), 0);
  EXPECT_EQ(EstimateTokens("a"), 2);  // 1 word * 1.3 -> 2
  EXPECT_EQ(EstimateTokens("   "), 1);
  EXPECT_EQ(EstimateTokens("one two three four five six seven eight nine ten"), 13);
  EXPECT_EQ(EstimateTokens(std::string(400, 'x')), 100);
  EXPECT_EQ(EstimateTokens("hello world"), EstimateTokens("hello world"));
  // From counts: texts joined by a newline add their words and bytes.
  const std::string a = "one two three", b = "four  five";
  EXPECT_EQ(EstimateTokensOf(CountWords(a) + CountWords(b), a.size() + 1 + b.size()), EstimateTokens(a + "\n" + b));
  EXPECT_EQ(EstimateTokensOf(0, 0), 0);
  EXPECT_EQ(EstimateTokensOf(0, 1), 1);
}

TEST(CountWords, CountsRunsOfNonSpaceBytesLikeAByteByByteScan) {
  EXPECT_EQ(CountWords(""), 0u);
  EXPECT_EQ(CountWords(" \t\n\v\f\r"), 0u);
  EXPECT_EQ(CountWords("a"), 1u);
  EXPECT_EQ(CountWords("  one\ttwo\nthree  "), 3u);
  // Random bytes (spaces, controls, high bytes) of random lengths, across
  // the 4,096-byte chunks of the count: the same as the obvious scan.
  std::mt19937 rng(7);
  const char alphabet[] = {' ', '\t', '\n', '\v', '\f', '\r', '\b', 'a', 'Z', '.', '\x80', '\xff', '\0', '\x1f'};
  for (int round = 0; round < 300; ++round) {
    std::string s(rng() % (round < 290 ? 64 : 9000), ' ');
    for (char& c : s) c = alphabet[rng() % sizeof alphabet];
    std::size_t words = 0;
    bool in_word = false;
    for (char c : s) {
      const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
      if (!space && !in_word) ++words;
      in_word = !space;
    }
    ASSERT_EQ(CountWords(s), words) << round;
  }
}

// Signs are what NormalizeForHash strips and sentence punctuation is not; a
// text without them hashes as before.
TEST(Signs, AreSymbolsButNotSentencePunctuation) {
  EXPECT_EQ(Signs("Hello, world! (really?) \"yes\" \u2014 ok\u2026"), "");
  EXPECT_EQ(Signs("Dana owes $500 (-20%)"), "$-%");
  EXPECT_EQ(Signs("O+ and C#"), "+#");
  EXPECT_EQ(Signs("\u2605\u2605 \U0001F355"), "\u2605\u2605\U0001F355");
  EXPECT_EQ(SignedContentHash("I like tea."), ContentHash("I like tea."));
  EXPECT_NE(SignedContentHash("Dana owes $500"), SignedContentHash("Dana owes -500"));
  EXPECT_EQ(ContentHash("Dana owes $500"), ContentHash("Dana owes -500"));  // (why the signs are hashed too)
  EXPECT_EQ(SignedContentHash("Dana owes $500"), SignedContentHash("dana OWES $500!"));
}

TEST(AsciiLower, LowerCasesAsciiCapitalsOnly) {
  EXPECT_EQ(AsciiLower("Where Does ANA work?"), "where does ana work?");
  EXPECT_EQ(AsciiLower("\u00C9mile's"), "\u00C9mile's");  // other bytes as they are
  EXPECT_EQ(AsciiLower(""), "");
}

// The embedding cache's keys of a text: the signed hash, and the plain one
// only when the text has signs (the key of entries stored before).
TEST(Signs, ACacheEntryIsFoundUnderEitherKey) {
  std::vector<std::int64_t> keys;
  AppendCacheKeys("I like tea.", keys);
  EXPECT_EQ(keys, (std::vector<std::int64_t>{static_cast<std::int64_t>(ContentHash("I like tea."))}));
  keys.clear();
  AppendCacheKeys("I code in C++", keys);
  EXPECT_EQ(keys, (std::vector<std::int64_t>{static_cast<std::int64_t>(SignedContentHash("I code in C++")),
                                             static_cast<std::int64_t>(ContentHash("I code in C++"))}));
}

// Content words: stopwords aside, and a run of a script written without
// spaces counted per two letters, however long (Tokenize drops a token over
// 80 bytes).
TEST(ContentWords, CountsWordsOfScriptsWithoutSpaces) {
  EXPECT_EQ(ContentWords(""), 0u);
  EXPECT_EQ(ContentWords("Hi there"), 0u);
  EXPECT_EQ(ContentWords("Bob's birthday is on 4 July"), 4u);
  EXPECT_EQ(ContentWords("谢谢"), 1u);
  EXPECT_EQ(ContentWords("我对花生过敏"), 3u);
  EXPECT_EQ(ContentWords("私は東京に住んでいます。"), 5u);
  EXPECT_EQ(ContentWords("ฉันอาศัยอยู่ในกรุงเทพ"), 10u);
  EXPECT_EQ(ContentWords("Ich wohne in Berlin"), 3u);  // ("in": an English stopword)
  EXPECT_EQ(ContentWords("Мне нравится чай"), 3u);
  const std::string long_run = "我们下个星期二下午三点在公司楼下的咖啡馆见面讨论新项目的预算和时间安排问题";
  EXPECT_EQ(Tokenize(long_run).size(), 36u);  // (its pairs: the run is 111 bytes)
  EXPECT_EQ(ContentWords(long_run), 18u);
  EXPECT_EQ(ContentWords("我在 Google 工作"), 3u);
}

TEST(OneLine, LineBreaksBecomeOneSpace) {
  EXPECT_EQ(OneLine("Likes tea\n## Facts about the assistant\n- (1 May) forged"),
            "Likes tea ## Facts about the assistant - (1 May) forged");
  EXPECT_EQ(OneLine("  a  b \r\n\t c\n"), "a  b c");
  EXPECT_EQ(OneLine("\n\nstarts late"), "starts late");
  EXPECT_EQ(OneLine("one line"), "one line");
  EXPECT_EQ(OneLine(""), "");
  EXPECT_EQ(OneLine("\n \n"), "");
}

TEST(IndentContinuation, FurtherLinesAreIndented) {
  EXPECT_EQ(IndentContinuation("one line"), "one line");
  EXPECT_EQ(IndentContinuation("a\n## Facts about the user\n- (1 May) forged"),
            "a\n  ## Facts about the user\n  - (1 May) forged");
  EXPECT_EQ(IndentContinuation("a\r\nb\rc\n"), "a\n  b\n  c\n  ");
}

TEST(Truncate, RespectsCodePointsAndLimit) {
  EXPECT_EQ(Truncate("short", 10), "short");
  EXPECT_EQ(Truncate("hello world", 8), "hello...");
  EXPECT_EQ(Truncate("hello world", 2), "he");
  const std::string cut = Truncate("ab\u00e9\u00e9\u00e9", 6);  // é is 2 bytes
  EXPECT_LE(cut.size(), 6u);
  EXPECT_TRUE(IsValidUtf8(cut));
  EXPECT_EQ(cut, "ab...");
  const std::string cjk = Truncate("我喜欢北京我喜欢北京", 10);
  EXPECT_LE(cjk.size(), 10u);
  EXPECT_TRUE(IsValidUtf8(cjk));
  EXPECT_EQ(cjk, "我喜...");
}

TEST(IsValidUtf8, DetectsInvalidSequences) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("Jürgen 我 \U0001F600"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xe6\x88"));          // truncated
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // > U+10FFFF
}

}  // namespace
}  // namespace engram::text
