#include <catch2/catch.hpp>

#include "detail/format.hpp"
#include "firstwork/core/rfc3339.hpp"

using namespace firstwork;
using namespace firstwork::report::detail;

TEST_CASE("Durations read as people write them", "[report][format]") {
  CHECK(duration(0) == "0s");
  CHECK(duration(45) == "45s");
  CHECK(duration(45.5) == "45.5s");
  CHECK(duration(59.96) == "1m 00s");  // rounds into the next unit, not "60.0s"
  CHECK(duration(480) == "8m 00s");
  CHECK(duration(750.4) == "12m 30s");
  CHECK(duration(3723) == "1h 02m 03s");
  CHECK(duration(-30) == "-30s");
  CHECK(duration(std::optional<double>()) == "—");
  CHECK(duration(std::optional<double>(180)) == "3m 00s");
}

TEST_CASE("GPU figures, money and percentages", "[report][format]") {
  // 19 200 GPU-seconds = 320 GPU-minutes = 5.33 GPU-hours.
  CHECK(gpuMinutes(19200) == "320.0");
  CHECK(gpuHours(19200) == "5.33");
  CHECK(gpuHours(11520) == "3.20");  // 192 GPU-minutes
  CHECK(money("US$", 12.8) == "US$12.80");
  CHECK(money("US$", -1.8) == "-US$1.80");
  CHECK(money("EUR ", -0.001) == "EUR 0.00");  // no sign on a rounded zero
  CHECK(percent(60) == "60.0 %");
  CHECK(percent(-0.01) == "0.0 %");
  CHECK(fixed(-0.04, 1) == "0.0");
  CHECK(fixed(2.3456, 2) == "2.35");
}

TEST_CASE("Offsets from reconnection and file-safe names", "[report][format]") {
  SystemTime r = parseRfc3339("2026-03-02T10:38:00Z").value();
  CHECK(offset(r + std::chrono::seconds(30), r) == "R+30s");
  CHECK(offset(r + std::chrono::minutes(8), r) == "R+8m 00s");
  CHECK(offset(r - std::chrono::seconds(30), r) == "R-30s");
  CHECK(fileSafe("worker-1") == "worker-1");
  CHECK(fileSafe("eu/west 1") == "eu-west-1");
  CHECK(fileSafe("") == "-");
}
