#include "firstwork/config/duration.hpp"

#include <catch2/catch.hpp>

using namespace firstwork::config;
using std::chrono::milliseconds;

TEST_CASE("durations parse with ms, s, m, h and d units", "[config][duration]") {
  CHECK(parseDuration("30s").value() == milliseconds(30'000));
  CHECK(parseDuration("10m").value() == milliseconds(600'000));
  // 1 h 30 min = 3600 s + 1800 s = 5400 s
  CHECK(parseDuration("1h30m").value() == milliseconds(5'400'000));
  // 90 d = 90 × 86400 s = 7 776 000 s
  CHECK(parseDuration("90d").value() == milliseconds(7'776'000'000));
  CHECK(parseDuration("250ms").value() == milliseconds(250));
  // 1.5 h = 90 min = 5400 s
  CHECK(parseDuration("1.5h").value() == milliseconds(5'400'000));
  CHECK(parseDuration("0").value() == milliseconds(0));
  CHECK(parseDuration("1m30s500ms").value() == milliseconds(90'500));
}

TEST_CASE("malformed durations are errors that name the input", "[config][duration]") {
  for (const char* bad : {"", "10", "-5s", "5x", "s", "1.h", "5s5s", "1 h", "1e3s", "200y"}) {
    auto r = parseDuration(bad);
    INFO(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().find("invalid duration") != std::string::npos);
  }
  CHECK_FALSE(parseDuration("40000d").ok());  // more than 100 years
}

TEST_CASE("durations format back to their shortest form", "[config][duration]") {
  CHECK(formatDuration(milliseconds(0)) == "0s");
  CHECK(formatDuration(milliseconds(5'400'000)) == "1h30m");
  CHECK(formatDuration(milliseconds(7'776'000'000)) == "90d");
  // 1 d + 2 h + 3 min + 4 s + 5 ms = 86400000 + 7200000 + 180000 + 4000 + 5 ms
  CHECK(formatDuration(milliseconds(93'784'005)) == "1d2h3m4s5ms");
  CHECK(parseDuration(formatDuration(milliseconds(93'784'005))).value() ==
        milliseconds(93'784'005));
}
