#include "firstwork/core/heap.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

using namespace std::chrono_literals;
using firstwork::HeapReleasePolicy;
using firstwork::HeapStats;
using firstwork::MonotonicTime;

namespace {

constexpr size_t MiB = size_t{1} << 20;

HeapStats stats(size_t inUse, size_t free) {
  HeapStats s;
  s.inUseBytes = inUse;
  s.freeBytes = free;
  return s;
}

/// Resident set size of this process, from /proc/self/statm (pages).
size_t residentBytes() {
  std::ifstream in("/proc/self/statm");
  size_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

TEST_CASE("heap release policy: releases when enough is free, in bytes and as a share of use") {
  HeapReleasePolicy::Options o;
  o.minFreeBytes = 16 * MiB;
  o.minFreeFraction = 0.125;
  HeapReleasePolicy p(o);
  const MonotonicTime t0{};
  // 15 MiB free: under the 16 MiB floor whatever the use.
  CHECK_FALSE(p.shouldRelease(stats(10 * MiB, 15 * MiB), t0));
  // 20 MiB free of 200 MiB in use: over the floor, under 200/8 = 25 MiB.
  CHECK_FALSE(p.shouldRelease(stats(200 * MiB, 20 * MiB), t0));
  // 25 MiB free of 200 MiB in use: exactly 1/8, and over the floor.
  CHECK(p.shouldRelease(stats(200 * MiB, 25 * MiB), t0));
  // 16 MiB free of 100 MiB: the floor is the larger bound (100/8 = 12.5 MiB).
  CHECK(p.shouldRelease(stats(100 * MiB, 16 * MiB), t0));
}

TEST_CASE("heap release policy: the figures are read once per check interval") {
  HeapReleasePolicy::Options o;
  o.checkInterval = 10s;
  HeapReleasePolicy p(o);
  const MonotonicTime t0 = MonotonicTime{} + 1h;
  CHECK(p.checkDue(t0));  // never checked
  p.shouldRelease(stats(0, 0), t0);
  CHECK_FALSE(p.checkDue(t0));
  CHECK_FALSE(p.checkDue(t0 + 9999ms));
  CHECK(p.checkDue(t0 + 10s));
  p.shouldRelease(stats(0, 0), t0 + 10s);
  CHECK_FALSE(p.checkDue(t0 + 15s));
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FIRSTWORK_TEST_SANITIZED_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FIRSTWORK_TEST_SANITIZED_HEAP 1
#endif
#endif

#if defined(__GLIBC__) && !defined(FIRSTWORK_TEST_SANITIZED_HEAP)
// glibc's own allocator (a sanitizer replaces it, and its figures then say nothing).
TEST_CASE("heap: free chunks in the middle of the heap are reported and given back to the OS") {
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
  const auto before = firstwork::heapStats();
  REQUIRE(before);
  CHECK(before->inUseBytes >= 64 * MiB);
  // Free all but every 64th block: the free space lies between live blocks, so the arena's top
  // cannot simply shrink (what malloc does by itself); only malloc_trim gives those pages back.
  for (size_t i = 0; i < kBlocks; ++i) {
    if (i % 64 == 63) continue;
    std::free(blocks[i]);
    blocks[i] = nullptr;
  }
  const auto freed = firstwork::heapStats();
  REQUIRE(freed);
  CHECK(freed->freeBytes >= 60 * MiB);  // 63/64 of 64 MiB = 63 MiB, plus what was free before
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
