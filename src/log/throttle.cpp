#include "firstwork/log/throttle.hpp"

namespace firstwork::log {

bool LogThrottle::allow(MonotonicTime now, uint64_t* suppressed) {
  std::lock_guard lock(mu_);
  if (has_last_ && now - last_ < interval_) {
    ++suppressed_;
    return false;
  }
  if (suppressed != nullptr) *suppressed = suppressed_;
  suppressed_ = 0;
  has_last_ = true;
  last_ = now;
  return true;
}

void LogThrottle::reset() {
  std::lock_guard lock(mu_);
  has_last_ = false;
}

}  // namespace firstwork::log
