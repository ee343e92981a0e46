// Sharing modes and units: every label and attribute form NVIDIA's GPU feature discovery, device
// plugin and DRA driver publish, decoded from the wire-form fixtures in tests/fixtures/k8s (see the
// README there for where each one comes from) and fed through the inventory.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "firstwork/inventory/inventory.hpp"
#include "firstwork/model/decode.hpp"
#include "fixtures.hpp"

using firstwork::inventory::ClassFigures;
using firstwork::inventory::Inventory;
using firstwork::inventory::NodeSharing;
using firstwork::inventory::SharingMode;
using firstwork::inventory::Unit;
using firstwork::inventory::readNodeSharing;
using firstwork::inventory::sharingClass;
using firstwork::inventory::sharingModeName;
using firstwork::inventory::unitName;
using firstwork::model::EventType;
using namespace firstwork::testing;
namespace model = firstwork::model;

namespace {

constexpr EventType kAdd = EventType::Added;

template <typename T>
T wireFixture(const std::string& name, model::Kind kind) {
  const std::string path = std::string(FIRSTWORK_TEST_FIXTURES_DIR) + "/k8s/" + name;
  std::ifstream in(path, std::ios::binary);
  INFO("fixture " << path);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  auto r = model::decodeObject(ss.str(), kind);
  INFO((r ? std::string("ok") : r.error()));
  REQUIRE(r.ok());
  REQUIRE(std::holds_alternative<T>(*r));
  return std::get<T>(std::move(*r));
}

model::Node nodeFixture(const std::string& name) { return wireFixture<model::Node>(name, model::Kind::Node); }

ClassFigures requireFigures(const Inventory& inventory, const std::string& device_class) {
  const auto f = inventory.figures("w1", device_class);
  INFO("class " << device_class);
  REQUIRE(f.has_value());
  return *f;
}

model::KeyValues labels(std::initializer_list<std::pair<std::string, std::string>> kv) {
  return model::KeyValues(kv.begin(), kv.end());
}

}  // namespace

TEST_CASE("a 2-GPU node time-sliced x4 (GFD labels as published) reports 2 GPUs and 8 shares, never 8 GPUs",
          "[inventory][sharing]") {
  Inventory inventory;
  const auto n = nodeFixture("node-gpu-time-slicing-CONSTRUCTED.json");
  REQUIRE(inventory.onNode("w1", kAdd, n));
  const auto sharing = inventory.nodeSharing("w1", "t4-node-01");
  REQUIRE(sharing);
  CHECK(sharing->mode == SharingMode::TimeSlicing);
  CHECK(sharing->replicas == 4);
  CHECK(sharing->productShared);
  CHECK(sharing->count == 2);

  CHECK_FALSE(inventory.figures("w1", "nvidia.com/gpu"));  // no whole-GPU class at all
  const auto shares = requireFigures(inventory, "nvidia.com/gpu.shared");
  CHECK(shares.unit == Unit::Share);
  CHECK(shares.published == 8);
  CHECK(shares.usable == 8);
  CHECK(shares.shared);
  CHECK(shares.physicalUnit == Unit::Gpu);
  CHECK(shares.physicalDevices == 2);  // 8 shares / 4 replicas
  CHECK(shares.physicalUsable == 2);
  // Summing the gpu unit over every class gives the 2 physical GPUs, never 8.
  int64_t gpus = 0;
  for (const auto& f : inventory.classes("w1")) {
    if (f.unit == Unit::Gpu) gpus += f.usable;
    if (f.shared && f.physicalUnit == Unit::Gpu) gpus += f.physicalUsable;
  }
  CHECK(gpus == 2);

  // A plain nvidia.com/gpu request can land here as a share.
  CHECK(inventory.servingClasses("w1", "nvidia.com/gpu") ==
        std::vector<std::string>{"nvidia.com/gpu", "nvidia.com/gpu.shared"});
  // Three one-share tenants: the device plugin spreads them over both GPUs (fewest-allocated
  // first), so both GPUs have a tenant: min(2 GPUs, 3 shares) = 2; 8 − 3 = 5 shares free.
  for (int i = 0; i < 3; ++i) {
    REQUIRE(inventory.onPod("w1", kAdd, pod("ns", "p" + std::to_string(i), "t4-node-01",
                                             {{"nvidia.com/gpu", 1000}})));
  }
  const auto held = requireFigures(inventory, "nvidia.com/gpu.shared");
  CHECK(held.allocated == 3);
  CHECK(held.free == 5);
  CHECK(held.physicalAllocated == 2);
  const auto physical = inventory.physicalUsableByNode("w1", "nvidia.com/gpu.shared");
  REQUIRE(physical.size() == 1);
  CHECK(physical.at("t4-node-01") == 2);
}

TEST_CASE("renamed shares, MPS, MIG single and MIG mixed nodes each count in their own unit",
          "[inventory][sharing]") {
  Inventory inventory;
  for (const char* f : {"node-gpu-time-slicing-renamed-CONSTRUCTED.json", "node-gpu-mps-CONSTRUCTED.json",
                        "node-gpu-mig-single-CONSTRUCTED.json", "node-gpu-mig-mixed-CONSTRUCTED.json",
                        "node-gpu-ready-CONSTRUCTED.json", "node-gpu-unlabelled-CONSTRUCTED.json"}) {
    REQUIRE(inventory.onNode("w1", kAdd, nodeFixture(f)));
  }
  // renameByDefault: nvidia.com/gpu.shared 8 (labels under nvidia.com/gpu, product without
  // -SHARED, replicas 4) and nvidia.com/gpu 0 — plus the MPS node's 8 shares of 2 A100s.
  CHECK(inventory.nodeSharing("w1", "t4-node-02", "nvidia.com/gpu.shared")->mode ==
        SharingMode::TimeSlicing);
  CHECK(inventory.nodeSharing("w1", "a100-node-03")->mode == SharingMode::Mps);
  const auto shares = requireFigures(inventory, "nvidia.com/gpu.shared");
  CHECK(shares.published == 16);     // 8 + 8
  CHECK(shares.physicalDevices == 4);  // 8/4 + 8/4
  // MIG single (GFD's documented example): 8 A100-SXM4-40GB as 56 × 1g.5gb under nvidia.com/gpu.
  const auto single = inventory.nodeSharing("w1", "a100-node-04");
  CHECK(single->mode == SharingMode::MigSingle);
  CHECK(single->migProfile == "1g.5gb");
  CHECK(single->count == 56);
  const auto mig5 = requireFigures(inventory, "nvidia.com/mig-1g.5gb");
  CHECK(mig5.unit == Unit::Mig);
  CHECK(mig5.published == 56);
  // MIG mixed: 7 × 1g.10gb; its nvidia.com/gpu (0 allocatable, replicas 0) adds nothing.
  CHECK(inventory.nodeSharing("w1", "a100-node-05", "nvidia.com/mig-1g.10gb")->mode ==
        SharingMode::MigMixed);
  CHECK(inventory.nodeSharing("w1", "a100-node-05")->mode == SharingMode::Exclusive);
  CHECK(requireFigures(inventory, "nvidia.com/mig-1g.10gb").published == 7);
  // Whole GPUs: the H100 node (mig.strategy=single but MIG disabled: plain GPU labels) and the
  // node without any GPU feature discovery labels (one unit per GPU, reported as unlabelled).
  CHECK(inventory.nodeSharing("w1", "gpu-node-07")->mode == SharingMode::Exclusive);
  CHECK(inventory.nodeSharing("w1", "gpu-node-08")->mode == SharingMode::Unlabelled);
  const auto whole = requireFigures(inventory, "nvidia.com/gpu");
  CHECK(whole.unit == Unit::Gpu);
  CHECK(whole.published == 8 + 4);
  CHECK_FALSE(whole.shared);
  // A plain GPU request can be served by whole GPUs, shares (not renamed: the MPS node) and the
  // single-strategy MIG instances; a renamed share resource only by the share class.
  CHECK(inventory.servingClasses("w1", "nvidia.com/gpu") ==
        std::vector<std::string>{"nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.5gb"});
  CHECK(inventory.servingClasses("w1", "nvidia.com/gpu.shared") ==
        std::vector<std::string>{"nvidia.com/gpu.shared"});
  // A pod bound to the single-strategy node holds a MIG instance, not a GPU.
  const auto p = pod("ns", "p", "a100-node-04", {{"nvidia.com/gpu", 1000}});
  REQUIRE(inventory.onPod("w1", kAdd, p));
  const auto devices = inventory.podDevices("w1", p);
  REQUIRE(devices.devices.size() == 1);
  CHECK(devices.devices[0].deviceClass == "nvidia.com/mig-1g.5gb");
  CHECK(requireFigures(inventory, "nvidia.com/mig-1g.5gb").allocated == 1);
  CHECK(requireFigures(inventory, "nvidia.com/gpu").allocated == 0);

  // Node modes for the API and the node gauge.
  std::map<std::string, std::string> modes;
  for (const auto& m : inventory.nodeModes("w1")) {
    modes[m.node + " " + m.resource] = std::string(sharingModeName(m.sharing.mode)) + " " + m.deviceClass;
  }
  CHECK(modes["t4-node-02 nvidia.com/gpu.shared"] == "time-slicing nvidia.com/gpu.shared");
  CHECK(modes["a100-node-03 nvidia.com/gpu"] == "mps nvidia.com/gpu.shared");
  CHECK(modes["a100-node-04 nvidia.com/gpu"] == "mig-single nvidia.com/mig-1g.5gb");
  CHECK(modes["a100-node-05 nvidia.com/mig-1g.10gb"] == "mig-mixed nvidia.com/mig-1g.10gb");
  CHECK(modes["gpu-node-07 nvidia.com/gpu"] == "exclusive nvidia.com/gpu");
  CHECK(modes["gpu-node-08 nvidia.com/gpu"] == "unlabelled nvidia.com/gpu");
}

TEST_CASE("the tick's GPU node counts take a node once per mode and list only unknown or unlabelled resources",
          "[inventory][sharing]") {
  using firstwork::inventory::GpuNodeCount;
  Inventory inventory;
  for (const char* f : {"node-gpu-time-slicing-renamed-CONSTRUCTED.json", "node-gpu-mps-CONSTRUCTED.json",
                        "node-gpu-mig-single-CONSTRUCTED.json", "node-gpu-mig-mixed-CONSTRUCTED.json",
                        "node-gpu-ready-CONSTRUCTED.json", "node-gpu-unlabelled-CONSTRUCTED.json",
                        "node-gpu-sharing-contradictory-CONSTRUCTED.json",
                        "node-gpu-mig-single-invalid-CONSTRUCTED.json"}) {
    REQUIRE(inventory.onNode("w1", kAdd, nodeFixture(f)));
  }
  // On another cluster, a MIG-mixed node with two profiles: two resources in one mode, one node.
  auto two = nodeFixture("node-gpu-mig-mixed-CONSTRUCTED.json");
  two.meta.name = "a100-node-15";
  two.allocatable.emplace_back(firstwork::Interned("nvidia.com/mig-2g.20gb"), 3000);
  for (const auto& [k, v] : {std::pair<std::string, std::string>{"nvidia.com/mig-2g.20gb.count", "3"},
                             {"nvidia.com/mig-2g.20gb.product", "NVIDIA-A100-SXM4-80GB-MIG-2g.20gb"},
                             {"nvidia.com/mig-2g.20gb.replicas", "1"},
                             {"nvidia.com/mig-2g.20gb.sharing-strategy", "none"}}) {
    two.meta.labels.emplace_back(firstwork::Interned(k), v);
  }
  REQUIRE(inventory.onNode("w2", kAdd, two));
  REQUIRE(inventory.nodeSharing("w2", "a100-node-15", "nvidia.com/mig-1g.10gb")->mode == SharingMode::MigMixed);
  REQUIRE(inventory.nodeSharing("w2", "a100-node-15", "nvidia.com/mig-2g.20gb")->mode == SharingMode::MigMixed);

  // Resources without allocatable units (the renamed node's and the mixed nodes' nvidia.com/gpu 0)
  // count no node.
  const std::vector<GpuNodeCount> expected{
      {"w1", SharingMode::Exclusive, 1},   // gpu-node-07
      {"w1", SharingMode::TimeSlicing, 1},  // t4-node-02
      {"w1", SharingMode::Mps, 1},          // a100-node-03
      {"w1", SharingMode::MigSingle, 1},    // a100-node-04
      {"w1", SharingMode::MigMixed, 1},     // a100-node-05
      {"w1", SharingMode::Unlabelled, 1},   // gpu-node-08
      {"w1", SharingMode::Unknown, 2},      // a100-node-06 and a100-node-07
      {"w2", SharingMode::MigMixed, 1},     // a100-node-15, once for its two profiles
  };
  CHECK(inventory.gpuNodeCounts() == expected);
  const auto snapshot = inventory.snapshot(/*withPools=*/false);
  CHECK(snapshot.gpuNodes == expected);

  std::vector<std::string> problems;
  for (const auto& m : snapshot.nodeModeProblems) {
    CHECK(m.units > 0);
    problems.push_back(m.cluster + " " + m.node + " " + std::string(sharingModeName(m.sharing.mode)));
  }
  CHECK(problems == std::vector<std::string>{"w1 a100-node-06 unknown", "w1 a100-node-07 unknown",
                                             "w1 gpu-node-08 unlabelled"});
  // The problems carry what the daemon logs: the same record nodeModes() gives.
  REQUIRE_FALSE(snapshot.nodeModeProblems.empty());
  CHECK_FALSE(snapshot.nodeModeProblems[0].sharing.problem.empty());
  for (const auto& m : inventory.nodeModes("w1")) {
    if (m.node == "a100-node-06") CHECK(m.sharing.problem == snapshot.nodeModeProblems[0].sharing.problem);
  }

  // A node that goes takes its count with it; a mode no node is in is left out.
  REQUIRE(inventory.onNode("w1", EventType::Deleted, nodeFixture("node-gpu-ready-CONSTRUCTED.json")));
  const auto after = inventory.gpuNodeCounts();
  REQUIRE(after.size() == expected.size() - 1);
  CHECK(after.front() == GpuNodeCount{"w1", SharingMode::TimeSlicing, 1});
}

// The counts are kept between ticks and recounted when a node's resources change (change 39):
// every kind of change must reach them, and changes that leave resources alone must not lose them.
TEST_CASE("the GPU node counts follow relabelled nodes and changed units and outlive other updates",
          "[inventory][sharing]") {
  using firstwork::inventory::GpuNodeCount;
  Inventory inventory;
  auto ready = nodeFixture("node-gpu-ready-CONSTRUCTED.json");  // gpu-node-07: exclusive
  REQUIRE(ready.meta.name == "gpu-node-07");
  REQUIRE(inventory.onNode("w1", kAdd, ready));
  const auto unlabelled = nodeFixture("node-gpu-unlabelled-CONSTRUCTED.json");  // gpu-node-08
  REQUIRE(inventory.onNode("w1", kAdd, unlabelled));
  auto problemNodes = [&] {
    std::vector<std::string> out;
    for (const auto& m : inventory.snapshot(/*withPools=*/false).nodeModeProblems) out.push_back(m.node);
    return out;
  };
  CHECK(inventory.gpuNodeCounts() == std::vector<GpuNodeCount>{{"w1", SharingMode::Exclusive, 1},
                                                               {"w1", SharingMode::Unlabelled, 1}});
  CHECK(problemNodes() == std::vector<std::string>{"gpu-node-08"});

  // A pod bound to a node recounts it (what it holds) without touching its resources.
  REQUIRE(inventory.onPod("w1", kAdd, pod("ns", "p", "gpu-node-07", {{"nvidia.com/gpu", 1000}})));
  CHECK(requireFigures(inventory, "nvidia.com/gpu").allocated == 1);
  CHECK(inventory.gpuNodeCounts() == std::vector<GpuNodeCount>{{"w1", SharingMode::Exclusive, 1},
                                                               {"w1", SharingMode::Unlabelled, 1}});

  // GPU feature discovery labels the unlabelled node: exclusive, and no longer a problem.
  auto labelled = unlabelled;
  labelled.meta.labels = ready.meta.labels;
  REQUIRE(inventory.onNode("w1", EventType::Modified, labelled));
  CHECK(inventory.snapshot(/*withPools=*/false).gpuNodes ==
        std::vector<GpuNodeCount>{{"w1", SharingMode::Exclusive, 2}});
  CHECK(problemNodes().empty());

  // A status update that leaves the resources as they were (the node cordoned) keeps the counts.
  auto cordoned = ready;
  cordoned.unschedulable = true;
  REQUIRE(inventory.onNode("w1", EventType::Modified, cordoned));
  CHECK(inventory.gpuNodeCounts() == std::vector<GpuNodeCount>{{"w1", SharingMode::Exclusive, 2}});

  // gpu-node-07 publishes no GPU any more (device plugin gone): it counts in no mode.
  auto drained = cordoned;
  bool found = false;
  for (auto& [resource, milli] : drained.allocatable) {
    if (std::string_view(resource) == "nvidia.com/gpu") {
      milli = 0;
      found = true;
    }
  }
  REQUIRE(found);
  REQUIRE(inventory.onNode("w1", EventType::Modified, drained));
  CHECK(inventory.gpuNodeCounts() == std::vector<GpuNodeCount>{{"w1", SharingMode::Exclusive, 1}});

  // The cluster's objects are forgotten (it left the configuration): nothing to count.
  inventory.clearCluster("w1", firstwork::SystemTime{});
  CHECK(inventory.gpuNodeCounts().empty());
  CHECK(problemNodes().empty());
}

TEST_CASE("contradictory or invalid sharing labels make the capacity unknown, not guessed",
          "[inventory][sharing]") {
  Inventory inventory;
  REQUIRE(inventory.onNode("w1", kAdd, nodeFixture("node-gpu-sharing-contradictory-CONSTRUCTED.json")));
  REQUIRE(inventory.onNode("w1", kAdd, nodeFixture("node-gpu-mig-single-invalid-CONSTRUCTED.json")));
  const auto contradictory = inventory.nodeSharing("w1", "a100-node-06");
  CHECK(contradictory->mode == SharingMode::Unknown);
  CHECK(contradictory->problem.find("sharing-strategy is none but the resource is shared") !=
        std::string::npos);
  const auto invalid = inventory.nodeSharing("w1", "a100-node-07");
  CHECK(invalid->mode == SharingMode::Unknown);
  CHECK(invalid->problem.find("MIG-INVALID") != std::string::npos);

  CHECK(inventory.classes("w1").empty());  // no class gets these 16 units
  const auto p = pod("ns", "p", "a100-node-06", {{"nvidia.com/gpu", 2000}});
  REQUIRE(inventory.onPod("w1", kAdd, p));
  CHECK(inventory.podDevices("w1", p).unclassified == 2);
  const auto u = inventory.unclassified();
  REQUIRE(u.size() == 1);
  CHECK(u[0].source == "nvidia.com/gpu");
  CHECK(u[0].kind == firstwork::inventory::ClassKind::ExtendedResource);
  CHECK(u[0].published == 16);
  CHECK(u[0].usable == 16);
  CHECK(u[0].allocated == 2);
}

TEST_CASE("NVIDIA DRA devices: type gpu and mig by profile, vfio and untyped devices stay unclassified",
          "[inventory][sharing][dra]") {
  Inventory inventory;
  REQUIRE(inventory.onNode("w1", kAdd, node("a100-node-09")));
  const auto s = wireFixture<model::ResourceSlice>("dra-resourceslice-v1-nvidia-mig-vfio-CONSTRUCTED.json",
                                                   model::Kind::ResourceSlice);
  REQUIRE(inventory.onSlice("w1", kAdd, s, at(0)));
  const auto mig = requireFigures(inventory, "gpu.nvidia.com/mig-1g.10gb");
  CHECK(mig.unit == Unit::Mig);
  CHECK(mig.published == 7);
  CHECK(mig.usable == 7);
  const auto u = inventory.unclassified();
  REQUIRE(u.size() == 1);
  CHECK(u[0].source == "gpu.nvidia.com");  // the VFIO pass-through GPU (type vfio)
  CHECK(u[0].published == 1);

  // The claim names NVIDIA's MIG DeviceClass and pins the profile in a CEL selector: wanted as a
  // 1g.10gb instance before allocation, held as the device's class after.
  auto c = wireFixture<model::ResourceClaim>("dra-resourceclaim-v1-mig-profile-selector-CONSTRUCTED.json",
                                             model::Kind::ResourceClaim);
  CHECK(inventory.classForRequest(c.requests[0]) == std::optional<std::string>("gpu.nvidia.com/mig-1g.10gb"));
  auto unallocated = c;
  unallocated.allocated = false;
  unallocated.allocations.clear();
  auto p = pod("team-a", "infer-0", "");
  p.claims.push_back({"mig", "", "infer-mig", "infer-0-mig-7xk2p"});
  REQUIRE(inventory.onClaim("w1", kAdd, unallocated));
  auto wanted = inventory.podDevices("w1", p);
  REQUIRE(wanted.devices.size() == 1);
  CHECK(wanted.devices[0].deviceClass == "gpu.nvidia.com/mig-1g.10gb");
  CHECK_FALSE(wanted.devices[0].allocated);
  REQUIRE(inventory.onClaim("w1", EventType::Modified, c));
  p.nodeName = "a100-node-09";
  auto held = inventory.podDevices("w1", p);
  REQUIRE(held.devices.size() == 1);
  CHECK(held.devices[0].deviceClass == "gpu.nvidia.com/mig-1g.10gb");
  CHECK(held.devices[0].allocated);
  CHECK(requireFigures(inventory, "gpu.nvidia.com/mig-1g.10gb").free == 6);
}

TEST_CASE("a MIG request resolves to a profile only from simple selectors that pin one",
          "[inventory][sharing][dra]") {
  Inventory inventory;
  auto req = [](std::vector<std::string> selectors, std::string cls = "mig.nvidia.com") {
    model::DeviceRequest r;
    r.name = "r";
    r.deviceClassName = std::move(cls);
    r.selectors.assign(selectors.begin(), selectors.end());
    return r;
  };
  const std::optional<std::string> mig3("gpu.nvidia.com/mig-3g.40gb");
  CHECK(inventory.classForRequest(req({R"(device.attributes["gpu.nvidia.com"].profile == "3g.40gb")"})) == mig3);
  CHECK(inventory.classForRequest(req({"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && "
                                       "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"})) == mig3);
  CHECK(inventory.classForRequest(req({"device.attributes['gpu.nvidia.com'].profile == '3g.40gb'",
                                       "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"})) == mig3);
  // Unresolvable: no selector (any MIG instance), a capacity comparison, `||`, two profiles,
  // another driver, type gpu, or a class that is not NVIDIA's MIG class.
  CHECK_FALSE(inventory.classForRequest(req({})));
  CHECK_FALSE(inventory.classForRequest(req({"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('10Gi')) >= 0"})));
  CHECK_FALSE(inventory.classForRequest(req({"device.attributes['gpu.nvidia.com'].profile == '1g.10gb' || "
                                             "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"})));
  CHECK_FALSE(inventory.classForRequest(req({"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",
                                             "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"})));
  CHECK_FALSE(inventory.classForRequest(req({"device.driver == 'gpu.example.com' && device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"})));
  CHECK_FALSE(inventory.classForRequest(req({"device.attributes['gpu.nvidia.com'].type == 'gpu' && device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"})));
  CHECK_FALSE(inventory.classForRequest(req({"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}, "other.example.com")));
  // NVIDIA's whole-GPU class resolves by its name, selectors or not.
  CHECK(inventory.classForRequest(req({}, "gpu.nvidia.com")) == std::optional<std::string>("gpu.nvidia.com"));
}

TEST_CASE("readNodeSharing reads each label form and refuses contradictions", "[inventory][sharing]") {
  // Exclusive: replicas 1 or 0 (sharing disabled), strategy none.
  auto s = readNodeSharing(labels({{"nvidia.com/gpu.replicas", "1"}, {"nvidia.com/gpu.sharing-strategy", "none"},
                                   {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}),
                           "nvidia.com/gpu");
  CHECK(s.mode == SharingMode::Exclusive);
  CHECK(sharingClass("nvidia.com/gpu", s) == std::optional<std::string>("nvidia.com/gpu"));
  CHECK(readNodeSharing(labels({{"nvidia.com/gpu.replicas", "0"}}), "nvidia.com/gpu").mode == SharingMode::Exclusive);
  // Older GFD: replicas and -SHARED, no strategy label: time-slicing.
  s = readNodeSharing(labels({{"nvidia.com/gpu.replicas", "2"}, {"nvidia.com/gpu.product", "Tesla-V100-SXM2-16GB-SHARED"}}),
                      "nvidia.com/gpu");
  CHECK(s.mode == SharingMode::TimeSlicing);
  CHECK(sharingClass("nvidia.com/gpu", s) == std::optional<std::string>("nvidia.com/gpu.shared"));
  // Shares of a MIG profile (mixed strategy, time-sliced): nvidia.com/mig-1g.10gb.shared.
  s = readNodeSharing(labels({{"nvidia.com/mig.strategy", "mixed"}, {"nvidia.com/mig-1g.10gb.replicas", "2"},
                              {"nvidia.com/mig-1g.10gb.sharing-strategy", "time-slicing"}}),
                      "nvidia.com/mig-1g.10gb");
  CHECK(s.mode == SharingMode::TimeSlicing);
  CHECK(sharingClass("nvidia.com/mig-1g.10gb", s) == std::optional<std::string>("nvidia.com/mig-1g.10gb.shared"));
  Inventory inventory;
  CHECK(inventory.unitOf("nvidia.com/mig-1g.10gb.shared") == Unit::Share);
  CHECK(inventory.physicalUnitOf("nvidia.com/mig-1g.10gb.shared") == Unit::Mig);
  CHECK(inventory.physicalUnitOf("nvidia.com/gpu.shared") == Unit::Gpu);
  CHECK(inventory.unitOf("gpu.nvidia.com") == Unit::Gpu);
  CHECK(inventory.unitOf("gpu.nvidia.com/mig-2g.20gb") == Unit::Mig);
  CHECK(inventory.unitOf("amd.com/gpu") == Unit::Device);
  CHECK(unitName(Unit::Share) == "share");
  // MIG single with shares: nvidia.com/mig-<profile>.shared.
  s = readNodeSharing(labels({{"nvidia.com/mig.strategy", "single"}, {"nvidia.com/gpu.replicas", "2"},
                              {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED"},
                              {"nvidia.com/gpu.sharing-strategy", "time-slicing"}}),
                      "nvidia.com/gpu");
  CHECK(s.migSingle);
  CHECK(sharingClass("nvidia.com/gpu", s) == std::optional<std::string>("nvidia.com/mig-1g.5gb.shared"));
  // A renamed share resource without a replica count: physical devices from the count label, or
  // unknown without one.
  s = readNodeSharing(labels({{"nvidia.com/gpu.count", "2"}}), "nvidia.com/gpu.shared");
  CHECK(s.mode == SharingMode::TimeSlicing);
  CHECK(readNodeSharing(labels({}), "nvidia.com/gpu.shared").mode == SharingMode::Unknown);
  // Unknown: unparsable numbers, unknown strategies, contradictions, single without a product.
  for (const auto& l : {labels({{"nvidia.com/gpu.replicas", "four"}}),
                        labels({{"nvidia.com/gpu.count", "-1"}}),
                        labels({{"nvidia.com/gpu.sharing-strategy", "vgpu"}, {"nvidia.com/gpu.replicas", "2"}}),
                        labels({{"nvidia.com/gpu.sharing-strategy", "time-slicing"}, {"nvidia.com/gpu.replicas", "1"}}),
                        labels({{"nvidia.com/gpu.sharing-strategy", "none"}, {"nvidia.com/gpu.replicas", "4"}}),
                        labels({{"nvidia.com/mig.strategy", "single"}}),
                        labels({{"nvidia.com/mig.strategy", "sliced"}, {"nvidia.com/gpu.product", "X"}})}) {
    const auto u = readNodeSharing(l, "nvidia.com/gpu");
    INFO(u.problem);
    CHECK(u.mode == SharingMode::Unknown);
    CHECK_FALSE(u.problem.empty());
    CHECK_FALSE(sharingClass("nvidia.com/gpu", u));
  }
  CHECK(sharingModeName(SharingMode::MigSingle) == "mig-single");
}
