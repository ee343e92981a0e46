#include "firstwork/core/heap.hpp"

#if defined(FIRSTWORK_JEMALLOC)
#include <jemalloc/jemalloc.h>
#elif defined(__GLIBC__)
#include <malloc.h>
#endif

namespace firstwork {

#if defined(FIRSTWORK_JEMALLOC)

#define FIRSTWORK_STRINGIFY_(x) #x
#define FIRSTWORK_STRINGIFY(x) FIRSTWORK_STRINGIFY_(x)

bool releaseFreeHeap() {
  return mallctl("arena." FIRSTWORK_STRINGIFY(MALLCTL_ARENAS_ALL) ".purge", nullptr, nullptr, nullptr, 0) == 0;
}

std::string heapAllocatorName() {
  const char* version = nullptr;
  size_t size = sizeof(version);
  if (mallctl("version", &version, &size, nullptr, 0) != 0 || version == nullptr) return "jemalloc";
  return std::string("jemalloc ") + version;
}

std::optional<uint64_t> threadAllocatedBytes() {
  uint64_t allocated = 0;
  size_t size = sizeof(allocated);
  if (mallctl("thread.allocated", &allocated, &size, nullptr, 0) != 0) return std::nullopt;
  return allocated;
}

namespace {

/// The arena for short-lived blocks, made once (nullopt when jemalloc refuses).
std::optional<unsigned> transientArena() {
  static const std::optional<unsigned> arena = []() -> std::optional<unsigned> {
    unsigned index = 0;
    size_t size = sizeof(index);
    if (mallctl("arenas.create", &index, &size, nullptr, 0) != 0) return std::nullopt;
    return index;
  }();
  return arena;
}

bool flushThreadCache() {
  return mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0) == 0;
}

bool switchArena(unsigned to) {
  return mallctl("thread.arena", nullptr, nullptr, &to, sizeof(to)) == 0;
}

}  // namespace

TransientHeapScope::TransientHeapScope() {
  const auto arena = transientArena();
  if (!arena) return;
  size_t size = sizeof(previous_);
  if (mallctl("thread.arena", &previous_, &size, nullptr, 0) != 0) return;
  if (previous_ == *arena) return;  // nested in another scope: already there
  flushThreadCache();
  active_ = switchArena(*arena);
}

TransientHeapScope::~TransientHeapScope() {
  if (!active_) return;
  flushThreadCache();
  switchArena(previous_);
}

std::optional<unsigned> heapArenaOf(const void* p) {
  unsigned arena = 0;
  size_t size = sizeof(arena);
  if (mallctl("arenas.lookup", &arena, &size, &p, sizeof(p)) != 0) return std::nullopt;
  return arena;
}

#else

bool releaseFreeHeap() {
#if defined(__GLIBC__)
  malloc_trim(0);
  return true;
#else
  return false;
#endif
}

std::string heapAllocatorName() { return "system"; }

std::optional<uint64_t> threadAllocatedBytes() { return std::nullopt; }

TransientHeapScope::TransientHeapScope() = default;
TransientHeapScope::~TransientHeapScope() = default;

std::optional<unsigned> heapArenaOf(const void*) { return std::nullopt; }

#endif

void HeapReleasePolicy::listsCompleted(MonotonicTime now) { afterSyncAt_ = now + options_.afterSync; }

bool HeapReleasePolicy::due(MonotonicTime now, bool stepsSettled) {
  if (!last_) last_ = now;  // the interval counts from the first question (process start)
  const bool afterSync = afterSyncAt_ && now >= *afterSyncAt_ && stepsSettled;
  if (!afterSync && now - *last_ < options_.interval) return false;
  if (afterSync) afterSyncAt_.reset();
  last_ = now;
  return true;
}

}  // namespace firstwork
