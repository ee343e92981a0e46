#include "firstwork/log/throttle.hpp"

#include <catch2/catch.hpp>

using namespace firstwork;
using namespace std::chrono_literals;

TEST_CASE("a throttle lets one line through per interval and counts the rest", "[log]") {
  log::LogThrottle throttle(10s);
  MonotonicTime t0{};
  uint64_t suppressed = 99;
  CHECK(throttle.allow(t0, &suppressed));
  CHECK(suppressed == 0);
  CHECK_FALSE(throttle.allow(t0 + 1s));
  CHECK_FALSE(throttle.allow(t0 + 9999ms));
  CHECK(throttle.allow(t0 + 10s, &suppressed));
  CHECK(suppressed == 2);  // the calls at +1 s and +9.999 s
  CHECK_FALSE(throttle.allow(t0 + 11s));
  throttle.reset();
  CHECK(throttle.allow(t0 + 12s, &suppressed));
  CHECK(suppressed == 1);  // the call at +11 s
}
