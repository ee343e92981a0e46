#pragma once
#include <chrono>

#include "firstwork/core/clock.hpp"

namespace firstwork {

/// A clock that runs `speed` times faster than real time from a fixed origin: at real time
/// origin + d it reads origin + speed·d. The demo and the end-to-end tests give the same
/// ScaledClock (same origin and speed) to the scenario player and to the daemon, so object
/// timestamps, the daemon's notion of "now" and every budget agree while a 12-minute drill plays
/// in 12 seconds (speed 60). Thread-safe (immutable after construction).
class ScaledClock final : public Clock {
 public:
  ScaledClock(double speed, SystemTime systemOrigin, MonotonicTime monotonicOrigin)
      : speed_(speed), system_origin_(systemOrigin), monotonic_origin_(monotonicOrigin) {}
  explicit ScaledClock(double speed)
      : ScaledClock(speed, std::chrono::system_clock::now(), std::chrono::steady_clock::now()) {}

  double speed() const { return speed_; }
  SystemTime systemOrigin() const { return system_origin_; }
  MonotonicTime monotonicOrigin() const { return monotonic_origin_; }

  /// Real duration that corresponds to a scaled duration (for sleeping until a scaled instant).
  std::chrono::nanoseconds toReal(std::chrono::nanoseconds scaled) const {
    return std::chrono::nanoseconds{static_cast<int64_t>(static_cast<double>(scaled.count()) / speed_)};
  }

  // Clock
  SystemTime systemNow() const override {
    return system_origin_ + std::chrono::duration_cast<SystemTime::duration>(scaledElapsed());
  }
  MonotonicTime monotonicNow() const override {
    return monotonic_origin_ + std::chrono::duration_cast<MonotonicTime::duration>(scaledElapsed());
  }

 private:
  std::chrono::nanoseconds scaledElapsed() const {
    auto real = std::chrono::steady_clock::now() - monotonic_origin_;
    return std::chrono::nanoseconds{static_cast<int64_t>(
        static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(real).count()) *
        speed_)};
  }

  double speed_;
  SystemTime system_origin_;
  MonotonicTime monotonic_origin_;
};

}  // namespace firstwork

namespace firstwork {

/// Wall time from a ScaledClock, monotonic time real. The daemon in the demo reads event and
/// observation times on the scenario's scaled wall clock (so they agree with the objects'
/// timestamps), while its transport timers — stall watchdog, backoff, healthy-reset — keep real
/// durations, because the simulated API servers stream in real time. Thread-safe.
class ScaledWallClock final : public Clock {
 public:
  explicit ScaledWallClock(const ScaledClock& scaled) : scaled_(scaled) {}
  // Clock
  SystemTime systemNow() const override { return scaled_.systemNow(); }
  MonotonicTime monotonicNow() const override { return std::chrono::steady_clock::now(); }

 private:
  const ScaledClock& scaled_;
};

}  // namespace firstwork
