#include <fmt/format.h>

#include <cstdint>
#include <limits>

#include "firstwork/scenario/scenario.hpp"

namespace firstwork::scenario {

Result<Offset> parseOffset(std::string_view text) {
  auto bad = [&](const char* why) {
    return makeError(fmt::format("invalid duration \"{}\": {} (write e.g. 8m, 90s, 1h30m, -30m)",
                                 text, why));
  };
  std::string_view s = text;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  if (s.empty()) return bad("empty");
  bool negative = false;
  if (s.front() == '-' || s.front() == '+') {
    negative = s.front() == '-';
    s.remove_prefix(1);
    if (s.empty()) return bad("sign without a number");
  }
  // A bare integer is seconds (YAML `at: 0`, `at: 90`).
  bool allDigits = true;
  for (char c : s) allDigits = allDigits && c >= '0' && c <= '9';
  int64_t totalMs = 0;
  constexpr int64_t kLimit = std::numeric_limits<int64_t>::max() / 4;
  if (allDigits) {
    if (s.size() > 12) return bad("too large");
    for (char c : s) totalMs = totalMs * 10 + (c - '0');
    totalMs *= 1000;
  } else {
    size_t pos = 0;
    while (pos < s.size()) {
      size_t start = pos;
      int64_t whole = 0;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        whole = whole * 10 + (s[pos] - '0');
        if (whole > kLimit / 3600000) return bad("too large");
        ++pos;
      }
      // Fractions like 1.5m are accepted to the millisecond.
      int64_t fracNum = 0, fracDen = 1;
      if (pos < s.size() && s[pos] == '.') {
        ++pos;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
          if (fracDen < 1000000) {
            fracNum = fracNum * 10 + (s[pos] - '0');
            fracDen *= 10;
          }
          ++pos;
        }
      }
      if (pos == start) return bad("expected a number");
      size_t unitStart = pos;
      while (pos < s.size() && ((s[pos] >= 'a' && s[pos] <= 'z') || (s[pos] >= 'A' && s[pos] <= 'Z'))) ++pos;
      std::string_view unit = s.substr(unitStart, pos - unitStart);
      int64_t unitMs = 0;
      if (unit == "h") unitMs = 3600000;
      else if (unit == "m") unitMs = 60000;
      else if (unit == "s") unitMs = 1000;
      else if (unit == "ms") unitMs = 1;
      else if (unit.empty()) return bad("missing unit (h, m, s or ms)");
      else return bad("unknown unit (use h, m, s or ms)");
      totalMs += whole * unitMs + fracNum * unitMs / fracDen;
    }
  }
  return Offset{negative ? -totalMs : totalMs};
}

std::string formatOffset(Offset offset) {
  int64_t ms = offset.count();
  std::string out;
  if (ms < 0) {
    out.push_back('-');  // not `out = "-"`: GCC 12 warns falsely (-Wrestrict) under sanitizers
    ms = -ms;
  }
  if (ms == 0) return "0s";
  int64_t h = ms / 3600000;
  int64_t m = (ms / 60000) % 60;
  int64_t s = (ms / 1000) % 60;
  int64_t rest = ms % 1000;
  if (h) out += fmt::format("{}h", h);
  if (m) out += fmt::format("{}m", m);
  if (rest && (h || m || s)) {
    out += fmt::format("{}.{:03}s", s, rest);
    while (out[out.size() - 2] == '0') out.erase(out.size() - 2, 1);  // 1.500s → 1.5s
  } else if (rest) {
    out += fmt::format("{}ms", rest);
  } else if (s) {
    out += fmt::format("{}s", s);
  }
  return out;
}

}  // namespace firstwork::scenario
