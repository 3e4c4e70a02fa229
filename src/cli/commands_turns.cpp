// CLI: turn add, import, maintain, forget.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "core/dialogue_formats.hpp"
#include "core/time.hpp"
#include "engram/facts.hpp"
#include "memory/stm.hpp"
#include "wire/exported_memories.hpp"

namespace engram::cli {

namespace {

constexpr std::size_t kImportBatch = 500;

// A one-line progress bar on stderr, only when stderr is a terminal.
class Progress {
 public:
  Progress(std::size_t total, const char* what) : total_(total), what_(what), tty_(isatty(2)) {}
  void Update(std::size_t done) {
    if (!tty_ || total_ == 0) return;
    constexpr int kWidth = 30;
    int filled = static_cast<int>(kWidth * done / total_);
    std::cerr << "\r" << what_ << " [" << std::string(filled, '#') << std::string(kWidth - filled, ' ')
              << "] " << done << "/" << total_ << std::flush;
  }
  ~Progress() {
    if (tty_ && total_) std::cerr << "\n";
  }

 private:
  std::size_t total_;
  const char* what_;
  bool tty_;
};

// The whole file: the memory reader takes text (it also serves HTTP bodies).
Result<std::string> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot read \"" + path + "\"");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

void RegisterTurnCommands(CLI::App& app, Cli& cli, int& code) {
  // engram turn add USER_TEXT ASSISTANT_TEXT [--time T]
  auto* turn = app.add_subcommand("turn", "Admit dialogue turns");
  turn->require_subcommand(1);
  auto* add = turn->add_subcommand("add", "Admit one user/assistant exchange into STM");
  static std::string user_text, assistant_text, time_text, metadata, source_ref;
  add->add_option("USER_TEXT", user_text, "What the user said")->required();
  add->add_option("ASSISTANT_TEXT", assistant_text, "What the assistant answered")->required();
  add->add_option("--time", time_text, "When it was said (ISO-8601; default now)");
  add->add_option("--metadata", metadata, "A JSON object stored with the turn");
  add->add_option("--source-ref", source_ref, "Your reference for this turn");
  add->callback([&] {
    if ((code = CheckJsonDepth("--metadata", metadata))) return;
    TurnInput t;
    t.user_text = user_text;
    t.assistant_text = assistant_text;
    t.metadata = metadata;
    t.source_ref = source_ref;
    if (!time_text.empty()) {
      auto tm = ParseTime(time_text);
      if (!tm.ok()) {
        code = Fail(2, "--time: " + tm.status().message());
        return;
      }
      t.event_time = *tm;
    }
    if ((code = cli.OpenEngine())) return;
    auto r = cli.engine->AddTurn(cli.CurrentScope(), t);
    if (!r.ok()) {
      code = Fail(r.status());
      return;
    }
    if (cli.g.json) {
      PrintJson({{"turn_id", r->turn_id}, {"seq", r->seq}, {"promotion_pending", r->promotion_pending}});
    } else {
      std::cout << "admitted turn " << r->seq << (r->promotion_pending ? " (promotion pending: run engram maintain)" : "")
                << "\n";
    }
  });

  // engram import FILE [--format F] [--conversations a,b]
  // The lines of an engram export (turns and memories) are restored into the
  // scopes they name; --tenant/--user/--assistant place the records that name
  // none, and given with an export they must match it (never a silent merge).
  auto* imp = app.add_subcommand("import", "Admit a dialogue file (jsonl, memoryos, locomo) or restore an engram export");
  static std::string file, format = "auto", conversations;
  imp->add_option("FILE", file, "The file to import")->required();
  imp->add_option("--format", format, "auto, jsonl, memoryos or locomo");
  imp->add_option("--conversations", conversations, "Only these LoCoMo sample ids (comma-separated)");
  imp->callback([&] {
    auto fmt = ParseDialogueFormatName(format);
    if (!fmt.ok()) {
      code = Fail(2, "--format: " + fmt.status().message());
      return;
    }
    if (std::error_code ec; std::filesystem::is_directory(file, ec)) {  // would read as an empty file
      code = Fail(Status::IoError("cannot read dialogue file \"" + file + "\": is a directory"));
      return;
    }
    DialogueParseOptions parse_options;
    parse_options.export_scopes = true;  // an export restores every scope it holds
    auto parsed = ParseDialogueFile(file, *fmt, parse_options);  // everything is validated before anything is written
    if (!parsed.ok()) {
      code = Fail(parsed.status().code() == StatusCode::kInvalidArgument ? 2 : 1,
                  parsed.status().ToString());
      return;
    }
    // Memories of an engram export ({"type": "fact"}, kinds memory and
    // procedural) are re-added after the turns, verbatim, in their own scopes.
    std::vector<wire::ExportedMemory> memories;
    if (*fmt == DialogueFormat::kAuto || *fmt == DialogueFormat::kJsonl) {
      auto content = ReadAll(file);
      if (!content.ok()) {
        code = Fail(content.status());
        return;
      }
      auto m = wire::ParseExportedMemories(*content, file);
      if (!m.ok()) {
        code = Fail(2, m.status().ToString());
        return;
      }
      memories = std::move(*m);
    }
    auto wanted = SplitCsv(conversations);
    std::vector<ParsedDialogue> dialogues;
    for (auto& d : *parsed) {
      if (wanted.empty() || std::find(wanted.begin(), wanted.end(), d.id) != wanted.end())
        dialogues.push_back(std::move(d));
    }
    if (!wanted.empty() && dialogues.size() != wanted.size()) {
      code = Fail(2, "--conversations: some ids are not in " + file);
      return;
    }
    // An export names its scopes: a scope flag given on the command line
    // must agree with every scope of the file (it never moves an export).
    auto conflict = [&](const char* flag, const std::string& given, const std::string& in_file, int line,
                        const char* what) {
      if (!cli.Given(flag) || given == in_file) return false;
      code = Fail(2, std::string(flag) + " " + given + ": " + file + " line " + std::to_string(line) + " holds " +
                         what + " exported from " + std::string(flag).substr(2) + " \"" + in_file +
                         "\"; an export is restored into the scopes it names (import it without " + flag + ")");
      return true;
    };
    for (const auto& d : dialogues) {
      if (!d.scope) continue;
      if (conflict("--tenant", cli.g.tenant, d.scope->tenant, d.first_line, "turns") ||
          conflict("--user", cli.g.user, d.scope->user, d.first_line, "turns") ||
          conflict("--assistant", cli.g.assistant, d.scope->assistant, d.first_line, "turns")) {
        return;
      }
    }
    for (const auto& m : memories) {
      if (conflict("--tenant", cli.g.tenant, m.scope.tenant, m.line, "a memory") ||
          conflict("--user", cli.g.user, m.scope.user, m.line, "a memory")) {
        return;
      }
    }
    auto scope_of = [&](const ParsedDialogue& d) {
      if (d.scope) return *d.scope;
      Scope scope = cli.CurrentScope();
      // Several dialogues never share a scope: each gets its own user id.
      if (!d.id.empty() && (cli.g.user.empty() || dialogues.size() > 1)) {
        scope.user = cli.g.user.empty() ? d.id : cli.g.user + "/" + d.id;
      }
      return scope;
    };
    // The engine validates each batch only as it admits it: check every turn
    // first, so that a bad turn late in the file admits nothing.
    for (const auto& d : dialogues) {
      if (Status st = Engine::ValidateScope(scope_of(d)); !st.ok()) {
        code = d.scope ? Fail(2, file + ": line " + std::to_string(d.first_line) + ": " + st.message()) : Fail(st);
        return;
      }
      for (std::size_t i = 0; i < d.turns.size(); ++i) {
        if (Status st = memory::ValidateTurn(d.turns[i]); !st.ok()) {
          code = Fail(Status::InvalidArgument(file + ": " + (d.id.empty() ? "" : d.id + ": ") + "turn " +
                                              std::to_string(i + 1) + ": " + st.message()));
          return;
        }
      }
    }
    for (const auto& m : memories) {  // (likewise every memory)
      if (Status st = Engine::ValidateMemoryAdd(m.scope, {m.message}, m.options); !st.ok()) {
        code = Fail(Status::InvalidArgument(file + ": line " + std::to_string(m.line) + ": " + st.message()));
        return;
      }
    }
    if ((code = cli.OpenEngine())) return;
    std::size_t total = 0;
    for (const auto& d : dialogues) total += d.turns.size();
    Progress progress(total, "importing");
    std::size_t done = 0, replayed = 0;
    nlohmann::json scopes = nlohmann::json::array();
    std::size_t scopes_admitted = 0;
    for (std::size_t n = 0; n < dialogues.size(); ++n) {
      const auto& d = dialogues[n];
      if (d.turns.empty()) continue;  // e.g. the plain records of an export that holds only memories
      Scope scope = scope_of(d);
      for (std::size_t i = 0; i < d.turns.size(); i += kImportBatch) {
        std::vector<TurnInput> batch(d.turns.begin() + static_cast<std::ptrdiff_t>(i),
                                     d.turns.begin() + static_cast<std::ptrdiff_t>(std::min(i + kImportBatch, d.turns.size())));
        // The same batch of the same place in a file imported again (a rerun
        // of a restore, a retried script, however much later) is admitted
        // once: its key is kept as long as the scope.
        AdmitOptions once;
        once.keep_key = true;
        once.idempotency_key = "import:" + std::to_string(n) + ":" + std::to_string(i) + ":" +
                               std::to_string(memory::TurnsFingerprint(batch));
        auto r = cli.engine->AddTurns(scope, batch, once);
        if (!r.ok()) {
          code = Fail(r.status().code() == StatusCode::kInvalidArgument ? 2 : 1,  // one line on stderr
                      r.status().ToString() + " (" + std::to_string(done) + " turns were admitted before it)");
          return;
        }
        if (!r->empty() && r->front().replayed) {
          replayed += batch.size();
        } else {
          done += batch.size();
        }
        progress.Update(done + replayed);
      }
      scopes.push_back({{"tenant", scope.tenant}, {"user", scope.user}, {"assistant", scope.assistant},
                        {"turns", d.turns.size()}, {"source_utterances", d.source_utterances}});
      ++scopes_admitted;
    }
    std::size_t memories_added = 0;
    for (const auto& m : memories) {
      auto r = cli.engine->AddMemory(m.scope, {m.message}, m.options);
      if (!r.ok()) {
        code = Fail(r.status().code() == StatusCode::kInvalidArgument ? 2 : 1,
                    r.status().ToString() + " (" + std::to_string(memories_added) + " memories were added before it)");
        return;
      }
      for (const auto& e : r->results) memories_added += e.event == "NOOP" ? 0 : 1;
    }
    auto stats = cli.engine->GetStats(nullptr);
    if (cli.g.json) {
      PrintJson({{"turns_admitted", done}, {"turns_already_imported", replayed}, {"scopes", scopes},
                 {"memories_added", memories_added},
                 {"memories_read", memories.size()}, {"pending_jobs", stats.ok() ? stats->pending_jobs : 0}});
    } else {
      std::cout << "admitted " << done << " turns into " << scopes_admitted << " scope(s)";
      if (replayed > 0) std::cout << " (" << replayed << " turns already imported from this file: skipped)";
      if (!memories.empty()) std::cout << "; added " << memories_added << " of " << memories.size() << " memories";
      if (stats.ok() && stats->pending_jobs > 0) {
        std::cout << "; " << stats->pending_jobs << " maintenance job(s) pending: run engram maintain";
      }
      std::cout << "\n";
    }
  });

  // engram maintain [--retry-failed] [--job-lease SECONDS]
  auto* maint = app.add_subcommand("maintain", "Run pending promotion and consolidation to completion");
  static bool retry_failed = false, all_scopes = false;
  maint->add_flag("--retry-failed", retry_failed, "Retry jobs that failed before");
  maint->add_flag("--all", all_scopes, "All scopes (default: all scopes unless --user is given)");
  static int maint_job_lease = EngineOptions{}.job_lease_seconds;
  AddJobLeaseOption(maint, maint_job_lease);
  maint->callback([&] {
    EngineOptions opts;
    opts.job_lease_seconds = maint_job_lease;
    if ((code = cli.OpenEngine(std::move(opts)))) return;
    if (retry_failed) {
      auto n = cli.engine->RetryFailedJobs();
      if (!n.ok()) {
        code = Fail(n.status());
        return;
      }
    }
    Scope scope = cli.CurrentScope();
    bool one = !cli.g.user.empty() && !all_scopes;
    auto r = cli.engine->Maintain(one ? &scope : nullptr);
    if (!r.ok()) {
      code = Fail(r.status());
      return;
    }
    if (cli.g.json) {
      PrintJson(ToJson(*r));
    } else {
      std::cout << "promoted " << r->pages_created << " turns into pages (" << r->segments_created
                << " new segments, " << r->segments_merged << " merged, " << r->segments_archived
                << " archived); consolidated " << r->consolidations << " batches (" << r->facts_added
                << " facts, " << r->profile_slots_updated << " profile updates)";
      if (r->jobs_failed) std::cout << "; " << r->jobs_failed << " job(s) failed (see engram stats)";
      if (r->degraded) std::cout << " [built-in engine: degraded]";
      std::cout << "\n";
    }
    if (r->jobs_failed) code = 1;
  });

  // engram forget --user U
  auto* forget = app.add_subcommand("forget", "Erase all of a user's memory (all assistants)");
  forget->callback([&] {
    if (cli.g.user.empty()) {
      code = Fail(2, "forget: --user is required");
      return;
    }
    if ((code = cli.OpenEngine())) return;
    auto r = cli.engine->ForgetUser(cli.g.tenant, cli.g.user);
    if (!r.ok()) {
      code = Fail(r.status());
      return;
    }
    if (cli.g.json) {
      PrintJson({{"user", cli.g.user}, {"turns_erased", *r}});
    } else {
      std::cout << "erased user " << cli.g.user << ": " << *r
                << " turns and everything derived from them, and every memory of the user (all assistants, agents "
                   "and runs)\n";
    }
  });
}

}  // namespace engram::cli
