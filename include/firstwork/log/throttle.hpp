#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>

#include "firstwork/core/clock.hpp"

namespace firstwork::log {

/// Rate-limits a repeating log line (e.g. a failing poll): at most one line per interval, and the
/// line that is let through learns how many were suppressed before it. Thread-safe.
class LogThrottle {
 public:
  explicit LogThrottle(std::chrono::milliseconds interval) : interval_(interval) {}

  /// True when a line may be written at `now`. When true, `*suppressed` (if given) receives the
  /// number of calls refused since the previous allowed one, and the count restarts.
  bool allow(MonotonicTime now, uint64_t* suppressed = nullptr);
  /// Forget the last allowed time, so the next call is allowed (e.g. after a recovery was logged).
  void reset();

 private:
  std::mutex mu_;
  std::chrono::milliseconds interval_;
  bool has_last_ = false;
  MonotonicTime last_{};
  uint64_t suppressed_ = 0;
};

}  // namespace firstwork::log
