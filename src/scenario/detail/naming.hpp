#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace firstwork::scenario::detail {

/// FNV-1a 64-bit: a stable hash for deterministic generated names and UIDs (not for security).
uint64_t fnv1a(std::string_view text, uint64_t seed = 0xcbf29ce484222325ULL);

/// `n` lowercase hex digits of a hash of `text`.
std::string hexDigits(std::string_view text, size_t n);

/// A 5-character suffix in the alphabet Kubernetes uses for generateName
/// ("bcdfghjklmnpqrstvwxz2456789"), derived from `text`.
std::string nameSuffix(std::string_view text);

/// An RFC 4122 version-4-shaped UUID derived from `text` (same text, same UUID).
std::string uuidFrom(std::string_view text);

/// "<cluster> <kind> <ns>/<name>" (no "/" for cluster-scoped objects): one object of a scenario.
std::string objectKey(const std::string& cluster, const std::string& kind, const std::string& ns,
                      const std::string& name);

}  // namespace firstwork::scenario::detail
