#include "firstwork/model/resource_version.hpp"

#include <charconv>
#include <cstring>
#include <limits>
#include <ostream>

namespace firstwork::model {
namespace {

// A canonical decimal below 2^63 (so that n << 1 | 1 fits): what etcd's revisions print as.
bool rvCanonical(std::string_view s, uint64_t& n) {
  if (s.empty() || s.size() > 19) return false;
  if (s.size() > 1 && s[0] == '0') return false;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<uint64_t>(ch - '0');  // 19 digits cannot overflow 64 bits
  }
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  n = v;
  return true;
}

const char* rvBlock(uint64_t bits) { return reinterpret_cast<const char*>(bits); }

std::string_view rvText(uint64_t bits) {
  uint32_t n;
  std::memcpy(&n, rvBlock(bits), sizeof n);
  return {rvBlock(bits) + sizeof n, n};
}

uint64_t rvCopy(std::string_view s) {
  const auto n = static_cast<uint32_t>(s.size());
  char* p = new char[sizeof n + s.size()];
  std::memcpy(p, &n, sizeof n);
  if (!s.empty()) std::memcpy(p + sizeof n, s.data(), s.size());
  return reinterpret_cast<uint64_t>(p);  // new[] is aligned: the low bit is 0
}

}  // namespace

ResourceVersion::ResourceVersion(const ResourceVersion& o)
    : bits_(o.bits_ == 0 || o.numeric() ? o.bits_ : rvCopy(rvText(o.bits_))) {}

ResourceVersion& ResourceVersion::operator=(const ResourceVersion& o) {
  if (this != &o) {
    ResourceVersion t(o);
    *this = std::move(t);
  }
  return *this;
}

ResourceVersion& ResourceVersion::operator=(ResourceVersion&& o) noexcept {
  if (this != &o) {
    release();
    bits_ = o.bits_;
    o.bits_ = 0;
  }
  return *this;
}

void ResourceVersion::assign(std::string_view text) {
  uint64_t n = 0;
  uint64_t bits = 0;
  if (rvCanonical(text, n)) {
    bits = (n << 1) | 1U;
  } else if (!text.empty()) {
    bits = rvCopy(text);  // before release: `text` may view this value's own block
  }
  release();
  bits_ = bits;
}

void ResourceVersion::release() noexcept {
  if (bits_ != 0 && !numeric()) delete[] rvBlock(bits_);
}

std::string ResourceVersion::str() const {
  if (bits_ == 0) return {};
  if (!numeric()) return std::string(rvText(bits_));
  char buf[20];
  auto r = std::to_chars(buf, buf + sizeof buf, bits_ >> 1);
  return std::string(buf, r.ptr);
}

bool operator==(const ResourceVersion& a, const ResourceVersion& b) noexcept {
  if (a.bits_ == b.bits_) return true;
  if (a.bits_ == 0 || b.bits_ == 0 || a.numeric() || b.numeric()) return false;
  return rvText(a.bits_) == rvText(b.bits_);
}

bool operator==(const ResourceVersion& a, std::string_view b) noexcept {
  if (a.bits_ == 0) return b.empty();
  if (!a.numeric()) return rvText(a.bits_) == b;
  uint64_t n = 0;
  return rvCanonical(b, n) && n == (a.bits_ >> 1);
}

std::ostream& operator<<(std::ostream& os, const ResourceVersion& rv) { return os << rv.str(); }

}  // namespace firstwork::model
