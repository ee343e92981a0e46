#pragma once
#include <chrono>
#include <string>
#include <string_view>

#include "firstwork/core/result.hpp"

namespace firstwork::config {

/// Parses a duration as written in the config: one or more `<number><unit>` parts with units
/// `ms`, `s`, `m`, `h`, `d` (24 h), e.g. `30s`, `10m`, `1h30m`, `1.5h`, `90d`, `250ms`; `0` alone
/// is zero. Parts may come in any order but each unit at most once. Negative values, missing
/// units, unknown units and values over 100 years are errors. Sub-millisecond remainders truncate.
Result<std::chrono::milliseconds> parseDuration(std::string_view text);

/// The shortest form parseDuration reads back exactly: `0s`, `250ms`, `30s`, `1h30m`, `90d`,
/// `1d2h3m4s5ms`.
std::string formatDuration(std::chrono::milliseconds d);

}  // namespace firstwork::config
