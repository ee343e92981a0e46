#pragma once
// Reading fields of firstworkd's API JSON (the demo's checks and live summary): every reader
// tolerates an absent field, a null (the API's "unknown") and a value of another type.
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

}  // namespace firstwork::app::detail
