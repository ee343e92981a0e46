#pragma once
#include <cstddef>
#include <string_view>

namespace firstwork {

/// Length of the valid UTF-8 sequence at s[i] (1–4), or 0 when the byte there does not start
/// one (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
size_t utf8SequenceAt(std::string_view s, size_t i);

/// Offset of the first byte of `s` that is not part of a valid UTF-8 sequence; npos when `s` is
/// valid UTF-8 throughout.
size_t firstInvalidUtf8(std::string_view s);

}  // namespace firstwork
