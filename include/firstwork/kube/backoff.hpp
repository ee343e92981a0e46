#pragma once
#include <chrono>
#include <cstdint>
#include <random>

#include "firstwork/core/clock.hpp"

namespace firstwork::kube {

struct BackoffOptions {
  std::chrono::milliseconds initial{800};
  std::chrono::milliseconds max{30000};
  /// A failure after this long without one starts again from `initial` (client-go: 2 min).
  std::chrono::milliseconds resetAfter{120000};
  double factor = 2.0;
  /// Each delay is base × (1 + jitter × u), u uniform in [0, 1), then capped at `max`.
  double jitter = 1.0;
};

/// Exponential backoff with jitter and reset after a healthy period, as client-go's
/// reflector (0.8 s → 30 s, reset after 2 min). Reads time only through Clock. One owner.
class Backoff {
 public:
  explicit Backoff(const Clock& clock, BackoffOptions options = {}, uint64_t seed = 0);

  /// The delay before the next attempt after a failure now.
  std::chrono::milliseconds next();
  /// Forget past failures (e.g. after a long healthy period observed otherwise).
  void reset();
  const BackoffOptions& options() const { return options_; }

 private:
  const Clock& clock_;
  BackoffOptions options_;
  std::mt19937_64 rng_;
  double base_ms_;
  bool hasFailure_ = false;
  MonotonicTime lastFailure_{};
};

}  // namespace firstwork::kube
