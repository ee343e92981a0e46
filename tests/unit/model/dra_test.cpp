// ResourceClaim and ResourceSlice decoding. Expected values read by hand from
// ../shared/fixtures/k8s/dra-*.yaml.
#include "firstwork/model/dra.hpp"

#include "model_test_util.hpp"

using namespace firstwork;
using namespace firstwork::model;
using firstwork::testing::decodeError;
using firstwork::testing::decodeFixture;
using firstwork::testing::decodeJson;
using firstwork::testing::readFixture;
using firstwork::testing::rfc;

namespace {

const std::string* attr(const Device& d, std::string_view name) {
  for (const auto& a : d.attributes) {
    if (a.name == name) return &a.value.str();
  }
  return nullptr;
}

template <typename T>
std::vector<T> listOf(const std::string& fixture, Kind kind) {
  auto page = decodeList(readFixture(fixture), kind);
  INFO(fixture << ": " << (page ? std::string("ok") : page.error()));
  REQUIRE(page.ok());
  REQUIRE(page->itemErrors.empty());
  std::vector<T> out;
  for (auto& o : page->items) out.push_back(std::get<T>(std::move(o)));
  return out;
}

}  // namespace

TEST_CASE("real allocated and reserved NVIDIA claim (v1 exactly)", "[model][dra]") {
  auto claims = listOf<ResourceClaim>("dra-resourceclaim-v1-allocated-reserved-nvidia.json",
                                      Kind::ResourceClaim);
  REQUIRE(claims.size() == 1);
  const auto& rc = claims[0];
  CHECK(rc.meta.name == "dra-gpu-example-798fccd4d-sfl2p-single-gpu-d2jzk");
  CHECK(rc.meta.namespace_ == "gpu-test1");
  CHECK(rc.meta.uid == "ed3eeb61-8c7d-5538-8f6f-dbffb6d8ae20");  // synthetic (README)
  CHECK(rfc(rc.meta.creationTimestamp) == "2026-07-06T13:16:19Z");
  CHECK(*findValue(rc.meta.annotations, "resource.kubernetes.io/pod-claim-name") == "single-gpu");
  REQUIRE(rc.meta.ownerReferences.size() == 1);
  CHECK(rc.meta.ownerReferences[0].kind == "Pod");
  CHECK(rc.meta.ownerReferences[0].uid == "d36ca24f-9949-4c33-9d47-c06846f775b1");
  REQUIRE(rc.requests.size() == 1);
  CHECK(rc.requests[0].name == "single-gpu");
  CHECK(rc.requests[0].deviceClassName == "gpu.nvidia.com");
  CHECK_FALSE(rc.requests[0].allocationModeAll);
  CHECK(rc.requests[0].count == 1);
  CHECK_FALSE(rc.requests[0].firstAvailable);
  CHECK(rc.allocated);
  CHECK(rfc(rc.allocationTimestamp) == "2026-07-06T13:16:19Z");
  REQUIRE(rc.allocations.size() == 1);
  CHECK(rc.allocations[0].request == "single-gpu");
  CHECK(rc.allocations[0].driver == "gpu.nvidia.com");
  CHECK(rc.allocations[0].pool == "conformance-test-np1-qcqc8-bpdtl-wv2gs");
  CHECK(rc.allocations[0].device == "gpu-0");
  REQUIRE(rc.reservedForPods.size() == 1);
  CHECK(rc.reservedForPods[0] == "d36ca24f-9949-4c33-9d47-c06846f775b1");
}

TEST_CASE("claim status excerpt: two results from one pool, no timestamp", "[model][dra]") {
  auto rc = decodeFixture<ResourceClaim>(
      "dra-resourceclaim-v1-status-config-fromclass-issue134789.json", Kind::ResourceClaim);
  CHECK(rc.meta.name == "my-resource-claim");
  CHECK(rc.requests.empty());
  CHECK(rc.allocated);
  CHECK_FALSE(rc.allocationTimestamp.has_value());
  REQUIRE(rc.allocations.size() == 2);
  CHECK(rc.allocations[0].request == "request0");
  CHECK(rc.allocations[0].device == "eth0");
  CHECK(rc.allocations[1].request == "request1");
  CHECK(rc.allocations[1].device == "eth1");
  CHECK(rc.allocations[1].pool == "kind-worker2");
  CHECK(rc.allocations[1].driver == "resource-driver.example.com");
  CHECK(rc.reservedForPods.empty());
}

TEST_CASE("claim reservedFor: only pods' uids are kept", "[model][dra]") {
  // A claim reserved for two pods and two consumers that are not pods (a "pods" resource of
  // another API group, a core resource other than pods), interleaved; one pod's entry names its
  // fields in another order than the API writes them, the other names the core group as "".
  auto rc = decodeJson<ResourceClaim>(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "shared", "namespace": "team-a", "uid": "rc-9"},
    "status": {"reservedFor": [
      {"apiGroup": "scheduling.example.com", "resource": "pods", "name": "p", "uid": "not-a-pod"},
      {"uid": "pod-uid-1", "name": "trainer-0", "resource": "pods"},
      {"resource": "services", "name": "svc", "uid": "svc-uid"},
      {"apiGroup": "", "resource": "pods", "name": "trainer-1", "uid": "pod-uid-2"}]}})",
                                     Kind::ResourceClaim);
  REQUIRE(rc.reservedForPods.size() == 2);
  CHECK(rc.reservedForPods[0] == "pod-uid-1");
  CHECK(rc.reservedForPods[1] == "pod-uid-2");
}

TEST_CASE("claim request shapes: v1beta1 flat, firstAvailable, pending", "[model][dra]") {
  auto flat = decodeJson<ResourceClaim>(R"({
    "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
    "metadata": {"name": "all-gpus", "namespace": "team-a", "uid": "rc-1"},
    "spec": {"devices": {"requests": [
      {"name": "gpus", "deviceClassName": "gpu.example.com", "allocationMode": "All"},
      {"name": "nic", "deviceClassName": "nic.example.com", "allocationMode": "ExactCount", "count": 2,
       "selectors": [{"cel": {"expression": "device.attributes[\"x\"].y == 1"}}]}]}},
    "status": {"allocation": null, "reservedFor": []}})",
                                        Kind::ResourceClaim);
  REQUIRE(flat.requests.size() == 2);
  CHECK(flat.requests[0].deviceClassName == "gpu.example.com");
  CHECK(flat.requests[0].allocationModeAll);
  CHECK(flat.requests[1].count == 2);
  CHECK_FALSE(flat.requests[1].allocationModeAll);
  CHECK_FALSE(flat.allocated);  // allocation: null
  CHECK(flat.allocations.empty());

  auto prio = decodeJson<ResourceClaim>(R"({
    "metadata": {"name": "prio", "namespace": "team-a", "uid": "rc-2"},
    "spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
      {"name": "big", "deviceClassName": "h100.nvidia.com"},
      {"name": "small", "deviceClassName": "mig-3g.nvidia.com", "count": 2}]}]}},
    "status": {"allocation": {"devices": {"results": [
      {"request": "gpu/small", "driver": "gpu.nvidia.com", "pool": "node-3", "device": "mig-3g-0"},
      {"request": "gpu/small", "driver": "gpu.nvidia.com", "pool": "node-3", "device": "mig-3g-1"}]},
      "allocationTimestamp": "2026-08-20T10:00:03.250Z"}}})",
                                        Kind::ResourceClaim);
  REQUIRE(prio.requests.size() == 1);
  CHECK(prio.requests[0].firstAvailable);
  CHECK(prio.requests[0].deviceClassName == "h100.nvidia.com");  // first alternative
  CHECK(prio.requests[0].count == 1);
  REQUIRE(prio.allocations.size() == 2);
  CHECK(prio.allocations[1].request == "gpu/small");
  CHECK(rfc(prio.allocationTimestamp) == "2026-08-20T10:00:03.250Z");
}

TEST_CASE("real example-driver slice list: 8 devices, typed attributes stringified",
          "[model][dra]") {
  auto slices = listOf<ResourceSlice>("dra-resourceslice-v1-list-dra-example-driver.json",
                                      Kind::ResourceSlice);
  REQUIRE(slices.size() == 1);
  const auto& s = slices[0];
  CHECK(s.meta.name == "dra-example-driver-cluster-worker-gpu.example.com-rf2f7");
  CHECK(s.meta.uid == "d13fd8bd-0a71-43e1-ba79-ebd2fae4847a");
  CHECK(s.meta.resourceVersion == "530");
  CHECK(s.driver == "gpu.example.com");
  CHECK(s.nodeName == "dra-example-driver-cluster-worker");
  CHECK(s.poolName == "dra-example-driver-cluster-worker");
  CHECK(s.poolGeneration == 0);
  CHECK(s.resourceSliceCount == 1);
  CHECK_FALSE(s.allNodes);
  CHECK_FALSE(s.sharedCounters);
  REQUIRE(s.devices.size() == 8);
  CHECK(s.devices[0].name == "gpu-0");
  CHECK(s.devices[0].attributes.size() == 4);
  CHECK(*attr(s.devices[0], "driverVersion") == "1.0.0");  // {"version": "1.0.0"}
  CHECK(*attr(s.devices[0], "index") == "0");               // {"int": 0}
  CHECK(*attr(s.devices[0], "model") == "LATEST-GPU-MODEL");
  CHECK(*attr(s.devices[0], "uuid") == "gpu-18db0e85-99e9-c746-8531-ffeb86328b39");
  CHECK(s.devices[7].name == "gpu-7");
  CHECK(*attr(s.devices[7], "index") == "7");
  CHECK(*attr(s.devices[7], "uuid") == "gpu-657bd2e7-f5c2-a7f2-fbaa-0d1cdc32f81b");
  CHECK_FALSE(s.devices[0].consumesCounters);
  CHECK(s.devices[0].taints.empty());
}

TEST_CASE("real NVIDIA DRA driver slice: type attribute and qualified names", "[model][dra]") {
  auto s = decodeFixture<ResourceSlice>("dra-resourceslice-v1-nvidia-gpu-openshift-conformance.json",
                                        Kind::ResourceSlice);
  CHECK(s.driver == "gpu.nvidia.com");
  CHECK(s.nodeName == "harpatil4220c-g9kfm-gpu-c-rd8r8");
  CHECK(s.poolGeneration == 1);
  REQUIRE(s.devices.size() == 2);
  CHECK(s.devices[0].attributes.size() == 11);
  CHECK(*attr(s.devices[0], "type") == "gpu");
  CHECK(*attr(s.devices[0], "productName") == "Tesla T4");
  CHECK(*attr(s.devices[0], "cudaComputeCapability") == "7.5.0");
  CHECK(*attr(s.devices[0], "driverVersion") == "580.126.20");
  CHECK(*attr(s.devices[0], "resource.kubernetes.io/pciBusID") == "0000:00:04.0");
  CHECK(*attr(s.devices[1], "uuid") == "GPU-204349eb-0405-e927-278b-8804172f1be3");
  // The values the devices of a model share are held once; a GPU's UUID (unique) is its own.
  const auto value = [&](size_t d, std::string_view name) -> const Interned& {
    for (const auto& a : s.devices[d].attributes)
      if (a.name == name) return a.value;
    FAIL("no attribute " << name);
    throw std::logic_error("unreachable");
  };
  CHECK(value(0, "productName").pooled());
  CHECK(value(0, "productName").data() == value(1, "productName").data());
  CHECK(value(0, "resource.kubernetes.io/pciBusID").pooled());
  CHECK_FALSE(value(0, "uuid").pooled());
  CHECK_FALSE(value(1, "uuid").pooled());
}

TEST_CASE("a slice's device attributes: only those the options name are kept", "[model][dra]") {
  const std::string json =
      readFixture("dra-resourceslice-v1-nvidia-gpu-openshift-conformance.json");
  auto decode = [&](std::optional<std::vector<std::string>> keep) {
    DecodeOptions options;
    options.deviceAttributes = std::move(keep);
    auto r = decodeObject(json, Kind::ResourceSlice, options);
    REQUIRE(r.ok());
    return std::get<ResourceSlice>(std::move(*r));
  };
  auto names = [](const Device& d) {
    std::vector<std::string> n;
    for (const auto& a : d.attributes) n.push_back(a.name.str());
    return n;
  };
  // The inventory's defaults: the NVIDIA driver's type, and the MIG profile it does not publish
  // on a full GPU.
  auto read = decode(std::vector<std::string>{"type", "profile"});
  REQUIRE(read.devices.size() == 2);
  for (const auto& d : read.devices) CHECK(names(d) == std::vector<std::string>{"type"});
  CHECK(*attr(read.devices[1], "type") == "gpu");
  CHECK(read.devices[1].name == "gpu-1");  // the rest of the device as before
  // Qualified either way: a reader's "gpu.nvidia.com/productName" is the driver's productName,
  // and "resource.kubernetes.io/pciBusID" is kept for a reader of "pciBusID".
  auto qualified = decode(std::vector<std::string>{"gpu.nvidia.com/productName", "pciBusID"});
  CHECK(names(qualified.devices[0]) ==
        std::vector<std::string>{"productName", "resource.kubernetes.io/pciBusID"});
  CHECK(*attr(qualified.devices[0], "productName") == "Tesla T4");
  CHECK(decode(std::vector<std::string>{}).devices[0].attributes.empty());
  CHECK(decode(std::nullopt).devices[0].attributes.size() == 11);  // the default: every one
  CHECK(decodeFixture<ResourceSlice>("dra-resourceslice-v1-nvidia-gpu-openshift-conformance.json",
                                     Kind::ResourceSlice)
            .devices[0]
            .attributes.size() == 11);
}

TEST_CASE("which device attribute names the options keep", "[model][dra]") {
  DecodeOptions all;
  CHECK(all.keepsDeviceAttribute("uuid"));
  DecodeOptions some;
  some.deviceAttributes = std::vector<std::string>{"type", "example.com/profile"};
  CHECK(some.keepsDeviceAttribute("type"));
  CHECK(some.keepsDeviceAttribute("gpu.nvidia.com/type"));
  CHECK(some.keepsDeviceAttribute("profile"));
  CHECK(some.keepsDeviceAttribute("gpu.nvidia.com/profile"));  // a superset: readers compare
  CHECK_FALSE(some.keepsDeviceAttribute("uuid"));
  CHECK_FALSE(some.keepsDeviceAttribute("gpu.nvidia.com/typex"));
  CHECK_FALSE(some.keepsDeviceAttribute("types"));
  CHECK_FALSE(some.keepsDeviceAttribute(""));
  DecodeOptions none;
  none.deviceAttributes = std::vector<std::string>{};
  CHECK_FALSE(none.keepsDeviceAttribute("type"));
}

TEST_CASE("partitionable pool split into a counter slice and a device slice", "[model][dra]") {
  auto counters = decodeFixture<ResourceSlice>(
      "dra-resourceslice-v1-partitionable-two-slice-pool-kep2941-1.json", Kind::ResourceSlice);
  CHECK(counters.meta.name == "node1-gpu0-counters");
  CHECK(counters.poolName == "node1-gpu0");
  CHECK(counters.poolGeneration == 1);
  CHECK(counters.resourceSliceCount == 2);
  CHECK(counters.sharedCounters);
  CHECK(counters.devices.empty());
  CHECK(counters.nodeName.empty());

  auto devices = decodeFixture<ResourceSlice>(
      "dra-resourceslice-v1-partitionable-two-slice-pool-kep2941-2.json", Kind::ResourceSlice);
  CHECK(devices.nodeName == "node1");
  CHECK_FALSE(devices.sharedCounters);
  REQUIRE(devices.devices.size() == 2);
  CHECK(devices.devices[0].name == "gpu-0-mig-1g.10gb-0");
  CHECK(*attr(devices.devices[0], "gpu.nvidia.com/profile") == "1g.10gb");
  CHECK(devices.devices[0].consumesCounters);
  CHECK(*attr(devices.devices[1], "gpu.nvidia.com/profile") == "7g.80gb");
}

TEST_CASE("pool generation rollover list: stale and incomplete slices decode as published",
          "[model][dra]") {
  auto page = decodeList(
      readFixture("dra-resourceslice-v1-pool-generation-rollover-incomplete-CONSTRUCTED.json"),
      Kind::ResourceSlice);
  REQUIRE(page.ok());
  CHECK(page->resourceVersion == "120344");
  REQUIRE(page->items.size() == 2);
  const auto& gen1 = std::get<ResourceSlice>(page->items[0]);
  const auto& gen2 = std::get<ResourceSlice>(page->items[1]);
  CHECK(gen1.meta.resourceVersion == "120001");
  CHECK(gen1.poolGeneration == 1);
  CHECK(gen1.resourceSliceCount == 1);
  CHECK(gen1.devices[0].name == "gpu-0");
  CHECK(gen2.poolGeneration == 2);
  CHECK(gen2.resourceSliceCount == 2);
  CHECK(gen2.devices[0].name == "gpu-1");
  CHECK(gen1.poolName == gen2.poolName);
}

TEST_CASE("v1beta1 slice: device fields under the basic wrapper", "[model][dra]") {
  auto s = decodeFixture<ResourceSlice>("dra-resourceslice-v1beta1-basic-wrapper-CONSTRUCTED.json",
                                        Kind::ResourceSlice);
  CHECK(s.meta.name == "worker-1-gpu.example.com-abcde");
  CHECK(s.nodeName == "worker-1");
  CHECK(s.poolName == "worker-1");
  REQUIRE(s.devices.size() == 1);
  CHECK(s.devices[0].name == "gpu-0");
  REQUIRE(s.devices[0].attributes.size() == 4);
  CHECK(*attr(s.devices[0], "index") == "0");
  CHECK(*attr(s.devices[0], "model") == "LATEST-GPU-MODEL");
  CHECK(*attr(s.devices[0], "driverVersion") == "1.0.0");
}

TEST_CASE("slice attributes of every type, taints, per-device node selection", "[model][dra]") {
  auto s = decodeJson<ResourceSlice>(R"({
    "metadata": {"name": "s", "uid": "u"},
    "spec": {"driver": "gpu.nvidia.com", "pool": {"name": "p", "generation": 3, "resourceSliceCount": 1},
      "perDeviceNodeSelection": true,
      "devices": [
        {"name": "gpu-0", "nodeName": "node-a",
         "attributes": {"healthy": {"bool": true}, "memoryGiB": {"int": 80}, "type": {"string": "gpu"},
                        "cuda": {"version": "12.4.0"}, "links": {"ints": [1, 2, 3]},
                        "future": {"complex": {"re": 1}}},
         "capacity": {"memory": {"value": "80Gi"}},
         "taints": [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule",
                     "timeAdded": "2026-08-20T10:00:00Z"}]},
        {"name": "gpu-1", "allNodes": true, "attributes": {"healthy": {"bool": false}}}]}})",
                                     Kind::ResourceSlice);
  CHECK(s.perDeviceNodeSelection);
  CHECK(s.poolGeneration == 3);
  REQUIRE(s.devices.size() == 2);
  const auto& d = s.devices[0];
  CHECK(*attr(d, "healthy") == "true");
  CHECK(*attr(d, "memoryGiB") == "80");
  CHECK(*attr(d, "type") == "gpu");
  CHECK(*attr(d, "cuda") == "12.4.0");
  CHECK(*attr(d, "links") == "1,2,3");
  CHECK(attr(d, "future") == nullptr);  // unknown attribute type: skipped, not an error
  CHECK(d.attributes.size() == 5);
  CHECK(d.nodeName == "node-a");
  REQUIRE(d.taints.size() == 1);
  CHECK(d.taints[0].key == "gpu.nvidia.com/xid");
  CHECK(d.taints[0].value == "79");
  CHECK(d.taints[0].effect == "NoSchedule");
  CHECK(*attr(s.devices[1], "healthy") == "false");
  CHECK(s.devices[1].allNodes);
}

TEST_CASE("DRA schema errors name the field", "[model][dra]") {
  CHECK(decodeError(R"({"metadata": {"name": "s", "uid": "u"}, "spec": {"pool": {"generation": "1"}}})",
                    Kind::ResourceSlice) ==
        "spec.pool.generation: expected integer, got string (ResourceSlice s)");
  CHECK(decodeError(R"({"metadata": {"name": "s", "uid": "u"}, "spec": {"devices": [{"name": "d",
                        "attributes": {"index": {"int": "zero"}}}]}})",
                    Kind::ResourceSlice) ==
        "spec.devices[0].attributes[\"index\"].int: expected integer, got string (ResourceSlice s)");
  CHECK(decodeError(R"({"metadata": {"name": "c", "namespace": "n", "uid": "u"}, "status":
                        {"allocation": {"allocationTimestamp": "2026-13-01T00:00:00Z"}}})",
                    Kind::ResourceClaim)
            .rfind("status.allocation.allocationTimestamp: invalid RFC 3339 time", 0) == 0);
  CHECK(decodeError(R"({"metadata": {"name": "c", "uid": "u"}, "spec": {"devices": {"requests":
                        [{"name": "r", "exactly": {"count": -2}}]}}})",
                    Kind::ResourceClaim) ==
        "spec.devices.requests[0].exactly.count: must not be negative (ResourceClaim c)");
  CHECK(decodeError(R"({"metadata": {"name": "s", "uid": "u"}, "spec": {"pool": {"generation": -1}}})",
                    Kind::ResourceSlice) == "spec.pool.generation: must not be negative (ResourceSlice s)");
}

TEST_CASE("a MIG request keeps its CEL selectors, where NVIDIA's MIG class names the profile",
          "[model][dra][sharing]") {
  auto rc = decodeFixture<ResourceClaim>("dra-resourceclaim-v1-mig-profile-selector-CONSTRUCTED.json",
                                         Kind::ResourceClaim);
  REQUIRE(rc.requests.size() == 1);
  CHECK(rc.requests[0].deviceClassName == "mig.nvidia.com");
  REQUIRE(rc.requests[0].selectors.size() == 1);
  CHECK(rc.requests[0].selectors[0] == "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'");
  REQUIRE(rc.allocations.size() == 1);
  CHECK(rc.allocations[0].device == "gpu-0-mig-19-3-1");

  // v1beta1 flat requests carry selectors on the request itself; a selector without `cel` is
  // ignored, an overlong expression is truncated (it then no longer parses as a simple equality).
  auto flat = decodeJson<ResourceClaim>(R"({"apiVersion": "resource.k8s.io/v1beta1",
      "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ns", "uid": "u"},
      "spec": {"devices": {"requests": [{"name": "r", "deviceClassName": "mig.nvidia.com",
        "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"}},
                      {}, {"cel": {"expression": ")" + std::string(2000, 'x') + R"("}}]}]}}})",
                                                Kind::ResourceClaim);
  REQUIRE(flat.requests.size() == 1);
  REQUIRE(flat.requests[0].selectors.size() == 2);
  CHECK(flat.requests[0].selectors[0] == "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'");
  CHECK(flat.requests[0].selectors[1].size() == 1024);
}
