#include "firstwork/model/uid_key.hpp"

#include <cstring>
#include <functional>

namespace firstwork::model {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case too: it would not read back as it came
}

constexpr bool isDash(size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

// A canonical lowercase UUID whose version digit (the 15th character) is not 0, as its two
// halves: what `text` packs to, or false.
bool packUuid(std::string_view text, uint64_t& hi, uint64_t& lo) {
  if (text.size() != 36) return false;
  uint64_t h = 0;
  uint64_t l = 0;
  int digits = 0;
  for (size_t i = 0; i < 36; ++i) {
    if (isDash(i)) {
      if (text[i] != '-') return false;
      continue;
    }
    const int v = hexValue(text[i]);
    if (v < 0) return false;
    if (digits < 16) {
      h = (h << 4) | static_cast<uint64_t>(v);
    } else {
      l = (l << 4) | static_cast<uint64_t>(v);
    }
    ++digits;
  }
  if (((h >> 12) & 0xF) == 0) return false;  // version 0 (the nil UUID): kept as text
  hi = h;
  lo = l;
  return true;
}

size_t mix(uint64_t hi, uint64_t lo) {
  // A UUID's bits are mostly random already; the multiply spreads the halves over the word.
  uint64_t x = hi ^ (lo * 0x9e3779b97f4a7c15ULL);
  x ^= x >> 29;
  return static_cast<size_t>(x * 0xbf58476d1ce4e5b9ULL);
}

const char* block(uint64_t bits) { return reinterpret_cast<const char*>(bits); }

uint64_t copyText(std::string_view s) {
  const auto n = static_cast<uint32_t>(s.size());
  char* p = new char[sizeof n + s.size()];
  std::memcpy(p, &n, sizeof n);
  std::memcpy(p + sizeof n, s.data(), s.size());
  return reinterpret_cast<uint64_t>(p);
}

}  // namespace

UidKey::UidKey(std::string_view text) {
  if (text.empty()) return;
  if (!packUuid(text, hi_, lo_)) lo_ = copyText(text);
}

UidKey::UidKey(const UidKey& o) : hi_(o.hi_), lo_(o.lo_) {
  if (!o.packed() && o.lo_ != 0) lo_ = copyText(o.text());
}

UidKey& UidKey::operator=(const UidKey& o) {
  if (this != &o) {
    UidKey t(o);
    *this = std::move(t);
  }
  return *this;
}

UidKey& UidKey::operator=(UidKey&& o) noexcept {
  if (this != &o) {
    release();
    hi_ = o.hi_;
    lo_ = o.lo_;
    o.hi_ = o.lo_ = 0;
  }
  return *this;
}

void UidKey::release() noexcept {
  if (!packed() && lo_ != 0) delete[] block(lo_);
}

std::string_view UidKey::text() const noexcept {
  uint32_t n;
  std::memcpy(&n, block(lo_), sizeof n);
  return {block(lo_) + sizeof n, n};
}

std::string UidKey::str() const {
  if (empty()) return {};
  if (!packed()) return std::string(text());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(36, '-');
  int digit = 0;
  for (size_t i = 0; i < 36; ++i) {
    if (isDash(i)) continue;
    const uint64_t half = digit < 16 ? hi_ : lo_;
    const int shift = (15 - digit % 16) * 4;
    out[i] = kHex[(half >> shift) & 0xF];
    ++digit;
  }
  return out;
}

size_t UidKey::hash() const noexcept {
  if (packed()) return mix(hi_, lo_);
  return std::hash<std::string_view>{}(empty() ? std::string_view() : text());
}

size_t UidKey::hashOf(std::string_view uid) noexcept {
  uint64_t hi = 0;
  uint64_t lo = 0;
  if (packUuid(uid, hi, lo)) return mix(hi, lo);
  return std::hash<std::string_view>{}(uid);
}

UidKey::Probe::Probe(std::string_view text) noexcept : text_(text) {
  if (!packUuid(text, hi_, lo_)) hi_ = lo_ = 0;
}

size_t UidKey::Probe::hash() const noexcept {
  return hi_ != 0 ? mix(hi_, lo_) : std::hash<std::string_view>{}(text_);
}

bool operator==(const UidKey& a, const UidKey::Probe& b) noexcept {
  if (a.packed() || b.hi_ != 0) return a.hi_ == b.hi_ && a.lo_ == b.lo_;
  return a.empty() ? b.text_.empty() : a.text() == b.text_;
}

bool operator==(const UidKey& a, const UidKey& b) noexcept {
  if (a.packed() || b.packed()) return a.hi_ == b.hi_ && a.lo_ == b.lo_;
  if (a.empty() || b.empty()) return a.empty() && b.empty();
  return a.text() == b.text();
}

bool operator==(const UidKey& a, std::string_view b) noexcept {
  if (a.empty()) return b.empty();
  if (!a.packed()) return a.text() == b;
  uint64_t hi = 0;
  uint64_t lo = 0;
  return packUuid(b, hi, lo) && hi == a.hi_ && lo == a.lo_;
}

}  // namespace firstwork::model
