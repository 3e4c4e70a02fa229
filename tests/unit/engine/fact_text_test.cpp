// The text checks behind a fact add's duplicate decision
// (memory/facts/fact_text.hpp): negations and numbers, function words and
// order, the text shape of a
// paraphrase and the paraphrase itself (with the WordNet the build makes).
#include "memory/facts/fact_text.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/text.hpp"
#include "core/wordnet.hpp"

namespace engram::memory::facts {
namespace {

TEST(FactText, AShortFormIsScoredByItsFullWordAlone) {
  for (const char* query : {"my bday party", "her hubby", "ten mins"}) {
    const auto terms = LexicalTerms(query);
    const auto scored = ScoringTerms(terms, query);
    EXPECT_EQ(scored.size() + 1, terms.size()) << query;  // the short form's own term left out
  }
  EXPECT_EQ(ScoringTerms(LexicalTerms("birthday party"), "birthday party"), LexicalTerms("birthday party"));
  EXPECT_EQ(ScoringTerms(LexicalTerms("my bday party"), "my bday party"),
            (std::vector<std::string>{text::Stem("birthday"), "parti"}));
}

TEST(FactText, NegationsAndNumbersMustAgree) {
  struct Case {
    const char* a;
    const char* b;
    bool agree;
  };
  const Case cases[] = {
      {"I am allergic to peanuts", "I am allergic to Peanuts!", true},
      {"I am allergic to peanuts", "I am not allergic to peanuts", false},
      {"I hate loud music", "I don't hate loud music", false},
      {"I hate loud music", "I dont hate loud music", false},
      {"I hate loud music", "I don\u2019t hate loud music", false},  // the apostrophe splits the token
      {"I eat meat", "I never eat meat", false},
      {"I eat meat", "I eat no meat", false},
      {"I do not eat meat", "I never eat meat", true},  // two denials in other words agree
      {"The meeting is on 12 May", "The meeting is on 13 May", false},
      {"I have two kids", "I have three kids", false},
      {"I run twice a week", "I run once a week", false},
      {"Flight at 10 am on 12 May", "On 12 May, the flight at 10 am", true},
  };
  for (const Case& c : cases) EXPECT_EQ(AgreeInNegationAndNumbers(c.a, c.b), c.agree) << c.a << " / " << c.b;
}

// A bag of hashed words leaves out the function words, so "before lunch" and
// "after lunch" embed alike: a near-duplicate must hold the same ones, each
// leading to the same content word.
TEST(FactText, QuestionsForANumberAndTextsThatSayOne) {
  for (const char* q : {"How many kids does she have?", "how much did it cost", "How old is Leo?",
                        "At what age will he retire?", "Which number does he wear?", "What amount was raised?"}) {
    EXPECT_TRUE(AsksHowMany(text::Tokenize(q))) << q;
  }
  for (const char* q : {"How does she like it?", "What is her job?", "When is the meeting?", "many thanks", ""}) {
    EXPECT_FALSE(AsksHowMany(text::Tokenize(q))) << q;
  }
  for (const char* t :
       {"I have two cats", "a seed round of $2m", "She manages 12 engineers",
        "about a dozen plants", "our twins", "a couple of times", "Nine years old",
        "we go twice a week", "She wants to retire at fifty-five", "the twenty-first floor"}) {
    EXPECT_TRUE(HoldsNumber(t)) << t;
  }
  for (const char* t : {"I have cats", "the one I like", "my first car", "both of them",
                        "once upon a time", "", "a well-known one-off", "two-faced"}) {
    EXPECT_FALSE(HoldsNumber(t)) << t;
  }
}

TEST(FactText, WhomAMemoryIsAboutAndWhetherAQuestionAsksAboutTheUserAlone) {
  const wordnet::WordNet* wn = wordnet::WordNet::Default();
  ASSERT_NE(wn, nullptr) << "no WordNet image: the build makes it (wordnet-base, installed by scripts/bootstrap)";
  for (const char* m : {"I live in a small flat in Leeds", "I'm allergic to peanuts",
                        "We're moving to Denver", "The user prefers dark mode", "User likes jazz",
                        "My coffee order is a flat white", "My partner and I want a puppy",
                        "Our home Wi-Fi is a mesh", "My dentist appointment is every six months",
                        "My doctor said I should cut sugar", "The user's favourite colour is green",
                        "User's laptop is a ThinkPad", "My favourite colour is green"}) {
    EXPECT_EQ(MemorySubject(m, wn), Subject::kUser) << m;
  }
  for (const char* m :
       {"My sister lives in Lisbon", "My twin brother is a chef", "Our son Eli has asthma",
        "Bob's birthday is on 4 July", "Priya is vegetarian",
        "Grandpa Kenji had a knee replacement", "My boss Karen wants the report by Friday",
        "My mother's birthday is in May", "The user's sister works as a nurse in Toronto",
        "User's son plays hockey", "My kids love pizza", "My mom went to Paris"}) {
    EXPECT_EQ(MemorySubject(m, wn), Subject::kOther) << m;
  }
  for (const char* m : {"Likes jazz and old soul records", "Coffee keeps me awake", "Tomorrow is the deadline", ""}) {
    EXPECT_EQ(MemorySubject(m, wn), Subject::kUnknown) << m;
  }
  for (const char* q : {"Where do I live?", "What do I do for a living?", "what can't i eat", "Where is the user based?",
                        "Which music do I like?"}) {
    EXPECT_TRUE(AsksAboutUser(q, text::Tokenize(q), wn)) << q;
  }
  for (const char* q : {"Where does my sister live?", "Who is my manager?", "What is my wife's job?",
                        "Where does she live?", "When is Bob's birthday?", "What does Priya eat?", "Where to live?"}) {
    EXPECT_FALSE(AsksAboutUser(q, text::Tokenize(q), wn)) << q;
  }
  for (const char* q : {"What is her occupation?", "When does he speak with his backers?",
                        "Where does she live?"}) {
    EXPECT_TRUE(AsksAboutOther(text::Tokenize(q))) << q;
  }
  for (const char* q :
       {"What did my sister say about her job?", "Where do I live?", "What is our plan for him?",
        "What does the user's sister do?", "When is Bob's birthday?"}) {
    EXPECT_FALSE(AsksAboutOther(text::Tokenize(q))) << q;
  }
  for (const char* m :
       {"I'm a civil engineer", "My coffee order is a flat white", "We're moving to Denver"}) {
    EXPECT_TRUE(SaidByUserOfThemselves(m, wn)) << m;
  }
  for (const char* m : {"The user negotiates contracts", "User likes jazz",
                        "My sister lives in Lisbon", "Priya is vegetarian", ""}) {
    EXPECT_FALSE(SaidByUserOfThemselves(m, wn)) << m;
  }
}

TEST(FactText, AQuestionForALivingIsMeantWithoutItsLiving) {
  EXPECT_EQ(QuestionMeant("What does she do for a living?"), "What does she do for a ?");
  EXPECT_EQ(QuestionMeant("what do I do FOR A LIVING"), "what do I do FOR A ");
  EXPECT_EQ(QuestionMeant("Where is the living room?"), "Where is the living room?");
  EXPECT_EQ(QuestionMeant("Is living for a cause enough?"), "Is living for a cause enough?");
  EXPECT_EQ(QuestionMeant("Qué hace Inés for a living?"), "Qué hace Inés for a ?");  // other letters kept as they are
  EXPECT_EQ(QuestionMeant(""), "");
}

// The words that frame a question say nothing of what it is about: "time"
// in "What time is the team sync?" matched, by meaning, any memory whose
// words are defined with "time" ("twin", "year"); "kind" in "What kind of
// work ...?" matched "type 2 diabetes".
TEST(FactText, TheFrameOfAQuestionIsNotMeant) {
  EXPECT_EQ(QuestionMeant("What time is the daily team sync?"), "What  is the daily team sync?");
  EXPECT_EQ(QuestionMeant("At which time does it open?"), "At which  does it open?");
  EXPECT_EQ(QuestionMeant("How old is her grandmother?"), "How old is her grandmother?");  // an age
  EXPECT_EQ(QuestionMeant("how often does he swim"), "how  does he swim");
  EXPECT_EQ(QuestionMeant("How long is the commute?"), "How  is the commute?");
  EXPECT_EQ(QuestionMeant("Is it time to renew the old lease?"), "Is it time to renew the old lease?");
  EXPECT_EQ(QuestionMeant("How was the long weekend?"), "How was the long weekend?");
  EXPECT_EQ(QuestionMeant("What kind of work do I do?"), "What  of work do I do?");
  EXPECT_EQ(QuestionMeant("Which type of bread?"), "Which  of bread?");
  EXPECT_EQ(QuestionMeant("What is her blood type?"), "What is her blood type?");
  EXPECT_EQ(QuestionMeant("She is kind of tired"), "She is  of tired");  // (a frame in any sentence)
  // What someone thinks of a thing asks about the thing: "think" matched
  // "considering" by meaning, above the memory that says "can't stand".
  EXPECT_EQ(QuestionMeant("What do I think of cilantro?"), "What do I  of cilantro?");
  EXPECT_EQ(QuestionMeant("How does Ana feel about dogs?"), "How does Ana  about dogs?");
  EXPECT_EQ(QuestionMeant("What is his opinion on remote work?"), "What is his  on remote work?");
  EXPECT_EQ(QuestionMeant("What does she think?"), "What does she think?");
  EXPECT_EQ(QuestionMeant("Does he feel better?"), "Does he feel better?");
  // Nor "come from": an origin or a cause, said in any words.
  EXPECT_EQ(QuestionMeant("Where does my back pain come from?"), "Where does my back pain  from?");
  EXPECT_EQ(QuestionMeant("When did she come home?"), "When did she come home?");
  // Nor the "called" or "named" that ends a question for a name.
  EXPECT_EQ(QuestionMeant("What are my cats called?"), "What are my cats ?");
  EXPECT_EQ(QuestionMeant("What is the dog named"), "What is the dog ");
  EXPECT_EQ(QuestionMeant("Who called me yesterday?"), "Who called me yesterday?");
  // Nor the "go" of "go bouldering", "went fishing": the activity is what is asked.
  const std::pair<const char*, const char*> going[] = {
      {"Where does the user go bouldering?", "Where does the user  bouldering?"},
      {"Who went fishing with him?", "Who  fishing with him?"},
      {"Where did she go?", "Where did she go?"},
      {"Is it going well?", "Is it going well?"},
      {"What is going on?", "What is going on?"},
      // Nor that of a question for a place: where to is what is asked.
      {"Where am I going for our anniversary?", "Where am I  for our anniversary?"},
      {"Where does my son go to school?", "Where does my son  to school?"},
      {"When are we going to Paris?", "When are we going to Paris?"}};
  for (const auto& [question, meant] : going) EXPECT_EQ(QuestionMeant(question), meant);
  // For its words the same, but "for a living" keeps its "living" (an
  // occupation matches it), and a question of frame words alone stays.
  EXPECT_EQ(QuestionWords("What kind of work do I do?"), "What  of work do I do?");
  EXPECT_EQ(QuestionWords("What does she do for a living?"), "What does she do for a living?");
  EXPECT_EQ(QuestionWords("What time is it?"), "What time is it?");
}

TEST(FactText, FunctionWordsAndOrderMustAgree) {
  struct Case {
    const char* a;
    const char* b;
    bool same;
  };
  const Case cases[] = {
      {"Call me before lunch", "Call me after lunch", false},
      {"Ship to Paris", "Ship from Paris", false},
      {"He is my manager", "She is my manager", false},
      {"Turn the lights on at 7", "Turn the lights off at 7", false},
      {"Put it above the shelf", "Put it below the shelf", false},
      {"I voted for the plan", "I voted against the plan", false},
      {"Fly from Paris to Rome", "Fly from Rome to Paris", false},
      {"I moved from Paris to Rome", "I moved to Rome from Paris", true},
      {"on Sundays Alice plays the cello", "Alice plays the cello on Sundays", true},
      {"I am not allergic to peanuts", "I am allergic to peanuts", false},
      {"I love sushi", "i LOVE Sushi!", true},
      {"I'm allergic to peanuts", "I am allergic to peanuts", true},
      {"I’m allergic to peanuts", "I am allergic to peanuts", true},
      {"I don't eat pork", "I do not eat pork", true},
      {"I won't fly", "I will not fly", true},
      {"I have a dog", "I have the dog", true},
      {"I've got a cat", "I have got a cat", true},
      // Signs: what a bag of words and the normalised text leave out.
      {"Dana owes $500", "Dana owes -500", false},
      {"My blood type is O+", "My blood type is O-", false},
      {"I code in C++", "I code in C#", false},
      {"Favourite food: 🍕", "Favourite food: 🍣", false},
      {"Dana owes $500", "dana owes $500!", true},
  };
  for (const Case& c : cases) EXPECT_EQ(SayTheSame(c.a, c.b), c.same) << c.a << " / " << c.b;
}

TEST(FactText, ParaphrasesShareTheirShape) {
  EXPECT_EQ(TextShape("I have two kids"), TextShape("I have two children"));
  EXPECT_EQ(TextShape("My car is red"), TextShape("My automobile is red"));
  EXPECT_EQ(TextShape("The car is red"), TextShape("car is red"));  // articles aside
  EXPECT_NE(TextShape("I have two kids"), TextShape("I have three kids"));
  EXPECT_NE(TextShape("I have two kids"), TextShape("I have two small kids"));
  EXPECT_NE(TextShape("I like tea"), TextShape("I don't like tea"));
  EXPECT_EQ(TextShape("I am not here"), 0u);  // nothing that may be another word
  std::string huge;
  for (int i = 0; i < 300; ++i) huge += "word ";
  EXPECT_EQ(TextShape(huge), 0u);  // too long to check
}

// A word a query writes in lower case that WordNet knows as a thing of a
// kind is no name the query names: "piano" in "Does Emma have a piano?"
// matched the name the first word of "Piano lessons for Emma" made. A name
// typed in lower case still is, and a place, a person or a group.
TEST(FactText, AQueryNamesNoThingItWritesInLowerCase) {
  ASSERT_NE(wordnet::WordNet::Default(), nullptr)
      << "no WordNet image: the build makes it (wordnet-base, installed by scripts/bootstrap)";
  auto has = [](std::string_view query, const std::string& name) {
    const auto names = QueryEntityNames(query);
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  EXPECT_FALSE(has("Does Emma have a piano?", "piano"));
  EXPECT_TRUE(has("Does Emma have a piano?", "emma"));
  EXPECT_TRUE(has("does emma have a piano", "emma"));
  EXPECT_TRUE(has("Does Emma play the Piano?", "piano"));  // written as a name
  EXPECT_TRUE(has("is she still in paris", "paris"));
  EXPECT_TRUE(has("what does bongani like", "bongani"));
  EXPECT_TRUE(has("Does Emma have a piano?", "a piano"));  // (pairs as before)
}

TEST(FactText, SameInOtherWordsOnlyWithSynonymsOfTheFirstSense) {
  const wordnet::WordNet* wn = wordnet::WordNet::Default();
  ASSERT_NE(wn, nullptr) << "no WordNet image: the build makes it (wordnet-base, installed by scripts/bootstrap)";
  EXPECT_TRUE(SameInOtherWords("I have two kids", "I have two children", wn));
  EXPECT_TRUE(SameInOtherWords("My car is red", "My automobile is red", wn));
  EXPECT_TRUE(SameInOtherWords("I hate loud music", "I detest loud music", wn));
  EXPECT_TRUE(SameInOtherWords("I bought a new sofa", "I bought the new couch", wn));
  EXPECT_FALSE(SameInOtherWords("Tom is a nurse", "Tom is a nanny", wn));          // a rarer sense
  EXPECT_FALSE(SameInOtherWords("Priya is vegan", "Priya is vegetarian", wn));     // a hypernym
  EXPECT_FALSE(SameInOtherWords("Priya is vegetarian", "Bob is vegetarian", wn));  // names
  EXPECT_FALSE(SameInOtherWords("I have two kids", "I have 2 children", wn));      // numbers as said
  EXPECT_FALSE(SameInOtherWords("I hate loud music", "I don't detest loud music", wn));
  EXPECT_FALSE(SameInOtherWords("I moved from Paris to Berlin", "I moved from Berlin to Paris", wn));
  EXPECT_FALSE(SameInOtherWords("My car is red", "My automobile is red", nullptr));
}

}  // namespace
}  // namespace engram::memory::facts
