// libFuzzer target: the RFC 3339 parser (parseRfc3339), which reads every timestamp of every
// object the daemon decodes.
//
// Properties: an accepted time lies in the range the parser promises (1679-01-01T00:00:00Z up to
// 2262-01-01T00:00:00Z, so it fits SystemTime's 64-bit nanoseconds), and formatRfc3339 writes it back as a string the parser
// accepts and that denotes the same instant at millisecond precision (formatRfc3339's resolution).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "firstwork/core/rfc3339.hpp"
#include "fuzz_check.hpp"

using namespace firstwork;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto t = parseRfc3339(text);
  if (!t.ok()) {
    FW_FUZZ_CHECK(!t.error().empty());
    return 0;
  }
  using namespace std::chrono;
  // `date -u -d 1679-01-01 +%s` = -9183024000, `date -u -d 2262-01-01 +%s` = 9214646400.
  auto secs = duration_cast<seconds>(t->time_since_epoch()).count();
  FW_FUZZ_CHECK(secs >= -9183024000LL && secs < 9214646400LL);
  std::string formatted = formatRfc3339(*t);
  auto back = parseRfc3339(formatted);
  FW_FUZZ_CHECK(back.ok());
  FW_FUZZ_CHECK(duration_cast<milliseconds>(back->time_since_epoch()) ==
                duration_cast<milliseconds>(t->time_since_epoch()));
  return 0;
}
