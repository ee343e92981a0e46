#pragma once
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>

#include "firstwork/core/clock.hpp"

namespace firstwork::app {

/// When the daemon's next engine step may run. A step costs about the same for one event as for
/// a thousand (advance, inventory figures, one durable store transaction with its fdatasync and
/// the WAL pages it dirties), so a stream of events must not pay it per event: work that arrives
/// after a quiet spell is stepped at once, work that arrives within `minInterval` of the last step
/// waits for the rest of it (bench/README.md, changes 7 and 24). Once `busyEvents` events wait,
/// the spacing is `busyInterval` instead (shorter): under a flood a step, and a scrape's step
/// with it, takes what a `busyInterval` brings, not what a whole `minInterval` does (change 110).
class StepPacer {
 public:
  explicit StepPacer(std::chrono::milliseconds minInterval)
      : StepPacer(minInterval, minInterval, 0) {}
  StepPacer(std::chrono::milliseconds minInterval, std::chrono::milliseconds busyInterval,
            size_t busyEvents)
      : min_(minInterval), busy_(std::min(busyInterval, minInterval)), busyEvents_(busyEvents) {}

  /// How long work that arrives at `now`, with `waiting` events waiting, waits before its step
  /// (zero: step now).
  std::chrono::nanoseconds delay(MonotonicTime now, size_t waiting = 0) const {
    if (!last_) return std::chrono::nanoseconds::zero();
    const auto since = now - *last_;
    const auto spacing = busy(waiting) ? busy_ : min_;
    return std::max<std::chrono::nanoseconds>(std::chrono::nanoseconds::zero(), spacing - since);
  }
  /// Whether `waiting` events are enough for the busy spacing.
  bool busy(size_t waiting) const { return busyEvents_ > 0 && waiting >= busyEvents_; }
  /// A step ran (or began) at `at`.
  void stepped(MonotonicTime at) { last_ = at; }
  std::chrono::milliseconds minInterval() const { return min_; }
  std::chrono::milliseconds busyInterval() const { return busy_; }

  /// Whether steps wait at `now`, given whether a watched resource is in its first LIST. At start
  /// the objects arrive a whole resource at a time, Workloads before or after their pods and
  /// claims: a step between two resources settles every workload and writes its records, and the
  /// next resource changes most of them again — the sync's engine and store work done twice, on
  /// the loop thread that is also receiving and decoding the lists (bench/README.md, change 32).
  /// So steps wait for the lists, but for at most `maxHold` after the first question (the
  /// daemon's start): a cluster whose list is slow or never ends must not keep the others'
  /// figures back. A resource retrying (a cluster down) is not listing and holds nothing; relists
  /// after the first sync hold nothing either.
  bool holdForInitialLists(MonotonicTime now, bool initialListInProgress) {
    if (!holdFrom_) holdFrom_ = now;
    return initialListInProgress && now - *holdFrom_ < maxHold_;
  }
  /// Whether holdForInitialLists() can still answer true (false once `maxHold` has passed).
  bool holdPossible(MonotonicTime now) const { return !holdFrom_ || now - *holdFrom_ < maxHold_; }
  void setMaxInitialListHold(std::chrono::milliseconds maxHold) { maxHold_ = maxHold; }

 private:
  std::chrono::milliseconds min_;
  std::chrono::milliseconds busy_;
  size_t busyEvents_;  // 0: never busy
  std::optional<MonotonicTime> last_;
  std::chrono::milliseconds maxHold_{30'000};
  std::optional<MonotonicTime> holdFrom_;
};

}  // namespace firstwork::app
