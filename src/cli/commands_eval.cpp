// CLI: eval (benchmarks). `engram eval locomo FILE [--conversations a,b]
// [--budget N ...] [--max-questions N] [--answer] [--json]` runs the LoCoMo
// retrieval benchmark in a fresh temporary directory (removed afterwards) and
// prints a table, or one JSON document with --json. With --answer the
// configured models (as for `engram chat`: LLM for answers, judge and
// maintenance; embedder when configured) answer and judge every question of
// categories 1-4. Exit codes: 0 ok, 2 usage (unknown benchmark, bad budget,
// unknown conversation, malformed file, --answer without a model), 1 other
// errors (missing file, engine or model failure).
// `engram eval paraphrase [FILE] [--max-memories N] [--keywords | --direct]
// [--infer | --dialogue] [--set NAME=VALUE]... [--model-embedder] [--json]` runs the paraphrase
// benchmark of the fact memory (default file bench/data/paraphrase.jsonl;
// --keywords asks each memory's keyword queries instead of its questions,
// --direct its questions that share a word with it; --infer adds the
// memories through inference, not as written; --dialogue asks a dialogue
// that said them instead of the fact memory; --set NAME=VALUE changes a
// ranking constant of the retrievals) on the built-in engine,
// or with the configured embedding endpoint (--model-embedder).
#include <unistd.h>  // isatty

#include <cstdio>
#include <fstream>
#include <cstdlib>
#include <cerrno>
#include <algorithm>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "eval/locomo_eval.hpp"
#include "eval/paraphrase_eval.hpp"
#include "retrieval/ranking.hpp"

namespace engram::cli {

namespace {

// A one-line progress bar on stderr; silent when stderr is not a terminal.
class EvalProgress {
 public:
  EvalProgress() : tty_(isatty(2) == 1) {}
  EvalProgress(const EvalProgress&) = delete;
  EvalProgress& operator=(const EvalProgress&) = delete;
  ~EvalProgress() {
    if (shown_) std::cerr << "\n";
  }
  void Update(std::size_t done, std::size_t total) {
    if (!tty_ || total == 0) return;
    constexpr std::size_t kWidth = 30;
    std::size_t filled = std::min(kWidth, kWidth * done / total);
    std::cerr << "\rlocomo [" << std::string(filled, '#') << std::string(kWidth - filled, ' ') << "] "
              << (100 * done / total) << "%" << std::flush;
    shown_ = true;
  }

 private:
  bool tty_;
  bool shown_ = false;
};

// A metric cell: three decimals, "-" for null.
std::string Cell(const nlohmann::json& v) {
  if (!v.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v.get<double>());
  return buf;
}

std::string Pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string Fixed(const nlohmann::json& v, int digits) {
  if (!v.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v.get<double>());
  return buf;
}

void PrintAnswers(const nlohmann::json& a) {
  std::cout << "\nAnswers (model " << a["answer_model"].get<std::string>() << ", judge "
            << a["judge_model"].get<std::string>() << " with prompt " << a["judge_prompt_version"].get<std::string>()
            << "; budget " << a["budget"] << ", \"" << a["answer_length"].get<std::string>() << "\")\n\n";
  std::cout << Pad("category", 18) << Pad("questions", 11) << Pad("F1", 9) << Pad("BLEU-1", 9) << Pad("J", 9)
            << "judge failures\n";
  auto row = [](const std::string& label, const nlohmann::json& g) {
    std::cout << Pad(label, 18) << Pad(std::to_string(g["questions"].get<std::size_t>()), 11) << Pad(Cell(g["f1"]), 9)
              << Pad(Cell(g["bleu1"]), 9) << Pad(Cell(g["judge"]), 9) << g["judge_failures"] << "\n";
  };
  row("overall (1-4)", a["overall"]);
  for (const auto& [id, g] : a["by_category"].items()) row(id + " " + g["name"].get<std::string>(), g);
  std::cout << "\n(J: share judged CORRECT, judge failures left out; category 5 is not answered)\n"
            << "model use    " << Fixed(a["llm_calls_per_question"], 2) << " LLM calls, "
            << Fixed(a["prompt_tokens_per_question"], 0) << " prompt and " << Fixed(a["completion_tokens_per_question"], 0)
            << " completion tokens per question (answer + judge; from "
            << (a["usage_source"] == "client_counters" ? "the client counters" : "the replies") << ")\n";
}

// NAME=VALUE of a ranking constant, set on `o` (the range is checked by the
// harness).
Status SetRankingOption(const std::string& kv, RankingOptions& o) {
  const auto eq = kv.find('=');
  const std::string name = kv.substr(0, eq);
  const auto& fields = retrieval::RankingFields();
  auto f = std::find_if(fields.begin(), fields.end(), [&](const retrieval::RankingField& x) { return name == x.name; });
  if (f == fields.end()) {
    std::string known;
    for (const auto& x : fields) known += std::string(known.empty() ? "" : ", ") + x.name;
    return Status::InvalidArgument("\"" + name + "\" is not a ranking option (known: " + known + ")");
  }
  if (eq == std::string::npos) return Status::InvalidArgument(name + ": expected NAME=VALUE");
  const std::string value = kv.substr(eq + 1);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || errno != 0) {
    return Status::InvalidArgument(name + ": \"" + value + "\" is not a number");
  }
  o.*(f->member) = v;
  return Status::Ok();
}

void PrintTable(const nlohmann::json& r) {
  const auto& cfg = r["config"];
  std::vector<int> budgets = cfg["budgets"].get<std::vector<int>>();
  std::vector<std::string> keys = {"recall@5", "recall@10", "recall@20", "all@10"};
  std::vector<std::string> heads = {"R@5", "R@10", "R@20", "all@10"};
  for (int b : budgets) {
    keys.push_back("budget_recall@" + std::to_string(b));
    heads.push_back("B@" + std::to_string(b));
  }
  const std::size_t n = cfg["conversations"].size();
  std::cout << "LoCoMo retrieval, turn level (" << n << (n == 1 ? " conversation" : " conversations") << "; embedder "
            << cfg["embedder"].get<std::string>() << ", maintainer " << cfg["maintainer"].get<std::string>()
            << ", engram " << cfg["engram_version"].get<std::string>() << ")\n\n";
  std::cout << Pad("category", 18) << Pad("questions", 11);
  for (const auto& h : heads) std::cout << Pad(h, 9);
  std::cout << "\n";
  auto row = [&](const std::string& label, const nlohmann::json& g) {
    std::cout << Pad(label, 18) << Pad(std::to_string(g["questions"].get<std::size_t>()), 11);
    for (const auto& k : keys) std::cout << Pad(Cell(g.value(k, nlohmann::json())), 9);
    std::cout << "\n";
  };
  row("overall (1-4)", r["overall"]);
  for (const auto& [id, g] : r["by_category"].items()) {
    row(id + " " + g["name"].get<std::string>(), g);
  }
  if (r["splits"].contains("held_out") && r["splits"].contains("tuned")) {
    std::cout << "\n";
    row("tuned (1-4)", r["splits"]["tuned"]["overall"]);
    row("held out (1-4)", r["splits"]["held_out"]["overall"]);
    for (const auto& [id, g] : r["splits"]["held_out"]["by_category"].items()) {
      row("  held out " + id, g);
    }
  }
  const auto& in = r["ingest"];
  const auto& lat = r["latency_ms"];
  std::cout << "\n(B@N: share of evidence turns in the context assembled under N tokens; "
               "category 5 is not in overall; held out: conversations from index "
            << cfg["held_out_from"] << " on, never tuned on)\n";
  std::cout << "defaults     " << (cfg["changed"].empty() ? std::string("a caller's (nothing changed)")
                                                           : "changed: " + cfg["changed"].dump())
            << "\n";
  std::cout << "ingest       " << in["turns"] << " turns (" << in["utterances"] << " utterances) at "
            << in["turns_per_s"] << " turns/s; maintenance " << in["maintain_s"] << " s";
  if (in["jobs_failed"].get<int>() > 0) std::cout << " (" << in["jobs_failed"] << " jobs failed)";
  std::cout << "\nlatency      p50 " << lat["p50"] << " ms, p95 " << lat["p95"] << " ms, p99 "
            << lat["p99"] << " ms, mean " << lat["mean"] << " ms; CPU p50 " << lat["cpu_p50"]
            << " ms (" << lat["calls"] << " retrievals, budget " << lat["budget"] << ")";
  if (lat.contains("warm")) {
    std::cout << "\n  warm       p50 " << lat["warm"]["p50"] << " ms, p95 " << lat["warm"]["p95"]
              << " ms, mean " << lat["warm"]["mean"] << " ms (the fastest of "
              << lat["warm"]["repeat"] << " calls of each question)";
  }
  std::cout << "\ncontext      ";
  for (std::size_t i = 0; i < budgets.size(); ++i) {
    std::string b = std::to_string(budgets[i]);
    std::cout << (i ? ", " : "") << r["context_tokens"].value(b, nlohmann::json()) << " tokens under " << b;
  }
  std::cout << " (mean per question)\nskipped      " << r["skipped_evidence"]
            << " evidence ids matching no utterance; " << r["overall"]["skipped_questions"]
            << " questions (1-4) without evidence\n";
  if (r.contains("answers")) PrintAnswers(r["answers"]);
}

}  // namespace

void RegisterEvalCommands(CLI::App& app, Cli& cli, int& code) {
  auto* eval = app.add_subcommand("eval", "Run a benchmark (retrieval metrics; answers with --answer): locomo, paraphrase");
  auto* locomo = eval->add_subcommand("locomo", "LoCoMo: evidence recall, latency and ingest speed");
  auto* para = eval->add_subcommand("paraphrase", "Fact memory: questions that share no word with their memory");
  para->allow_extras(false);
  locomo->allow_extras(false);
  // Anything after `eval` that is not a benchmark name is kept for the message below.
  eval->allow_extras();
  eval->callback([&, eval] {
    if (!eval->get_subcommands().empty()) return;
    auto rest = eval->remaining();
    code = Fail(2, rest.empty() ? "eval: name a benchmark (known: locomo, paraphrase)"
                                : "eval: unknown benchmark \"" + rest.front() + "\" (known: locomo, paraphrase)");
  });

  static std::string file, conversations;
  static std::vector<int> budgets;
  static int max_questions = 0, max_pages = -1, held_out_from = 5, repeat = 1;
  static std::vector<std::string> settings;
  static std::string questions_out;
  static bool answer = false;
  locomo->add_option("FILE", file, "The LoCoMo file (e.g. locomo10.json)")->required();
  locomo->add_option("--conversations", conversations, "Only these sample ids (comma-separated)");
  locomo->add_option("--budget", budgets, "Context budget(s) in tokens (default 500 1000 2000)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1000000));
  locomo->add_option("--max-questions", max_questions, "At most N questions per conversation (the first ones)")
      ->check(CLI::Range(1, 1000000));
  locomo->add_option("--max-pages", max_pages,
                     "Retrieve with this max_pages instead of a caller's default (0: as many as the budget holds)")
      ->check(CLI::Range(0, 1000));
  locomo
      ->add_option(
          "--set", settings,
          "Retrieve with a ranking constant changed: NAME=VALUE (repeatable; the names of the "
          "retrieve API's `ranking` object, e.g. bm25_k1=1.2)")
      ->allow_extra_args(false);
  locomo->add_option("--held-out-from", held_out_from,
                     "Conversations from this index of the file on (0-based) are reported as held out (default 5)")
      ->check(CLI::Range(0, 1000000));
  locomo
      ->add_option("--repeat", repeat,
                   "Time each question's retrieval N times in a row and also report the fastest "
                   "(latency_ms.warm: a build's cost without a shared host's noise; default 1)")
      ->check(CLI::Range(1, 1000));
  locomo->add_option(
      "--questions-out", questions_out,
      "Write one JSON line per scored question (evidence, ranked refs, recall, and per "
      "budget the recall and the evidence its context misses) to this file");
  locomo->add_flag("--answer", answer,
                   "Also answer each question (categories 1-4) with the configured model and score F1, "
                   "BLEU-1 and an LLM judge");
  locomo->add_flag("--json", cli.g.json, "Print one JSON document on stdout");
  locomo->callback([&] {
    eval::EvalOptions opt;
    opt.conversations = SplitCsv(conversations);
    if (!budgets.empty()) opt.budgets = budgets;
    opt.max_questions = max_questions;
    opt.held_out_from = held_out_from;
    opt.repeat = repeat;
    if (max_pages >= 0) opt.retrieve.max_pages = max_pages;
    for (const std::string& kv : settings) {
      if (Status st = SetRankingOption(kv, opt.retrieve.ranking); !st.ok()) {
        code = Fail(2, "eval locomo --set: " + st.message());
        return;
      }
    }
    if (answer) {
      if (Status st = cli.ConfigureModels(opt.engine); !st.ok()) {
        code = Fail(st);
        return;
      }
      if (!opt.engine.llm) {
        code = Fail(2,
                    "eval --answer: no language model is configured: set ENGRAM_LLM_BASE_URL and "
                    "ENGRAM_LLM_MODEL (and ENGRAM_LLM_API_KEY or OPENAI_API_KEY), the [llm] table of "
                    "engram.toml, or --llm-base-url and --llm-model");
        return;
      }
      opt.answer = true;
    }
    std::ofstream qout;
    if (!questions_out.empty()) {
      qout.open(questions_out, std::ios::trunc);
      if (!qout) {
        code = Fail(1, "eval locomo --questions-out: " + questions_out + ": cannot be written");
        return;
      }
      opt.on_question = [&qout](const std::string& conv, const LocomoQuestion& q,
                                const std::vector<std::string>& evidence,
                                const eval::QuestionScore& sc,
                                const std::vector<std::string>& refs) {
        nlohmann::json line = {{"conversation", conv},
                               {"category", q.category},
                               {"question", q.question},
                               {"answer", q.answer},
                               {"evidence", evidence},
                               {"recall@10", sc.recall[1]},
                               {"budget_recall", sc.budget_recall},
                               {"context_missing", sc.context_missing},
                               {"ranked", refs}};
        qout << line.dump() << "\n";
      };
    }
    // opt.work_dir stays empty: the harness makes and removes its own.
    EvalProgress progress;
    opt.progress = [&progress](std::size_t done, std::size_t total) { progress.Update(done, total); };
    auto r = eval::RunLocomoEval(file, opt);
    opt.progress = nullptr;
    if (!r.ok()) {
      code = Fail(r.status());
      return;
    }
    if (cli.g.json) {
      PrintJson(*r);
    } else {
      PrintTable(*r);
    }
  });

  static std::string para_file = "bench/data/paraphrase.jsonl";
  static std::size_t max_memories = 0;
  static bool model_embedder = false;
  static bool keywords = false;
  static bool direct = false;
  static bool infer = false;
  static bool dialogue = false;
  static std::vector<std::string> para_settings;
  para->add_option("FILE", para_file, "The set, JSON lines (default bench/data/paraphrase.jsonl)");
  para->add_flag("--keywords", keywords,
                 "Ask each memory's keyword queries (\"occupation\", \"favourite sport\") instead of its questions");
  para->add_flag("--direct", direct,
                 "Ask each memory's direct questions (which share a word with it: what meaning "
                 "must not cost)")
      ->excludes(para->get_option("--keywords"));
  para->add_flag("--infer", infer,
                 "Add each memory through inference, as `memory add` does by default, instead of as written");
  para->add_flag(
          "--dialogue", dialogue,
          "Ask a dialogue instead of the fact memory: each memory what the user said in one "
          "exchange, each query asked through retrieve (hit@k: its exchange among the first k "
          "ranked messages)")
      ->excludes(para->get_option("--infer"));
  para->add_option(
          "--set", para_settings,
          "Retrieve with a ranking constant changed: NAME=VALUE (repeatable; the names of the "
          "retrieve API's `ranking` object, e.g. meaning=0)")
      ->allow_extra_args(false);
  para->add_option("--max-memories", max_memories, "Only the first N memories and their questions")
      ->check(CLI::Range(1, 1000000));
  para->add_flag("--model-embedder", model_embedder,
                 "Use the configured embedding endpoint instead of the built-in engine");
  para->add_flag("--json", cli.g.json, "Print one JSON document on stdout");
  para->callback([&] {
    eval::ParaphraseOptions opt;
    opt.max_memories = max_memories;
    opt.keywords = keywords;
    opt.direct = direct;
    opt.infer = infer;
    opt.dialogue = dialogue;
    for (const std::string& kv : para_settings) {
      if (Status st = SetRankingOption(kv, opt.retrieve.ranking); !st.ok()) {
        code = Fail(2, "eval paraphrase --set: " + st.message());
        return;
      }
    }
    if (model_embedder) {
      if (Status st = cli.ConfigureModels(opt.engine); !st.ok()) {
        code = Fail(st);
        return;
      }
      if (!opt.engine.embedder) {
        code = Fail(2,
                    "eval paraphrase --model-embedder: no embedding endpoint is configured: set "
                    "ENGRAM_EMBED_BASE_URL and ENGRAM_EMBED_MODEL, the [embedder] table of engram.toml, or "
                    "the --embed-* options");
        return;
      }
      opt.engine.llm = nullptr;  // memories are added verbatim: no model work but embeddings
      opt.engine.maintainer = nullptr;
    }
    auto r = eval::RunParaphraseEval(para_file, opt);
    if (!r.ok()) {
      code = Fail(r.status());
      return;
    }
    if (cli.g.json) {
      PrintJson(*r);
      return;
    }
    const auto& cfg = (*r)["config"];
    std::cout << (dialogue ? "Paraphrase retrieval of a dialogue ("
                           : "Paraphrase search of the fact memory (")
              << (*r)["overall"]["memories"] << " memories, " << (*r)["overall"]["questions"]
              << (keywords ? " keyword queries"
                  : direct ? " direct questions"
                           : " questions")
              << "; embedder " << cfg["embedder"].get<std::string>() << ", word vectors "
              << (cfg["word_vectors"].is_null() ? std::string("none")
                                                : cfg["word_vectors"].get<std::string>())
              << ")\n\n"
              << Pad("category", 18) << Pad("questions", 11) << Pad("hit@1", 9) << Pad("hit@3", 9)
              << "MRR@10\n";
    auto row = [](const std::string& label, const nlohmann::json& g) {
      std::cout << Pad(label, 18) << Pad(std::to_string(g["questions"].get<std::size_t>()), 11) << Pad(Cell(g["hit@1"]), 9)
                << Pad(Cell(g["hit@3"]), 9) << Cell(g["mrr@10"]) << "\n";
    };
    row("overall", (*r)["overall"]);
    for (const auto& [name, g] : (*r)["by_category"].items()) row(name, g);
    const auto& lat = (*r)["latency_ms"];
    std::cout << "\nlatency      p50 " << lat["p50"] << " ms, p95 " << lat["p95"] << " ms ("
              << lat["calls"] << (dialogue ? " retrievals)\n" : " searches)\n");
    if (dialogue) return;
    const auto& ctx = (*r)["context_latency_ms"];
    std::cout << "context      p50 " << ctx["p50"] << " ms, p95 " << ctx["p95"] << " ms ("
              << ctx["calls"] << " retrievals)\n";
  });
}

}  // namespace engram::cli
