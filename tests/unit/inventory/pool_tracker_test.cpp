#include "firstwork/inventory/pool_tracker.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fixtures.hpp"

using firstwork::inventory::PoolCount;
using firstwork::inventory::PoolProblem;
using firstwork::inventory::PoolState;
using firstwork::inventory::PoolStatus;
using firstwork::inventory::PoolTracker;
using firstwork::inventory::UnavailableReason;
using firstwork::model::EventType;
using namespace firstwork::testing;

namespace {

constexpr EventType kAdd = EventType::Added;
constexpr EventType kMod = EventType::Modified;
constexpr EventType kDel = EventType::Deleted;

int64_t reasonCount(const PoolStatus& s, UnavailableReason r) {
  return s.unavailableByReason[static_cast<size_t>(r)];
}

int64_t stateCount(const PoolCount& c, PoolState state) {
  return c.byState[static_cast<size_t>(state)];
}

double secondsFor(const PoolTracker& tracker, const std::string& cluster,
                  const std::string& driver) {
  for (const auto& total : tracker.incompleteSeconds()) {
    if (total.cluster == cluster && total.driver == driver) return total.seconds();
  }
  return -1;
}

}  // namespace

TEST_CASE("the dra-example-driver slice list is one complete pool of 8 devices",
          "[inventory][pools]") {
  PoolTracker tracker;
  const auto slices = loadSlices("dra-resourceslice-v1-list-dra-example-driver.yaml");
  REQUIRE(slices.size() == 1);
  for (const auto& s : slices) REQUIRE(tracker.onSlice("w1", kAdd, s, at(0)));

  const auto pools = tracker.pools();
  REQUIRE(pools.size() == 1);
  const PoolStatus& p = pools[0];
  CHECK(p.cluster == "w1");
  CHECK(p.driver == "gpu.example.com");
  CHECK(p.pool == "dra-example-driver-cluster-worker");
  CHECK(p.generation == 0);
  CHECK(p.slicesSeen == 1);
  CHECK(p.slicesExpected == 1);
  CHECK(p.state == PoolState::Complete);
  CHECK(p.problem == PoolProblem::None);
  // gpu-0 .. gpu-7 in the fixture.
  CHECK(p.devices == 8);
  CHECK(p.usable == 8);
  CHECK(p.unavailable == 0);
  CHECK(p.since == at(0));

  const auto counts = tracker.poolCounts();
  REQUIRE(counts.size() == 1);
  CHECK(stateCount(counts[0], PoolState::Complete) == 1);
  CHECK(stateCount(counts[0], PoolState::Incomplete) == 0);
  CHECK(stateCount(counts[0], PoolState::Stale) == 0);
  CHECK(tracker.sliceCount() == 1);
}

TEST_CASE("a shared slice is kept, not copied, and released when replaced or deleted",
          "[inventory][pools]") {
  PoolTracker tracker;
  const auto slices = loadSlices("dra-resourceslice-v1-list-dra-example-driver.yaml");
  REQUIRE(slices.size() == 1);
  auto shared = std::make_shared<const firstwork::model::ResourceSlice>(slices[0]);
  REQUIRE(tracker.onSlice("w1", kAdd, shared, at(0)));
  CHECK(shared.use_count() == 2);  // the caller's and the tracker's
  // A device the tracker shows is the caller's own device, not a copy of it.
  const auto gpu0 = tracker.findDevice("w1", "gpu.example.com", "dra-example-driver-cluster-worker", "gpu-0");
  REQUIRE(gpu0);
  REQUIRE_FALSE(shared->devices.empty());
  CHECK(gpu0->device >= &shared->devices.front());
  CHECK(gpu0->device <= &shared->devices.back());
  // An update replaces it (the old one is let go), a delete lets go of the new one.
  auto update = std::make_shared<const firstwork::model::ResourceSlice>(slices[0]);
  REQUIRE(tracker.onSlice("w1", kMod, update, at(1)));
  CHECK(shared.use_count() == 1);
  CHECK(update.use_count() == 2);
  REQUIRE(tracker.onSlice("w1", kDel, update, at(2)));
  CHECK(update.use_count() == 1);
  CHECK(tracker.sliceCount() == 0);
}

TEST_CASE("the KEP two-slice partitionable pool is incomplete until its device slice arrives",
          "[inventory][pools]") {
  PoolTracker tracker;
  const auto slices = loadSlices("dra-resourceslice-v1-partitionable-two-slice-pool-kep2941.yaml");
  REQUIRE(slices.size() == 2);
  REQUIRE(slices[0].sharedCounters);  // node1-gpu0-counters
  REQUIRE(slices[1].devices.size() == 2);

  REQUIRE(tracker.onSlice("w1", kAdd, slices[0], at(0)));
  auto pools = tracker.pools();
  REQUIRE(pools.size() == 1);
  CHECK(pools[0].state == PoolState::Incomplete);
  CHECK(pools[0].slicesSeen == 1);
  CHECK(pools[0].slicesExpected == 2);
  CHECK(pools[0].devices == 0);  // a counter-set slice carries no devices

  REQUIRE(tracker.onSlice("w1", kAdd, slices[1], at(20)));
  pools = tracker.pools();
  REQUIRE(pools.size() == 1);
  CHECK(pools[0].state == PoolState::Complete);
  CHECK(pools[0].since == at(20));
  CHECK(pools[0].slicesSeen == 2);
  // Counter-set slice and device slice merged per pool: 2 devices, both partitions.
  CHECK(pools[0].devices == 2);
  CHECK(pools[0].partitionDevices == 2);
  CHECK(pools[0].usable == 2);
  // Incomplete from 0 s to 20 s: 20 pool-seconds.
  CHECK(secondsFor(tracker, "w1", "gpu.nvidia.com") == Approx(20.0));
}

TEST_CASE("a stale generation-1 slice and an incomplete generation-2 pool make both devices "
          "unavailable",
          "[inventory][pools]") {
  PoolTracker tracker;
  const auto slices =
      loadSlices("dra-resourceslice-v1-pool-generation-rollover-incomplete-CONSTRUCTED.yaml");
  REQUIRE(slices.size() == 2);
  for (const auto& s : slices) REQUIRE(tracker.onSlice("w1", kAdd, s, at(0)));

  auto pools = tracker.pools();
  REQUIRE(pools.size() == 1);
  const PoolStatus& p = pools[0];
  CHECK(p.generation == 2);
  CHECK(p.slicesSeen == 1);      // gen2-part1 only
  CHECK(p.slicesExpected == 2);  // its resourceSliceCount
  CHECK(p.staleSlices == 1);     // the gen-1 slice
  CHECK(p.state == PoolState::Incomplete);  // incomplete wins over stale
  // gpu-1 (gen 2, incomplete) and gpu-0 (only in gen 1): 2 devices, 0 usable.
  CHECK(p.devices == 2);
  CHECK(p.usable == 0);
  CHECK(reasonCount(p, UnavailableReason::PoolIncomplete) == 1);
  CHECK(reasonCount(p, UnavailableReason::PoolStale) == 1);

  const auto gpu0 = tracker.findDevice("w1", "gpu.example.com", "node-a", "gpu-0");
  REQUIRE(gpu0);
  CHECK(gpu0->poolReason == UnavailableReason::PoolStale);
  const auto gpu1 = tracker.findDevice("w1", "gpu.example.com", "node-a", "gpu-1");
  REQUIRE(gpu1);
  CHECK(gpu1->poolReason == UnavailableReason::PoolIncomplete);
  CHECK(gpu1->nodeName == "node-a");
  CHECK_FALSE(tracker.findDevice("w1", "gpu.example.com", "node-a", "gpu-9"));

  // The driver finishes: the second gen-2 slice (republishing gpu-0) at 30 s, the gen-1 slice is
  // deleted at 45 s. Incomplete 0–30 s, stale 30–45 s: 45 pool-seconds.
  auto part2 = slice("node-a-gpu.example.com-gen2-part2", "gpu.example.com", "node-a", 2, 2,
                     {gpuDevice("gpu-0")}, "node-a");
  REQUIRE(tracker.onSlice("w1", kAdd, part2, at(30)));
  pools = tracker.pools();
  CHECK(pools[0].state == PoolState::Stale);
  CHECK(pools[0].since == at(30));
  CHECK(pools[0].devices == 2);
  CHECK(pools[0].usable == 2);
  CHECK(tracker.poolCounts()[0].byState[static_cast<size_t>(PoolState::Stale)] == 1);

  REQUIRE(tracker.onSlice("w1", kDel, slices[0], at(45)));
  pools = tracker.pools();
  CHECK(pools[0].state == PoolState::Complete);
  CHECK(pools[0].staleSlices == 0);
  tracker.advanceTo(at(100));
  CHECK(secondsFor(tracker, "w1", "gpu.example.com") == Approx(45.0));
}

TEST_CASE("devices only an older generation publishes are stale and shared names count once",
          "[inventory][pools]") {
  PoolTracker tracker;
  auto old_devices = gpus(5);  // gpu-0..gpu-4
  REQUIRE(tracker.onSlice("w1", kAdd, slice("s-gen1", "d", "p", 1, 1, old_devices, "n1"), at(0)));
  REQUIRE(tracker.onSlice("w1", kAdd, slice("s-gen2", "d", "p", 2, 1, gpus(4), "n1"), at(10)));
  const auto pools = tracker.pools();
  REQUIRE(pools.size() == 1);
  CHECK(pools[0].state == PoolState::Stale);
  // gpu-0..3 current (once each, although gen 1 publishes them too) + gpu-4 stale-only.
  CHECK(pools[0].devices == 5);
  CHECK(pools[0].usable == 4);
  CHECK(reasonCount(pools[0], UnavailableReason::PoolStale) == 1);
}

TEST_CASE("a driver that resets its generation is judged on the highest generation present",
          "[inventory][pools]") {
  PoolTracker tracker;
  REQUIRE(tracker.onSlice("w1", kAdd, slice("a", "d", "p", 5, 1, gpus(2), "n1"), at(0)));
  // The restarted driver publishes generation 0 before the old slice is gone: the newer slice of
  // the lower generation is stale while generation 5 is present.
  REQUIRE(tracker.onSlice("w1", kAdd, slice("b", "d", "p", 0, 1, gpus(3), "n1"), at(10)));
  auto pools = tracker.pools();
  CHECK(pools[0].generation == 5);
  CHECK(pools[0].state == PoolState::Stale);
  CHECK(pools[0].devices == 3);  // gpu-0, gpu-1 (gen 5) + gpu-2 (gen 0 only)
  CHECK(pools[0].usable == 2);

  REQUIRE(tracker.onSlice("w1", kDel, slice("a", "d", "p", 5, 1, {}, "n1"), at(12)));
  pools = tracker.pools();
  CHECK(pools[0].generation == 0);
  CHECK(pools[0].state == PoolState::Complete);
  CHECK(pools[0].devices == 3);
  CHECK(pools[0].usable == 3);
  tracker.advanceTo(at(20));
  CHECK(secondsFor(tracker, "w1", "d") == Approx(2.0));  // stale 10 s → 12 s
}

TEST_CASE("slices that disagree on resourceSliceCount make the pool invalid and incomplete",
          "[inventory][pools]") {
  PoolTracker tracker;
  REQUIRE(tracker.onSlice("w1", kAdd, slice("x", "d", "p", 1, 2, gpus(1, "a-"), "n1"), at(0)));
  REQUIRE(tracker.onSlice("w1", kAdd, slice("y", "d", "p", 1, 3, gpus(1, "b-"), "n1"), at(0)));
  const auto pools = tracker.pools();
  REQUIRE(pools.size() == 1);
  CHECK(pools[0].state == PoolState::Incomplete);
  CHECK(pools[0].problem == PoolProblem::SliceCountMismatch);
  CHECK(pools[0].slicesSeen == 2);
  CHECK(pools[0].slicesExpected == 3);
  CHECK(pools[0].devices == 2);
  CHECK(reasonCount(pools[0], UnavailableReason::PoolIncomplete) == 2);
  const auto counts = tracker.poolCounts();
  CHECK(stateCount(counts[0], PoolState::Incomplete) == 1);
  CHECK(counts[0].invalid == 1);
  CHECK(firstwork::inventory::poolProblemName(pools[0].problem) == "resource_slice_count_mismatch");
}

TEST_CASE("duplicate device names in a complete pool make every device unavailable",
          "[inventory][pools]") {
  PoolTracker tracker;
  REQUIRE(tracker.onSlice("w1", kAdd, slice("x", "d", "p", 1, 2, gpus(2), "n1"), at(0)));
  REQUIRE(tracker.onSlice("w1", kAdd, slice("y", "d", "p", 1, 2, {gpuDevice("gpu-1")}, "n1"),
                          at(0)));
  const auto pools = tracker.pools();
  CHECK(pools[0].state == PoolState::Incomplete);
  CHECK(pools[0].problem == PoolProblem::DuplicateDeviceNames);
  // gpu-0, gpu-1 (slice x) and gpu-1 again (slice y): 3 published entries, all invalid.
  CHECK(pools[0].devices == 3);
  CHECK(pools[0].usable == 0);
  CHECK(reasonCount(pools[0], UnavailableReason::Duplicate) == 3);
  CHECK(tracker.poolCounts()[0].invalid == 1);
}

TEST_CASE("an incomplete pool is not validated for duplicates", "[inventory][pools]") {
  PoolTracker tracker;
  REQUIRE(tracker.onSlice(
      "w1", kAdd, slice("x", "d", "p", 1, 3, {gpuDevice("gpu-0"), gpuDevice("gpu-0")}, "n1"),
      at(0)));
  const auto pools = tracker.pools();
  CHECK(pools[0].problem == PoolProblem::None);
  CHECK(reasonCount(pools[0], UnavailableReason::PoolIncomplete) == 2);
  CHECK(reasonCount(pools[0], UnavailableReason::Duplicate) == 0);
}

TEST_CASE("NoSchedule and NoExecute device taints make devices unavailable, effect None does not",
          "[inventory][pools]") {
  PoolTracker tracker;
  auto devices = gpus(4);
  devices[0].taints.push_back({"example.com/unhealthy", "", "NoSchedule"});
  devices[1].taints.push_back({"example.com/unhealthy", "", "NoExecute"});
  devices[2].taints.push_back({"example.com/maintenance-soon", "", "None"});
  REQUIRE(tracker.onSlice("w1", kAdd, slice("x", "d", "p", 1, 1, devices, "n1"), at(0)));
  const auto pools = tracker.pools();
  CHECK(pools[0].state == PoolState::Complete);
  CHECK(pools[0].usable == 2);
  CHECK(reasonCount(pools[0], UnavailableReason::Tainted) == 2);
}

TEST_CASE("node verdicts complete the per-pool detail and node-independent slices are unaffected",
          "[inventory][pools]") {
  PoolTracker tracker;
  REQUIRE(tracker.onSlice("w1", kAdd, slice("x", "d", "n1", 1, 1, gpus(2), "n1"), at(0)));
  REQUIRE(tracker.onSlice("w1", kAdd, slice("y", "d", "net", 1, 1, gpus(3)), at(0)));
  const auto pools =
      tracker.pools([](std::string_view, std::string_view node) -> std::optional<UnavailableReason> {
        if (node == "n1") return UnavailableReason::NodeNotReady;
        return std::nullopt;
      });
  REQUIRE(pools.size() == 2);
  CHECK(pools[0].pool == "n1");
  CHECK(reasonCount(pools[0], UnavailableReason::NodeNotReady) == 2);
  CHECK(pools[1].pool == "net");  // allNodes slice
  CHECK(pools[1].usable == 3);
}

TEST_CASE("pool-seconds incomplete or stale are integrated exactly over event time",
          "[inventory][pools]") {
  PoolTracker tracker;
  // Pool A (driver d1): slice 1 of 2 at 0 s, slice 2 at 60 s          → 60 s incomplete.
  // Pool B (driver d1): complete at 30 s; gen-2 slice 1 of 2 at 100 s → incomplete 100–130 s;
  //   gen-2 slice 2 at 130 s with the gen-1 slice still there        → stale 130–150 s;
  //   gen-1 slice deleted at 150 s                                   → complete.
  // d1: 60 + 30 + 20 = 110 pool-seconds.
  // Pool C (driver d2): 1 of 2 slices from 50 s until the end (200 s) → 150 pool-seconds.
  REQUIRE(tracker.onSlice("w1", kAdd, slice("a1", "d1", "A", 1, 2, gpus(1), "n1"), at(0)));
  REQUIRE(tracker.onSlice("w1", kAdd, slice("b1", "d1", "B", 1, 1, gpus(2), "n2"), at(30)));
  REQUIRE(tracker.onSlice("w1", kAdd, slice("c1", "d2", "C", 1, 2, gpus(1), "n3"), at(50)));
  REQUIRE(tracker.onSlice("w1", kAdd, slice("a2", "d1", "A", 1, 2, gpus(1, "x-"), "n1"), at(60)));
  REQUIRE(tracker.onSlice("w1", kAdd, slice("b2", "d1", "B", 2, 2, gpus(1), "n2"), at(100)));
  REQUIRE(tracker.onSlice("w1", kAdd, slice("b3", "d1", "B", 2, 2, gpus(1, "y-"), "n2"), at(130)));
  REQUIRE(tracker.onSlice("w1", kDel, slice("b1", "d1", "B", 1, 1, {}, "n2"), at(150)));
  tracker.advanceTo(at(200));
  CHECK(secondsFor(tracker, "w1", "d1") == Approx(110.0));
  CHECK(secondsFor(tracker, "w1", "d2") == Approx(150.0));
  CHECK(tracker.now() == at(200));

  // An event stamped before the last advance is applied at the last advance: the integral never
  // runs backwards. C completes "at 190 s" but counts as complete from 200 s.
  REQUIRE(tracker.onSlice("w1", kAdd, slice("c2", "d2", "C", 1, 2, gpus(1, "z-"), "n3"), at(190)));
  tracker.advanceTo(at(260));
  CHECK(secondsFor(tracker, "w1", "d2") == Approx(150.0));
  const auto pools = tracker.pools();
  REQUIRE(pools.size() == 3);
  CHECK(pools[2].pool == "C");
  CHECK(pools[2].since == at(200));
  // Advancing to an earlier time changes nothing.
  tracker.advanceTo(at(100));
  CHECK(tracker.now() == at(260));
}

TEST_CASE("malformed slices are rejected and counted, keeping the previous version",
          "[inventory][pools]") {
  PoolTracker tracker;
  REQUIRE(tracker.onSlice("w1", kAdd, slice("s", "d", "p", 1, 1, gpus(2), "n1"), at(0)));

  auto no_count = slice("t", "d", "p", 1, 0, gpus(1), "n1");
  CHECK_FALSE(tracker.onSlice("w1", kAdd, no_count, at(1)));
  auto no_pool = slice("s", "d", "", 1, 1, gpus(7), "n1");
  CHECK_FALSE(tracker.onSlice("w1", kMod, no_pool, at(2)));
  auto no_driver = slice("u", "", "p", 1, 1, gpus(1), "n1");
  CHECK_FALSE(tracker.onSlice("w1", kAdd, no_driver, at(3)));
  auto negative_generation = slice("v", "d", "p", -1, 1, gpus(1), "n1");
  CHECK_FALSE(tracker.onSlice("w1", kAdd, negative_generation, at(4)));
  auto unnamed = slice("", "d", "p", 1, 1, gpus(1), "n1");
  CHECK_FALSE(tracker.onSlice("w1", kDel, unnamed, at(5)));
  CHECK(tracker.rejectedSlices() == 5);

  const auto pools = tracker.pools();
  REQUIRE(pools.size() == 1);
  CHECK(pools[0].devices == 2);  // the good version of slice s
  CHECK(pools[0].state == PoolState::Complete);
  // Bookmarks and errors carry no slice.
  CHECK(tracker.onSlice("w1", EventType::Bookmark, firstwork::model::ResourceSlice{}, at(6)));
  CHECK(tracker.rejectedSlices() == 5);
}

TEST_CASE("deleting every slice of a driver removes its pools and gauges but keeps its counter",
          "[inventory][pools]") {
  PoolTracker tracker;
  REQUIRE(tracker.onSlice("w1", kAdd, slice("s", "d", "p", 1, 2, gpus(2), "n1"), at(0)));
  REQUIRE(tracker.onSlice("w1", kDel, slice("s", "d", "p", 1, 2, {}, "n1"), at(40)));
  // Deleting an unknown slice is a no-op.
  REQUIRE(tracker.onSlice("w1", kDel, slice("nope", "d", "p", 1, 2, {}, "n1"), at(41)));
  CHECK(tracker.pools().empty());
  CHECK(tracker.poolCounts().empty());
  CHECK(tracker.sliceCount() == 0);
  CHECK(secondsFor(tracker, "w1", "d") == Approx(40.0));
}

TEST_CASE("a slice updated into another pool leaves its old pool", "[inventory][pools]") {
  PoolTracker tracker;
  REQUIRE(tracker.onSlice("w1", kAdd, slice("s", "d", "p1", 1, 1, gpus(2), "n1"), at(0)));
  REQUIRE(tracker.onSlice("w1", kMod, slice("s", "d", "p2", 1, 1, gpus(3), "n1"), at(1)));
  const auto pools = tracker.pools();
  REQUIRE(pools.size() == 1);
  CHECK(pools[0].pool == "p2");
  CHECK(pools[0].devices == 3);
  CHECK(tracker.sliceCount() == 1);
}

TEST_CASE("clusters are kept apart and a cluster can be forgotten", "[inventory][pools]") {
  PoolTracker tracker;
  REQUIRE(tracker.onSlice("w1", kAdd, slice("s", "d", "p", 1, 2, gpus(2), "n1"), at(0)));
  REQUIRE(tracker.onSlice("w2", kAdd, slice("s", "d", "p", 1, 1, gpus(4), "n1"), at(0)));
  auto pools = tracker.pools();
  REQUIRE(pools.size() == 2);
  CHECK(pools[0].cluster == "w1");
  CHECK(pools[0].state == PoolState::Incomplete);
  CHECK(pools[1].cluster == "w2");
  CHECK(pools[1].state == PoolState::Complete);

  int w2_devices = 0;
  tracker.forEachDevice("w2", [&](const firstwork::inventory::DeviceView&) { ++w2_devices; });
  CHECK(w2_devices == 4);

  tracker.clearCluster("w1", at(10));
  pools = tracker.pools();
  REQUIRE(pools.size() == 1);
  CHECK(pools[0].cluster == "w2");
  CHECK(secondsFor(tracker, "w1", "d") == Approx(10.0));  // kept after the cluster is gone
}

TEST_CASE("pool counts kept as pools change equal a count of every pool's state",
          "[inventory][pools]") {
  // poolCounts() reads figures kept per driver as pools change; here they are compared, after
  // every event, with a count made from the pools themselves (pools()), through random slices
  // moving between pools, generations, slice counts that disagree, duplicate device names,
  // deletions and a cluster forgotten.
  std::mt19937 rng(20261205);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  PoolTracker tracker;
  const std::vector<std::string> clusters{"w1", "w2"};
  const std::vector<std::string> drivers{"gpu.nvidia.com", "gpu.example.com", "d"};
  int64_t t = 0;
  std::array<bool, firstwork::inventory::kPoolStateCount> seenState{};
  bool seenMismatch = false;
  bool seenDuplicate = false;
  for (int step = 0; step < 3000; ++step) {
    const std::string& cluster = clusters[static_cast<size_t>(pick(2))];
    const std::string name = "s" + std::to_string(pick(12));
    const int op = pick(20);
    if (op == 0) {
      tracker.clearCluster(cluster, at(++t));
    } else if (op < 5) {
      REQUIRE(tracker.onSlice(cluster, kDel, slice(name, "d", "p", 1, 1, {}, ""), at(++t)));
    } else {
      // Two device names in a three-name space: some complete pools hold duplicates.
      std::vector<firstwork::model::Device> devices = gpus(1, pick(3) == 0 ? "dup-" : name + "-");
      const auto type = pick(2) == 0 ? kAdd : kMod;
      REQUIRE(tracker.onSlice(
          cluster, type,
          slice(name, drivers[static_cast<size_t>(pick(3))], "p" + std::to_string(pick(3)), pick(3),
                1 + pick(2), std::move(devices), "n1"),
          at(++t)));
    }
    std::map<std::pair<std::string, std::string>, PoolCount> expected;
    for (const auto& p : tracker.pools()) {
      PoolCount& c = expected[{p.cluster, p.driver}];
      c.cluster = p.cluster;
      c.driver = p.driver;
      ++c.byState[static_cast<size_t>(p.state)];
      if (p.problem != PoolProblem::None) ++c.invalid;
      seenState[static_cast<size_t>(p.state)] = true;
      seenMismatch = seenMismatch || p.problem == PoolProblem::SliceCountMismatch;
      seenDuplicate = seenDuplicate || p.problem == PoolProblem::DuplicateDeviceNames;
    }
    const auto counts = tracker.poolCounts();
    INFO("step " << step);
    REQUIRE(counts.size() == expected.size());
    size_t i = 0;
    for (const auto& [key, want] : expected) {
      CHECK(counts[i].cluster == want.cluster);
      CHECK(counts[i].driver == want.driver);
      CHECK(counts[i].byState == want.byState);
      CHECK(counts[i].invalid == want.invalid);
      ++i;
    }
  }
  // The walk reached every state and both problems (else it tests less than it says).
  CHECK(seenState == std::array<bool, firstwork::inventory::kPoolStateCount>{true, true, true});
  CHECK(seenMismatch);
  CHECK(seenDuplicate);
}

TEST_CASE("state and reason names are the metric label values", "[inventory][pools]") {
  using firstwork::inventory::poolStateName;
  using firstwork::inventory::unavailableReasonName;
  CHECK(poolStateName(PoolState::Complete) == "complete");
  CHECK(poolStateName(PoolState::Incomplete) == "incomplete");
  CHECK(poolStateName(PoolState::Stale) == "stale");
  CHECK(unavailableReasonName(UnavailableReason::PoolIncomplete) == "pool_incomplete");
  CHECK(unavailableReasonName(UnavailableReason::PoolStale) == "pool_stale");
  CHECK(unavailableReasonName(UnavailableReason::Duplicate) == "duplicate");
  CHECK(unavailableReasonName(UnavailableReason::NodeNotReady) == "node_not_ready");
  CHECK(unavailableReasonName(UnavailableReason::NodeUnschedulable) == "node_unschedulable");
  CHECK(unavailableReasonName(UnavailableReason::Tainted) == "tainted");
}
