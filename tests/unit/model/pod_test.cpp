// Pod decoding. Expected values read by hand from ../shared/fixtures/k8s/pod-*.yaml; quantities
// are milli-units ("8" GPUs = 8000).
#include "firstwork/model/pod.hpp"

#include "model_test_util.hpp"

using namespace firstwork;
using namespace firstwork::model;
using firstwork::testing::condition;
using firstwork::testing::decodeError;
using firstwork::testing::decodeFixture;
using firstwork::testing::decodeJson;
using firstwork::testing::rfc;

TEST_CASE("running Kueue job pod: linkage metadata, GPU request, readiness, startedAt",
          "[model][pod]") {
  auto p = decodeFixture<Pod>("pod-job-kueue-admitted-running-gpu-CONSTRUCTED.json", Kind::Pod);
  CHECK(p.meta.name == "train-llm-0-5xk2v");
  CHECK(p.meta.namespace_ == "team-a");
  CHECK(p.meta.uid == "11111111-aaaa-4bbb-8ccc-000000000101");
  CHECK(rfc(p.meta.creationTimestamp) == "2026-08-20T10:00:09Z");
  // 9 labels (job name, index and uid, Kueue's podset and queue names): nothing reads them, none
  // is kept. The one annotation links the pod to its Workload.
  CHECK(p.meta.labels.empty());
  REQUIRE(p.meta.annotations.size() == 1);
  CHECK(*findValue(p.meta.annotations, "kueue.x-k8s.io/workload") == "job-train-llm-3b9f2");
  REQUIRE(p.meta.ownerReferences.size() == 1);
  CHECK(p.meta.ownerReferences[0].uid == "0d2b7c41-2222-4a8f-8c11-000000000002");
  CHECK(p.nodeName == "gpu-node-07");
  REQUIRE(p.requests.size() == 1);  // cpu and memory are not extended resources
  CHECK(milliOf(p.requests, "nvidia.com/gpu") == 8000);
  CHECK(p.claims.empty());
  CHECK(p.phase == PodPhase::Running);
  // Of the five, the three built-in types nothing reads are not kept (kUnreadPodConditionTypes).
  REQUIRE(p.conditions.size() == 2);
  CHECK(rfc(condition(p.conditions, "PodScheduled").lastTransitionTime) == "2026-08-20T10:00:11Z");
  CHECK(rfc(condition(p.conditions, "Ready").lastTransitionTime) == "2026-08-20T10:02:40Z");
  CHECK(findCondition(p.conditions, "ContainersReady") == nullptr);
  CHECK(findCondition(p.conditions, "Initialized") == nullptr);
  REQUIRE(p.containers.size() == 1);
  const auto& c = p.containers[0];
  CHECK(c.name == "trainer");
  CHECK_FALSE(c.init);
  CHECK(c.ready);
  CHECK(c.restartCount == 0);
  CHECK(c.state == ContainerStateKind::Running);
  CHECK(rfc(c.startedAt) == "2026-08-20T10:02:38Z");
  CHECK_FALSE(c.finishedAt.has_value());
}

TEST_CASE("a gated pod decodes pending and unscheduled", "[model][pod]") {
  auto p = decodeFixture<Pod>("pod-kueue-gated-admission-pending-CONSTRUCTED.json", Kind::Pod);
  CHECK(p.meta.uid == "22222222-aaaa-4bbb-8ccc-000000000102");
  CHECK(p.nodeName.empty());
  CHECK(milliOf(p.requests, "nvidia.com/gpu") == 1000);
  CHECK(p.phase == PodPhase::Pending);
  const auto& s = condition(p.conditions, "PodScheduled");
  CHECK(s.status == ConditionStatus::False);
  CHECK(s.reason == "SchedulingGated");
  CHECK(rfc(s.lastTransitionTime) == "2026-08-20T10:10:00Z");
  CHECK(p.containers.empty());
  CHECK(p.meta.labels.empty());  // kueue.x-k8s.io/queue-name: Kueue's, not read here
}

TEST_CASE("waiting containers keep their reason, not their message", "[model][pod]") {
  struct Case {
    const char* file;
    const char* uid;
    const char* reason;
    int32_t restarts;
    PodPhase phase;
  };
  const Case cases[] = {
      {"pod-waiting-errimagepull-CONSTRUCTED.json", "33333333-aaaa-4bbb-8ccc-000000000103",
       "ErrImagePull", 0, PodPhase::Pending},
      {"pod-waiting-imagepullbackoff-CONSTRUCTED.json", "33333333-aaaa-4bbb-8ccc-000000000103",
       "ImagePullBackOff", 0, PodPhase::Pending},
      {"pod-waiting-crashloopbackoff-CONSTRUCTED.json", "44444444-aaaa-4bbb-8ccc-000000000104",
       "CrashLoopBackOff", 7, PodPhase::Running},
      {"pod-waiting-createcontainerconfigerror-CONSTRUCTED.json",
       "55555555-aaaa-4bbb-8ccc-000000000105", "CreateContainerConfigError", 0, PodPhase::Pending},
  };
  for (const auto& tc : cases) {
    INFO(tc.file);
    auto p = decodeFixture<Pod>(tc.file, Kind::Pod);
    CHECK(p.meta.uid == tc.uid);
    CHECK(p.phase == tc.phase);
    REQUIRE(p.containers.size() == 1);
    const auto& c = p.containers[0];
    CHECK(c.state == ContainerStateKind::Waiting);
    CHECK(c.reason == tc.reason);
    CHECK(c.restartCount == tc.restarts);
    CHECK_FALSE(c.ready);
    CHECK_FALSE(c.startedAt.has_value());  // lastState is not the current state
    CHECK(c.exitCode == 0);
  }
  auto crash = decodeFixture<Pod>("pod-waiting-crashloopbackoff-CONSTRUCTED.json", Kind::Pod);
  const auto& ready = condition(crash.conditions, "Ready");
  CHECK(ready.reason == "ContainersNotReady");
  CHECK(rfc(ready.lastTransitionTime) == "2026-08-20T09:20:11Z");
}

TEST_CASE("DRA pod joins spec.resourceClaims with status.resourceClaimStatuses",
          "[model][pod][dra]") {
  auto p = decodeFixture<Pod>("pod-dra-resourceclaimstatuses-running-CONSTRUCTED.json", Kind::Pod);
  CHECK(p.meta.uid == "d36ca24f-9949-4c33-9d47-c06846f775b1");
  CHECK(p.nodeName == "conformance-test-np1-qcqc8-bpdtl-wv2gs");
  REQUIRE(p.claims.size() == 1);
  CHECK(p.claims[0].name == "single-gpu");
  CHECK(p.claims[0].resourceClaimTemplateName == "gpu-claim-template");
  CHECK(p.claims[0].resourceClaimName.empty());
  CHECK(p.claims[0].generatedClaimName == "dra-gpu-example-798fccd4d-sfl2p-single-gpu-d2jzk");
  CHECK(p.requests.empty());
  REQUIRE(p.containers.size() == 1);
  CHECK(rfc(p.containers[0].startedAt) == "2026-07-06T13:16:24Z");

  auto pod0 = decodeFixture<Pod>("dra-resourceclaimtemplate-v1-and-pods-dra-example-driver-3.json",
                                 Kind::Pod);
  CHECK(pod0.meta.name == "pod0");
  REQUIRE(pod0.claims.size() == 1);
  CHECK(pod0.claims[0].resourceClaimTemplateName == "single-gpu");
  CHECK(pod0.claims[0].generatedClaimName.empty());
  CHECK(pod0.phase == PodPhase::Unknown);  // no status yet

  // What a record keeps of a claim (PodClaimRef): its name, its template, and the claim it
  // resolves to: the generated one, a pre-created one, or none yet.
  using firstwork::model::PodClaimRef;
  PodClaimRef::NameBuffer buf;
  const PodClaimRef generated(p.claims[0], p.meta.name);
  CHECK(generated.name == "single-gpu");
  CHECK(generated.templateName == "gpu-claim-template");
  // Kubernetes named it "<pod>-<claim>-" and 5 characters: only those are kept, inline (the
  // 48-character name took a heap block), and the name is rebuilt from the pod's.
  const std::string kept = std::string(1, PodClaimRef::kGeneratedMark) + "d2jzk";
  CHECK(generated.claim == std::string_view(kept));
  CHECK_FALSE(generated.claim.onHeap());
  const std::string_view whole = "dra-gpu-example-798fccd4d-sfl2p-single-gpu-d2jzk";
  CHECK(generated.claimName(p.meta.name, buf) == whole);
  CHECK(generated.resolvesTo(p.meta.name, whole));
  CHECK_FALSE(generated.resolvesTo("another-pod", whole));
  CHECK(generated.claimName(std::string(400, 'x'), buf).empty());  // past any name: none
  CHECK(generated.claimName({}, buf).empty());                     // no pod: none
  CHECK(PodClaimRef(pod0.claims[0], pod0.meta.name).claim.empty());
  CHECK(PodClaimRef(pod0.claims[0], pod0.meta.name).claimName(pod0.meta.name, buf).empty());
  firstwork::model::PodClaim preCreated;
  preCreated.name = "gpu";
  preCreated.resourceClaimName = "shared-gpus";
  preCreated.generatedClaimName = "ignored-when-pre-created";
  CHECK(firstwork::model::claimNameOf(preCreated) == "shared-gpus");
  const PodClaimRef pre(preCreated, "pod-a");
  CHECK(pre.claim == "shared-gpus");
  CHECK(pre.claimName("pod-a", buf) == "shared-gpus");
  CHECK(pre.templateName.empty());
  CHECK_FALSE(pre == generated);
  CHECK(pre == PodClaimRef(preCreated, "pod-a"));
  // A pre-created claim named like a generated one is kept whole: the name is given, not made.
  firstwork::model::PodClaim lookalike = preCreated;
  lookalike.resourceClaimName = "pod-a-gpu-x7k2p";
  CHECK(PodClaimRef(lookalike, "pod-a").claim == "pod-a-gpu-x7k2p");
  // A generated name without the pod's and the claim's names in front (both cut short when the
  // pod's name is long) is kept whole too, and read back as it is.
  firstwork::model::PodClaim cut;
  cut.name = "gpu";
  cut.resourceClaimTemplateName = "single-gpu";
  const std::string longPod = "trainer-" + std::string(52, 'a');
  cut.generatedClaimName = longPod.substr(0, 28) + "-gpu-q9w2z";
  const PodClaimRef cutRef(cut, longPod);
  CHECK(cutRef.claim == std::string_view(cut.generatedClaimName));
  CHECK(cutRef.claimName(longPod, buf) == cut.generatedClaimName);
  // A generated suffix too long to keep inline, and a name beginning with the mark (not a name
  // the API server accepts: kept as none).
  firstwork::model::PodClaim longSuffix = cut;
  longSuffix.generatedClaimName = "p-gpu-" + std::string(40, 'z');
  CHECK(PodClaimRef(longSuffix, "p").claim.onHeap());
  CHECK(PodClaimRef(longSuffix, "p").claimName("p", buf) == longSuffix.generatedClaimName);
  firstwork::model::PodClaim marked = cut;
  marked.generatedClaimName = std::string(1, PodClaimRef::kGeneratedMark) + "abc";
  CHECK(PodClaimRef(marked, "p").claimName("p", buf).empty());
  STATIC_REQUIRE(sizeof(firstwork::model::PodClaimRef) == 48);
}

TEST_CASE("failed plain pod: null lastTransitionTime, deletion, termination target",
          "[model][pod]") {
  auto p = decodeFixture<Pod>("pod-kueue-plain-pod-unschedulable-stoppedbykueue-issue2213.json",
                              Kind::Pod);
  CHECK(p.meta.name == "dws-pod");
  CHECK(p.meta.uid == "8f1ec3b1-1865-4bee-b9c6-db8cde6b22bf");
  CHECK(p.meta.resourceVersion == "1713714");
  CHECK(rfc(p.meta.deletionTimestamp) == "2024-05-17T14:06:40Z");
  CHECK(p.meta.labels.empty());       // kueue.x-k8s.io/managed and queue-name are not read
  CHECK(p.meta.annotations.empty());  // cluster-autoscaler.kubernetes.io/* are not kept
  CHECK(milliOf(p.requests, "nvidia.com/gpu") == 1000);
  CHECK(p.phase == PodPhase::Failed);
  const auto& s = condition(p.conditions, "PodScheduled");
  CHECK(s.reason == "Unschedulable");
  CHECK_FALSE(s.lastTransitionTime.has_value());  // lastTransitionTime: null
  const auto& t = condition(p.conditions, "TerminationTarget");
  CHECK(t.reason == "StoppedByKueue");
  CHECK(rfc(t.lastTransitionTime) == "2024-05-17T14:06:40Z");
}

TEST_CASE("pod requests: containers summed, limits stand in, sidecars add, init containers maxed",
          "[model][pod]") {
  auto p = decodeJson<Pod>(R"({
    "metadata": {"name": "p", "uid": "u"},
    "spec": {
      "initContainers": [
        {"name": "fetch", "resources": {"requests": {"nvidia.com/gpu": "2"}}},
        {"name": "metrics", "restartPolicy": "Always", "resources": {"limits": {"nvidia.com/gpu": "1"}}},
        {"name": "warmup", "resources": {"requests": {"nvidia.com/gpu": "4", "cpu": "64"}}}],
      "containers": [
        {"name": "trainer", "resources": {"requests": {"nvidia.com/gpu": "2", "example.com/nic": "1"},
                                          "limits": {"nvidia.com/gpu": "2"}}},
        {"name": "helper", "resources": {"limits": {"example.com/nic": "1", "memory": "1Gi"}}}]},
    "status": {"phase": "Running",
      "initContainerStatuses": [
        {"name": "fetch", "ready": false, "restartCount": 0, "state": {"terminated":
          {"exitCode": 0, "reason": "Completed", "startedAt": "2026-08-20T10:00:12Z",
           "finishedAt": "2026-08-20T10:01:00Z"}}},
        {"name": "metrics", "ready": true, "restartCount": 1, "state": {"running":
          {"startedAt": "2026-08-20T10:01:01Z"}}},
        {"name": "warmup", "ready": false, "restartCount": 0, "state": {"terminated":
          {"exitCode": 137, "reason": "OOMKilled", "message": "killed",
           "startedAt": "2026-08-20T10:01:02Z", "finishedAt": "2026-08-20T10:01:30Z"}}}],
      "containerStatuses": [
        {"name": "trainer", "ready": true, "restartCount": 0, "state": {"running": {"startedAt": "2026-08-20T10:01:31Z"}}},
        {"name": "helper", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]}})",
                           Kind::Pod);
  // GPUs: containers 2 (trainer); sidecar "metrics" 1 (limit only) runs beside them → 3.
  //       init: fetch 2 + 0 sidecars = 2; metrics: 1; warmup 4 + 1 sidecar = 5 → max(3, 5) = 5.
  CHECK(milliOf(p.requests, "nvidia.com/gpu") == 5000);
  // NICs: trainer 1 + helper 1 (limit only) = 2; no init container asks → 2.
  CHECK(milliOf(p.requests, "example.com/nic") == 2000);
  CHECK(p.requests.size() == 2);
  REQUIRE(p.containers.size() == 5);  // regular first, then init
  CHECK(p.containers[0].name == "trainer");
  CHECK(p.containers[1].state == ContainerStateKind::Waiting);
  CHECK(p.containers[1].reason == "ContainerCreating");
  CHECK(p.containers[2].name == "fetch");
  CHECK(p.containers[2].init);
  CHECK(p.containers[2].state == ContainerStateKind::Terminated);
  CHECK(p.containers[2].reason == "Completed");
  CHECK(rfc(p.containers[2].finishedAt) == "2026-08-20T10:01:00Z");
  CHECK(p.containers[3].restartCount == 1);
  CHECK(rfc(p.containers[3].startedAt) == "2026-08-20T10:01:01Z");
  CHECK(p.containers[4].exitCode == 137);
  CHECK(p.containers[4].reason == "OOMKilled");
  CHECK(rfc(p.containers[4].startedAt) == "2026-08-20T10:01:02Z");
}

TEST_CASE("pod claims: pre-created claim, legacy source form, status-only entry", "[model][pod]") {
  auto p = decodeJson<Pod>(R"({"metadata": {"name": "p", "uid": "u"},
    "spec": {"resourceClaims": [
      {"name": "shared", "resourceClaimName": "team-a-shared-gpu"},
      {"name": "old", "source": {"resourceClaimTemplateName": "tmpl"}}]},
    "status": {"resourceClaimStatuses": [
      {"name": "old", "resourceClaimName": "p-old-x1y2z"},
      {"name": "orphan", "resourceClaimName": "p-orphan-abcde"}]}})",
                           Kind::Pod);
  REQUIRE(p.claims.size() == 3);
  CHECK(p.claims[0].resourceClaimName == "team-a-shared-gpu");
  CHECK(p.claims[0].generatedClaimName.empty());
  CHECK(p.claims[1].resourceClaimTemplateName == "tmpl");
  CHECK(p.claims[1].generatedClaimName == "p-old-x1y2z");
  CHECK(p.claims[2].name == "orphan");
  CHECK(p.claims[2].generatedClaimName == "p-orphan-abcde");
}

TEST_CASE("pod conditions: the built-in ones nothing reads are dropped, every other type kept",
          "[model][pod]") {
  auto p = decodeJson<Pod>(R"({"metadata": {"name": "p", "uid": "u"},
    "status": {"conditions": [
      {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": "2026-08-20T10:00:01Z"},
      {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-08-20T10:00:02Z"},
      {"type": "firstwork.dev/FirstWork", "status": "True", "lastTransitionTime": "2026-08-20T10:05:00Z"},
      {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "lastTransitionTime": "2026-08-20T10:00:03Z"},
      {"type": "ContainersReady", "status": "False", "lastTransitionTime": "2026-08-20T10:00:03Z"},
      {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "lastTransitionTime": "2026-08-20T10:06:00Z"},
      {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-08-20T10:00:00Z"}]}})",
                           Kind::Pod);
  std::vector<std::string> types;
  for (const auto& c : p.conditions) types.push_back(c.type);
  CHECK(types == std::vector<std::string>{"firstwork.dev/FirstWork", "Ready", "DisruptionTarget", "PodScheduled"});
  CHECK(rfc(condition(p.conditions, "firstwork.dev/FirstWork").lastTransitionTime) == "2026-08-20T10:05:00Z");
  CHECK(condition(p.conditions, "DisruptionTarget").reason == "PreemptionByScheduler");
}

TEST_CASE("pod schema errors name the field", "[model][pod]") {
  CHECK(decodeError(R"({"metadata": {"name": "p", "namespace": "ns", "uid": "u"}, "status":
                        {"containerStatuses": [{"name": "a"}, {"name": "b", "state": {"running":
                        {"startedAt": 1754000000}}}]}})",
                    Kind::Pod) ==
        "status.containerStatuses[1].state.running.startedAt: expected string, got number "
        "(Pod ns/p)");
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": [
                        {"name": "a", "resources": {"limits": {"nvidia.com/gpu": "-1"}}}]}})",
                    Kind::Pod)
            .rfind("spec.containers[0].resources.limits[\"nvidia.com/gpu\"]: invalid quantity", 0) ==
        0);
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u"}, "status": {"containerStatuses": [
                        {"name": "a", "restartCount": "7"}]}})",
                    Kind::Pod) ==
        "status.containerStatuses[0].restartCount: expected integer, got string (Pod p)");
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u"}, "status": {"containerStatuses": [
                        {"name": "a", "ready": "true"}]}})",
                    Kind::Pod) ==
        "status.containerStatuses[0].ready: expected boolean, got string (Pod p)");
  // spec.schedulingGates and status.startTime are checked though not kept (change 80).
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u"}, "spec": {"schedulingGates":
                        {"name": "kueue.x-k8s.io/admission"}}})",
                    Kind::Pod) == "spec.schedulingGates: expected array, got object (Pod p)");
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u"}, "status": {"startTime": "now"}})",
                    Kind::Pod)
            .rfind("status.startTime: invalid RFC 3339 time \"now\"", 0) == 0);
  // So are the conditions' and the containers' messages (change 89).
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u"}, "status": {"conditions": [
                        {"type": "Ready", "status": "False", "message": 7}]}})",
                    Kind::Pod) ==
        "status.conditions[0].message: expected string, got number (Pod p)");
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u"}, "status": {"containerStatuses": [
                        {"name": "a", "state": {"waiting": {"reason": "ErrImagePull",
                         "message": ["not", "a", "string"]}}}]}})",
                    Kind::Pod) ==
        "status.containerStatuses[0].state.waiting.message: expected string, got array (Pod p)");
  CHECK(decodeError(R"({"metadata": {"name": "p", "uid": "u"}, "status": {"initContainerStatuses": [
                        {"name": "a", "state": {"terminated": {"exitCode": 1, "message": {}}}}]}})",
                    Kind::Pod) ==
        "status.initContainerStatuses[0].state.terminated.message: expected string, got object "
        "(Pod p)");
}
