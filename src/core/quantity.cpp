#include "firstwork/core/quantity.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <string>

namespace firstwork {

// Suffixes from k8s.io/apimachinery/pkg/api/resource/suffix.go: binary (Ki..Ei), decimal (n..E)
// and decimal exponents (e/E followed by an integer).
Result<int64_t> parseQuantityMilli(std::string_view s) {
  auto bad = [&](const char* why) {
    return makeError(fmt::format("invalid quantity \"{}\": {}", s.substr(0, 64), why));
  };
  if (s.empty()) return bad("empty");
  if (s.size() > 64) return bad("longer than 64 characters");
  size_t pos = 0;
  if (s[0] == '+') pos = 1;
  if (s[0] == '-') return bad("negative");
  size_t numStart = pos;
  while (pos < s.size() && ((s[pos] >= '0' && s[pos] <= '9') || s[pos] == '.')) ++pos;
  if (pos == numStart) return bad("no digits");
  std::string number(s.substr(numStart, pos - numStart));
  if (number.find('.') != number.rfind('.')) return bad("more than one decimal point");
  std::string_view suffix = s.substr(pos);
  long double mult = 1;
  if (suffix.empty()) {
  } else if (suffix == "n") {
    mult = 1e-9L;
  } else if (suffix == "u") {
    mult = 1e-6L;
  } else if (suffix == "m") {
    mult = 1e-3L;
  } else if (suffix == "k") {
    mult = 1e3L;
  } else if (suffix == "M") {
    mult = 1e6L;
  } else if (suffix == "G") {
    mult = 1e9L;
  } else if (suffix == "T") {
    mult = 1e12L;
  } else if (suffix == "P") {
    mult = 1e15L;
  } else if (suffix == "E") {
    mult = 1e18L;
  } else if (suffix == "Ki") {
    mult = 1024.0L;
  } else if (suffix == "Mi") {
    mult = 1048576.0L;
  } else if (suffix == "Gi") {
    mult = 1073741824.0L;
  } else if (suffix == "Ti") {
    mult = 1099511627776.0L;
  } else if (suffix == "Pi") {
    mult = 1125899906842624.0L;
  } else if (suffix == "Ei") {
    mult = 1152921504606846976.0L;
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string_view ex = suffix.substr(1);
    bool neg = false;
    if (!ex.empty() && (ex[0] == '-' || ex[0] == '+')) {
      neg = ex[0] == '-';
      ex = ex.substr(1);
    }
    if (ex.empty() || ex.size() > 3) return bad("bad exponent");
    int e = 0;
    for (char c : ex) {
      if (c < '0' || c > '9') return bad("bad exponent");
      e = e * 10 + (c - '0');
    }
    mult = std::pow(10.0L, neg ? -e : e);
  } else {
    return bad("unknown suffix");
  }
  long double v = std::strtold(number.c_str(), nullptr) * mult * 1000.0L;
  if (!std::isfinite(v) || v > 9.2e18L) return bad("too large");
  // Kubernetes rounds up fractional milli-values (Quantity.MilliValue uses ceiling).
  return static_cast<int64_t>(std::ceil(v - 1e-9L));
}

}  // namespace firstwork
