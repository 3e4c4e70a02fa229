#include "memory/stm.hpp"

#include "store/jobs.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "lineage/receipts.hpp"

namespace engram::memory {

namespace {

constexpr std::size_t kMaxTurnTextBytes = 256 * 1024;
constexpr std::size_t kMaxMetadataBytes = 64 * 1024;
constexpr std::size_t kMaxSourceRefBytes = 4096;
constexpr std::size_t kMaxNameBytes = 128;

constexpr const char* kTurnCols =
    "SELECT t.id, t.seq, t.user_text, t.assistant_text, t.event_time, t.ingest_time, t.metadata, "
    "t.source_ref, t.user_name, t.assistant_name, t.page_id, s.archived_at, t.user_source_ref, "
    "t.assistant_source_ref "
    "FROM turns t LEFT JOIN pages p ON p.id = t.page_id LEFT JOIN segments s ON s.id = p.segment_id ";

Turn TurnFrom(sql::Stmt* st) {
  Turn t;
  t.id = st->Int(0);
  t.seq = st->Int(1);
  t.user_text = st->Text(2);
  t.assistant_text = st->Text(3);
  t.event_time = st->Int(4);
  t.ingest_time = st->Int(5);
  t.metadata = st->Text(6);
  t.source_ref = st->Text(7);
  t.user_name = st->Text(8);
  t.assistant_name = st->Text(9);
  t.page_id = st->IsNull(10) ? 0 : st->Int(10);
  t.tier = t.page_id == 0 ? Tier::kStm : (st->IsNull(11) ? Tier::kMtm : Tier::kArchive);
  t.user_source_ref = st->Text(12);
  t.assistant_source_ref = st->Text(13);
  return t;
}

Result<std::vector<Turn>> Collect(sql::Stmt* st) {
  std::vector<Turn> out;
  for (;;) {
    ENGRAM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    out.push_back(TurnFrom(st));
  }
  st->Reset();
  return out;
}

Status CheckText(const std::string& s, const char* field, std::size_t max) {
  if (s.size() > max) {
    return Status::InvalidArgument(std::string(field) + ": longer than " + std::to_string(max) +
                                   " bytes");
  }
  if (!text::IsValidUtf8(s)) return Status::InvalidArgument(std::string(field) + ": not valid UTF-8");
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
    auto j = nlohmann::json::parse(turn.metadata, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return Status::InvalidArgument("metadata: must be a JSON object");
    }
  }
  if (turn.event_time && (*turn.event_time < 0 || *turn.event_time > 253402300799999LL)) {
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
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * up,
      db->Prepare("UPDATE scopes SET next_seq = next_seq + 1, stm_count = stm_count + 1 "
                  "WHERE id = ? RETURNING next_seq - 1, stm_count"));
  up->Bind(1, scope.id);
  ENGRAM_ASSIGN_OR_RETURN(bool got, up->Step());
  if (!got) return Status::Internal("scope row missing");
  const std::int64_t seq = up->Int(0);
  const std::int64_t in_stm = up->Int(1);
  up->Reset();
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * ins,
      db->Prepare("INSERT INTO turns(scope_id, seq, user_text, assistant_text, user_name, "
                  "assistant_name, event_time, ingest_time, metadata, source_ref, user_source_ref, "
                  "assistant_source_ref) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)"));
  ENGRAM_RETURN_IF_ERROR(ins->Bind(1, scope.id)
                             .Bind(2, seq)
                             .Bind(3, turn.user_text)
                             .Bind(4, turn.assistant_text)
                             .Bind(5, turn.user_name)
                             .Bind(6, turn.assistant_name)
                             .Bind(7, turn.event_time.value_or(now))
                             .Bind(8, now)
                             .Bind(9, turn.metadata)
                             .Bind(10, turn.source_ref)
                             .Bind(11, turn.user_source_ref)
                             .Bind(12, turn.assistant_source_ref)
                             .Run());
  std::int64_t turn_id = db->LastInsertRowId();

  // Speaker names are indexed with the text: questions name people.
  std::string doc = FtsDocument(RenderExchange(turn.user_name, turn.user_text,
                                               turn.assistant_name, turn.assistant_text));
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * fts,
                          db->Prepare("INSERT INTO turns_fts(rowid, scope, terms) VALUES(?,?,?)"));
  ENGRAM_RETURN_IF_ERROR(fts->Bind(1, turn_id).Bind(2, ScopeToken(scope.id)).Bind(3, doc).Run());

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
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(std::string(kTurnCols) +
                  "WHERE t.scope_id = ? AND t.page_id IS NULL ORDER BY t.seq LIMIT ?"));
  st->Bind(1, scope_id).Bind(2, limit);
  return Collect(st);
}

Result<std::vector<Turn>> LoadStmNewest(sql::Db* db, std::int64_t scope_id, std::int64_t limit) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(std::string(kTurnCols) +
                  "WHERE t.scope_id = ? AND t.page_id IS NULL ORDER BY t.seq DESC LIMIT ?"));
  st->Bind(1, scope_id).Bind(2, limit);
  ENGRAM_ASSIGN_OR_RETURN(auto out, Collect(st));
  std::reverse(out.begin(), out.end());
  return out;
}

Result<std::vector<Turn>> LoadTurns(sql::Db* db, std::int64_t scope_id, std::int64_t after_seq,
                                    int limit) {
  ENGRAM_ASSIGN_OR_RETURN(
      sql::Stmt * st,
      db->Prepare(std::string(kTurnCols) +
                  "WHERE t.scope_id = ? AND t.seq > ? ORDER BY t.seq LIMIT ?"));
  st->Bind(1, scope_id).Bind(2, after_seq).Bind(3, limit);
  return Collect(st);
}

Result<Turn> LoadTurn(sql::Db* db, std::int64_t turn_id) {
  ENGRAM_ASSIGN_OR_RETURN(sql::Stmt * st, db->Prepare(std::string(kTurnCols) + "WHERE t.id = ?"));
  st->Bind(1, turn_id);
  ENGRAM_ASSIGN_OR_RETURN(auto v, Collect(st));
  if (v.empty()) return Status::NotFound("turn " + std::to_string(turn_id));
  return v.front();
}

}  // namespace engram::memory
