// The demo reads firstworkd's API JSON with these: an absent field, a null (the API's "unknown")
// or a value of another type must give "unknown", never an exception or undefined behaviour.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "detail/demo_support.hpp"
#include "firstwork/core/rfc3339.hpp"

using firstwork::app::detail::minutes;
using firstwork::app::detail::near;
using firstwork::app::detail::nearObserved;
using firstwork::app::detail::withinProbeRounding;
using firstwork::app::detail::nestedText;
using firstwork::app::detail::numberOf;
using firstwork::app::detail::timeOf;
using nlohmann::json;

TEST_CASE("numberOf reads numbers and gives unknown for null or absent fields or other types",
          "[app][demo]") {
  const json j = json::parse(R"({"a": 90.5, "zero": 0, "n": null, "s": "12", "o": {}})");
  CHECK(numberOf(j, "a") == 90.5);
  REQUIRE(numberOf(j, "zero").has_value());  // a real 0 is not unknown
  CHECK(*numberOf(j, "zero") == 0.0);
  CHECK_FALSE(numberOf(j, "n").has_value());
  CHECK_FALSE(numberOf(j, "missing").has_value());
  CHECK_FALSE(numberOf(j, "s").has_value());
  CHECK_FALSE(numberOf(j, "o").has_value());
}

TEST_CASE("nestedText reads a text inside an object field and gives empty for anything else",
          "[app][demo]") {
  const json j = json::parse(
      R"({"preemptor": {"namespace": "team-a", "name": "big", "uid": 7}, "flat": "x", "nul": null})");
  CHECK(nestedText(j, "preemptor", "namespace") == "team-a");
  CHECK(nestedText(j, "preemptor", "name") == "big");
  CHECK(nestedText(j, "preemptor", "uid").empty());      // not a string
  CHECK(nestedText(j, "preemptor", "missing").empty());
  CHECK(nestedText(j, "flat", "name").empty());          // not an object
  CHECK(nestedText(j, "nul", "name").empty());
  CHECK(nestedText(j, "absent", "name").empty());
  CHECK(nestedText(json::parse("[]"), "preemptor", "name").empty());
}

TEST_CASE("timeOf reads RFC 3339 times and gives unknown for anything else", "[app][demo]") {
  const json j = json::parse(
      R"({"t": "2026-05-01T10:00:30Z", "bad": "yesterday", "n": null, "num": 5})");
  REQUIRE(timeOf(j, "t").has_value());
  CHECK(*timeOf(j, "t") == firstwork::parseRfc3339("2026-05-01T10:00:30Z").value());
  CHECK_FALSE(timeOf(j, "bad").has_value());
  CHECK_FALSE(timeOf(j, "n").has_value());
  CHECK_FALSE(timeOf(j, "num").has_value());
  CHECK_FALSE(timeOf(j, "missing").has_value());
}

TEST_CASE("minutes prints a known duration in minutes and n/a for an unknown one", "[app][demo]") {
  CHECK(minutes(750.0) == "12.5 min");
  CHECK(minutes(0.0) == "0.0 min");
  CHECK(minutes(std::nullopt) == "n/a");
}

TEST_CASE("a stated figure is met within its tolerance and no further", "[app][demo]") {
  // From object timestamps: 1 s or 0.5 %.
  CHECK(near(540.9, 540));
  CHECK(near(542.6, 540));        // 0.5 % of 540 = 2.7
  CHECK_FALSE(near(543, 540));
  CHECK(near(19'200 + 96, 19'200));  // 0.5 % of 19,200
  CHECK_FALSE(near(19'200 + 97, 19'200));
  // The daemon's own outage view at 120x: 120 s either way.
  CHECK(withinProbeRounding(420 + 120, 420, 120));
  CHECK_FALSE(withinProbeRounding(420 + 121, 420, 120));
  CHECK(withinProbeRounding(420.5, 420, 0.5));  // never below 1 s
  // From the daemon's observation times at 120x: 100 ms of real time is 12 s (the CI run that
  // measured 543 pool-seconds for the stated 540).
  CHECK(nearObserved(543, 540, 120));
  CHECK(nearObserved(552, 540, 120));
  CHECK_FALSE(nearObserved(552.5, 540, 120));
  CHECK_FALSE(nearObserved(527.5, 540, 120));
  // At 1x the near() bound is the wider one.
  CHECK(nearObserved(542.6, 540, 1));
  CHECK_FALSE(nearObserved(543, 540, 1));
}
