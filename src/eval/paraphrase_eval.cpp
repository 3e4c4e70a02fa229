#include "eval/paraphrase_eval.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/text.hpp"
#include "core/word_vectors.hpp"
#include "engram/engine.hpp"
#include "eval/locomo_eval.hpp"
#include "eval/metrics.hpp"

namespace engram::eval {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

struct Item {
  std::string id, category, memory;
  std::vector<std::string> questions;
  std::string memory_id;  // after the add
  std::string stored;     // its text as stored (inference may rewrite it)
};

constexpr std::size_t kUnranked = SIZE_MAX;

struct Group {
  std::size_t questions = 0, memories = 0, hit1 = 0, hit3 = 0;
  double rr = 0;
  // Retrieval: contexts holding the question's memory, and the facts they hold.
  std::size_t context_hit = 0, context_facts = 0;
  // One query whose memory came at 0-based `rank` (kUnranked: not among
  // the results at all, however few there were).
  void Count(std::size_t rank) {
    ++questions;
    hit1 += rank == 0 ? 1 : 0;
    hit3 += rank < 3 ? 1 : 0;
    rr += rank < 10 ? 1.0 / static_cast<double>(rank + 1) : 0.0;
  }
  json ToJson() const {
    auto share = [&](double x) { return questions ? json(Round(x / static_cast<double>(questions), 3)) : json(nullptr); };
    return {{"questions", questions},
            {"memories", memories},
            {"hit@1", share(static_cast<double>(hit1))},
            {"hit@3", share(static_cast<double>(hit3))},
            {"mrr@10", share(rr)},
            {"context_hit", share(static_cast<double>(context_hit))},
            {"context_facts", share(static_cast<double>(context_facts))}};
  }
};

// `asked`: the list whose queries are asked ("questions", "keywords" or
// "direct").
Result<std::vector<Item>> ReadItems(const std::string& path, std::size_t max,
                                    std::string_view asked) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound(path + ": no such file");
  std::ifstream in(path);
  if (!in) return Status::IoError(path + ": cannot be opened");
  std::vector<Item> items;
  std::set<std::string> ids;
  std::size_t lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string at = path + ":" + std::to_string(lineno);
    json j = json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("memory") || !j["memory"].is_string() || !j.contains("questions") ||
        !j["questions"].is_array() || j["questions"].empty()) {
      return Status::InvalidArgument(at + ": expected {\"id\", \"category\", \"memory\", \"questions\": [...]}");
    }
    Item it;
    it.id = j.value("id", std::to_string(lineno));
    it.category = j.value("category", "");
    it.memory = j["memory"].get<std::string>();
    if (!ids.insert(it.id).second) return Status::InvalidArgument(at + ": id " + it.id + " given twice");
    for (const char* field : {"keywords", "direct"}) {
      if (j.contains(field) && (!j[field].is_array() || j[field].empty())) {
        return Status::InvalidArgument(at + ": \"" + field +
                                       "\" must be a non-empty array of queries");
      }
    }
    if (asked != "questions" && !j.contains(asked)) {
      return Status::InvalidArgument(at + ": no \"" + std::string(asked) + "\" to ask");
    }
    const auto own = text::Terms(it.memory);
    const std::set<std::string> own_terms(own.begin(), own.end());
    // Every list is checked, whichever is asked: the questions and keyword
    // queries share no content word with the memory, the direct questions at
    // least one.
    for (const char* field : {"questions", "keywords", "direct"}) {
      if (!j.contains(field)) continue;
      const std::string_view list = field;
      for (const auto& q : j[field]) {
        if (!q.is_string() || q.get<std::string>().empty()) {
          return Status::InvalidArgument(at + ": " + field + " must be text");
        }
        const std::string query = q.get<std::string>();
        std::string shared;
        for (const auto& t : text::Terms(query)) {
          if (own_terms.count(t)) {
            shared = t;
            break;
          }
        }
        if (list == "direct" && shared.empty()) {
          return Status::InvalidArgument(at + ": direct question \"" + query +
                                         "\" shares no content word with its memory");
        }
        if (list != "direct" && !shared.empty()) {
          return Status::InvalidArgument(
              at + ": " + (list == "keywords" ? "keyword query" : "question") + " \"" + query +
              "\" shares the content word \"" + shared + "\" with its memory");
        }
        if (list == asked) it.questions.push_back(query);
      }
    }
    items.push_back(std::move(it));
    if (max > 0 && items.size() >= max) break;
  }
  if (items.empty()) return Status::InvalidArgument(path + ": no items");
  return items;
}

const char* Asked(const ParaphraseOptions& opt) {
  return opt.direct ? "direct" : opt.keywords ? "keywords" : "questions";
}

// Calls ask(item, question, its category's group) for each question of each
// item, after counting the item's memory in its category and overall; the
// first error ends it.
template <class Ask>
Status ForEachQuestion(const std::vector<Item>& items, Group& overall,
                       std::map<std::string, Group>& by_category, Ask&& ask) {
  for (const auto& it : items) {
    Group& g = by_category[it.category];
    ++g.memories;
    ++overall.memories;
    for (const auto& q : it.questions) ENGRAM_RETURN_IF_ERROR(ask(it, q, g));
  }
  return Status::Ok();
}

json Latencies(const std::vector<double>& ms) {
  double sum = 0;
  for (double x : ms) sum += x;
  return json{{"p50", Round(Percentile(ms, 50), 3)},
              {"p95", Round(Percentile(ms, 95), 3)},
              {"p99", Round(Percentile(ms, 99), 3)},
              {"mean", ms.empty() ? 0.0 : Round(sum / static_cast<double>(ms.size()), 3)},
              {"calls", ms.size()}};
}

// The report's figures and config, both modes.
json Report(const Engine& engine, const Group& overall,
            const std::map<std::string, Group>& by_category, const std::string& path,
            const ParaphraseOptions& opt) {
  json j;
  j["overall"] = overall.ToJson();
  json cats = json::object();
  for (const auto& [name, g] : by_category) cats[name] = g.ToJson();
  j["by_category"] = std::move(cats);
  const std::string words =
      engine.EmbedderName().rfind("builtin", 0) == 0 ? wordvec::WordVectors::DefaultPath() : "";
  const bool have_words = !words.empty() && wordvec::WordVectors::Default() != nullptr;
  j["config"] = {{"benchmark", "paraphrase"},
                 {"file", path},
                 {"mode", opt.dialogue ? "dialogue" : "facts"},
                 {"embedder", engine.EmbedderName()},
                 {"word_vectors", have_words ? json(words) : json(nullptr)},
                 {"wordnet", WordNetSource()},
                 {"engram_version", Version()},
                 {"max_memories", opt.max_memories},
                 {"queries", Asked(opt)},
                 {"infer", opt.infer}};
  RetrieveConfig(opt.retrieve, j["config"]["retrieve"], j["config"]["changed"]);
  return j;
}

// The dialogue mode: each memory is what the user said in one exchange of one
// dialogue (the assistant answering "Noted."), a day after the one before;
// maintained (all but the recent turns become pages); each question is asked
// through Engine::Retrieve with a caller's defaults, and its memory's rank is
// that of its exchange among the ranked messages (RetrievalResult::ranked, an
// exchange counted once).
Result<json> RunDialogue(Engine& engine, std::vector<Item> items, const std::string& path,
                         const ParaphraseOptions& opt) {
  const Scope dialogue{"default", "paraphrase", "assistant"};
  constexpr TimeMs kDay = 24LL * 3600 * 1000;
  const TimeMs first = 1767225600000LL;  // 2026-01-01T00:00:00Z
  std::vector<TurnInput> turns;
  for (std::size_t i = 0; i < items.size(); ++i) {
    TurnInput t;
    t.user_text = items[i].memory;
    t.assistant_text = "Noted.";
    t.event_time = first + static_cast<TimeMs>(i) * kDay;
    t.source_ref = items[i].id;
    turns.push_back(std::move(t));
  }
  ENGRAM_RETURN_IF_ERROR(engine.AddTurns(dialogue, turns).status());
  ENGRAM_ASSIGN_OR_RETURN(MaintainReport report, engine.Maintain(nullptr));
  if (report.jobs_failed > 0) return Status::Internal("maintenance of the dialogue failed");
  Group overall;
  std::map<std::string, Group> by_category;
  std::vector<double> latencies;
  json misses = json::array();
  // The memory said in each exchange, by its id (a miss names the first one's).
  std::map<std::string, std::string> said;
  for (const auto& it : items) said[it.id] = it.memory;
  ENGRAM_RETURN_IF_ERROR(ForEachQuestion(
      items, overall, by_category, [&](const Item& it, const std::string& q, Group& g) -> Status {
        const auto start = SteadyClock::now();
        ENGRAM_ASSIGN_OR_RETURN(RetrievalResult ctx, engine.Retrieve(dialogue, q, opt.retrieve));
        latencies.push_back(
            std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count());
        std::vector<std::string> order;  // exchanges, best first, once each
        for (const auto& item : ctx.ranked) {
          if (std::find(order.begin(), order.end(), item.source_ref) == order.end())
            order.push_back(item.source_ref);
        }
        const auto at = std::find(order.begin(), order.end(), it.id);
        const std::size_t rank =
            at == order.end() ? kUnranked : static_cast<std::size_t>(at - order.begin());
        std::size_t facts = 0;
        for (const auto& item : ctx.items) {
          facts +=
              item.kind == ItemKind::kUserFact || item.kind == ItemKind::kAssistantFact ? 1 : 0;
        }
        const bool in_context = ctx.context.find(it.memory) != std::string::npos;
        for (Group* x : {&g, &overall}) {
          x->Count(rank);
          x->context_hit += in_context ? 1 : 0;
          x->context_facts += facts;
        }
        if (rank >= 3) {
          misses.push_back(
              {{"id", it.id},
               {"question", q},
               {"memory", it.memory},
               {"rank", rank != kUnranked ? json(rank + 1) : json(nullptr)},
               {"first", order.empty() ? json(nullptr)
                                       : json(said.count(order.front()) ? said[order.front()]
                                                                        : order.front())}});
        }
        return Status::Ok();
      }));
  json j = Report(engine, overall, by_category, path, opt);
  j["latency_ms"] = Latencies(latencies);
  j["misses"] = std::move(misses);
  return j;
}

}  // namespace

Result<json> RunParaphraseEval(const std::string& path, const ParaphraseOptions& opt) {
  if (opt.direct && opt.keywords) {
    return Status::InvalidArgument("direct and keywords: ask one list of queries, not both");
  }
  ENGRAM_ASSIGN_OR_RETURN(std::vector<Item> items, ReadItems(path, opt.max_memories, Asked(opt)));
  EngineOptions eo = opt.engine;
  eo.db_path = ":memory:";
  eo.background_maintenance = false;
  ENGRAM_ASSIGN_OR_RETURN(auto engine, Engine::Open(std::move(eo)));
  if (opt.dialogue) return RunDialogue(*engine, std::move(items), path, opt);
  MemoryScope scope;
  scope.tenant = "default";
  scope.user = "paraphrase";
  for (auto& it : items) {
    MemoryAddOptions ao;
    ao.infer = opt.infer;
    ENGRAM_ASSIGN_OR_RETURN(MemoryAddResult r, engine->AddMemoryText(scope, it.memory, ao));
    if (r.results.size() != 1) {
      if (!opt.infer) return Status::Internal("add of " + it.id + ": expected one memory");
      return Status::InvalidArgument(it.id + ": inference made " + std::to_string(r.results.size()) +
                                     " memories of it, not one" + (r.note.empty() ? "" : " (" + r.note + ")"));
    }
    if (r.results.front().event != "ADD") {
      return Status::InvalidArgument(it.id + ": the memory duplicates another one of the set");
    }
    it.memory_id = r.results.front().id;
    it.stored = r.results.front().memory;  // as written, or as inference wrote it
  }

  const Scope dialogue{scope.tenant, scope.user, "assistant"};  // a dialogue of that user
  MemorySearchOptions so;  // what a caller gets by default
  so.explain = true;        // fills score_details only (the misses' components); the ranking is the same
  Group overall;
  std::map<std::string, Group> by_category;
  std::vector<double> latencies, context_latencies;  // search; the context's retrieval
  json misses = json::array();
  ENGRAM_RETURN_IF_ERROR(ForEachQuestion(
      items, overall, by_category, [&](const Item& it, const std::string& q, Group& g) -> Status {
        const auto start = SteadyClock::now();
        ENGRAM_ASSIGN_OR_RETURN(std::vector<MemoryItem> found,
                                engine->SearchMemories(scope, q, so));
        latencies.push_back(
            std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count());
        std::size_t rank = 0;
        while (rank < found.size() && found[rank].id != it.memory_id) ++rank;
        if (rank == found.size()) rank = kUnranked;  // (not found: no hit, however few were found)
        for (Group* x : {&g, &overall}) x->Count(rank);
        // What an agent's retrieval gives for the same question: the user's
        // memories are facts of each of its dialogues.
        const auto asked_at = SteadyClock::now();
        ENGRAM_ASSIGN_OR_RETURN(RetrievalResult ctx, engine->Retrieve(dialogue, q, opt.retrieve));
        context_latencies.push_back(
            std::chrono::duration<double, std::milli>(SteadyClock::now() - asked_at).count());
        std::size_t facts = 0;
        bool in_context = false;
        for (const auto& item : ctx.items) {
          if (item.kind != ItemKind::kUserFact && item.kind != ItemKind::kAssistantFact) continue;
          ++facts;
          in_context = in_context || item.text.find(it.stored) != std::string::npos;
        }
        for (Group* x : {&g, &overall}) {
          x->context_hit += in_context ? 1 : 0;
          x->context_facts += facts;
        }
        if (rank >= 3) {
          auto parts = [](const MemoryItem& m) {
            if (!m.score_details) return json(nullptr);
            const MemoryScoreDetails& d = *m.score_details;
            return json{{"score", Round(m.score, 3)},       {"semantic", Round(d.semantic, 3)},
                        {"vector", Round(d.vector, 3)},     {"lexical", Round(d.lexical, 3)},
                        {"from_semantic", d.from_semantic}, {"from_lexical", d.from_lexical}};
          };
          misses.push_back(
              {{"id", it.id},
               {"question", q},
               {"memory", it.stored},
               {"rank", rank != kUnranked ? json(rank + 1) : json(nullptr)},
               {"components", rank != kUnranked ? parts(found[rank]) : json(nullptr)},
               {"first", found.empty() ? json(nullptr) : json(found.front().memory)},
               {"first_components", found.empty() ? json(nullptr) : parts(found.front())}});
        }
        return Status::Ok();
      }));
  json j = Report(*engine, overall, by_category, path, opt);
  j["config"]["top_k"] = so.top_k;
  j["latency_ms"] = Latencies(latencies);
  j["context_latency_ms"] = Latencies(context_latencies);
  j["misses"] = std::move(misses);
  return j;
}

}  // namespace engram::eval
