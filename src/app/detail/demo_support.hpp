#pragma once
// What the demo's checks and live summary use: readers of firstworkd's API JSON, each tolerating an
// absent field, a null (the API's "unknown") and a value of another type; and the tolerances a
// measured figure is compared with a scenario's stated one.
#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>

#include "firstwork/core/clock.hpp"

namespace firstwork::app::detail {

/// An RFC 3339 time field; nullopt when absent, null, not a string or not a time.
std::optional<SystemTime> timeOf(const nlohmann::json& j, const char* key);
/// A number field; nullopt when absent, null or not a number (json::value() throws on null).
std::optional<double> numberOf(const nlohmann::json& j, const char* key);
/// The text field `key` of the object field `object`; "" when either is absent or of another type
/// (operator[] on a const json with a missing key is undefined behaviour).
std::string nestedText(const nlohmann::json& j, const char* object, const char* key);
/// "12.5 min", or "n/a" when unknown.
std::string minutes(const std::optional<double>& seconds);

/// Figures from object timestamps: whole seconds, drill offsets whole seconds, so exact up to
/// floating point; within one second or 0.5 %.
bool near(double actual, double expected);
/// The daemon's own view of an outage ends when its first request after the server returned is
/// answered: up to one reconnect backoff (250 ms in the demo) plus a request later in real time,
/// which the time scale multiplies. Its start is rounded the same way: the loss is seen when the
/// failed requests have been retried (≈ 80 ms of real time under ASan on a busy machine, 10 s at
/// 120x; a 1 s bound made the telemetry-gap scenario fail in 2 of 4 CI runs). Kueue's view
/// (object timestamps) has no such rounding. Within one second of real time, scaled by `speed`.
bool withinProbeRounding(double actual, double expected, double speed);
/// Figures the daemon integrates over its own observation times (DRA pool-seconds: a pool counts
/// from when its slice change is seen until its repair is seen): both ends are late by their
/// delivery delay, and the difference of the two is multiplied by the time scale (25 ms of real
/// time was 3 s at 120x under ASan in CI). Within near(), or 100 ms of real time scaled by `speed`.
bool nearObserved(double actual, double expected, double speed);

}  // namespace firstwork::app::detail
