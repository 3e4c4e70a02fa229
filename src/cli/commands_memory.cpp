// CLI: engram memory add|search|get|list|update|delete|delete-all|purge|history
// (the fact memory, docs/MEMORY_API.md). The scope is --tenant, --user,
// --agent and --run (without any of the last three, the default user of the
// other commands); --narrower also sees narrower scopes. Errors name the
// field; exit codes: 2 invalid arguments, 1 other failures (not found
// included).
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "core/json_keys.hpp"
#include "core/time.hpp"

namespace engram::cli {

namespace {

using nlohmann::json;

struct MemoryFlags {
  std::string agent, run, metadata, key, expires, time, actor, role = "user", messages_file, filters, cursor;
  std::string text;
  std::vector<std::string> texts;
  bool infer = true, procedural = false, narrower = false, include_expired = false, explain = false;
  bool no_expiry = false, all = false;
  int top_k = 20, limit = 100;
  double threshold = 0.0;
  std::string id;
};

MemoryFlags& F() {
  static MemoryFlags f;
  return f;
}

MemoryScope ScopeOf(const Cli& cli) {
  MemoryScope s;
  s.tenant = cli.g.tenant;
  s.user = cli.g.user;
  s.agent = F().agent;
  s.run = F().run;
  // No --user: $ENGRAM_USER, else, when no --agent or --run names the scope
  // either, the default user of every other command ("default").
  if (s.user.empty() && (!Cli::EnvUser().empty() || (s.agent.empty() && s.run.empty()))) {
    s.user = cli.CurrentScope().user;
  }
  s.include_narrower = F().narrower;
  return s;
}

void PrintItem(const MemoryItem& m) {
  std::cout << m.id << "  " << m.memory;
  if (m.score > 0) std::cout << "  (score " << m.score << ")";
  if (m.expired) std::cout << "  [expired]";
  std::cout << "\n";
  if (m.score_details) {  // --explain: the components the score is made of, and where the memory came from
    const MemoryScoreDetails& d = *m.score_details;
    std::cout << "    vector " << d.vector << "  semantic " << d.semantic << "  lexical " << d.lexical << "  entity "
              << d.entity << "  bm25 " << d.bm25 << "  found by";
    if (d.from_vector) std::cout << " vector";
    if (d.from_semantic) std::cout << " meaning";
    if (d.from_lexical) std::cout << " words";
    if (d.from_entity) std::cout << " entity";
    for (std::size_t i = 0; i < d.entities.size(); ++i) std::cout << (i ? ", " : "  entities: ") << d.entities[i];
    std::cout << "\n";
  }
}

// Parses an optional time flag into *out; false (with the exit code set) on error.
bool Time(const std::string& text, const char* flag, std::optional<TimeMs>* out, int& code) {
  if (text.empty()) return true;
  auto t = ParseTime(text);
  if (!t.ok()) {
    code = Fail(2, std::string(flag) + ": " + t.status().message());
    return false;
  }
  *out = *t;
  return true;
}

// Messages of `memory add`: --messages FILE ("-" = stdin, a JSON array of
// {role, content, name}) or the TEXT arguments as messages of --role.
bool Messages(std::vector<MemoryMessage>* out, int& code) {
  const auto& f = F();
  if (!f.messages_file.empty()) {
    std::stringstream ss;
    if (f.messages_file == "-") {
      ss << std::cin.rdbuf();
    } else {
      std::ifstream in(f.messages_file);
      if (!in) {
        code = Fail(1, "--messages: cannot read " + f.messages_file);
        return false;
      }
      ss << in.rdbuf();
    }
    if ((code = CheckJsonDepth("--messages", ss.str()))) return false;
    json_limits::DuplicateKeys keys;
    json j = json::parse(ss.str(), std::ref(keys), false);
    if (keys.found()) {
      code = Fail(2, "--messages: " + keys.Message());
      return false;
    }
    if (j.is_object()) j = json::array({j});
    if (!j.is_array()) {
      code = Fail(2, "--messages: expected a JSON array of {role, content, name}");
      return false;
    }
    for (std::size_t i = 0; i < j.size(); ++i) {
      const json& m = j[i];
      if (!m.is_object() || !m.contains("content") || !m["content"].is_string()) {
        code = Fail(2, "--messages[" + std::to_string(i) + "].content: expected a string");
        return false;
      }
      out->push_back({m.value("role", "user"), m["content"].get<std::string>(), m.value("name", "")});
    }
  }
  for (const auto& t : f.texts) out->push_back({f.role, t, ""});
  if (out->empty()) {
    code = Fail(2, "memory add: give TEXT or --messages");
    return false;
  }
  return true;
}

void AddScopeOptions(CLI::App* sub) {
  sub->add_option("--agent", F().agent, "Agent id of the memory scope")->check(NonEmpty());
  sub->add_option("--run", F().run, "Run id of the memory scope")->check(NonEmpty());
  sub->add_flag("--narrower", F().narrower, "Also see narrower scopes (other agent/run ids of the user)");
}

}  // namespace

void RegisterMemoryCommands(CLI::App& app, Cli& cli, int& code) {
  auto* mem = app.add_subcommand("memory", "Fact memory: add, search, get, list, update, delete, purge, history");
  mem->require_subcommand(1);
  MemoryFlags& f = F();
  // (code outlives the callbacks: it is main's.)
  int* code_ptr = &code;
  auto done = [code_ptr](const Status& st) {
    if (!st.ok()) *code_ptr = Fail(st);
    return st.ok();
  };

  auto* add = mem->add_subcommand("add", "Add memories from text or messages");
  add->add_option("TEXT", f.texts, "Message text(s)");
  add->add_option("--role", f.role, "Role of the TEXT messages (user, assistant, tool)")
      ->check(CLI::IsMember({"user", "assistant", "tool"}));
  add->add_option("--messages", f.messages_file, "JSON array of {role, content, name} (file or - for stdin)");
  add->add_flag("--infer,!--no-infer", f.infer, "Extract facts (default) or store messages verbatim");
  add->add_flag("--procedural", f.procedural, "Summarise an agent's execution history (needs an LLM)");
  add->add_option("--metadata", f.metadata, "A JSON object stored with each memory");
  add->add_option("--idempotency-key", f.key, "Retries with the same key return the first outcome");
  add->add_option("--expires", f.expires, "Expiry time (ISO-8601)");
  add->add_option("--time", f.time, "When it was observed (ISO-8601; default now)");
  add->add_option("--actor", f.actor, "Who performs the operation (history)");
  AddScopeOptions(add);
  add->callback([&, done] {
    if ((code = CheckJsonDepth("--metadata", f.metadata))) return;
    std::vector<MemoryMessage> msgs;
    if (!Messages(&msgs, code)) return;
    MemoryAddOptions o;
    o.infer = f.infer;
    o.procedural = f.procedural;
    o.metadata = f.metadata;
    o.idempotency_key = f.key;
    o.actor = f.actor;
    if (!Time(f.expires, "--expires", &o.expires_at, code) || !Time(f.time, "--time", &o.event_time, code)) return;
    if ((code = cli.OpenEngine())) return;
    auto r = cli.engine->AddMemory(ScopeOf(cli), msgs, o);
    if (!done(r.status())) return;
    if (cli.g.json) {
      PrintJson(ToJson(*r));
    } else {
      if (r->replayed) {
        std::cout << "replayed: the idempotency key was used before; its first outcome (nothing was added now)\n";
      }
      for (const auto& e : r->results) std::cout << e.event << " " << e.id << "  " << e.memory << "\n";
      if (!r->note.empty()) {
        std::cout << r->note << "\n";
      } else if (r->results.empty()) {
        std::cout << "nothing stored\n";
      }
      if (r->degraded) std::cout << "[built-in engine: degraded]\n";
    }
  });

  auto* search = mem->add_subcommand("search", "Search memories (score in [0, 1])");
  search->add_option("QUERY", f.text, "The query")->required();
  search->add_option("--top-k", f.top_k, "Results at most (1..1000)");
  search->add_option("--threshold", f.threshold, "Minimum score (0..1)");
  search->add_option("--filters", f.filters, "Filter JSON, e.g. '{\"rating\": {\"gte\": 4}}'");
  search->add_flag("--include-expired", f.include_expired, "Include expired memories");
  search->add_flag("--explain", f.explain, "Show the score components");
  AddScopeOptions(search);
  search->callback([&, done] {
    if ((code = CheckJsonDepth("--filters", f.filters))) return;
    if ((code = cli.OpenEngine())) return;
    MemorySearchOptions o{f.top_k, f.threshold, f.filters, f.include_expired, f.explain};
    auto r = cli.engine->SearchMemories(ScopeOf(cli), f.text, o);
    if (!done(r.status())) return;
    if (cli.g.json) {
      json res = json::array();
      for (const auto& m : *r) res.push_back(ToJson(m));
      PrintJson({{"results", res}});
    } else {
      for (const auto& m : *r) PrintItem(m);
    }
  });

  auto* get = mem->add_subcommand("get", "Show one memory");
  get->add_option("ID", f.id, "Memory id")->required();
  AddScopeOptions(get);
  get->callback([&, done] {
    if ((code = cli.OpenEngine())) return;
    auto r = cli.engine->GetMemory(ScopeOf(cli), f.id);
    if (!done(r.status())) return;
    if (cli.g.json) PrintJson(ToJson(*r)); else PrintItem(*r);
  });

  auto* list = mem->add_subcommand("list", "List memories, newest first (paginated)");
  list->add_option("--filters", f.filters, "Filter JSON");
  list->add_option("--cursor", f.cursor, "next_cursor of the previous page");
  list->add_option("--limit", f.limit, "Items per page (1..1000)");
  list->add_flag("--include-expired", f.include_expired, "Include expired memories");
  AddScopeOptions(list);
  list->callback([&, done] {
    if ((code = CheckJsonDepth("--filters", f.filters))) return;
    if ((code = cli.OpenEngine())) return;
    MemoryListOptions o{f.filters, f.cursor, f.limit, f.include_expired};
    auto r = cli.engine->ListMemories(ScopeOf(cli), o);
    if (!done(r.status())) return;
    if (cli.g.json) {
      json res = json::array();
      for (const auto& m : r->items) res.push_back(ToJson(m));
      PrintJson({{"results", res}, {"next_cursor", r->next_cursor.empty() ? json(nullptr) : json(r->next_cursor)}});
    } else {
      for (const auto& m : r->items) PrintItem(m);
      if (!r->next_cursor.empty()) std::cout << "more: --cursor " << r->next_cursor << "\n";
    }
  });

  auto* update = mem->add_subcommand("update", "Change a memory (a new version)");
  update->add_option("ID", f.id, "Memory id")->required();
  update->add_option("--text", f.text, "New text");
  update->add_option("--metadata", f.metadata, "New metadata (JSON object)");
  update->add_option("--expires", f.expires, "New expiry (ISO-8601)");
  update->add_flag("--no-expiry", f.no_expiry, "Remove the expiry");
  update->add_option("--actor", f.actor, "Who performs the operation (history)");
  AddScopeOptions(update);
  update->callback([&, done] {
    if ((code = CheckJsonDepth("--metadata", f.metadata))) return;
    MemoryUpdate u;
    if (!f.text.empty()) u.text = f.text;
    if (!f.metadata.empty()) u.metadata = f.metadata;
    if (!Time(f.expires, "--expires", &u.expires_at, code)) return;
    u.clear_expiry = f.no_expiry;
    u.actor = f.actor;
    if ((code = cli.OpenEngine())) return;
    auto r = cli.engine->UpdateMemory(ScopeOf(cli), f.id, u);
    if (!done(r.status())) return;
    if (cli.g.json) PrintJson(ToJson(*r)); else std::cout << "updated " << r->id << " to version " << r->version << "\n";
  });

  auto* del = mem->add_subcommand("delete", "Delete a memory (history keeps it)");
  del->add_option("ID", f.id, "Memory id")->required();
  del->add_option("--actor", f.actor, "Who performs the operation (history)");
  AddScopeOptions(del);
  del->callback([&, done] {
    if ((code = cli.OpenEngine())) return;
    if (!done(cli.engine->DeleteMemory(ScopeOf(cli), f.id, f.actor))) return;
    if (cli.g.json) PrintJson({{"id", f.id}, {"deleted", true}}); else std::cout << "deleted " << f.id << "\n";
  });

  auto* del_all = mem->add_subcommand("delete-all", "Delete every memory of exactly this scope");
  del_all->add_option("--actor", f.actor, "Who performs the operation (history)");
  AddScopeOptions(del_all);
  del_all->callback([&, done] {
    if ((code = cli.OpenEngine())) return;
    auto r = cli.engine->DeleteAllMemories(ScopeOf(cli), f.actor);
    if (!done(r.status())) return;
    if (cli.g.json) PrintJson({{"deleted", *r}}); else std::cout << "deleted " << *r << " memories\n";
  });

  auto* purge = mem->add_subcommand("purge", "Erase a memory's content everywhere (privacy requests)");
  purge->add_option("ID", f.id, "Memory id (or --all for the whole scope)");
  purge->add_flag("--all", f.all, "Purge every memory of the scope");
  AddScopeOptions(purge);
  purge->callback([&, done] {
    if (f.id.empty() == !f.all) {
      code = Fail(2, "memory purge: give an ID or --all (not both)");
      return;
    }
    if ((code = cli.OpenEngine())) return;
    auto r = f.all ? cli.engine->PurgeMemories(ScopeOf(cli)) : cli.engine->PurgeMemory(ScopeOf(cli), f.id);
    if (!done(r.status())) return;
    if (cli.g.json) {
      PrintJson({{"memories", r->memories}, {"versions", r->rows}});
    } else {
      std::cout << "purged " << r->memories << " memories (" << r->rows << " versions)\n";
    }
  });

  auto* hist = mem->add_subcommand("history", "Show a memory's events");
  hist->add_option("ID", f.id, "Memory id")->required();
  AddScopeOptions(hist);
  hist->callback([&, done] {
    if ((code = cli.OpenEngine())) return;
    auto r = cli.engine->MemoryHistory(ScopeOf(cli), f.id);
    if (!done(r.status())) return;
    if (cli.g.json) {
      json res = json::array();
      for (const auto& e : *r) res.push_back(ToJson(e));
      PrintJson({{"results", res}});
    } else {
      for (const auto& e : *r) {
        std::cout << FormatIso8601(e.at) << "  v" << e.version << "  " << e.event << "  "
                  << (e.new_text ? *e.new_text : (e.old_text ? *e.old_text : "")) << "\n";
      }
    }
  });
}

}  // namespace engram::cli
