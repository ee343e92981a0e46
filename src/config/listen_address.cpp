#include "firstwork/config/listen_address.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace firstwork::config {

std::string ListenAddress::toString() const {
  return isIpv6() ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

Result<ListenAddress> parseListenAddress(std::string_view text) {
  auto fail = [&](std::string_view why) {
    return makeError(fmt::format("invalid listen address \"{}\": {} (expected host:port, "
                                 "[ipv6]:port or :port)", text, why));
  };
  std::string_view host;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return fail("missing ']'");
    host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':') return fail("missing :port");
    port_text = text.substr(close + 2);
    in6_addr addr{};
    if (inet_pton(AF_INET6, std::string(host).c_str(), &addr) != 1) {
      return fail("not an IPv6 address inside []");
    }
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return fail("missing :port");
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return fail("IPv6 addresses need brackets");
    for (char c : host) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') {
        return fail(fmt::format("invalid character '{}' in host", c));
      }
    }
    if (host.empty()) host = "0.0.0.0";
  }
  if (port_text.empty()) return fail("empty port");
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    return fail("port must be a number from 0 to 65535");
  }
  return ListenAddress{std::string(host), static_cast<uint16_t>(port)};
}

}  // namespace firstwork::config
