#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "firstwork/core/clock.hpp"

namespace firstwork {

/// Gives free heap pages back to the OS now: with jemalloc (the default build) a purge of every
/// arena's unused dirty pages, which jemalloc otherwise returns over ~10 s of decay and only
/// while the process keeps allocating; with glibc malloc_trim(0), which also releases whole free
/// pages in the middle of an arena, not only its top. False when the allocator cannot. Either
/// walks the free memory with the arenas locked (tens of ms on a large, fragmented heap), so it
/// is called on occasions, not per event or per second.
bool releaseFreeHeap();

/// The allocator that serves malloc in this process, for the start-up log: "jemalloc <version>"
/// or "system".
std::string heapAllocatorName();

/// Bytes the calling thread has allocated since it started, where the allocator counts them
/// (jemalloc's thread.allocated); nullopt with the system allocator.
std::optional<uint64_t> threadAllocatedBytes();

/// While alive, the calling thread's allocations come from an arena kept for short-lived blocks
/// (jemalloc; one arena for the process, made on first use), then from its own arena again.
/// A large step makes hundreds of thousands of small blocks that live until its records are
/// committed; made in the arena that also holds the engine's and the inventory's records, they
/// left those records' slabs a third full once they were freed (41 MB of 32- to 160-byte slabs at
/// the full estate: bench/README.md, change 90). The thread's cache of freed blocks is flushed on
/// entry and on exit, so that neither arena's cached blocks are handed out in the other: a scope
/// costs two flushes, and is meant for a step's worth of work, not one object. Scopes nest. With
/// the system allocator (sanitizer builds) it does nothing: active() is false.
class TransientHeapScope {
 public:
  TransientHeapScope();
  ~TransientHeapScope();
  TransientHeapScope(const TransientHeapScope&) = delete;
  TransientHeapScope& operator=(const TransientHeapScope&) = delete;
  /// Whether this scope switched the thread's arena (jemalloc, and the arena could be made).
  bool active() const { return active_; }

 private:
  [[maybe_unused]] unsigned previous_ = 0;  // unused with the system allocator
  bool active_ = false;
};

/// The jemalloc arena that holds `p` (a live block), for tests and diagnostics; nullopt with the
/// system allocator.
std::optional<unsigned> heapArenaOf(const void* p);

/// Decides when the daemon gives free heap back. glibc keeps freed memory resident: the initial
/// sync's LIST pages and the first steps' records (tens of MiB at a large estate) would stay in
/// the process's RSS for its life, although the steady state needs a fraction of it. A release
/// is due shortly after every watched resource has completed a LIST (the initial sync or a
/// relist: the burst is over by then) and otherwise every `interval` (memory that deleted objects
/// left behind). The release after the lists also waits until the steps' records are back from
/// the store: at the full estate the first step's commit outlasts `afterSync`, and a purge before
/// it returned left its records' memory resident (714 or 787 MiB settled, by the timing;
/// bench/README.md). Reading the allocator's figures to decide (mallinfo2) would cost as much as
/// releasing, so the policy goes by these occasions. Single-threaded (the event loop).
class HeapReleasePolicy {
 public:
  struct Options {
    /// After the lists complete: the steps that follow the last page go first.
    std::chrono::milliseconds afterSync{3'000};
    std::chrono::milliseconds interval{300'000};
  };
  HeapReleasePolicy() : HeapReleasePolicy(Options{}) {}
  explicit HeapReleasePolicy(Options options) : options_(options) {}

  /// Every watched resource has just completed its LIST (called once per such transition).
  void listsCompleted(MonotonicTime now);
  /// Whether to release at `now`; a true answer counts as the release. `stepsSettled`: no
  /// records are out to the store or waiting for it (the release after the lists waits for it;
  /// the interval's does not, and leaves that one pending).
  bool due(MonotonicTime now, bool stepsSettled = true);
  /// A release after the lists is still to come (the caller need not ask between its occasions
  /// otherwise).
  bool afterListsPending() const { return afterSyncAt_.has_value(); }

 private:
  Options options_;
  std::optional<MonotonicTime> afterSyncAt_;
  std::optional<MonotonicTime> last_;
};

}  // namespace firstwork
