#pragma once
#include <fmt/core.h>

#include <compare>
#include <cstddef>
#include <cstring>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace firstwork {

/// An immutable-in-use string of one `Bytes`-byte block: up to kInlineBytes (`Bytes` - 2)
/// characters inline, longer ones in a heap block of their own. For the unique strings every
/// tracked object carries, of which nearly all fit: a Kubernetes uid is 36 characters, past
/// std::string's 15, so as a std::string it costs 32 bytes plus a 48-byte heap block, and as a
/// SmallString (40 bytes) no allocation (bench/README.md, change 69); an object's name, usually
/// 16-30 characters (a Job's, its pods' and its Workload's), costs 32 bytes and a 32-byte heap
/// block as a std::string and 32 bytes as a ShortString (change 77). A value past the inline
/// bytes costs what a std::string's would. Always NUL-terminated (c_str). A view of an inline
/// value points into this object: it moves with it, so keep views only of objects that stay put
/// (a decoded object once it is held).
template <size_t Bytes>
class BasicSmallString {
  static_assert(Bytes >= 24 && Bytes <= 256 && Bytes % 8 == 0);

 public:
  static constexpr size_t kInlineBytes = Bytes - 2;

  BasicSmallString() noexcept { setInline(0); }
  BasicSmallString(std::string_view s) { init(s); }  // NOLINT: a drop-in
  BasicSmallString(const std::string& s) : BasicSmallString(std::string_view(s)) {}  // NOLINT
  BasicSmallString(const char* s) : BasicSmallString(std::string_view(s)) {}         // NOLINT
  BasicSmallString(const BasicSmallString& o) { init(o.view()); }
  BasicSmallString(BasicSmallString&& o) noexcept {
    std::memcpy(b_, o.b_, sizeof b_);
    o.setInline(0);
  }
  BasicSmallString& operator=(const BasicSmallString& o) {
    if (this != &o) assign(o.view());
    return *this;
  }
  BasicSmallString& operator=(BasicSmallString&& o) noexcept {
    if (this != &o) {
      release();
      std::memcpy(b_, o.b_, sizeof b_);
      o.setInline(0);
    }
    return *this;
  }
  BasicSmallString& operator=(std::string_view s) { return assign(s); }
  BasicSmallString& operator=(const std::string& s) { return assign(s); }
  BasicSmallString& operator=(const char* s) { return assign(s); }
  ~BasicSmallString() { release(); }

  /// Replaces the value; `s` may be a view of this string's own value.
  BasicSmallString& assign(std::string_view s) {
    BasicSmallString t(s);
    return *this = std::move(t);
  }

  std::string_view view() const noexcept { return {data(), size()}; }
  operator std::string_view() const noexcept { return view(); }  // NOLINT
  std::string str() const { return std::string(view()); }

  const char* data() const noexcept { return onHeap() ? heapPtr() : b_; }
  const char* c_str() const noexcept { return data(); }
  size_t size() const noexcept {
    return onHeap() ? heapSize() : static_cast<unsigned char>(b_[kTag]);
  }
  bool empty() const noexcept { return size() == 0; }
  void clear() noexcept {
    release();
    setInline(0);
  }
  /// Whether the value is in a heap block (longer than kInlineBytes).
  bool onHeap() const noexcept { return static_cast<unsigned char>(b_[kTag]) == kHeapTag; }

  // The read-only std::string calls the code uses, so that a field can change type in place.
  bool starts_with(std::string_view p) const noexcept { return view().starts_with(p); }
  bool ends_with(std::string_view p) const noexcept { return view().ends_with(p); }
  size_t find(std::string_view p, size_t pos = 0) const noexcept { return view().find(p, pos); }
  size_t find(char ch, size_t pos = 0) const noexcept { return view().find(ch, pos); }
  std::string substr(size_t pos, size_t n = std::string::npos) const {
    return std::string(view().substr(pos, n));
  }
  const char* begin() const noexcept { return data(); }
  const char* end() const noexcept { return data() + size(); }

  friend bool operator==(const BasicSmallString& a, const BasicSmallString& b) noexcept {
    return a.view() == b.view();
  }
  friend bool operator==(const BasicSmallString& a, std::string_view b) noexcept {
    return a.view() == b;
  }
  friend bool operator==(const BasicSmallString& a, const std::string& b) noexcept {
    return a.view() == b;
  }
  friend bool operator==(const BasicSmallString& a, const char* b) noexcept {
    return a.view() == b;
  }
  friend std::strong_ordering operator<=>(const BasicSmallString& a,
                                          const BasicSmallString& b) noexcept {
    return a.view().compare(b.view()) <=> 0;
  }
  friend std::strong_ordering operator<=>(const BasicSmallString& a, std::string_view b) noexcept {
    return a.view().compare(b) <=> 0;
  }
  friend std::strong_ordering operator<=>(const BasicSmallString& a,
                                          const std::string& b) noexcept {
    return a.view().compare(b) <=> 0;
  }
  friend std::strong_ordering operator<=>(const BasicSmallString& a, const char* b) noexcept {
    return a.view().compare(b) <=> 0;
  }

 private:
  static constexpr size_t kTag = Bytes - 1;  // inline: the length; kHeapTag: a heap block
  static constexpr unsigned char kHeapTag = 0xFF;

  void setInline(size_t n) noexcept {
    b_[n] = '\0';
    b_[kTag] = static_cast<char>(n);
  }
  const char* heapPtr() const noexcept {
    const char* p;
    std::memcpy(&p, b_, sizeof p);
    return p;
  }
  size_t heapSize() const noexcept {
    size_t n;
    std::memcpy(&n, b_ + sizeof(char*), sizeof n);
    return n;
  }
  void init(std::string_view s) {
    if (s.size() <= kInlineBytes) {
      if (!s.empty()) std::memcpy(b_, s.data(), s.size());
      setInline(s.size());
    } else {
      initHeap(s);
    }
  }
  void initHeap(std::string_view s);
  void release() noexcept {
    if (onHeap()) releaseHeap();
  }
  void releaseHeap() noexcept;

  alignas(8) char b_[Bytes];
};

/// 40 bytes, 38 characters inline: a uid (36).
using SmallString = BasicSmallString<40>;
/// 32 bytes, 30 characters inline, as large as a std::string: an object's name.
using ShortString = BasicSmallString<32>;
static_assert(sizeof(SmallString) == 40);
static_assert(sizeof(ShortString) == 32);
extern template class BasicSmallString<40>;
extern template class BasicSmallString<32>;
extern template class BasicSmallString<48>;  // the engine's logical workload keys

template <size_t N>
std::string operator+(const BasicSmallString<N>& a, std::string_view b) {
  std::string r(a.view());
  r += b;
  return r;
}
template <size_t N>
std::string operator+(std::string_view a, const BasicSmallString<N>& b) {
  std::string r(a);
  r += b.view();
  return r;
}

template <size_t N>
std::ostream& operator<<(std::ostream& os, const BasicSmallString<N>& s);  // 32, 40 and 48 bytes

}  // namespace firstwork

template <size_t N>
struct fmt::formatter<firstwork::BasicSmallString<N>> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(const firstwork::BasicSmallString<N>& s, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(s.view(), ctx);
  }
};

template <size_t N>
struct std::hash<firstwork::BasicSmallString<N>> {
  size_t operator()(const firstwork::BasicSmallString<N>& s) const noexcept {
    return std::hash<std::string_view>{}(s.view());
  }
};
