// ProfileAccumulator of the built-in extractive engine (see profile_rules.hpp).
#include <algorithm>

#include "core/text.hpp"
#include "models/builtin/profile_rules.hpp"

namespace engram::builtin {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += "; ";
    out += item;
  }
  return out;
}

std::vector<std::string> SplitItems(const std::string& value) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= value.size()) {
    std::size_t end = value.find(';', start);
    if (end == std::string::npos) end = value.size();
    std::string item = value.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) items.push_back(std::move(item));
    start = end + 1;
  }
  return items;
}

}  // namespace

bool ProfileAccumulator::IsMultiValued(std::string_view dimension) {
  return dimension == "interests" || dimension == "family" || dimension == "pets" ||
         dimension == "preferences";
}

ProfileAccumulator::ProfileAccumulator(const std::vector<ProfileSlot>& profile) {
  for (const ProfileSlot& slot : profile) {
    Entry& e = entries_[slot.dimension];
    e.initial = slot.value;
    e.items = IsMultiValued(slot.dimension) ? SplitItems(slot.value)
                                            : std::vector<std::string>{slot.value};
    if (IsMultiValued(slot.dimension)) e.evidence = slot.evidence_pages;
  }
}

void ProfileAccumulator::Add(const SlotHit& hit, std::int64_t page_id) {
  if (hit.value.empty() || hit.dimension.empty()) return;
  Entry& e = entries_[hit.dimension];
  const std::string key = text::NormalizeForHash(hit.value);
  const bool multi = IsMultiValued(hit.dimension);
  if (multi) {
    auto same = std::find_if(e.items.begin(), e.items.end(), [&](const std::string& item) {
      return text::NormalizeForHash(item) == key;
    });
    if (same == e.items.end()) e.items.push_back(hit.value);  // re-stated values keep their place
    while (e.items.size() > 1 &&
           (e.items.size() > kMaxItems || Join(e.items).size() > kMaxValueBytes))
      e.items.erase(e.items.begin());  // drop the oldest
  } else {
    const bool changed = e.items.empty() || text::NormalizeForHash(e.items.front()) != key;
    if (changed) e.evidence.clear();
    e.items = {hit.value};
  }
  if (std::find(e.evidence.begin(), e.evidence.end(), page_id) == e.evidence.end())
    e.evidence.push_back(page_id);
  if (e.evidence.size() > kMaxEvidence)
    e.evidence.erase(e.evidence.begin(), e.evidence.end() - static_cast<long>(kMaxEvidence));
  if (std::find(order_.begin(), order_.end(), hit.dimension) == order_.end())
    order_.push_back(hit.dimension);
}

std::vector<SlotUpdate> ProfileAccumulator::Updates() const {
  std::vector<SlotUpdate> out;
  for (const std::string& dim : order_) {
    const Entry& e = entries_.at(dim);
    const std::string value = Join(e.items);
    if (value.empty() || text::NormalizeForHash(value) == text::NormalizeForHash(e.initial)) continue;
    out.push_back({dim, value, e.evidence});
  }
  return out;
}

}  // namespace engram::builtin
