// What kind of thing a question asks for, from the real WordNet (Debian's
// wordnet-base, installed by scripts/bootstrap; the build maps its image).
#include "core/answer_class.hpp"

#include <gtest/gtest.h>

#include <string>

namespace engram::answer {
namespace {

const wordnet::WordNet* Wn() { return wordnet::WordNet::Default(); }

#define REQUIRE_WORDNET() \
  ASSERT_NE(Wn(), nullptr) << "no WordNet: scripts/bootstrap installs wordnet-base and the build maps its image"

TEST(AnswerClass, TheFocusIsTheFirstNounAfterWhatOrWhich) {
  REQUIRE_WORDNET();
  EXPECT_EQ(QuestionFocus("What bird does he keep as a pet?", *Wn()), "bird");
  EXPECT_EQ(QuestionFocus("Which kind of instrument is Aiden practising?", *Wn()), "instrument");
  EXPECT_EQ(QuestionFocus("What is Anya's profession?", *Wn()), "profession");  // the name skipped
  EXPECT_EQ(QuestionFocus("So what did Caroline research?", *Wn()), "research");
  EXPECT_EQ(QuestionFocus("What did she like?", *Wn()), "");  // a verb, never the thing asked
  // The name, brand or model of a thing asks about the thing.
  EXPECT_EQ(QuestionFocus("What is the name of John's puppy?", *Wn()), "puppy");
  EXPECT_EQ(QuestionFocus("What are the names of her dogs?", *Wn()), "dogs");
  EXPECT_EQ(QuestionFocus("Which brand of coffee does he buy?", *Wn()), "coffee");
  EXPECT_EQ(QuestionFocus("What is her name?", *Wn()), "name");
  EXPECT_EQ(QuestionFocus("Where does she live?", *Wn()), "");
  EXPECT_EQ(QuestionFocus("", *Wn()), "");
}

// A hyphenated word before a noun modifies it: the noun is the thing asked
// for ("single" is a record, "board" a plank; "Google" no single-board
// computer). The last part of one that ends the phrase is its head.
TEST(AnswerClass, AHyphenatedModifierIsNoFocus) {
  REQUIRE_WORDNET();
  EXPECT_EQ(QuestionFocus("Which single-board computer is behind my house automation?", *Wn()),
            "computer");
  EXPECT_EQ(QuestionFocus("What part-time job does she have?", *Wn()), "job");
  EXPECT_EQ(QuestionFocus("What low-carb snack do I like?", *Wn()), "snack");
  EXPECT_EQ(QuestionFocus("Which e-reader do I use?", *Wn()), "reader");
  EXPECT_EQ(QuestionFocus("What long-term goal did he set?", *Wn()), "goal");
  // A single-board computer is a computer; a search engine's company is not.
  const auto c =
      AnswerClass::Of("Which single-board computer is behind my house automation?", Wn());
  EXPECT_EQ(c.focus(), "computer");
  EXPECT_TRUE(c.HeldBy("An old laptop in the closet runs the lights."));
  // A name written apart is the name (names.tsv: "raspberrypi", a personal computer).
  EXPECT_TRUE(c.HeldBy("I run Home Assistant on a Raspberry Pi 4."));
  EXPECT_FALSE(c.HeldBy("I baked a raspberry pie."));
  EXPECT_FALSE(c.HeldBy("Aisha manages the family calendar in Google Calendar."));
}

TEST(AnswerClass, AKeywordQueryAsksForWhatItsLastNounNames) {
  REQUIRE_WORDNET();
  EXPECT_EQ(KeywordFocus("occupation", *Wn()), "occupation");
  EXPECT_EQ(KeywordFocus("Carmen's job", *Wn()), "job");  // a name's possessive is no focus
  EXPECT_EQ(KeywordFocus("Carmen's", *Wn()), "");
  EXPECT_EQ(KeywordFocus("favourite sport", *Wn()), "sport");
  EXPECT_EQ(KeywordFocus("the user's musical instruments", *Wn()), "instruments");
  // A question, in its words or its mark, has its own focus (QuestionFocus).
  EXPECT_EQ(KeywordFocus("What is her job?", *Wn()), "");
  EXPECT_EQ(KeywordFocus("tell me about her job", *Wn()), "");
  EXPECT_EQ(KeywordFocus("her job?", *Wn()), "");
  // A sentence is no keyword query; nor are words WordNet has no noun for.
  EXPECT_EQ(KeywordFocus("she plays the violin in a small orchestra on weekends", *Wn()), "");
  EXPECT_EQ(KeywordFocus("quickly", *Wn()), "");
  EXPECT_EQ(KeywordFocus("", *Wn()), "");
  // The class follows: "sport" is held by a kind of sport, "job" by a role.
  EXPECT_TRUE(AnswerClass::Of("favourite sport", Wn()).HeldBy("Jonas loves football"));
  const AnswerClass job = AnswerClass::Of("Carmen's job", Wn());
  EXPECT_TRUE(job.occupation());
  EXPECT_TRUE(job.HeldBy("Carmen is an ICU nurse"));
  EXPECT_FALSE(job.HeldBy("Her sister lives in Toronto"));
}

TEST(AnswerClass, AMemoryNamesAKindOfWhatIsAsked) {
  REQUIRE_WORDNET();
  const AnswerClass bird = AnswerClass::Of("What bird does he keep as a pet?", Wn());
  ASSERT_FALSE(bird.empty());
  EXPECT_FALSE(bird.occupation());
  EXPECT_TRUE(bird.HeldBy("Theo's parrot can say twenty words"));
  EXPECT_FALSE(bird.HeldBy("Theo's dog can fetch a ball"));
  EXPECT_FALSE(bird.HeldBy("He keeps a bird"));  // the question's own word: the words match it already
  EXPECT_TRUE(AnswerClass::Of("Which instrument is he practising?", Wn()).HeldBy("Aiden plays the guitar"));
  EXPECT_TRUE(AnswerClass::Of("Which sport does he follow?", Wn()).HeldBy("Jonas loves football"));
  EXPECT_TRUE(AnswerClass::Of("Which drink does he order?", Wn()).HeldBy("He always has green tea"));
  EXPECT_TRUE(AnswerClass::Of("What fruit does she eat?", Wn()).HeldBy("She eats an apple every morning"));
  // "app", which WordNet 3.0 lacks, is an application program (names.tsv, "same"): any of them.
  const AnswerClass app = AnswerClass::Of("What app do I use for budgeting?", Wn());
  EXPECT_TRUE(app.HeldBy("I track spending with YNAB."));
  EXPECT_TRUE(app.HeldBy("Kenji keeps all his notes in Obsidian."));  // a name's second sense
  EXPECT_FALSE(app.HeldBy("I keep my notes in a paper notebook."));
  // A name is no thing of the class ("Hope" is no hope, "Rex" no king).
  EXPECT_FALSE(AnswerClass::Of("Which ruler did they study?", Wn()).HeldBy("They have a dog called Rex"));
  // No class: a question asking for none, a sense too wide to say anything.
  EXPECT_TRUE(AnswerClass::Of("What is it?", Wn()).empty());
  EXPECT_FALSE(AnswerClass::Of("What activity does she like?", Wn()).HeldBy("She likes swimming"));
  EXPECT_TRUE(AnswerClass::Of("Anything", nullptr).empty());
}

// Food is wide and says what it asks for all the same: any dish, drink,
// fruit or nut (edible nuts are botanical nuts in WordNet, and "peanut" the
// pod first; the names files make them food).
TEST(AnswerClass, AQuestionAskingForFoodAsksForAnyFood) {
  REQUIRE_WORDNET();
  for (const char* q : {"What food does she like?", "What foods should I avoid?", "Which food can't he eat?"}) {
    const AnswerClass c = AnswerClass::Of(q, Wn());
    ASSERT_FALSE(c.empty()) << q;
    EXPECT_TRUE(c.HeldBy("She likes sushi")) << q;
    EXPECT_TRUE(c.HeldBy("I'm allergic to peanuts")) << q;
    EXPECT_TRUE(c.HeldBy("He is allergic to almonds")) << q;
    EXPECT_TRUE(c.HeldBy("I drink green tea")) << q;
    EXPECT_FALSE(c.HeldBy("She likes swimming")) << q;
    EXPECT_FALSE(c.HeldBy("He bought a new laptop")) << q;
  }
  // Nor does a question naming no thing ask for less, when its verb says
  // what is taken: eating asks for food, drinking for a drink.
  const AnswerClass eat = AnswerClass::Of("What can't I eat?", Wn());
  ASSERT_FALSE(eat.empty());
  EXPECT_TRUE(eat.HeldBy("I'm allergic to peanuts"));
  EXPECT_FALSE(eat.HeldBy("She likes swimming"));
  const AnswerClass drink = AnswerClass::Of("Which does he drink in the morning?", Wn());
  ASSERT_FALSE(drink.empty());
  EXPECT_TRUE(drink.HeldBy("He has an espresso"));
  EXPECT_FALSE(drink.HeldBy("I'm allergic to peanuts"));
  EXPECT_TRUE(AnswerClass::Of("Where did they eat?", Wn()).HeldBy("They ate in Lisbon"));  // a place
  // A word that modifies the thing asked for does not ask for food: "What
  // food preferences ...?" asks for preferences ("Priya is vegetarian").
  EXPECT_FALSE(AnswerClass::Of("What food preferences should I keep in mind?", Wn()).HeldBy("She likes sushi"));
}

TEST(AnswerClass, AQuestionAskingWhereAsksForAPlace) {
  REQUIRE_WORDNET();
  for (const char* q : {"Where does she live?", "Where is my sister based?", "Where are we going in May?"}) {
    const AnswerClass c = AnswerClass::Of(q, Wn());
    ASSERT_FALSE(c.empty()) << q;
    EXPECT_FALSE(c.occupation()) << q;
    EXPECT_TRUE(c.HeldBy("Ines lives in Lisbon")) << q;
    EXPECT_TRUE(c.HeldBy("We are going to Patagonia in May")) << q;
    EXPECT_TRUE(c.HeldBy("They rented a cabin by the lake")) << q;
    EXPECT_FALSE(c.HeldBy("Our living room needs painting")) << q;  // a room is a thing, not a place
    EXPECT_FALSE(c.HeldBy("She likes aisle seats")) << q;
  }
  // A place WordNet knows first as a person ("Vancouver" the navigator).
  EXPECT_TRUE(
      AnswerClass::Of("Where is my aunt based?", Wn()).HeldBy("My aunt lives in Vancouver"));
  // A question naming its kind asks for that ("Where" then says nothing more).
  EXPECT_FALSE(AnswerClass::Of("Which city does she live in?", Wn()).HeldBy("She lives near the lake"));
  EXPECT_TRUE(AnswerClass::Of("Tell me where she lives", Wn()).empty());
}

// A question asking who asks for a person: a word for one ("therapist",
// "grandmother", "manager") or a name WordNet does not know ("Marcus").
TEST(AnswerClass, AQuestionAskingWhoAsksForAPerson) {
  REQUIRE_WORDNET();
  for (const char* q :
       {"Who is my boss?", "Whom does she report to?", "Whose wedding is coming up?"}) {
    const AnswerClass c = AnswerClass::Of(q, Wn());
    ASSERT_FALSE(c.empty()) << q;
    EXPECT_FALSE(c.occupation()) << q;
    EXPECT_TRUE(c.HeldBy("I see a therapist every other Thursday")) << q;
    EXPECT_TRUE(c.HeldBy("Bongani's grandmother raised him in Durban")) << q;
    EXPECT_TRUE(c.HeldBy("I've been married to Marcus since 2015")) << q;
    EXPECT_FALSE(c.HeldBy("I manage the family budget in a spreadsheet")) << q;
    EXPECT_FALSE(c.HeldBy("We moved to Lisbon in May")) << q;  // a place WordNet knows
  }
  // A question naming its kind asks for that.
  EXPECT_FALSE(AnswerClass::Of("Which city does she live in?", Wn()).HeldBy("Her sister Ana"));
}

// A question asking whether someone has or does a thing asks for a thing of
// its last noun's kind.
TEST(AnswerClass, AQuestionWhetherSomeoneHasAThingAsksForItsKind) {
  REQUIRE_WORDNET();
  const AnswerClass pets = AnswerClass::Of("Do I have pets?", Wn());
  ASSERT_FALSE(pets.empty());
  EXPECT_TRUE(pets.yes_no());
  EXPECT_TRUE(pets.HeldBy("We have a golden retriever named Biscuit"));
  EXPECT_FALSE(pets.HeldBy("My favorite band is Radiohead"));
  EXPECT_TRUE(AnswerClass::Of("Does she play an instrument?", Wn()).HeldBy("She plays the cello"));
  EXPECT_TRUE(AnswerClass::Of("Has Omar got any kids?", Wn()).HeldBy("His daughter starts school"));
  // No thing asked for: no class.
  EXPECT_TRUE(AnswerClass::Of("Is she vegetarian?", Wn()).empty());
  EXPECT_TRUE(AnswerClass::Of("Does Omar?", Wn()).empty());
}

// Where someone works is a place, an organisation or a building of work.
TEST(AnswerClass, AQuestionAskingWhereSomeoneWorksAsksForAWorkplace) {
  REQUIRE_WORDNET();
  for (const char* q : {"Where do I work?", "Where does Dana work?", "Where is my wife employed?"}) {
    const AnswerClass c = AnswerClass::Of(q, Wn());
    ASSERT_FALSE(c.empty()) << q;
    EXPECT_TRUE(c.HeldBy("I work in Rotterdam")) << q;
    EXPECT_TRUE(c.HeldBy("She is a pharmacist at a small hospital")) << q;
    EXPECT_TRUE(c.HeldBy("He is an analyst at a logistics firm")) << q;
    EXPECT_TRUE(c.HeldBy("I am a data engineer at Spotify")) << q;  // a company of the names file
    // A name past a sentence's start may mean its second sense: the
    // company after the fruit, the chain after the goal; a weekday is
    // written with a capital anyway (and no work app).
    EXPECT_TRUE(c.HeldBy("I work as a data engineer at Apple")) << q;
    EXPECT_TRUE(c.HeldBy("She is a cashier at Target")) << q;
    EXPECT_FALSE(c.HeldBy("I like a crisp apple")) << q;
    EXPECT_FALSE(c.HeldBy("Apple pie is my favourite")) << q;
    EXPECT_FALSE(c.HeldBy("My CTO expects reports on Mondays")) << q;
    EXPECT_TRUE(c.HeldBy("He bakes bread at the corner bakery")) << q;
    EXPECT_FALSE(c.HeldBy("My boss wants the report by Friday")) << q;
    EXPECT_FALSE(c.HeldBy("She bought a new laptop")) << q;
    // What a text says someone works at or for is where, whatever the
    // word: a name WordNet does not know, a word it knows otherwise.
    EXPECT_TRUE(c.HeldBy("I work as a backend engineer at a fintech startup")) << q;
    EXPECT_TRUE(c.HeldBy("She works for Globex")) << q;
    EXPECT_TRUE(c.HeldBy("My job at the agency is fun")) << q;
    // ... not a time, a number or a pronoun after it, nor "at" far after.
    EXPECT_FALSE(c.HeldBy("I work at night")) << q;
    EXPECT_FALSE(c.HeldBy("He worked for two years as a cook")) << q;
    EXPECT_FALSE(c.HeldBy("I work for myself")) << q;
    EXPECT_FALSE(c.HeldBy("I work hard and then go for a swim")) << q;
    // "works" is a factory by its first noun sense, and no place here.
    EXPECT_FALSE(c.HeldBy("Elif works night shifts every other weekend")) << q;
  }
  // Where someone lives is no organisation, nor what they work at.
  EXPECT_FALSE(AnswerClass::Of("Where does she live?", Wn()).HeldBy("She works for Globex"));
  EXPECT_FALSE(AnswerClass::Of("Where does she live?", Wn()).HeldBy("She is an analyst at a logistics firm"));
}

TEST(AnswerClass, AQuestionAboutWorkAsksForAnOccupation) {
  REQUIRE_WORDNET();
  for (const char* q : {"What is her profession?", "What is his job?", "What does she do for a living?",
                        "What is the user's occupation?", "What does Anya do?", "What does he do for work?",
                        "What kind of tradesman is he?", "What career did she choose?"}) {
    const AnswerClass c = AnswerClass::Of(q, Wn());
    EXPECT_TRUE(c.occupation()) << q;
    EXPECT_TRUE(c.HeldBy("Anya is an architect designing hospitals")) << q;
    EXPECT_TRUE(c.HeldBy("Samir is a plumber with his own van")) << q;
    EXPECT_TRUE(c.HeldBy("Carmen is an ICU nurse")) << q;
    EXPECT_TRUE(c.HeldBy("I work as a backend engineer")) << q;
    EXPECT_FALSE(c.HeldBy("Her sister lives in Toronto")) << q;
    EXPECT_FALSE(c.HeldBy("He hit his head on the door")) << q;  // a body part first, not a leader
    EXPECT_FALSE(c.HeldBy("The user is vegetarian")) << q;
    EXPECT_FALSE(c.HeldBy("The office printer is a laser model")) << q;  // a thing in passing
    EXPECT_FALSE(c.HeldBy("My manager is Karen")) << q;
    // Said of someone only after "as" or a word of being: a thing bought is
    // no role ("printer" is a person first in WordNet), nor a name one.
    EXPECT_FALSE(c.HeldBy("User and others bought a new office printer")) << q;
    EXPECT_FALSE(c.HeldBy("User has a dog named Rex")) << q;  // "rex": a king, yet a name here
    EXPECT_TRUE(c.HeldBy("She became a nurse last year")) << q;
    EXPECT_TRUE(c.HeldBy("He is now a carpenter")) << q;
    EXPECT_TRUE(c.HeldBy("I'm a pharmacist")) << q;
    EXPECT_TRUE(c.HeldBy("She's a teacher")) << q;
    EXPECT_TRUE(c.HeldBy("Her husband is a high school chemistry teacher")) << q;  // four words on
    EXPECT_FALSE(c.yes_no()) << q;
  }
  EXPECT_FALSE(AnswerClass::Of("What does she do on Saturdays?", Wn()).occupation());
  // Work as a place: how someone gets there is no occupation.
  EXPECT_FALSE(AnswerClass::Of("way to work", Wn()).occupation());
  EXPECT_TRUE(AnswerClass::Of("line of work", Wn()).occupation());
  EXPECT_FALSE(AnswerClass::Of("What bird does he keep?", Wn()).occupation());
}

}  // namespace
}  // namespace engram::answer
