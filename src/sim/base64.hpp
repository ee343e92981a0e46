#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace firstwork::sim::detail {

/// RFC 4648 base64. `urlRaw` selects the URL-safe alphabet without padding (Go's
/// base64.RawURLEncoding, which kube-apiserver uses for continue tokens).
std::string base64Encode(std::string_view data, bool urlRaw = false);

/// Decodes either alphabet, with or without padding. nullopt on any other character.
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace firstwork::sim::detail
