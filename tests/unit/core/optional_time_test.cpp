#include "firstwork/core/optional_time.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <optional>

using firstwork::OptionalTime;
using firstwork::SystemTime;

TEST_CASE("optional time: std::optional<SystemTime> in 8 bytes") {
  STATIC_REQUIRE(sizeof(OptionalTime) == 8);
  OptionalTime none;
  CHECK_FALSE(none.has_value());
  CHECK_FALSE(static_cast<bool>(none));
  CHECK_THROWS_AS(none.value(), std::bad_optional_access);
  const SystemTime t = SystemTime{} + std::chrono::seconds(1716000000);
  CHECK(none.value_or(t) == t);
  CHECK_FALSE(std::optional<SystemTime>(none).has_value());
  OptionalTime at(t);
  CHECK(at.has_value());
  CHECK(*at == t);
  CHECK(at.value() == t);
  CHECK(at.value_or(SystemTime{}) == t);
  CHECK(std::optional<SystemTime>(at) == std::optional<SystemTime>(t));
  // The epoch itself is a value (only SystemTime::min() stands for absent).
  OptionalTime epoch(SystemTime{});
  CHECK(epoch.has_value());
  CHECK_FALSE(epoch == none);
  OptionalTime copy = at;
  CHECK(copy == at);
  copy.reset();
  CHECK(copy == none);
  copy = t;
  CHECK(copy == at);
  copy = std::nullopt;
  CHECK_FALSE(copy.has_value());
  copy = std::optional<SystemTime>(t);
  CHECK(*copy == t);
  copy = std::optional<SystemTime>();
  CHECK_FALSE(copy.has_value());
}
