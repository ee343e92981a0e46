#include "firstwork/core/rfc3339.hpp"

#include <catch2/catch.hpp>

using namespace firstwork;
using namespace std::chrono;

namespace {
int64_t epochNanos(std::string_view s) {
  auto r = parseRfc3339(s);
  REQUIRE(r.ok());
  return duration_cast<nanoseconds>(r->time_since_epoch()).count();
}
}  // namespace

TEST_CASE("RFC 3339 times as Kubernetes writes them parse to the right instant", "[core][rfc3339]") {
  // 2026-05-01T10:00:00Z = 20574 days after the epoch + 10 h (worked out by hand: 56 years incl.
  // 14 leap days from 1970 to 2026 = 20454 days, plus Jan..Apr 2026 = 120 days).
  CHECK(epochNanos("2026-05-01T10:00:00Z") == (20574LL * 86400 + 36000) * 1000000000LL);
  CHECK(epochNanos("1970-01-01T00:00:00Z") == 0);
  CHECK(epochNanos("1970-01-01T00:00:01.5Z") == 1500000000LL);
  CHECK(epochNanos("1970-01-01T00:00:00.000000001Z") == 1);
  CHECK(epochNanos("1970-01-01T01:00:00+01:00") == 0);
  CHECK(epochNanos("1969-12-31T19:00:00-05:00") == 0);
  CHECK(epochNanos("2024-02-29T00:00:00z") == 19782LL * 86400 * 1000000000LL);
  CHECK(epochNanos("1969-12-31T23:59:59Z") == -1000000000LL);
}

TEST_CASE("Malformed RFC 3339 times are errors that quote the input", "[core][rfc3339]") {
  for (const char* s : {"", "2026-05-01", "2026-05-01T10:00:00", "2026-13-01T10:00:00Z",
                        "2026-02-30T10:00:00Z", "2026-05-01T24:00:00Z", "2026-05-01T10:00:00.Z",
                        "2026-05-01T10:00:00+0100", "2026-05-01T10:00:00Zjunk", "abcd-05-01T10:00:00Z",
                        "2026-05-01T10:00:00+25:00", "0001-01-01T00:00:00Z", "9026-01-01T00:00:00Z",
                        "1600-01-01T00:00:00Z"}) {
    auto r = parseRfc3339(s);
    INFO(s);
    CHECK_FALSE(r.ok());
    if (!r.ok()) CHECK(r.error().find("invalid RFC 3339") != std::string::npos);
  }
}

TEST_CASE("RFC 3339 formatting round-trips and is UTC", "[core][rfc3339]") {
  CHECK(formatRfc3339(SystemTime{}) == "1970-01-01T00:00:00Z");
  CHECK(formatRfc3339(*parseRfc3339("2026-05-01T12:00:00+02:00")) == "2026-05-01T10:00:00Z");
  CHECK(formatRfc3339(*parseRfc3339("2026-05-01T10:00:00.25Z")) == "2026-05-01T10:00:00.250Z");
  CHECK(formatRfc3339(*parseRfc3339("1969-12-31T23:59:59.5Z")) == "1969-12-31T23:59:59.500Z");
}

// Found by fuzz/fuzz_rfc3339: "2261-12-31T23:59:59-23:59" is 2262-01-01T23:58:59Z, which the parser
// accepted although formatRfc3339 writes it with a year the parser refuses. The bound is on the UTC
// instant: [1679-01-01T00:00:00Z, 2262-01-01T00:00:00Z).
TEST_CASE("RFC 3339 times whose offset moves them out of 1679..2261 UTC are refused",
          "[core][rfc3339]") {
  for (const char* s : {"2261-12-31T23:59:59-23:59", "2261-12-31T23:30:00-00:30",
                        "1679-01-01T00:00:00+00:01", "1679-01-01T23:00:00+23:59"}) {
    INFO(s);
    auto r = parseRfc3339(s);
    CHECK_FALSE(r.ok());
    if (!r.ok()) CHECK(r.error().find("outside 1679..2261") != std::string::npos);
  }
  // The last accepted instants on either side, and they format back to strings that parse.
  for (const char* s : {"2261-12-31T23:59:59.999Z", "2261-12-31T23:29:59-00:30",
                        "1679-01-01T00:00:00Z", "1679-01-01T00:01:00+00:01"}) {
    INFO(s);
    auto r = parseRfc3339(s);
    REQUIRE(r.ok());
    CHECK(parseRfc3339(formatRfc3339(*r)).ok());
  }
}
