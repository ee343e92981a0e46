#include "firstwork/core/interned.hpp"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <thread>
#include <vector>

using firstwork::Interned;

TEST_CASE("interned: equal values share one copy, the handle is one pointer") {
  STATIC_REQUIRE(sizeof(Interned) == sizeof(void*));
  const std::string a = "PodReadyToStartContainers";
  Interned x(a);
  Interned y(std::string_view("PodReadyToStartContainers").substr(0, 15));  // a different value
  Interned z("PodReadyToStartContainers");
  CHECK(x.pooled());
  CHECK(x.data() == z.data());  // the same pool entry
  CHECK(x.data() != a.data());
  CHECK(x == z);
  CHECK(x == a);
  CHECK(x == "PodReadyToStartContainers");
  CHECK(x == std::string_view("PodReadyToStartContainers"));
  CHECK_FALSE(x == "Ready");
  CHECK_FALSE(x == y);
  CHECK(y == "PodReadyToStart");
  CHECK(x.size() == 25);
  CHECK(std::string(x) == a);
  CHECK(std::string_view(x) == a);
}

TEST_CASE("interned: empty by default, copies and moves keep the value") {
  Interned e;
  CHECK(e.empty());
  CHECK(e == "");
  CHECK(e == Interned(""));
  Interned a("Ready");
  Interned b = a;
  CHECK(b == "Ready");
  Interned c = std::move(b);
  CHECK(c == "Ready");
  CHECK(b.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty, by contract
  b = c;
  CHECK(b == "Ready");
  b = Interned("NotReady");
  CHECK(b == "NotReady");
  CHECK(c == "Ready");
}

TEST_CASE("interned: ordering, hashing and formatting follow the value") {
  std::set<Interned> s{Interned("b"), Interned("a"), Interned("c"), Interned("a")};
  REQUIRE(s.size() == 3);
  CHECK(*s.begin() == "a");
  CHECK(*s.rbegin() == "c");
  CHECK((Interned("a") <=> std::string_view("b")) == std::strong_ordering::less);
  CHECK(std::hash<Interned>{}(Interned("abc")) == std::hash<std::string_view>{}("abc"));
  CHECK(fmt::format("[{}|{:>4}]", Interned("ab"), Interned("c")) == "[ab|   c]");
  CHECK(Interned("kueue.x-k8s.io/") + "queue-name" == "kueue.x-k8s.io/queue-name");
  CHECK("ns/" + Interned("name") == "ns/name");
}

TEST_CASE("interned: a string over 256 bytes is owned by its handle, not pooled") {
  const Interned none;  // the pool's empty entry exists from here on
  CHECK(none.pooled());
  const std::string big(300, 'm');  // e.g. a condition message
  Interned a(big);
  CHECK_FALSE(a.pooled());
  CHECK(a == big);
  const size_t pool = Interned::poolSize();
  Interned b = a;  // a deep copy: freeing one leaves the other intact
  CHECK_FALSE(b.pooled());
  CHECK(b.data() != a.data());
  CHECK(b == a);
  a = Interned("short");
  CHECK(b == big);
  CHECK(Interned::poolSize() <= pool + 1);  // at most "short" was added, never the big value
  Interned c(std::string(256, 'k'));  // exactly the bound: pooled
  CHECK(c.pooled());
}

TEST_CASE("interned: once the pool is full, new strings are owned, known ones still shared") {
  Interned known("known-before-the-pool-filled");
  const size_t n = Interned::poolSize();
  Interned::setPoolLimitForTesting(n + 1);
  Interned first("first-new-string-after-limit");
  Interned second("second-new-string-after-limit");
  Interned again("known-before-the-pool-filled");
  Interned::setPoolLimitForTesting(Interned::kMaxInternedStrings);
  CHECK(first.pooled());  // the one place left
  CHECK_FALSE(second.pooled());
  CHECK(second == "second-new-string-after-limit");
  CHECK(again.pooled());
  CHECK(again.data() == known.data());
  CHECK(Interned::poolSize() == n + 1);
}

TEST_CASE("interned: threads interning the same values get the same entries") {
  constexpr int kThreads = 4;
  std::vector<std::vector<const char*>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &seen] {
      for (int i = 0; i < 500; ++i) seen[t].push_back(Interned(fmt::format("thread-value-{}", i)).data());
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) CHECK(seen[t] == seen[0]);
}

TEST_CASE("pooledUpTo: short text is pooled, long text is owned and leaves the pool alone",
          "[core][interned]") {
  const std::string shortText = "interned-test: The workload is admitted";
  const std::string longText =
      "interned-test: Preempted to accommodate a workload (UID: 5c8a0f2e-1111-4a8f-8c11-000000000042) "
      "due to prioritization in the ClusterQueue";
  const Interned empty;  // the pool's empty entry exists before counting
  const size_t before = Interned::poolSize();
  Interned a = Interned::pooledUpTo(shortText, 64);
  Interned b = Interned::pooledUpTo(shortText, 64);
  CHECK(a.pooled());
  CHECK(a.data() == b.data());  // one copy, shared
  CHECK(a.data() == Interned(shortText).data());
  CHECK(Interned::poolSize() == before + 1);
  Interned c = Interned::pooledUpTo(longText, 64);
  Interned d = Interned::pooledUpTo(longText, 64);
  CHECK_FALSE(c.pooled());
  CHECK(c == longText);
  CHECK(c.data() != d.data());  // each its own
  CHECK(Interned::poolSize() == before + 1);
  CHECK(Interned::pooledUpTo("", 0).empty());
  CHECK(Interned::pooledUpTo("", 0).pooled());  // the shared empty string
  Interned e = c;  // copies of an owned value own their copy
  CHECK(e == c);
  CHECK(e.data() != c.data());
}

TEST_CASE("interned: a thread's lookup cache keeps every value apart as it grows", "[core][interned]") {
  // A fresh thread starts with an empty cache, which doubles at half full (512, 1024, 2048 …
  // entries): values looked up again after several doublings, in the other order, must come back
  // as the same entries, and values differing in one character must stay different.
  constexpr int kValues = 5000;
  std::vector<const char*> first(kValues), again(kValues);
  std::vector<std::string> read(kValues);
  std::thread([&] {
    for (int i = 0; i < kValues; ++i) first[i] = Interned(fmt::format("cache-growth-{}", i)).data();
    for (int i = kValues - 1; i >= 0; --i) {
      Interned v(fmt::format("cache-growth-{}", i));
      again[i] = v.data();
      read[i] = v.str();
    }
  }).join();
  for (int i = 0; i < kValues; ++i) {
    INFO("value " << i);
    CHECK(again[i] == first[i]);
    CHECK(read[i] == fmt::format("cache-growth-{}", i));
  }
  CHECK(std::set<const char*>(first.begin(), first.end()).size() == kValues);
  // The same values from this thread (its own cache) are the same pool entries.
  CHECK(Interned("cache-growth-4999").data() == first[4999]);
  CHECK(Interned("cache-growth-0").data() == first[0]);
}
