// libFuzzer target: the resource.Quantity parser (parseQuantityMilli), which reads every request,
// allocatable, capacity and quota quantity the daemon decodes.
//
// Properties: an accepted quantity is never negative; a plain integer with an SI or binary suffix
// (up to 15 digits, so it is exact in a long double) parses to exactly n × multiplier × 1000, and
// an integer whose milli-value exceeds int64 is rejected rather than wrapped.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "firstwork/core/quantity.hpp"
#include "fuzz_check.hpp"

using namespace firstwork;

namespace {

/// The exact milli-value of "<digits><suffix>" for the integer forms, or -1 when `text` is not one.
__int128 exactMilli(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  size_t digits = 0;
  __int128 n = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    if (digits < 16) n = n * 10 + (text[digits] - '0');  // beyond that it is not used
    ++digits;
  }
  if (digits == 0 || digits > 15) return -1;
  static constexpr std::pair<std::string_view, int64_t> kSuffixes[] = {
      {"", 1},           {"k", 1000},         {"M", 1000000},      {"G", 1000000000},
      {"Ki", 1LL << 10}, {"Mi", 1LL << 20},   {"Gi", 1LL << 30},   {"Ti", 1LL << 40}};
  for (const auto& [suffix, mult] : kSuffixes) {
    if (text.substr(digits) == suffix) return n * mult * 1000;
  }
  return -1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto q = parseQuantityMilli(text);
  if (q.ok()) FW_FUZZ_CHECK(*q >= 0);
  else FW_FUZZ_CHECK(!q.error().empty());
  __int128 exact = exactMilli(text);
  if (exact >= 0 && exact <= static_cast<__int128>(9'000'000'000'000'000'000LL)) {
    FW_FUZZ_CHECK(q.ok() && *q == static_cast<int64_t>(exact));
  }
  if (exact > static_cast<__int128>(INT64_MAX)) FW_FUZZ_CHECK(!q.ok());
  return 0;
}
