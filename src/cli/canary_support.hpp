// Helpers of the canary (canary.cpp): random ids, canary dialogue, the
// re-execution of this binary, and small receipt lookups.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "cli/canary.hpp"

namespace engram::cli::canary {

inline constexpr const char* kTenant = "engram-canary";

// n random lowercase letters.
std::string RandomLetters(int n);
// The canary's four scopes (u1/a1, u1/a2, u2/a1, u2/a2) and their lane tokens,
// both derived from the id so that a re-executed process finds them again.
std::vector<Scope> Scopes(const std::string& id);
std::string Token(const std::string& id, std::size_t lane);
// One exchange of random tokens; turns of a lane read alike so that they
// form one dialogue chain.
TurnInput Turn(const std::string& token, int n);

// "page:12@1,..." of the items (profile lines excluded), as receipts write it.
std::string VersionList(const std::vector<RetrievedItem>& items);
// The stm=N capacity pinned in a source version (0 when absent).
int CapacityOf(const std::string& source_version);

// What one lane (scope) holds, by id.
struct Lane {
  std::set<std::int64_t> turns, pages, facts;
};
Lane LaneOf(Engine& e, const Scope& s);
// Whether a retrieved item is one of the lane's own.
bool Owns(const Lane& lane, const RetrievedItem& item);
// Receipts of a scope (empty ids match all), of a kind and run ("" = any).
std::vector<ReceiptInfo> ReceiptsOf(Engine& e, const Scope& s, const std::string& kind, const std::string& run);

// Runs restart.exe with its global args and `tail`; stdout goes to *out.
// Returns the exit code (-1 when it could not run or was killed).
int RunChild(const CanaryRestart& restart, const std::vector<std::string>& tail, std::string* out);

}  // namespace engram::cli::canary
