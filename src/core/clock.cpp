// The wall clock.
#include "core/clock.hpp"

#include <chrono>

namespace engram {

TimeMs SystemClock::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const Clock& SystemClock::Default() {
  // Leaked on purpose so it stays valid during static destruction.
  static const SystemClock* const kClock = new SystemClock();
  return *kClock;
}

}  // namespace engram
