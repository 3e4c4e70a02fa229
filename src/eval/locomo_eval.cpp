#include "eval/locomo_eval.hpp"

#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <unordered_set>

#include "core/dialogue_formats.hpp"
#include "core/wordnet.hpp"
#include "engram/engine.hpp"
#include "eval/answer_eval.hpp"
#include "eval/metrics.hpp"
#include "retrieval/ranking.hpp"

namespace engram::eval {

namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

// Turns per AddTurns call (as `engram import` does).
constexpr std::size_t kAddBatch = 500;

double Seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

// CPU time of the calling thread in milliseconds: a retrieval's own work,
// without the time a shared machine gave its core to other processes.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return 1e3 * static_cast<double>(ts.tv_sec) + 1e-6 * static_cast<double>(ts.tv_nsec);
}

Status Prefixed(const Status& st, const std::string& prefix) {
  return Status(st.code(), prefix + ": " + st.message());
}

Result<std::string> ReadWholeFile(const std::string& path) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (!fs::exists(st)) return Status::NotFound(path + ": no such file");
  if (fs::is_directory(st)) return Status::IoError(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot be opened");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IoError(path + ": read failed");
  return ss.str();
}

// The directory holding the stores; removed at scope exit when made here.
class WorkDir {
 public:
  WorkDir() = default;
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  ~WorkDir() {
    if (owned_) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  Status Init(const std::string& requested) {
    std::error_code ec;
    if (!requested.empty()) {
      fs::create_directories(requested, ec);
      if (ec || !fs::is_directory(requested, ec)) {
        return Status::IoError("work_dir " + requested + ": cannot be created");
      }
      path_ = requested;
      return Status::Ok();
    }
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string tmpl = (base / "engram-eval-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return Status::IoError("cannot create a directory in " + base.string());
    path_ = tmpl;
    owned_ = true;
    return Status::Ok();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool owned_ = false;
};

void RemoveStore(const std::string& db_path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(db_path + suffix, ec);
}

// Overall (categories 1-4) and per-category sums of a set of conversations.
struct Groups {
  explicit Groups(std::size_t budgets) : overall(budgets) {
    for (int c = 1; c <= 5; ++c) by_category.emplace(c, GroupStats(budgets));
  }
  GroupStats overall;
  std::map<int, GroupStats> by_category;
  std::vector<std::string> conversations;
};

struct Totals {
  explicit Totals(std::vector<int> b)
      : budgets(std::move(b)), all(budgets.size()), split{Groups(budgets.size()), Groups(budgets.size())} {}
  std::vector<int> budgets;  // ascending
  Groups all;
  Groups split[2];  // tuned, held out
  std::vector<double> latencies_ms;
  std::vector<double> cpu_ms;  // thread CPU time of the same calls
  std::vector<double>
      warm_ms;  // the fastest of each question's repeated calls (EvalOptions::repeat)
  std::size_t turns = 0, utterances = 0, questions = 0;
  double add_s = 0, maintain_s = 0;
  int jobs_failed = 0, skipped_evidence = 0;
  std::string embedder, maintainer;
  std::size_t done = 0, total = 0;
  std::unique_ptr<AnswerTotals> answers;  // only when answering
};

std::size_t QuestionCount(const std::vector<LocomoQuestion>& qs, const EvalOptions& opt) {
  if (opt.max_questions <= 0) return qs.size();
  return std::min(qs.size(), static_cast<std::size_t>(opt.max_questions));
}

bool InOverall(int category) { return category >= 1 && category <= 4; }

// Ingests, maintains and questions one conversation in a fresh store.
Status RunConversation(const ParsedDialogue& d, const std::vector<LocomoQuestion>& qs,
                       const std::string& db_path, const Scope& scope, const EvalOptions& opt,
                       bool held_out, Totals& t) {
  RemoveStore(db_path);
  EngineOptions eo = opt.engine;
  eo.db_path = db_path;
  eo.background_maintenance = false;
  ENGRAM_ASSIGN_OR_RETURN(auto engine, Engine::Open(std::move(eo)));
  if (t.embedder.empty()) {
    t.embedder = engine->EmbedderName();
    t.maintainer = engine->MaintainerName();
  }

  auto start = SteadyClock::now();
  for (std::size_t i = 0; i < d.turns.size(); i += kAddBatch) {
    std::size_t end = std::min(i + kAddBatch, d.turns.size());
    std::vector<TurnInput> batch(d.turns.begin() + static_cast<std::ptrdiff_t>(i),
                                 d.turns.begin() + static_cast<std::ptrdiff_t>(end));
    auto r = engine->AddTurns(scope, batch);
    if (!r.ok()) return r.status();
  }
  t.add_s += Seconds(SteadyClock::now() - start);
  start = SteadyClock::now();
  ENGRAM_ASSIGN_OR_RETURN(MaintainReport report, engine->Maintain(nullptr));
  t.maintain_s += Seconds(SteadyClock::now() - start);
  t.jobs_failed += report.jobs_failed;
  t.turns += d.turns.size();
  t.utterances += static_cast<std::size_t>(d.source_utterances);
  t.done += d.turns.size();
  if (opt.progress) opt.progress(t.done, t.total);

  std::unordered_set<std::string> known;
  for (const auto& turn : d.turns) {
    for (auto& id : SplitDiaIds(turn.source_ref)) known.insert(std::move(id));
  }

  const std::size_t nb = t.budgets.size();
  std::vector<RetrievalResult> results(nb);
  const std::size_t nq = QuestionCount(qs, opt);
  if (t.answers) t.answers->usage.BeginConversation();
  for (std::size_t qi = 0; qi < nq; ++qi) {
    const LocomoQuestion& q = qs[qi];
    // Largest budget first: that call is the timed one and gives `ranked`.
    for (std::size_t b = nb; b-- > 0;) {
      RetrieveOptions ro = opt.retrieve;
      ro.budget_tokens = t.budgets[b];
      const double cpu_begin = ThreadCpuMs();
      auto begin = SteadyClock::now();
      auto r = engine->Retrieve(scope, q.question, ro);
      double ms = 1000.0 * Seconds(SteadyClock::now() - begin);
      const double cpu_ms = ThreadCpuMs() - cpu_begin;
      if (!r.ok()) return Prefixed(r.status(), "question " + std::to_string(qi));
      if (b + 1 == nb) {
        t.latencies_ms.push_back(ms);
        t.cpu_ms.push_back(cpu_ms);
        double fastest = ms;
        for (int k = 1; k < opt.repeat; ++k) {
          begin = SteadyClock::now();
          auto again = engine->Retrieve(scope, q.question, ro);
          fastest = std::min(fastest, 1000.0 * Seconds(SteadyClock::now() - begin));
          if (!again.ok()) return Prefixed(again.status(), "question " + std::to_string(qi));
        }
        t.warm_ms.push_back(fastest);
      }
      results[b] = std::move(r).value();
    }
    ++t.questions;
    int skipped = 0;
    auto evidence = NormalizeEvidence(q.evidence, known, &skipped);
    t.skipped_evidence += skipped;
    std::optional<QuestionScore> score;
    if (!evidence.empty()) {
      std::vector<const RetrievalResult*> by_budget;
      for (const auto& r : results) by_budget.push_back(&r);
      score = ScoreQuestion(evidence, results.back().ranked, by_budget);
      if (opt.on_question) {
        std::vector<std::string> refs;
        for (const auto& item : results.back().ranked) {
          if (refs.size() >= 20) break;
          refs.push_back(item.source_ref);
        }
        opt.on_question(scope.user, q, evidence, *score, refs);
      }
    }
    for (Groups* g : {&t.all, &t.split[held_out ? 1 : 0]}) {
      auto cat = g->by_category.try_emplace(q.category, nb).first;
      if (!score) {
        cat->second.AddSkipped();
        if (InOverall(q.category)) g->overall.AddSkipped();
      } else {
        cat->second.Add(*score);
        if (InOverall(q.category)) g->overall.Add(*score);
      }
    }
    if (t.answers && AnswerScored(q.category)) {
      Status st = AnswerQuestion(*engine, scope, q, t.budgets.back(), opt.retrieve, *t.answers);
      if (!st.ok()) return Prefixed(st, "question " + std::to_string(qi));
    }
    ++t.done;
    if (opt.progress) opt.progress(t.done, t.total);
  }
  if (t.answers) t.answers->usage.EndConversation();
  return Status::Ok();
}

nlohmann::json CategoriesJson(const Groups& g, const std::vector<int>& budgets) {
  nlohmann::json cats = nlohmann::json::object();
  for (const auto& [c, stats] : g.by_category) {
    nlohmann::json cj = stats.ToJson(budgets);
    cj["name"] = LocomoCategoryName(c);
    cats[std::to_string(c)] = std::move(cj);
  }
  return cats;
}

nlohmann::json Report(const Totals& t, const std::vector<std::string>& ids, const EvalOptions& opt) {
  nlohmann::json j;
  j["overall"] = t.all.overall.ToJson(t.budgets);
  j["by_category"] = CategoriesJson(t.all, t.budgets);
  nlohmann::json splits = nlohmann::json::object();
  const char* names[2] = {"tuned", "held_out"};
  for (int k = 0; k < 2; ++k) {
    if (t.split[k].conversations.empty()) continue;
    splits[names[k]] = {{"conversations", t.split[k].conversations},
                        {"overall", t.split[k].overall.ToJson(t.budgets)},
                        {"by_category", CategoriesJson(t.split[k], t.budgets)}};
  }
  j["splits"] = std::move(splits);
  nlohmann::json retrieve, changed;
  RetrieveConfig(opt.retrieve, retrieve, changed);
  j["config"] = {{"benchmark", "locomo"},
                 {"embedder", t.embedder},
                 {"maintainer", t.maintainer},
                 {"wordnet", WordNetSource()},
                 {"budgets", t.budgets},
                 {"engram_version", Version()},
                 {"conversations", ids},
                 {"held_out_from", opt.held_out_from},
                 {"retrieve", std::move(retrieve)},
                 {"changed", std::move(changed)},
                 {"ranking", "message-level; one slot per dia_id of each ranked item"}};
  j["ingest"] = {{"turns", t.turns},
                 {"utterances", t.utterances},
                 {"add_s", Round(t.add_s, 3)},
                 {"turns_per_s", t.add_s > 0 ? Round(static_cast<double>(t.turns) / t.add_s, 1) : 0.0},
                 {"maintain_s", Round(t.maintain_s, 3)},
                 {"jobs_failed", t.jobs_failed}};
  double mean = t.latencies_ms.empty()
                    ? 0.0
                    : std::accumulate(t.latencies_ms.begin(), t.latencies_ms.end(), 0.0) /
                          static_cast<double>(t.latencies_ms.size());
  j["latency_ms"] = {{"p50", Round(Percentile(t.latencies_ms, 50), 3)},
                     {"p95", Round(Percentile(t.latencies_ms, 95), 3)},
                     {"p99", Round(Percentile(t.latencies_ms, 99), 3)},
                     {"mean", Round(mean, 3)},
                     {"cpu_p50", Round(Percentile(t.cpu_ms, 50), 3)},
                     {"calls", t.latencies_ms.size()},
                     {"budget", t.budgets.empty() ? 0 : t.budgets.back()}};
  if (opt.repeat > 1) {
    const double warm_mean = t.warm_ms.empty()
                                 ? 0.0
                                 : std::accumulate(t.warm_ms.begin(), t.warm_ms.end(), 0.0) /
                                       static_cast<double>(t.warm_ms.size());
    j["latency_ms"]["warm"] = {{"p50", Round(Percentile(t.warm_ms, 50), 3)},
                               {"p95", Round(Percentile(t.warm_ms, 95), 3)},
                               {"mean", Round(warm_mean, 3)},
                               {"repeat", opt.repeat}};
  }
  nlohmann::json tokens = nlohmann::json::object();
  for (std::size_t b = 0; b < t.budgets.size(); ++b) {
    tokens[std::to_string(t.budgets[b])] = Round(t.all.overall.MeanContextTokens(b), 1);
  }
  j["context_tokens"] = std::move(tokens);
  j["skipped_evidence"] = t.skipped_evidence;
  j["questions_total"] = t.questions;
  if (t.answers) j["answers"] = t.answers->ToJson(t.budgets.empty() ? 0 : t.budgets.back());
  return j;
}

}  // namespace

void RetrieveConfig(const RetrieveOptions& o, nlohmann::json& all, nlohmann::json& changed) {
  const RetrieveOptions d;
  all = {{"max_pages", o.max_pages},
         {"max_segments", o.max_segments},
         {"max_facts", o.max_facts},
         {"include_stm", o.include_stm},
         {"include_profile", o.include_profile}};
  changed = nlohmann::json::object();
  for (const char* k :
       {"max_pages", "max_segments", "max_facts", "include_stm", "include_profile"}) {
    nlohmann::json def = {{"max_pages", d.max_pages},
                          {"max_segments", d.max_segments},
                          {"max_facts", d.max_facts},
                          {"include_stm", d.include_stm},
                          {"include_profile", d.include_profile}};
    if (all[k] != def[k]) changed[k] = all[k];
  }
  nlohmann::json ranking = nlohmann::json::object();
  for (const auto& f : retrieval::RankingFields()) {
    ranking[f.name] = o.ranking.*f.member;
    if (o.ranking.*f.member != d.ranking.*f.member)
      changed[std::string("ranking.") + f.name] = o.ranking.*f.member;
  }
  all["ranking"] = std::move(ranking);
}

const char* LocomoCategoryName(int category) {
  switch (category) {
    case 1: return "multi-hop";
    case 2: return "temporal";
    case 3: return "open-domain";
    case 4: return "single-hop";
    case 5: return "adversarial";
    default: return "unknown";
  }
}

Result<nlohmann::json> RunLocomoEval(const std::string& locomo_path, const EvalOptions& opt) {
  std::vector<int> budgets = opt.budgets;
  if (budgets.empty()) return Status::InvalidArgument("budgets: at least one budget is required");
  for (int b : budgets) {
    if (b <= 0) return Status::InvalidArgument("budgets: " + std::to_string(b) + " is not positive");
  }
  if (opt.max_questions < 0) return Status::InvalidArgument("max_questions: must not be negative");
  if (opt.held_out_from < 0) return Status::InvalidArgument("held_out_from: must not be negative");
  if (opt.repeat < 1 || opt.repeat > 1000) {
    return Status::InvalidArgument("repeat: must be between 1 and 1000");
  }
  {
    RetrieveOptions check = opt.retrieve;
    check.budget_tokens = budgets.front();
    ENGRAM_RETURN_IF_ERROR(retrieval::CheckRetrieveOptions(check));
  }
  if (opt.answer && !opt.engine.llm) {
    return Status::InvalidArgument("answer: no language model is configured (EvalOptions.engine.llm)");
  }
  std::sort(budgets.begin(), budgets.end());
  budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());

  ENGRAM_ASSIGN_OR_RETURN(std::string content, ReadWholeFile(locomo_path));
  auto dialogues = ParseDialogueText(content, DialogueFormat::kLocomo);
  if (!dialogues.ok()) return Prefixed(dialogues.status(), locomo_path);
  auto questions = ParseLocomoQuestions(content);
  if (!questions.ok()) return Prefixed(questions.status(), locomo_path);
  if (questions->size() != dialogues->size()) {
    return Status::InvalidArgument(locomo_path + ": samples and question lists do not match");
  }

  std::vector<std::size_t> selected;
  for (const auto& want : opt.conversations) {
    bool found = std::any_of(dialogues->begin(), dialogues->end(),
                             [&](const ParsedDialogue& d) { return d.id == want; });
    if (!found) return Status::InvalidArgument("conversations: no sample \"" + want + "\" in " + locomo_path);
  }
  for (std::size_t i = 0; i < dialogues->size(); ++i) {
    const auto& id = (*dialogues)[i].id;
    if (opt.conversations.empty() ||
        std::find(opt.conversations.begin(), opt.conversations.end(), id) != opt.conversations.end()) {
      selected.push_back(i);
    }
  }

  WorkDir dir;
  ENGRAM_RETURN_IF_ERROR(dir.Init(opt.work_dir));

  Totals t(budgets);
  if (opt.answer) t.answers = std::make_unique<AnswerTotals>(opt.engine.llm, opt.judge ? opt.judge : opt.engine.llm);
  for (std::size_t i : selected) t.total += (*dialogues)[i].turns.size() + QuestionCount((*questions)[i], opt);
  std::vector<std::string> ids;
  for (std::size_t i : selected) {
    const ParsedDialogue& d = (*dialogues)[i];
    Scope scope;
    scope.user = d.id.empty() ? "sample-" + std::to_string(i) : d.id;
    ids.push_back(scope.user);
    // File names never come from the data: the sample's index names the store.
    std::string db_path = dir.path() + "/sample-" + std::to_string(i) + ".db";
    const bool held_out = static_cast<int>(i) >= opt.held_out_from;
    t.split[held_out ? 1 : 0].conversations.push_back(scope.user);
    Status st = RunConversation(d, (*questions)[i], db_path, scope, opt, held_out, t);
    if (!st.ok()) return Prefixed(st, scope.user);
  }
  return Report(t, ids, opt);
}

nlohmann::json WordNetSource() {
  const std::string source = wordnet::WordNet::DefaultSource();
  return source.empty() ? nlohmann::json(nullptr) : nlohmann::json(source);
}

}  // namespace engram::eval
