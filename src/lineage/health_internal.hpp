// Internals of the health classifier, shared by health.cpp (reading and
// aggregation) and health_rules.cpp (the per-kind rules). Not a public API.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lineage/health.hpp"

namespace engram::lineage::detail {

// What one job run left behind.
struct JobRun {
  bool started = false;
  std::string outcome;  // "" while no committed/failed/verified receipt exists
};

struct Item {
  HealthItem out;
  std::string key;        // scope key
  bool in_store = false;  // a row exists (turns, segments, facts, jobs)
  TimeMs fresh = 0;       // newest receipt of the item
  bool has_admit = false, has_create = false, has_archive = false, has_add = false;
  std::vector<std::int64_t> commit_pages;                  // pages named by promotion commits
  std::vector<std::pair<TimeMs, std::int64_t>> versions;   // committed (time, version)
  std::map<std::string, JobRun> runs;
  std::int64_t answer_turn = 0;                            // generations: the admitted turn
};

using ItemKey = std::pair<std::string, std::int64_t>;

class Classifier {
 public:
  Classifier(const Evidence& e, const Policy& p) : e_(e), p_(p) {}
  HealthReport Run();

 private:
  // health.cpp
  void IndexStore();
  void ReadReceipts();
  void Aggregate(HealthReport* report);
  bool Matches(const std::string& key) const;
  // health_rules.cpp
  void CheckTurns();
  void CheckSegments();
  void CheckFacts();
  void CheckJobs();
  void CheckUses();
  void CheckRuns();
  void Expire();

  Item& Get(const std::string& kind, std::int64_t id, const std::string& key);
  void Touch(Item& it, const Receipt& r);
  static void Flag(Item& it, HealthState s, const std::string& reason, const std::string& run = "");
  void Event(const Receipt& r, HealthState s, const std::string& reason);
  bool Compacted(const std::string& key, TimeMs t) const;
  Item* Resolve(const std::string& kind, std::int64_t id);
  std::int64_t Expected(const Item& it, TimeMs at) const;

  const Evidence& e_;
  const Policy& p_;
  std::map<ItemKey, Item> items_;
  std::map<std::int64_t, Item> events_;  // by receipt id
  std::map<std::string, TimeMs> purged_at_, verified_at_;
  std::map<std::int64_t, std::string> scope_key_;  // scope row id -> key
  std::set<std::string> keys_;                     // every live scope key
  std::map<std::int64_t, const TurnRec*> turns_;
  std::map<std::int64_t, const PageRec*> pages_;
  std::map<std::int64_t, const SegmentRec*> segments_;
  std::map<std::int64_t, const FactRec*> facts_;
  std::map<std::string, std::vector<std::int64_t>> memory_rows_;  // fact memory -> its version rows
  std::map<std::int64_t, const JobRec*> jobs_;
  std::vector<const Receipt*> uses_;  // live retrieval and generation receipts
  std::map<std::string, std::set<std::string>> run_keys_;
  std::map<std::string, std::vector<std::pair<TimeMs, std::string>>> memory_commits_;  // key -> (at, run)
};

std::string FormatTime(TimeMs t);

}  // namespace engram::lineage::detail
