#pragma once
#include <cstdint>
#include <string_view>

#include "firstwork/core/result.hpp"

namespace firstwork {

/// Parses a Kubernetes resource.Quantity ("4", "500m", "1Gi", "2k", "1e3") into thousandths of the
/// unit (milli-units), which is exact for every device count. Negative values are rejected: no
/// capacity or request in this project can be negative.
Result<int64_t> parseQuantityMilli(std::string_view text);

}  // namespace firstwork
