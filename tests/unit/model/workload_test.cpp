// Workload decoding against the fixtures; every expected value was read by hand from the YAML source
// in ../shared/fixtures/k8s (quantities are milli-units: "8" GPUs = 8000).
#include "firstwork/model/workload.hpp"

#include "model_test_util.hpp"

using namespace firstwork;
using namespace firstwork::model;
using firstwork::testing::condition;
using firstwork::testing::decodeError;
using firstwork::testing::decodeFixture;
using firstwork::testing::decodeJson;
using firstwork::testing::rfc;

TEST_CASE("v1beta2 MultiKueue manager workload decodes identity, podsets, admission and checks",
          "[model][workload]") {
  auto w = decodeFixture<Workload>(
      "kueue-workload-v1beta2-multikueue-manager-admitted-CONSTRUCTED.json", Kind::Workload);
  CHECK(w.meta.name == "job-train-llm-3b9f2");
  CHECK(w.meta.namespace_ == "team-a");
  CHECK(w.meta.uid == "6a1c2f9e-1111-4c3d-9e2a-000000000001");
  CHECK(w.meta.resourceVersion == "884213");
  CHECK(rfc(w.meta.creationTimestamp) == "2026-08-20T10:00:00Z");
  CHECK_FALSE(w.meta.deletionTimestamp.has_value());
  REQUIRE(findValue(w.meta.labels, "kueue.x-k8s.io/job-uid") != nullptr);
  CHECK(*findValue(w.meta.labels, "kueue.x-k8s.io/job-uid") ==
        "0d2b7c41-2222-4a8f-8c11-000000000002");
  REQUIRE(w.meta.ownerReferences.size() == 1);
  CHECK(w.meta.ownerReferences[0].kind == "Job");
  CHECK(w.meta.ownerReferences[0].name == "train-llm");
  CHECK(w.meta.ownerReferences[0].uid == "0d2b7c41-2222-4a8f-8c11-000000000002");

  CHECK(w.queueName == "team-a-lq");
  CHECK(w.priority == 100);
  CHECK(w.active);
  REQUIRE(w.podSets.size() == 1);
  CHECK(w.podSets[0].name == "main");
  CHECK(w.podSets[0].count == 4);
  // requests cpu "8", memory 64Gi, nvidia.com/gpu "8": only the extended resource is kept.
  REQUIRE(w.podSets[0].perPodRequests.size() == 1);
  CHECK(milliOf(w.podSets[0].perPodRequests, "nvidia.com/gpu") == 8000);
  CHECK(w.podSets[0].claims.empty());

  REQUIRE(w.admission.held());
  CHECK(w.admission->clusterQueue == "team-a-cq");
  REQUIRE(w.admission->podSetAssignments.size() == 1);
  CHECK(w.admission->podSetAssignments[0].name == "main");
  CHECK(w.admission->podSetAssignments[0].count == 4);

  REQUIRE(w.admissionChecks.size() == 1);
  CHECK(w.admissionChecks[0].name == "multikueue-ac");
  CHECK(w.admissionChecks[0].state == CheckState::Ready);
  CHECK(rfc(w.admissionChecks[0].lastTransitionTime) == "2026-08-20T10:00:07Z");
  CHECK(w.admissionChecks[0].message == "The workload was admitted on \"worker1\"");
  CHECK(w.admission->clusterName == "worker1");
  CHECK(w.rareStatus->nominatedClusterNames.empty());
  CHECK_FALSE(w.rareStatus.held());  // none of its fields is set: nothing allocated

  REQUIRE(w.conditions.size() == 3);
  const auto& qr = condition(w.conditions, "QuotaReserved");
  CHECK(qr.status == ConditionStatus::True);
  CHECK(qr.reason == "QuotaReserved");
  CHECK(qr.message == "Quota reserved in ClusterQueue team-a-cq");
  CHECK(rfc(qr.lastTransitionTime) == "2026-08-20T10:00:01Z");
  CHECK(rfc(condition(w.conditions, "Admitted").lastTransitionTime) == "2026-08-20T10:00:07Z");
  const auto& pr = condition(w.conditions, "PodsReady");
  CHECK(pr.status == ConditionStatus::False);
  CHECK(pr.reason == "WaitForStart");
  CHECK(isTrue(w.conditions, "Admitted"));
  CHECK_FALSE(isTrue(w.conditions, "PodsReady"));
  CHECK_FALSE(isTrue(w.conditions, "Finished"));
}

TEST_CASE("MultiKueue worker copy keeps the origin label and its own admission",
          "[model][workload]") {
  auto w = decodeFixture<Workload>(
      "kueue-workload-v1beta2-multikueue-worker-copy-CONSTRUCTED.json", Kind::Workload);
  CHECK(w.meta.name == "job-train-llm-3b9f2");
  CHECK(w.meta.uid == "9c0d7e55-3333-4e21-b7a0-000000000003");
  CHECK(w.meta.resourceVersion == "55120");
  CHECK(rfc(w.meta.creationTimestamp) == "2026-08-20T10:00:02Z");
  REQUIRE(w.meta.labels.size() == 1);
  CHECK(*findValue(w.meta.labels, "kueue.x-k8s.io/multikueue-origin") == "multikueue");
  CHECK(findValue(w.meta.labels, "kueue.x-k8s.io/job-uid") == nullptr);
  CHECK(w.meta.ownerReferences.empty());
  CHECK(w.admission->clusterQueue == "gpu-cq");
  CHECK(w.admission->podSetAssignments[0].count == w.podSets[0].count);
  const auto& pr = condition(w.conditions, "PodsReady");
  CHECK(pr.status == ConditionStatus::True);
  CHECK(pr.reason == "Started");
  CHECK(rfc(pr.lastTransitionTime) == "2026-08-20T10:02:41Z");
  CHECK(w.admission->clusterName.empty());
}

TEST_CASE("preempted workload keeps the full preemption message and the past execution time",
          "[model][workload]") {
  auto w = decodeFixture<Workload>(
      "kueue-workload-v1beta2-preempted-fairsharing-requeued-CONSTRUCTED.json", Kind::Workload);
  CHECK(w.meta.name == "job-batch-eval-7c1d0");
  CHECK(w.meta.uid == "1f2e3d4c-4444-4b5a-8c6d-000000000004");
  CHECK(w.rareStatus->accumulatedPastExecutionTimeSeconds == 1830);
  CHECK(w.admission->clusterQueue.empty());  // quota released: no status.admission
  CHECK(w.admission->podSetAssignments.empty());
  CHECK_FALSE(w.admission.held());  // nothing of it set: no block allocated (change 80)
  REQUIRE(w.podSets.size() == 1);
  CHECK(w.podSets[0].count == 2);
  CHECK(milliOf(w.podSets[0].perPodRequests, "nvidia.com/gpu") == 1000);
  REQUIRE(w.conditions.size() == 6);
  const std::string message =
      "Preempted to accommodate a workload (UID: 2a3b4c5d-6666-4e7f-8a9b-000000000006, JobUID: "
      "3b4c5d6e-7777-4f8a-9b0c-000000000007) due to Fair Sharing within the cohort; preemptor "
      "path: /org-root/team-b-cq; preemptee path: /org-root/team-a-cq";
  const auto& preempted = condition(w.conditions, "Preempted");
  CHECK(preempted.status == ConditionStatus::True);
  CHECK(preempted.reason == "InCohortFairSharing");
  CHECK(preempted.message == message);
  CHECK(rfc(preempted.lastTransitionTime) == "2026-08-20T09:31:05Z");
  const auto& evicted = condition(w.conditions, "Evicted");
  CHECK(evicted.reason == "Preempted");
  CHECK(evicted.message == message);
  CHECK(rfc(evicted.lastTransitionTime) == "2026-08-20T09:31:05Z");
  const auto& qr = condition(w.conditions, "QuotaReserved");
  CHECK(qr.status == ConditionStatus::False);
  CHECK(qr.reason == "PendingEvaluation");
  CHECK(rfc(qr.lastTransitionTime) == "2026-08-20T09:31:12Z");
  CHECK(condition(w.conditions, "Requeued").status == ConditionStatus::True);
  CHECK(condition(w.conditions, "Admitted").reason == "NoReservation");
}

TEST_CASE("PodsReady-timeout eviction keeps quota, requeue count and eviction message",
          "[model][workload]") {
  auto w = decodeFixture<Workload>(
      "kueue-workload-v1beta2-podsreadytimeout-evicted-CONSTRUCTED.json", Kind::Workload);
  CHECK(w.meta.name == "job-infer-smoke-a1b2c");
  CHECK(w.meta.namespace_ == "team-c");
  CHECK(w.meta.uid == "4c5d6e7f-8888-4a9b-8c0d-000000000008");
  CHECK(w.rareStatus->requeueCount == 1);
  CHECK(w.admission->clusterQueue == "team-c-cq");
  CHECK(milliOf(w.podSets[0].perPodRequests, "nvidia.com/gpu") == 1000);
  const auto& ev = condition(w.conditions, "Evicted");
  CHECK(ev.status == ConditionStatus::True);
  CHECK(ev.reason == "PodsReadyTimeout");
  CHECK(ev.message == "Exceeded the PodsReady timeout team-c/job-infer-smoke-a1b2c");
  CHECK(rfc(ev.lastTransitionTime) == "2026-08-20T11:30:01Z");
  CHECK(isTrue(w.conditions, "QuotaReserved"));
}

TEST_CASE("DRA workload keeps template claims and the mapped logical resource",
          "[model][workload][dra]") {
  auto w = decodeFixture<Workload>("kueue-workload-v1beta2-dra-rct-admitted-CONSTRUCTED.json",
                                   Kind::Workload);
  CHECK(w.meta.name == "job-sample-dra-rct-job-x7k2p-4f1e2");
  // No uid in the published object: the fixture converter adds a deterministic synthetic one.
  CHECK(w.meta.uid == "2b74cb2c-e20e-57f9-818f-5208f336b65a");
  REQUIRE(w.podSets.size() == 1);
  REQUIRE(w.podSets[0].claims.size() == 1);
  CHECK(w.podSets[0].claims[0].name == "gpu");
  CHECK(w.podSets[0].claims[0].resourceClaimTemplateName == "single-gpu");
  CHECK(w.podSets[0].claims[0].resourceClaimName.empty());
  CHECK(w.podSets[0].perPodRequests.empty());  // cpu "1", memory 200Mi only
  CHECK(w.admission->clusterQueue == "cluster-queue");
  REQUIRE(w.admission->podSetAssignments.size() == 1);
  CHECK(w.admission->podSetAssignments[0].name == w.podSets[0].name);
  CHECK(rfc(condition(w.conditions, "Admitted").lastTransitionTime) == "2026-08-20T12:00:01Z");
}

TEST_CASE("real v1beta1 workloads decode (RayJob issue 5711, plain pod issue 2213)",
          "[model][workload]") {
  SECTION("RayJob: three podsets without extended resources") {
    auto w = decodeFixture<Workload>("kueue-workload-v1beta1-admitted-rayjob-issue5711.json",
                                     Kind::Workload);
    CHECK(w.meta.name == "rayjob-rayjob-sample-l58qx-52ced");
    CHECK(w.meta.namespace_ == "default");
    CHECK(w.meta.uid == "fd8089fc-43e3-4fd1-a4db-f6b214df8fb8");
    CHECK(w.meta.resourceVersion == "7470284");
    CHECK(rfc(w.meta.creationTimestamp) == "2025-06-23T09:17:00Z");
    REQUIRE(w.meta.ownerReferences.size() == 1);
    CHECK(w.meta.ownerReferences[0].kind == "RayJob");
    CHECK(w.queueName == "default");
    REQUIRE(w.podSets.size() == 3);
    CHECK(w.podSets[0].name == "head");
    CHECK(w.podSets[1].name == "small-group");
    CHECK(w.podSets[2].name == "submitter");
    for (const auto& ps : w.podSets) CHECK(ps.perPodRequests.empty());
    CHECK(w.admission->clusterQueue == "cq-test");
    REQUIRE(w.admission->podSetAssignments.size() == 3);
    CHECK(w.admission->podSetAssignments[2].name == "submitter");
    CHECK(rfc(condition(w.conditions, "Admitted").lastTransitionTime) == "2025-06-23T09:17:00Z");
  }
  SECTION("plain pod: GPU request, Ready admission check, being deleted") {
    auto w = decodeFixture<Workload>(
        "kueue-workload-v1beta1-pod-owned-gpu-admissioncheck-issue2213.json", Kind::Workload);
    CHECK(w.meta.name == "pod-dws-pod-4e884");
    CHECK(w.meta.uid == "bd0f33c2-9630-492e-a517-a7dbdf77c943");
    CHECK(rfc(w.meta.deletionTimestamp) == "2024-05-17T14:06:40Z");
    CHECK(w.meta.ownerReferences[0].kind == "Pod");
    CHECK(w.meta.ownerReferences[0].uid == "8f1ec3b1-1865-4bee-b9c6-db8cde6b22bf");
    CHECK(w.queueName == "dws-jobs");
    CHECK(milliOf(w.podSets[0].perPodRequests, "nvidia.com/gpu") == 1000);
    CHECK(w.admission->clusterQueue == "dws-cluster-queue");
    CHECK(w.admission->podSetAssignments[0].count == 1);
    REQUIRE(w.admissionChecks.size() == 1);
    CHECK(w.admissionChecks[0].name == "dws-prov");
    CHECK(w.admissionChecks[0].state == CheckState::Ready);
    CHECK(w.admissionChecks[0].message.empty());
    CHECK(rfc(w.admissionChecks[0].lastTransitionTime) == "2024-05-17T14:02:55Z");
    CHECK(rfc(condition(w.conditions, "Admitted").lastTransitionTime) == "2024-05-17T14:06:40Z");
  }
}

TEST_CASE("status excerpts from issues and docs decode", "[model][workload]") {
  SECTION("issue 6035: deactivated by a rejected admission check, 900 GPUs assigned") {
    auto w = decodeFixture<Workload>(
        "kueue-workload-status-evicted-deactivated-admissioncheck-issue6035.json",
        Kind::Workload);
    CHECK(w.meta.name == "UNKNOWN-not-in-source");
    CHECK(w.admission->clusterQueue == "ml-infra");
    REQUIRE(w.admission->podSetAssignments.size() == 3);
    CHECK(w.admission->podSetAssignments[1].name == "ray-worker-a10-2");
    CHECK(w.admission->podSetAssignments[1].count == 900);
    CHECK(w.admission->podSetAssignments[2].count == 1);  // submitter: no flavors, no usage
    REQUIRE(w.admissionChecks.size() == 1);
    CHECK(w.admissionChecks[0].state == CheckState::Pending);
    CHECK(w.admissionChecks[0].message == "Reset to Pending after eviction. Previously: Rejected");
    const auto& ev = condition(w.conditions, "Evicted");
    CHECK(ev.reason == "DeactivatedDueToAdmissionCheck");
    CHECK(ev.message ==
          "The workload is deactivated due to Admission check(s): [lilypad-gpu-capacity-check], "
          "were rejected");
    CHECK(rfc(ev.lastTransitionTime) == "2025-07-16T18:41:13Z");
    CHECK(condition(w.conditions, "PodsReady").reason == "PodsReady");
  }
  SECTION("issue 6998: Finished is terminal, QuotaReserved stays True") {
    auto w = decodeFixture<Workload>("kueue-workload-status-finished-succeeded-issue6998.json",
                                     Kind::Workload);
    const auto& fin = condition(w.conditions, "Finished");
    CHECK(fin.status == ConditionStatus::True);
    CHECK(fin.reason == "Succeeded");
    CHECK(fin.message == "Pods succeeded: 1/1.");
    CHECK(rfc(fin.lastTransitionTime) == "2025-09-24T21:26:48Z");
    CHECK(isTrue(w.conditions, "QuotaReserved"));
    CHECK(rfc(condition(w.conditions, "PodsReady").lastTransitionTime) == "2025-09-24T21:21:48Z");
  }
  SECTION("pending quota: legacy reason and resourceRequests") {
    auto w = decodeFixture<Workload>("kueue-workload-status-pending-quota-docs.json",
                                     Kind::Workload);
    const auto& qr = condition(w.conditions, "QuotaReserved");
    CHECK(qr.status == ConditionStatus::False);
    CHECK(qr.reason == "Pending");
    CHECK(qr.message ==
          "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor "
          "default-flavor in ClusterQueue");
    REQUIRE(w.rareStatus->resourceRequests.size() == 1);
    CHECK(w.rareStatus->resourceRequests[0].name == "main");
    // cpu "3", memory 600Mi: core resources
    CHECK(w.rareStatus->resourceRequests[0].resources.empty());
  }
  SECTION("docs: pre-0.15 preemption message") {
    auto w = decodeFixture<Workload>("kueue-workload-status-preempted-docs.json", Kind::Workload);
    const auto& p = condition(w.conditions, "Preempted");
    CHECK(p.reason == "InClusterQueue");
    CHECK(p.message ==
          "Preempted to accommodate a workload (UID: 5c023c28-8533-4927-b266-56bca5e310c1, "
          "JobUID: 4548c8bd-c399-4027-bb02-6114f3a8cdeb) due to prioritization in the ClusterQueue");
    CHECK(rfc(p.lastTransitionTime) == "2025-03-07T21:19:54Z");
  }
}

// v1beta1 as served by Kueue ≥ 0.15 for the preempted workload above: the misspelled counter and
// spec.priorityClassName/priorityClassSource instead of priorityClassRef.
static const char* kV1beta1Workload = R"({
  "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
  "metadata": {"name": "job-batch-eval-7c1d0", "namespace": "team-a",
               "uid": "1f2e3d4c-4444-4b5a-8c6d-000000000004", "resourceVersion": "884977"},
  "spec": {"queueName": "team-a-lq", "priority": 10, "priorityClassName": "batch-low",
           "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass", "active": false,
           "podSets": [{"name": "main", "count": 2, "template": {"spec": {"containers": [
             {"name": "eval", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}]},
  "status": {"accumulatedPastExexcutionTimeSeconds": 1830,
             "nominatedClusterNames": ["worker1", "worker2"],
             "requeueState": {"count": 3, "requeueAt": "2026-08-20T09:40:00Z"}}
})";

TEST_CASE("v1beta1 workload: misspelled past-execution field and priorityClassName",
          "[model][workload]") {
  auto w = decodeJson<Workload>(kV1beta1Workload, Kind::Workload);
  CHECK(w.rareStatus->accumulatedPastExecutionTimeSeconds == 1830);
  CHECK(w.priority == 10);
  CHECK_FALSE(w.active);
  CHECK(w.rareStatus->requeueCount == 3);
  REQUIRE(w.rareStatus->nominatedClusterNames.size() == 2);
  CHECK(w.rareStatus->nominatedClusterNames[1] == "worker2");
  CHECK(w.rareStatus->resourceRequests.empty());
  // A copy is deep: the decoded objects are values.
  Workload copy = w;
  w.rareStatus.mut().requeueCount = 4;
  CHECK(copy.rareStatus->requeueCount == 3);
  CHECK(copy.rareStatus->nominatedClusterNames.size() == 2);
  // limits-only extended resource counts as the request
  CHECK(milliOf(w.podSets[0].perPodRequests, "nvidia.com/gpu") == 1000);
}

TEST_CASE("workload podset arithmetic: containers summed, init containers maxed",
          "[model][workload]") {
  // containers: a 2 + b 3 = 5 GPUs; init containers 4 and 6 → max(5, 6) = 6 per pod.
  auto w = decodeJson<Workload>(R"({"metadata": {"name": "w", "uid": "u"}, "spec": {"podSets": [
    {"name": "main", "count": 3, "template": {"spec": {
      "initContainers": [{"name": "i1", "resources": {"requests": {"nvidia.com/gpu": "4"}}},
                         {"name": "i2", "resources": {"requests": {"nvidia.com/gpu": "6"}}}],
      "containers": [{"name": "a", "resources": {"requests": {"nvidia.com/gpu": "2"}}},
                     {"name": "b", "resources": {"requests": {"nvidia.com/gpu": 3}}}]}}}]}})",
                                Kind::Workload);
  CHECK(w.podSets[0].count == 3);
  CHECK(milliOf(w.podSets[0].perPodRequests, "nvidia.com/gpu") == 6000);
}

TEST_CASE(
    "an admission check's message is pooled when short, owned when long, a podset's names pooled",
    "[model][workload]") {
  // The same MultiKueue message on every Workload a worker admitted: one pooled text (change 106).
  const std::string longMessage(100, 'm');
  auto workload = [&](const std::string& name, const std::string& message) {
    return decodeJson<Workload>(R"({"metadata": {"name": ")" + name + R"(", "uid": "u-)" + name +
                                    R"("}, "spec": {"podSets": [{"name": "launcher", "count": 1,
        "template": {"spec": {"containers": [{"name": "c"}], "resourceClaims": [{"name": "gpu",
        "resourceClaimTemplateName": "single-gpu"}, {"name": "fixed", "resourceClaimName":
        "a-pre-created-claim"}]}}}]}, "status": {"admissionChecks": [{"name": "multikueue-ac",
        "state": "Ready", "lastTransitionTime": "2026-08-20T10:00:07Z", "message": ")" +
                                    message + R"("}]}})",
                                Kind::Workload);
  };
  const std::string admitted = R"(The workload was admitted on \"worker1\")";
  auto a = workload("a", admitted);
  auto b = workload("b", admitted);
  auto c = workload("c", longMessage);
  REQUIRE(a.admissionChecks.size() == 1);
  CHECK(a.admissionChecks[0].message == "The workload was admitted on \"worker1\"");
  CHECK(a.admissionChecks[0].message.pooled());
  CHECK(a.admissionChecks[0].message.data() == b.admissionChecks[0].message.data());  // shared
  CHECK(rfc(a.admissionChecks[0].lastTransitionTime) == "2026-08-20T10:00:07Z");
  REQUIRE(c.admissionChecks.size() == 1);
  CHECK(c.admissionChecks[0].message == longMessage);
  CHECK_FALSE(c.admissionChecks[0].message.pooled());  // a long message is the Workload's own
  // A podset's name and its claims' names and template are pooled; a pre-created claim's name is
  // kept inline.
  REQUIRE(a.podSets.size() == 1);
  CHECK(a.podSets[0].name == "launcher");
  CHECK(a.podSets[0].name.pooled());
  REQUIRE(a.podSets[0].claims.size() == 2);
  CHECK(a.podSets[0].claims[0].name == "gpu");
  CHECK(a.podSets[0].claims[0].resourceClaimTemplateName == "single-gpu");
  CHECK(a.podSets[0].claims[0].resourceClaimTemplateName.data() ==
        b.podSets[0].claims[0].resourceClaimTemplateName.data());
  CHECK(a.podSets[0].claims[0].resourceClaimName.empty());
  CHECK(a.podSets[0].claims[1].name == "fixed");
  CHECK(a.podSets[0].claims[1].resourceClaimTemplateName.empty());
  CHECK(a.podSets[0].claims[1].resourceClaimName == "a-pre-created-claim");
}

TEST_CASE("workload schema errors name the field", "[model][workload]") {
  CHECK(decodeError(R"({"metadata": {"name": "w", "uid": "u"},
                        "status": {"conditions": [{"type": "A", "status": "True"},
                          {"type": "B"}, {"type": "C", "lastTransitionTime": "yesterday"}]}})",
                    Kind::Workload)
            .rfind("status.conditions[2].lastTransitionTime: invalid RFC 3339 time \"yesterday\"",
                   0) == 0);
  CHECK(decodeError(R"({"metadata": {"name": "w", "uid": "u"}, "spec": {"podSets": [
                        {"name": "main", "count": -1}]}})",
                    Kind::Workload) == "spec.podSets[0].count: must not be negative (Workload w)");
  CHECK(decodeError(R"({"metadata": {"name": "w", "uid": "u"}, "spec": {"priority": 4294967296}})",
                    Kind::Workload) ==
        "spec.priority: 4294967296 is out of the int32 range (Workload w)");
  CHECK(decodeError(R"({"metadata": {"name": "w", "uid": "u"}, "status": {"admission":
                        {"podSetAssignments": [{"resourceUsage": {"nvidia.com/gpu": "lots"}}]}}})",
                    Kind::Workload)
            .rfind("status.admission.podSetAssignments[0].resourceUsage[\"nvidia.com/gpu\"]: "
                   "invalid quantity \"lots\"",
                   0) == 0);
  // An assignment's flavors are checked though not kept (change 106), as its resourceUsage.
  CHECK(decodeError(R"({"metadata": {"name": "w", "uid": "u"}, "status": {"admission":
                        {"podSetAssignments": [{"name": "main", "flavors": {"nvidia.com/gpu": 7}}]}}})",
                    Kind::Workload) ==
        "status.admission.podSetAssignments[0].flavors[\"nvidia.com/gpu\"]: expected string, got "
        "number (Workload w)");
  // A core resource's flavor is not read at all; what is kept of an assignment is its name and
  // count.
  auto kept =
      decodeJson<Workload>(R"({"metadata": {"name": "w", "uid": "u"}, "status": {"admission":
      {"podSetAssignments": [{"name": "main", "count": 3, "flavors": {"cpu": 7,
       "nvidia.com/gpu": "h100"}, "resourceUsage": {"nvidia.com/gpu": "3"}}]}}})",
                           Kind::Workload);
  REQUIRE(kept.admission->podSetAssignments.size() == 1);
  CHECK(kept.admission->podSetAssignments[0].name == "main");
  CHECK(kept.admission->podSetAssignments[0].count == 3);
  CHECK(decodeError(R"({"metadata": {"name": "w", "uid": "u"}, "status": {"clusterName": 7}})",
                    Kind::Workload) == "status.clusterName: expected string, got number (Workload w)");
  // apiVersion and the priority class are checked though not kept (change 80).
  CHECK(decodeError(R"({"metadata": {"name": "w", "uid": "u"}, "apiVersion": 2})",
                    Kind::Workload) == "apiVersion: expected string, got number (Workload w)");
  CHECK(decodeError(R"({"metadata": {"name": "w", "uid": "u"},
                        "spec": {"priorityClassName": ["high"]}})",
                    Kind::Workload) ==
        "spec.priorityClassName: expected string, got array (Workload w)");
  CHECK(decodeError(R"({"metadata": {"name": "w", "uid": "u"},
                        "spec": {"priorityClassRef": {"name": 1}}})",
                    Kind::Workload) ==
        "spec.priorityClassRef.name: expected string, got number (Workload w)");
  CHECK(decodeError(R"({"kind": "Pod", "metadata": {"name": "w", "uid": "u"}})", Kind::Workload) ==
        "kind: expected Workload, got \"Pod\"");  // kind precedes metadata: no identity yet
}
