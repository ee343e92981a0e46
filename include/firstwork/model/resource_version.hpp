#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace firstwork::model {

/// metadata.resourceVersion in 8 bytes instead of a 32-byte std::string. The value is opaque
/// (the API conventions forbid reading order or arithmetic into it) and is only kept whole and
/// compared for equality (a relist tells a changed object from an unchanged one by it). What an
/// API server backed by etcd sends is an etcd revision in canonical decimal, so such a value
/// (digits, no leading zero, below 2^63) is held as its number, and anything else as a copy of
/// its text in a heap block of its own; the text reads back exactly as it came either way, and
/// two values are equal exactly when their texts are (a canonical decimal text is never held as
/// text). Every tracked object carries one: the 24 bytes are part of what puts a decoded object
/// in the 320-byte block (bench/README.md, change 72).
class ResourceVersion {
 public:
  ResourceVersion() noexcept = default;
  explicit ResourceVersion(std::string_view text) { assign(text); }
  ResourceVersion(const ResourceVersion& o);
  ResourceVersion(ResourceVersion&& o) noexcept : bits_(o.bits_) { o.bits_ = 0; }
  ResourceVersion& operator=(const ResourceVersion& o);
  ResourceVersion& operator=(ResourceVersion&& o) noexcept;
  ~ResourceVersion() { release(); }

  void assign(std::string_view text);
  void clear() noexcept {
    release();
    bits_ = 0;
  }

  bool empty() const noexcept { return bits_ == 0; }
  /// Whether the value is held as a number (canonical decimal) rather than as text.
  bool numeric() const noexcept { return (bits_ & 1U) != 0; }
  /// The text, exactly as it was assigned.
  std::string str() const;

  friend bool operator==(const ResourceVersion& a, const ResourceVersion& b) noexcept;
  friend bool operator==(const ResourceVersion& a, std::string_view b) noexcept;

 private:
  void release() noexcept;
  // 0: empty. Low bit 1: a canonical decimal number n, held as (n << 1) | 1. Otherwise a pointer
  // to a heap block: a uint32_t length, then the text.
  uint64_t bits_ = 0;
};

static_assert(sizeof(ResourceVersion) == 8);

std::ostream& operator<<(std::ostream& os, const ResourceVersion& rv);

}  // namespace firstwork::model
