// Dialogue import formats: jsonl/export lines, MemoryOS, LoCoMo (+ questions).
#include "core/dialogue_formats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/time.hpp"

namespace engram {
namespace {

int CountRefs(const std::string& source_ref) {
  return source_ref.empty() ? 0 : 1 + static_cast<int>(std::count(source_ref.begin(), source_ref.end(), ','));
}

int CountRefs(const ParsedDialogue& d) {
  int n = 0;
  for (const auto& t : d.turns) n += CountRefs(t.source_ref);
  return n;
}

std::string Error(std::string_view content, DialogueFormat f) {
  auto r = ParseDialogueText(content, f);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  return r.status().message();
}

TEST(DialogueFormatNameTest, KnownAndUnknown) {
  EXPECT_EQ(*ParseDialogueFormatName("auto"), DialogueFormat::kAuto);
  EXPECT_EQ(*ParseDialogueFormatName("jsonl"), DialogueFormat::kJsonl);
  EXPECT_EQ(*ParseDialogueFormatName("memoryos"), DialogueFormat::kMemoryOs);
  EXPECT_EQ(*ParseDialogueFormatName("locomo"), DialogueFormat::kLocomo);
  auto bad = ParseDialogueFormatName("csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("\"csv\""), std::string::npos);
}

constexpr const char* kJsonl =
    R"({"user":"hi","assistant":"hello","time":"2025-06-01 10:00:00","metadata":{"topic":"greet"},"source_ref":"r1"})"
    "\n\n"
    R"({"user":"only user"})"
    "\r\n"
    R"({"assistant":"only assistant","time":1748772000000,"unknown":[1,2]})"
    "\n"
    R"({"type":"turn","user_text":"u","assistant_text":"a","event_time":"2025-06-01T10:00:00.250Z","metadata":{"k":1},"source_ref":"x","user_name":"Ann","assistant_name":"Bot"})"
    "\n"
    R"({"type":"page","id":3,"text":"derived record"})"
    "\n"
    R"({"type":"fact","text":"derived"})"
    "\n   \n";

TEST(JsonlTest, ParsesPlainAndExportLines) {
  for (DialogueFormat f : {DialogueFormat::kJsonl, DialogueFormat::kAuto}) {
    auto r = ParseDialogueText(kJsonl, f);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->size(), 1u);
    const ParsedDialogue& d = r->front();
    EXPECT_EQ(d.id, "");
    EXPECT_EQ(d.source_utterances, 4);
    ASSERT_EQ(d.turns.size(), 4u);
    EXPECT_EQ(d.turns[0].user_text, "hi");
    EXPECT_EQ(d.turns[0].assistant_text, "hello");
    EXPECT_EQ(d.turns[0].event_time, MakeTimeMs(2025, 6, 1, 10));
    EXPECT_EQ(d.turns[0].metadata, R"({"topic":"greet"})");
    EXPECT_EQ(d.turns[0].source_ref, "r1");
    EXPECT_EQ(d.turns[1].user_text, "only user");
    EXPECT_EQ(d.turns[1].assistant_text, "");
    EXPECT_FALSE(d.turns[1].event_time.has_value());
    EXPECT_EQ(d.turns[1].metadata, "");
    EXPECT_EQ(d.turns[2].user_text, "");
    EXPECT_EQ(d.turns[2].event_time, 1748772000000);
    EXPECT_EQ(d.turns[3].user_text, "u");
    EXPECT_EQ(d.turns[3].assistant_text, "a");
    EXPECT_EQ(d.turns[3].event_time, MakeTimeMs(2025, 6, 1, 10) + 250);
    EXPECT_EQ(d.turns[3].metadata, R"({"k":1})");
    EXPECT_EQ(d.turns[3].source_ref, "x");
    EXPECT_EQ(d.turns[3].user_name, "Ann");
    EXPECT_EQ(d.turns[3].assistant_name, "Bot");
  }
}

TEST(JsonlTest, EmptyInputGivesNoTurns) {
  auto r = ParseDialogueText("\n\n", DialogueFormat::kJsonl);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_TRUE(r->front().turns.empty());
}

TEST(JsonlTest, ErrorsNameLineAndField) {
  const std::string ok = "{\"user\":\"a\",\"assistant\":\"b\"}\n";
  EXPECT_EQ(Error(ok + "\n{\"user\":5,\"assistant\":\"b\"}\n", DialogueFormat::kJsonl),
            "line 3: field \"user\": expected a string");
  EXPECT_EQ(Error(ok + "{\"user\":\"\",\"assistant\":\"\"}", DialogueFormat::kJsonl),
            "line 2: fields \"user\" and \"assistant\": both empty");
  EXPECT_EQ(Error("{\"user\":\"a\",\"assistant\":[]}", DialogueFormat::kJsonl),
            "line 1: field \"assistant\": expected a string");
  EXPECT_EQ(Error(ok + "[1,2]", DialogueFormat::kJsonl), "line 2: expected a JSON object");
  EXPECT_EQ(Error(ok + "{\"type\":\"turn\",\"user_text\":1}", DialogueFormat::kJsonl),
            "line 2: field \"user_text\": expected a string");
  std::string msg = Error(ok + "{\"user\": \"broken", DialogueFormat::kJsonl);
  EXPECT_EQ(msg.rfind("line 2: invalid JSON", 0), 0u) << msg;
  msg = Error(ok + ok + "{\"user\":\"caf\xC3\"}", DialogueFormat::kJsonl);
  EXPECT_EQ(msg.rfind("line 3: invalid UTF-8", 0), 0u) << msg;
  msg = Error("{\"user\":\"a\",\"time\":\"yesterday\"}", DialogueFormat::kJsonl);
  EXPECT_EQ(msg.rfind("line 1: field \"time\": ", 0), 0u) << msg;
  EXPECT_NE(msg.find("\"yesterday\""), std::string::npos) << msg;
  EXPECT_EQ(Error("{\"user\":\"a\",\"time\":1.5}", DialogueFormat::kJsonl).rfind("line 1: field \"time\"", 0), 0u);
  EXPECT_EQ(Error("{\"user\":\"a\",\"metadata\":[1]}", DialogueFormat::kJsonl),
            "line 1: field \"metadata\": expected a JSON object");
}

constexpr const char* kMemoryOs = R"([
  {"user_input": "I love Kyoto.", "agent_response": "Noted!", "timestamp": "2025-06-01 10:00:00"},
  {"user_input": "And Hanoi?", "agent_response": "Also noted.", "timestamp": "2025-06-01 10:02:00"}
])";

TEST(MemoryOsTest, ParsesRecords) {
  for (DialogueFormat f : {DialogueFormat::kMemoryOs, DialogueFormat::kAuto}) {
    auto r = ParseDialogueText(kMemoryOs, f);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->size(), 1u);
    const ParsedDialogue& d = r->front();
    EXPECT_EQ(d.source_utterances, 2);
    ASSERT_EQ(d.turns.size(), 2u);
    EXPECT_EQ(d.turns[0].user_text, "I love Kyoto.");
    EXPECT_EQ(d.turns[0].assistant_text, "Noted!");
    EXPECT_EQ(d.turns[1].event_time, MakeTimeMs(2025, 6, 1, 10, 2));
  }
}

TEST(MemoryOsTest, ErrorsNameElementAndField) {
  EXPECT_EQ(Error(R"([{"user_input":"a","agent_response":"b","timestamp":"2025-06-01"},
                      {"user_input":"a","agent_response":7}])", DialogueFormat::kMemoryOs),
            "element 1: field \"agent_response\": expected a string");
  const std::string msg = Error(R"([{"user_input":"a","agent_response":"b","timestamp":"2025-02-30"}])",
                                DialogueFormat::kMemoryOs);
  EXPECT_EQ(msg.rfind("element 0: field \"timestamp\": ", 0), 0u) << msg;
  EXPECT_EQ(Error(R"({"user_input":"a"})", DialogueFormat::kMemoryOs), "memoryos: expected a JSON array");
  EXPECT_EQ(Error(R"([{"other":1}])", DialogueFormat::kAuto).rfind("cannot detect", 0), 0u);
  EXPECT_EQ(Error("[1, 2", DialogueFormat::kAuto).rfind("invalid JSON", 0), 0u);
}

TEST(AutoTest, EmptyArrayAndByteOrderMark) {
  auto empty = ParseDialogueText(" [ ] ", DialogueFormat::kAuto);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  auto bom = ParseDialogueText(std::string("\xEF\xBB\xBF") + kMemoryOs, DialogueFormat::kAuto);
  ASSERT_TRUE(bom.ok()) << bom.status().ToString();
  EXPECT_EQ(bom->front().turns.size(), 2u);
}

// Sessions deliberately out of lexical order; session_11 has only a date.
constexpr const char* kLocomo = R"([{
  "sample_id": "conv-x",
  "conversation": {
    "speaker_a": "Ann", "speaker_b": "Bob",
    "session_10_date_time": "9:00 am on 3 June, 2023",
    "session_10": [
      {"speaker": "Ann", "dia_id": "D10:1", "text": "Look!", "img_url": ["u"], "blip_caption": "a photo of a cat"},
      {"speaker": "Bob", "dia_id": "D10:2", "text": "Cute."}],
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
      {"speaker": "Ann", "dia_id": "D1:1", "text": "a1"},
      {"speaker": "Bob", "dia_id": "D1:2", "text": "b2"},
      {"speaker": "Ann", "dia_id": "D1:3", "text": "a3"},
      {"speaker": "Ann", "dia_id": "D1:4", "text": "a4"},
      {"speaker": "Bob", "dia_id": "D1:5", "text": "b5"},
      {"speaker": "Bob", "dia_id": "D1:6", "text": "b6"}],
    "session_2_date_time": "10:04 am on 19 May, 2023",
    "session_2": [
      {"speaker": "Bob", "dia_id": "D2:1", "text": "b1"},
      {"speaker": "Ann", "dia_id": "D2:2", "text": "a2"}],
    "session_11_date_time": "10:04 am on 19 July, 2023"
  },
  "qa": [
    {"question": "Q1?", "answer": "yes", "evidence": ["D1:1"], "category": 4},
    {"question": "Q2?", "answer": 2022, "evidence": ["D1:2", "D2:1"], "category": 2},
    {"question": "Q3?", "adversarial_answer": "no", "evidence": [], "category": 5}]
}, {
  "sample_id": "conv-y",
  "conversation": {"speaker_a": "C", "speaker_b": "D",
    "session_1_date_time": "8 May 2023", "session_1": [{"speaker": "D", "dia_id": "D1:1", "text": "hey"}]},
  "qa": []
}])";

TEST(LocomoTest, PairsUtterancesWithoutLosingAny) {
  for (DialogueFormat f : {DialogueFormat::kLocomo, DialogueFormat::kAuto}) {
    auto r = ParseDialogueText(kLocomo, f);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->size(), 2u);
    const ParsedDialogue& d = (*r)[0];
    EXPECT_EQ(d.id, "conv-x");
    EXPECT_EQ(d.user_name, "Ann");
    EXPECT_EQ(d.assistant_name, "Bob");
    EXPECT_EQ(d.source_utterances, 10);
    EXPECT_EQ(CountRefs(d), d.source_utterances);
    ASSERT_EQ(d.turns.size(), 7u);
    const TimeMs s1 = MakeTimeMs(2023, 5, 8, 13, 56);
    struct Want { const char* user; const char* asst; const char* ref; TimeMs time; const char* meta; };
    const Want want[] = {
        {"a1", "b2", "D1:1,D1:2", s1, R"({"session":1})"},
        {"a3", "", "D1:3", s1 + 1000, R"({"session":1})"},
        {"a4", "b5", "D1:4,D1:5", s1 + 2000, R"({"session":1})"},
        {"", "b6", "D1:6", s1 + 3000, R"({"session":1})"},
        {"", "b1", "D2:1", MakeTimeMs(2023, 5, 19, 10, 4), R"({"session":2})"},
        {"a2", "", "D2:2", MakeTimeMs(2023, 5, 19, 10, 4) + 1000, R"({"session":2})"},
        {"Look! [shares a photo: a photo of a cat]", "Cute.", "D10:1,D10:2",
         MakeTimeMs(2023, 6, 3, 9), R"({"session":10})"},
    };
    for (size_t i = 0; i < d.turns.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(d.turns[i].user_text, want[i].user);
      EXPECT_EQ(d.turns[i].assistant_text, want[i].asst);
      EXPECT_EQ(d.turns[i].source_ref, want[i].ref);
      EXPECT_EQ(d.turns[i].event_time, want[i].time);
      EXPECT_EQ(d.turns[i].metadata, want[i].meta);
      EXPECT_EQ(d.turns[i].user_name, "Ann");
      EXPECT_EQ(d.turns[i].assistant_name, "Bob");
    }
    const ParsedDialogue& y = (*r)[1];
    ASSERT_EQ(y.turns.size(), 1u);
    EXPECT_EQ(y.turns[0].assistant_text, "hey");
    EXPECT_EQ(y.turns[0].event_time, MakeTimeMs(2023, 5, 8));
  }
}

TEST(LocomoTest, ErrorsNameSampleAndUtterance) {
  const std::string msg = Error(R"([{"sample_id":"s","conversation":{"speaker_a":"A","speaker_b":"B",
      "session_1":[{"speaker":"A","dia_id":"D1:1","text":"x"},{"speaker":"Z","dia_id":"D1:2","text":"y"}]}}])",
                                DialogueFormat::kLocomo);
  EXPECT_EQ(msg, "sample 0 (\"s\"): session_1[1]: utterance D1:2: speaker \"Z\" is neither speaker_a nor speaker_b");
  EXPECT_EQ(Error(R"([{"sample_id":"s","conversation":{"speaker_a":"A","speaker_b":"B",
      "session_1":[{"speaker":"A","dia_id":"D1:1"}]}}])", DialogueFormat::kLocomo),
            "sample 0 (\"s\"): session_1[0]: field \"text\": expected a string");
  EXPECT_EQ(Error(R"([{"sample_id":"s","conversation":{"speaker_a":"A","speaker_b":"B",
      "session_1_date_time":"someday","session_1":[]}}])", DialogueFormat::kLocomo)
                .rfind("sample 0 (\"s\"): field \"session_1_date_time\": ", 0), 0u);
  EXPECT_EQ(Error(R"([{"sample_id":"s"}])", DialogueFormat::kLocomo),
            "sample 0 (\"s\"): field \"conversation\": expected a JSON object");
}

TEST(LocomoTest, Questions) {
  auto r = ParseLocomoQuestions(kLocomo);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  ASSERT_EQ((*r)[0].size(), 3u);
  EXPECT_TRUE((*r)[1].empty());
  const auto& q = (*r)[0];
  EXPECT_EQ(q[0].question, "Q1?");
  EXPECT_EQ(q[0].answer, "yes");
  EXPECT_EQ(q[0].evidence, std::vector<std::string>{"D1:1"});
  EXPECT_EQ(q[0].category, 4);
  EXPECT_EQ(q[1].answer, "2022");
  EXPECT_EQ(q[1].evidence, (std::vector<std::string>{"D1:2", "D2:1"}));
  EXPECT_EQ(q[2].answer, "");
  EXPECT_EQ(q[2].category, 5);
  auto bad = ParseLocomoQuestions(R"([{"qa":[{"question":"q","category":"x"}]}])");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "sample 0: qa[0]: field \"category\": expected an integer");
  // Found by fuzzing: a negative category was accepted; only LoCoMo's 1 to 5 are.
  for (const char* c : {"-7", "0", "6", "4294967297", "18446744073709551615", "-9223372036854775808"}) {
    auto out = ParseLocomoQuestions(std::string(R"([{"qa":[{"question":"q","category":)") + c + "}]}]");
    ASSERT_FALSE(out.ok()) << c;
    EXPECT_EQ(out.status().message(), "sample 0: qa[0]: field \"category\": expected 1 to 5") << c;
  }
  EXPECT_TRUE(ParseLocomoQuestions(R"([{"qa":[{"question":"q","answer":"a","category":5}]}])").ok());
}

TEST(DialogueFileTest, ReadsFileAndReportsMissing) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("engram_dialogue_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".json");
  { std::ofstream(path) << kMemoryOs; }
  auto r = ParseDialogueFile(path.string(), DialogueFormat::kAuto);
  std::filesystem::remove(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->front().turns.size(), 2u);
  auto missing = ParseDialogueFile(path.string(), DialogueFormat::kAuto);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(SharedDataTest, Locomo10) {
  const std::string path = ENGRAM_SOURCE_DIR "/../shared/data/locomo10.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "absent: " << path;
  auto r = ParseDialogueFile(path, DialogueFormat::kAuto);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 10u);
  int utterances = 0, refs = 0;
  for (const auto& d : *r) {
    utterances += d.source_utterances;
    refs += CountRefs(d);
    EXPECT_FALSE(d.id.empty());
    for (size_t i = 1; i < d.turns.size(); ++i) {
      ASSERT_TRUE(d.turns[i].event_time.has_value());
      EXPECT_LT(*d.turns[i - 1].event_time, *d.turns[i].event_time) << d.id << " turn " << i;
    }
  }
  EXPECT_EQ(utterances, 5882);
  EXPECT_EQ(refs, utterances);
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  auto qs = ParseLocomoQuestions(buf.str());
  ASSERT_TRUE(qs.ok()) << qs.status().ToString();
  ASSERT_EQ(qs->size(), 10u);
  size_t total = 0;
  for (const auto& v : *qs) total += v.size();
  EXPECT_EQ(total, 1986u);
}

TEST(SharedDataTest, MemoryOsSample) {
  const std::string path = ENGRAM_SOURCE_DIR "/../shared/data/memoryos_sample_conversations.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "absent: " << path;
  auto r = ParseDialogueFile(path, DialogueFormat::kAuto);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->front().turns.size(), 69u);
  for (const auto& t : r->front().turns) EXPECT_TRUE(t.event_time.has_value());
}

// JSON nested 100,000 deep crashed `engram import` (the recursive printing
// of the metadata): every format refuses nesting past 128 before parsing,
// naming the limit and where.
std::string Nested(int depth, const std::string& inner = "1") {
  return std::string(static_cast<size_t>(depth), '[') + inner + std::string(static_cast<size_t>(depth), ']');
}

TEST(JsonDepthTest, EveryFormatRefusesDeepNestingNamingWhere) {
  const std::string ok = "{\"user\":\"a\",\"assistant\":\"b\"}\n";
  const std::string deep_meta = "{\"user\":\"a\",\"metadata\":{\"k\":" + Nested(100000) + "}}";
  EXPECT_EQ(Error(ok + deep_meta + "\n", DialogueFormat::kJsonl), "line 2: JSON nested deeper than 128 levels");
  EXPECT_EQ(Error(ok + ok + deep_meta, DialogueFormat::kAuto), "line 3: JSON nested deeper than 128 levels");
  // Metadata given as a string holding JSON.
  EXPECT_EQ(Error("{\"user\":\"a\",\"metadata\":\"{\\\"k\\\":" + Nested(200) + "}\"}", DialogueFormat::kJsonl),
            "line 1: field \"metadata\": JSON nested deeper than 128 levels");
  // Whole-file formats name the element (sample) and its line.
  const std::string memoryos = "[\n {\"user_input\":\"a\",\"agent_response\":\"b\"},\n {\"user_input\":\"c\",\"x\":" +
                               Nested(1000) + "}\n]";
  for (DialogueFormat f : {DialogueFormat::kAuto, DialogueFormat::kMemoryOs}) {
    EXPECT_EQ(Error(memoryos, f), "element 1 (line 3): JSON nested deeper than 128 levels");
  }
  const std::string locomo = "[{\"sample_id\":\"s\",\"conversation\":" + Nested(129) + "}]";
  EXPECT_EQ(Error(locomo, DialogueFormat::kLocomo), "sample 0 (line 1): JSON nested deeper than 128 levels");
  auto qs = ParseLocomoQuestions(locomo);
  ASSERT_FALSE(qs.ok());
  EXPECT_EQ(qs.status().message(), "sample 0 (line 1): JSON nested deeper than 128 levels");
  EXPECT_EQ(Error("{\"a\":" + Nested(128) + "}", DialogueFormat::kMemoryOs),
            "line 1: JSON nested deeper than 128 levels");  // not an array: the line only

  // 128 levels in all are accepted (the line's object is one of them).
  auto fine = ParseDialogueText("{\"user\":\"a\",\"metadata\":{\"k\":" + Nested(126) + "}}", DialogueFormat::kJsonl);
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ(fine->front().turns.size(), 1u);
  EXPECT_EQ(Error("{\"user\":\"a\",\"metadata\":{\"k\":" + Nested(127) + "}}", DialogueFormat::kJsonl),
            "line 1: JSON nested deeper than 128 levels");
  // Brackets inside strings are text, not nesting.
  auto text = ParseDialogueText("{\"user\":\"" + std::string(1000, '[') + "\"}", DialogueFormat::kJsonl);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
}

// `engram export --all` holds many scopes; with export_scopes each scope's
// turns form their own dialogue (a restore), in file order.
TEST(JsonlTest, ExportScopesGiveOneDialoguePerScope) {
  const std::string content =
      R"({"type":"scope","tenant":"acme","user":"alice","assistant":"bot","chain_summary":""})" "\n"
      R"({"type":"turn","tenant":"acme","user":"alice","assistant":"bot","seq":1,"user_text":"a1","assistant_text":"r1"})" "\n"
      R"({"user":"plain record","assistant":"no scope"})" "\n"
      R"({"type":"turn","user":"bob","seq":1,"user_text":"b1","assistant_text":""})" "\n"
      R"({"type":"turn","tenant":"acme","user":"alice","assistant":"bot","seq":2,"user_text":"a2","assistant_text":"r2"})" "\n"
      R"({"type":"turn","user_text":"no ids","assistant_text":"x"})" "\n";
  DialogueParseOptions o;
  o.export_scopes = true;
  auto r = ParseDialogueText(content, DialogueFormat::kAuto, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);
  const ParsedDialogue& plain = (*r)[0];
  EXPECT_FALSE(plain.scope.has_value());
  ASSERT_EQ(plain.turns.size(), 2u);
  EXPECT_EQ(plain.turns[0].user_text, "plain record");
  EXPECT_EQ(plain.turns[1].user_text, "no ids");
  const ParsedDialogue& alice = (*r)[1];
  ASSERT_TRUE(alice.scope.has_value());
  EXPECT_EQ(alice.scope->tenant, "acme");
  EXPECT_EQ(alice.scope->user, "alice");
  EXPECT_EQ(alice.scope->assistant, "bot");
  EXPECT_EQ(alice.first_line, 2);
  ASSERT_EQ(alice.turns.size(), 2u);
  EXPECT_EQ(alice.turns[0].user_text, "a1");
  EXPECT_EQ(alice.turns[1].user_text, "a2");
  EXPECT_EQ(alice.source_utterances, 2);
  const ParsedDialogue& bob = (*r)[2];
  ASSERT_TRUE(bob.scope.has_value());
  EXPECT_EQ(bob.scope->tenant, "default");
  EXPECT_EQ(bob.scope->user, "bob");
  EXPECT_EQ(bob.scope->assistant, "assistant");
  EXPECT_EQ(bob.first_line, 4);

  // Only scoped lines: no empty unscoped dialogue.
  auto only = ParseDialogueText(
      R"({"type":"turn","user":"bob","user_text":"b1"})" "\n", DialogueFormat::kJsonl, o);
  ASSERT_TRUE(only.ok());
  ASSERT_EQ(only->size(), 1u);
  EXPECT_EQ(only->front().scope->user, "bob");
  // Wrong types of the ids are errors naming the line and field.
  EXPECT_EQ(ParseDialogueText(R"({"type":"turn","user":"bob","tenant":7,"user_text":"b1"})", DialogueFormat::kJsonl, o)
                .status()
                .message(),
            "line 1: field \"tenant\": expected a string");

  // Without the option (the default): one dialogue, ids ignored.
  auto merged = ParseDialogueText(content, DialogueFormat::kAuto);
  ASSERT_TRUE(merged.ok());
  ASSERT_EQ(merged->size(), 1u);
  EXPECT_FALSE(merged->front().scope.has_value());
  EXPECT_EQ(merged->front().turns.size(), 5u);
}

}  // namespace
}  // namespace engram
