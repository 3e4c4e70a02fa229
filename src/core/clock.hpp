// Clock: the one source of "now" in engram, injectable so tests control time.
#pragma once

#include <atomic>

#include "engram/types.hpp"

namespace engram {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch, UTC. Thread-safe.
  virtual TimeMs NowMs() const = 0;
};

// Wall clock (std::chrono::system_clock).
class SystemClock final : public Clock {
 public:
  TimeMs NowMs() const override;
  // A process-wide instance.
  static const Clock& Default();
};

// A clock that only moves when told to. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimeMs start) : now_(start) {}
  TimeMs NowMs() const override { return now_.load(); }
  void Set(TimeMs t) { now_.store(t); }
  void Advance(TimeMs delta) { now_.fetch_add(delta); }

 private:
  std::atomic<TimeMs> now_;
};

}  // namespace engram
