// Routes of the dialogue memory: turns, retrieve, chat, import, export,
// maintain, forget.
#include <algorithm>

#include "core/dialogue_formats.hpp"
#include "memory/stm.hpp"
#include "server/api.hpp"
#include "wire/args.hpp"
#include "wire/exported_memories.hpp"
#include "wire/json.hpp"

namespace engram::server {

using nlohmann::json;

namespace {

constexpr long long kMaxTurnsPerRequest = 10000;

// One turn: a batch item, or (top_level) the request itself, which also
// holds the scope fields.
TurnInput ReadTurn(const json& t, const std::string& at, bool top_level) {
  if (!t.is_object()) Throw(400, "invalid_argument", at + ": expected an object", "turns");
  wire::Args a(t, "field");
  if (top_level) {
    a.Only({"user_text", "assistant_text", "time", "metadata", "source_ref", "user_name", "assistant_name",
            "user_source_ref", "assistant_source_ref", "user", "assistant", "idempotency_key"});
  } else {
    a.Only({"user_text", "assistant_text", "time", "metadata", "source_ref", "user_name", "assistant_name",
            "user_source_ref", "assistant_source_ref"});
  }
  TurnInput in;
  in.user_text = a.Str("user_text", false, false);
  in.assistant_text = a.Str("assistant_text", false, false);
  in.event_time = a.Time("time");
  in.metadata = a.Object("metadata");
  in.source_ref = a.Str("source_ref", false, false);
  in.user_name = a.Str("user_name", false, false);
  in.assistant_name = a.Str("assistant_name", false, false);
  in.user_source_ref = a.Str("user_source_ref", false, false);
  in.assistant_source_ref = a.Str("assistant_source_ref", false, false);
  if (!a.ok()) Throw(400, "invalid_argument", at + ": " + a.error(), a.field());
  if (Status st = memory::ValidateTurn(in); !st.ok()) Throw(400, "invalid_argument", at + ": " + st.message());
  return in;
}

json AddSummary(const MaintainReport& r, MaintainReport* total) {
  total->promotions += r.promotions;
  total->pages_created += r.pages_created;
  total->segments_created += r.segments_created;
  total->segments_merged += r.segments_merged;
  total->segments_archived += r.segments_archived;
  total->consolidations += r.consolidations;
  total->facts_added += r.facts_added;
  total->profile_slots_updated += r.profile_slots_updated;
  total->jobs_failed += r.jobs_failed;
  total->model_calls += r.model_calls;
  total->degraded = total->degraded || r.degraded;
  return wire::ToJson(*total);
}

json ChatJson(const ChatReply& r) {
  json used = json::array();
  for (const auto& i : r.used) used.push_back(wire::ToJson(i));
  return {{"answer", r.answer},       {"turn_id", r.turn_id ? json(r.turn_id) : json(nullptr)},
          {"run_id", r.run_id},       {"prompt_tokens", r.prompt_tokens},
          {"completion_tokens", r.completion_tokens}, {"model_calls", r.model_calls},
          {"used", used}};
}

std::string Event(const char* name, const json& data) {
  return std::string("event: ") + name + "\ndata: " + wire::Dump(data) + "\n\n";
}

}  // namespace

void Api::RegisterTurns(HttpServer& s) {
  // Body limits: batches and imports up to --max-body, a chat message like
  // one write, the others a query.
  Add(s, "POST", "/v1/turns", Role::kWrite, true, [this](Call& c) { return AddTurns(c); }, kBulkBodyBytes);
  Add(s, "GET", "/v1/turns", Role::kRead, false, [this](Call& c) { return ListTurns(c); });
  Add(s, "POST", "/v1/retrieve", Role::kRead, true, [this](Call& c) { return Retrieve(c); }, kQueryBodyBytes);
  Add(s, "POST", "/v1/chat", Role::kWrite, true, [this](Call& c) { return Chat(c); }, kWriteBodyBytes);
  Add(s, "POST", "/v1/import", Role::kWrite, false, [this](Call& c) { return Import(c); }, kBulkBodyBytes);
  Add(s, "GET", "/v1/export", Role::kRead, false, [this](Call& c) { return Export(c); });
  Add(s, "POST", "/v1/maintain", Role::kWrite, true, [this](Call& c) { return Maintain(c); }, kQueryBodyBytes);
  Add(s, "POST", "/v1/forget", Role::kAdmin, true, [this](Call& c) { return Forget(c); }, kQueryBodyBytes);
}

HttpResponse Api::AddTurns(Call& c) {
  const Scope scope = TurnScope(c);
  std::vector<TurnInput> turns;
  if (c.body.contains("turns")) {
    wire::Args a(c.body, "field");
    a.Only({"user", "assistant", "turns", "idempotency_key"});
    CheckArgs(a);
    const json& list = c.body["turns"];
    if (!list.is_array() || list.empty()) Throw(400, "invalid_argument", "field 'turns' must be a non-empty array", "turns");
    if (static_cast<long long>(list.size()) > kMaxTurnsPerRequest) {
      Throw(400, "invalid_argument", "field 'turns': at most " + std::to_string(kMaxTurnsPerRequest) + " per request",
            "turns");
    }
    for (std::size_t i = 0; i < list.size(); ++i) turns.push_back(ReadTurn(list[i], "turns[" + std::to_string(i) + "]", false));
  } else {
    turns.push_back(ReadTurn(c.body, "turn", true));
  }
  // A retry with the same key (header or field) admits nothing and answers
  // with the first admission's turns.
  wire::Args k(c.body, "field");
  AdmitOptions options;
  options.idempotency_key = k.Str("idempotency_key", false);
  CheckArgs(k);
  options.idempotency_key = IdempotencyKey(c, options.idempotency_key);
  const QuotaAsk ask = TurnsAsk(turns);
  QuotaHold hold = CheckQuota(c, ask, !options.idempotency_key.empty());
  options.replay_only = !hold.over().empty();
  auto admitted = CheckWrite(engine().AddTurns(scope, turns, options), c, hold.over());  // one transaction: all or nothing
  const bool replayed = !admitted.empty() && admitted.front().replayed;
  if (!replayed) hold.Charge();
  json out = json::array();
  for (const auto& r : admitted) {
    out.push_back({{"turn_id", r.turn_id}, {"seq", r.seq}, {"promotion_pending", r.promotion_pending}});
  }
  return Json(replayed ? 200 : 201,
              {{"user", scope.user}, {"assistant", scope.assistant}, {"admitted", out}, {"replayed", replayed}});
}

HttpResponse Api::ListTurns(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "assistant", "after", "limit"});
  const auto after = a.Int("after", 0, INT64_MAX);
  const auto limit = a.Int("limit", 1, 1000);
  CheckArgs(a);
  const Scope scope = TurnScope(c);
  const int n = static_cast<int>(limit.value_or(100));
  auto turns = Check(engine().ListTurns(scope, after.value_or(0), n));
  json list = json::array();
  for (const auto& t : turns) list.push_back(wire::ToJson(t));
  json next = static_cast<int>(turns.size()) == n ? json(turns.back().seq) : json(nullptr);
  return Json(200, {{"user", scope.user}, {"assistant", scope.assistant}, {"turns", list}, {"next_after", next}});
}

HttpResponse Api::Retrieve(Call& c) {
  wire::Args a(c.body, "field");
  a.Only({"user", "assistant", "query", "budget", "max_pages", "max_segments", "max_facts", "include_stm",
          "include_profile", "explain", "ranking"});
  const std::string query = a.Str("query", true);
  RetrieveOptions o;
  o.budget_tokens = static_cast<int>(a.Int("budget", 1, 100000).value_or(o.budget_tokens));
  o.max_pages = static_cast<int>(a.Int("max_pages", 0, 1000).value_or(o.max_pages));
  o.max_segments = static_cast<int>(a.Int("max_segments", 1, 1000).value_or(o.max_segments));
  o.max_facts = static_cast<int>(a.Int("max_facts", 0, 1000).value_or(o.max_facts));
  o.include_stm = a.Bool("include_stm").value_or(true);
  o.include_profile = a.Bool("include_profile").value_or(true);
  a.Ranking("ranking", &o.ranking);
  const bool explain = a.Bool("explain").value_or(false);
  o.explain = explain;
  CheckArgs(a);
  const Scope scope = TurnScope(c);
  auto r = Check(engine().Retrieve(scope, query, o));
  json out = wire::RetrievalJson(query, o.budget_tokens, r);
  if (explain) {  // each item's reasons (ExplainItem); nothing else changes
    const bool semantic = engine().EmbedderName().rfind("builtin", 0) != 0;
    for (std::size_t i = 0; i < r.items.size(); ++i) {
      const RetrievedItem& item = r.items[i];
      int rank = 0;
      for (std::size_t k = 0; k < r.ranked.size() && !rank; ++k) {
        const RetrievedItem& x = r.ranked[k];
        if (x.turn_id != 0 && x.turn_id == item.turn_id) rank = static_cast<int>(k) + 1;
      }
      out["items"][i]["part"] = item.part;
      out["items"][i]["why"] = ExplainItem(item, query, semantic, rank, o.ranking);
    }
  }
  return Json(200, out);
}

HttpResponse Api::Chat(Call& c) {
  wire::Args a(c.body, "field");
  a.Only({"user", "assistant", "message", "stream", "persona", "language", "answer_length", "max_answer_tokens",
          "budget", "admit", "user_name", "assistant_name"});
  const std::string message = a.Str("message", true);
  const bool stream = a.Bool("stream").value_or(false);
  ChatOptions o;
  if (auto p = a.OptStr("persona")) o.persona = *p;
  o.language = a.Str("language", false);
  o.answer_length = a.Str("answer_length", false);
  o.max_answer_tokens = static_cast<int>(a.Int("max_answer_tokens", 1, 1000000).value_or(0));
  o.retrieve.budget_tokens = static_cast<int>(a.Int("budget", 1, 100000).value_or(o.retrieve.budget_tokens));
  o.admit = a.Bool("admit").value_or(true);
  o.user_name = a.Str("user_name", false);
  o.assistant_name = a.Str("assistant_name", false);
  CheckArgs(a);
  const Scope scope = TurnScope(c);
  // An admitted exchange counts against the quotas (the answer's size is not
  // known before: the question's is checked, the whole exchange charged).
  QuotaHold hold;
  if (o.admit) hold = CheckQuota(c, QuotaAsk{1, 0, static_cast<std::int64_t>(message.size())}, false);
  if (!stream) {
    ChatReply reply = Check(engine().Chat(scope, message, o));
    hold.Charge(QuotaAsk{1, 0, static_cast<std::int64_t>(message.size() + reply.answer.size())});
    return Json(200, ChatJson(reply));
  }
  if (!chat_model_) {  // the answer the engine gives without streaming, before the stream starts
    Throw(409, "failed_precondition",
          "no language model is configured: set ENGRAM_LLM_BASE_URL and ENGRAM_LLM_MODEL (and "
          "ENGRAM_LLM_API_KEY or OPENAI_API_KEY), or the [llm] table of engram.toml");
  }
  HttpResponse r;
  r.content_type = "text/event-stream";
  Engine* e = engine_.load();
  const std::string request_id = c.req.request_id;
  // The claim lasts as long as the stream (the stream's function is copied).
  auto held = std::make_shared<QuotaHold>(std::move(hold));
  r.stream = [e, scope, message, o, request_id, held](const StreamWriter& write) mutable {
    o.on_delta = [&write](std::string_view d) { write(Event("delta", {{"text", std::string(d)}})); };
    auto reply = e->Chat(scope, message, o);
    if (reply.ok()) {
      held->Charge(QuotaAsk{1, 0, static_cast<std::int64_t>(message.size() + reply->answer.size())});
      write(Event("done", ChatJson(*reply)));
      return;
    }
    ApiError err = FromStatus(reply.status());
    write(Event("error", {{"error", {{"code", err.code}, {"message", err.message}, {"request_id", request_id}}}}));
  };
  return r;
}

HttpResponse Api::Import(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "assistant", "format"});
  const std::string format_name = a.Str("format", false);
  CheckArgs(a);
  const Scope base = TurnScope(c);
  auto format = ParseDialogueFormatName(format_name.empty() ? "auto" : format_name);
  if (!format.ok()) Throw(400, "invalid_argument", "format: " + format.status().message(), "format");
  // Everything is read and checked before anything is written; nothing is
  // parsed that nests deeper than the limit.
  CheckJsonDepth(c.req.body, "", "invalid_json");
  // Export lines go back into the scopes they name (in the key's tenant);
  // other records into the scope of the parameters.
  DialogueParseOptions parse_options;
  parse_options.export_scopes = true;
  auto dialogues = Check(ParseDialogueText(c.req.body, *format, parse_options));
  std::vector<wire::ExportedMemory> memories;
  if (*format == DialogueFormat::kAuto || *format == DialogueFormat::kJsonl) {
    memories = Check(wire::ParseExportedMemories(c.req.body, "body"));
  }
  std::vector<Scope> scopes;
  for (const auto& d : dialogues) {
    Scope s = base;
    if (d.scope) {
      s.user = d.scope->user;
      s.assistant = d.scope->assistant;
    } else if (!d.id.empty() && dialogues.size() > 1) {
      s.user = base.user + "/" + d.id;  // dialogues never share a scope
    }
    Check(Engine::ValidateScope(s));
    RequireUser(c, s.user);
    for (std::size_t i = 0; i < d.turns.size(); ++i) {
      if (Status st = memory::ValidateTurn(d.turns[i]); !st.ok()) {
        Throw(400, "invalid_argument", (d.id.empty() ? "" : d.id + ": ") + "turn " + std::to_string(i + 1) + ": " +
                                           st.message());
      }
    }
    scopes.push_back(std::move(s));
  }
  for (auto& m : memories) {
    m.scope.tenant = c.who.tenant;  // a key never writes outside its tenant
    if (!c.who.AllUsers() && m.scope.user.empty()) {
      Throw(403, "forbidden", "user: this API key is limited to some users; the body has memories without a user");
    }
    if (!m.scope.user.empty()) RequireUser(c, m.scope.user);
    // Checked before anything is written, as the turns are: a bad memory
    // late in the file admits nothing.
    if (Status st = Engine::ValidateMemoryAdd(m.scope, {m.message}, m.options); !st.ok()) {
      Throw(400, "invalid_argument", "body: line " + std::to_string(m.line) + ": " + st.message());
    }
  }
  // With an Idempotency-Key, a retried import admits no dialogue twice
  // (memories are NOOP when already there).
  const std::string key = IdempotencyKey(c);
  if (key.size() > 240) Throw(400, "invalid_argument", "Idempotency-Key: at most 240 bytes for an import");
  Check(memory::ValidateIdempotencyKey(key));
  // The quotas, for the whole import (with a key over a quota, only a
  // retry's dialogues pass; its memories are then refused unless present).
  QuotaAsk ask;
  for (const auto& d : dialogues) {
    const QuotaAsk a = TurnsAsk(d.turns);
    ask.turns += a.turns;
    ask.bytes += a.bytes;
  }
  for (const auto& m : memories) {
    ask.memories += 1;
    ask.bytes += static_cast<std::int64_t>(m.message.content.size());
  }
  QuotaHold hold = CheckQuota(c, ask, !key.empty());
  const std::string& over = hold.over();
  const bool replay_only = !over.empty();
  json out = json::array();
  std::size_t turns = 0;
  bool replayed = false;
  for (std::size_t i = 0; i < dialogues.size(); ++i) {
    if (dialogues[i].turns.empty()) continue;
    AdmitOptions options;
    options.replay_only = replay_only;
    if (!key.empty()) options.idempotency_key = key + "#" + std::to_string(i);
    auto admitted = CheckWrite(engine().AddTurns(scopes[i], dialogues[i].turns, options), c, over);  // one per dialogue
    replayed = replayed || admitted.front().replayed;
    turns += dialogues[i].turns.size();
    out.push_back({{"user", scopes[i].user}, {"assistant", scopes[i].assistant},
                   {"turns", dialogues[i].turns.size()}, {"source_utterances", dialogues[i].source_utterances},
                   {"replayed", admitted.front().replayed}});
  }
  std::size_t added = 0;
  for (auto& m : memories) {
    // Over a quota, memories without an idempotency key cannot be told from
    // new ones: the engine refuses them (replay_only).
    m.options.replay_only = replay_only;
    auto r = CheckWrite(engine().AddMemory(m.scope, {m.message}, m.options), c, over);
    for (const auto& e : r.results) added += e.event == "NOOP" ? 0 : 1;
  }
  if (!replayed) hold.Charge();
  return Json(replayed ? 200 : 201, {{"scopes", out}, {"turns", turns}, {"memories_added", added}});
}

HttpResponse Api::Export(Call& c) {
  wire::Args a(c.body, "parameter");
  a.Only({"user", "assistant"});
  const std::string user = a.Str("user", false), assistant = a.Str("assistant", false);
  CheckArgs(a);
  if (!user.empty()) RequireUser(c, user);
  std::vector<Scope> scopes;
  for (auto& s : VisibleScopes(c, user)) {
    if (assistant.empty() || s.assistant == assistant) scopes.push_back(std::move(s));
  }
  HttpResponse r;
  r.content_type = "application/x-ndjson";
  Engine* e = engine_.load();
  r.stream = [e, scopes](const StreamWriter& write) {
    for (const auto& s : scopes) {
      bool open = true;
      Status st = e->Export(&s, [&](const std::string& line) {
        if (open) open = write(line + "\n");
      });
      if (!st.ok() || !open) return;  // a truncated stream: the client sees the missing end
    }
  };
  return r;
}

HttpResponse Api::Maintain(Call& c) {
  wire::Args a(c.body, "field");
  a.Only({"user", "assistant"});
  const std::string user = a.Str("user", false), assistant = a.Str("assistant", false);
  CheckArgs(a);
  if (!user.empty()) RequireUser(c, user);
  MaintainReport total;
  json out = wire::ToJson(total);
  for (const auto& s : VisibleScopes(c, user)) {
    if (!assistant.empty() && s.assistant != assistant) continue;
    out = AddSummary(Check(engine().Maintain(&s)), &total);
  }
  return Json(200, out);
}

HttpResponse Api::Forget(Call& c) {
  wire::Args a(c.body, "field");
  a.Only({"user"});
  const std::string user = a.Str("user", true);
  CheckArgs(a);
  RequireUser(c, user);
  const std::int64_t n = Check(engine().ForgetUser(c.who.tenant, user));
  return Json(200, {{"user", user}, {"turns_erased", n}});
}

}  // namespace engram::server
