// `engram eval paraphrase`: the project's paraphrase set (bench/data/
// paraphrase.jsonl) is well formed (every question and keyword query shares
// no content word with its memory, every direct question at least one: the
// runner refuses the file otherwise),
// and on a slice the built-in engine finds the memory by meaning well above
// what words alone find (nothing: the questions share no word with their
// memories).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "testing/temp_dir.hpp"

namespace {

struct Outcome {
  int exit_code = -1;
  std::string out;
};

Outcome Engram(const std::string& args, const std::string& env = "") {
  Outcome r;
  std::string cmd = env + " '" + std::string(ENGRAM_BINARY) + "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

const std::string kSet = ENGRAM_SOURCE_DIR "/bench/data/paraphrase.jsonl";
// Written before any tuning and never tuned on (docs/PERFORMANCE.md); the
// second one later, before the step it was first run on; the third after
// every step, to see what a set no step has seen gives.
const std::string kHeldOut = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout.jsonl";
const std::string kHeldOut2 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-2.jsonl";
const std::string kHeldOut3 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-3.jsonl";
const std::string kHeldOut4 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-4.jsonl";
const std::string kHeldOut5 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-5.jsonl";
const std::string kHeldOut6 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-6.jsonl";
const std::string kHeldOut7 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-7.jsonl";
const std::string kHeldOut8 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-8.jsonl";
const std::string kHeldOut9 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-9.jsonl";
const std::string kHeldOut10 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-10.jsonl";
// Memories as memory services store them: subject-less fragments ("Prefers
// rooibos tea without milk", "Employed by Maersk as a shipping coordinator").
const std::string kHeldOut11 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-11.jsonl";
// Topics the others rarely touch (pets, repairs, banking, trades, elder care, visas).
const std::string kHeldOut12 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-12.jsonl";
const std::string kHeldOut13 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-13.jsonl";
const std::string kHeldOut14 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-14.jsonl";
const std::string kHeldOut15 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-15.jsonl";
const std::string kHeldOut16 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-16.jsonl";
const std::string kHeldOut17 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-17.jsonl";
const std::string kHeldOut18 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-18.jsonl";
const std::string kHeldOut19 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-19.jsonl";
const std::string kHeldOut20 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-20.jsonl";
const std::string kHeldOut21 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-21.jsonl";
const std::string kHeldOut22 = ENGRAM_SOURCE_DIR "/bench/data/paraphrase-heldout-22.jsonl";

nlohmann::json RunEval(const std::string& args, const std::string& env = "", const std::string& set = kSet) {
  auto r = Engram("eval paraphrase '" + set + "' --json " + args, env);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << r.out;
  return j;
}

// Memories and questions of a set (of its first `max` memories).
std::pair<std::size_t, std::size_t> CountItems(const std::string& set, std::size_t max = SIZE_MAX) {
  std::ifstream in(set);
  std::size_t memories = 0, questions = 0;
  for (std::string line; memories < max && std::getline(in, line);) {
    if (line.empty()) continue;
    auto item = nlohmann::json::parse(line);
    ++memories;
    questions += item["questions"].size();
  }
  return {memories, questions};
}

TEST(ParaphraseEval, TheSetIsWellFormedAndLargeEnough) {
  auto j = RunEval("");  // the runner checks every question of the file against its memory
  const auto [memories, questions] = CountItems(kSet);
  EXPECT_GE(memories, 100u);
  EXPECT_GE(questions, memories);
  ASSERT_TRUE(j.contains("config"));
  EXPECT_EQ(j["config"]["benchmark"], "paraphrase");
  EXPECT_EQ(j["overall"]["memories"], memories);
}

TEST(ParaphraseEval, TheHeldOutSetsAreWellFormedAndRunFromTheirFiles) {
  for (const std::string& set :
       {kHeldOut,   kHeldOut2,  kHeldOut3,  kHeldOut4,  kHeldOut5,  kHeldOut6,
        kHeldOut7,  kHeldOut8,  kHeldOut9,  kHeldOut10, kHeldOut11, kHeldOut12,
        kHeldOut13, kHeldOut14, kHeldOut15, kHeldOut16, kHeldOut17, kHeldOut18,
        kHeldOut19, kHeldOut20, kHeldOut21, kHeldOut22}) {
    auto j = RunEval("", "", set);
    const auto [memories, questions] = CountItems(set);
    EXPECT_GE(memories, 50u) << set;
    EXPECT_GE(questions, memories) << set;
    ASSERT_TRUE(j.contains("overall")) << set;
    EXPECT_EQ(j["overall"]["memories"], memories) << set;
    EXPECT_EQ(j["overall"]["questions"], questions) << set;
    EXPECT_EQ(j["config"]["file"].get<std::string>(), set);
    ASSERT_FALSE(j["config"]["word_vectors"].is_null()) << "no built-in word vectors: the build makes them from WordNet (wordnet-base, installed by scripts/bootstrap)";
    // Measured on the whole sets: hit@3 0.696, 0.857, 0.750, 0.696, 0.750,
    // 0.625, 0.696, 0.661, 0.643, 0.768, 0.589, 0.750, 0.839 and 0.607 when
    // each was added, the seventeenth 0.714, the eighteenth 0.679, the
    // nineteenth 0.732, the twentieth 0.696, the twenty-first 0.679 and the
    // twenty-second 0.696 (all six blind; docs/PERFORMANCE.md); a
    // floor under them, and far above words alone (0.029 to 0.036 on the first three).
    EXPECT_GE(j["overall"]["hit@3"].get<double>(), 0.40) << set << "\n" << j.dump(1);
  }
}

TEST(ParaphraseEval, BuiltinEngineFindsMemoriesByMeaningOnASlice) {
  auto j = RunEval("--max-memories 40");
  ASSERT_TRUE(j.contains("overall"));
  const auto& o = j["overall"];
  EXPECT_EQ(o["memories"], 40);
  ASSERT_TRUE(o["hit@3"].is_number());
  ASSERT_FALSE(j["config"]["word_vectors"].is_null()) << "no built-in word vectors: the build makes them from WordNet (wordnet-base, installed by scripts/bootstrap)";
  // Words alone find almost none of these (see the next test: hit@3 0.119 on
  // this slice); with the word vectors and their expansions hit@3 is 0.833,
  // hit@1 0.643 (a floor with a margin: ties may fall either way, the vectors
  // may be retuned).
  EXPECT_GE(o["hit@3"].get<double>(), 0.52) << j.dump(1);
  EXPECT_GE(o["hit@1"].get<double>(), 0.35) << j.dump(1);
  // What an agent's retrieval gives: the memory is among the context's facts
  // for 0.738 of these questions (0 with words alone).
  EXPECT_GE(o["context_hit"].get<double>(), 0.45) << j.dump(1);
  EXPECT_LE(o["context_facts"].get<double>(), 6.0) << j.dump(1);
  for (const char* k : {"hit@1", "hit@3", "mrr@10", "context_hit"}) EXPECT_LE(o[k].get<double>(), 1.0);
  EXPECT_TRUE(j["by_category"].is_object());
  EXPECT_TRUE(j["misses"].is_array());
}

// The same memories asked for in the words of an agent's search tool
// ("occupation", "favourite sport"): every memory of the main set and of
// the first and third held-out sets has them.
TEST(ParaphraseEval, KeywordQueriesFindMemoriesByMeaningOnASlice) {
  for (const std::string& set : {kSet, kHeldOut, kHeldOut3}) {
    auto j = RunEval("--keywords", "", set);
    ASSERT_TRUE(j.contains("overall")) << set;
    EXPECT_EQ(j["config"]["queries"], "keywords");
    EXPECT_EQ(j["overall"]["questions"], j["overall"]["memories"]) << set;  // one keyword query each
  }
  auto j = RunEval("--keywords --max-memories 40");
  const auto& o = j["overall"];
  EXPECT_EQ(o["memories"], 40);
  // Measured: hit@3 0.875, hit@1 0.600 on this slice (0.225 and 0.125 with
  // words alone, below); a floor with a margin.
  EXPECT_GE(o["hit@3"].get<double>(), 0.55) << j.dump(1);
  EXPECT_GE(o["hit@1"].get<double>(), 0.35) << j.dump(1);
  auto words = RunEval("--keywords --max-memories 40", "ENGRAM_WORD_VECTORS=off");
  EXPECT_LE(words["overall"]["hit@3"].get<double>(), 0.35) << words.dump(1);
}

// The same memories asked for the way most questions are asked, sharing a
// word with them ("Where do I work?" for "I work as a backend engineer at a
// fintech startup"): meaning must not cost what words find. Every memory of
// every set has one (each written before it was first run; those of the
// first three held-out sets and the tenth to the eighteenth by someone who
// did not run them).
TEST(ParaphraseEval, DirectQuestionsFindTheirMemoriesFirst) {
  for (const std::string& set :
       {kSet,       kHeldOut,   kHeldOut2,  kHeldOut3,  kHeldOut4,  kHeldOut5,
        kHeldOut6,  kHeldOut7,  kHeldOut8,  kHeldOut9,  kHeldOut10, kHeldOut11,
        kHeldOut12, kHeldOut13, kHeldOut14, kHeldOut15, kHeldOut16, kHeldOut17,
        kHeldOut18, kHeldOut19, kHeldOut20, kHeldOut21, kHeldOut22}) {
    auto j = RunEval("--direct", "", set);
    ASSERT_TRUE(j.contains("overall")) << set;
    EXPECT_EQ(j["config"]["queries"], "direct");
    const auto& o = j["overall"];
    EXPECT_EQ(o["questions"], o["memories"]) << set;  // one direct question each
    // Measured (hit@1 / hit@3; docs/PERFORMANCE.md): 1.0 / 1.0 on seven sets
    // (the second, third, fifth and seventh to tenth), the main 0.991 / 1.0,
    // 0.982 / 1.0 on three (the fourth, sixth and twelfth), the first held-out 0.971 / 1.0,
    // the fifteenth 0.964 / 1.0, the eighteenth 0.964 / 0.982 (blind, the
    // same), the nineteenth 0.964 / 1.0 (blind), the twentieth 0.964 / 0.982 (blind), the
    // twenty-first 0.982 / 1.0 (blind), the twenty-second 0.929 / 0.982 (0.893 / 0.964
    // blind: "Where am I going for our anniversary?" found its memory 14th until
    // the "going" of a question for a place framed it, and "Who is my manager?"
    // tied with "I manage the family budget" until "who" asked for a person), the eleventh 0.964 /
    // 0.982, the sixteenth 0.946 / 1.0, the seventeenth 0.946 / 0.982, the thirteenth 0.911 / 0.982
    // (0.964 before the word vectors' third order: memories saying a number or a date pass by
    // meaning those holding a word of the question by one place). The main set's was 0.974 / 0.991
    // before a memory holding every word of the question the vectors know counted as near in
    // meaning as any ("Where do I work?" found "Our team tracks tasks in Jira" first). A floor with
    // a margin of a few questions.
    EXPECT_GE(o["hit@1"].get<double>(), 0.90) << set << "\n" << j.dump(1);
    // (The fourteenth set's memories are notes of two or three sentences:
    // 0.929 / 0.946, 0.946 / 0.946 blind; a note near a question in meaning by its whole
    // topic can outrank the one holding a word of it, docs/PERFORMANCE.md.)
    EXPECT_GE(o["hit@3"].get<double>(), set == kHeldOut14 ? 0.92 : 0.96) << set << "\n"
                                                                         << j.dump(1);
  }
  // Not with --keywords: one list is asked.
  auto r = Engram("eval paraphrase --direct --keywords '" + kSet + "'");
  EXPECT_NE(r.exit_code, 0) << r.out;
}

// The memories added as `memory add` adds them by default, through the
// built-in inference: first-person statements are stored as "User ...", and
// the questions still find them by meaning.
TEST(ParaphraseEval, MemoriesAddedThroughInferenceAreFoundByMeaning) {
  auto j = RunEval("--infer --max-memories 40");
  ASSERT_TRUE(j.contains("overall"));
  EXPECT_EQ(j["config"]["infer"], true);
  EXPECT_EQ(j["overall"]["memories"], 40);
  // Measured: hit@3 0.810, hit@1 0.643 on this slice; a floor with a margin.
  EXPECT_GE(j["overall"]["hit@3"].get<double>(), 0.52) << j.dump(1);
  EXPECT_GE(j["overall"]["context_hit"].get<double>(), 0.45) << j.dump(1);
  bool rewritten = false;  // a miss shows the memory as stored
  for (const auto& m : j["misses"]) rewritten = rewritten || m["memory"].get<std::string>().rfind("User ", 0) == 0;
  auto plain = RunEval("--max-memories 40");
  EXPECT_EQ(plain["config"]["infer"], false);
  for (const auto& m : plain["misses"]) EXPECT_NE(m["memory"].get<std::string>().rfind("User ", 0), 0u) << m.dump();
  EXPECT_TRUE(rewritten || j["misses"].empty()) << j.dump(1);
}

// The same memories said in a dialogue (each the user's side of one
// exchange) and asked for through retrieve: the exchange is ranked among the
// dialogue's messages, and the report says which mode it measured.
TEST(ParaphraseEval, TheDialogueModeRanksTheExchangeThatSaidIt) {
  auto j = RunEval("--dialogue --max-memories 40");
  ASSERT_TRUE(j.contains("overall"));
  EXPECT_EQ(j["config"]["mode"], "dialogue");
  const auto& o = j["overall"];
  EXPECT_EQ(o["memories"], 40);
  EXPECT_EQ(o["questions"], CountItems(kSet, 40).second);
  for (const char* k : {"hit@1", "hit@3", "mrr@10", "context_hit"}) {
    ASSERT_TRUE(o[k].is_number()) << k;
    EXPECT_LE(o[k].get<double>(), 1.0) << k;
  }
  EXPECT_LE(o["hit@1"].get<double>(), o["hit@3"].get<double>());
  // What the messages mean ranks where the question's words say little
  // (RankingOptions::meaning): on this slice hit@3 0.738, hit@1 0.476; with
  // the gate of a question naming a speaker for these, which name none
  // (meaning_gate_unnamed 0.3), 0.667 / 0.333; with the words and WordNet's
  // expansions alone (meaning 0, or no word vectors) 0.452 / 0.262.
  ASSERT_FALSE(j["config"]["word_vectors"].is_null());
  EXPECT_TRUE(j["config"]["changed"].empty()) << j["config"].dump();
  EXPECT_GE(o["hit@3"].get<double>(), 0.65) << j.dump(1);
  auto gated = RunEval("--dialogue --max-memories 40 --set meaning_gate_unnamed=0.3");
  EXPECT_GT(o["hit@3"].get<double>(), gated["overall"]["hit@3"].get<double>()) << gated.dump(1);
  auto words = RunEval("--dialogue --max-memories 40 --set meaning=0");
  EXPECT_EQ(words["config"]["changed"], nlohmann::json({{"ranking.meaning", 0.0}}));
  EXPECT_GT(o["hit@3"].get<double>(), words["overall"]["hit@3"].get<double>()) << words.dump(1);
  auto none = RunEval("--dialogue --max-memories 40", "ENGRAM_WORD_VECTORS=off");
  EXPECT_TRUE(none["config"]["word_vectors"].is_null());
  EXPECT_GT(o["hit@3"].get<double>(), none["overall"]["hit@3"].get<double>()) << none.dump(1);
  // A ranking constant out of its range is refused, naming it.
  auto bad = Engram("eval paraphrase --dialogue --set meaning_gate=2 '" + kSet + "'");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("meaning_gate"), std::string::npos) << bad.out;
  EXPECT_TRUE(j["misses"].is_array());
  for (const auto& m : j["misses"]) {
    ASSERT_TRUE(m.contains("rank")) << m.dump();
    if (!m["rank"].is_null()) {
      EXPECT_GT(m["rank"].get<int>(), 3) << m.dump();
    }
  }
  // Questions sharing a word with their memory find its exchange first (the
  // whole main set: hit@1 0.991, hit@3 1.0; docs/PERFORMANCE.md).
  auto direct = RunEval("--dialogue --direct");
  EXPECT_GE(direct["overall"]["hit@1"].get<double>(), 0.95) << direct.dump(1);
  EXPECT_GE(direct["overall"]["context_hit"].get<double>(), 0.95) << direct.dump(1);
  EXPECT_EQ(direct["config"]["queries"], "direct");
  // Not with --infer: the dialogue is admitted as said.
  auto r = Engram("eval paraphrase --dialogue --infer '" + kSet + "'");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_EQ(RunEval("")["config"]["mode"], "facts");
}

TEST(ParaphraseEval, WithoutWordVectorsWordsAloneFindLittle) {
  auto j = RunEval("--max-memories 40", "ENGRAM_WORD_VECTORS=off");
  ASSERT_TRUE(j.contains("overall"));
  EXPECT_TRUE(j["config"]["word_vectors"].is_null());
  // The build's WordNet image, which the expansions read.
  ASSERT_TRUE(j["config"]["wordnet"].is_string()) << j["config"].dump();
  EXPECT_NE(j["config"]["wordnet"].get<std::string>().find("engram-wordnet.bin"),
            std::string::npos);
  EXPECT_LE(j["overall"]["hit@3"].get<double>(), 0.3) << j.dump(1);
  EXPECT_LE(j["overall"]["context_hit"].get<double>(), 0.1) << j.dump(1);
}

// WordNet off, or its variable empty (as an empty ENGRAM_WORD_VECTORS is no
// vectors): no WordNet at all, never one parsed from the raw files on a
// request (docs/PERFORMANCE.md, part 4 of issue 16: no load on the request
// path).
TEST(ParaphraseEval, AnEmptyWordNetVariableMeansNoWordNet) {
  for (const char* env : {"ENGRAM_WORDNET=off", "ENGRAM_WORDNET="}) {
    auto j = RunEval("--max-memories 10", env);
    ASSERT_TRUE(j.contains("config")) << env;
    EXPECT_TRUE(j["config"]["wordnet"].is_null()) << env << " " << j["config"].dump();
  }
}

TEST(ParaphraseEval, AQuestionSharingAWordWithItsMemoryIsRefused) {
  engram::testing::TempDir dir;
  {
    std::ofstream out(dir.File("bad.jsonl"));
    out << R"({"id": "a", "category": "food", "memory": "Priya loves ramen", "questions": ["Which ramen shop?"]})" << "\n";
  }
  auto r = Engram("eval paraphrase '" + dir.File("bad.jsonl") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("shares the content word \"ramen\""), std::string::npos) << r.out;
  // Keyword queries are checked too, whichever list is asked; asking for
  // them needs them on every item.
  {
    std::ofstream out(dir.File("kw.jsonl"));
    out << R"({"id": "a", "memory": "Priya loves ramen", "questions": ["What does she eat?"], "keywords": ["ramen"]})"
        << "\n";
  }
  r = Engram("eval paraphrase '" + dir.File("kw.jsonl") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("keyword query \"ramen\" shares the content word"), std::string::npos) << r.out;
  {
    std::ofstream out(dir.File("nokw.jsonl"));
    out << R"({"id": "a", "memory": "Priya loves ramen", "questions": ["What does she eat?"]})" << "\n";
  }
  EXPECT_EQ(Engram("eval paraphrase '" + dir.File("nokw.jsonl") + "'").exit_code, 0);
  r = Engram("eval paraphrase --keywords '" + dir.File("nokw.jsonl") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("nokw.jsonl:1: no \"keywords\""), std::string::npos) << r.out;
  EXPECT_EQ(Engram("eval paraphrase '" + dir.File("missing.jsonl") + "'").exit_code, 1);
  // A direct question must share a word with its memory; it is checked
  // whichever list is asked, and asking for them needs them on every item.
  {
    std::ofstream out(dir.File("direct.jsonl"));
    out << R"({"id": "a", "memory": "Priya loves ramen", "questions": ["What does she eat?"], "direct": ["What does she like?"]})"
        << "\n";
  }
  r = Engram("eval paraphrase '" + dir.File("direct.jsonl") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("direct question \"What does she like?\" shares no content word"),
            std::string::npos)
      << r.out;
  r = Engram("eval paraphrase --direct '" + dir.File("nokw.jsonl") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("nokw.jsonl:1: no \"direct\""), std::string::npos) << r.out;
}

}  // namespace
