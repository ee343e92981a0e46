#include "firstwork/model/uid_key.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>

namespace firstwork::model {
namespace {

constexpr bool isDash(size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

// Each byte's hex digit value, 0x10 for a byte that is not a lowercase hex digit (upper case is
// not one: it would not read back as it came).
constexpr std::array<uint8_t, 256> kHexValue = [] {
  std::array<uint8_t, 256> t{};
  for (auto& v : t) v = 0x10;
  for (int i = 0; i < 10; ++i) t[static_cast<size_t>('0' + i)] = static_cast<uint8_t>(i);
  for (int i = 0; i < 6; ++i) t[static_cast<size_t>('a' + i)] = static_cast<uint8_t>(10 + i);
  return t;
}();

// N hex digits at `p` as a value; `bad` gets 0x10 or'ed in for a byte that is not one.
template <int N>
uint64_t hexDigits(const char* p, unsigned& bad) noexcept {
  uint64_t v = 0;
  for (int i = 0; i < N; ++i) {
    const unsigned d = kHexValue[static_cast<unsigned char>(p[i])];
    bad |= d;
    v = (v << 4) | (d & 0xF);
  }
  return v;
}

// A canonical lowercase UUID whose version digit (the 15th character) is not 0, as its two
// halves: what `text` packs to, or false. Without a branch a character (a table's value for
// each, its groups at fixed places): it runs at every pod event's lookups, 1 % of benchmark 1's
// samples as a loop of tests (bench/README.md, change 105).
bool packUuid(std::string_view text, uint64_t& hi, uint64_t& lo) {
  if (text.size() != 36) return false;
  const char* s = text.data();
  if (s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') return false;
  unsigned bad = 0;
  const uint64_t h =
      (hexDigits<8>(s, bad) << 32) | (hexDigits<4>(s + 9, bad) << 16) | hexDigits<4>(s + 14, bad);
  const uint64_t l = (hexDigits<4>(s + 19, bad) << 48) | (hexDigits<4>(s + 24, bad) << 32) |
                     hexDigits<8>(s + 28, bad);
  if ((bad & 0x10) != 0) return false;
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
