#include "firstwork/core/heap.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

using namespace std::chrono_literals;
using firstwork::HeapReleasePolicy;
using firstwork::MonotonicTime;

namespace {

HeapReleasePolicy::Options options() {
  HeapReleasePolicy::Options o;
  o.afterSync = 3s;
  o.interval = 300s;
  return o;
}

}  // namespace

TEST_CASE("heap release policy: every interval from the start, not before") {
  HeapReleasePolicy p(options());
  const MonotonicTime t0 = MonotonicTime{} + 1h;
  CHECK_FALSE(p.due(t0));  // the first question starts the interval
  CHECK_FALSE(p.due(t0 + 299s));
  CHECK(p.due(t0 + 300s));
  CHECK_FALSE(p.due(t0 + 301s));  // counted as the release
  CHECK_FALSE(p.due(t0 + 599s));
  CHECK(p.due(t0 + 600s));
}

TEST_CASE("heap release policy: a few seconds after the lists complete, once") {
  HeapReleasePolicy p(options());
  const MonotonicTime t0 = MonotonicTime{} + 1h;
  CHECK_FALSE(p.due(t0));
  p.listsCompleted(t0 + 10s);
  CHECK_FALSE(p.due(t0 + 12s));  // 2 s after: the last page's steps may still be running
  CHECK(p.due(t0 + 13s));
  CHECK_FALSE(p.due(t0 + 14s));  // once per completion
  // The interval restarts from that release: not at t0 + 300 s, but 300 s after t0 + 13 s.
  CHECK_FALSE(p.due(t0 + 300s));
  CHECK(p.due(t0 + 313s));
  // A relist later: due again 3 s after it.
  p.listsCompleted(t0 + 400s);
  CHECK_FALSE(p.due(t0 + 402s));
  CHECK(p.due(t0 + 403s));
}

TEST_CASE("heap release policy: after the lists, once the steps' records are back from the store") {
  HeapReleasePolicy p(options());
  const MonotonicTime t0 = MonotonicTime{} + 1h;
  CHECK_FALSE(p.due(t0));
  CHECK_FALSE(p.afterListsPending());
  p.listsCompleted(t0 + 10s);
  CHECK(p.afterListsPending());
  CHECK_FALSE(p.due(t0 + 13s, false));  // 3 s after, but the first step's commit is still out
  CHECK_FALSE(p.due(t0 + 20s, false));
  CHECK(p.afterListsPending());
  CHECK(p.due(t0 + 21s, true));  // its records came back: now
  CHECK_FALSE(p.afterListsPending());
  CHECK_FALSE(p.due(t0 + 22s, true));  // once per completion
  // The interval's release does not wait for the store, and leaves a pending one pending.
  p.listsCompleted(t0 + 320s);
  CHECK(p.due(t0 + 321s, false));  // 300 s after the last release
  CHECK(p.afterListsPending());
  CHECK_FALSE(p.due(t0 + 324s, false));
  CHECK(p.due(t0 + 325s, true));  // the lists' release, once its steps are back
  CHECK_FALSE(p.due(t0 + 326s, true));
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FIRSTWORK_TEST_SANITIZED_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FIRSTWORK_TEST_SANITIZED_HEAP 1
#endif
#endif

TEST_CASE("heap: the allocator the build chose serves this process's malloc") {
#if defined(FIRSTWORK_TEST_EXPECT_JEMALLOC)
  // Linked is not enough: jemalloc must be the malloc that new and malloc() reach, which its
  // per-thread count of allocated bytes shows.
  CHECK(firstwork::heapAllocatorName().starts_with("jemalloc 5."));
  const auto before = firstwork::threadAllocatedBytes();
  REQUIRE(before.has_value());
  void* block = std::malloc(size_t{1} << 20);
  REQUIRE(block != nullptr);
  const auto after = firstwork::threadAllocatedBytes();
  std::free(block);
  REQUIRE(after.has_value());
  CHECK(*after - *before >= (size_t{1} << 20));
#else
  CHECK(firstwork::heapAllocatorName() == "system");
  CHECK_FALSE(firstwork::threadAllocatedBytes().has_value());
#endif
}

#if (defined(__GLIBC__) || defined(FIRSTWORK_TEST_EXPECT_JEMALLOC)) && !defined(FIRSTWORK_TEST_SANITIZED_HEAP)
// The process's own allocator, jemalloc or glibc's (a sanitizer replaces it, and its figures
// then say nothing).
namespace {

constexpr size_t MiB = size_t{1} << 20;

/// Resident set size of this process, from /proc/self/statm (pages).
size_t residentBytes() {
  std::ifstream in("/proc/self/statm");
  size_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

TEST_CASE("heap: free chunks in the middle of the heap are given back to the OS") {
  // 64 MiB in 4 KiB blocks (far below the mmap threshold, so from the arena), every page written.
  constexpr size_t kBlock = 4096;
  constexpr size_t kBlocks = 64 * MiB / kBlock;
  std::vector<char*> blocks;
  blocks.reserve(kBlocks);
  size_t failed = 0;
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(static_cast<char*>(std::malloc(kBlock)));
    if (blocks.back() == nullptr) {
      ++failed;
      continue;
    }
    std::memset(blocks.back(), 0x5a, kBlock);
  }
  REQUIRE(failed == 0);
  // Free all but every 64th block: the free space lies between live blocks, so glibc's arena top
  // cannot simply shrink (what its malloc does by itself) and jemalloc keeps them dirty for its
  // decay period; only the explicit release gives those pages back now.
  for (size_t i = 0; i < kBlocks; ++i) {
    if (i % 64 == 63) continue;
    std::free(blocks[i]);
    blocks[i] = nullptr;
  }
  const size_t rssFreed = residentBytes();
  REQUIRE(firstwork::releaseFreeHeap());
  const size_t rssReleased = residentBytes();
  // 63 blocks of 4 KiB between two live ones are 252 KiB of whole free pages each: ≥ 60 of the
  // 63 MiB go back (live blocks and chunk headers keep a page at each end of every run).
  INFO("RSS before release " << rssFreed / MiB << " MiB, after " << rssReleased / MiB << " MiB");
  CHECK(rssFreed - rssReleased >= 48 * MiB);
  for (char* b : blocks) std::free(b);
}
#endif

TEST_CASE("heap: a transient scope's blocks come from an arena of their own, and only its") {
  using firstwork::heapArenaOf;
  using firstwork::TransientHeapScope;
#if defined(FIRSTWORK_TEST_EXPECT_JEMALLOC)
  constexpr size_t kSize = 48;  // one of the small classes a large step churns
  void* home = std::malloc(kSize);
  REQUIRE(home != nullptr);
  const auto homeArena = heapArenaOf(home);
  REQUIRE(homeArena.has_value());
  // A block freed just before the scope sits in the thread's cache: the scope must not hand it
  // out (its entry flushes the cache).
  std::free(std::malloc(kSize));
  void* inside = nullptr;
  void* freedInside = nullptr;
  std::optional<unsigned> scopeArena;
  {
    TransientHeapScope scope;
    REQUIRE(scope.active());
    inside = std::malloc(kSize);
    REQUIRE(inside != nullptr);
    scopeArena = heapArenaOf(inside);
    REQUIRE(scopeArena.has_value());
    CHECK(*scopeArena != *homeArena);
    {
      TransientHeapScope nested;  // already in the transient arena: nothing to switch
      CHECK_FALSE(nested.active());
      void* n = std::malloc(kSize);
      CHECK(heapArenaOf(n) == scopeArena);
      std::free(n);
    }
    void* afterNested = std::malloc(kSize);  // the nested scope's end left this one in place
    CHECK(heapArenaOf(afterNested) == scopeArena);
    std::free(afterNested);
    freedInside = std::malloc(kSize);
    std::free(freedInside);  // cached by the thread: the scope's exit must not leave it there
  }
  // After the scope, the thread's blocks come from its own arena again, the one freed in the
  // scope included.
  void* after[8];
  for (auto& p : after) {
    p = std::malloc(kSize);
    CHECK(heapArenaOf(p) == homeArena);
  }
  for (auto* p : after) std::free(p);
  // The same scope arena serves the next scope (one arena for the process).
  {
    TransientHeapScope again;
    REQUIRE(again.active());
    void* p = std::malloc(kSize);
    CHECK(heapArenaOf(p) == scopeArena);
    std::free(p);
  }
  std::free(inside);  // freed outside the scope: back to the arena that holds it
  std::free(home);
#else
  TransientHeapScope scope;
  CHECK_FALSE(scope.active());
  int local = 0;
  CHECK_FALSE(heapArenaOf(&local).has_value());
#endif
}
