#include "detail/demo_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "firstwork/core/rfc3339.hpp"

namespace firstwork::app::detail {

std::optional<SystemTime> timeOf(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  auto t = parseRfc3339(it->get<std::string>());
  if (!t.ok()) return std::nullopt;
  return *t;
}

std::optional<double> numberOf(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string nestedText(const nlohmann::json& j, const char* object, const char* key) {
  auto it = j.find(object);
  if (it == j.end() || !it->is_object()) return {};
  auto v = it->find(key);
  return v != it->end() && v->is_string() ? v->get<std::string>() : std::string();
}

std::string minutes(const std::optional<double>& seconds) {
  return seconds ? fmt::format("{:.1f} min", *seconds / 60) : "n/a";
}

bool near(double actual, double expected) {
  return std::abs(actual - expected) <= std::max(1.0, std::abs(expected) * 0.005);
}

bool withinProbeRounding(double actual, double expected, double speed) {
  const double rounding = std::max(1.0, 1.0 * speed);
  return actual >= expected - rounding && actual <= expected + rounding;
}

bool nearObserved(double actual, double expected, double speed) {
  return near(actual, expected) || std::abs(actual - expected) <= 0.1 * speed;
}

}  // namespace firstwork::app::detail
