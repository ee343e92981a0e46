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

// Change 110: a second between steps by default, a quarter of one once many events wait.
TEST_CASE("steps: spaced by the busy interval once enough events wait", "[app][pacer]") {
  app::StepPacer pacer(1000ms, 250ms, 2500);
  const MonotonicTime t0{std::chrono::seconds(1000)};
  CHECK(pacer.delay(t0, 5000) == 0ns);  // nothing stepped yet
  pacer.stepped(t0);
  CHECK_FALSE(pacer.busy(2499));
  CHECK(pacer.busy(2500));
  CHECK(pacer.delay(t0 + 100ms, 0) == 900ms);
  CHECK(pacer.delay(t0 + 100ms, 2499) == 900ms);
  CHECK(pacer.delay(t0 + 100ms, 2500) == 150ms);  // what is left of the busy interval
  CHECK(pacer.delay(t0 + 300ms, 2500) == 0ns);    // past it: at once
  CHECK(pacer.delay(t0 + 300ms, 10) == 700ms);
  CHECK(pacer.minInterval() == 1000ms);
  CHECK(pacer.busyInterval() == 250ms);

  app::StepPacer plain(250ms);  // one interval: never busy
  plain.stepped(t0);
  CHECK_FALSE(plain.busy(1000000));
  CHECK(plain.delay(t0 + 50ms, 1000000) == 200ms);
  app::StepPacer odd(100ms, 250ms, 10);  // a busy interval longer than the interval is the interval
  odd.stepped(t0);
  CHECK(odd.delay(t0, 10) == 100ms);
}

TEST_CASE("steps: held while a first LIST is in progress, for at most the hold from the start",
          "[app][pacer]") {
  app::StepPacer pacer(250ms);
  pacer.setMaxInitialListHold(30s);
  const MonotonicTime t0{std::chrono::seconds(1000)};
  CHECK(pacer.holdPossible(t0));
  CHECK(pacer.holdForInitialLists(t0, true));            // the first question starts the hold
  CHECK(pacer.holdForInitialLists(t0 + 5s, true));
  CHECK_FALSE(pacer.holdForInitialLists(t0 + 6s, false));  // nothing listing (lists done, or a
  CHECK(pacer.holdForInitialLists(t0 + 7s, true));         // cluster retrying), then one again
  CHECK(pacer.holdForInitialLists(t0 + 29s + 999ms, true));
  CHECK(pacer.holdPossible(t0 + 29s + 999ms));
  CHECK_FALSE(pacer.holdForInitialLists(t0 + 30s, true));  // a list still running 30 s on: steps go
  CHECK_FALSE(pacer.holdPossible(t0 + 30s));
  CHECK_FALSE(pacer.holdForInitialLists(t0 + 90s, true));
  // The hold does not touch the pacing of steps.
  CHECK(pacer.delay(t0 + 90s) == 0ns);
}

TEST_CASE("steps: the hold counts from the first question, not from construction", "[app][pacer]") {
  app::StepPacer pacer(250ms);
  pacer.setMaxInitialListHold(10s);
  const MonotonicTime t0{std::chrono::seconds(5000)};
  CHECK(pacer.holdPossible(t0 + 1h));  // never asked: still possible
  CHECK(pacer.holdForInitialLists(t0 + 1h, true));
  CHECK(pacer.holdForInitialLists(t0 + 1h + 9s, true));
  CHECK_FALSE(pacer.holdForInitialLists(t0 + 1h + 10s, true));
}
