// ObjectMeta and condition decoding shared by every kind, and the small lookup helpers.
#include "firstwork/model/meta.hpp"

#include "model_test_util.hpp"

using namespace firstwork;
using namespace firstwork::model;
using firstwork::testing::decodeError;
using firstwork::testing::decodeJson;
using firstwork::testing::rfc;

TEST_CASE("lookup helpers find values, conditions and quantities", "[model][meta]") {
  KeyValues kv{{"a", "1"}, {"b", "2"}};
  REQUIRE(findValue(kv, "b") != nullptr);
  CHECK(*findValue(kv, "b") == "2");
  CHECK(findValue(kv, "c") == nullptr);

  Conditions conds(2);
  conds[0].type = "Ready";
  conds[0].status = ConditionStatus::False;
  conds[1].type = "PodScheduled";
  conds[1].status = ConditionStatus::True;
  CHECK(findCondition(conds, "PodScheduled") == &conds[1]);
  CHECK(findCondition(conds, "Missing") == nullptr);
  CHECK(isTrue(conds, "PodScheduled"));
  CHECK_FALSE(isTrue(conds, "Ready"));
  CHECK_FALSE(isTrue(conds, "Missing"));

  ResourceList rl{{"nvidia.com/gpu", 8000}};
  CHECK(milliOf(rl, "nvidia.com/gpu") == 8000);
  CHECK(milliOf(rl, "example.com/gpu") == 0);
}

TEST_CASE("only the labels and annotations something reads are kept", "[model][meta]") {
  auto p = decodeJson<Pod>(R"({"metadata": {"name": "p", "uid": "u",
    "labels": {"kueue.x-k8s.io/job-uid": "j1", "kueue.x-k8s.io/multikueue-origin": "mgr",
               "firstwork.dev/team": "a", "nvidia.com/gpu.product": "H100",
               "nvidia.com/cuda.driver.major": "550", "kueue.x-k8s.io/queue-name": "q",
               "kueue.x-k8s.io/podset": "main", "batch.kubernetes.io/job-name": "j",
               "batch.kubernetes.io/controller-uid": "c", "resource.kubernetes.io/x": "y",
               "k8s.io/initial-events-end": "true", "node.k8s.io/other": "n", "app": "web",
               "firstwork.dev/": "prefix only", "kueue.x-k8s.io/job-uidx": "longer"},
    "annotations": {"kueue.x-k8s.io/workload": "wl", "firstwork.dev/first-work-at": "2026-08-20T10:03:00Z",
                    "resource.kubernetes.io/pod-claim-name": "gpu",
                    "batch.kubernetes.io/job-completion-index": "3",
                    "k8s.v1.cni.cncf.io/network-status": "[{}]",
                    "kubectl.kubernetes.io/last-applied-configuration": "{...}"}}})",
                           Kind::Pod);
  // 15 labels: the two Kueue keys the engine reads, our own prefix, one GPU feature discovery
  // label. Not: other nvidia.com/ labels, other Kueue/batch/resource keys, the bare prefix, a key
  // that only starts like a kept one.
  REQUIRE(p.meta.labels.size() == 4);
  CHECK(*findValue(p.meta.labels, "kueue.x-k8s.io/job-uid") == "j1");
  CHECK(*findValue(p.meta.labels, "kueue.x-k8s.io/multikueue-origin") == "mgr");
  CHECK(*findValue(p.meta.labels, "firstwork.dev/team") == "a");
  CHECK(*findValue(p.meta.labels, "nvidia.com/gpu.product") == "H100");
  REQUIRE(p.meta.annotations.size() == 3);
  CHECK(*findValue(p.meta.annotations, "kueue.x-k8s.io/workload") == "wl");
  CHECK(*findValue(p.meta.annotations, "firstwork.dev/first-work-at") == "2026-08-20T10:03:00Z");
  CHECK(*findValue(p.meta.annotations, "resource.kubernetes.io/pod-claim-name") == "gpu");
}

TEST_CASE("metadata bounds: 64 kept labels, truncated values, duplicate keys", "[model][meta]") {
  std::string labels;
  for (int i = 0; i < 10000; ++i) {
    labels += (i ? "," : "") + std::string("\"firstwork.dev/l") + std::to_string(i) + "\": \"v\"";
  }
  // 1 ASCII byte then 200 two-byte characters = 401 bytes; 256 would split the character that
  // starts at byte 255, so the cut lands at 255.
  std::string value = "a";
  for (int i = 0; i < 200; ++i) value += "\xc3\xa9";
  auto p = decodeJson<Pod>(R"({"metadata": {"name": "p", "uid": "u", "labels": {)" + labels +
                               R"(}, "annotations": {"firstwork.dev/x": "first", "firstwork.dev/long": ")" +
                               value + R"(", "firstwork.dev/x": "second"}}})",
                           Kind::Pod);
  CHECK(p.meta.labels.size() == 64);
  CHECK(p.meta.labels.front().first == "firstwork.dev/l0");
  CHECK(p.meta.labels.back().first == "firstwork.dev/l63");
  REQUIRE(p.meta.annotations.size() == 2);
  CHECK(*findValue(p.meta.annotations, "firstwork.dev/x") == "second");  // last duplicate wins
  CHECK(findValue(p.meta.annotations, "firstwork.dev/long")->size() == 255);
  CHECK(findValue(p.meta.annotations, "firstwork.dev/long")->onHeap());
  CHECK(*findValue(p.meta.annotations, "firstwork.dev/long") == value.substr(0, 255));
}

TEST_CASE("label and annotation values: inline up to 38 bytes, longer ones kept whole",
          "[model][meta]") {
  // Values are SmallStrings (change 71): a Job's uid (36), a Workload's name and an RFC 3339
  // time fit inline; a longer value is held on the heap, as it was read.
  const std::string jobUid = "d36ca24f-9949-4c33-9d47-c06846f775b1";
  const std::string longName = "job-" + std::string(60, 'n') + "-1a2b3";
  auto p = decodeJson<Pod>(R"({"metadata": {"name": "p", "uid": "u",
    "labels": {"kueue.x-k8s.io/job-uid": ")" + jobUid + R"("},
    "annotations": {"kueue.x-k8s.io/workload": ")" + longName + R"(",
                    "firstwork.dev/first-work-at": "2026-08-20T10:03:00.123456789Z",
                    "firstwork.dev/empty": ""}}})",
                           Kind::Pod);
  const SmallString* uid = findValue(p.meta.labels, "kueue.x-k8s.io/job-uid");
  REQUIRE(uid != nullptr);
  CHECK(*uid == jobUid);
  CHECK_FALSE(uid->onHeap());
  const SmallString* wl = findValue(p.meta.annotations, "kueue.x-k8s.io/workload");
  REQUIRE(wl != nullptr);
  CHECK(*wl == longName);
  CHECK(wl->onHeap());
  CHECK(*findValue(p.meta.annotations, "firstwork.dev/first-work-at") ==
        "2026-08-20T10:03:00.123456789Z");
  REQUIRE(findValue(p.meta.annotations, "firstwork.dev/empty") != nullptr);
  CHECK(findValue(p.meta.annotations, "firstwork.dev/empty")->empty());
}

TEST_CASE("owner references: the controller survives a long list", "[model][meta]") {
  std::string owners;
  for (int i = 0; i < 30; ++i) {
    owners += std::string(i ? "," : "") + R"({"apiVersion": "v1", "kind": "ConfigMap", "name": "c)" +
              std::to_string(i) + R"(", "uid": "o)" + std::to_string(i) + R"(", "controller": )" +
              (i == 20 ? "true" : "false") + "}";
  }
  auto p = decodeJson<Pod>(
      R"({"metadata": {"name": "p", "uid": "u", "ownerReferences": [)" + owners + "]}}", Kind::Pod);
  // The first 8, then only controllers; the controller listed first, the others in their order.
  REQUIRE(p.meta.ownerReferences.size() == 9);
  CHECK(p.meta.ownerReferences[0].uid == "o20");
  for (size_t i = 1; i < 9; ++i) {
    CHECK(p.meta.ownerReferences[i].uid == "o" + std::to_string(i - 1));
  }
}

TEST_CASE("owner references: controllers first, each group in its order", "[model][meta]") {
  // The engine resolves an object's Workload through its controller before its other owners
  // (change 86: the flag is not kept, the order says it).
  auto p = decodeJson<Pod>(R"({"metadata": {"name": "p", "uid": "u", "ownerReferences": [
      {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "a"},
      {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "j", "controller": true},
      {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "b", "controller": false},
      {"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "n", "controller": true}]}})",
                           Kind::Pod);
  REQUIRE(p.meta.ownerReferences.size() == 4);
  CHECK(p.meta.ownerReferences[0].uid == "j");
  CHECK(p.meta.ownerReferences[0].kind == "Job");
  CHECK(p.meta.ownerReferences[0].name == "j");
  CHECK(p.meta.ownerReferences[1].uid == "n");
  CHECK(p.meta.ownerReferences[2].uid == "a");
  CHECK(p.meta.ownerReferences[3].uid == "b");
}

TEST_CASE("owner references: apiVersion is checked though not kept", "[model][meta]") {
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u", "ownerReferences": [
      {"apiVersion": 1, "kind": "Job", "name": "j", "uid": "j"}]}})",
                    Kind::Pod) ==
        "metadata.ownerReferences[0].apiVersion: expected string, got number (Pod p)");
}

TEST_CASE("metadata timestamps and nulls", "[model][meta]") {
  auto p = decodeJson<Pod>(R"({"metadata": {"name": "p", "uid": "u", "generation": 7,
    "creationTimestamp": "2026-08-20T10:00:00.5+02:00", "deletionTimestamp": null,
    "labels": null, "resourceVersion": "12"}})",
                           Kind::Pod);
  CHECK(rfc(p.meta.creationTimestamp) == "2026-08-20T08:00:00.500Z");
  CHECK_FALSE(p.meta.deletionTimestamp.has_value());
  CHECK(p.meta.resourceVersion == "12");  // the generation is checked, not kept (meta.hpp)
  CHECK(p.meta.resourceVersion.numeric());
  // An API server not backed by etcd may send any text: it is kept whole.
  auto opaque = decodeJson<Pod>(
      R"({"metadata": {"name": "p", "uid": "u", "resourceVersion": "0012/a=="}})", Kind::Pod);
  CHECK(opaque.meta.resourceVersion == "0012/a==");
  CHECK(opaque.meta.resourceVersion.str() == "0012/a==");
  auto q = decodeJson<Pod>(R"({"metadata": {"name": "p", "uid": "u", "creationTimestamp": null}})",
                           Kind::Pod);
  CHECK(q.meta.creationTimestamp == SystemTime{});
  // Years a nanosecond SystemTime cannot hold (Go's zero time, far future) are errors, not UB.
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u", "creationTimestamp": "0001-01-01T00:00:00Z"}})",
                    Kind::Pod) ==
        "metadata.creationTimestamp: time \"0001-01-01T00:00:00Z\" is outside the representable "
        "years 1678-2261 (Pod p)");
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u", "deletionTimestamp": "9026-08-20T10:00:00Z"}})",
                    Kind::Pod)
            .rfind("metadata.deletionTimestamp: time \"9026-08-20T10:00:00Z\" is outside", 0) == 0);
  CHECK(rfc(decodeJson<Pod>(R"({"metadata": {"name": "p", "uid": "u", "creationTimestamp": "2261-12-31T23:59:59Z"}})",
                            Kind::Pod).meta.creationTimestamp) == "2261-12-31T23:59:59Z");
}

TEST_CASE("identity is required and must be strings", "[model][meta]") {
  CHECK(decodeError(R"({"metadata": {"name": "p"}})", Kind::Pod) ==
        "metadata.uid: missing (Pod p)");
  CHECK(decodeError(R"({"metadata": {"uid": "u"}})", Kind::Pod) == "metadata.name: missing");
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": null}})", Kind::Pod) ==
        "metadata.uid: missing (Pod p)");
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": ""}})", Kind::Pod) ==
        "metadata.uid: missing (Pod p)");
  CHECK(decodeError(R"({"spec": {}})", Kind::Node) == "metadata.name: missing");
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": 42}})", Kind::Pod) ==
        "metadata.uid: expected string, got number (Pod p)");
  CHECK(decodeError(R"({"metadata": "p"})", Kind::Pod) ==
        "metadata: expected object, got string");
  CHECK(decodeError(R"({"metadata": {"name": ")" + std::string(600, 'n') + R"(", "uid": "u"}})",
                    Kind::Pod) == "metadata.name: longer than 512 bytes (600)");
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u", "labels":
                        {"kueue.x-k8s.io/job-uid": 5, "app": 6}}})",
                    Kind::Pod) ==
        "metadata.labels[\"kueue.x-k8s.io/job-uid\"]: expected string, got number (Pod p)");
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u", "ownerReferences": [{"controller": "yes"}]}})",
                    Kind::Pod) ==
        "metadata.ownerReferences[0].controller: expected boolean, got string (Pod p)");
}

TEST_CASE("uids of any length are kept whole: inline up to 38 bytes, past that on the heap",
          "[model][meta]") {
  // A Kubernetes uid is 36 characters; hostile or foreign ones may be longer, up to the
  // identifier bound (change 69 keeps uids in a SmallString).
  const std::string uid36 = "d36ca24f-9949-4c33-9d47-c06846f775b1";
  const std::string uid100 = uid36 + "-" + std::string(63, 'x');
  for (const std::string& uid : {uid36, uid100, std::string(512, 'u')}) {
    auto p = decodeJson<Pod>(R"({"metadata": {"name": "p", "uid": ")" + uid +
                                 R"(", "ownerReferences": [{"kind": "Job", "name": "j", "uid": ")" +
                                 uid + R"("}]}, "status": {}})",
                             Kind::Pod);
    CHECK(p.meta.uid == uid);
    CHECK(p.meta.uid.onHeap() == (uid.size() > SmallString::kInlineBytes));
    REQUIRE(p.meta.ownerReferences.size() == 1);
    CHECK(p.meta.ownerReferences[0].uid == uid);
    // The decoded object is a value: a copy and a move keep the uid.
    Pod copy = p;
    Pod moved = std::move(p);
    CHECK(copy.meta.uid == uid);
    CHECK(moved.meta.uid == uid);
    CHECK(moved.meta.ownerReferences[0].uid == uid);
  }
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": ")" + std::string(513, 'u') + R"("}})",
                    Kind::Pod) == "metadata.uid: longer than 512 bytes (513) (Pod p)");
}

TEST_CASE("names of any length are kept whole: inline up to 30 bytes, past that on the heap",
          "[model][meta]") {
  // A Job's pod (23 characters), a Workload of exactly 30, a generated claim (35), and the
  // longest name the API allows (253): the object's and its owner's (change 77).
  const std::string pod = "train-1234-abcd-0-xz7k2";
  const std::string workload = "job-train-98765-qwer-012345678";
  const std::string claim = "train-1234-abcd-0-xz7k2-gpu-q8v2n";
  for (const std::string& name : {pod, workload, claim, std::string(253, 'n')}) {
    INFO(name.size());
    auto p = decodeJson<Pod>(R"({"metadata": {"name": ")" + name +
                                 R"(", "uid": "u", "ownerReferences": [{"kind": "Job", "name": ")" +
                                 name + R"(", "uid": "j"}]}, "status": {}})",
                             Kind::Pod);
    CHECK(p.meta.name == name);
    CHECK(p.meta.name.onHeap() == (name.size() > 30));
    REQUIRE(p.meta.ownerReferences.size() == 1);
    CHECK(p.meta.ownerReferences[0].name == name);
    CHECK(p.meta.ownerReferences[0].name.onHeap() == (name.size() > 30));
    Pod copy = p;
    Pod moved = std::move(p);
    CHECK(copy.meta.name == name);
    CHECK(moved.meta.name == name);
    CHECK(moved.meta.ownerReferences[0].name == name);
  }
}

TEST_CASE("condition text is truncated, entries without type skipped", "[model][meta]") {
  std::string longMessage(1000, 'm');
  const std::string conditions = R"("status": {"conditions": [
    {"status": "True"},
    {"type": "Ready", "status": "Bogus", "message": ")" + longMessage + R"(", "lastTransitionTime": null}]}})";
  auto w = decodeJson<Workload>(R"({"metadata": {"name": "w", "uid": "u"}, )" + conditions,
                                Kind::Workload);
  REQUIRE(w.conditions.size() == 1);
  CHECK(w.conditions[0].status == ConditionStatus::Unknown);
  CHECK(w.conditions[0].message == std::string(256, 'm'));
  CHECK_FALSE(w.conditions[0].lastTransitionTime.has_value());
  // A Node's (and a Pod's) conditions keep no message (BriefCondition, change 89).
  auto n = decodeJson<Node>(R"({"metadata": {"name": "n", "uid": "u"}, )" + conditions, Kind::Node);
  REQUIRE(n.conditions.size() == 1);
  CHECK(n.conditions[0].type == "Ready");
  CHECK(n.conditions[0].status == ConditionStatus::Unknown);
  CHECK_FALSE(n.conditions[0].lastTransitionTime.has_value());
}
