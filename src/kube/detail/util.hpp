#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "firstwork/core/result.hpp"

namespace firstwork::kube::detail {

/// Standard base64 (RFC 4648 §4) with padding; whitespace in the input is ignored.
std::string base64Encode(std::string_view data);
Result<std::string> base64Decode(std::string_view text);

/// Reads a whole (small) file; the error names the path and errno text.
Result<std::string> readFile(const std::string& path);

/// Strips ASCII whitespace at both ends.
std::string_view trim(std::string_view s);

/// Case-insensitive ASCII comparison.
bool iequals(std::string_view a, std::string_view b);

/// Percent-encodes a query parameter value (RFC 3986 unreserved characters kept).
std::string urlEncode(std::string_view value);

}  // namespace firstwork::kube::detail
