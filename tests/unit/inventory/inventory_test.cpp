#include "firstwork/inventory/inventory.hpp"

#include <catch2/catch.hpp>

#include "fixtures.hpp"

using firstwork::inventory::ClassFigures;
using firstwork::inventory::ClassKind;
using firstwork::inventory::DeviceClassMapping;
using firstwork::inventory::DeviceCount;
using firstwork::inventory::Inventory;
using firstwork::inventory::InventoryConfig;
using firstwork::inventory::PoolState;
using firstwork::inventory::UnavailableReason;
using firstwork::model::EventType;
using firstwork::model::PodPhase;
using namespace firstwork::testing;

namespace {

constexpr EventType kAdd = EventType::Added;
constexpr EventType kMod = EventType::Modified;
constexpr EventType kDel = EventType::Deleted;

int64_t reason(const ClassFigures& f, UnavailableReason r) {
  return f.unavailableByReason[static_cast<size_t>(r)];
}

ClassFigures requireFigures(const Inventory& inventory, const std::string& cluster,
                            const std::string& device_class) {
  const auto f = inventory.figures(cluster, device_class);
  REQUIRE(f.has_value());
  return *f;
}

firstwork::model::ResourceClaim claim(const std::string& ns, const std::string& name,
                                      std::vector<firstwork::model::DeviceRequest> requests,
                                      std::vector<firstwork::model::DeviceAllocation> results = {}) {
  firstwork::model::ResourceClaim c;
  c.meta.namespace_ = ns;
  c.meta.name = name;
  c.requests.assign(requests.begin(), requests.end());
  c.allocated = !results.empty();
  c.allocations.assign(results.begin(), results.end());
  return c;
}

firstwork::model::DeviceRequest request(const std::string& name, const std::string& device_class,
                                        int64_t count = 1, bool all = false) {
  firstwork::model::DeviceRequest r;
  r.name = name;
  r.deviceClassName = device_class;
  r.count = count;
  r.allocationModeAll = all;
  return r;
}

firstwork::model::PodClaim podClaim(const std::string& name, const std::string& generated,
                                    const std::string& claim_name = "") {
  firstwork::model::PodClaim c;
  c.name = name;
  c.resourceClaimName = claim_name;
  c.resourceClaimTemplateName = claim_name.empty() ? "template" : "";
  c.generatedClaimName = generated;
  return c;
}

// The first of `slices` and its node (Ready) on cluster w1; returns the slice's pool.
std::string addFirstSlice(Inventory& inventory,
                          const std::vector<firstwork::model::ResourceSlice>& slices) {
  REQUIRE_FALSE(slices.empty());
  REQUIRE(inventory.onNode("w1", kAdd, node(slices[0].nodeName)));
  REQUIRE(inventory.onSlice("w1", kAdd, slices[0], at(0)));
  return slices[0].poolName;
}

// ns/`name` with `uid`, asking one gpu.nvidia.com device and allocated `device` of `pool`,
// reserved for the pod of uid `pod` (none when empty).
firstwork::model::ResourceClaim gpuClaim(const std::string& name, const std::string& pool,
                                         const std::string& device, const std::string& uid,
                                         const std::string& pod = "") {
  auto c = claim("ns", name, {request("gpu", "gpu.nvidia.com")},
                 {{"gpu", "gpu.nvidia.com", pool, device}});
  c.meta.uid = uid;
  if (!pod.empty()) c.reservedForPods.emplace_back(pod);
  return c;
}

bool sameCounts(const std::vector<DeviceCount>& got, const std::vector<DeviceCount>& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].deviceClass != want[i].deviceClass || got[i].count != want[i].count ||
        got[i].allocated != want[i].allocated) {
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("design §5: 4 of 16 GPUs in an incomplete pool leave 12 usable until the pool is whole",
          "[inventory]") {
  Inventory inventory;
  for (const std::string n : {"n1", "n2", "n3", "n4"}) {
    REQUIRE(inventory.onNode("w1", kAdd, node(n)));
  }
  // n1–n3: one complete single-slice pool of 4 GPUs each. n4: a partitionable pool announced as
  // 2 slices; its device slice (4 GPUs) is there at 0 s, its counter-set slice only at 150 s.
  for (const std::string n : {"n1", "n2", "n3"}) {
    REQUIRE(inventory.onSlice("w1", kAdd, slice(n + "-gpus", "gpu.nvidia.com", n, 1, 1, gpus(4), n),
                              at(0)));
  }
  REQUIRE(inventory.onSlice("w1", kAdd,
                            slice("n4-gpus", "gpu.nvidia.com", "n4", 1, 2, gpus(4), "n4"), at(0)));

  ClassFigures f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.kind == ClassKind::Dra);
  CHECK(f.published == 16);  // 4 pools × 4
  CHECK(f.usable == 12);     // 16 − 4 in the incomplete pool
  CHECK(f.unavailable == 4);
  CHECK(reason(f, UnavailableReason::PoolIncomplete) == 4);
  CHECK(f.free == 12);
  auto counts = inventory.poolCounts();
  REQUIRE(counts.size() == 1);
  CHECK(counts[0].byState[static_cast<size_t>(PoolState::Complete)] == 3);
  CHECK(counts[0].byState[static_cast<size_t>(PoolState::Incomplete)] == 1);

  auto counters = slice("n4-counters", "gpu.nvidia.com", "n4", 1, 2, {});
  counters.sharedCounters = true;
  REQUIRE(inventory.onSlice("w1", kAdd, counters, at(150)));
  f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.published == 16);
  CHECK(f.usable == 16);
  CHECK(f.unavailable == 0);

  inventory.advanceTo(at(300));
  // One pool incomplete from 0 s to 150 s: 1 × 150 = 150 pool-seconds; nothing after.
  const auto seconds = inventory.poolIncompleteSeconds();
  REQUIRE(seconds.size() == 1);
  CHECK(seconds[0].cluster == "w1");
  CHECK(seconds[0].driver == "gpu.nvidia.com");
  CHECK(seconds[0].seconds() == Approx(150.0));
}

TEST_CASE("devices on NotReady, cordoned or tainted nodes are unavailable, with the reason",
          "[inventory]") {
  Inventory inventory;
  auto n1 = node("n1", true, {{"nvidia.com/gpu", 8000}});
  auto n2 = node("n2", false, {{"nvidia.com/gpu", 4000}});
  auto n3 = node("n3", true, {{"nvidia.com/gpu", 2000}});
  n3.unschedulable = true;
  auto n4 = node("n4", true, {{"nvidia.com/gpu", 1000}});
  n4.taints.push_back({"dedicated", "team-x", "NoSchedule"});
  auto n5 = node("n5", true, {{"nvidia.com/gpu", 1000}});
  n5.taints.push_back({"nvidia.com/gpu", "present", "NoSchedule"});  // tolerated by default
  n5.taints.push_back({"example.com/soft", "", "PreferNoSchedule"});  // not blocking
  auto n6 = node("n6", true, {{"nvidia.com/gpu", 1000}});
  n6.taints.push_back({"node.kubernetes.io/not-ready", "", "NoExecute"});  // lagging taint
  for (const auto* n : {&n1, &n2, &n3, &n4, &n5, &n6}) REQUIRE(inventory.onNode("w1", kAdd, *n));
  REQUIRE(inventory.onSlice("w1", kAdd, slice("s1", "gpu.nvidia.com", "n1", 1, 1, gpus(2), "n1"),
                            at(0)));
  REQUIRE(inventory.onSlice("w1", kAdd, slice("s2", "gpu.nvidia.com", "n2", 1, 1, gpus(2), "n2"),
                            at(0)));
  REQUIRE(inventory.onSlice("w1", kAdd,
                            slice("s9", "gpu.nvidia.com", "ghost", 1, 1, gpus(1), "ghost"), at(0)));

  ClassFigures ext = requireFigures(inventory, "w1", "nvidia.com/gpu");
  CHECK(ext.kind == ClassKind::ExtendedResource);
  CHECK(ext.published == 17);  // 8 + 4 + 2 + 1 + 1 + 1
  CHECK(ext.usable == 9);      // n1 8 + n5 1
  CHECK(ext.unavailable == 8);
  CHECK(reason(ext, UnavailableReason::NodeNotReady) == 5);       // n2 4 + n6 1
  CHECK(reason(ext, UnavailableReason::NodeUnschedulable) == 2);  // n3
  CHECK(reason(ext, UnavailableReason::Tainted) == 1);            // n4
  CHECK_FALSE(ext.shared);

  ClassFigures dra = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(dra.published == 5);  // 2 on n1, 2 on n2, 1 on a node never seen
  CHECK(dra.usable == 2);
  CHECK(reason(dra, UnavailableReason::NodeNotReady) == 3);

  // Per-pool detail carries the node verdicts too.
  const auto pools = inventory.pools();
  REQUIRE(pools.size() == 3);
  CHECK(pools[0].pool == "ghost");
  CHECK(pools[0].unavailableByReason[static_cast<size_t>(UnavailableReason::NodeNotReady)] == 1);
  CHECK(pools[2].pool == "n2");
  CHECK(pools[2].usable == 0);

  // n2 becomes Ready.
  REQUIRE(inventory.onNode("w1", kMod, node("n2", true, {{"nvidia.com/gpu", 4000}})));
  CHECK(inventory.usableDevices("w1", "nvidia.com/gpu") == 13);  // 9 + 4
  CHECK(inventory.usableDevices("w1", "gpu.nvidia.com") == 4);   // 2 + 2

  // n1 is deleted: its extended capacity goes, its DRA devices can no longer be used.
  REQUIRE(inventory.onNode("w1", kDel, n1));
  ext = requireFigures(inventory, "w1", "nvidia.com/gpu");
  CHECK(ext.published == 9);  // 17 − 8
  CHECK(ext.usable == 5);     // 13 − 8
  dra = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(dra.usable == 2);
  CHECK(reason(dra, UnavailableReason::NodeNotReady) == 3);  // n1's 2 + ghost 1
}

TEST_CASE("device taints make DRA devices unavailable in the class figures", "[inventory]") {
  Inventory inventory;
  REQUIRE(inventory.onNode("w1", kAdd, node("n1")));
  auto devices = gpus(3);
  devices[0].taints.push_back({"gpu.nvidia.com/xid", "79", "NoExecute"});
  devices[1].taints.push_back({"gpu.nvidia.com/info", "", "None"});
  REQUIRE(inventory.onSlice("w1", kAdd, slice("s", "gpu.nvidia.com", "n1", 1, 1, devices, "n1"),
                            at(0)));
  const auto f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.usable == 2);
  CHECK(reason(f, UnavailableReason::Tainted) == 1);
}

TEST_CASE("MIG instances stay in their own class, never added to whole GPUs", "[inventory]") {
  Inventory inventory;
  // DRA: one A100 partitioned as 7 × 1g.10gb next to one whole GPU on the same node.
  REQUIRE(inventory.onNode("w1", kAdd, node("dra-node")));
  std::vector<firstwork::model::Device> devices;
  for (int i = 0; i < 7; ++i) {
    devices.push_back(gpuDevice("gpu-0-mig-19-" + std::to_string(i) + "-1", "mig", "1g.10gb"));
  }
  devices.push_back(gpuDevice("gpu-1"));
  REQUIRE(inventory.onSlice("w1", kAdd,
                            slice("s", "gpu.nvidia.com", "dra-node", 1, 1, devices, "dra-node"),
                            at(0)));
  // Device plugin, MIG mixed strategy: the same shape as extended resources.
  REQUIRE(inventory.onNode(
      "w1", kAdd,
      node("dp-node", true, {{"nvidia.com/mig-1g.10gb", 7000}, {"nvidia.com/gpu", 1000}})));

  const auto classes = inventory.classes("w1");
  REQUIRE(classes.size() == 4);
  CHECK(classes[0].deviceClass == "gpu.nvidia.com");
  CHECK(classes[0].published == 1);
  CHECK(classes[1].deviceClass == "gpu.nvidia.com/mig-1g.10gb");
  CHECK(classes[1].published == 7);
  CHECK(classes[2].deviceClass == "nvidia.com/gpu");
  CHECK(classes[2].published == 1);
  CHECK(classes[3].deviceClass == "nvidia.com/mig-1g.10gb");
  CHECK(classes[3].published == 7);
  for (const auto& c : classes) CHECK(c.published != 8);  // no class mixes the units
}

TEST_CASE("a 2-GPU node time-sliced ×4 reports 8 shares of 2 physical GPUs, never 8 GPUs",
          "[inventory][sharing]") {
  Inventory inventory;
  auto sliced = node("ts", true, {{"nvidia.com/gpu", 8000}});
  sliced.meta.labels = {{"nvidia.com/gpu.replicas", "4"},
                        {"nvidia.com/gpu.sharing-strategy", "time-slicing"},
                        {"nvidia.com/gpu.product", "Tesla-T4-SHARED"},
                        {"kubernetes.io/hostname", "ts"}};
  REQUIRE(inventory.onNode("w1", kAdd, sliced));
  REQUIRE(inventory.onNode("w1", kAdd, node("ex", true, {{"nvidia.com/gpu", 2000}})));

  ClassFigures whole = requireFigures(inventory, "w1", "nvidia.com/gpu");
  CHECK(whole.published == 2);  // only the exclusive node's GPUs
  CHECK_FALSE(whole.shared);
  ClassFigures shares = requireFigures(inventory, "w1", "nvidia.com/gpu.shared");
  CHECK(shares.published == 8);
  CHECK(shares.usable == 8);
  CHECK(shares.shared);
  CHECK(shares.physicalDevices == 2);  // 8 / 4 replicas

  const auto sharing = inventory.nodeSharing("w1", "ts");
  REQUIRE(sharing);
  CHECK(sharing->replicas == 4);
  CHECK(sharing->strategy == "time-slicing");
  CHECK(sharing->product == "Tesla-T4-SHARED");
  CHECK(sharing->productShared);
  CHECK(sharing->shared());
  CHECK_FALSE(inventory.nodeSharing("w1", "ex")->shared());
  CHECK_FALSE(inventory.nodeSharing("w1", "nope"));

  // renameByDefault: the plugin already names the resource nvidia.com/gpu.shared.
  auto renamed = node("ts2", true, {{"nvidia.com/gpu.shared", 8000}});
  renamed.meta.labels = {{"nvidia.com/gpu.replicas", "4"},
                         {"nvidia.com/gpu.sharing-strategy", "time-slicing"},
                         {"nvidia.com/gpu.product", "Tesla-T4"}};
  REQUIRE(inventory.onNode("w1", kAdd, renamed));
  shares = requireFigures(inventory, "w1", "nvidia.com/gpu.shared");
  CHECK(shares.published == 16);
  CHECK(shares.physicalDevices == 4);
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").published == 2);

  // A pod bound to the sliced node holds a share, not a GPU.
  const auto p = pod("ns", "p", "ts", {{"nvidia.com/gpu", 1000}});
  REQUIRE(inventory.onPod("w1", kAdd, p));
  CHECK(sameCounts(inventory.podDevices("w1", p).devices, {{"nvidia.com/gpu.shared", 1, true}}));
  shares = requireFigures(inventory, "w1", "nvidia.com/gpu.shared");
  CHECK(shares.allocated == 1);
  CHECK(shares.free == 15);
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 0);
}

TEST_CASE("extended resources held by bound, running pods are allocated and free is per node",
          "[inventory][allocation]") {
  Inventory inventory;
  REQUIRE(inventory.onNode("w1", kAdd, node("a", true, {{"nvidia.com/gpu", 8000}})));
  REQUIRE(inventory.onNode("w1", kAdd, node("b", false, {{"nvidia.com/gpu", 4000}})));
  REQUIRE(inventory.onNode("w1", kAdd, node("c", true, {})));
  const auto p1 = pod("ns", "p1", "a", {{"nvidia.com/gpu", 2000}});
  const auto p2 = pod("ns", "p2", "a", {{"nvidia.com/gpu", 1000}}, PodPhase::Pending);
  const auto p3 = pod("ns", "p3", "a", {{"nvidia.com/gpu", 4000}}, PodPhase::Succeeded);
  const auto p4 = pod("ns", "p4", "", {{"nvidia.com/gpu", 1000}}, PodPhase::Pending);
  const auto p5 = pod("ns", "p5", "b", {{"nvidia.com/gpu", 3000}});
  const auto p6 = pod("ns", "p6", "a", {{"example.com/fpga", 1000}});
  // Node c publishes no nvidia.com/gpu: the request is served through DRA (DRAExtendedResource)
  // and counted via its claim, not here.
  const auto p7 = pod("ns", "p7", "c", {{"nvidia.com/gpu", 1000}});
  for (const auto* p : {&p1, &p2, &p3, &p4, &p5, &p6, &p7}) REQUIRE(inventory.onPod("w1", kAdd, *p));

  ClassFigures f = requireFigures(inventory, "w1", "nvidia.com/gpu");
  CHECK(f.published == 12);   // 8 + 4
  CHECK(f.usable == 8);       // b is NotReady
  CHECK(f.allocated == 6);    // p1 2 + p2 1 + p5 3 (p3 finished, p4 unbound, p7 via DRA)
  CHECK(f.free == 5);         // node a: 8 − 3; p5's devices are on an unusable node
  CHECK(inventory.freeDevices("w1", "nvidia.com/gpu") == 5);

  CHECK(sameCounts(inventory.podDevices("w1", p1).devices, {{"nvidia.com/gpu", 2, true}}));
  CHECK(sameCounts(inventory.podDevices("w1", p4).devices, {{"nvidia.com/gpu", 1, false}}));
  CHECK(inventory.podDevices("w1", p3).devices.empty());
  CHECK(inventory.podDevices("w1", p6).devices.empty());
  const auto dra_backed = inventory.podDevices("w1", p7);
  CHECK(dra_backed.devices.empty());
  CHECK(dra_backed.unresolvedClaims == 1);

  REQUIRE(inventory.onPod("w1", kDel, p1));
  f = requireFigures(inventory, "w1", "nvidia.com/gpu");
  CHECK(f.allocated == 4);  // 6 − 2
  CHECK(f.free == 7);       // 8 − 1
  // p2 finishes.
  REQUIRE(inventory.onPod("w1", kMod, pod("ns", "p2", "a", {{"nvidia.com/gpu", 1000}},
                                          PodPhase::Failed)));
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 3);
  CHECK(inventory.freeDevices("w1", "nvidia.com/gpu") == 8);
}

TEST_CASE("a pod's record keeps what is read of it, not the pod", "[inventory][allocation]") {
  // Its node, whether it ended and its requests, under its namespace and name (change 96): the
  // caller's pod is not held.
  Inventory inventory;
  REQUIRE(inventory.onNode("w1", kAdd, node("a", true, {{"nvidia.com/gpu", 8000}})));
  auto v1 = std::make_shared<const firstwork::model::Pod>(pod("ns", "p1", "a", {{"nvidia.com/gpu", 2000}}));
  std::weak_ptr<const firstwork::model::Pod> w1 = v1;
  REQUIRE(inventory.onPod("w1", kAdd, *v1));
  v1.reset();
  CHECK(w1.expired());  // not held
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 2);
  // Status churn (the same node, phase and requests): the same figures.
  REQUIRE(inventory.onPod("w1", kMod, pod("ns", "p1", "a", {{"nvidia.com/gpu", 2000}})));
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 2);
  // Requests that are not tracked change nothing; a tracked one does.
  REQUIRE(inventory.onPod(
      "w1", kMod, pod("ns", "p1", "a", {{"example.com/fpga", 1000}, {"nvidia.com/gpu", 2000}})));
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 2);
  REQUIRE(inventory.onPod("w1", kMod, pod("ns", "p1", "a", {{"nvidia.com/gpu", 3000}})));
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 3);
  // Another pod of the same name in another namespace is another pod.
  REQUIRE(inventory.onPod("w1", kAdd, pod("other", "p1", "a", {{"nvidia.com/gpu", 1000}})));
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 4);
  // Deleted: by its last state (the deleted object's own figures are not read), or by name
  // when its last state is unknown.
  REQUIRE(inventory.onPod("w1", kDel, pod("ns", "p1", "a", {})));
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 1);
  inventory.erasePod("w1", "other", "p1");
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 0);
  inventory.erasePod("w1", "other", "p1");  // not held: nothing
  inventory.erasePod("w9", "ns", "p1");
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 0);
  // Moved to another node, then ended: what it holds follows.
  REQUIRE(inventory.onNode("w1", kAdd, node("b", true, {{"nvidia.com/gpu", 8000}})));
  REQUIRE(inventory.onPod("w1", kAdd, pod("ns", "p2", "a", {{"nvidia.com/gpu", 2000}})));
  REQUIRE(inventory.onPod("w1", kMod, pod("ns", "p2", "b", {{"nvidia.com/gpu", 2000}})));
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 2);
  CHECK(inventory.freeDevices("w1", "nvidia.com/gpu") == 14);
  REQUIRE(inventory.onPod("w1", kMod,
                          pod("ns", "p2", "b", {{"nvidia.com/gpu", 2000}}, PodPhase::Succeeded)));
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 0);
  // An ended pod holds nothing whatever its later events say, and its delete gives nothing
  // back twice.
  REQUIRE(inventory.onPod("w1", kMod,
                          pod("ns", "p2", "b", {{"nvidia.com/gpu", 4000}}, PodPhase::Failed)));
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").allocated == 0);
  REQUIRE(inventory.onPod("w1", kDel, pod("ns", "p2", "b", {})));
  const ClassFigures f = requireFigures(inventory, "w1", "nvidia.com/gpu");
  CHECK(f.allocated == 0);
  CHECK(f.free == 16);
}

TEST_CASE("allocated ResourceClaims count their devices once, in the device's class",
          "[inventory][allocation]") {
  Inventory inventory;
  const auto slices = loadSlices("dra-resourceslice-v1-nvidia-gpu-openshift-conformance.yaml");
  const std::string node_name = slices[0].nodeName;
  const std::string pool = slices[0].poolName;
  REQUIRE(inventory.onNode("w1", kAdd, node(node_name)));
  REQUIRE(inventory.onSlice("w1", kAdd, slices[0], at(0)));

  const auto c1 = claim("ns", "c1", {request("gpu", "gpu.nvidia.com")},
                        {{"gpu", "gpu.nvidia.com", pool, "gpu-1"}});
  // A second claim on the same device (admin access) does not make it two devices.
  const auto c2 = claim("ns", "c2", {request("gpu", "gpu.nvidia.com")},
                        {{"gpu", "gpu.nvidia.com", pool, "gpu-1"}});
  REQUIRE(inventory.onClaim("w1", kAdd, c1));
  REQUIRE(inventory.onClaim("w1", kAdd, c2));
  ClassFigures f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.published == 2);  // gpu-0, gpu-1 (2× Tesla T4)
  CHECK(f.usable == 2);
  CHECK(f.allocated == 1);
  CHECK(f.free == 1);

  auto p = pod("ns", "p", node_name);
  p.claims.push_back(podClaim("gpu", "c1"));
  CHECK(sameCounts(inventory.podDevices("w1", p).devices, {{"gpu.nvidia.com", 1, true}}));

  // The real allocated claim names a device whose slice this cluster does not have: its
  // request's DeviceClass (gpu.nvidia.com) still tells the class.
  const auto real = loadClaims("dra-resourceclaim-v1-allocated-reserved-nvidia.yaml");
  REQUIRE(real.size() == 1);
  REQUIRE(real[0].allocated);
  REQUIRE(inventory.onClaim("w1", kAdd, real[0]));
  f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.allocated == 2);
  CHECK(f.free == 1);  // the other cluster's device is not one of ours
  auto owner = pod("gpu-test1", "dra-gpu-example-798fccd4d-sfl2p", "conformance-test-np1");
  owner.claims.push_back(podClaim("single-gpu", real[0].meta.name.str()));
  CHECK(sameCounts(inventory.podDevices("w1", owner).devices, {{"gpu.nvidia.com", 1, true}}));

  REQUIRE(inventory.onClaim("w1", kDel, c1));
  REQUIRE(inventory.onClaim("w1", kDel, c2));
  f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.allocated == 1);
  CHECK(f.free == 2);
}

TEST_CASE("a claim's record keeps what is read of it, not the claim", "[inventory][allocation]") {
  // Its requests, allocation results, the pods it names and its uid, under its namespace and
  // name (change 97): the caller's claim is not held.
  Inventory inventory;
  const auto slices = loadSlices("dra-resourceslice-v1-nvidia-gpu-openshift-conformance.yaml");
  const std::string pool = addFirstSlice(inventory, slices);
  auto made = gpuClaim("c1", pool, "gpu-1", "5f0e3c1a-9b7d-4e2f-8a6c-1d3b5f7e9a0c", "pod-b");
  made.meta.ownerReferences.push_back({firstwork::Interned("Job"), firstwork::ShortString("job"),
                                       firstwork::SmallString("job-uid")});
  made.meta.ownerReferences.push_back(
      {firstwork::Interned("Pod"), firstwork::ShortString("a"), firstwork::SmallString("pod-a")});
  made.meta.ownerReferences.push_back(
      {firstwork::Interned("Pod"), firstwork::ShortString("b"), firstwork::SmallString("pod-b")});
  auto v1 = std::make_shared<const firstwork::model::ResourceClaim>(made);
  std::weak_ptr<const firstwork::model::ResourceClaim> w1 = v1;
  REQUIRE(inventory.onClaim("w1", kAdd, *v1));
  v1.reset();
  CHECK(w1.expired());  // not held
  CHECK(requireFigures(inventory, "w1", "gpu.nvidia.com").allocated == 1);
  auto seen = inventory.findClaim("w1", "ns", "c1");
  REQUIRE(seen.has_value());
  REQUIRE(seen->requests.size() == 1);
  CHECK(seen->requests[0].deviceClassName == "gpu.nvidia.com");
  CHECK(seen->allocated);
  REQUIRE(seen->allocations.size() == 1);
  CHECK(seen->allocations[0].device == "gpu-1");
  // Reserved for pod-b, owned by pod-a and pod-b (and a Job, not a pod): each pod once.
  REQUIRE(seen->pods.size() == 2);
  CHECK(seen->pods[0] == std::string_view("pod-b"));
  CHECK(seen->pods[1] == std::string_view("pod-a"));
  // The same facts again (as a relist brings them; reservedFor naming pod-b twice): nothing is
  // built, the record reads from the blocks it had.
  const auto* requestsBlock = seen->requests.data();
  const auto* allocationsBlock = seen->allocations.data();
  const auto* podsBlock = seen->pods.data();
  made.reservedForPods.push_back(firstwork::SmallString("pod-b"));
  REQUIRE(inventory.onClaim("w1", kMod, made));
  seen = inventory.findClaim("w1", "ns", "c1");
  REQUIRE(seen.has_value());
  CHECK(seen->requests.data() == requestsBlock);
  CHECK(seen->allocations.data() == allocationsBlock);
  CHECK(seen->pods.data() == podsBlock);
  CHECK(seen->pods.size() == 2);
  CHECK(requireFigures(inventory, "w1", "gpu.nvidia.com").allocated == 1);

  // A status write elsewhere (the same requests and results): the same figures; what it names
  // follows.
  made.reservedForPods.clear();
  REQUIRE(inventory.onClaim("w1", kMod, made));
  CHECK(requireFigures(inventory, "w1", "gpu.nvidia.com").allocated == 1);
  seen = inventory.findClaim("w1", "ns", "c1");
  REQUIRE(seen.has_value());
  REQUIRE(seen->pods.size() == 2);  // both still own it, in their owner references' order
  CHECK(seen->pods[0] == std::string_view("pod-a"));
  CHECK(seen->pods[1] == std::string_view("pod-b"));
  // Another device: the figures move, and the record holds the latest results.
  made.allocations[0].device = "gpu-0";
  REQUIRE(inventory.onClaim("w1", kMod, made));
  ClassFigures f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.allocated == 1);
  CHECK(f.free == 1);
  CHECK(inventory.findClaim("w1", "ns", "c1")->allocations[0].device == "gpu-0");
  // Deallocated: nothing held; its requests are still what its pods want.
  made.allocated = false;
  made.allocations.clear();
  REQUIRE(inventory.onClaim("w1", kMod, made));
  CHECK(requireFigures(inventory, "w1", "gpu.nvidia.com").allocated == 0);
  CHECK_FALSE(inventory.findClaim("w1", "ns", "c1")->allocated);
  auto owner = pod("ns", "a", slices[0].nodeName);
  owner.claims.push_back(podClaim("gpu", "c1"));
  CHECK(sameCounts(inventory.podDevices("w1", owner).devices, {{"gpu.nvidia.com", 1, false}}));
  // Deleted by its last state: the deleted object's own figures are not read.
  REQUIRE(inventory.onClaim("w1", kMod,
                            claim("ns", "c1", {request("gpu", "gpu.nvidia.com")},
                                  {{"gpu", "gpu.nvidia.com", pool, "gpu-1"}})));
  CHECK(requireFigures(inventory, "w1", "gpu.nvidia.com").allocated == 1);
  REQUIRE(inventory.onClaim("w1", kDel, claim("ns", "c1", {})));
  CHECK(requireFigures(inventory, "w1", "gpu.nvidia.com").allocated == 0);
  CHECK_FALSE(inventory.findClaim("w1", "ns", "c1").has_value());
}

TEST_CASE("a claim whose last state is unknown is erased by its uid, found by its name's hash",
          "[inventory][allocation]") {
  // A relist's delete from a reflector that keeps identities alone: the uid and the hash of
  // namespace/name its store kept (kube::ObjectEvent::nameHash).
  Inventory inventory;
  const auto slices = loadSlices("dra-resourceslice-v1-nvidia-gpu-openshift-conformance.yaml");
  const std::string pool = addFirstSlice(inventory, slices);
  const auto first = gpuClaim("c1", pool, "gpu-1", "uid-first", "pod-a");
  const auto other = gpuClaim("c2", pool, "gpu-0", "uid-other");
  REQUIRE(inventory.onClaim("w1", kAdd, first));
  REQUIRE(inventory.onClaim("w1", kAdd, other));
  CHECK(requireFigures(inventory, "w1", "gpu.nvidia.com").allocated == 2);
  const uint64_t c1 = firstwork::model::hashOf({"ns", "c1"});
  const uint64_t c2 = firstwork::model::hashOf({"ns", "c2"});

  // A uid under another name's hash, an unknown uid, another cluster: nothing.
  CHECK_FALSE(inventory.eraseClaim("w1", "uid-first", c2).has_value());
  CHECK_FALSE(inventory.eraseClaim("w1", "uid-none", c1).has_value());
  CHECK_FALSE(inventory.eraseClaim("w9", "uid-first", c1).has_value());
  CHECK(requireFigures(inventory, "w1", "gpu.nvidia.com").allocated == 2);

  // Deleted and made again under its name while unwatched: the relist lists the new claim, and
  // the old uid's delete finds nothing of it.
  auto again = first;
  again.meta.uid = "uid-again";
  again.reservedForPods.clear();
  again.reservedForPods.emplace_back("pod-b");
  REQUIRE(inventory.onClaim("w1", kMod, again));
  CHECK_FALSE(inventory.eraseClaim("w1", "uid-first", c1).has_value());
  CHECK(requireFigures(inventory, "w1", "gpu.nvidia.com").allocated == 2);
  // Its own uid erases it as last seen, and names the pods it was reserved for.
  const auto pods = inventory.eraseClaim("w1", "uid-again", c1);
  REQUIRE(pods.has_value());
  REQUIRE(pods->size() == 1);
  CHECK((*pods)[0] == std::string_view("pod-b"));
  CHECK_FALSE(inventory.findClaim("w1", "ns", "c1").has_value());
  ClassFigures f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.allocated == 1);
  CHECK(f.free == 1);
  CHECK(inventory.findClaim("w1", "ns", "c2").has_value());
  CHECK_FALSE(inventory.eraseClaim("w1", "uid-again", c1).has_value());  // gone already
}

TEST_CASE("claims of one name in two namespaces, and devices of one name in two pools, are apart",
          "[inventory][allocation]") {
  Inventory inventory;
  for (const std::string n : {"n1", "n2"}) {
    REQUIRE(inventory.onNode("w1", kAdd, node(n)));
    REQUIRE(inventory.onSlice("w1", kAdd, slice(n + "-gpus", "gpu.nvidia.com", n, 1, 1, gpus(2), n),
                              at(0)));
  }
  // Both claims are named "c" and hold a device named gpu-0, each of its own pool.
  const auto a = claim("ns-a", "c", {request("gpu", "gpu.nvidia.com")},
                       {{"gpu", "gpu.nvidia.com", "n1", "gpu-0"}});
  const auto b = claim("ns-b", "c", {request("gpu", "gpu.nvidia.com")},
                       {{"gpu", "gpu.nvidia.com", "n2", "gpu-0"}});
  REQUIRE(inventory.onClaim("w1", kAdd, a));
  REQUIRE(inventory.onClaim("w1", kAdd, b));
  ClassFigures f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.published == 4);
  CHECK(f.allocated == 2);
  CHECK(f.free == 2);
  REQUIRE(inventory.findClaim("w1", "ns-a", "c").has_value());
  REQUIRE(inventory.findClaim("w1", "ns-b", "c").has_value());
  CHECK(inventory.findClaim("w1", "ns-a", "c")->allocations[0].pool == "n1");
  CHECK(inventory.findClaim("w1", "ns-b", "c")->allocations[0].pool == "n2");
  CHECK_FALSE(inventory.findClaim("w1", "ns-c", "c").has_value());
  CHECK_FALSE(inventory.findClaim("w2", "ns-a", "c").has_value());

  auto in_c = pod("ns-c", "p", "n1");
  in_c.claims.push_back(podClaim("gpu", "c"));
  const auto unresolved = inventory.podDevices("w1", in_c);
  CHECK(unresolved.unresolvedClaims == 1);
  CHECK(unresolved.devices.empty());

  // Deleting one leaves the other, its device and its pod's view of it.
  REQUIRE(inventory.onClaim("w1", kDel, a));
  REQUIRE(inventory.onClaim("w1", kDel, a));  // gone already: nothing moves
  f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.allocated == 1);
  CHECK(f.free == 3);
  CHECK_FALSE(inventory.findClaim("w1", "ns-a", "c").has_value());
  auto in_b = pod("ns-b", "p", "n2");
  in_b.claims.push_back(podClaim("gpu", "c"));
  CHECK(sameCounts(inventory.podDevices("w1", in_b).devices, {{"gpu.nvidia.com", 1, true}}));
  // The device's pool going away moves it to its request's class, still allocated, not usable.
  REQUIRE(inventory.onSlice("w1", kDel, slice("n2-gpus", "gpu.nvidia.com", "n2", 1, 1, {}, "n2"),
                            at(10)));
  f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.published == 2);
  CHECK(f.allocated == 1);
  CHECK(f.free == 2);
}

TEST_CASE("an allocated device is its slice's device whether its names are pooled or owned",
          "[inventory][allocation]") {
  using firstwork::Interned;
  // The claim is decoded once the pool of shared strings is full: its result's pool name is a
  // private copy. The slice, decoded after, shares the pool's. They still name one device.
  const std::string pool = "pool-named-after-the-pool-filled";
  const size_t n = Interned::poolSize();
  Interned::setPoolLimitForTesting(n);
  const auto c = claim("ns", "c", {request("gpu", "gpu.nvidia.com")},
                       {{"gpu", "gpu.nvidia.com", pool, "gpu-1"}});
  Interned::setPoolLimitForTesting(Interned::kMaxInternedStrings);
  REQUIRE_FALSE(c.allocations[0].pool.pooled());

  Inventory inventory;
  REQUIRE(inventory.onNode("w1", kAdd, node("n1")));
  REQUIRE(inventory.onClaim("w1", kAdd, c));  // before its slice: counted in its request's class
  ClassFigures f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.allocated == 1);
  CHECK(f.free == 0);
  const auto s = slice("s1", "gpu.nvidia.com", pool, 1, 1, gpus(2), "n1");
  REQUIRE(s.poolName.pooled());
  REQUIRE(inventory.onSlice("w1", kAdd, s, at(0)));
  f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.published == 2);
  CHECK(f.allocated == 1);
  CHECK(f.free == 1);  // the allocated device is one of the two usable ones
  // Its node not ready: both unusable, the allocated one too.
  REQUIRE(inventory.onNode("w1", kMod, node("n1", false)));
  f = requireFigures(inventory, "w1", "gpu.nvidia.com");
  CHECK(f.usable == 0);
  CHECK(f.allocated == 1);
  CHECK(f.free == 0);
  REQUIRE(inventory.onClaim("w1", kDel, c));
  CHECK(requireFigures(inventory, "w1", "gpu.nvidia.com").allocated == 0);
}

TEST_CASE("claims not allocated yet tell what a pod wants and unknowable parts are reported",
          "[inventory][allocation]") {
  Inventory inventory;
  const auto pending =
      claim("ns", "pending", {request("gpus", "gpu.nvidia.com", 2), request("mig", "mig.nvidia.com"),
                              request("all", "gpu.nvidia.com", 1, true)});
  REQUIRE(inventory.onClaim("w1", kAdd, pending));
  auto p = pod("ns", "p", "", {}, PodPhase::Pending);
  p.claims.push_back(podClaim("a", "", "pending"));     // pre-created claim
  p.claims.push_back(podClaim("b", ""));                // template claim not generated yet
  p.claims.push_back(podClaim("c", "does-not-exist"));  // generated, not seen yet
  const auto devices = inventory.podDevices("w1", p);
  CHECK(sameCounts(devices.devices, {{"gpu.nvidia.com", 2, false}}));
  CHECK(devices.unclassified == 1);      // the MIG request: profile only in its CEL selector
  CHECK(devices.unresolvedClaims == 3);  // allocationMode All + 2 unknown claims
  // Wanted devices are not allocated devices.
  CHECK_FALSE(inventory.figures("w1", "gpu.nvidia.com"));
}

TEST_CASE("devices no class matches are unclassified per driver, not guessed", "[inventory]") {
  const auto slices = loadSlices("dra-resourceslice-v1-list-dra-example-driver.yaml");
  const std::string node_name = slices[0].nodeName;
  const auto allocated = claim("ns", "c", {request("gpu", "gpu.example.com")},
                               {{"gpu", "gpu.example.com", slices[0].poolName, "gpu-0"}});
  {
    Inventory inventory;
    REQUIRE(inventory.onNode("w1", kAdd, node(node_name)));
    REQUIRE(inventory.onSlice("w1", kAdd, slices[0], at(0)));
    REQUIRE(inventory.onClaim("w1", kAdd, allocated));
    CHECK(inventory.classes().empty());
    const auto u = inventory.unclassified();
    REQUIRE(u.size() == 1);
    CHECK(u[0].cluster == "w1");
    CHECK(u[0].source == "gpu.example.com");
    CHECK(u[0].published == 8);
    CHECK(u[0].usable == 8);
    CHECK(u[0].allocated == 1);
  }
  {
    InventoryConfig config;
    config.deviceClasses.push_back(DeviceClassMapping{"gpu.example.com", "gpu.example.com", {}});
    Inventory inventory(config);
    REQUIRE(inventory.onNode("w1", kAdd, node(node_name)));
    REQUIRE(inventory.onSlice("w1", kAdd, slices[0], at(0)));
    REQUIRE(inventory.onClaim("w1", kAdd, allocated));
    CHECK(inventory.unclassified().empty());
    const auto f = requireFigures(inventory, "w1", "gpu.example.com");
    CHECK(f.published == 8);
    CHECK(f.usable == 8);
    CHECK(f.allocated == 1);
    CHECK(f.free == 7);
  }
}

TEST_CASE("the generation-rollover fixture leaves no usable device in its class", "[inventory]") {
  InventoryConfig config;
  config.deviceClasses.push_back(DeviceClassMapping{"gpu.example.com", "gpu.example.com", {}});
  Inventory inventory(config);
  REQUIRE(inventory.onNode("w1", kAdd, node("node-a")));
  for (const auto& s :
       loadSlices("dra-resourceslice-v1-pool-generation-rollover-incomplete-CONSTRUCTED.yaml")) {
    REQUIRE(inventory.onSlice("w1", kAdd, s, at(0)));
  }
  const auto f = requireFigures(inventory, "w1", "gpu.example.com");
  CHECK(f.published == 2);
  CHECK(f.usable == 0);
  CHECK(reason(f, UnavailableReason::PoolIncomplete) == 1);  // gpu-1 (gen 2, 1 of 2 slices)
  CHECK(reason(f, UnavailableReason::PoolStale) == 1);       // gpu-0 (gen 1 only)
}

TEST_CASE("deleting slices and nodes removes their capacity and their class series",
          "[inventory]") {
  Inventory inventory;
  const auto n = node("n1", true, {{"nvidia.com/gpu", 4000}});
  const auto s = slice("s", "gpu.nvidia.com", "n1", 1, 1, gpus(2), "n1");
  REQUIRE(inventory.onNode("w1", kAdd, n));
  REQUIRE(inventory.onSlice("w1", kAdd, s, at(0)));
  CHECK(inventory.snapshot().classes.size() == 2);

  REQUIRE(inventory.onSlice("w1", kDel, s, at(10)));
  auto snapshot = inventory.snapshot();
  REQUIRE(snapshot.classes.size() == 1);
  CHECK(snapshot.classes[0].deviceClass == "nvidia.com/gpu");
  CHECK(snapshot.pools.empty());
  CHECK_FALSE(inventory.figures("w1", "gpu.nvidia.com"));
  CHECK(inventory.usableDevices("w1", "gpu.nvidia.com") == 0);

  REQUIRE(inventory.onNode("w1", kDel, n));
  snapshot = inventory.snapshot();
  CHECK(snapshot.classes.empty());
  CHECK(inventory.freeDevices("w1", "nvidia.com/gpu") == 0);
}

TEST_CASE("a snapshot carries every figure at once", "[inventory]") {
  Inventory inventory;
  REQUIRE(inventory.onNode("w1", kAdd, node("n1", true, {{"nvidia.com/gpu", 2000}})));
  REQUIRE(inventory.onNode("w2", kAdd, node("n1")));
  REQUIRE(inventory.onSlice("w2", kAdd, slice("s", "gpu.nvidia.com", "n1", 1, 2, gpus(2), "n1"),
                            at(0)));
  CHECK_FALSE(inventory.onNode("w1", kAdd, firstwork::model::Node{}));
  inventory.advanceTo(at(30));

  const auto s = inventory.snapshot();
  CHECK(s.at == at(30));
  REQUIRE(s.classes.size() == 2);
  CHECK(s.classes[0].cluster == "w1");
  CHECK(s.classes[0].deviceClass == "nvidia.com/gpu");
  CHECK(s.classes[0].usable == 2);
  CHECK(s.classes[1].cluster == "w2");
  CHECK(s.classes[1].deviceClass == "gpu.nvidia.com");
  CHECK(s.classes[1].usable == 0);
  REQUIRE(s.pools.size() == 1);
  CHECK(s.pools[0].state == PoolState::Incomplete);
  REQUIRE(s.poolCounts.size() == 1);
  REQUIRE(s.poolIncompleteSeconds.size() == 1);
  CHECK(s.poolIncompleteSeconds[0].seconds() == Approx(30.0));
  CHECK(s.rejectedObjects == 1);
  CHECK(s.rejectedSlices == 0);
  CHECK(inventory.classes("w2").size() == 1);

  // Without the per-pool detail (the daemon's tick): no pools, every other figure the same.
  const auto g = inventory.snapshot(/*withPools=*/false);
  CHECK(g.pools.empty());
  CHECK(g.at == s.at);
  REQUIRE(g.classes.size() == 2);
  CHECK(g.classes[0].usable == 2);
  CHECK(g.classes[1].deviceClass == "gpu.nvidia.com");
  CHECK(g.unclassified.size() == s.unclassified.size());
  CHECK(g.gpuNodes == s.gpuNodes);
  CHECK(g.nodeModeProblems.size() == s.nodeModeProblems.size());
  REQUIRE(g.poolCounts.size() == 1);
  CHECK(g.poolCounts[0].byState == s.poolCounts[0].byState);
  REQUIRE(g.poolIncompleteSeconds.size() == 1);
  CHECK(g.poolIncompleteSeconds[0].seconds() == Approx(30.0));
  CHECK(g.rejectedObjects == 1);

  inventory.clearCluster("w2", at(40));
  CHECK(inventory.classes("w2").empty());
  CHECK(inventory.pools().empty());
}

TEST_CASE("podset demand counts tracked extended resources per pod times pods",
          "[inventory][demand]") {
  Inventory inventory;
  firstwork::model::PodSet podset;
  podset.name = "main";
  podset.count = 4;
  podset.perPodRequests = {
      {"nvidia.com/gpu", 2000}, {"example.com/fpga", 1000}, {"nvidia.com/mig-1g.10gb", 1000}};
  // 4 pods × 2 GPUs = 8; 4 pods × 1 MIG slice = 4; the FPGA is not a tracked device.
  CHECK(sameCounts(inventory.podSetDemand(podset),
                   {{"nvidia.com/gpu", 8, false}, {"nvidia.com/mig-1g.10gb", 4, false}}));
  CHECK(inventory.demandForRequests({{"nvidia.com/gpu", 1000}}, 0).empty());
}

TEST_CASE("malformed Nodes, Pods and ResourceClaims are skipped and counted", "[inventory]") {
  Inventory inventory;
  REQUIRE(inventory.onNode("w1", kAdd, node("n1", true, {{"nvidia.com/gpu", 1000}})));
  CHECK_FALSE(inventory.onNode("w1", kMod, firstwork::model::Node{}));
  CHECK_FALSE(inventory.onPod("w1", kAdd, firstwork::model::Pod{}));
  CHECK_FALSE(inventory.onClaim("w1", kAdd, firstwork::model::ResourceClaim{}));
  CHECK(inventory.rejectedObjects() == 3);
  CHECK(inventory.onPod("w1", EventType::Bookmark, firstwork::model::Pod{}));
  CHECK(inventory.rejectedObjects() == 3);
  CHECK(requireFigures(inventory, "w1", "nvidia.com/gpu").usable == 1);
}

TEST_CASE("figures kept up to date event by event equal a recount from scratch",
          "[inventory][allocation]") {
  // Pods and claims change incrementally while figures are being read; an inventory fed only the
  // final objects must report exactly the same figures. (Deterministic pseudo-random sequence.)
  std::vector<firstwork::model::Node> nodes;
  for (int i = 0; i < 4; ++i) {
    nodes.push_back(node("n" + std::to_string(i), i != 3, {{"nvidia.com/gpu", 4000}}));
  }
  auto sliced = node("n4", true, {{"nvidia.com/gpu", 8000}});
  sliced.meta.labels = {{"nvidia.com/gpu.replicas", "4"}};
  nodes.push_back(sliced);
  nodes.push_back(node("n5"));  // no extended GPUs: DRA-backed requests
  std::vector<firstwork::model::ResourceSlice> slices;
  for (int i = 0; i < 3; ++i) {
    const std::string n = "n" + std::to_string(i);
    slices.push_back(slice(n, "gpu.nvidia.com", n, 1, i == 2 ? 2 : 1, gpus(4), n));
  }
  auto feedBase = [&](Inventory& inventory) {
    for (const auto& n : nodes) REQUIRE(inventory.onNode("w1", kAdd, n));
    for (const auto& s : slices) REQUIRE(inventory.onSlice("w1", kAdd, s, at(0)));
  };

  Inventory live;
  feedBase(live);
  std::map<std::string, firstwork::model::Pod> pods;
  std::map<std::string, firstwork::model::ResourceClaim> claims;
  uint64_t seed = 12345;
  auto next = [&seed](uint64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % n;
  };
  const std::vector<std::string> node_names = {"n0", "n1", "n2", "n3", "n4", "n5", "", "gone"};
  const std::vector<PodPhase> phases = {PodPhase::Pending, PodPhase::Running, PodPhase::Running,
                                        PodPhase::Succeeded, PodPhase::Failed};
  int sliceChanges = 0;
  int nodeChanges = 0;
  for (int step = 0; step < 600; ++step) {
    const auto op = next(12);
    if (op < 4) {
      const std::string name = "p" + std::to_string(next(12));
      auto p = pod("ns", name, node_names[next(node_names.size())],
                   {{"nvidia.com/gpu", static_cast<int64_t>(next(4)) * 1000}},
                   phases[next(phases.size())]);
      REQUIRE(live.onPod("w1", pods.count(name) ? kMod : kAdd, p));
      pods[name] = p;
    } else if (op == 4 && !pods.empty()) {
      auto it = std::next(pods.begin(), static_cast<long>(next(pods.size())));
      REQUIRE(live.onPod("w1", kDel, it->second));
      pods.erase(it);
    } else if (op < 8) {
      const std::string name = "c" + std::to_string(next(10));
      std::vector<firstwork::model::DeviceAllocation> results;
      const auto devices = next(3);
      for (uint64_t d = 0; d < devices; ++d) {
        const std::string pool = next(5) == 0 ? "ghost" : "n" + std::to_string(next(3));
        results.push_back({"gpu", "gpu.nvidia.com", pool, "gpu-" + std::to_string(next(4))});
      }
      auto c = claim("ns", name, {request("gpu", next(2) ? "gpu.nvidia.com" : "other")}, results);
      REQUIRE(live.onClaim("w1", claims.count(name) ? kMod : kAdd, c));
      claims[name] = c;
    } else if (op == 8 && !claims.empty()) {
      auto it = std::next(claims.begin(), static_cast<long>(next(claims.size())));
      REQUIRE(live.onClaim("w1", kDel, it->second));
      claims.erase(it);
    } else if (op == 10) {
      // A slice changes: a device tainted or cleared and a generation bump keep the pool's
      // devices (its entries are updated in place), a device added or removed does not.
      auto& s = slices[next(slices.size())];
      switch (next(3)) {
        case 0: {
          auto& d = s.devices[next(s.devices.size())];
          if (d.taints.empty()) {
            d.taints.push_back({firstwork::Interned("example.com/fault"), "", firstwork::Interned("NoSchedule")});
          } else {
            d.taints.clear();
          }
          break;
        }
        case 1:
          ++s.poolGeneration;
          break;
        default:
          if (s.devices.size() > 1 && next(2) == 0) {
            s.devices.pop_back();
          } else {
            s.devices.push_back(gpuDevice("gpu-" + std::to_string(s.devices.size())));
          }
          break;
      }
      REQUIRE(live.onSlice("w1", kMod, s, at(step)));
      ++sliceChanges;
    } else if (op == 11) {
      auto& n = nodes[next(3)];  // a node of a pool: its devices' usability follows the node
      n.unschedulable = !n.unschedulable;
      REQUIRE(live.onNode("w1", kMod, n));
      ++nodeChanges;
    } else {
      (void)live.classes();  // caches current: later events take the incremental path
    }
  }

  Inventory recount;
  feedBase(recount);
  for (const auto& [name, p] : pods) REQUIRE(recount.onPod("w1", kAdd, p));
  for (const auto& [name, c] : claims) REQUIRE(recount.onClaim("w1", kAdd, c));

  const auto a = live.classes();
  const auto b = recount.classes();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].deviceClass);
    CHECK(a[i].deviceClass == b[i].deviceClass);
    CHECK(a[i].published == b[i].published);
    CHECK(a[i].usable == b[i].usable);
    CHECK(a[i].allocated == b[i].allocated);
    CHECK(a[i].free == b[i].free);
  }
  const auto pa = live.pools();
  const auto pb = recount.pools();
  REQUIRE(pa.size() == pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    INFO(pa[i].pool);
    CHECK(pa[i].pool == pb[i].pool);
    CHECK(pa[i].devices == pb[i].devices);
    CHECK(pa[i].usable == pb[i].usable);
    CHECK(pa[i].unavailableByReason == pb[i].unavailableByReason);
  }
  const auto ua = live.unclassified();
  const auto ub = recount.unclassified();
  REQUIRE(ua.size() == ub.size());
  for (size_t i = 0; i < ua.size(); ++i) CHECK(ua[i].allocated == ub[i].allocated);
  // The sequence did exercise allocations, and slices and nodes changing between recounts.
  CHECK(sliceChanges > 20);
  CHECK(nodeChanges > 20);
  CHECK(requireFigures(recount, "w1", "gpu.nvidia.com").allocated > 0);
  CHECK(requireFigures(recount, "w1", "nvidia.com/gpu").allocated > 0);
}
