#pragma once
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include <fmt/core.h>

namespace firstwork {

/// An immutable string of a small vocabulary that repeats across objects (condition types and
/// reasons, label keys, kind and cluster names, device attribute names), stored once per process:
/// the handle is one pointer, where a std::string is 32 bytes plus a heap block for anything over
/// 15 characters. At 265,000 tracked objects with about ten such strings each this is most of
/// what the strings cost.
///
/// The pool never shrinks, so it is bounded: strings longer than kMaxInternedBytes, and every
/// new string once the pool holds kMaxInternedStrings, are owned by their handle instead (a
/// private heap copy, still one pointer wide). Values are the same either way; only sharing is
/// lost. Thread-safe: the pool is guarded, and each thread keeps a cache of what it looked up.
class Interned {
 public:
  static constexpr size_t kMaxInternedBytes = 256;
  static constexpr size_t kMaxInternedStrings = 200'000;

  Interned() noexcept : bits_(emptyBits()) {}
  Interned(std::string_view s);  // NOLINT(google-explicit-constructor): a drop-in for std::string
  Interned(const std::string& s) : Interned(std::string_view(s)) {}  // NOLINT
  Interned(const char* s) : Interned(std::string_view(s)) {}         // NOLINT
  Interned(const Interned& o);
  Interned(Interned&& o) noexcept : bits_(o.bits_) { o.bits_ = emptyBits(); }
  Interned& operator=(const Interned& o);
  Interned& operator=(Interned&& o) noexcept {
    if (this != &o) {
      release();
      bits_ = o.bits_;
      o.bits_ = emptyBits();
    }
    return *this;
  }
  // Inline, like the moves: a decoded object holds a few dozen handles, nearly all pooled, and
  // the calls that found nothing to free were 3 % of decode + engine (bench/README.md, change 59).
  ~Interned() { release(); }

  const std::string& str() const noexcept {
    return *reinterpret_cast<const std::string*>(bits_ & ~kOwnedBit);
  }
  operator const std::string&() const noexcept { return str(); }  // NOLINT
  operator std::string_view() const noexcept { return str(); }    // NOLINT

  bool empty() const noexcept { return str().empty(); }
  size_t size() const noexcept { return str().size(); }
  const char* data() const noexcept { return str().data(); }
  const char* c_str() const noexcept { return str().c_str(); }
  void clear() noexcept { *this = Interned(); }
  // The read-only std::string calls the code uses, so that a field can change type in place.
  bool starts_with(std::string_view p) const noexcept { return std::string_view(str()).starts_with(p); }
  bool ends_with(std::string_view p) const noexcept { return std::string_view(str()).ends_with(p); }
  size_t find(std::string_view p, size_t pos = 0) const noexcept { return str().find(p, pos); }
  size_t find(char ch, size_t pos = 0) const noexcept { return str().find(ch, pos); }
  size_t rfind(char ch, size_t pos = std::string::npos) const noexcept { return str().rfind(ch, pos); }
  std::string substr(size_t pos, size_t n = std::string::npos) const { return str().substr(pos, n); }
  std::string::const_iterator begin() const noexcept { return str().begin(); }
  std::string::const_iterator end() const noexcept { return str().end(); }
  /// Whether this value is shared through the pool (false: owned, see the class comment).
  bool pooled() const noexcept { return (bits_ & kOwnedBit) == 0; }

  friend bool operator==(const Interned& a, const Interned& b) noexcept {
    return a.bits_ == b.bits_ || a.str() == b.str();
  }
  friend bool operator==(const Interned& a, std::string_view b) noexcept { return a.str() == b; }
  friend bool operator==(const Interned& a, const std::string& b) noexcept { return a.str() == b; }
  friend bool operator==(const Interned& a, const char* b) noexcept { return a.str() == b; }
  friend std::strong_ordering operator<=>(const Interned& a, const Interned& b) noexcept {
    return a.str().compare(b.str()) <=> 0;
  }
  friend std::strong_ordering operator<=>(const Interned& a, std::string_view b) noexcept {
    return a.str().compare(b) <=> 0;
  }
  friend std::strong_ordering operator<=>(const Interned& a, const std::string& b) noexcept {
    return a.str().compare(b) <=> 0;
  }
  friend std::strong_ordering operator<=>(const Interned& a, const char* b) noexcept {
    return a.str().compare(b) <=> 0;
  }

  /// Pooled only when at most `maxPooledBytes` long, else owned (as past the pool's bounds): for
  /// text that repeats when short and is unique when long, such as condition messages ("The
  /// workload is admitted" on every Workload; "Preempted to accommodate a workload (UID: …)"
  /// once), which must not fill the pool that never shrinks.
  static Interned pooledUpTo(std::string_view s, size_t maxPooledBytes);

  /// Strings in the pool (for tests and diagnostics).
  static size_t poolSize();
  /// Lowers (or restores) the pool's bound; for the test of what happens once it is full.
  static void setPoolLimitForTesting(size_t limit);

 private:
  static constexpr uintptr_t kOwnedBit = 1;
  /// The pool's empty string, looked up once.
  static uintptr_t emptyBits() noexcept {
    static const uintptr_t bits = emptyEntryBits();
    return bits;
  }
  static uintptr_t emptyEntryBits() noexcept;
  /// Pooled up to min(maxPooledBytes, kMaxInternedBytes) while the pool has room, else owned.
  static uintptr_t make(std::string_view s, size_t maxPooledBytes = kMaxInternedBytes);
  void release() noexcept {
    if (!pooled()) releaseOwned();
  }
  void releaseOwned() noexcept;

  uintptr_t bits_;
};

inline std::string operator+(const Interned& a, std::string_view b) {
  std::string r(a.str());
  r += b;
  return r;
}
inline std::string operator+(std::string_view a, const Interned& b) {
  std::string r(a);
  r += b.str();
  return r;
}

std::ostream& operator<<(std::ostream& os, const Interned& s);

}  // namespace firstwork

template <>
struct fmt::formatter<firstwork::Interned> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(const firstwork::Interned& s, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(s.str()), ctx);
  }
};

template <>
struct std::hash<firstwork::Interned> {
  size_t operator()(const firstwork::Interned& s) const noexcept {
    return std::hash<std::string_view>{}(s.str());
  }
};
