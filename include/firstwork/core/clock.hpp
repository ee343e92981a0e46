#pragma once
#include <chrono>

namespace firstwork {

/// Wall-clock time: compared with Kubernetes timestamps (creationTimestamp, lastTransitionTime).
using SystemTime = std::chrono::system_clock::time_point;
/// Monotonic time: intervals, timeouts, backoff, staleness.
using MonotonicTime = std::chrono::steady_clock::time_point;

/// The only way code in this project reads the time (seam; tests use FakeClock).
class Clock {
 public:
  virtual ~Clock() = default;
  virtual SystemTime systemNow() const = 0;
  virtual MonotonicTime monotonicNow() const = 0;
};

/// The real clocks. Thread-safe.
class RealClock final : public Clock {
 public:
  // Clock
  SystemTime systemNow() const override { return std::chrono::system_clock::now(); }
  MonotonicTime monotonicNow() const override { return std::chrono::steady_clock::now(); }
};

/// Seconds as a double, for metrics and JSON.
inline double toSeconds(std::chrono::nanoseconds d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace firstwork
