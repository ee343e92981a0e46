#pragma once
#include <string>
#include <utility>
#include <variant>

namespace firstwork {

/// An error with a human-readable message that names the field or stage that failed.
struct Error {
  std::string message;
};

/// Value-or-error (GCC 12 has no std::expected in C++20 mode).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const std::string& error() const { return std::get<1>(v_).message; }

 private:
  std::variant<T, Error> v_;
};

/// Result for operations without a value.
struct Ok {};
using Status = Result<Ok>;

inline Error makeError(std::string message) { return Error{std::move(message)}; }

}  // namespace firstwork
