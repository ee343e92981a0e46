#include <catch2/catch.hpp>

#include "firstwork/core/rfc3339.hpp"
#include "firstwork/kube/kube_transport.hpp"

using firstwork::kube::parseHttpDate;
using firstwork::kube::parseRetryAfter;
using namespace std::chrono_literals;

TEST_CASE("HTTP dates in all three RFC 9110 forms", "[kube][http]") {
  auto expected = *firstwork::parseRfc3339("1994-11-06T08:49:37Z");
  CHECK(parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT") == expected);
  CHECK(parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT") == expected);
  CHECK(parseHttpDate("Sun Nov  6 08:49:37 1994") == expected);
  CHECK(parseHttpDate("Tue, 29 Feb 2028 23:59:59 GMT") ==
        *firstwork::parseRfc3339("2028-02-29T23:59:59Z"));
  CHECK_FALSE(parseHttpDate("Sun, 31 Feb 1994 08:49:37 GMT"));
  CHECK_FALSE(parseHttpDate("Sun, 06 Nov 1994 25:49:37 GMT"));
  CHECK_FALSE(parseHttpDate("yesterday"));
  CHECK_FALSE(parseHttpDate(""));
}

TEST_CASE("Retry-After as seconds or as a date", "[kube][http]") {
  auto now = *firstwork::parseRfc3339("2026-05-01T10:00:00Z");
  CHECK(parseRetryAfter("7", now) == 7s);
  CHECK(parseRetryAfter(" 0 ", now) == 0s);
  // 10:00:30 - 10:00:00 = 30 s.
  CHECK(parseRetryAfter("Fri, 01 May 2026 10:00:30 GMT", now) == 30s);
  CHECK(parseRetryAfter("Fri, 01 May 2026 09:00:00 GMT", now) == 0s);  // past: no wait
  CHECK_FALSE(parseRetryAfter("-3", now));
  CHECK_FALSE(parseRetryAfter("soon", now));
}
