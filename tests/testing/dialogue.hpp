// Synthetic dialogues for tests: several topics, first-person statements,
// increasing event times.
#pragma once

#include <string>
#include <vector>

#include "core/time.hpp"
#include "engram/types.hpp"

namespace engram::testing {

inline std::vector<TurnInput> SyntheticDialogue(int n, TimeMs start = MakeTimeMs(2025, 1, 6, 9)) {
  static const std::vector<std::pair<std::string, std::string>> kLines = {
      {"I love hiking in the Alps with my dog Bruno.", "Hiking with a dog sounds great. Which trails do you like?"},
      {"I work as a nurse at the city hospital.", "Nursing is demanding work. How long have you been a nurse?"},
      {"My sister Lena lives in Vienna.", "Vienna is beautiful. Do you visit Lena often?"},
      {"I'm planning a trip to Japan next spring.", "Japan in spring has cherry blossoms. Kyoto is a must."},
      {"I started learning the cello last month.", "The cello is a lovely instrument. Do you take lessons?"},
      {"I bought a new road bike for commuting.", "A road bike makes commuting fast. Is your route safe?"},
      {"My favourite food is mushroom risotto.", "Mushroom risotto is delicious. I can share a recipe."},
      {"I adopted a kitten called Pepper.", "Congratulations on adopting Pepper! Kittens are playful."},
  };
  std::vector<TurnInput> out;
  for (int i = 0; i < n; ++i) {
    const auto& [u, a] = kLines[static_cast<std::size_t>(i) % kLines.size()];
    TurnInput t;
    t.user_text = u + " (note " + std::to_string(i) + ")";
    t.assistant_text = a;
    t.event_time = start + static_cast<TimeMs>(i) * 3600 * 1000;
    t.source_ref = "T" + std::to_string(i);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace engram::testing
