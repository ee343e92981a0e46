#pragma once
#include <atomic>

#include "firstwork/core/clock.hpp"

namespace firstwork::testing {

/// A clock that moves only when told; readable from server threads.
class ManualClock final : public Clock {
 public:
  SystemTime systemNow() const override { return SystemTime(SystemTime::duration(sys_.load())); }
  MonotonicTime monotonicNow() const override {
    return MonotonicTime(MonotonicTime::duration(mono_.load()));
  }
  void advance(std::chrono::nanoseconds d) {
    mono_ += std::chrono::duration_cast<MonotonicTime::duration>(d).count();
    sys_ += std::chrono::duration_cast<SystemTime::duration>(d).count();
  }

 private:
  std::atomic<int64_t> sys_{1'777'629'600'000'000'000};  // 2026-05-01T10:00:00Z in ns
  std::atomic<int64_t> mono_{1'000'000'000'000};
};

}  // namespace firstwork::testing
