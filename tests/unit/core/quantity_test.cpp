#include "firstwork/core/quantity.hpp"

#include <catch2/catch.hpp>

using namespace firstwork;

TEST_CASE("Kubernetes quantities parse to milli-units", "[core][quantity]") {
  CHECK(*parseQuantityMilli("4") == 4000);
  CHECK(*parseQuantityMilli("500m") == 500);
  CHECK(*parseQuantityMilli("1k") == 1000000);
  CHECK(*parseQuantityMilli("1Ki") == 1024000);
  CHECK(*parseQuantityMilli("80Gi") == 80LL * 1073741824LL * 1000);
  CHECK(*parseQuantityMilli("1e3") == 1000000);
  CHECK(*parseQuantityMilli("0.5") == 500);
  CHECK(*parseQuantityMilli("+2") == 2000);
  CHECK(*parseQuantityMilli("1n") == 1);  // rounded up like Quantity.MilliValue
}

TEST_CASE("Bad quantities are rejected", "[core][quantity]") {
  for (const char* s : {"", "-1", "abc", "1x", "1..2", "1e", "Gi", "1e99999", "1e999",
                        "1111111111111111111111111111111111111111111111111111111111111111111111"}) {
    INFO(s);
    CHECK_FALSE(parseQuantityMilli(s).ok());
  }
}
