#include <fmt/format.h>

#include <cmath>

#include "detail/format.hpp"

namespace firstwork::report::detail {

std::string fixed(double value, int decimals) {
  std::string s = fmt::format("{:.{}f}", value, decimals);
  // -0.0 and the like: a rounding artefact, not a sign worth printing.
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string duration(double seconds) {
  const bool negative = seconds < 0;
  double a = std::abs(seconds);
  std::string sign = negative ? "-" : "";
  if (std::llround(a * 10) < 600) {
    if (std::abs(a - std::round(a)) < 0.05) return fmt::format("{}{}s", sign, std::llround(a));
    return fmt::format("{}{}s", sign, fixed(a, 1));
  }
  long long s = std::llround(a);
  if (s < 3600) return fmt::format("{}{}m {:02}s", sign, s / 60, s % 60);
  return fmt::format("{}{}h {:02}m {:02}s", sign, s / 3600, (s % 3600) / 60, s % 60);
}

std::string duration(const std::optional<double>& seconds) {
  return seconds ? duration(*seconds) : std::string("—");
}

std::string gpuMinutes(double gpuSeconds) { return fixed(gpuSeconds / 60.0, 1); }
std::string gpuHours(double gpuSeconds) { return fixed(gpuSeconds / 3600.0, 2); }

std::string money(const std::string& currency, double amount) {
  std::string digits = fixed(std::abs(amount), 2);
  bool zero = digits.find_first_not_of("0.") == std::string::npos;
  return fmt::format("{}{}{}", amount < 0 && !zero ? "-" : "", currency, digits);
}

std::string percent(double value) { return fixed(value, 1) + " %"; }

std::string offset(SystemTime t, SystemTime r) {
  double s = toSeconds(t - r);
  return s < 0 ? "R" + duration(s) : "R+" + duration(s);
}

std::string fileSafe(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    out += ok ? c : '-';
  }
  return out.empty() ? "-" : out;
}

}  // namespace firstwork::report::detail
