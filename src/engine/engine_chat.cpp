// EngineImpl::Chat: the generation module (retrieve, prompt, answer, admit).
#include "core/time.hpp"
#include "engine/engine_impl.hpp"
#include "lineage/receipts.hpp"
#include "memory/scope_store.hpp"
#include "memory/stm.hpp"
#include "models/llm.hpp"
#include "models/llm/prompts.hpp"

namespace engram {

namespace {

// "page:12@1,fact:3@2": the memory versions an answer depended on.
std::string DependsOn(const std::vector<RetrievedItem>& items) {
  std::string out;
  for (const auto& i : items) {
    if (i.kind == ItemKind::kProfile) continue;
    if (!out.empty()) out += ",";
    out += std::string(ItemKindName(i.kind)) + ":" + std::to_string(i.id) + "@" + std::to_string(i.version);
  }
  return out;
}

// Adds a message's text to `lines`, after its day ("[12 May 2026]") when
// that differs from the day of the line before (`day`): the prompt's past
// and recent conversation are dated, as a retrieved context is.
void AddDated(std::vector<std::string>& lines, std::string& day, const RetrievedItem& i) {
  if (i.event_time > 0) {
    std::string its = "[";  // (appended: GCC 12 warns of a restrict overlap in "[" + s + "]")
    its += FormatHumanDate(i.event_time);
    its += ']';
    if (its != day) {
      lines.push_back(its);
      day = std::move(its);
    }
  }
  lines.push_back(i.text);
}

prompts::AnswerContext BuildContext(const ChatOptions& o, const RetrievalResult& r, TimeMs now) {
  prompts::AnswerContext c;
  c.persona = o.persona;
  c.language = o.language;
  c.answer_length = o.answer_length;
  c.now = FormatHumanDateTime(now);
  std::string page_day, turn_day;
  for (const auto& i : r.items) {
    switch (i.kind) {
      case ItemKind::kAssistantFact: c.assistant_facts.push_back(i.text); break;
      case ItemKind::kUserFact: c.user_facts.push_back(i.text); break;
      case ItemKind::kProfile: c.profile.push_back(i.text); break;
      case ItemKind::kPage:
        AddDated(c.past_pages, page_day, i);
        break;
      case ItemKind::kStmTurn:
        AddDated(c.recent_turns, turn_day, i);
        break;
    }
  }
  return c;
}

}  // namespace

Result<ChatReply> EngineImpl::Chat(const Scope& scope, const std::string& query,
                                   const ChatOptions& options) {
  if (!options_.llm) {
    return Status::FailedPrecondition(
        "no language model is configured: set ENGRAM_LLM_BASE_URL and ENGRAM_LLM_MODEL (and "
        "ENGRAM_LLM_API_KEY or OPENAI_API_KEY), or the [llm] table of engram.toml");
  }
  ENGRAM_ASSIGN_OR_RETURN(RetrievalResult memory, Retrieve(scope, query, options.retrieve));
  const TimeMs asked = deps_.clock->NowMs();
  prompts::AnswerContext ctx = BuildContext(options, memory, asked);
  ChatRequest req;
  req.messages = {{"system", prompts::AnswerSystem(ctx)}, {"user", prompts::AnswerUser(ctx, query)}};
  req.max_tokens = options.max_answer_tokens;
  req.on_delta = options.on_delta;
  ENGRAM_ASSIGN_OR_RETURN(ChatResult answer, options_.llm->Chat(req));
  if (answer.content.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Status::Unavailable("llm endpoint: the model returned an empty answer");
  }
  ChatReply reply;
  reply.answer = answer.content;
  reply.used = memory.items;
  reply.prompt_tokens = answer.prompt_tokens;
  reply.completion_tokens = answer.completion_tokens;
  reply.model_calls = 1;
  reply.run_id = lineage::NewRunId();
  if (!options.admit) return reply;

  TurnInput turn;
  turn.user_text = query;
  turn.assistant_text = answer.content;
  turn.event_time = asked;
  turn.user_name = options.user_name;
  turn.assistant_name = options.assistant_name;
  ENGRAM_ASSIGN_OR_RETURN(AdmitResult admitted,
                          AdmitAnswer(scope, turn, memory.items, options_.llm->Name(), reply.run_id));
  reply.turn_id = admitted.turn_id;
  return reply;
}

Result<AdmitResult> EngineImpl::AdmitAnswer(const Scope& scope, const TurnInput& turn,
                                            const std::vector<RetrievedItem>& used, const std::string& answered_by,
                                            const std::string& run_id) {
  ENGRAM_RETURN_IF_ERROR(ValidateScope(scope));
  ENGRAM_RETURN_IF_ERROR(memory::ValidateTurn(turn));
  const std::string run = run_id.empty() ? lineage::NewRunId() : run_id;
  AdmitResult admitted;
  // The exchange and its dependency record commit together.
  {
    std::lock_guard<std::mutex> lock(writer_mu_);
    TimeMs now = deps_.clock->NowMs();
    ENGRAM_ASSIGN_OR_RETURN(auto txn, sql::Txn::Begin(writer_.get()));
    ENGRAM_ASSIGN_OR_RETURN(std::int64_t scope_id, memory::EnsureScope(writer_.get(), scope, now));
    ENGRAM_ASSIGN_OR_RETURN(memory::ScopeRow row, memory::LoadScope(writer_.get(), scope_id));
    ENGRAM_ASSIGN_OR_RETURN(admitted, memory::AdmitTurn(writer_.get(), row, turn, now, config_, run));
    lineage::Receipt r;
    r.run_id = run;
    r.tenant = scope.tenant;
    r.user_scope = scope.user;
    r.assistant_scope = scope.assistant;
    r.memory_kind = "generation";
    r.memory_id = admitted.turn_id;
    r.source_version = config_.source_version + ";answer=" + answered_by;
    r.from_tier = "retrieval";
    r.to_tier = "answer";
    r.status = "committed";
    r.at_utc = now;
    r.depends_on_version = DependsOn(used);
    r.outcome_receipt = "turns.id=" + std::to_string(admitted.turn_id);
    ENGRAM_RETURN_IF_ERROR(lineage::Write(writer_.get(), r));
    ENGRAM_RETURN_IF_ERROR(txn->Commit());
  }
  if (admitted.promotion_pending) Wake();
  return admitted;
}

}  // namespace engram
