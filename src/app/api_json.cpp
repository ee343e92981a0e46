#include "detail/api_json.hpp"

#include <fmt/format.h>

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

}  // namespace firstwork::app::detail
