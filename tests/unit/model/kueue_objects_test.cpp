// MultiKueueCluster, MultiKueueConfig, AdmissionCheck and ClusterQueue decoding. Expected values read
// by hand from ../shared/fixtures/k8s/kueue-multikueue-*.yaml and kueue-dra-sample-queues.yaml.
#include "firstwork/model/kueue_objects.hpp"

#include "model_test_util.hpp"

using namespace firstwork;
using namespace firstwork::model;
using firstwork::testing::condition;
using firstwork::testing::decodeError;
using firstwork::testing::decodeFixture;
using firstwork::testing::decodeJson;
using firstwork::testing::readFixture;
using firstwork::testing::rfc;

TEST_CASE("MultiKueueCluster Active condition, connected and failing", "[model][kueue]") {
  auto up = decodeFixture<MultiKueueCluster>("kueue-multikueue-status-objects-CONSTRUCTED-1.json",
                                             Kind::MultiKueueCluster);
  CHECK(up.meta.name == "worker1");
  CHECK(up.meta.namespace_.empty());  // cluster-scoped
  CHECK(up.meta.uid == "5f33b3f8-a6c3-5c9a-af6f-532bdae5177f");  // synthetic (README)
  const auto& a = condition(up.conditions, "Active");
  CHECK(a.status == ConditionStatus::True);
  CHECK(a.reason == "Active");
  CHECK(a.message == "Connected");
  CHECK(rfc(a.lastTransitionTime) == "2026-08-20T09:58:00Z");

  auto down = decodeFixture<MultiKueueCluster>(
      "kueue-multikueue-status-objects-CONSTRUCTED-2.json", Kind::MultiKueueCluster);
  CHECK(down.meta.name == "worker2");
  const auto& d = condition(down.conditions, "Active");
  CHECK(d.status == ConditionStatus::False);
  CHECK(d.reason == "ClientConnectionFailed");
  // 253 bytes: below the 256-byte text bound, so the retry suffix survives intact.
  CHECK(d.message ==
        "Get \"https://10.0.2.15:6443/apis/kueue.x-k8s.io/v1beta2/workloads?labelSelector="
        "kueue.x-k8s.io%2Fmultikueue-origin%3Dmultikueue\": dial tcp 10.0.2.15:6443: connect: "
        "connection refused; connection attempts: 3, next connection attempt: "
        "2026-08-20T10:05:20Z");
  CHECK(rfc(d.lastTransitionTime) == "2026-08-20T10:04:00Z");

  auto plain = decodeFixture<MultiKueueCluster>("kueue-multikueue-setup-6.json",
                                                Kind::MultiKueueCluster);
  CHECK(plain.meta.name == "multikueue-test-worker1");
  CHECK(plain.conditions.empty());
}

TEST_CASE("AdmissionCheck points at its MultiKueueConfig", "[model][kueue]") {
  auto ac = decodeFixture<AdmissionCheck>("kueue-multikueue-status-objects-CONSTRUCTED-3.json",
                                          Kind::AdmissionCheck);
  CHECK(ac.meta.name == "multikueue-ac");
  CHECK(ac.controllerName == "kueue.x-k8s.io/multikueue");
  CHECK(ac.parametersKind == "MultiKueueConfig");
  CHECK(ac.parametersName == "multikueue-config");
  const auto& a = condition(ac.conditions, "Active");
  CHECK(a.reason == "SomeActiveClusters");
  CHECK(a.message == "Inactive clusters: [worker2]");
  CHECK(rfc(a.lastTransitionTime) == "2026-08-20T10:04:00Z");

  auto setup = decodeFixture<AdmissionCheck>("kueue-multikueue-setup-4.json", Kind::AdmissionCheck);
  CHECK(setup.meta.name == "sample-multikueue");
  CHECK(setup.parametersName == "multikueue-test");
  CHECK(setup.conditions.empty());
}

TEST_CASE("MultiKueueConfig lists its clusters in order", "[model][kueue]") {
  auto cfg = decodeFixture<MultiKueueConfig>("kueue-multikueue-setup-5.json",
                                             Kind::MultiKueueConfig);
  CHECK(cfg.meta.name == "multikueue-test");
  REQUIRE(cfg.clusters == std::vector<std::string>{"multikueue-test-worker1"});

  auto two = decodeJson<MultiKueueConfig>(
      R"({"metadata": {"name": "c", "uid": "u"}, "spec": {"clusters": ["w2", "w1"],
          "quotaManagement": "Manual"}})",
      Kind::MultiKueueConfig);
  CHECK(two.clusters == std::vector<std::string>{"w2", "w1"});
}

TEST_CASE("ClusterQueue admission checks from the strategy and device quota", "[model][kueue]") {
  auto mk = decodeFixture<ClusterQueue>("kueue-multikueue-setup-2.json", Kind::ClusterQueue);
  CHECK(mk.meta.name == "cluster-queue");
  CHECK(mk.cohort.empty());
  CHECK(mk.admissionChecks == std::vector<std::string>{"sample-multikueue"});
  CHECK(mk.nominalQuota.empty());  // cpu 9, memory 36Gi: no device resources

  auto dra = decodeFixture<ClusterQueue>("kueue-dra-sample-queues-2.json", Kind::ClusterQueue);
  // nominalQuota: 8 arrives as a JSON number here (user YAML); the server would send "8".
  REQUIRE(dra.nominalQuota.size() == 1);
  CHECK(milliOf(dra.nominalQuota, "example.com/gpu") == 8000);
  CHECK(dra.admissionChecks.empty());
}

TEST_CASE("ClusterQueue v1beta1 cohort, both check lists merged, quota summed over flavors",
          "[model][kueue]") {
  auto cq = decodeJson<ClusterQueue>(R"({
    "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
    "metadata": {"name": "team-a-cq", "uid": "cq-1"},
    "spec": {"cohort": "org-root",
      "admissionChecks": ["dws-prov"],
      "admissionChecksStrategy": {"admissionChecks": [{"name": "multikueue-ac"}, {"name": "dws-prov"}]},
      "resourceGroups": [
        {"coveredResources": ["cpu", "nvidia.com/gpu"], "flavors": [
          {"name": "h100", "resources": [{"name": "cpu", "nominalQuota": "100"},
                                         {"name": "nvidia.com/gpu", "nominalQuota": "16"}]},
          {"name": "a100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8",
                                          "borrowingLimit": "0"}]}]},
        {"coveredResources": ["nvidia.com/mig-1g.10gb"], "flavors": [
          {"name": "mig", "resources": [{"name": "nvidia.com/mig-1g.10gb", "nominalQuota": "14"}]}]}]}})",
                                     Kind::ClusterQueue);
  CHECK(cq.cohort == "org-root");
  CHECK(cq.admissionChecks == std::vector<std::string>{"dws-prov", "multikueue-ac"});
  CHECK(milliOf(cq.nominalQuota, "nvidia.com/gpu") == 24000);  // 16 (h100) + 8 (a100)
  CHECK(milliOf(cq.nominalQuota, "nvidia.com/mig-1g.10gb") == 14000);
  CHECK(milliOf(cq.nominalQuota, "cpu") == 0);

  auto v2 = decodeJson<ClusterQueue>(
      R"({"metadata": {"name": "q", "uid": "u"}, "spec": {"cohortName": "org-root/team-b"}})",
      Kind::ClusterQueue);
  CHECK(v2.cohort == "org-root/team-b");
}

TEST_CASE("other Kueue kinds in the same files are rejected by kind", "[model][kueue]") {
  auto flavor = model::decodeObject(readFixture("kueue-multikueue-setup-1.json"), Kind::ClusterQueue);
  REQUIRE_FALSE(flavor.ok());
  CHECK(flavor.error() == "kind: expected ClusterQueue, got \"ResourceFlavor\"");
  CHECK(decodeError(R"({"metadata": {"name": "c", "uid": "u"}, "spec": {"clusters": "w1"}})",
                    Kind::MultiKueueConfig) ==
        "spec.clusters: expected array, got string (MultiKueueConfig c)");
  CHECK(decodeError(R"({"metadata": {"name": "q", "uid": "u"}, "spec": {"resourceGroups": [
                         {"flavors": [{"resources": [{"name": "nvidia.com/gpu",
                           "nominalQuota": true}]}]}]}})",
                    Kind::ClusterQueue) ==
        "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: expected quantity (string), "
        "got boolean (ClusterQueue q)");
}
