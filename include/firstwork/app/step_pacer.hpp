#pragma once
#include <algorithm>
#include <chrono>
#include <optional>

#include "firstwork/core/clock.hpp"

namespace firstwork::app {

/// When the daemon's next engine step may run. A step costs about the same for one event as for
/// a thousand (advance, inventory figures, one durable store transaction with its fdatasync and
/// the WAL pages it dirties), so a stream of events must not pay it per event: work that arrives
/// after a quiet spell is stepped at once, work that arrives within `minInterval` of the last step
/// waits for the rest of it (bench/README.md, changes 7 and 24).
class StepPacer {
 public:
  explicit StepPacer(std::chrono::milliseconds minInterval) : min_(minInterval) {}

  /// How long work that arrives at `now` waits before its step (zero: step now).
  std::chrono::nanoseconds delay(MonotonicTime now) const {
    if (!last_) return std::chrono::nanoseconds::zero();
    const auto since = now - *last_;
    return std::max<std::chrono::nanoseconds>(std::chrono::nanoseconds::zero(), min_ - since);
  }
  /// A step ran (or began) at `at`.
  void stepped(MonotonicTime at) { last_ = at; }
  std::chrono::milliseconds minInterval() const { return min_; }

 private:
  std::chrono::milliseconds min_;
  std::optional<MonotonicTime> last_;
};

}  // namespace firstwork::app
