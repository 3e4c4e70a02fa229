#include "memory/stm.hpp"

#include "core/json_limits.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "core/time.hpp"
#include "lineage/receipts.hpp"
#include "memory/text_documents.hpp"
#include "store/fulltext.hpp"
#include "store/jobs.hpp"
#include "store/turns.hpp"

namespace engram::memory {

namespace {

constexpr std::size_t kMaxTurnTextBytes = 256 * 1024;
constexpr std::size_t kMaxMetadataBytes = 64 * 1024;
constexpr std::size_t kMaxSourceRefBytes = 4096;
constexpr std::size_t kMaxNameBytes = 128;


Status CheckText(const std::string& s, const char* field, std::size_t max) {
  if (s.size() > max) {
    return Status::InvalidArgument(std::string(field) + ": longer than " + std::to_string(max) +
                                   " bytes");
  }
  if (const char* why = text::StorableTextProblem(s)) return Status::InvalidArgument(std::string(field) + ": " + why);
  return Status::Ok();
}

}  // namespace

Status ValidateTurn(const TurnInput& turn) {
  ENGRAM_RETURN_IF_ERROR(CheckText(turn.user_text, "user_text", kMaxTurnTextBytes));
  ENGRAM_RETURN_IF_ERROR(CheckText(turn.assistant_text, "assistant_text", kMaxTurnTextBytes));
  ENGRAM_RETURN_IF_ERROR(CheckText(turn.source_ref, "source_ref", kMaxSourceRefBytes));
  ENGRAM_RETURN_IF_ERROR(CheckText(turn.user_source_ref, "user_source_ref", kMaxSourceRefBytes));
  ENGRAM_RETURN_IF_ERROR(
      CheckText(turn.assistant_source_ref, "assistant_source_ref", kMaxSourceRefBytes));
  ENGRAM_RETURN_IF_ERROR(CheckText(turn.user_name, "user_name", kMaxNameBytes));
  ENGRAM_RETURN_IF_ERROR(CheckText(turn.assistant_name, "assistant_name", kMaxNameBytes));
  ENGRAM_RETURN_IF_ERROR(CheckText(turn.metadata, "metadata", kMaxMetadataBytes));
  auto blank = [](const std::string& s) {
    return s.find_first_not_of(" \t\r\n") == std::string::npos;
  };
  if (blank(turn.user_text) && blank(turn.assistant_text)) {
    return Status::InvalidArgument("user_text, assistant_text: at least one must be non-empty");
  }
  if (!turn.metadata.empty()) {
    if (!json_limits::WithinDepth(turn.metadata)) {
      return Status::InvalidArgument("metadata: " + json_limits::TooDeepMessage());
    }
    auto j = nlohmann::json::parse(turn.metadata, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return Status::InvalidArgument("metadata: must be a JSON object");
    }
  }
  if (turn.event_time && (*turn.event_time < 0 || *turn.event_time > kMaxTimeMs)) {
    return Status::InvalidArgument("time: out of range (years 1970..9999)");
  }
  return Status::Ok();
}

std::string RenderExchange(const std::string& user_name, const std::string& user_text,
                           const std::string& assistant_name, const std::string& assistant_text) {
  std::string out;
  if (!user_text.empty()) out += (user_name.empty() ? "User" : user_name) + ": " + user_text;
  if (!assistant_text.empty()) {
    if (!out.empty()) out += "\n";
    out += (assistant_name.empty() ? "Assistant" : assistant_name) + ": " + assistant_text;
  }
  return out;
}

std::string RenderExchange(const Turn& t) {
  return RenderExchange(t.user_name, t.user_text, t.assistant_name, t.assistant_text);
}

Result<AdmitResult> AdmitTurn(sql::Db* db, const ScopeRow& scope, const TurnInput& turn,
                              TimeMs now, const MemoryConfig& config, const std::string& run_id) {
  ENGRAM_ASSIGN_OR_RETURN(store::SeqSlot slot, store::TakeTurnSeq(db, scope.id));
  const std::int64_t seq = slot.seq;
  const std::int64_t in_stm = slot.stm_count;
  ENGRAM_ASSIGN_OR_RETURN(std::int64_t turn_id,
                          store::InsertTurn(db, scope.id, seq, turn, turn.event_time.value_or(now), now));
  const std::string doc = TurnDocument(turn.user_name, turn.user_text, turn.assistant_name, turn.assistant_text);
  ENGRAM_RETURN_IF_ERROR(store::IndexText(db, store::FullText::kTurns, turn_id, scope.id, doc));

  lineage::Receipt r;
  r.run_id = run_id;
  r.tenant = scope.scope.tenant;
  r.user_scope = scope.scope.user;
  r.assistant_scope = scope.scope.assistant;
  r.memory_kind = "turn";
  r.memory_id = turn_id;
  r.source_version = config.source_version;
  r.from_tier = "input";
  r.to_tier = "stm";
  r.status = "committed";
  r.at_utc = now;
  r.outcome_receipt = "turns.id=" + std::to_string(turn_id);
  ENGRAM_RETURN_IF_ERROR(lineage::Write(db, r));

  AdmitResult out;
  out.turn_id = turn_id;
  out.seq = seq;
  if (in_stm > config.stm_capacity) {
    ENGRAM_RETURN_IF_ERROR(store::ArmJob(db, scope.id, "promote", now));
    out.promotion_pending = true;
  }
  return out;
}

Result<std::vector<Turn>> LoadStm(sql::Db* db, std::int64_t scope_id, std::int64_t limit) {
  return store::LoadStmTurns(db, scope_id, limit);
}

Result<std::vector<Turn>> LoadStmNewest(sql::Db* db, std::int64_t scope_id, std::int64_t limit) {
  ENGRAM_ASSIGN_OR_RETURN(auto out, store::LoadNewestStmTurns(db, scope_id, limit));
  std::reverse(out.begin(), out.end());
  return out;
}

Result<std::vector<Turn>> LoadTurns(sql::Db* db, std::int64_t scope_id, std::int64_t after_seq,
                                    int limit) {
  return store::LoadTurnsAfter(db, scope_id, after_seq, limit);
}

Result<Turn> LoadTurn(sql::Db* db, std::int64_t turn_id) { return store::LoadTurnById(db, turn_id); }

}  // namespace engram::memory
