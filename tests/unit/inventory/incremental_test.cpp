// The inventory keeps its figures as running totals (each node and each pool adds its part, a
// change subtracts the old part and adds the new one). These tests walk one cluster through a
// sequence of slice, node, pod and claim changes and check every figure after every step against
// values worked out by hand, so that a part subtracted twice, or not at all, shows.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "firstwork/inventory/inventory.hpp"
#include "fixtures.hpp"

using firstwork::inventory::ClassFigures;
using firstwork::inventory::ClassKind;
using firstwork::inventory::Inventory;
using firstwork::inventory::PoolState;
using firstwork::inventory::UnavailableReason;
using firstwork::model::EventType;
using firstwork::model::PodPhase;
using namespace firstwork::testing;
namespace model = firstwork::model;

namespace {

constexpr EventType kAdd = EventType::Added;
constexpr EventType kMod = EventType::Modified;
constexpr EventType kDel = EventType::Deleted;

using Reasons = std::map<UnavailableReason, int64_t>;

/// Checks the figures of one class after a step (reasons not listed are 0).
void check(const Inventory& inventory, const std::string& device_class, int64_t published,
           int64_t usable, int64_t allocated, int64_t free, const Reasons& unavailable = {}) {
  INFO("class " << device_class);
  const auto f = inventory.figures("w1", device_class);
  REQUIRE(f.has_value());
  CHECK(f->published == published);
  CHECK(f->usable == usable);
  CHECK(f->allocated == allocated);
  CHECK(f->free == free);
  int64_t total = 0;
  for (size_t r = 0; r < f->unavailableByReason.size(); ++r) {
    const auto reason = static_cast<UnavailableReason>(r);
    const auto it = unavailable.find(reason);
    const int64_t expected = it == unavailable.end() ? 0 : it->second;
    INFO("reason " << firstwork::inventory::unavailableReasonName(reason));
    CHECK(f->unavailableByReason[r] == expected);
    total += expected;
  }
  CHECK(f->unavailable == total);
}

/// The detail of pool `name` (of driver gpu.nvidia.com on w1), as /api/v1/pools shows it.
firstwork::inventory::PoolStatus poolStatus(const Inventory& inventory, const std::string& name) {
  for (const auto& p : inventory.pools()) {
    if (p.cluster == "w1" && p.pool == name) return p;
  }
  FAIL("no pool " << name);
  return {};
}

model::ResourceClaim allocatedClaim(const std::string& name,
                                    std::vector<model::DeviceAllocation> results) {
  model::ResourceClaim c;
  c.meta.namespace_ = "team";
  c.meta.name = name;
  model::DeviceRequest request;
  request.name = "gpus";
  request.deviceClassName = "gpu.nvidia.com";
  request.count = static_cast<int64_t>(results.size());
  c.requests.push_back(request);
  c.allocated = true;
  c.allocations.assign(results.begin(), results.end());
  return c;
}

model::DeviceAllocation held(const std::string& pool, const std::string& device) {
  return model::DeviceAllocation{"gpus", "gpu.nvidia.com", pool, device};
}

model::Node gpuNode(const std::string& name, int64_t gpus, model::KeyValues labels,
                    bool ready = true) {
  model::Node n = node(name, ready, {{"nvidia.com/gpu", gpus * 1000}});
  n.meta.labels = std::move(labels);
  return n;
}

const model::KeyValues kExclusive{{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                                  {"nvidia.com/gpu.replicas", "1"},
                                  {"nvidia.com/gpu.sharing-strategy", "none"}};
const model::KeyValues kTimeSliced4{{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB-SHARED"},
                                    {"nvidia.com/gpu.replicas", "4"},
                                    {"nvidia.com/gpu.sharing-strategy", "time-slicing"}};

}  // namespace

TEST_CASE("DRA pools: removal and re-add of a slice, a generation change, a cordon and a claim "
          "are added and subtracted exactly",
          "[inventory][incremental]") {
  Inventory inventory;
  const std::string gpu = "gpu.nvidia.com";
  REQUIRE(inventory.onNode("w1", kAdd, node("n1")));
  REQUIRE(inventory.onNode("w1", kAdd, node("n2")));
  // Pool n1: one slice of 4 GPUs (gpu-0..3). Pool n2: two slices of 4 GPUs each (gpu-0..3 in
  // n2-a, gpu-4..7 in n2-b), announced as resourceSliceCount 2.
  REQUIRE(inventory.onSlice("w1", kAdd, slice("n1-a", gpu, "n1", 1, 1, gpus(4), "n1"), at(0)));
  REQUIRE(inventory.onSlice("w1", kAdd, slice("n2-a", gpu, "n2", 1, 2, gpus(4), "n2"), at(0)));
  const auto n2b = slice("n2-b", gpu, "n2", 1, 2, {gpuDevice("gpu-4"), gpuDevice("gpu-5"),
                                                   gpuDevice("gpu-6"), gpuDevice("gpu-7")},
                         "n2");
  REQUIRE(inventory.onSlice("w1", kAdd, n2b, at(0)));
  // 4 + 8 = 12 devices, every pool complete, nothing held.
  check(inventory, gpu, 12, 12, 0, 12);

  // A claim holds n1/gpu-3 and n2/gpu-4: 2 allocated, 12 − 2 = 10 free.
  REQUIRE(inventory.onClaim("w1", kAdd, allocatedClaim("c1", {held("n1", "gpu-3"),
                                                              held("n2", "gpu-4")})));
  check(inventory, gpu, 12, 12, 2, 10);

  // n2-b deleted: pool n2 has 1 of its 2 slices, so its 4 remaining devices are pool_incomplete.
  // published 4 + 4 = 8, usable 4 (n1). n2/gpu-4's slice is gone: it still counts as allocated
  // (by the request's DeviceClass) but on no usable device, so free = 4 − 1 (n1/gpu-3) = 3.
  REQUIRE(inventory.onSlice("w1", kDel, n2b, at(10)));
  check(inventory, gpu, 8, 4, 2, 3, {{UnavailableReason::PoolIncomplete, 4}});
  auto n2 = poolStatus(inventory, "n2");
  CHECK(n2.devices == 4);
  CHECK(n2.usable == 0);
  CHECK(n2.unavailableByReason[static_cast<size_t>(UnavailableReason::PoolIncomplete)] == 4);

  // n2-b back: the same figures as before it left.
  REQUIRE(inventory.onSlice("w1", kAdd, n2b, at(20)));
  check(inventory, gpu, 12, 12, 2, 10);

  // Pool n1 moves to generation 2 with only gpu-0 and gpu-1; n1-a (generation 1) is still there,
  // so the pool is stale and gpu-2, gpu-3 (published only by the old generation) are pool_stale.
  // published 2 + 2 + 8 = 12, usable 2 + 8 = 10; n1/gpu-3 is held on a stale device, n2/gpu-4 on
  // a usable one: free = 10 − 1 = 9.
  REQUIRE(inventory.onSlice("w1", kAdd, slice("n1-b", gpu, "n1", 2, 1, gpus(2), "n1"), at(30)));
  check(inventory, gpu, 12, 10, 2, 9, {{UnavailableReason::PoolStale, 2}});
  auto counts = inventory.poolCounts();
  REQUIRE(counts.size() == 1);
  CHECK(counts[0].byState[static_cast<size_t>(PoolState::Stale)] == 1);
  CHECK(counts[0].byState[static_cast<size_t>(PoolState::Complete)] == 1);

  // The old generation's slice is deleted: n1 publishes gpu-0, gpu-1 only. published 2 + 8 = 10,
  // all usable; n1/gpu-3 is gone but still held (allocated 2); free = 10 − 1 (n2/gpu-4) = 9.
  REQUIRE(inventory.onSlice("w1", kDel, slice("n1-a", gpu, "n1", 1, 1, {}, "n1"), at(40)));
  check(inventory, gpu, 10, 10, 2, 9);

  // n2 cordoned: its 8 devices are node_unschedulable. usable 2 (n1), free 2 (nothing usable is
  // held: n2/gpu-4 is on the cordoned node, n1/gpu-3 is gone).
  model::Node cordoned = node("n2");
  cordoned.unschedulable = true;
  REQUIRE(inventory.onNode("w1", kMod, cordoned));
  check(inventory, gpu, 10, 2, 2, 2, {{UnavailableReason::NodeUnschedulable, 8}});
  // The pools' detail follows the node: pool n2's 8 devices are cordoned, pool n1's 2 are not.
  n2 = poolStatus(inventory, "n2");
  CHECK(n2.devices == 8);
  CHECK(n2.usable == 0);
  CHECK(n2.unavailable == 8);
  CHECK(n2.unavailableByReason[static_cast<size_t>(UnavailableReason::NodeUnschedulable)] == 8);
  CHECK(poolStatus(inventory, "n1").usable == 2);

  // n2 deleted: its slices now name an unknown node, node_not_ready.
  REQUIRE(inventory.onNode("w1", kDel, node("n2")));
  check(inventory, gpu, 10, 2, 2, 2, {{UnavailableReason::NodeNotReady, 8}});

  // n2 comes back Ready and the claim is released: everything usable and free again.
  REQUIRE(inventory.onNode("w1", kAdd, node("n2")));
  REQUIRE(inventory.onClaim("w1", kDel, allocatedClaim("c1", {})));
  check(inventory, gpu, 10, 10, 0, 10);

  // Every slice gone: the class has no series.
  for (const std::string name : {"n1-b", "n2-a", "n2-b"}) {
    REQUIRE(inventory.onSlice("w1", kDel, slice(name, gpu, "x", 1, 1, {}), at(50)));
  }
  CHECK_FALSE(inventory.figures("w1", gpu).has_value());
  CHECK(inventory.classes().empty());
}

TEST_CASE("a slice that moves to another pool leaves the old pool's figures and joins the new one",
          "[inventory][incremental]") {
  Inventory inventory;
  const std::string gpu = "gpu.nvidia.com";
  REQUIRE(inventory.onNode("w1", kAdd, node("n1")));
  REQUIRE(inventory.onNode("w1", kAdd, node("n2", /*ready=*/false)));
  REQUIRE(inventory.onSlice("w1", kAdd, slice("s", gpu, "n1", 1, 1, gpus(3), "n1"), at(0)));
  // 3 devices on the Ready node n1.
  check(inventory, gpu, 3, 3, 0, 3);
  // The same slice now names pool n2 on the NotReady node n2 with 2 devices: pool n1 has no slice
  // left (0 devices), pool n2 has 2, node_not_ready.
  REQUIRE(inventory.onSlice("w1", kMod, slice("s", gpu, "n2", 1, 1, gpus(2), "n2"), at(5)));
  check(inventory, gpu, 2, 0, 0, 0, {{UnavailableReason::NodeNotReady, 2}});
  // n2 becomes Ready: the pool is recounted through the node.
  REQUIRE(inventory.onNode("w1", kMod, node("n2")));
  check(inventory, gpu, 2, 2, 0, 2);
}

TEST_CASE("extended resources: pods and a node's sharing-mode change are added and subtracted "
          "per node",
          "[inventory][incremental]") {
  Inventory inventory;
  const std::string whole = "nvidia.com/gpu";
  const std::string shares = "nvidia.com/gpu.shared";
  REQUIRE(inventory.onNode("w1", kAdd, gpuNode("g1", 4, kExclusive)));
  REQUIRE(inventory.onNode("w1", kAdd, gpuNode("g2", 2, kExclusive)));
  // Two exclusive nodes: 4 + 2 = 6 whole GPUs.
  check(inventory, whole, 6, 6, 0, 6);
  CHECK(inventory.figures("w1", whole)->kind == ClassKind::ExtendedResource);

  // p1 holds 3 on g1, p2 holds 3 on g2 (more than g2 has). Free is per node:
  // max(0, 4 − 3) + max(0, 2 − 3) = 1 + 0 = 1; allocated 3 + 3 = 6.
  REQUIRE(inventory.onPod("w1", kAdd, pod("team", "p1", "g1", {{whole, 3000}})));
  check(inventory, whole, 6, 6, 3, 3);
  REQUIRE(inventory.onPod("w1", kAdd, pod("team", "p2", "g2", {{whole, 3000}})));
  check(inventory, whole, 6, 6, 6, 1);

  // g1 switches to time-slicing ×4: its 4 GPUs publish 16 shares, class nvidia.com/gpu.shared,
  // and p1's 3 units are held there.
  //   nvidia.com/gpu:        g2 only: published 2, allocated 3 (p2), free max(0, 2 − 3) = 0.
  //   nvidia.com/gpu.shared: published 16, free 16 − 3 = 13; devices behind the shares
  //                          ceil(16 / 4) = 4, all usable, held min(4, 3) = 3.
  REQUIRE(inventory.onNode("w1", kMod, gpuNode("g1", 16, kTimeSliced4)));
  check(inventory, whole, 2, 2, 3, 0);
  check(inventory, shares, 16, 16, 3, 13);
  ClassFigures f = *inventory.figures("w1", shares);
  CHECK(f.shared);
  CHECK(f.physicalDevices == 4);
  CHECK(f.physicalUsable == 4);
  CHECK(f.physicalAllocated == 3);
  CHECK(inventory.alsoServedBy("w1", whole) == std::vector<std::string>{shares});
  CHECK(inventory.physicalUsableByNode("w1", shares) ==
        std::map<std::string, int64_t, std::less<>>{{"g1", 4}});
  // The node-mode view follows the labels: g1 time-sliced (16 shares over 4 GPUs), g2 exclusive.
  const auto modes = inventory.nodeModes("w1");
  REQUIRE(modes.size() == 2);
  CHECK(modes[0].node == "g1");
  CHECK(modes[0].sharing.mode == firstwork::inventory::SharingMode::TimeSlicing);
  CHECK(modes[0].deviceClass == shares);
  CHECK(modes[0].units == 16);
  CHECK(modes[0].physicalDevices == 4);
  CHECK(modes[1].node == "g2");
  CHECK(modes[1].sharing.mode == firstwork::inventory::SharingMode::Exclusive);
  CHECK(modes[1].deviceClass == whole);
  CHECK(modes[1].physicalDevices == 0);

  // g1 NotReady: its 16 shares are node_not_ready; a node that is not usable frees nothing and
  // its devices are not usable (physicalUsable 0, physicalAllocated 0); p1 still holds 3.
  REQUIRE(inventory.onNode("w1", kMod, gpuNode("g1", 16, kTimeSliced4, /*ready=*/false)));
  check(inventory, shares, 16, 0, 3, 0, {{UnavailableReason::NodeNotReady, 16}});
  f = *inventory.figures("w1", shares);
  CHECK(f.physicalDevices == 4);
  CHECK(f.physicalUsable == 0);
  CHECK(f.physicalAllocated == 0);
  CHECK(inventory.physicalUsableByNode("w1", shares).empty());

  // p1 finishes: terminated pods hold nothing.
  REQUIRE(inventory.onPod("w1", kMod,
                          pod("team", "p1", "g1", {{whole, 3000}}, PodPhase::Succeeded)));
  check(inventory, shares, 16, 0, 0, 0, {{UnavailableReason::NodeNotReady, 16}});

  // g1 back to exclusive and Ready with 4 GPUs: no shares left anywhere (the class has no series,
  // nothing serves a plain request as shares); whole GPUs 4 + 2 = 6, held 3 (p2 on g2):
  // free (4 − 0) + max(0, 2 − 3) = 4.
  REQUIRE(inventory.onNode("w1", kMod, gpuNode("g1", 4, kExclusive)));
  CHECK_FALSE(inventory.figures("w1", shares).has_value());
  CHECK(inventory.alsoServedBy("w1", whole).empty());
  check(inventory, whole, 6, 6, 3, 4);

  // g2's labels become unreadable: its 2 units and p2's 3 are unclassified, never guessed.
  // nvidia.com/gpu is g1 alone: published 4, free 4, allocated 0.
  REQUIRE(inventory.onNode("w1", kMod,
                           gpuNode("g2", 2, {{"nvidia.com/gpu.replicas", "two"}})));
  check(inventory, whole, 4, 4, 0, 4);
  auto unclassified = inventory.unclassified();
  REQUIRE(unclassified.size() == 1);
  CHECK(unclassified[0].source == whole);
  CHECK(unclassified[0].kind == ClassKind::ExtendedResource);
  CHECK(unclassified[0].published == 2);
  CHECK(unclassified[0].usable == 2);
  CHECK(unclassified[0].allocated == 3);

  // g2 deleted: its capacity goes; p2 is still bound to the name and holds 3 in the requested
  // resource's own class, on no usable node (free unchanged at 4).
  REQUIRE(inventory.onNode("w1", kDel, gpuNode("g2", 2, {})));
  CHECK(inventory.unclassified().empty());
  check(inventory, whole, 4, 4, 3, 4);

  // p2 deleted: g1 alone, nothing held.
  REQUIRE(inventory.onPod("w1", kDel, pod("team", "p2", "g2")));
  check(inventory, whole, 4, 4, 0, 4);
}

TEST_CASE("a pod update is compared in place: churn changes nothing, binding, requests and "
          "termination do",
          "[inventory][incremental]") {
  Inventory inventory;
  const std::string whole = "nvidia.com/gpu";
  REQUIRE(inventory.onNode("w1", kAdd, gpuNode("g1", 4, kExclusive)));
  REQUIRE(inventory.onNode("w1", kAdd, gpuNode("g2", 4, kExclusive)));
  // Pending, unbound, asking 2: holds nothing yet (8 published, 8 free).
  REQUIRE(inventory.onPod("w1", kAdd, pod("team", "p", "", {{whole, 2000}}, PodPhase::Pending)));
  check(inventory, whole, 8, 8, 0, 8);
  // Bound to g1: holds 2 there, free (4 − 2) + 4 = 6.
  REQUIRE(inventory.onPod("w1", kMod, pod("team", "p", "g1", {{whole, 2000}}, PodPhase::Pending)));
  check(inventory, whole, 8, 8, 2, 6);
  // Status churn (running) and an untracked request: nothing changes.
  REQUIRE(inventory.onPod("w1", kMod, pod("team", "p", "g1", {{"cpu", 500}, {whole, 2000}})));
  check(inventory, whole, 8, 8, 2, 6);
  // Resized to 3 GPUs: free (4 − 3) + 4 = 5.
  REQUIRE(inventory.onPod("w1", kMod, pod("team", "p", "g1", {{"cpu", 500}, {whole, 3000}})));
  check(inventory, whole, 8, 8, 3, 5);
  // Moved to g2 (a new binding under the same name): free 4 + (4 − 3) = 5, g1 whole again.
  REQUIRE(inventory.onPod("w1", kMod, pod("team", "p", "g2", {{whole, 3000}})));
  check(inventory, whole, 8, 8, 3, 5);
  REQUIRE(inventory.onNode("w1", kMod, gpuNode("g2", 4, kExclusive, /*ready=*/false)));
  // g2 not ready: published 8, usable 4 (g1); a node that is not usable frees nothing: free 4.
  check(inventory, whole, 8, 4, 3, 4, {{UnavailableReason::NodeNotReady, 4}});
  REQUIRE(inventory.onNode("w1", kMod, gpuNode("g2", 4, kExclusive)));
  // A second tracked request dropped (only the GPU one was tracked anyway) and then termination:
  // terminated pods hold nothing.
  REQUIRE(inventory.onPod("w1", kMod, pod("team", "p", "g2", {{whole, 3000}}, PodPhase::Failed)));
  check(inventory, whole, 8, 8, 0, 8);
  // The requests list emptied on a running pod bound to g1: holds nothing either.
  REQUIRE(inventory.onPod("w1", kMod, pod("team", "p", "g1", {})));
  check(inventory, whole, 8, 8, 0, 8);
  REQUIRE(inventory.onPod("w1", kMod, pod("team", "p", "g1", {{whole, 1000}})));
  check(inventory, whole, 8, 8, 1, 7);
}

TEST_CASE("pool-seconds incomplete are integrated from a running count of incomplete pools",
          "[inventory][incremental]") {
  firstwork::inventory::PoolTracker tracker;
  const std::string gpu = "gpu.nvidia.com";
  auto total = [&tracker] {
    const auto seconds = tracker.incompleteSeconds();
    REQUIRE(seconds.size() == 1);
    return seconds[0].seconds();
  };
  // Pool A: 1 of 2 slices at 0 s (incomplete), whole at 100 s.
  REQUIRE(tracker.onSlice("w1", kAdd, slice("a1", gpu, "A", 1, 2, gpus(1)), at(0)));
  // Pool B: 1 of 2 slices at 50 s, deleted at 120 s while still incomplete.
  REQUIRE(tracker.onSlice("w1", kAdd, slice("b1", gpu, "B", 1, 2, gpus(1)), at(50)));
  REQUIRE(tracker.onSlice("w1", kAdd, slice("a2", gpu, "A", 1, 2, {gpuDevice("gpu-9")}), at(100)));
  REQUIRE(tracker.onSlice("w1", kDel, slice("b1", gpu, "B", 1, 2, {}), at(120)));
  tracker.advanceTo(at(200));
  // A: 100 − 0 = 100; B: 120 − 50 = 70; nothing after 120 s: 170 pool-seconds.
  CHECK(total() == Approx(170.0));
  // Pool C incomplete from 250 s until the cluster is cleared at 300 s: + 50.
  REQUIRE(tracker.onSlice("w1", kAdd, slice("c1", gpu, "C", 1, 3, gpus(1)), at(250)));
  tracker.clearCluster("w1", at(300));
  tracker.advanceTo(at(400));
  CHECK(total() == Approx(220.0));
}
