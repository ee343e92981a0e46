// Node decoding against the constructed node fixtures in tests/fixtures/k8s (see README there).
#include "firstwork/model/node.hpp"

#include "model_test_util.hpp"

using namespace firstwork;
using namespace firstwork::model;
using firstwork::testing::condition;
using firstwork::testing::decodeError;
using firstwork::testing::decodeFixture;
using firstwork::testing::rfc;

TEST_CASE("ready GPU node: extended resources, nvidia labels, taint", "[model][node]") {
  auto n = decodeFixture<Node>("node-gpu-ready-CONSTRUCTED.json", Kind::Node);
  CHECK(n.meta.name == "gpu-node-07");
  CHECK(n.meta.uid == "7a7a7a7a-0000-4000-8000-000000000007");
  CHECK(n.meta.namespace_.empty());
  // 8 labels, 4 of them nvidia.com/, 3 of those sharing labels (gpu.present is not read); both
  // annotations have other prefixes.
  REQUIRE(n.meta.labels.size() == 3);
  CHECK(findValue(n.meta.labels, "nvidia.com/gpu.present") == nullptr);
  CHECK(*findValue(n.meta.labels, "nvidia.com/mig.strategy") == "single");
  CHECK(*findValue(n.meta.labels, "nvidia.com/gpu.product") == "NVIDIA-H100-80GB-HBM3");
  CHECK(*findValue(n.meta.labels, "nvidia.com/gpu.count") == "8");
  CHECK(findValue(n.meta.labels, "kubernetes.io/hostname") == nullptr);
  CHECK(n.meta.annotations.empty());
  CHECK_FALSE(n.unschedulable);
  REQUIRE(n.taints.size() == 1);
  CHECK(n.taints[0].key == "nvidia.com/gpu");
  CHECK(n.taints[0].value == "present");
  CHECK(n.taints[0].effect == "NoSchedule");
  // cpu, memory, ephemeral-storage, hugepages, pods are not extended resources.
  REQUIRE(n.allocatable.size() == 1);
  CHECK(milliOf(n.allocatable, "nvidia.com/gpu") == 8000);
  REQUIRE(n.capacity.size() == 1);
  CHECK(milliOf(n.capacity, "nvidia.com/gpu") == 8000);
  REQUIRE(n.conditions.size() == 4);
  const auto& ready = condition(n.conditions, "Ready");
  CHECK(ready.status == ConditionStatus::True);
  CHECK(ready.reason == "KubeletReady");
  CHECK(rfc(ready.lastTransitionTime) == "2026-08-01T08:01:10Z");  // not lastHeartbeatTime
}

TEST_CASE("unreachable cordoned MIG node", "[model][node]") {
  auto n = decodeFixture<Node>("node-gpu-mig-notready-cordoned-CONSTRUCTED.json", Kind::Node);
  CHECK(n.meta.name == "gpu-node-09");
  CHECK(n.unschedulable);
  REQUIRE(n.taints.size() == 3);
  CHECK(n.taints[0].key == "node.kubernetes.io/unreachable");
  CHECK(n.taints[0].effect == "NoExecute");
  CHECK(n.taints[2].key == "node.kubernetes.io/unschedulable");
  CHECK(n.taints[2].value.empty());
  const auto& ready = condition(n.conditions, "Ready");
  CHECK(ready.status == ConditionStatus::Unknown);
  CHECK(ready.reason == "NodeStatusUnknown");
  CHECK(rfc(ready.lastTransitionTime) == "2026-08-20T10:04:35Z");
  CHECK_FALSE(isTrue(n.conditions, "Ready"));
  CHECK(milliOf(n.allocatable, "nvidia.com/mig-1g.10gb") == 4000);
  CHECK(milliOf(n.allocatable, "nvidia.com/mig-2g.20gb") == 2000);
  CHECK(milliOf(n.capacity, "nvidia.com/mig-3g.40gb") == 2000);
  CHECK(milliOf(n.allocatable, "nvidia.com/gpu") == 0);
  CHECK(*findValue(n.meta.labels, "nvidia.com/mig.strategy") == "mixed");
}

TEST_CASE("node schema errors name the field", "[model][node]") {
  CHECK(decodeError(R"({"metadata": {"name": "n", "uid": "u"}, "spec": {"unschedulable": "yes"}})",
                    Kind::Node) == "spec.unschedulable: expected boolean, got string (Node n)");
  CHECK(decodeError(R"({"metadata": {"name": "n", "uid": "u"}, "status": {"allocatable":
                        {"nvidia.com/gpu": "8x"}}})",
                    Kind::Node)
            .rfind("status.allocatable[\"nvidia.com/gpu\"]: invalid quantity \"8x\"", 0) == 0);
}

TEST_CASE("a GPU-operator node keeps its sharing labels and drops the rest of nvidia.com/",
          "[model][node][sharing]") {
  // 51 nvidia.com/ labels in all (deploy flags, CUDA versions, per-profile MIG engine counts); the
  // decoder keeps the GPU feature discovery sharing labels only, well under the 64-label cap.
  auto n = decodeFixture<Node>("node-gpu-mig-mixed-CONSTRUCTED.json", Kind::Node);
  CHECK(*findValue(n.meta.labels, "nvidia.com/mig.strategy") == "mixed");
  CHECK(*findValue(n.meta.labels, "nvidia.com/mig-1g.10gb.count") == "7");
  CHECK(*findValue(n.meta.labels, "nvidia.com/mig-1g.10gb.product") ==
        "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb");
  CHECK(*findValue(n.meta.labels, "nvidia.com/mig-1g.10gb.replicas") == "1");
  CHECK(*findValue(n.meta.labels, "nvidia.com/mig-1g.10gb.sharing-strategy") == "none");
  CHECK(*findValue(n.meta.labels, "nvidia.com/gpu.replicas") == "0");
  CHECK(findValue(n.meta.labels, "nvidia.com/mig-1g.10gb.engines.copy") == nullptr);
  CHECK(findValue(n.meta.labels, "nvidia.com/gpu.deploy.device-plugin") == nullptr);
  CHECK(findValue(n.meta.labels, "nvidia.com/mig.config") == nullptr);
  // gpu.count, .product, .replicas, .sharing-strategy; the profile's four; mig.strategy.
  CHECK(n.meta.labels.size() == 9);
  CHECK(milliOf(n.allocatable, "nvidia.com/mig-1g.10gb") == 7000);
  CHECK(milliOf(n.allocatable, "nvidia.com/gpu") == 0);

  auto ts = decodeFixture<Node>("node-gpu-time-slicing-CONSTRUCTED.json", Kind::Node);
  CHECK(*findValue(ts.meta.labels, "nvidia.com/gpu.replicas") == "4");
  CHECK(*findValue(ts.meta.labels, "nvidia.com/gpu.sharing-strategy") == "time-slicing");
  CHECK(*findValue(ts.meta.labels, "nvidia.com/gpu.product") == "Tesla-T4-SHARED");
  CHECK(findValue(ts.meta.labels, "nvidia.com/device-plugin.config") == nullptr);
}
