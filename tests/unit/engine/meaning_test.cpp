// Meaning without a model: fact search of the built-in engine finds memories
// that share no word with the query (core/word_vectors.hpp), and built-in
// inference never drops a statement silently.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "core/clock.hpp"
#include "core/time.hpp"
#include "core/word_vectors.hpp"
#include "core/wordnet.hpp"
#include "engram/engine.hpp"
#include "testing/fakes.hpp"
#include "testing/temp_dir.hpp"
#include "testing/test_postgres.hpp"

namespace engram {
namespace {

using testing::TempDir;

MemoryScope User(const std::string& u) {
  MemoryScope s;
  s.user = u;
  return s;
}

class MeaningTest : public ::testing::Test {
 protected:
  std::unique_ptr<Engine> Open() {
    EngineOptions o;
    o.db_path = testing::StoreAt(dir_.File("engram.db"));
    o.clock = &clock_;
    auto e = Engine::Open(std::move(o));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  void Add(Engine& e, const std::string& user, const std::string& text) {
    MemoryAddOptions o;
    o.infer = false;
    auto r = e.AddMemoryText(User(user), text, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    clock_.Advance(1000);
  }
  void Add(Engine& e, const std::string& user, std::initializer_list<const char*> texts) {
    for (const char* t : texts) Add(e, user, t);
  }
  // The first result of a search with `explain` on; nullopt (and a failure) when there is none.
  std::optional<MemoryItem> First(Engine& e, const std::string& user, const std::string& query) {
    MemorySearchOptions so;
    so.explain = true;
    auto r = e.SearchMemories(User(user), query, so);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || r->empty()) {
      ADD_FAILURE() << "nothing found for: " << query;
      return std::nullopt;
    }
    return r->front();
  }
  // That the first result of `query` is `memory`, holding all of its meaning.
  void ExpectFirstHoldsAll(Engine& e, const std::string& user, const std::string& query,
                           const std::string& memory) {
    const auto first = First(e, user, query);
    ASSERT_TRUE(first) << query;
    EXPECT_EQ(first->memory, memory) << query;
    EXPECT_EQ(first->score_details->semantic, 1.0) << query;
  }
  // A component of each memory a search with `explain` on finds, by text.
  std::map<std::string, double> Shares(Engine& e, const std::string& user, const std::string& query,
                                       double MemoryScoreDetails::*component) {
    MemorySearchOptions so;
    so.explain = true;
    auto r = e.SearchMemories(User(user), query, so);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::map<std::string, double> out;
    for (const MemoryItem& m : r.ok() ? *r : std::vector<MemoryItem>{}) {
      if (m.score_details) out[m.memory] = (*m.score_details).*component;
    }
    return out;
  }
  std::map<std::string, double> LexicalShares(Engine& e, const std::string& user,
                                              const std::string& query) {
    return Shares(e, user, query, &MemoryScoreDetails::lexical);
  }
  // A dialogue of thirty busy days at work, with `special` turns after the
  // turn of their index, admitted and maintained.
  void AddBusyDialogue(Engine& e, const Scope& dialogue, const std::map<int, TurnInput>& special,
                       const std::string& user_name = "", const std::string& assistant_name = "") {
    std::vector<TurnInput> turns;
    for (int i = 0; i < 30; ++i) {
      TurnInput t;
      t.user_text = "Work was busy again today, meeting number " + std::to_string(i) + " ran late.";
      t.assistant_text = "That sounds tiring.";
      turns.push_back(t);
      if (auto it = special.find(i); it != special.end()) turns.push_back(it->second);
    }
    for (TurnInput& t : turns) {
      t.user_name = user_name;
      t.assistant_name = assistant_name;
    }
    ASSERT_TRUE(e.AddTurns(dialogue, turns).ok());
    ASSERT_TRUE(e.Maintain(nullptr).ok());
  }
  static TurnInput Said(const std::string& user_text, const std::string& assistant_text) {
    TurnInput t;
    t.user_text = user_text;
    t.assistant_text = assistant_text;
    return t;
  }
  // The text of the first ranked message of a retrieval ("" when none).
  static std::string FirstRanked(Engine& e, const Scope& dialogue, const std::string& q) {
    auto r = e.Retrieve(dialogue, q, {});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && !r->ranked.empty() ? r->ranked.front().text : std::string();
  }
  static bool HaveWords() { return wordvec::WordVectors::Default() != nullptr; }
  static constexpr const char* kNoWordNet =
      "no WordNet image: the build makes it (wordnet-base, installed by scripts/bootstrap)";
  static constexpr const char* kNoWords =
      "no built-in word vectors: the build makes them from WordNet (wordnet-base, installed by "
      "scripts/bootstrap)";
  TempDir dir_;
  FakeClock clock_{MakeTimeMs(2025, 3, 1)};
};

// The built-in engine knows a fact said again in other words (WordNet
// synonyms of the same most frequent sense) and never takes a fact that
// differs in a word's sense, a negation or a number for a duplicate.
TEST_F(MeaningTest, AddKnowsAFactSaidAgainInOtherWords) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  auto add = [&](const std::string& text) {
    MemoryAddOptions o;
    o.infer = false;
    auto r = e->AddMemoryText(User("ana"), text, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    clock_.Advance(1000);
    return r.ok() && r->results.size() == 1 ? r->results[0] : MemoryEventResult{};
  };
  const MemoryEventResult kids = add("I have two kids");
  ASSERT_EQ(kids.event, "ADD");
  const MemoryEventResult children = add("I have two children");
  EXPECT_EQ(children.event, "NOOP");
  EXPECT_EQ(children.id, kids.id);
  EXPECT_EQ(children.memory, "I have two kids");  // what is kept, not what was not stored
  EXPECT_EQ(children.version, kids.version);
  const MemoryEventResult car = add("My car is red");
  ASSERT_EQ(car.event, "ADD");
  EXPECT_EQ(add("My automobile is red").id, car.id);
  EXPECT_EQ(add("I hate loud music").event, "ADD");
  EXPECT_EQ(add("I detest loud music").event, "NOOP");
  // Not the same: a rarer sense, a hypernym, a number, a negation, a name.
  EXPECT_EQ(add("Tom is a nurse").event, "ADD");
  EXPECT_EQ(add("Tom is a nanny").event, "ADD");
  EXPECT_EQ(add("Priya is vegetarian").event, "ADD");
  EXPECT_EQ(add("Priya is vegan").event, "ADD");
  EXPECT_EQ(add("I have three children").event, "ADD");
  EXPECT_EQ(add("I don't detest loud music").event, "ADD");
  EXPECT_EQ(add("Bob is vegetarian").event, "ADD");
  auto list = e->ListMemories(User("ana"), {});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->items.size(), 10u);
}

TEST_F(MeaningTest, SearchFindsMemoriesThatShareNoWordWithTheQuery) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "priya", "Priya is vegetarian");
  Add(*e, "priya", "The flight to Hanoi leaves on Saturday");
  Add(*e, "priya", "Our holiday in Crete starts on Monday");
  Add(*e, "priya", "The database runs on PostgreSQL");
  MemorySearchOptions so;
  so.explain = true;
  auto r = e->SearchMemories(User("priya"), "food preferences", so);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->empty());
  EXPECT_EQ(r->front().memory, "Priya is vegetarian");
  ASSERT_TRUE(r->front().score_details);
  EXPECT_GT(r->front().score_details->semantic, 0.0);
  EXPECT_TRUE(r->front().score_details->from_semantic);
  EXPECT_EQ(r->front().score_details->lexical, 0.0);

  auto trip = e->SearchMemories(User("priya"), "when does the vacation begin?", so);
  ASSERT_TRUE(trip.ok());
  ASSERT_FALSE(trip->empty());
  EXPECT_EQ(trip->front().memory, "Our holiday in Crete starts on Monday");
}

// A context's facts with the built-in engine: a memory that says what the
// question asks in other words enters it ("food preferences": "Priya is
// vegetarian"), beside the dialogue's messages; an unrelated memory and a
// consolidated fact (drawn from pages, which the messages reach) do not by
// meaning alone.
TEST_F(MeaningTest, AContextHoldsTheMemoriesThatAnswerInOtherWords) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "priya", "Priya is vegetarian");
  Add(*e, "priya", "The flight to Hanoi leaves on Saturday");
  Add(*e, "priya", "Priya is allergic to penicillin");
  Add(*e, "priya", "The database runs on PostgreSQL");
  const Scope dialogue{"default", "priya", "assistant"};
  TurnInput t;
  t.user_text = "Can you suggest a restaurant for Friday?";
  t.assistant_text = "Sure, what kind of place would you like?";
  ASSERT_TRUE(e->AddTurns(dialogue, {t}).ok());
  auto facts_of = [&](const std::string& q) {
    auto r = e->Retrieve(dialogue, q, {});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::string out;
    if (r.ok()) {
      for (const auto& i : r->items) {
        if (i.kind == ItemKind::kUserFact || i.kind == ItemKind::kAssistantFact) out += i.text + "\n";
      }
    }
    return out;
  };
  const std::string food = facts_of("What are her food preferences?");
  EXPECT_NE(food.find("Priya is vegetarian"), std::string::npos) << food;
  EXPECT_EQ(food.find("PostgreSQL"), std::string::npos) << food;
  const std::string drugs = facts_of("Any allergies to medicines I should know about?");
  EXPECT_NE(drugs.find("allergic to penicillin"), std::string::npos) << drugs;
  EXPECT_EQ(drugs.find("PostgreSQL"), std::string::npos) << drugs;
  EXPECT_EQ(drugs.find("Hanoi"), std::string::npos) << drugs;
  // A memory naming a thing of the kind the question asks for (football is
  // a sport: without the class its meaning alone stays under the bar).
  Add(*e, "priya", "Priya follows football on weekends");
  Add(*e, "priya", "Priya walks to the park every morning");
  Add(*e, "priya", "Priya plays the cello in an orchestra");
  const std::string sport = facts_of("What sport does she watch?");
  EXPECT_NE(sport.find("follows football"), std::string::npos) << sport;
  EXPECT_EQ(sport.find("PostgreSQL"), std::string::npos) << sport;
  // "For a living" asks for an occupation there too, not for a "living room".
  Add(*e, "priya", "Priya is painting the living room green");
  Add(*e, "priya", "Priya works as a pediatric nurse");
  const std::string work = facts_of("What does she do for a living?");
  EXPECT_NE(work.find("pediatric nurse"), std::string::npos) << work;
  EXPECT_EQ(work.find("living room"), std::string::npos) << work;
}

// A question naming a place finds the turn naming a place within it (WordNet's
// parts of a named place: Lisbon is in Portugal), also in a scope of a few
// dozen messages, where a word two of them hold is still rare; the turn
// naming the place itself still comes first.
TEST_F(MeaningTest, AQuestionNamingAPlaceFindsTheTurnNamingAPlaceWithinIt) {
  ASSERT_NE(wordnet::WordNet::Default(), nullptr) << kNoWordNet;
  auto e = Open();
  const Scope dialogue{"default", "ines", "assistant"};
  AddBusyDialogue(*e, dialogue,
                  {{7, Said("We spent five days in Lisbon and then took the train north.",
                            "That sounds lovely.")}});
  auto first = [&](const std::string& q) { return FirstRanked(*e, dialogue, q); };
  EXPECT_NE(first("Did I ever go to Portugal?").find("Lisbon"), std::string::npos);
  EXPECT_EQ(first("Did I ever go to Spain?").find("Lisbon"), std::string::npos);  // not in Spain
  ASSERT_TRUE(
      e->AddTurns(dialogue, {Said("Portugal was my favourite trip, I want to go back someday.",
                                  "Maybe next year!")})
          .ok());
  EXPECT_NE(first("Did I ever go to Portugal?").find("favourite trip"), std::string::npos);
}

// A question saying a verb idiom finds the turn that says its meaning in
// other words ("pop the question": "proposed"; "pass away": "died"), ahead
// of the turns that hold the idiom's words in another sense.
TEST_F(MeaningTest, AVerbIdiomFindsTheTurnThatSaysItInOtherWords) {
  ASSERT_NE(wordnet::WordNet::Default(), nullptr) << kNoWordNet;
  auto e = Open();
  const Scope dialogue{"default", "mateo", "assistant"};
  AddBusyDialogue(
      *e, dialogue,
      {{3, Said("I had a question about the invoice, so I asked my manager.", "Did it help?")},
       {9, Said("Dev proposed to me on the beach at sunset!", "Congratulations!")},
       {14, Said("I hope I pass the exam if I study every evening.", "You will.")},
       {21, Said("My grandfather died last spring and I still miss him.", "I'm so sorry.")},
       {25, Said("The ferry was so slow, it took us all day to get across.", "Ugh.")}});
  auto first = [&](const std::string& q) { return FirstRanked(*e, dialogue, q); };
  EXPECT_NE(first("Where did Dev pop the question?").find("proposed"), std::string::npos);
  EXPECT_NE(first("When did my grandfather pass away?").find("died"), std::string::npos);
}

// A question naming a kind of thing finds the turn naming a kind of it
// several levels below in WordNet: a laptop is a portable computer, a
// personal computer, a digital computer, a computer (four levels: with two
// the laptop is not found); badminton a court game, an athletic game, a
// sport (three; found with two levels as well, by other means).
TEST_F(MeaningTest, AQuestionNamingAKindFindsTheTurnNamingAKindFarBelowIt) {
  ASSERT_NE(wordnet::WordNet::Default(), nullptr) << kNoWordNet;
  auto e = Open();
  const Scope dialogue{"default", "omar", "assistant"};
  AddBusyDialogue(
      *e, dialogue,
      {{5, Said("Our cat knocked my laptop off the table and the screen cracked.",
                "Oh no! Is it still under warranty?")},
       {20, Said("I played badminton with my coworkers on Saturday.", "Great, have fun!")}});
  EXPECT_NE(FirstRanked(*e, dialogue, "What happened to my computer?").find("laptop"),
            std::string::npos);
  EXPECT_NE(FirstRanked(*e, dialogue, "Which sport did I try?").find("badminton"),
            std::string::npos);
}

// A season the question names is held by a memory naming one of its months
// (written with a capital: "may" the verb is none), in fact search's share
// of the question's words.
TEST_F(MeaningTest, AMemoryNamingAMonthHoldsItsSeason) {
  auto e = Open();
  Add(*e, "kai",
      {"I'm planning a two-week trip to Japan next April to see the cherry blossoms.",
       "We go camping by the lake every July.", "I may visit my aunt in Osaka someday.",
       "I take piano lessons on weekday evenings."});
  const auto spring = LexicalShares(*e, "kai", "Where am I travelling in the spring?");
  const auto share = [](const std::map<std::string, double>& m, const std::string& prefix) {
    for (const auto& [text, v] : m) {
      if (text.rfind(prefix, 0) == 0) return v;
    }
    return -1.0;
  };
  // (Each place named holds the "where" as well: "lake", "Osaka".)
  const double japan = share(spring, "I'm planning a two-week trip");
  EXPECT_GT(japan, share(spring, "We go camping"));
  EXPECT_GT(japan, share(spring, "I may visit"));
  EXPECT_GT(japan, share(spring, "I take piano"));
  const auto summer = LexicalShares(*e, "kai", "What do we do in the summer?");
  EXPECT_GT(share(summer, "We go camping"), 0.0);
  EXPECT_LE(share(summer, "I'm planning a two-week trip"), 0.0);
  // "fall" the verb is no season.
  EXPECT_LE(
      share(LexicalShares(*e, "kai", "Did I fall in October?"), "I'm planning a two-week trip"),
      0.0);
}

// Two question words WordNet names as one thing ("martial arts", "European
// countries") ask for its kinds, which count as the question's own words: a
// two-word name has one sense, where "art" and "country" alone have many
// (RankingOptions::expansion_compound). The turns holding the single words
// ("modern art", "my country") come after the turns naming the kinds; at the
// single words' expansion weight they came first.
TEST_F(MeaningTest, TwoWordsNamingOneThingAskForItsKinds) {
  ASSERT_NE(wordnet::WordNet::Default(), nullptr) << kNoWordNet;
  auto e = Open();
  const Scope dialogue{"default", "kim", "assistant"};
  AddBusyDialogue(
      *e, dialogue,
      {{4, Said("I signed up for taekwondo classes twice a week.", "Good for you!")},
       {9, Said("The modern art at the Tate was wonderful.", "Which room did you like best?")},
       {15, Said("Last summer we drove all the way through Spain.", "What a trip!")},
       {22, Said("I would do anything to serve my country.", "That is admirable.")}});
  EXPECT_NE(FirstRanked(*e, dialogue, "Which martial arts have I practised?").find("taekwondo"),
            std::string::npos);
  EXPECT_NE(FirstRanked(*e, dialogue, "What European countries have I been to?").find("Spain"),
            std::string::npos);
  // An expansion still, at the question's words' weight.
  RetrieveOptions explain;
  explain.explain = true;
  auto why = e->Retrieve(dialogue, "Which martial arts have I practised?", explain);
  ASSERT_TRUE(why.ok() && !why->ranked.empty());
  bool expanded = false;
  for (const auto& t : why->ranked.front().why.matched_terms) {
    expanded = expanded || (t.term == "taekwondo" && t.expansion && t.weight == 1.0);
  }
  EXPECT_TRUE(expanded);
  // ... and it holds the pair's words in the coverage share, as explained.
  EXPECT_GT(why->ranked.front().why.coverage, 0.0);
  // At the single words' weight, the single words win.
  RetrieveOptions single;
  single.ranking.expansion_compound = single.ranking.expansion;
  auto r = e->Retrieve(dialogue, "What European countries have I been to?", single);
  ASSERT_TRUE(r.ok() && !r->ranked.empty());
  EXPECT_EQ(r->ranked.front().text.find("Spain"), std::string::npos) << r->ranked.front().text;
}

// A speaker's name is no common noun to expand: "Bill" is no invoice, and
// the other speaker's message about an invoice holds no term of a question
// about Bill.
TEST_F(MeaningTest, ASpeakersNameIsNotExpandedAsAWord) {
  ASSERT_NE(wordnet::WordNet::Default(), nullptr) << kNoWordNet;
  auto e = Open();
  const Scope dialogue{"default", "bill", "assistant"};
  AddBusyDialogue(
      *e, dialogue,
      {{3, Said("Any news from the plumber?", "The invoice from the plumber came today.")},
       {20, Said("I finally fixed the garden gate.", "Well done!")}},
      "Bill", "Ada");
  RetrieveOptions o;
  o.explain = true;
  auto r = e->Retrieve(dialogue, "What did Bill fix?", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->ranked.empty());
  EXPECT_NE(r->ranked.front().text.find("garden gate"), std::string::npos)
      << r->ranked.front().text;
  bool seen = false;
  for (const auto& item : r->ranked) {
    if (item.text.find("invoice") == std::string::npos) continue;
    seen = true;
    EXPECT_TRUE(item.why.matched_terms.empty()) << item.why.matched_terms.front().term;
  }
  EXPECT_TRUE(seen);  // (ranked by its neighbours alone)
}

// Among many memories (the main paraphrase set's 114), the one that answers
// in other words is in the context too, not only first in fact search: the
// memories re-scored by meaning are not only the few nearest by the mean of
// their words ("Maya loves jazz" is far from "music" by its words' mean, and
// near by "jazz"'s WordNet neighbourhood). Each of these questions found its
// memory in the context with 64 re-scored and none of them with 8.
TEST_F(MeaningTest, AContextAmongManyMemoriesHoldsTheOneThatAnswersInOtherWords) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  std::ifstream in(ENGRAM_SOURCE_DIR "/bench/data/paraphrase.jsonl");
  ASSERT_TRUE(in.good());
  std::size_t added = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    Add(*e, "set", nlohmann::json::parse(line)["memory"].get<std::string>());
    ++added;
  }
  ASSERT_GE(added, 100u);
  const Scope dialogue{"default", "set", "assistant"};
  TurnInput t;
  t.user_text = "Hi again";
  t.assistant_text = "Hello! How can I help?";
  ASSERT_TRUE(e->AddTurns(dialogue, {t}).ok());
  const std::pair<const char*, const char*> asked[] = {
      {"What kind of music does she enjoy?", "Maya loves jazz"},
      {"What medication does the user need?", "I take insulin twice a day"},
      {"When was he born?", "Bob's birthday is on 4 July"},
      {"What pet does she have?", "Chloe adopted a golden retriever puppy"},
      {"What is the user's occupation?", "I work as a backend engineer"},
      {"Who is the user's boss?", "My manager is Karen"},
      {"Does she commute to the office daily?", "Helen works remotely"},
      {"What home improvement project is coming?", "renovate the kitchen"},
      {"When does he want to stop working?", "Max hopes to retire early"},
      {"What time is the morning meeting?", "Team standup happens daily"}};
  int held = 0;
  std::string missed;
  for (const auto& [question, memory] : asked) {
    auto r = e->Retrieve(dialogue, question, {});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    bool in = false;
    for (const auto& i : r->items) {
      in = in || ((i.kind == ItemKind::kUserFact || i.kind == ItemKind::kAssistantFact) &&
                  i.text.find(memory) != std::string::npos);
    }
    held += in ? 1 : 0;
    if (!in) missed += std::string(question) + "\n";
  }
  // (A floor: a re-made vector space moves a close ranking or two.)
  EXPECT_GE(held, 8) << missed;
}

// Irregular forms ("children", "went", "mice") have the meaning of their base
// form (WordNet's exception lists), so a memory that says them is found by a
// question in other words.
TEST_F(MeaningTest, IrregularFormsHaveTheMeaningOfTheirBaseForm) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "kim", "Her children attend a Montessori school");
  Add(*e, "kim", "The garage door squeaks when it opens");
  Add(*e, "kim", "Kim bought a new laptop for work");
  Add(*e, "kim", "The team meets on Thursdays");
  for (const char* question : {"Which school do her kids go to?", "Does she have a son or daughter?"}) {
    const auto first = First(*e, "kim", question);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->memory, "Her children attend a Montessori school") << question;
  }
  const auto youth = First(*e, "kim", "Does she have a son or daughter?");
  ASSERT_TRUE(youth && youth->score_details);
  EXPECT_EQ(youth->score_details->lexical, 0.0);
}

// A hyphenated compound WordNet lacks ("short-sighted", "step-son", "e-bike")
// has the meaning of its parts.
TEST_F(MeaningTest, UnknownCompoundsHaveTheMeaningOfTheirParts) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "eva", "Eva became short-sighted last year");
  Add(*e, "eva", "Eva's step-son is nine");
  Add(*e, "eva", "Eva bought an e-bike");
  Add(*e, "eva", "The flat has a wood-burning stove");
  Add(*e, "eva", "Eva keeps a sugar-free diet");
  Add(*e, "eva", "The team uses a self-hosted wiki");
  for (const auto& [question, memory] :
       {std::pair{"Is her vision getting worse?", "Eva became short-sighted last year"},
        {"How old is her child?", "Eva's step-son is nine"},
        {"What bicycle does she ride?", "Eva bought an e-bike"}}) {
    const auto first = First(*e, "eva", question);
    ASSERT_TRUE(first && first->score_details);
    EXPECT_EQ(first->memory, memory) << question;
    EXPECT_GT(first->score_details->semantic, 0.0) << question;
  }
}

// A short form of chat ("fave", "bday", "fam") is found by the word it stands
// for, and the other way round: it holds that word as much as a memory saying
// it does.
TEST_F(MeaningTest, AShortFormOfChatIsFoundByItsWord) {
  auto e = Open();
  Add(*e, "lea", "Street food downtown is cheap");
  Add(*e, "lea", "My fave food is pho");
  Add(*e, "lea", "Her birthday party was loud");
  Add(*e, "lea", "Dinner with the fam every Sunday");
  Add(*e, "lea", "The family car needs new tyres");
  auto lexical = [&](const std::string& query) { return LexicalShares(*e, "lea", query); };
  auto fave = lexical("What is my favorite food?");
  EXPECT_GT(fave["My fave food is pho"], fave["Street food downtown is cheap"]);
  EXPECT_EQ(First(*e, "lea", "What is my favorite food?")->memory, "My fave food is pho");
  // (A question asking "who" would ask for a person too, which the memory
  // does not name.)
  auto family = lexical("Does she have dinner with her family on Sundays?");
  EXPECT_GT(family["Dinner with the fam every Sunday"], 0.9);  // every word held
  auto bday = lexical("How was her bday party?");
  EXPECT_EQ(bday["Her birthday party was loud"], 1.0);
  EXPECT_EQ(First(*e, "lea", "How was her bday party?")->memory, "Her birthday party was loud");
}

// A word of liking or disliking holds what another of the same stance asks
// for ("adores" what "like" asks for, "hates" what "dislike" does); a word
// naming preferences of either kind holds neither.
TEST_F(MeaningTest, AWordOfLikingHoldsWhatAnotherOfTheSameStanceAsksFor) {
  auto e = Open();
  Add(*e, "wendy", "Wendy hates crowded beaches");
  Add(*e, "wendy", "Wendy adores quiet lakes");
  Add(*e, "wendy", "Wendy swims twice a week");
  auto lexical = [&](const std::string& query) { return LexicalShares(*e, "wendy", query); };
  auto like = lexical("What does Wendy like?");
  EXPECT_EQ(like["Wendy adores quiet lakes"], 1.0);
  EXPECT_LT(like["Wendy hates crowded beaches"], 1.0);
  EXPECT_EQ(First(*e, "wendy", "What does Wendy like?")->memory, "Wendy adores quiet lakes");
  auto dislike = lexical("What does Wendy dislike?");
  EXPECT_EQ(dislike["Wendy hates crowded beaches"], 1.0);
  EXPECT_LT(dislike["Wendy adores quiet lakes"], 1.0);
  EXPECT_EQ(First(*e, "wendy", "What does Wendy dislike?")->memory, "Wendy hates crowded beaches");
  auto fave = lexical("Which is Wendy's fave?");  // a short form of a word of liking
  EXPECT_EQ(fave["Wendy adores quiet lakes"], 1.0);
  auto either = lexical("What are Wendy's preferences?");
  EXPECT_LT(either["Wendy adores quiet lakes"], 1.0);
  EXPECT_EQ(either["Wendy adores quiet lakes"], either["Wendy hates crowded beaches"]);
}

// Someone's superior is said in more than one way: a question for a boss
// finds "my manager" and "reporting to", and one asking whom the user reports
// to finds the manager too (a memory sharing no word with it, a candidate by
// the words of a superior); a "password manager" is no superior.
TEST_F(MeaningTest, ABossIsAManagerAndTheOneReportedTo) {
  auto e = Open();
  Add(*e, "dev", "I'm a data engineer at Monzo, reporting to Kate Liu");
  Add(*e, "dev", "My sister is a doctor in Leeds");
  Add(*e, "dev", "We have a team offsite in Lisbon in May");
  auto boss = LexicalShares(*e, "dev", "Who is my boss?");
  EXPECT_EQ(boss["I'm a data engineer at Monzo, reporting to Kate Liu"], 1.0);
  EXPECT_EQ(First(*e, "dev", "Who is my boss?")->memory,
            "I'm a data engineer at Monzo, reporting to Kate Liu");
  // A superior's word after a noun names a thing: no stance.
  EXPECT_EQ(LexicalShares(*e, "dev", "Which password manager do I use?")
                ["I'm a data engineer at Monzo, reporting to Kate Liu"],
            0.0);
  Add(*e, "lin", "My manager is Karen Doyle");
  Add(*e, "lin", "My sister is a doctor in Leeds");
  Add(*e, "lin", "I go climbing on Tuesdays");
  EXPECT_EQ(First(*e, "lin", "Who is my supervisor?")->memory, "My manager is Karen Doyle");
  EXPECT_EQ(First(*e, "lin", "Who do I report to?")->memory, "My manager is Karen Doyle");
  // A context's facts alike.
  TurnInput t;
  t.user_text = "Can you help me plan my week?";
  t.assistant_text = "Sure, what is on it?";
  ASSERT_TRUE(e->AddTurns(Scope{"default", "lin", "assistant"}, {t}).ok());
  auto r = e->Retrieve(Scope{"default", "lin", "assistant"}, "Who do I report to?", {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(r->context.find("My manager is Karen Doyle"), std::string::npos) << r->context;
  // (a word of the sentence, not a report of one's own: no stance)
  EXPECT_LT(
      LexicalShares(*e, "lin", "What did the weather report say?")["My manager is Karen Doyle"],
      1.0);
}

TEST_F(MeaningTest, WordsOfTheQueryStillRankFirst) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "alice", "Alice loves ramen");
  Add(*e, "alice", "Alice eats sushi on Fridays");
  auto r = e->SearchMemories(User("alice"), "ramen", {});
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->empty());
  EXPECT_EQ(r->front().memory, "Alice loves ramen");
}

TEST_F(MeaningTest, AQuestionAskingWhenPrefersAMemoryThatSaysWhen) {
  auto e = Open();
  Add(*e, "emma", "Emma has a piano at home");
  Add(*e, "emma", "Piano lessons for Emma on Wednesdays after school");
  Add(*e, "emma", "Emma wants a new piano");
  MemorySearchOptions so;
  so.explain = true;
  // (Without the time term "Emma has a piano at home" came first: it holds
  // the words of the question and few others.)
  for (const char* q : {"When does Emma have piano?", "Which day does Emma have piano?"}) {
    auto r = e->SearchMemories(User("emma"), q, so);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_GE(r->size(), 2u) << q;
    EXPECT_EQ(r->front().memory, "Piano lessons for Emma on Wednesdays after school") << q;
  }
  // Not asking for a time, the same words put the short memory first.
  auto r = e->SearchMemories(User("emma"), "Does Emma have a piano?", so);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->empty());
  EXPECT_EQ(r->front().memory, "Emma has a piano at home");
  // A time of day or a date in figures says when too ("7:40" is two
  // numbers to the tokenizer; "2025-03-14" one word).
  Add(*e, "emma", "Emma's train is always crowded");
  Add(*e, "emma", "Emma's train leaves at 7:40");
  Add(*e, "emma", "The dentist is very friendly");
  Add(*e, "emma", "The dentist appointment is on 2025-03-14");
  for (const auto& [q, want] : std::map<std::string, std::string>{
           {"When is Emma's train?", "Emma's train leaves at 7:40"},
           {"When is the dentist?", "The dentist appointment is on 2025-03-14"}}) {
    auto t = e->SearchMemories(User("emma"), q, so);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ASSERT_FALSE(t->empty()) << q;
    EXPECT_EQ(t->front().memory, want) << q;
  }
}

TEST_F(MeaningTest, AQuestionAskingHowManyPrefersAMemoryThatSaysANumber) {
  auto e = Open();
  Add(*e, "omar", "Omar adores his cats");
  Add(*e, "omar", "Omar has three cats and a tortoise");
  Add(*e, "omar", "Omar's cats sleep on the sofa");
  Add(*e, "omar", "Omar's nephew is sweet");
  Add(*e, "omar", "Omar's nephew turns twelve in June");
  for (const auto& [q, want] : std::map<std::string, std::string>{
           {"How many cats does Omar have?", "Omar has three cats and a tortoise"},
           {"How old is Omar's nephew?", "Omar's nephew turns twelve in June"},
           {"What age is Omar's nephew?", "Omar's nephew turns twelve in June"}}) {
    EXPECT_EQ(First(*e, "omar", q).value_or(MemoryItem{}).memory, want) << q;
  }
  // Not asking for a number, the memory most about the question's words
  // comes first.
  EXPECT_EQ(First(*e, "omar", "Does Omar adore cats?").value_or(MemoryItem{}).memory, "Omar adores his cats");
}

// "For a living" says a question asks for an occupation; its "living" is no
// word a memory should match ("lives") and no meaning ("living room").
TEST_F(MeaningTest, WhatSomeoneDoesForALivingIsAnOccupationNotWhereTheyLive) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ines", "Ines lives in a flat in Porto");
  Add(*e, "ines", "Ines is painting the living room green");
  Add(*e, "ines", "Ines works as a pediatric nurse");
  Add(*e, "ines", "Ines plays padel on Sundays");
  for (const char* q : {"What does Ines do for a living?", "What does she do for a living?"}) {
    EXPECT_EQ(First(*e, "ines", q).value_or(MemoryItem{}).memory, "Ines works as a pediatric nurse") << q;
  }
  // Where she lives is still found by its words.
  EXPECT_EQ(First(*e, "ines", "Does Ines live in Porto?").value_or(MemoryItem{}).memory, "Ines lives in a flat in Porto");
}

// A question asking for a kind of thing ("What bird", "Which instrument",
// "What is his job?", or the keywords "occupation") finds the memory that
// names one in its own words: the memory matches the question's noun as if it
// held it (WordNet's is-a).
TEST_F(MeaningTest, AQuestionForAKindOfThingFindsTheMemoryNamingOne) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "theo", "Theo's parrot can say twenty words");
  Add(*e, "theo", "Theo walks the neighbours' dog every morning");
  Add(*e, "theo", "Theo is learning to play the cello");
  Add(*e, "theo", "Theo is an architect designing hospitals");
  Add(*e, "theo", "Theo visits his nephew in Lyon every summer");
  Add(*e, "theo", "Theo's office printer is a Brother laser model");
  MemorySearchOptions so;
  so.explain = true;
  const std::pair<const char*, const char*> cases[] = {
      {"What bird does he keep?", "Theo's parrot can say twenty words"},
      {"Which instrument is he practising?", "Theo is learning to play the cello"},
      {"What is his profession?", "Theo is an architect designing hospitals"},
      {"What is his job?", "Theo is an architect designing hospitals"},
      // Keywords, as an agent's tool call often asks: the last noun is what
      // is asked for.
      {"profession", "Theo is an architect designing hospitals"},
      {"Theo's job", "Theo is an architect designing hospitals"},
      {"musical instrument", "Theo is learning to play the cello"},
  };
  for (const auto& [q, want] : cases) {
    auto r = e->SearchMemories(User("theo"), q, so);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_FALSE(r->empty()) << q;
    EXPECT_EQ(r->front().memory, want) << q;
    ASSERT_TRUE(r->front().score_details) << q;
    EXPECT_GT(r->front().score_details->lexical, 0.0) << q;  // the class counts as the question's word
  }
}

// "What is the name of her dog?" asks about a dog, not about names: the
// memory naming a retriever answers it, not the one naming a boat.
TEST_F(MeaningTest, AQuestionForTheNameOfAThingAsksForTheThing) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "chloe", "Chloe adopted a golden retriever puppy named Max");
  Add(*e, "chloe", "Chloe's favourite colour is teal");
  Add(*e, "chloe", "Chloe named her sailing boat Aurora");
  Add(*e, "chloe", "Chloe works as a nurse");
  Add(*e, "chloe", "Chloe's brother is called Tom");
  auto r = First(*e, "chloe", "What is the name of her dog?");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->memory, "Chloe adopted a golden retriever puppy named Max");
  auto lexical = LexicalShares(*e, "chloe", "What is the name of her dog?");
  EXPECT_GT(lexical["Chloe adopted a golden retriever puppy named Max"],
            lexical["Chloe named her sailing boat Aurora"]);  // the class counts as "dog"
}

// In a store of hundreds of memories the one naming a thing of the kind
// asked for shares nothing else with the question, so no other search
// proposes it: the full-text index finds it through the class's words.
TEST_F(MeaningTest, AMemoryNamingWhatIsAskedIsFoundAmongHundreds) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  const char* people[] = {"Theo", "Mara", "Jonas", "Lena", "Omar", "Keiko", "Ravi", "Ines"};
  const char* things[] = {"the plants on the balcony", "the blue kettle", "a spare key", "the winter coats",
                          "the bike tyres", "the library card", "the garden hose", "the fridge magnets",
                          "the board games", "the photo albums", "the holiday plans", "the recycling bags"};
  const char* verbs[] = {"tidied", "lost", "found", "moved", "cleaned", "checked", "labelled", "sorted"};
  for (int i = 0; i < 320; ++i) {
    Add(*e, "big", std::string(people[i % 8]) + " " + verbs[(i / 8) % 8] + " " + things[(i / 3) % 12] +
                       " on day " + std::to_string(i));
  }
  Add(*e, "big", "Theo is an architect designing hospitals");
  Add(*e, "big", "Mara keeps a parrot that whistles");
  MemorySearchOptions so;
  so.explain = true;
  const std::pair<const char*, const char*> cases[] = {
      {"What is his profession?", "Theo is an architect designing hospitals"},
      {"What bird does she have?", "Mara keeps a parrot that whistles"},
  };
  for (const auto& [q, want] : cases) {
    auto r = e->SearchMemories(User("big"), q, so);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_FALSE(r->empty()) << q;
    EXPECT_EQ(r->front().memory, want) << q;
  }
}

// The class's words the full-text index looks for are those that name a
// thing of the class by their most frequent sense: dozens of memories
// saying "Berlin", "hope" or "day" (a composer, a comedian, an actress, by
// rare senses of the same words) leave room for the one naming a veterinarian, in a
// store too large for every memory to be a candidate.
TEST_F(MeaningTest, WordsOfAClassByRareSensesDoNotCrowdOutItsMembers) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  const char* people[] = {"Theo", "Mara", "Jonas", "Lena", "Omar", "Keiko", "Ravi", "Ines"};
  const char* things[] = {"the blue kettle", "a spare towel", "the winter coats", "the bike tyres",
                          "the library card", "the garden hose", "the fridge magnets", "the board games"};
  for (int i = 0; i < 120; ++i) {
    Add(*e, "crowd", std::string(people[i % 8]) + " tidied " + things[(i / 8) % 8] + " on day " + std::to_string(i));
  }
  const char* rare[] = {"ball", "bell", "cash", "hand", "moon", "north", "pig", "plant", "post", "pound",
                        "power", "price", "hope", "black", "berlin", "london", "chair", "chain", "guard", "grass",
                        "hill", "page", "organ", "court", "bull", "lamb", "bacon", "fox", "frost", "marsh",
                        "millet", "monk", "oat", "pink"};
  for (const char* w : rare) Add(*e, "crowd", std::string("Ravi drew a ") + w + " in his sketchbook");
  Add(*e, "crowd", "Carmen is a veterinarian");
  MemorySearchOptions so;
  so.explain = true;
  auto r = e->SearchMemories(User("crowd"), "What is her job?", so);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->empty());
  // Found, the class counting as "job" ("post" and "chair", jobs by a sense
  // of their own, are near it in meaning: the first three).
  auto it = std::find_if(r->begin(), r->end(), [](const MemoryItem& m) { return m.memory == "Carmen is a veterinarian"; });
  ASSERT_NE(it, r->end());
  EXPECT_LT(it - r->begin(), 3);
  ASSERT_TRUE(it->score_details);
  EXPECT_EQ(it->score_details->lexical, 1.0);
}

TEST_F(MeaningTest, AWordMostMemoriesShareCountsLessThanARareOne) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "eve", "The user likes green tea");
  Add(*e, "eve", "The user lives in Oslo");
  Add(*e, "eve", "The user plays chess on Sundays");
  Add(*e, "eve", "Eve repairs an old bicycle");
  MemorySearchOptions so;
  so.explain = true;
  // Each memory matches one of the two words: "user" is in three of the four
  // memories, "bicycle" in one, so the bicycle match counts more.
  auto r = e->SearchMemories(User("eve"), "user bicycle", so);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->empty());
  EXPECT_EQ(r->front().memory, "Eve repairs an old bicycle");
  double rare = -1, common = -1;
  for (const auto& m : *r) {
    ASSERT_TRUE(m.score_details);
    if (m.memory == "Eve repairs an old bicycle") rare = m.score_details->lexical;
    if (m.memory == "The user lives in Oslo") common = m.score_details->lexical;
  }
  EXPECT_GT(rare, 0.5);
  EXPECT_GT(common, 0.0);
  EXPECT_LT(common, 0.5);
  EXPECT_NEAR(rare + common, 1.0, 1e-6);  // shares of the same two words
}

TEST_F(MeaningTest, ASharedWordDoesNotCarryTheSemanticScore) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ann", "Priya is vegetarian");
  Add(*e, "ann", "Omar prefers tea to coffee");
  Add(*e, "ann", "My parents live on a farm in Ireland");
  Add(*e, "ann", "Marco's father passed away in 2019");
  Add(*e, "ann", "The user");
  MemorySearchOptions so;
  so.explain = true;
  // The semantic component scores the meaning beyond the words the query
  // and the memory share ("father"), which the lexical and vector parts
  // count already: the memory that answers in other words comes first.
  auto home = e->SearchMemories(User("ann"), "Where are the users' mother and father based?", so);
  ASSERT_TRUE(home.ok()) << home.status().ToString();
  ASSERT_FALSE(home->empty());
  EXPECT_EQ(home->front().memory, "My parents live on a farm in Ireland");
  for (const auto& m : *home) {
    ASSERT_TRUE(m.score_details);
    if (m.memory == "The user") {
      // Every known word of it is in the query: no meaning beyond them.
      EXPECT_EQ(m.score_details->semantic, 0.0);
      EXPECT_GT(m.score_details->lexical, 0.0);
    }
  }
}

// A query word a memory holds itself is matched by its words, not once more
// by the WordNet neighbourhoods of its other words: "living room" holds
// "live" ("a room in a private house ... for living") and took the full
// semantic score for "Where do I live?" from it, above the memory that says
// where the user lives. Both hold the question's word now, and both mean
// all of it the vectors see; what else the question asks (a place, of the
// user) decides.
TEST_F(MeaningTest, AWordAMemoryHoldsIsNotCountedAgainByItsNeighbourhoods) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ann", "We repainted the living room last weekend");
  Add(*e, "ann", "I live in a small flat in Leeds");
  Add(*e, "ann", "Priya is vegetarian");
  auto first = First(*e, "ann", "Where do I live?");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->memory, "I live in a small flat in Leeds");
  MemorySearchOptions so;
  so.explain = true;
  auto r = e->SearchMemories(User("ann"), "Where do I live?", so);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_GE(r->size(), 2u);
  EXPECT_EQ((*r)[0].memory, "I live in a small flat in Leeds");
  EXPECT_EQ((*r)[1].memory, "We repainted the living room last weekend");
  for (const auto& m : *r) {
    ASSERT_TRUE(m.score_details);
    if (m.memory != "Priya is vegetarian") {
      EXPECT_EQ(m.score_details->semantic, 1.0) << m.memory;
    }
  }
  EXPECT_GT((*r)[0].score_details->lexical, (*r)[1].score_details->lexical);
}

// A memory that holds every word of the question the vectors know is as
// near in meaning as a memory can be: one holding a neighbour of the word
// ("tasks" of "work", "lessons") must not pass it by meaning. "Where do I
// work?" found "Our team tracks tasks in Jira" first, and the memory that
// says where the user works not among ten.
TEST_F(MeaningTest, AMemoryHoldingEveryWordOfTheQuestionIsNotPassedByMeaning) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ann",
      {"Our team tracks tasks in Jira", "Piano lessons for Emma on Wednesdays after school",
       "Sofia is a lawyer specialising in immigration cases", "Pierre runs a small bakery in Lyon",
       "The user's sister works as a nurse in Toronto",
       "Helen works remotely from home three days a week",
       "I work as a backend engineer at a fintech startup", "Yoga class every Tuesday at 7 pm"});
  for (const char* q : {"Where do I work?", "Where does the user work?"}) {
    ExpectFirstHoldsAll(*e, "ann", q, "I work as a backend engineer at a fintech startup");
  }
}

// A memory naming a thing of the kind the question asks for holds its noun
// (the answer class), and with the question's other words all of it: "The
// user wants to learn Japanese" for "What language does the user want to
// learn?", above "studying" and "lyrics", near "learn" and "language" by
// meaning.
TEST_F(MeaningTest, AMemoryNamingWhatIsAskedAndHoldingTheOtherWordsHoldsAllOfIt) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ann",
      {"Lena listens to lo-fi hip hop while studying and finds lyrics distracting.",
       "The user wants to learn Japanese before a trip to Osaka in 2026.",
       "Grandma needs a hearing aid in her right ear but often forgets to wear it.",
       "I'd rather watch horror movies than comedies on weekend nights."});
  ExpectFirstHoldsAll(*e, "ann", "What language does the user want to learn?",
                      "The user wants to learn Japanese before a trip to Osaka in 2026.");
}

// Holding every word of the question the vectors know is holding all of it
// only with the words they do not know held too: "Uses a wheelchair" holds
// the "use" of "What multimeter does the user use?" (WordNet has no
// "multimeter"), and "Tom works at a bank" the "work" of "Where does Elif
// work?"; neither is the memory meant.
TEST_F(MeaningTest, WordsTheVectorsDoNotKnowMustBeHeldToo) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ann",
      {"Uses a wheelchair and needs step-free access everywhere",
       "The user is an electrician who tests circuits with a Fluke multimeter.",
       "Tom works at a bank in Leeds", "Elif works night shifts at the hospital",
       "Our rabbit Clover needs her teeth filed by the vet"});
  auto first = First(*e, "ann", "What multimeter does the user use?");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->memory,
            "The user is an electrician who tests circuits with a Fluke multimeter.");
  EXPECT_LT(
      Shares(
          *e, "ann", "What multimeter does the user use?",
          &MemoryScoreDetails::semantic)["Uses a wheelchair and needs step-free access everywhere"],
      1.0);
  ExpectFirstHoldsAll(*e, "ann", "Where does Elif work?",
                      "Elif works night shifts at the hospital");
  EXPECT_LT(Shares(*e, "ann", "Where does Elif work?",
                   &MemoryScoreDetails::semantic)["Tom works at a bank in Leeds"],
            1.0);
}

// A question asking for a time by its unit ("Which days ...?", "What year
// ...?") is answered by a memory holding its other words and saying a time:
// "Mondays" holds the "days" asked for, as "last year" (near "days" by
// meaning) does not hold "physiotherapy".
TEST_F(MeaningTest, AMemorySayingATimeHoldsTheUnitAQuestionAsksFor) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ann",
      {"Bianca retired from the police last year", "The user works night shifts as a paramedic",
       "Physiotherapy for the shoulder is on Mondays and Thursdays",
       "Our backups go to an external hard drive every night",
       "Tariq drinks green tea in the afternoon"});
  ExpectFirstHoldsAll(*e, "ann", "Which days is physiotherapy?",
                      "Physiotherapy for the shoulder is on Mondays and Thursdays");
  // Without a time said, the unit is not held: the same words and no day.
  Add(*e, "bo", {"Physiotherapy for the shoulder helps a lot", "Bianca retired last year"});
  const auto first = First(*e, "bo", "Which days is physiotherapy?");
  ASSERT_TRUE(first);
  EXPECT_LT(first->score_details->semantic, 1.0);
}

// A question asking for a time is answered by a memory saying one, also by
// an event ("when I was twelve"): a memory saying none keeps less of its
// meaning ("lives in a retirement home" is near "mom and dad" by meaning).
TEST_F(MeaningTest, AQuestionForATimePrefersAMemorySayingOne) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ann",
      {"I work as an air traffic controller at Schiphol Airport.",
       "The farmers market in our town runs Saturdays from 8 to noon.",
       "Callum owns a landscaping business with three employees.",
       "My parents split up when I was twelve.",
       "My grandmother Edith lives in a retirement home in Brighton."});
  MemorySearchOptions o;
  o.top_k = 5;
  auto r = e->SearchMemories(User("ann"), "When did mom and dad divorce?", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto rank = [&](const std::string& memory) {
    for (std::size_t i = 0; i < r->size(); ++i) {
      if ((*r)[i].memory == memory) return i;
    }
    return r->size();
  };
  EXPECT_LT(rank("My parents split up when I was twelve."),
            rank("My grandmother Edith lives in a retirement home in Brighton."));
}

// A question asking for a number is answered by a memory saying one: "raise"
// is near "place" and "rear" by meaning, and neither the book club nor the
// parents answer "How much did our startup raise?".
TEST_F(MeaningTest, AQuestionForANumberPrefersAMemorySayingOne) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ann",
      {"Book club meets the first Sunday of each month at Clara's place.",
       "Tomás's parents live in Guadalajara and he visits them every Christmas.",
       "Lucía is saving up to buy her first house by 2027.",
       "I just got promoted to senior product manager at Shopify.",
       "Our startup just closed a $4 million seed round led by Sequoia.",
       "Our son Eli is adopted; we brought him home from Ethiopia in 2019.",
       "Björn is negotiating a raise and wants to ask for fifteen percent more.",
       "Keisha quit her law firm job to become a high school teacher."});
  MemorySearchOptions o;
  o.top_k = 3;
  auto r = e->SearchMemories(User("ann"), "How much did our startup raise?", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<std::string> top;
  for (const auto& m : *r) top.push_back(m.memory);
  EXPECT_NE(std::find(top.begin(), top.end(),
                      "Our startup just closed a $4 million seed round led by Sequoia."),
            top.end());
  EXPECT_EQ(std::find(top.begin(), top.end(),
                      "Book club meets the first Sunday of each month at Clara's place."),
            top.end());
}

// The same when the question also names someone the vectors do not know:
// the name is the entity's and the words' to match, and the memory holding
// the question's one known word means all the vectors see of it ("hiking"
// is a "raise" of prices, "considering" a kind of "thinking").
TEST_F(MeaningTest, ANameTheVectorsDoNotKnowLeavesTheMeaningToTheOtherWords) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ann",
      {"Bongani prefers hiking trails over crowded beaches on vacation.",
       "Bongani's grandmother raised him in Durban.", "Yuki's parents live with her in Osaka.",
       "I can't stand cilantro; it tastes like soap to me.",
       "I'm considering switching to an electric car next year.",
       "Elif works night shifts every other weekend.",
       "Elif works as a pharmacist at a hospital in Izmir."});
  for (const auto& [q, want] : std::map<std::string, std::string>{
           {"Who raised Bongani?", "Bongani's grandmother raised him in Durban."},
           {"What do I think of cilantro?", "I can't stand cilantro; it tastes like soap to me."},
           {"Where does Elif work?", "Elif works as a pharmacist at a hospital in Izmir."}}) {
    auto first = First(*e, "ann", q);
    ASSERT_TRUE(first) << q;
    EXPECT_EQ(first->memory, want) << q;
  }
}

// A question about the user alone prefers what is said of the user to what
// is said of someone else in the same words.
TEST_F(MeaningTest, AQuestionAboutTheUserPrefersWhatIsSaidOfTheUser) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ann", "I live in a small flat in Leeds");
  Add(*e, "ann", "My sister lives in Lisbon");
  Add(*e, "ann", "Priya is vegetarian");
  auto mine = First(*e, "ann", "Where do I live?");
  ASSERT_TRUE(mine);
  EXPECT_EQ(mine->memory, "I live in a small flat in Leeds");
  auto hers = First(*e, "ann", "Where does my sister live?");
  ASSERT_TRUE(hers);
  EXPECT_EQ(hers->memory, "My sister lives in Lisbon");
  // "The user" of an agent's question is the user too (the engine reads it
  // as a pronoun for its meaning, not for whom it asks about).
  auto shares = LexicalShares(*e, "ann", "Where does the user live?");
  ASSERT_TRUE(shares.count("I live in a small flat in Leeds") &&
              shares.count("My sister lives in Lisbon"));
  EXPECT_LT(shares["My sister lives in Lisbon"], shares["I live in a small flat in Leeds"]);
}

// The mirror: a question about someone else by a pronoun alone prefers what
// is said of someone else to the user's own words about themselves.
TEST_F(MeaningTest, AQuestionAboutSomeoneElsePrefersWhatIsSaidOfThem) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  const std::string mine = "My standup meeting is at 9:30 every weekday";
  const std::string theirs = "Nadia's team meeting is at 10 every Monday";
  const std::string users = "The user's team meeting is at 11 every Friday";
  Add(*e, "ann", mine);
  Add(*e, "ann", theirs);
  Add(*e, "ann", users);
  auto plain = LexicalShares(*e, "ann", "When is the team meeting?");
  auto hers = LexicalShares(*e, "ann", "When is her team meeting?");
  ASSERT_TRUE(plain.count(mine) && hers.count(mine) && hers.count(theirs) && hers.count(users));
  // The user's own words about themselves match less; what is said of
  // someone else, or of "the user" (whom a question may call "her"), as much.
  EXPECT_LT(hers[mine], plain[mine]);
  EXPECT_DOUBLE_EQ(hers[theirs], plain[theirs]);
  EXPECT_DOUBLE_EQ(hers[users], plain[users]);
  EXPECT_NE(First(*e, "ann", "When is her team meeting?")->memory, mine);
}

// A question asking for an occupation is answered by a memory saying one of
// someone, not by one near it by another meaning of its words ("draw" is
// also "inhale").
TEST_F(MeaningTest, AQuestionForAnOccupationIsAnsweredByOne) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  const std::string job = "Yuki is a freelance illustrator for children's books";
  const std::string breath = "Mateo has asthma and keeps an inhaler in his backpack";
  Add(*e, "ann", job);
  Add(*e, "ann", breath);
  Add(*e, "ann", "Elif only drinks green tea after lunch");
  auto semantic = [&](const std::string& query) {
    return Shares(*e, "ann", query, &MemoryScoreDetails::semantic);
  };
  // Both mean "draw" (the idiom's "for a living" is no meaning of its own);
  // only the first asks for an occupation, which the inhaler is not.
  auto living = semantic("What does she draw for a living?");
  auto plain = semantic("What does she draw?");
  ASSERT_TRUE(living.count(breath) && plain.count(breath));
  EXPECT_GT(plain[breath], 0.0);
  EXPECT_LT(living[breath], plain[breath]);
}

// "The user" of a question is the person the memories are of: as a word it
// matched "use" by meaning, and a memory using something passed the one that
// answers ("Is the user relocating?" found Neovim first).
TEST_F(MeaningTest, TheUserOfAQuestionIsThePersonNotAWord) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "kim", "I use Neovim for all my coding");
  Add(*e, "kim", "I'm moving to Berlin in September");
  Add(*e, "kim", "My sister is a nurse");
  Add(*e, "kim", "I track my budget in a spreadsheet");
  auto moving = First(*e, "kim", "Is the user relocating?");
  ASSERT_TRUE(moving.has_value());
  EXPECT_EQ(moving->memory, "I'm moving to Berlin in September");
  auto sister = First(*e, "kim", "What does the user's sister do?");
  ASSERT_TRUE(sister.has_value());
  EXPECT_EQ(sister->memory, "My sister is a nurse");
}

// The built-in inference writes a first-person fact as "User ...": the
// memory's meaning holds no word "user" (a user is a person, near "employer"
// or "boss"), so a question about work does not find every such memory by
// meaning alike ("employer" gave "User likes jazz." a semantic score of 1).
TEST_F(MeaningTest, AMemoryWrittenUserIsAboutThePersonNotTheWord) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  for (const char* said : {"I work at Google", "I like jazz", "My dog is called Rex"}) {
    MemoryAddOptions o;  // inference on: the built-in engine rewrites them
    auto r = e->AddMemoryText(User("lea"), said, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    clock_.Advance(1000);
  }
  MemorySearchOptions so;
  so.explain = true;
  auto r = e->SearchMemories(User("lea"), "employer", so);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->empty());
  EXPECT_EQ(r->front().memory, "User works at Google.");
  for (const auto& m : *r) {
    ASSERT_TRUE(m.score_details);
    if (m.memory != "User works at Google.") {
      EXPECT_LT(m.score_details->semantic, 0.5) << m.memory;
      EXPECT_LT(m.score, r->front().score) << m.memory;
    }
  }
}

// A memory whose other words pull its word-vector mean away from the query
// ("I love sushi": "love" is far from "food") is still a candidate: its words'
// WordNet neighbourhoods hold the query's word. Both for the rows of a loaded
// snapshot and for those added after it.
TEST_F(MeaningTest, AMemoryIsFoundByTheNeighbourhoodOfOneOfItsWords) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "kai", "I love sushi");
  Add(*e, "kai", "I play chess on Sundays");
  Add(*e, "kai", "My manager is strict");
  auto food = First(*e, "kai", "food");
  ASSERT_TRUE(food.has_value());
  EXPECT_EQ(food->memory, "I love sushi");
  Add(*e, "kai", "Honestly the lasagna here is great");  // after the snapshot was loaded
  MemorySearchOptions so;
  auto r = e->SearchMemories(User("kai"), "food", so);
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->size(), 2u);
  const std::set<std::string> first_two = {r->at(0).memory, r->at(1).memory};
  EXPECT_EQ(first_two, (std::set<std::string>{"I love sushi", "Honestly the lasagna here is great"}))
      << r->at(0).memory << " | " << r->at(1).memory;
}

// Names of products and services WordNet lacks (tools/wordvec/names.tsv)
// carry their kind and gloss: a question for a kind of thing finds the
// memory naming one. (A name that is an English word first, "obsidian" the
// volcanic glass, keeps that meaning first.)
TEST_F(MeaningTest, ANamedProductIsFoundByWhatItIs) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ivo", "Ivo keeps every recipe he tries in Obsidian");
  Add(*e, "ivo", "Ivo bought a second-hand Tesla in March");
  Add(*e, "ivo", "Ivo's team stores its orders in PostgreSQL");
  Add(*e, "ivo", "Ivo listens to jazz on Spotify while cooking");
  Add(*e, "ivo", "Ivo's sister teaches chemistry in Porto");
  Add(*e, "ivo", "Ivo runs five kilometres every Saturday");
  Add(*e, "ivo", "Ivo practises Spanish on Duolingo every night");
  const std::pair<const char*, const char*> cases[] = {
      {"What car does he own?", "Ivo bought a second-hand Tesla in March"},
      {"Which database does the team use?", "Ivo's team stores its orders in PostgreSQL"},
      {"Which music streaming service does he use?", "Ivo listens to jazz on Spotify while cooking"},
      {"Which app does he use for language lessons?", "Ivo practises Spanish on Duolingo every night"},
  };
  for (const auto& [q, want] : cases) {
    auto r = First(*e, "ivo", q);
    ASSERT_TRUE(r.has_value()) << q;
    EXPECT_EQ(r->memory, want) << q;
  }
  // A name of two kinds is either: Spotify is an app and a company.
  Add(*e, "kofi", "Kofi builds the playlist features at Spotify");
  Add(*e, "kofi", "Kofi drinks green tea every afternoon");
  Add(*e, "kofi", "Kofi's brother repairs bicycles in Accra");
  EXPECT_EQ(First(*e, "kofi", "Which company pays his salary?").value_or(MemoryItem{}).memory,
            "Kofi builds the playlist features at Spotify");
}

// Everyday kinds WordNet does not link (tools/wordvec/kinds.tsv): a dog is a
// pet, a manager a boss, gardening a hobby; the question asked with the
// general word finds the memory saying the specific one, and the thing a
// name means is not read into the name ("a dog named Rex": no king).
TEST_F(MeaningTest, AnEverydayKindFindsWhatItIsAKindOf) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ana", "Ana has a dog named Rex");
  Add(*e, "ana", "Ana and her husband bought a new espresso machine");
  Add(*e, "ana", "Ana's sister is visiting next week");
  Add(*e, "ana", "Ana works as an architect at a small firm");
  Add(*e, "ana", "Ana spends her Sundays gardening");
  Add(*e, "ana", "Ana's manager approved her leave");
  Add(*e, "ana", "Ana lives in Lisbon");
  Add(*e, "ana", "Ana is repainting the living room");
  const std::pair<const char*, const char*> cases[] = {
      {"What pets does Ana have?", "Ana has a dog named Rex"},
      {"pets", "Ana has a dog named Rex"},
      {"What is Ana's occupation?", "Ana works as an architect at a small firm"},
      {"What hobby does she have?", "Ana spends her Sundays gardening"},
      {"Which boss signed off on her time off?", "Ana's manager approved her leave"},
  };
  for (const auto& [q, want] : cases) {
    EXPECT_EQ(First(*e, "ana", q).value_or(MemoryItem{}).memory, want) << q;
  }
  // A kind may go both ways: a person's boss is their manager too.
  Add(*e, "ben", "My boss Karen wants the report by Friday");
  Add(*e, "ben", "My wife Sarah works as a nurse");
  Add(*e, "ben", "I'm allergic to peanuts");
  EXPECT_EQ(First(*e, "ben", "Who is my manager?").value_or(MemoryItem{}).memory,
            "My boss Karen wants the report by Friday");
}

// "What foods should I avoid?" asks for any food: an allergy to a nut is
// one (WordNet's "peanuts" is first a trivial amount of money).
TEST_F(MeaningTest, AQuestionForFoodFindsTheFoodsAMemoryNames) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "ben", "I'm allergic to peanuts");
  Add(*e, "ben", "I live in a small flat in Leeds");
  Add(*e, "ben", "My partner and I want a puppy");
  Add(*e, "ben", "We repainted the living room last weekend");
  for (const char* q : {"What foods should I avoid?", "Which nuts can I not have?"}) {
    EXPECT_EQ(First(*e, "ben", q).value_or(MemoryItem{}).memory, "I'm allergic to peanuts") << q;
  }
}

TEST_F(MeaningTest, MemoriesAddedLaterAreFoundByMeaning) {
  ASSERT_TRUE(HaveWords()) << kNoWords;
  auto e = Open();
  Add(*e, "bo", "The quarterly report is due in May");
  // The first search loads the scope's snapshot; the next add extends it.
  ASSERT_TRUE(e->SearchMemories(User("bo"), "report", {}).ok());
  Add(*e, "bo", "Bo is allergic to peanuts");
  auto r = e->SearchMemories(User("bo"), "which nut must he avoid?", {});
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->empty());
  EXPECT_EQ(r->front().memory, "Bo is allergic to peanuts");
}

TEST_F(MeaningTest, BuiltinInferenceKeepsThirdPersonStatementsAsSaid) {
  auto e = Open();
  auto r = e->AddMemoryText(User("carol"), "Bob's birthday is on 4 July", {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->results.size(), 1u);
  EXPECT_EQ(r->results[0].event, "ADD");
  EXPECT_EQ(r->results[0].memory, "Bob's birthday is on 4 July");
  EXPECT_TRUE(r->degraded);
  EXPECT_NE(r->note.find("kept as said"), std::string::npos) << r->note;
  auto m = e->GetMemory(User("carol"), r->results[0].id);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->degraded);

  // Instructions and schedules too; first-person statements are still rewritten.
  auto mixed = e->AddMemoryText(User("carol"), "Remind me to call the plumber on Monday. I love green tea.", {});
  ASSERT_TRUE(mixed.ok());
  ASSERT_EQ(mixed->results.size(), 2u);
  EXPECT_EQ(mixed->results[0].memory, "Remind me to call the plumber on Monday.");
  EXPECT_NE(mixed->results[1].memory.find("green tea"), std::string::npos);
}

TEST_F(MeaningTest, BuiltinInferenceSaysWhyNothingWasStored) {
  auto e = Open();
  auto q = e->AddMemoryText(User("dan"), "What is the weather like in Oslo?", {});
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->results.empty());
  EXPECT_NE(q->note.find("nothing stored"), std::string::npos) << q->note;
  EXPECT_NE(q->note.find("questions"), std::string::npos) << q->note;
  auto hi = e->AddMemoryText(User("dan"), "Thanks!", {});
  ASSERT_TRUE(hi.ok());
  EXPECT_TRUE(hi->results.empty());
  EXPECT_NE(hi->note.find("nothing stored"), std::string::npos) << hi->note;
  auto list = e->ListMemories(User("dan"), {});
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->items.empty());
  // A first-person fact carries no note.
  auto fact = e->AddMemoryText(User("dan"), "I moved to Lisbon in May.", {});
  ASSERT_TRUE(fact.ok());
  ASSERT_EQ(fact->results.size(), 1u);
  EXPECT_TRUE(fact->note.empty()) << fact->note;
}

}  // namespace
}  // namespace engram
