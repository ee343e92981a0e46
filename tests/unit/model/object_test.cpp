// The kind table and the Object variant helpers.
#include "firstwork/model/object.hpp"

#include "model_test_util.hpp"

using namespace firstwork;
using namespace firstwork::model;

TEST_CASE("kind table: resources, groups, versions, scope", "[model][object]") {
  const auto& w = kindInfo(Kind::Workload);
  CHECK(w.resource == "workloads");
  CHECK(w.group == "kueue.x-k8s.io");
  CHECK(w.versions[0] == "v1beta2");
  CHECK(w.versions[1] == "v1beta1");
  CHECK(w.versions[2].empty());
  CHECK(w.namespaced);
  for (Kind k : {Kind::MultiKueueCluster, Kind::MultiKueueConfig, Kind::AdmissionCheck,
                 Kind::ClusterQueue}) {
    INFO(kindName(k));
    CHECK(kindInfo(k).group == "kueue.x-k8s.io");
    CHECK(kindInfo(k).versions[0] == "v1beta2");
    CHECK(kindInfo(k).versions[1] == "v1beta1");
    CHECK_FALSE(kindInfo(k).namespaced);
  }
  CHECK(kindInfo(Kind::MultiKueueCluster).resource == "multikueueclusters");
  CHECK(kindInfo(Kind::MultiKueueConfig).resource == "multikueueconfigs");
  CHECK(kindInfo(Kind::AdmissionCheck).resource == "admissionchecks");
  CHECK(kindInfo(Kind::ClusterQueue).resource == "clusterqueues");
  CHECK(kindInfo(Kind::Pod).resource == "pods");
  CHECK(kindInfo(Kind::Pod).group.empty());
  CHECK(kindInfo(Kind::Pod).versions[0] == "v1");
  CHECK(kindInfo(Kind::Pod).namespaced);
  CHECK(kindInfo(Kind::Node).resource == "nodes");
  CHECK_FALSE(kindInfo(Kind::Node).namespaced);
  const auto& rc = kindInfo(Kind::ResourceClaim);
  CHECK(rc.resource == "resourceclaims");
  CHECK(rc.group == "resource.k8s.io");
  CHECK(rc.versions == std::array<std::string_view, 3>{"v1", "v1beta2", "v1beta1"});
  CHECK(rc.namespaced);
  CHECK(kindInfo(Kind::ResourceSlice).resource == "resourceslices");
  CHECK(kindInfo(Kind::ResourceSlice).versions == rc.versions);
  CHECK_FALSE(kindInfo(Kind::ResourceSlice).namespaced);
}

TEST_CASE("kinds are found by resource and listed in enum order", "[model][object]") {
  CHECK(kindFromResource("workloads") == Kind::Workload);
  CHECK(kindFromResource("resourceslices") == Kind::ResourceSlice);
  CHECK(kindFromResource("nodes") == Kind::Node);
  CHECK_FALSE(kindFromResource("deployments").has_value());
  CHECK_FALSE(kindFromResource("Workloads").has_value());
  const auto& all = allKinds();
  REQUIRE(all.size() == 9);
  for (size_t i = 0; i < all.size(); ++i) {
    CHECK(static_cast<size_t>(all[i].kind) == i);
    CHECK(kindFromResource(all[i].resource) == all[i].kind);
  }
  CHECK(kindName(Kind::Workload) == "Workload");
  CHECK(kindName(Kind::MultiKueueConfig) == "MultiKueueConfig");
  CHECK(kindName(Kind::ResourceClaim) == "ResourceClaim");
}

TEST_CASE("a decoded object fits jemalloc's 256-byte size class with its control block",
          "[model][object]") {
  // Every tracked object is one std::make_shared<const Object> block: 16 bytes of control block
  // and the variant, as large as its largest kind plus 8 for the index. At 304 bytes (a 296-byte
  // Workload or Pod) the block took the 320-byte class, at 368 the 384 one; a kind that grows
  // past 232 bytes takes every object back to 320 (265,000 objects at the largest estates:
  // 16 MiB). Box what it rarely carries (model::Boxed), keep lists in CompactVectors, and keep
  // only fields something reads (bench/README.md, changes 72 and 80).
  CHECK(sizeof(Object) <= 256 - 16);
  CHECK(sizeof(Workload) <= 232);
  CHECK(sizeof(Pod) <= 232);
  CHECK(sizeof(ResourceClaim) <= 232);
  CHECK(sizeof(ResourceSlice) <= 232);
  CHECK(sizeof(Node) <= 232);
  CHECK(sizeof(AdmissionCheck) <= 232);
  CHECK(sizeof(ClusterQueue) <= 232);
  CHECK(sizeof(MultiKueueCluster) <= 232);
  CHECK(sizeof(MultiKueueConfig) <= 232);
  // Every object's uid is inline (SmallString, 40 bytes), its deletionTimestamp 8 bytes
  // (OptionalTime, change 69), its resourceVersion 8 (ResourceVersion), its labels, annotations
  // and owner references 16 each (CompactVector), and its generation not kept (change 72).
  CHECK(sizeof(ObjectMeta) <= 152);
}

TEST_CASE("a condition is 40 bytes", "[model][object]") {
  // Pods, Nodes and Workloads carry four or five each, in one vector: at 48 bytes (an optional
  // time of 16) a pod's five took jemalloc's 256-byte class, at 40 the 224 one, and four 160
  // instead of 192 (bench/README.md, change 70).
  CHECK(sizeof(Condition) <= 40);
}

TEST_CASE("a Pod's or a Node's condition is 32 bytes", "[model][object]") {
  // Without the message nothing reads: a pod's two kept conditions take jemalloc's 64-byte
  // class where two Conditions took the 80 one, a node's five the 160 where they took the 208
  // (bench/README.md, change 89).
  CHECK(sizeof(BriefCondition) <= 32);
}

TEST_CASE("a container status is 48 bytes", "[model][object]") {
  // Every tracked pod carries one per container, in one vector: at 80 bytes (two optional times
  // of 16, the flags apart) a pod's one took jemalloc's 80-byte class and two its 160; at 56
  // the 64 and the 112 (bench/README.md, change 76); at 48, without the message nothing reads,
  // the 48 and the 96 (change 89).
  CHECK(sizeof(ContainerStatus) <= 48);
}

TEST_CASE("a DRA device is 56 bytes", "[model][object]") {
  // Every ResourceSlice carries its devices in one vector, 8 GPUs a node's slice at the
  // benchmark's estate: at 80 bytes (two std::vectors, the flags apart) they took jemalloc's
  // 640-byte class, at 56 the 448 (bench/README.md, change 79).
  CHECK(sizeof(Device) <= 56);
}

TEST_CASE("a claim's device request is 48 bytes", "[model][object]") {
  // Every ResourceClaim carries one or two, in one vector (50,000 claims at the benchmark's
  // estate): with its names as std::strings and its selectors a std::vector, 112 bytes, a
  // claim's one request jemalloc's 112-byte class; at 48 the 48 (bench/README.md, change 84).
  CHECK(sizeof(DeviceRequest) <= 48);
}

TEST_CASE("an owner reference is 80 bytes", "[model][object]") {
  // Every tracked pod, Workload and claim carries one (250,000 at the benchmark's estate): with
  // its apiVersion and controller flag, 96 bytes and jemalloc's 96-byte class; at 80 the 80
  // (bench/README.md, change 86). The controller is first in the list instead.
  CHECK(sizeof(OwnerReference) <= 80);
}

TEST_CASE("metaOf and kindOf work on every alternative", "[model][object]") {
  Object o = Node{};
  std::get<Node>(o).meta.name = "n1";
  CHECK(kindOf(o) == Kind::Node);
  CHECK(metaOf(o).name == "n1");
  o = Workload{};
  CHECK(kindOf(o) == Kind::Workload);
  o = ResourceClaim{};
  CHECK(kindOf(o) == Kind::ResourceClaim);
  for (const auto& k : allKinds()) {
    auto r = decodeObject(R"({"metadata": {"name": "x", "uid": "y"}})", k.kind);
    REQUIRE(r.ok());
    CHECK(kindOf(*r) == k.kind);
    CHECK(metaOf(*r).uid == "y");
  }
}
