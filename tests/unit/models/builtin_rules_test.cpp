// Rule-level tests of the built-in extractive engine: facts, profile slots,
// sentence selection and keywords.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "models/builtin/english.hpp"
#include "models/builtin/extractive_text.hpp"
#include "models/builtin/fact_rules.hpp"
#include "models/builtin/profile_rules.hpp"

namespace engram::builtin {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string UserFact(const std::string& s) { return ExtractFact(s, Role::kUser, "Caroline", "Mel"); }
std::string AssistantFact(const std::string& s) {
  return ExtractFact(s, Role::kAssistant, "Mel", "Caroline");
}

std::vector<std::string> Slots(const std::string& s, const std::string& dim) {
  std::vector<std::string> out;
  for (const SlotHit& h : ExtractSlotHits(s))
    if (h.dimension == dim) out.push_back(h.value);
  return out;
}

TEST(English, SplitWordsKeepsContractionsAndOffsets) {
  const std::string s = "Oh, I\u2019m Caroline\u2019s friend \u2014 e-mail me!";
  const std::vector<Word> w = SplitWords(s);
  ASSERT_EQ(w.size(), 6u);
  EXPECT_EQ(w[1].lower, "i'm");
  EXPECT_EQ(w[1].text, "I\u2019m");
  EXPECT_EQ(w[2].lower, "caroline's");
  EXPECT_EQ(w[4].text, "e-mail");
  EXPECT_EQ(s.substr(w[3].begin, w[3].end - w[3].begin), "friend");
  EXPECT_TRUE(BoundaryAfter(s, w, 0));   // "Oh,"
  EXPECT_FALSE(BoundaryAfter(s, w, 1));
  EXPECT_TRUE(BoundaryAfter(s, w, 3));   // em dash
}

TEST(English, ThirdPersonSingular) {
  EXPECT_EQ(ThirdPersonSingular("love"), "loves");
  EXPECT_EQ(ThirdPersonSingular("go"), "goes");
  EXPECT_EQ(ThirdPersonSingular("study"), "studies");
  EXPECT_EQ(ThirdPersonSingular("play"), "plays");
  EXPECT_EQ(ThirdPersonSingular("watch"), "watches");
  EXPECT_EQ(ThirdPersonSingular("have"), "has");
  EXPECT_EQ(ThirdPersonSingular("am"), "is");
  EXPECT_EQ(ThirdPersonSingular("went"), "went");
  EXPECT_EQ(ThirdPersonSingular("can"), "can");
  EXPECT_EQ(ThirdPersonSingular("need"), "needs");
  EXPECT_EQ(ThirdPersonSingular("moved"), "moved");
}

TEST(FactRules, RewritesFirstPersonToThirdPersonKeepingWording) {
  EXPECT_EQ(UserFact("I went to a support group yesterday"),
            "Caroline went to a support group yesterday.");
  EXPECT_EQ(UserFact("I'm a nurse at St. Mary's Hospital."), "Caroline is a nurse at St. Mary's Hospital.");
  EXPECT_EQ(UserFact("I really love reading fantasy novels!"),
            "Caroline really loves reading fantasy novels.");
  EXPECT_EQ(UserFact("I live in Boston with my wife."), "Caroline lives in Boston with Caroline's wife.");
  EXPECT_EQ(UserFact("I've been painting for years."), "Caroline has been painting for years.");
  EXPECT_EQ(UserFact("I'm planning to visit Japan next spring."),
            "Caroline is planning to visit Japan next spring.");
  EXPECT_EQ(UserFact("I don't like spicy food."), "Caroline doesn't like spicy food.");
  EXPECT_EQ(UserFact("I never eat meat."), "Caroline never eats meat.");
  EXPECT_EQ(UserFact("I only eat gluten-free bread."), "Caroline only eats gluten-free bread.");
  EXPECT_EQ(UserFact("I rarely drink coffee."), "Caroline rarely drinks coffee.");
  EXPECT_EQ(UserFact("I'm strictly vegan."), "Caroline is strictly vegan.");
  EXPECT_EQ(UserFact("I'm no longer vegetarian."), "Caroline is no longer vegetarian.");
  EXPECT_EQ(UserFact("I am not vegan anymore."), "Caroline is not vegan anymore.");
  EXPECT_EQ(UserFact("I no longer live in Boston."), "Caroline no longer lives in Boston.");
  EXPECT_EQ(UserFact("I'm allergic to peanuts, so I need to be careful."),
            "Caroline is allergic to peanuts, so Caroline needs to be careful.");
  EXPECT_EQ(UserFact("My sister Anna just had a baby."), "Caroline's sister Anna just had a baby.");
  // The people of work and care, and what an assistant keeps track of.
  EXPECT_EQ(UserFact("My manager is Priya and she prefers Slack over email."),
            "Caroline's manager is Priya and she prefers Slack over email.");
  EXPECT_EQ(UserFact("My dentist appointment is on Tuesday at 3pm."),
            "Caroline's dentist appointment is on Tuesday at 3pm.");
  EXPECT_EQ(UserFact("My flight to Oslo leaves at 6pm."),
            "Caroline's flight to Oslo leaves at 6pm.");
  EXPECT_EQ(UserFact("We adopted a puppy last month."), "Caroline and others adopted a puppy last month.");
  EXPECT_EQ(UserFact("We love our new house."), "Caroline and others love their new house.");
  EXPECT_EQ(UserFact("Mel and I love going to the beach."), "Mel and Caroline love going to the beach.");
  EXPECT_EQ(UserFact("Yesterday my husband and I went hiking."),
            "Yesterday Caroline's husband and Caroline went hiking.");
  EXPECT_EQ(UserFact("My name is Caroline and I live in Portland."), "Caroline lives in Portland.");
  EXPECT_EQ(UserFact("Hi, I'm Caroline and I love jazz."), "Caroline loves jazz.");
  EXPECT_EQ(UserFact("Oh, I just started a new job at the bakery!"),
            "Caroline just started a new job at the bakery.");
  EXPECT_EQ(UserFact("I just got promoted to senior designer!"),
            "Caroline just got promoted to senior designer.");
}

// The verb agrees past an adverb of any kind, and a second predicate of the
// same subject agrees too; a word that may be a noun stays as it is unless
// an object follows it, and nothing changes after a modal, a negation, an
// infinitive or a new subject.
TEST(FactRules, EveryVerbOfTheSpeakerAgrees) {
  EXPECT_EQ(UserFact("I completely agree with Tom about the budget."),
            "Caroline completely agrees with Tom about the budget.");
  EXPECT_EQ(UserFact("I apply for jobs every week."), "Caroline applies for jobs every week.");
  EXPECT_EQ(UserFact("I practice yoga and meditate every morning."),
            "Caroline practices yoga and meditates every morning.");
  EXPECT_EQ(UserFact("I play guitar and sing in a band."),
            "Caroline plays guitar and sings in a band.");
  EXPECT_EQ(UserFact("I fly to Berlin and rent a car every March."),
            "Caroline flies to Berlin and rents a car every March.");
  EXPECT_EQ(UserFact("I swim and then usually meditate."),
            "Caroline swims and then usually meditates.");
  EXPECT_EQ(UserFact("I've cut down on red meat and mostly eat fish now."),
            "Caroline has cut down on red meat and mostly eats fish now.");
  EXPECT_EQ(UserFact("I'm a nurse and enjoy the night shifts."),
            "Caroline is a nurse and enjoys the night shifts.");
  EXPECT_EQ(UserFact("I'm a writer and editor."), "Caroline is a writer and editor.");
  // A noun, and verbs that keep their form.
  EXPECT_EQ(UserFact("I have a cat and dog."), "Caroline has a cat and dog.");
  EXPECT_EQ(UserFact("I love hiking and swimming."), "Caroline loves hiking and swimming.");
  EXPECT_EQ(UserFact("I love to cook and bake."), "Caroline loves to cook and bake.");
  EXPECT_EQ(UserFact("I will cook and clean."), "Caroline will cook and clean.");
  EXPECT_EQ(UserFact("I'm going to cook and bake."), "Caroline is going to cook and bake.");
  EXPECT_EQ(UserFact("I've been hiking and camping a lot."),
            "Caroline has been hiking and camping a lot.");
  EXPECT_EQ(UserFact("I love it when you cook and clean."),
            "Caroline loves it when you cook and clean.");
  EXPECT_EQ(UserFact("I love sci-fi movies, they're a great escape and get me going."),
            "Caroline loves sci-fi movies, they're a great escape and get Caroline going.");
}
// What a chat says around a statement: quotations keep their words, markdown's
// bold and phrases that say nothing go, the listener is named where "you" can
// be no one else.
TEST(FactRules, QuotationsMarkupAndTheListener) {
  const std::pair<std::string, std::string> cases[] = {
      {"I watched 'My Octopus Teacher' and loved it.",
       "Caroline watched 'My Octopus Teacher' and loved it."},
      {"I read \"We Were Liars\" on my trip.",
       "Caroline read \"We Were Liars\" on Caroline's trip."},
      {"I watched \xE2\x80\x98My Octopus Teacher\xE2\x80\x99 with my kids.",
       "Caroline watched \xE2\x80\x98My Octopus Teacher\xE2\x80\x99 with Caroline's kids."},
      {"I love my kids' school and I'm proud of it.",
       "Caroline loves Caroline's kids' school and Caroline is proud of it."},
      {"I said \"I quit my job and moved.",
       "Caroline said \"Caroline quit Caroline's job and moved."},
      {"This Saturday, I'm planning a new riverside route, about 15km.**",
       "This Saturday, Caroline is planning a new riverside route, about 15km."},
      {"I'm trying to be consistent, **aiming for 15 minutes every evening.**",
       "Caroline is trying to be consistent, aiming for 15 minutes every evening."},
      {"And yes, I put together a lo-fi playlist.", "Caroline put together a lo-fi playlist."},
      {"Mel, you won't believe it - I got mentored by an amazing business owner yesterday.",
       "Caroline got mentored by an amazing business owner yesterday."},
      {"I wanna start a dance studio so I can teach others.",
       "Caroline wants to start a dance studio so Caroline can teach others."},
      {"To be honest, I love hiking more than running.",
       "Caroline loves hiking more than running."},
      {"Paris, the city of light, is where I lived for years.",
       "Paris, the city of light, is where Caroline lived for years."},
      {"I chose Spanish to start, as you suggested it might be easier.",
       "Caroline chose Spanish to start, as Mel suggested it might be easier."},
      {"I bought the book you told me about.", "Caroline bought the book Mel told Caroline about."},
      {"I moved to Lisbon, and you know how it is.",
       "Caroline moved to Lisbon, and you know how it is."},
      {"I'll update you once I finish my thesis.",
       "Caroline will update Mel once Caroline finishes Caroline's thesis."},
      {"I always use __init__.py files in my packages.",
       "Caroline always uses __init__.py files in Caroline's packages."},
      // The listener after "have", "in", "behind", "take" ..., and as the subject of "are" and
      // "were".
      {"I still have you in my corner at every race.",
       "Caroline still has Mel in Caroline's corner at every race."},
      {"I'll definitely take you up on that hiking offer.",
       "Caroline will definitely take Mel up on that hiking offer."},
      {"I read that book in 2022, just like you are doing now.",
       "Caroline read that book in 2022, just like Mel is doing now."},
      {"I took a road trip to Utah while you were racing.",
       "Caroline took a road trip to Utah while Mel was racing."},
      // Phrases that say nothing of their own.
      {"Just so you know, I've been working on a big pottery project.",
       "Caroline has been working on a big pottery project."},
      {"As you know, I had an amazing time touring with the band.",
       "Caroline had an amazing time touring with the band."},
      {"Speaking of which, I adopted another pup from the shelter.",
       "Caroline adopted another pup from the shelter."},
  };
  for (const auto& [said, fact] : cases) EXPECT_EQ(UserFact(said), fact) << said;
}

TEST(FactRules, QuestionsGreetingsAndFeelingsAreNotFacts) {
  for (const char* s : {"How have you been?",
                        "Hey Mel!",
                        "Good to see you!",
                        "Do you like painting?",
                        "I think that's a great idea.",
                        "I'm so happy for you!",
                        "I love it!",
                        "I'm not sure what to do.",
                        "I'm doing great, thanks!",
                        "I love you guys.",
                        "I went there last week.",
                        "I have a question about your trip.",
                        "If I had a dog, I'd walk it every day.",
                        "Let's grab coffee sometime.",
                        "That sounds amazing!",
                        "My name is Caroline.",
                        "I just wanted to say thank you.",
                        "Check this pic I got from the last networking event.",
                        "I just wanted to fill you in on my business.",
                        "And here's a pic I got from my walk.",
                        "I'll keep ya posted.",
                        "We will keep you updated!",
                        "I'll keep you in the loop."}) {
    EXPECT_EQ(UserFact(s), "") << s;
  }
  EXPECT_EQ(AssistantFact("I'll keep you posted."), "");
  // What is kept is not the promise of chat: "I keep my notes in Obsidian".
  EXPECT_EQ(UserFact("I'll keep my notes in Obsidian from now on."),
            "Caroline will keep Caroline's notes in Obsidian from now on.");
}

// A run of fillers before what is said goes with them when a boundary ends
// it ("Oh yeah, ..."); without one the words stay.
TEST(FactRules, ARunOfFillersIsDroppedWhole) {
  EXPECT_EQ(UserFact("Oh yeah, we went to the beach recently."),
            "Caroline and others went to the beach recently.");
  EXPECT_EQ(UserFact("Oh wow, I adopted a puppy!"), "Caroline adopted a puppy.");
  EXPECT_EQ(UserFact("Yeah well, I moved to Denver."), "Caroline moved to Denver.");
}

// A fact opens with what it says: a word that linked the sentence to the one
// before goes ("So I went ...", "But I made it ..."); a word it needs stays.
TEST(FactRules, ALinkToWhatWasSaidBeforeIsDropped) {
  EXPECT_EQ(UserFact("So I went to the tattoo parlor and got more drawings."),
            "Caroline went to the tattoo parlor and got more drawings.");
  EXPECT_EQ(UserFact("But I made it with the support of my friends."),
            "Caroline made it with the support of Caroline's friends.");
  EXPECT_EQ(UserFact("And we adopted a second cat."), "Caroline and others adopted a second cat.");
  EXPECT_EQ(UserFact("Well I moved to Denver last spring."),
            "Caroline moved to Denver last spring.");
  EXPECT_EQ(UserFact("Sometimes I bake bread for my neighbours."),
            "Sometimes Caroline bakes bread for Caroline's neighbours.");
  // Telling the listener, and a closing vocative.
  EXPECT_EQ(UserFact("I wanted to tell ya I just joined a writers group."),
            "Caroline just joined a writers group.");
  EXPECT_EQ(UserFact("I have to let you know that I moved to Denver."),
            "Caroline moved to Denver.");
  EXPECT_EQ(UserFact("I've had some tough times with my bakery, Mel."),
            "Caroline has had some tough times with Caroline's bakery.");
  EXPECT_EQ(UserFact("I wanted to tell you about my trip to Peru."), "");  // telling alone
  // A statement closed by a question tag is a statement.
  EXPECT_EQ(UserFact("You know I hate cilantro, right?"), "Caroline hates cilantro.");
  EXPECT_EQ(UserFact("I moved to Denver in May, remember?"), "Caroline moved to Denver in May.");
  EXPECT_EQ(UserFact("I love hiking, don't you think?"), "Caroline loves hiking.");
  EXPECT_EQ(UserFact("Did I tell you I moved to Denver, right?"), "");  // a question before its tag
}

// Chat leaves the apostrophes out of its contractions and shortens words:
// "im", "dont", "ive" are read as "I'm", "don't", "I've" (not "its", "id",
// "ill" or "wont", which are words of their own), and a short form names a
// topic as its word does ("my bday is ..."); "also", "plus" and "btw" link to
// what was said before as "and" does.
TEST(FactRules, ChatWithoutApostrophesAndWithShortFormsIsRead) {
  EXPECT_EQ(UserFact("im vegetarian and i hate cilantro"),
            "Caroline is vegetarian and Caroline hates cilantro.");
  EXPECT_EQ(UserFact("i dont eat pork"), "Caroline doesn't eat pork.");
  EXPECT_EQ(UserFact("ive got two cats, luna and milo"),
            "Caroline has got two cats, luna and milo.");
  EXPECT_EQ(UserFact("Im a nurse at the hospital"), "Caroline is a nurse at the hospital.");
  EXPECT_EQ(UserFact("also im allergic to cats"), "Caroline is allergic to cats.");
  EXPECT_EQ(UserFact("btw I moved to Denver last spring"), "Caroline moved to Denver last spring.");
  EXPECT_EQ(UserFact("my bday is july 4th!!"), "Caroline's bday is july 4th.");
  EXPECT_EQ(UserFact("my fam is from lisbon"), "Caroline's fam is from lisbon.");
  // Words of their own stay as they are.
  EXPECT_EQ(UserFact("I lost my id card at the gym"),
            "Caroline lost Caroline's id card at the gym.");
}

// A sentence whose subject points back ("It", "That's why", "They") states its
// fact in the speaker's own clause, when a link opens it and it names what it
// speaks of; otherwise the sentence stays whole.
// A clause whose object is only a pronoun for something said before it
// ("it", "this", "them") says nothing a reader of the fact alone could use;
// a pronoun with more said of it, after "like", before a noun, or for a thing
// the sentence named before the speaker stays.
TEST(FactRules, AnObjectThatIsOnlyAPronounMakesNoFact) {
  for (const char* said :
       {"I first watched it around 3 years ago.", "I'm definitely going to check it out!",
        "I never want to go through this again.", "I've been waiting for this for a long time.",
        "I will give it a try.", "I've had them for 3 years now and they bring me joy.",
        "I'll make sure to find time for that."}) {
    EXPECT_EQ(UserFact(said), "") << said;
  }
  EXPECT_EQ(UserFact("I made this bowl in pottery class."),
            "Caroline made this bowl in pottery class.");
  EXPECT_EQ(UserFact("I painted it after I visited the beach."),
            "Caroline painted it after Caroline visited the beach.");
  EXPECT_EQ(UserFact("I love it when you cook dinner."), "Caroline loves it when you cook dinner.");
  EXPECT_EQ(UserFact("I'm going to a conference this month."),
            "Caroline is going to a conference this month.");
  EXPECT_EQ(UserFact("I take photos like this every weekend."),
            "Caroline takes photos like this every weekend.");
  EXPECT_EQ(UserFact("I watched a movie that was awesome."),
            "Caroline watched a movie that was awesome.");
  EXPECT_EQ(UserFact("The car project is going well - I just finished restoring it."),
            "The car project is going well - Caroline just finished restoring it.");
  EXPECT_EQ(UserFact("I went to the museum - it was so cool."),
            "Caroline went to the museum - it was so cool.");
  EXPECT_NE(AssistantFact("I'm happy to help you with that."), "");
}

TEST(FactRules, ADanglingSubjectLeavesTheSpeakersOwnClause) {
  EXPECT_EQ(UserFact("It reminds me why I love being a mom."), "Caroline loves being a mom.");
  EXPECT_EQ(UserFact("It was a setback, but I'm trying to stay positive."),
            "Caroline is trying to stay positive.");
  EXPECT_EQ(UserFact("It turns out I have a gluten intolerance."),
            "Caroline has a gluten intolerance.");
  EXPECT_EQ(UserFact("That's why I love volunteering at the shelter."),
            "Caroline loves volunteering at the shelter.");
  EXPECT_EQ(UserFact("This is where I spend most of my time, teaching yoga."),
            "Caroline spends most of Caroline's time, teaching yoga.");
  EXPECT_EQ(UserFact("It paid off now that I'm an assistant manager at the bank."),
            "Caroline is an assistant manager at the bank.");
  // The clause would lose what it speaks of, or says less than the rest.
  EXPECT_EQ(UserFact("It's a 1968 vintage guitar and I got it as a gift from a close friend."),
            "It's a 1968 vintage guitar and Caroline got it as a gift from a close friend.");
  EXPECT_EQ(UserFact("They created the props for the films, and I love their work."),
            "They created the props for the films, and Caroline loves their work.");
  EXPECT_EQ(UserFact("It was close until the final buzzer but we got the win."),
            "It was close until the final buzzer but Caroline and others got the win.");
  // Clauses that are no statement of their own.
  EXPECT_EQ(UserFact("It's been forever since I've been in nature."),
            "It's been forever since Caroline has been in nature.");
  EXPECT_EQ(UserFact("They always support me, even when I make mistakes at work."),
            "They always support Caroline, even when Caroline makes mistakes at work.");
  EXPECT_EQ(UserFact("She and I have so much in common with our hiking club."),
            "She and Caroline have so much in common with Caroline's hiking club.");
  EXPECT_EQ(UserFact("This is a painting that I finished a few days ago in my studio."),
            "This is a painting that Caroline finished a few days ago in Caroline's studio.");
  // A demonstrative before a noun names its thing.
  EXPECT_EQ(UserFact("This book I read last year reminds me to pursue my dreams."),
            "This book Caroline read last year reminds Caroline to pursue Caroline's dreams.");
}

TEST(FactRules, AssistantCommitmentsAndSelfStatements) {
  EXPECT_EQ(AssistantFact("I recommend trying the pasta at Luigi's."),
            "Mel recommends trying the pasta at Luigi's.");
  EXPECT_EQ(AssistantFact("I'll send you the recipe tomorrow."), "Mel will send Caroline the recipe tomorrow.");
  EXPECT_EQ(AssistantFact("I can help you plan the trip."), "Mel can help Caroline plan the trip.");
  EXPECT_EQ(AssistantFact("I'm an AI assistant."), "Mel is an AI assistant.");
  EXPECT_EQ(AssistantFact("I'm happy to help you with that."), "Mel is happy to help Caroline with that.");
  EXPECT_EQ(AssistantFact("I'm here to help you explore these ideas whenever you're ready."),
            "Mel is here to help Caroline explore these ideas whenever Caroline is ready.");
  EXPECT_EQ(AssistantFact("I'll send the list once you've picked a date."),
            "Mel will send the list once Caroline has picked a date.");
  EXPECT_EQ(AssistantFact("I went camping with my kids last weekend."),
            "Mel went camping with Mel's kids last weekend.");
  for (const char* s : {"I can imagine how hard that was.", "I'm so glad to hear that!",
                        "That's awesome, Caroline!", "I think you should go for it.", "I love that idea!"}) {
    EXPECT_EQ(AssistantFact(s), "") << s;
  }
}

TEST(ProfileRules, NameLocationOccupation) {
  EXPECT_THAT(Slots("My name is Caroline.", "name"), ElementsAre("Caroline"));
  EXPECT_THAT(Slots("Hi, I'm Caroline.", "name"), ElementsAre("Caroline"));
  EXPECT_THAT(Slots("I'm Canadian.", "name"), IsEmpty());
  EXPECT_THAT(Slots("My name is Will.", "name"), ElementsAre("Will"));
  // In lower case after "my name is"; not after "i'm" or "call me".
  EXPECT_THAT(Slots("hi, my name is caroline", "name"), ElementsAre("Caroline"));
  EXPECT_THAT(Slots("my name's mel. i live in porto", "name"), ElementsAre("Mel"));
  EXPECT_THAT(Slots("i'm tired", "name"), IsEmpty());
  EXPECT_THAT(Slots("can you call me later", "name"), IsEmpty());
  EXPECT_THAT(Slots("my name is not important", "name"), IsEmpty());
  EXPECT_THAT(Slots("I live in New York City with my wife.", "location"), ElementsAre("New York City"));
  EXPECT_THAT(Slots("We moved to San Francisco last year.", "location"), ElementsAre("San Francisco"));
  EXPECT_THAT(Slots("I'm from a small town in Ohio.", "location"), ElementsAre("from a small town in Ohio"));
  EXPECT_THAT(Slots("I used to live in Boston.", "location"), IsEmpty());
  EXPECT_THAT(Slots("I live in the city.", "location"), IsEmpty());
  // A place named in lower case, as WordNet names one place (not a kind of place).
  EXPECT_THAT(Slots("i live in porto with my wife", "location"), ElementsAre("porto"));
  EXPECT_THAT(Slots("i moved to new york last year", "location"), ElementsAre("new york"));
  EXPECT_THAT(Slots("i live in town", "location"), IsEmpty());
  EXPECT_THAT(Slots("i live in a van", "location"), IsEmpty());
  EXPECT_THAT(Slots("I work as a software engineer at Google.", "occupation"),
              ElementsAre("software engineer at Google"));
  EXPECT_THAT(Slots("I'm a nurse at St. Mary's Hospital.", "occupation"),
              ElementsAre("nurse at St. Mary's Hospital"));
  EXPECT_THAT(Slots("I work in marketing.", "occupation"), ElementsAre("works in marketing"));
  EXPECT_THAT(Slots("I got a new job as a teacher at Lincoln High.", "occupation"),
              ElementsAre("teacher at Lincoln High"));
  EXPECT_THAT(Slots("I'm a big fan of jazz.", "occupation"), IsEmpty());
  EXPECT_THAT(Slots("im a nurse at St. Mary's Hospital", "occupation"),
              ElementsAre("nurse at St. Mary's Hospital"));  // chat leaves the apostrophe out
  EXPECT_THAT(Slots("Where do you live?", "location"), IsEmpty());
}

TEST(ProfileRules, InterestsFamilyPetsPreferences) {
  EXPECT_THAT(Slots("I love hiking, painting and jazz.", "interests"), ElementsAre("hiking", "painting", "jazz"));
  // Adjectives in a row before their noun stay one item.
  EXPECT_THAT(Slots("Now I'm passionate about creating a safe, inviting place for people to grow.",
                    "interests"),
              ElementsAre("creating a safe, inviting place"));
  EXPECT_THAT(Slots("I love a challenge, running and tea.", "interests"),
              ElementsAre("challenge", "running", "tea"));
  EXPECT_THAT(Slots("I'm really into rock climbing.", "interests"), ElementsAre("rock climbing"));
  EXPECT_THAT(Slots("I'm a big fan of Taylor Swift.", "interests"), ElementsAre("Taylor Swift"));
  EXPECT_THAT(Slots("I like to paint landscapes.", "interests"), ElementsAre("paint landscapes"));
  EXPECT_THAT(Slots("I love it when it rains.", "interests"), IsEmpty());
  EXPECT_THAT(Slots("I don't like spicy food.", "interests"), IsEmpty());
  EXPECT_THAT(Slots("I have two kids and a dog named Max.", "family"), ElementsAre("two kids"));
  EXPECT_THAT(Slots("I have two kids and a dog named Max.", "pets"), ElementsAre("dog Max"));
  EXPECT_THAT(Slots("My sister Anna just had a baby.", "family"), ElementsAre("sister Anna"));
  EXPECT_THAT(Slots("I'm married to John.", "family"), ElementsAre("married to John"));
  EXPECT_THAT(Slots("It reminds me why I love being a mom.", "family"), ElementsAre("is a mom"));
  EXPECT_THAT(Slots("I'm a single dad of two boys.", "family"), ElementsAre("is a single dad of two boys"));
  EXPECT_THAT(Slots("I am now a proud dad.", "family"), ElementsAre("is a proud dad"));
  EXPECT_THAT(Slots("I've been a mom for ten years.", "family"), ElementsAre("is a mom"));
  for (const char* s :
       {"I'm ready to be a mom and share my love.", "I want to become a dad someday.",
        "Being a mom is awesome.", "I'm not a mom yet."}) {
    EXPECT_THAT(Slots(s, "family"), IsEmpty()) << s;
  }
  EXPECT_THAT(Slots("My dog's name is Luna.", "pets"), ElementsAre("dog Luna"));
  EXPECT_THAT(Slots("I still have that stuffed animal dog you gave me!", "pets"), IsEmpty());
  EXPECT_THAT(Slots("We adopted a puppy last month.", "pets"), ElementsAre("puppy"));
  EXPECT_THAT(Slots("I prefer tea over coffee.", "preferences"), ElementsAre("tea over coffee"));
  EXPECT_THAT(Slots("My favorite color is blue.", "preferences"), ElementsAre("favorite color: blue"));
  EXPECT_THAT(Slots("I don't like spicy food.", "preferences"), ElementsAre("dislikes spicy food"));
}

// What a sentence says around a liking is not always the liked thing; a
// profile line of "going", "wait" or "is important" would sit in every
// context of the scope.
TEST(ProfileRules, NoClauseOrBareVerbBecomesAValue) {
  EXPECT_THAT(Slots("Connecting with the things I love makes writing even more fun.", "interests"), IsEmpty());
  EXPECT_THAT(Slots("There's a beach nearby that I love - the sound of the waves and the sand.", "interests"),
              IsEmpty());
  EXPECT_THAT(Slots("Remembering those we love is important.", "interests"), IsEmpty());
  EXPECT_THAT(Slots("I'm passionate about dancing and it'd be great to share it.", "interests"),
              ElementsAre("dancing"));
  EXPECT_THAT(Slots("I love going on road trips with friends.", "interests"), ElementsAre("going on road trips"));
  EXPECT_THAT(Slots("I like to come to this spot by the water.", "interests"),
              ElementsAre("come to the spot"));
  EXPECT_THAT(Slots("I love making him happy.", "interests"), IsEmpty());
  EXPECT_THAT(Slots("I love working with kids.", "interests"), ElementsAre("working with kids"));
  EXPECT_THAT(Slots("I love working.", "interests"), IsEmpty());
  EXPECT_THAT(Slots("I also love to read, especially at night.", "interests"), ElementsAre("read"));
  EXPECT_THAT(Slots("I'm totally into The Witcher 3 right now.", "interests"), ElementsAre("Witcher 3"));
  EXPECT_THAT(Slots("I'd rather wait until the bugs are fixed.", "preferences"), IsEmpty());
  EXPECT_THAT(Slots("I'd rather stay home tonight.", "preferences"), ElementsAre("stay home"));
  EXPECT_THAT(Slots("I love the color and texture.", "interests"), IsEmpty());
  EXPECT_THAT(Slots("I love the connection to nature.", "interests"), ElementsAre("connection to nature"));
  EXPECT_THAT(Slots("I love going to this park near my house.", "interests"),
              ElementsAre("going to the park"));
  EXPECT_THAT(Slots("I love doing it every weekend.", "interests"), IsEmpty());
  EXPECT_THAT(Slots("I love helping those in need.", "interests"),
              ElementsAre("helping those in need"));
  EXPECT_THAT(Slots("I love doing this every day.", "interests"), IsEmpty());
  EXPECT_THAT(Slots("I hope to work in the future.", "occupation"), IsEmpty());
  EXPECT_THAT(Slots("I'd love to work as a nurse.", "occupation"), IsEmpty());
  EXPECT_THAT(Slots("I enjoy curling up with a good book, escaping reality.", "interests"),
              ElementsAre("curling up with a good book", "escaping reality"));
  EXPECT_THAT(Slots("I love curling and skiing.", "interests"), ElementsAre("curling", "skiing"));
  EXPECT_THAT(Slots("I love making jewelry out of recycled stuff.", "interests"), ElementsAre("making jewelry"));
  auto to_nate = [](const std::string& s) {
    std::vector<std::string> v;
    for (const auto& h : ExtractSlotHits(s, "Nate")) v.push_back(h.dimension + ": " + h.value);
    return v;
  };
  EXPECT_THAT(to_nate("I love the thought Nate!"), IsEmpty());
  EXPECT_THAT(to_nate("I love hiking Nate!"), ElementsAre("interests: hiking"));
  EXPECT_THAT(to_nate("I love visiting Paris!"), ElementsAre("interests: visiting Paris"));
  EXPECT_THAT(Slots("I'd rather show you a photo of it.", "preferences"), IsEmpty());
  EXPECT_THAT(Slots("I prefer to play detective games together.", "preferences"),
              ElementsAre("play detective games together"));
  EXPECT_THAT(Slots("My favorite yoga routine is a gentle flow that's calming.", "preferences"),
              ElementsAre("favorite yoga routine: a gentle flow"));
  // A profile line is said of the user.
  EXPECT_THAT(Slots("I love running my own studio.", "interests"), ElementsAre("running their own studio"));
  EXPECT_THAT(Slots("I'm passionate about improving our community.", "interests"),
              ElementsAre("improving their community"));
}

TEST(ProfileAccumulator, SingleValuedTakesLatestMultiValuedAccumulates) {
  std::vector<ProfileSlot> profile = {{"interests", "hiking", {7}, 0}, {"location", "Boston", {7}, 0}};
  ProfileAccumulator acc(profile);
  acc.Add({"interests", "Hiking"}, 10);  // already known (case-insensitive)
  acc.Add({"interests", "jazz"}, 11);
  acc.Add({"location", "Boston"}, 11);   // unchanged
  acc.Add({"name", "Caroline"}, 12);
  const std::vector<SlotUpdate> updates = acc.Updates();
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates[0].dimension, "interests");
  EXPECT_EQ(updates[0].value, "hiking; jazz");
  EXPECT_THAT(updates[0].evidence_pages, ElementsAre(7, 10, 11));
  EXPECT_EQ(updates[1].dimension, "name");
  EXPECT_EQ(updates[1].value, "Caroline");
  EXPECT_THAT(updates[1].evidence_pages, ElementsAre(12));
}

TEST(ProfileAccumulator, MultiValuedIsBounded) {
  ProfileAccumulator acc({});
  for (int i = 0; i < 30; ++i) acc.Add({"interests", "interest number " + std::to_string(i)}, i);
  const std::vector<SlotUpdate> updates = acc.Updates();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_LE(updates[0].value.size(), ProfileAccumulator::kMaxValueBytes);
  EXPECT_NE(updates[0].value.find("interest number 29"), std::string::npos);  // newest kept
  EXPECT_EQ(updates[0].value.find("interest number 0;"), std::string::npos);  // oldest dropped
  EXPECT_LE(updates[0].evidence_pages.size(), ProfileAccumulator::kMaxEvidence);
}

TEST(ExtractiveText, SummaryRoundTripKeepsSpeakers) {
  std::vector<Sentence> s;
  AppendSummarySentences("Caroline: I went hiking. It was fun. Mel: I painted a lake.", "Caroline", s);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].speaker, "Caroline");
  EXPECT_EQ(s[1].speaker, "Caroline");
  EXPECT_EQ(s[1].text, "It was fun.");
  EXPECT_TRUE(s[1].from_user);
  EXPECT_EQ(s[2].speaker, "Mel");
  EXPECT_FALSE(s[2].from_user);
  EXPECT_EQ(RenderSentences(s), "Caroline: I went hiking. It was fun. Mel: I painted a lake.");
}

TEST(ExtractiveText, SelectionIsBoundedAndChronological) {
  std::vector<Sentence> c;
  AppendPageSentences("Short one. This is a much longer and more informative sentence about pottery",
                      "Another sentence here.", "Ann", "Bob", c);
  c[0].score = 1.0;
  c[1].score = 5.0;
  c[2].score = 2.0;
  const std::vector<Sentence> picked = SelectSentences(c, 90, false);
  ASSERT_EQ(picked.size(), 1u);
  EXPECT_EQ(picked[0].order, 1);
  const std::string all = RenderSentences(SelectSentences(c, 400, false));
  EXPECT_EQ(all, "Ann: This is a much longer and more informative sentence about pottery. "
                 "Bob: Another sentence here.");  // "Short one." is below the relative cutoff
  const std::string tiny = RenderSentences(SelectSentences(c, 40, false));
  EXPECT_LE(tiny.size(), 40u);
  EXPECT_FALSE(tiny.empty());
}

TEST(ExtractiveText, KeywordsUseSurfaceFormsAndIdf) {
  IdfFn idf = [](const std::string& term) { return term == "pottery" ? 0.1 : 2.0; };
  IdfCache cache(idf);
  const auto ranked = RankTerms({"Hiking and hiking again! I hiked 2024 trails with Caroline.",
                                 "Pottery is fun."}, cache, {"caroline"});
  const std::vector<std::string> kw = PickKeywords(ranked, 3, 8);
  ASSERT_FALSE(kw.empty());
  EXPECT_EQ(kw[0], "hiking");  // surface form, not the stem "hike"
  for (const std::string& k : kw) {
    EXPECT_NE(k, "2024");
    EXPECT_NE(k, "caroline");
    EXPECT_NE(k, "and");
  }
  EXPECT_LE(kw.size(), 8u);
}

}  // namespace
}  // namespace engram::builtin
