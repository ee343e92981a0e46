#include "firstwork/kube/backoff.hpp"

#include <algorithm>

namespace firstwork::kube {

Backoff::Backoff(const Clock& clock, BackoffOptions options, uint64_t seed)
    : clock_(clock),
      options_(options),
      rng_(seed != 0 ? seed : std::random_device{}()),
      base_ms_(static_cast<double>(options.initial.count())) {}

std::chrono::milliseconds Backoff::next() {
  MonotonicTime now = clock_.monotonicNow();
  if (!hasFailure_ || now - lastFailure_ >= options_.resetAfter) {
    base_ms_ = static_cast<double>(options_.initial.count());
  }
  hasFailure_ = true;
  lastFailure_ = now;
  double maxMs = static_cast<double>(options_.max.count());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double delay = std::min(base_ms_ * (1.0 + options_.jitter * u(rng_)), maxMs);
  base_ms_ = std::min(base_ms_ * options_.factor, maxMs);
  return std::chrono::milliseconds(static_cast<int64_t>(delay));
}

void Backoff::reset() {
  hasFailure_ = false;
  base_ms_ = static_cast<double>(options_.initial.count());
}

}  // namespace firstwork::kube
