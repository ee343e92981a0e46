#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "firstwork/core/result.hpp"

namespace firstwork::config {

/// A bind address: host (IPv4 literal, IPv6 literal without brackets, or a host name) and port.
struct ListenAddress {
  std::string host;
  uint16_t port = 0;  // 0: the OS picks a free port

  /// `host:port`, with brackets around IPv6 literals (`[::1]:9500`).
  std::string toString() const;
  bool isIpv6() const { return host.find(':') != std::string::npos; }
};

/// Parses `host:port`, `[ipv6]:port` or `:port` (all IPv4 interfaces, `0.0.0.0`). The port is
/// 0–65535 (0 lets the OS choose). An IPv6 literal must be bracketed; host names may contain
/// letters, digits, `-` and `.` only.
Result<ListenAddress> parseListenAddress(std::string_view text);

}  // namespace firstwork::config
