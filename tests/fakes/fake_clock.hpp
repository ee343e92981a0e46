#pragma once
#include <chrono>
#include <mutex>

#include "firstwork/core/clock.hpp"

namespace firstwork::testing {

/// A clock that moves only when told to (backoff, token refresh, expiry). Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(SystemTime system = std::chrono::system_clock::now(),
                     MonotonicTime monotonic = MonotonicTime{} + std::chrono::hours(1000))
      : system_(system), monotonic_(monotonic) {}

  // Clock
  SystemTime systemNow() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return system_;
  }
  MonotonicTime monotonicNow() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return monotonic_;
  }

  /// Moves both clocks forward.
  void advance(std::chrono::nanoseconds d) {
    std::lock_guard<std::mutex> lock(mu_);
    system_ += std::chrono::duration_cast<SystemTime::duration>(d);
    monotonic_ += std::chrono::duration_cast<MonotonicTime::duration>(d);
  }
  void setSystem(SystemTime t) {
    std::lock_guard<std::mutex> lock(mu_);
    system_ = t;
  }

 private:
  mutable std::mutex mu_;
  SystemTime system_;
  MonotonicTime monotonic_;
};

}  // namespace firstwork::testing
