#pragma once
// Shared by the libFuzzer targets in this directory: property checks that turn a silently wrong
// answer into a crash the fuzzer reports (a fuzzer only finds what makes the process die).
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "firstwork/core/utf8.hpp"

/// Aborts with the failed property and where it was checked.
#define FW_FUZZ_CHECK(cond)                                                               \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)

namespace firstwork::fuzz {

/// Decoded strings end up in JSON (API, store, logs), whose writers reject or mangle anything that
/// is not UTF-8.
inline bool validUtf8(std::string_view s) { return firstInvalidUtf8(s) == std::string_view::npos; }

}  // namespace firstwork::fuzz
