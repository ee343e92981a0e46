#include "firstwork/core/heap.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace firstwork {

std::optional<HeapStats> heapStats() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 mi = mallinfo2();
  HeapStats s;
  // uordblks: in use from the arenas; hblkhd: in use as separate mmaps (large blocks, returned
  // to the OS when freed, so never "free" here). fordblks: free chunks kept by the arenas.
  s.inUseBytes = mi.uordblks + mi.hblkhd;
  s.freeBytes = mi.fordblks;
  return s;
#else
  return std::nullopt;
#endif
}

bool releaseFreeHeap() {
#if defined(__GLIBC__)
  malloc_trim(0);
  return true;
#else
  return false;
#endif
}

bool HeapReleasePolicy::checkDue(MonotonicTime now) const {
  return !lastCheck_ || now - *lastCheck_ >= options_.checkInterval;
}

bool HeapReleasePolicy::shouldRelease(const HeapStats& stats, MonotonicTime now) {
  lastCheck_ = now;
  const auto fractionBytes =
      static_cast<size_t>(static_cast<double>(stats.inUseBytes) * options_.minFreeFraction);
  return stats.freeBytes >= options_.minFreeBytes && stats.freeBytes >= fractionBytes;
}

}  // namespace firstwork
