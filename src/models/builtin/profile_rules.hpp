// Profile rules of the built-in extractive engine: short slot values stated
// by the user in the first person, and their accumulation into profile slots.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engram/types.hpp"
#include "models/maintainer.hpp"

namespace engram::builtin {

struct SlotHit {
  std::string dimension;  // name, location, occupation, interests, family, pets, preferences
  std::string value;      // a short phrase cut at the clause boundary
};

// Slot values stated by one user sentence (none for questions). Patterns:
//   name        "my name is X", "call me X", "I'm X" (X capitalised, not a nationality)
//   location    "I live in X", "I'm from X" (-> "from X"), "I moved to X", "based in X"
//               (X must contain a capitalised word)
//   occupation  "I work as (a) X", "job as a X", "I'm a(n) <job noun phrase> [at Y]",
//               "I work at/for/in X" (-> "works at X")
//   interests   "I love/like/enjoy/adore X", "I'm into X", "passionate about X",
//               "interested in X", "a fan of X", "my hobby is X" (one hit per item of
//               "X, Y and Z"; pronoun objects such as "I love it" give none)
//   family      "my <relative> <Name>", "<relative> named X", "I have two kids",
//               "I'm married", "I'm a mom of two"
//   pets        "my <pet> <Name>", "<pet> named X", "I have/adopted a <pet>"
//   preferences "I prefer X", "I'd rather X", "my favorite X is Y" (-> "favorite X: Y"),
//               "I hate/dislike/don't like X" (-> "dislikes X")
// `listener` names the person spoken to: "I love hiking, Nate!" is no liking of Nate.
std::vector<SlotHit> ExtractSlotHits(std::string_view sentence, std::string_view listener = {});

// Folds slot hits into the current profile. Single-valued dimensions (name,
// location, occupation) take the latest value; the others accumulate distinct
// values (case-insensitive) joined by "; ", keeping the newest kMaxItems and at
// most kMaxValueBytes. Not thread-safe (one per Consolidate call).
class ProfileAccumulator {
 public:
  static constexpr std::size_t kMaxItems = 12;
  static constexpr std::size_t kMaxValueBytes = 300;
  static constexpr std::size_t kMaxEvidence = 20;

  explicit ProfileAccumulator(const std::vector<ProfileSlot>& profile);

  // Records that page_id states hit.
  void Add(const SlotHit& hit, std::int64_t page_id);

  // One update per dimension whose value differs from the initial profile, in
  // the order the dimensions first changed. Evidence: the pages that stated
  // the new value (plus the slot's earlier evidence for accumulated dimensions).
  std::vector<SlotUpdate> Updates() const;

  static bool IsMultiValued(std::string_view dimension);

 private:
  struct Entry {
    std::string initial;
    std::vector<std::string> items;  // one item for single-valued dimensions
    std::vector<std::int64_t> evidence;
  };
  std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;  // dimensions in first-change order
};

}  // namespace engram::builtin
