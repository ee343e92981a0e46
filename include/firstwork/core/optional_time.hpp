#pragma once
#include <optional>

#include "firstwork/core/clock.hpp"

namespace firstwork {

/// A std::optional<SystemTime> in 8 bytes instead of 16 (the flag and its padding): absent is
/// SystemTime::min(), which no decoded time is (times before the Unix epoch are rejected, see
/// src/model/json.cpp). For fields every tracked object carries, where the 8 bytes decide the
/// object's allocation size class (bench/README.md, change 69). The std::optional calls the code
/// uses, so that a field can change type in place; converts to std::optional<SystemTime>.
class OptionalTime {
 public:
  constexpr OptionalTime() noexcept = default;
  constexpr OptionalTime(std::nullopt_t) noexcept {}            // NOLINT: as std::optional
  constexpr OptionalTime(SystemTime t) noexcept : t_(t) {}      // NOLINT
  constexpr OptionalTime(const std::optional<SystemTime>& o) noexcept  // NOLINT
      : t_(o ? *o : kAbsent) {}
  constexpr OptionalTime& operator=(std::nullopt_t) noexcept {
    t_ = kAbsent;
    return *this;
  }
  constexpr OptionalTime& operator=(SystemTime t) noexcept {
    t_ = t;
    return *this;
  }

  constexpr bool has_value() const noexcept { return t_ != kAbsent; }
  constexpr explicit operator bool() const noexcept { return has_value(); }
  /// The time; only when has_value() (as std::optional's).
  constexpr const SystemTime& operator*() const noexcept { return t_; }
  constexpr const SystemTime* operator->() const noexcept { return &t_; }
  SystemTime value() const {
    if (!has_value()) throw std::bad_optional_access();
    return t_;
  }
  constexpr SystemTime value_or(SystemTime fallback) const noexcept {
    return has_value() ? t_ : fallback;
  }
  constexpr void reset() noexcept { t_ = kAbsent; }
  constexpr operator std::optional<SystemTime>() const noexcept {  // NOLINT
    return has_value() ? std::optional<SystemTime>(t_) : std::nullopt;
  }
  friend constexpr bool operator==(OptionalTime a, OptionalTime b) noexcept = default;

 private:
  static constexpr SystemTime kAbsent = SystemTime::min();
  SystemTime t_ = kAbsent;
};

static_assert(sizeof(OptionalTime) == sizeof(SystemTime));

}  // namespace firstwork
