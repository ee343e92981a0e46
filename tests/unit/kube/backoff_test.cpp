#include "firstwork/kube/backoff.hpp"

#include <catch2/catch.hpp>

#include "fakes/fake_clock.hpp"

using firstwork::kube::Backoff;
using firstwork::testing::FakeClock;
using namespace std::chrono_literals;

TEST_CASE("backoff doubles from 0.8 s with jitter up to 30 s", "[kube][backoff]") {
  FakeClock clock;
  for (uint64_t seed : {1u, 2u, 3u, 42u, 1234u}) {
    Backoff b(clock, {}, seed);
    // Base doubles: 800, 1600, 3200, 6400, 12800, 25600, then capped at 30000.
    // Delay = base × (1 + u), u in [0, 1), capped at 30000.
    const std::pair<int64_t, int64_t> bounds[] = {{800, 1600},     {1600, 3200},   {3200, 6400},
                                                  {6400, 12800},   {12800, 25600}, {25600, 30000},
                                                  {30000, 30000},  {30000, 30000}};
    for (auto [lo, hi] : bounds) {
      clock.advance(1s);  // failures 1 s apart: no reset
      auto d = b.next().count();
      INFO("seed " << seed << " expected [" << lo << "," << hi << "] got " << d);
      CHECK(d >= lo);
      CHECK(d <= hi);
    }
  }
}

TEST_CASE("backoff starts over after two minutes without failure", "[kube][backoff]") {
  FakeClock clock;
  Backoff b(clock, {}, 7);
  for (int i = 0; i < 6; ++i) b.next();
  clock.advance(119s);  // not yet healthy long enough
  CHECK(b.next().count() >= 25600);
  clock.advance(120s);  // 2 min since the last failure
  auto d = b.next().count();
  CHECK(d >= 800);
  CHECK(d < 1600);
}

TEST_CASE("backoff without jitter is exact", "[kube][backoff]") {
  FakeClock clock;
  firstwork::kube::BackoffOptions o;
  o.initial = 100ms;
  o.max = 1000ms;
  o.jitter = 0.0;
  Backoff b(clock, o, 1);
  // 100, 200, 400, 800, then 1000 (cap).
  CHECK(b.next() == 100ms);
  CHECK(b.next() == 200ms);
  CHECK(b.next() == 400ms);
  CHECK(b.next() == 800ms);
  CHECK(b.next() == 1000ms);
  b.reset();
  CHECK(b.next() == 100ms);
}
