#pragma once
#include <chrono>
#include <cstddef>
#include <optional>

#include "firstwork/core/clock.hpp"

namespace firstwork {

/// The C allocator's own figures (glibc mallinfo2): bytes handed out and bytes it holds free.
struct HeapStats {
  size_t inUseBytes = 0;
  size_t freeBytes = 0;  // free chunks inside the arenas: resident until given back
};

/// The allocator's figures, or nullopt when it does not report them (a non-glibc libc).
/// Walks the arenas' free lists: call it seconds apart, not per event.
std::optional<HeapStats> heapStats();

/// Gives free heap pages back to the OS (glibc malloc_trim(0), which also releases whole free
/// pages in the middle of an arena, not only its top). False when the allocator cannot.
bool releaseFreeHeap();

/// Decides when the daemon gives free heap back. glibc keeps freed memory resident: the initial
/// sync's LIST pages and the first step's records (tens of MiB at a large estate) would stay in
/// the process's RSS for its life, although the steady state needs a fraction of it. Releasing
/// costs a walk over the free chunks, so it is done only when enough is free, and not often.
/// Single-threaded (the event loop).
class HeapReleasePolicy {
 public:
  struct Options {
    /// Release once this much is free, and at least `minFreeFraction` of what is in use.
    size_t minFreeBytes = size_t{16} << 20;
    double minFreeFraction = 0.125;
    /// How often the figures are read, and the least time between two releases.
    std::chrono::milliseconds checkInterval{10'000};
  };
  HeapReleasePolicy() : HeapReleasePolicy(Options{}) {}
  explicit HeapReleasePolicy(Options options) : options_(options) {}

  /// Whether the figures are due to be read at `now`.
  bool checkDue(MonotonicTime now) const;
  /// Records a check at `now` with its figures; true when free heap should be released now.
  bool shouldRelease(const HeapStats& stats, MonotonicTime now);

 private:
  Options options_;
  std::optional<MonotonicTime> lastCheck_;
};

}  // namespace firstwork
