// Names of the public enums in engram/types.hpp.
#include "engram/types.hpp"

namespace engram {

const char* TierName(Tier tier) {
  switch (tier) {
    case Tier::kStm: return "stm";
    case Tier::kMtm: return "mtm";
    case Tier::kArchive: return "archive";
    case Tier::kLpm: return "lpm";
  }
  return "unknown";
}

const char* ItemKindName(ItemKind kind) {
  switch (kind) {
    case ItemKind::kStmTurn: return "stm_turn";
    case ItemKind::kPage: return "page";
    case ItemKind::kUserFact: return "user_fact";
    case ItemKind::kAssistantFact: return "assistant_fact";
    case ItemKind::kProfile: return "profile";
  }
  return "unknown";
}

}  // namespace engram
