#include "cli/context.hpp"

#include <cstdlib>
#include <iostream>

#include "core/time.hpp"

namespace engram::cli {

std::string Cli::DbPath() const {
  if (!g.db.empty()) return g.db;
  if (const char* e = std::getenv("ENGRAM_DB"); e && *e) return e;
  std::string home = g.home;
  if (home.empty()) {
    if (const char* e = std::getenv("ENGRAM_HOME"); e && *e) home = e;
  }
  if (home.empty()) {
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) {
      home = std::string(xdg) + "/engram";
    } else if (const char* h = std::getenv("HOME"); h && *h) {
      home = std::string(h) + "/.local/share/engram";
    } else {
      home = ".engram";
    }
  }
  return home + "/engram.db";
}

Scope Cli::CurrentScope() const {
  Scope s;
  s.tenant = g.tenant;
  s.user = g.user;
  if (s.user.empty()) {
    const char* e = std::getenv("ENGRAM_USER");
    s.user = (e && *e) ? e : "default";
  }
  s.assistant = g.assistant;
  return s;
}

int Cli::OpenEngine(EngineOptions extra) {
  if (engine) return 0;
  extra.db_path = DbPath();
  auto e = Engine::Open(std::move(extra));
  if (!e.ok()) return Fail(e.status());
  engine = std::move(e).value();
  return 0;
}

int Fail(int code, const std::string& message) {
  std::cerr << "engram: " << message << "\n";
  return code;
}

int Fail(const Status& st) {
  return Fail(st.code() == StatusCode::kInvalidArgument ? 2 : 1, st.ToString());
}

void PrintJson(const nlohmann::json& j) {
  std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

nlohmann::json ToJson(const Stats& s) {
  return {{"stm_turns", s.stm_turns},
          {"mtm_pages", s.mtm_pages},
          {"mtm_segments", s.mtm_segments},
          {"archived_pages", s.archived_pages},
          {"archived_segments", s.archived_segments},
          {"user_facts", s.user_facts},
          {"assistant_facts", s.assistant_facts},
          {"profile_slots", s.profile_slots},
          {"pending_jobs", s.pending_jobs},
          {"failed_jobs", s.failed_jobs},
          {"turns_admitted", s.turns_admitted},
          {"degraded_items", s.degraded_items}};
}

nlohmann::json ToJson(const RetrievedItem& i) {
  nlohmann::json j = {{"kind", ItemKindName(i.kind)},
                      {"tier", TierName(i.tier)},
                      {"id", i.id},
                      {"version", i.version},
                      {"score", i.score},
                      {"tokens", i.tokens},
                      {"text", i.text}};
  if (i.turn_id) j["turn_id"] = i.turn_id;
  if (i.segment_id) j["segment_id"] = i.segment_id;
  if (i.event_time) j["event_time"] = FormatIso8601(i.event_time);
  if (!i.source_ref.empty()) j["source_ref"] = i.source_ref;
  return j;
}

nlohmann::json ToJson(const MaintainReport& r) {
  return {{"promotions", r.promotions},
          {"pages_created", r.pages_created},
          {"segments_created", r.segments_created},
          {"segments_merged", r.segments_merged},
          {"segments_archived", r.segments_archived},
          {"consolidations", r.consolidations},
          {"facts_added", r.facts_added},
          {"profile_slots_updated", r.profile_slots_updated},
          {"jobs_failed", r.jobs_failed},
          {"model_calls", r.model_calls},
          {"degraded", r.degraded}};
}

nlohmann::json ToJson(const Fact& f) {
  return {{"id", f.id},
          {"version", f.version},
          {"kind", f.kind},
          {"text", f.text},
          {"source_pages", f.source_pages},
          {"event_time", FormatIso8601(f.event_time)},
          {"record_time", FormatIso8601(f.record_time)},
          {"degraded", f.degraded}};
}

}  // namespace engram::cli
