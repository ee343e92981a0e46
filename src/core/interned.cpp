#include "firstwork/core/interned.hpp"

#include <algorithm>
#include <mutex>
#include <ostream>
#include <unordered_set>
#include <vector>

// XXH3 compiled into this file (no call into the library): the thread cache hashes every
// string interned, a few dozen an event (bench/README.md, change 113).
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace firstwork {
namespace {

/// The process's pool. Node-based, so an entry's address is stable for the life of the process
/// (entries are never erased): handles and the per-thread caches point into it.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
struct Pool {
  std::mutex mu;
  size_t limit = Interned::kMaxInternedStrings;
  std::unordered_set<std::string, StringHash, std::equal_to<>> strings;
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: handles in static objects may outlive main()
  return *p;
}

const std::string& emptyString() {
  static const std::string* s = [] {
    Pool& p = pool();
    std::lock_guard lock(p.mu);
    return &*p.strings.emplace().first;
  }();
  return *s;
}

/// What this thread has looked up: lookups without the pool's lock. An open-addressing table of
/// (hash, pool entry) with linear probing: a hit reads one slot and the entry's text, where a
/// node-based map reads a bucket, a node and then the text — at a few lookups per decoded field
/// those cache misses were most of interning's cost. Entries are never removed (the pool never
/// shrinks), so there are no tombstones; the table doubles at half full.
class Cache {
 public:
  const std::string* find(std::string_view s, size_t hash) const noexcept {
    if (slots_.empty()) return nullptr;
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.entry == nullptr) return nullptr;
      if (slot.hash == hash && std::string_view(*slot.entry) == s) return slot.entry;
    }
  }
  void insert(size_t hash, const std::string* entry) {
    if ((used_ + 1) * 2 > slots_.size()) grow();
    place(hash, entry);
    ++used_;
  }
  size_t size() const noexcept { return used_; }

 private:
  struct Slot {
    size_t hash = 0;
    const std::string* entry = nullptr;
  };
  void place(size_t hash, const std::string* entry) noexcept {
    size_t i = hash & mask_;
    while (slots_[i].entry != nullptr) i = (i + 1) & mask_;
    slots_[i] = Slot{hash, entry};
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.entry != nullptr) place(slot.hash, slot.entry);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t used_ = 0;
};

Cache& threadCache() {
  thread_local Cache cache;
  return cache;
}

}  // namespace

uintptr_t Interned::emptyEntryBits() noexcept { return reinterpret_cast<uintptr_t>(&emptyString()); }

uintptr_t Interned::make(std::string_view s, size_t maxPooledBytes) {
  if (s.empty()) return emptyBits();
  if (s.size() <= std::min(maxPooledBytes, kMaxInternedBytes)) {
    Cache& cache = threadCache();
    const size_t hash = XXH3_64bits(s.data(), s.size());
    if (const std::string* hit = cache.find(s, hash)) return reinterpret_cast<uintptr_t>(hit);
    const std::string* entry = nullptr;
    {
      Pool& p = pool();
      std::lock_guard lock(p.mu);
      if (auto it = p.strings.find(s); it != p.strings.end()) {
        entry = &*it;
      } else if (p.strings.size() < p.limit) {
        entry = &*p.strings.emplace(s).first;
      }
    }
    if (entry != nullptr) {
      if (cache.size() < kMaxInternedStrings) cache.insert(hash, entry);
      return reinterpret_cast<uintptr_t>(entry);
    }
  }
  // Not pooled: an owned copy (new std::string is at least 8-byte aligned, so bit 0 is free).
  return reinterpret_cast<uintptr_t>(new std::string(s)) | kOwnedBit;
}

Interned Interned::pooledUpTo(std::string_view s, size_t maxPooledBytes) {
  Interned out;
  out.bits_ = make(s, maxPooledBytes);
  return out;
}

Interned::Interned(std::string_view s) : bits_(make(s)) {}

Interned::Interned(const Interned& o)
    : bits_(o.pooled() ? o.bits_ : reinterpret_cast<uintptr_t>(new std::string(o.str())) | kOwnedBit) {}

Interned& Interned::operator=(const Interned& o) {
  if (this == &o) return *this;
  Interned copy(o);
  return *this = std::move(copy);
}

void Interned::releaseOwned() noexcept { delete reinterpret_cast<std::string*>(bits_ & ~kOwnedBit); }

std::ostream& operator<<(std::ostream& os, const Interned& s) { return os << s.str(); }

void Interned::setPoolLimitForTesting(size_t limit) {
  Pool& p = pool();
  std::lock_guard lock(p.mu);
  p.limit = limit;
}

size_t Interned::poolSize() {
  Pool& p = pool();
  std::lock_guard lock(p.mu);
  return p.strings.size();
}

}  // namespace firstwork
