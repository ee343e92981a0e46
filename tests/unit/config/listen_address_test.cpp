#include "firstwork/config/listen_address.hpp"

#include <catch2/catch.hpp>

using namespace firstwork::config;

TEST_CASE("listen addresses parse IPv4, IPv6, names and bare ports", "[config][listen]") {
  auto a = parseListenAddress("0.0.0.0:9500").value();
  CHECK(a.host == "0.0.0.0");
  CHECK(a.port == 9500);
  auto b = parseListenAddress("[::1]:0").value();
  CHECK(b.host == "::1");
  CHECK(b.port == 0);
  CHECK(b.isIpv6());
  CHECK(b.toString() == "[::1]:0");
  auto c = parseListenAddress(":8080").value();
  CHECK(c.host == "0.0.0.0");
  CHECK(c.port == 8080);
  CHECK(parseListenAddress("localhost:65535").value().toString() == "localhost:65535");
}

TEST_CASE("unparsable listen addresses are rejected", "[config][listen]") {
  for (const char* bad :
       {"", "9500", "host:", "host:65536", "host:-1", "::1:9500", "[::1]", "[::1]9500",
        "[zz]:1", "ho st:1", "host:9x"}) {
    INFO(bad);
    auto r = parseListenAddress(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().find("invalid listen address") != std::string::npos);
  }
}
