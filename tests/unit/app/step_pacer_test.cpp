#include "firstwork/app/step_pacer.hpp"

#include <catch2/catch.hpp>

using namespace firstwork;
using namespace std::chrono_literals;

TEST_CASE("steps: at once after a quiet spell, at most one per interval under a stream", "[app][pacer]") {
  app::StepPacer pacer(250ms);
  const MonotonicTime t0{std::chrono::seconds(1000)};
  CHECK(pacer.delay(t0) == 0ns);  // nothing stepped yet
  pacer.stepped(t0);
  CHECK(pacer.delay(t0) == 250ms);           // work right behind a step waits the whole interval
  CHECK(pacer.delay(t0 + 100ms) == 150ms);   // ... or what is left of it
  CHECK(pacer.delay(t0 + 249ms) == 1ms);
  CHECK(pacer.delay(t0 + 250ms) == 0ns);     // a full interval since: at once
  CHECK(pacer.delay(t0 + 10s) == 0ns);       // after a quiet spell: at once
  pacer.stepped(t0 + 10s);
  CHECK(pacer.delay(t0 + 10s + 50ms) == 200ms);
  CHECK(pacer.minInterval() == 250ms);
}
