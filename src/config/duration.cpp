#include "firstwork/config/duration.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

namespace firstwork::config {
namespace {

struct Unit {
  std::string_view name;
  int64_t millis;
};
// Order matters for matching: "ms" before "m".
constexpr std::array<Unit, 5> kUnits{{{"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000},
                                      {"d", 86'400'000}}};
constexpr double kMaxMillis = 100.0 * 365 * 86'400'000;  // 100 years

}  // namespace

Result<std::chrono::milliseconds> parseDuration(std::string_view text) {
  auto fail = [&](std::string_view why) {
    return makeError(fmt::format("invalid duration \"{}\": {} (examples: 30s, 10m, 1h30m, 90d)",
                                 text, why));
  };
  if (text.empty()) return fail("empty");
  if (text == "0") return std::chrono::milliseconds(0);
  if (text.front() == '-') return fail("negative");
  double total = 0;
  std::array<bool, kUnits.size()> seen{};
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    size_t int_end = i;
    if (i < text.size() && text[i] == '.') {
      ++i;
      size_t frac_start = i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      if (i == frac_start) return fail("a decimal point needs digits after it");
    }
    if (int_end == start && (i == start || text[start] != '.')) return fail("expected a number");
    if (i - start > 18) return fail("number too long");
    double value = 0;
    std::from_chars(text.data() + start, text.data() + i, value);  // digits checked above
    size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    if (unit.empty()) return fail("missing unit after a number");
    bool matched = false;
    for (size_t u = 0; u < kUnits.size(); ++u) {
      if (kUnits[u].name == unit) {
        if (seen[u]) return fail(fmt::format("unit \"{}\" given twice", unit));
        seen[u] = true;
        total += value * static_cast<double>(kUnits[u].millis);
        matched = true;
        break;
      }
    }
    if (!matched) return fail(fmt::format("unknown unit \"{}\" (use ms, s, m, h or d)", unit));
    if (total > kMaxMillis) return fail("longer than 100 years");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(std::floor(total)));
}

std::string formatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out = "-";
    ms = -ms;
  }
  for (size_t u = kUnits.size(); u-- > 0;) {
    int64_t n = ms / kUnits[u].millis;
    if (n > 0) {
      out += fmt::format("{}{}", n, kUnits[u].name);
      ms -= n * kUnits[u].millis;
    }
  }
  return out;
}

}  // namespace firstwork::config
