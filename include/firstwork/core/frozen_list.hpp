#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <new>
#include <span>
#include <utility>

namespace firstwork {

/// A list that is set whole and then only read, in 8 bytes: one pointer to a heap block of
/// exactly its elements, nothing when it is empty. For records that take a list whole at each
/// event (the engine's pod record: a pod's requests and claims, 150,000 pods at the largest
/// estates), where a CompactVector's 16 bytes (pointer, size, capacity) decide the record's size
/// class (bench/README.md, change 98).
///
/// The size of a list of 1 to 7 elements is kept in the pointer's low 3 bits (a block of
/// elements of alignment 8 or more is aligned so); a longer list's block starts with its size.
/// So a list of one element takes the block its element needs, as a CompactVector's does.
/// Copying makes a block of its own; setting a list (assign, a copy) replaces the block.
template <typename T>
class FrozenList {
  static_assert(alignof(T) >= 8, "the low 3 bits of the block's address hold the size");
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "blocks come from operator new");

 public:
  FrozenList() noexcept = default;
  FrozenList(std::initializer_list<T> items) { assign(items.begin(), items.end()); }
  FrozenList(const FrozenList& o) { assign(o.begin(), o.end()); }
  FrozenList(FrozenList&& o) noexcept : bits_(std::exchange(o.bits_, 0)) {}
  FrozenList& operator=(const FrozenList& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  FrozenList& operator=(FrozenList&& o) noexcept {
    if (this != &o) {
      release();
      bits_ = std::exchange(o.bits_, 0);
    }
    return *this;
  }
  ~FrozenList() { release(); }

  /// Replaces the list with copies of [first, last) (forward iterators; elements that T is
  /// constructible from). Strong guarantee: the old list stays if a copy throws.
  template <typename It>
  void assign(It first, It last) {
    const size_t n = static_cast<size_t>(std::distance(first, last));
    if (n == 0) {
      release();
      return;
    }
    const bool headed = n > kInlineSizes;
    const size_t offset = headed ? kHeader : 0;
    void* raw = ::operator new(offset + n * sizeof(T));
    T* items = reinterpret_cast<T*>(static_cast<char*>(raw) + offset);
    size_t made = 0;
    try {
      for (; first != last; ++first, ++made) new (items + made) T(*first);
    } catch (...) {
      for (size_t i = 0; i < made; ++i) items[i].~T();
      ::operator delete(raw);
      throw;
    }
    if (headed) *static_cast<size_t*>(raw) = n;
    release();
    bits_ = reinterpret_cast<uintptr_t>(raw) | (headed ? 0 : n);
  }
  template <typename Range>
  void assign(const Range& range) {
    assign(std::begin(range), std::end(range));
  }
  void clear() noexcept { release(); }

  size_t size() const noexcept {
    if (bits_ == 0) return 0;
    const size_t low = bits_ & kLowMask;
    return low != 0 ? low : *reinterpret_cast<const size_t*>(bits_);
  }
  bool empty() const noexcept { return bits_ == 0; }
  const T* begin() const noexcept { return items(); }
  const T* end() const noexcept { return items() + size(); }
  const T& operator[](size_t i) const noexcept { return items()[i]; }
  const T& front() const noexcept { return items()[0]; }
  std::span<const T> span() const noexcept { return {items(), size()}; }
  operator std::span<const T>() const noexcept { return span(); }

  friend bool operator==(const FrozenList& a, const FrozenList& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  /// Whether the list holds the elements of `range`, in order.
  template <typename Range>
  bool equals(const Range& range) const {
    return std::equal(begin(), end(), std::begin(range), std::end(range));
  }

 private:
  static constexpr size_t kLowMask = 7;
  static constexpr size_t kInlineSizes = 7;  // sizes kept in the pointer's low bits
  static constexpr size_t kHeader = alignof(T) > sizeof(size_t) ? alignof(T) : sizeof(size_t);

  const T* items() const noexcept {
    if (bits_ == 0) return nullptr;
    const uintptr_t block = bits_ & ~uintptr_t{kLowMask};
    const size_t offset = (bits_ & kLowMask) != 0 ? 0 : kHeader;
    return reinterpret_cast<const T*>(block + offset);
  }
  void release() noexcept {
    if (bits_ == 0) return;
    const size_t n = size();
    T* first = const_cast<T*>(items());
    for (size_t i = 0; i < n; ++i) first[i].~T();
    ::operator delete(reinterpret_cast<void*>(bits_ & ~uintptr_t{kLowMask}));
    bits_ = 0;
  }

  uintptr_t bits_ = 0;
};

}  // namespace firstwork
