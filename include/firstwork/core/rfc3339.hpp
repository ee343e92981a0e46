#pragma once
#include <string>
#include <string_view>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/result.hpp"

namespace firstwork {

/// Parses an RFC 3339 date-time as Kubernetes writes it: `2026-05-01T10:00:00Z`, with optional
/// fractional seconds (up to nanoseconds) and a `Z` or `±hh:mm` offset. Lower-case `t`/`z` are
/// accepted (RFC 3339 §5.6 note). Anything else, including out-of-range fields, is an error.
Result<SystemTime> parseRfc3339(std::string_view text);

/// Formats as RFC 3339 UTC: seconds precision when whole, else milliseconds (`...T10:00:00.250Z`).
std::string formatRfc3339(SystemTime t);

}  // namespace firstwork
