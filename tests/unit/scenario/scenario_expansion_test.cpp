#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "detail/merge.hpp"
#include "detail/naming.hpp"
#include "detail/placeholders.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/scenario/scenario.hpp"

using namespace firstwork;
using namespace firstwork::scenario;
using namespace std::chrono_literals;
using detail::Json;

namespace {

Scenario load(const std::string& yaml) {
  auto sc = loadScenarioFromString(yaml, "inline");
  if (!sc) FAIL(sc.error());
  return std::move(*sc);
}

const Step& stepWhere(const Scenario& sc, const std::string& originPart, Offset at) {
  for (const auto& s : sc.steps)
    if (s.origin.find(originPart) != std::string::npos && s.at == at) return s;
  FAIL("no step " << originPart << " at " << formatOffset(at));
  throw std::logic_error("unreachable");
}

// True when every character of `s` is in `alphabet` (std::regex trips GCC 12 warnings under
// sanitizers, so the name shapes are checked by hand).
bool onlyOf(const std::string& s, const std::string& alphabet) {
  return s.find_first_not_of(alphabet) == std::string::npos;
}

const Json* cond(const Json& status, const std::string& type) {
  for (const auto& c : status["conditions"])
    if (c["type"] == type) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("patch merges conditions by type and named lists by name", "[scenario]") {
  Json target = Json::parse(R"({"metadata": {"name": "w", "labels": {"a": "1", "b": "2"}},
    "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "m"},
                              {"type": "Admitted", "status": "False"}],
               "admissionChecks": [{"name": "ac", "state": "Pending"}],
               "nominatedClusterNames": ["w1", "w2"], "clusterName": "x"}})");
  detail::mergePatch(target, Json::parse(R"({"metadata": {"labels": {"b": null, "c": "3"}},
    "status": {"conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"},
                              {"type": "Admitted", "$patch": "delete"},
                              {"type": "PodsReady", "status": "False"}],
               "admissionChecks": [{"name": "ac", "state": "Ready"}],
               "nominatedClusterNames": ["w2"], "clusterName": null}})"));
  CHECK(target["metadata"]["labels"] == Json::parse(R"({"a": "1", "c": "3"})"));
  // Replaced whole by type: the old message does not linger.
  CHECK(target["status"]["conditions"] == Json::parse(R"([{"type": "QuotaReserved", "status": "True",
      "reason": "QuotaReserved"}, {"type": "PodsReady", "status": "False"}])"));
  CHECK(target["status"]["admissionChecks"] == Json::parse(R"([{"name": "ac", "state": "Ready"}])"));
  CHECK(target["status"]["nominatedClusterNames"] == Json::parse(R"(["w2"])"));  // plain list replaced
  CHECK_FALSE(target["status"].contains("clusterName"));
}

TEST_CASE("placeholders render drill times, object UIDs and Job UIDs", "[scenario]") {
  detail::RenderContext ctx;
  ctx.drillStart = parseRfc3339("2026-08-20T10:00:00Z").value();
  ctx.cluster = "manager";
  ctx.uid = [](const std::string& cluster, const std::string& kind, const std::string& ns,
               const std::string& name) -> std::optional<std::string> {
    if (cluster == "manager" && kind == "Workload" && ns == "team-a" && name == "w") return "uid-w";
    if (cluster == "worker-1" && kind == "Node" && ns.empty() && name == "n-0") return "uid-n";
    return std::nullopt;
  };
  ctx.jobUid = [](const std::string& cluster, const std::string& ns, const std::string& name) {
    return cluster + "|" + ns + "|" + name;
  };
  CHECK(detail::renderString("{{t}}", ctx).value() == "2026-08-20T10:00:00Z");
  CHECK(detail::renderString("{{t+8m}}", ctx).value() == "2026-08-20T10:08:00Z");
  CHECK(detail::renderString("{{t-1h}}", ctx).value() == "2026-08-20T09:00:00Z");
  CHECK(detail::renderString("{{t+6m30s}}", ctx).value() == "2026-08-20T10:06:30Z");
  CHECK(detail::renderString("(UID: {{uid:team-a/w}}, JobUID: {{jobuid:team-a/j}})", ctx).value() ==
        "(UID: uid-w, JobUID: manager|team-a|j)");
  CHECK(detail::renderString("{{uid:Node:n-0@worker-1}}", ctx).value() == "uid-n");
  CHECK(detail::renderString("{{jobuid:ns/j@worker-2}}", ctx).value() == "worker-2|ns|j");
  CHECK_FALSE(detail::renderString("{{uid:team-a/missing}}", ctx).ok());
  CHECK_FALSE(detail::parsePlaceholder("uid:Pod:no-namespace").ok());
  CHECK_FALSE(detail::parsePlaceholder("uid:Node:ns/name").ok());
  CHECK_FALSE(detail::parsePlaceholder("uid:Gadget:ns/n").ok());
  CHECK_FALSE(detail::parsePlaceholder("when").ok());
  CHECK_FALSE(detail::scanPlaceholders("{{t+1m").ok());
  CHECK(detail::timeRef(-30min) == "{{t-30m}}");
  CHECK(detail::timeRef(0s) == "{{t}}");
  CHECK(detail::timeRef(90s) == "{{t+1m30s}}");
}

TEST_CASE("generated names and UIDs are stable and shaped like Kubernetes'", "[scenario]") {
  const std::string wl = jobWorkloadName("team-a", "train");  // job-train-<5 hex>
  CHECK(wl.size() == 15);
  CHECK(wl.rfind("job-train-", 0) == 0);
  CHECK(onlyOf(wl.substr(10), "0123456789abcdef"));
  CHECK(jobWorkloadName("team-a", "train") == jobWorkloadName("team-a", "train"));
  CHECK(jobWorkloadName("team-a", "train-0") != jobWorkloadName("team-a", "train-1"));
  const std::string uuid = detail::uuidFrom("x");  // 8-4-4-4-12 hex, version 4, variant 10xx
  REQUIRE(uuid.size() == 36);
  CHECK((uuid[8] == '-' && uuid[13] == '-' && uuid[18] == '-' && uuid[23] == '-'));
  CHECK(uuid[14] == '4');
  CHECK(std::string("89ab").find(uuid[19]) != std::string::npos);
  CHECK(onlyOf(uuid, "0123456789abcdef-"));
  CHECK(detail::uuidFrom("x") != detail::uuidFrom("y"));
  CHECK(detail::nameSuffix("p").size() == 5);
  CHECK(onlyOf(detail::nameSuffix("p"), "bcdfghjklmnpqrstvwxz2456789"));
}

TEST_CASE("a MultiKueue job expands into the manager/worker objects Kueue writes", "[scenario]") {
  Scenario sc = load(R"(name: t
description: d
duration: 30m
clusters:
  - {name: manager, role: manager}
  - {name: worker-1, role: worker, multikueue_cluster: mk-w1}
objects:
  - nodes: {cluster: worker-1, name: "n-{i}", count: 2, gpus: 8}
timeline:
  - at: 1m
    job:
      name: j
      namespace: ns
      queue: lq
      cluster_queue: cq
      worker_cluster_queue: wcq
      manager: manager
      worker: worker-1
      pods: 2
      gpus_per_pod: 4
      node: "n-{n}"
      pods_per_node: 1
      pending: {reason: WaitingForQuota, message: waiting}
      reserved: 2m
      dispatched: 3m
      admitted: 3m10s
      running: 5m
      first_work: 6m
      checkpoints: [10m]
      finished: 20m
expected: {incidents: []}
)");
  const std::string wl = jobWorkloadName("ns", "j");
  // Created pending with the podset's total request and the stated reason.
  Json created = Json::parse(stepWhere(sc, "workload created", 1min).body);
  CHECK(created["metadata"]["name"] == wl);
  CHECK(created["metadata"]["creationTimestamp"] == "{{t+1m}}");
  CHECK(created["metadata"]["labels"]["kueue.x-k8s.io/job-uid"] == "{{jobuid:ns/j}}");
  CHECK(created["spec"]["podSets"][0]["count"] == 2);
  CHECK(created["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "4");
  CHECK((*cond(created["status"], "QuotaReserved"))["reason"] == "WaitingForQuota");
  CHECK(created["status"]["resourceRequests"][0]["resources"]["nvidia.com/gpu"] == "8");
  // Reserved on the manager: admission with totals, check Pending, not admitted.
  Json reserved = Json::parse(stepWhere(sc, "quota reserved", 2min).body)["status"];
  CHECK(reserved["admission"]["clusterQueue"] == "cq");
  CHECK(reserved["admission"]["podSetAssignments"][0]["resourceUsage"]["nvidia.com/gpu"] == "8");
  CHECK(reserved["admission"]["podSetAssignments"][0]["resourceUsage"]["cpu"] == "8");
  CHECK(reserved["admission"]["podSetAssignments"][0]["resourceUsage"]["memory"] == "64Gi");
  CHECK((*cond(reserved, "QuotaReserved"))["message"] == "Quota reserved in ClusterQueue cq");
  CHECK((*cond(reserved, "Admitted"))["reason"] == "UnsatisfiedAdmissionChecks");
  CHECK(reserved["admissionChecks"][0]["state"] == "Pending");
  // Nominated at 3m (admission comes later), copy created on the worker with the origin label.
  CHECK(Json::parse(stepWhere(sc, "nominated", 3min).body)["status"]["nominatedClusterNames"] == Json::parse(R"(["mk-w1"])"));
  const Step& copy = stepWhere(sc, "worker copy created", 3min);
  CHECK(copy.cluster == "worker-1");
  Json copyBody = Json::parse(copy.body);
  CHECK(copyBody["metadata"]["labels"] == Json::parse(R"({"kueue.x-k8s.io/multikueue-origin": "multikueue"})"));
  CHECK_FALSE(copyBody["metadata"].contains("ownerReferences"));
  Json admitted = Json::parse(stepWhere(sc, "admitted on the worker", 190s).body)["status"];
  CHECK(admitted["clusterName"] == "mk-w1");
  CHECK(admitted["nominatedClusterNames"].is_null());
  CHECK(admitted["admissionChecks"][0]["message"] == "The workload was admitted on \"mk-w1\"");
  CHECK(Json::parse(stepWhere(sc, "worker copy admitted", 190s).body)["status"]["admission"]["clusterQueue"] == "wcq");
  // Two pods, one per node, created scheduled at admission.
  int pods = 0;
  for (const auto& s : sc.steps) {
    if (s.kind != "Pod" || s.action != StepAction::Create) continue;
    Json pod = Json::parse(s.body);
    CHECK(s.at == 190s);
    CHECK(pod["spec"]["nodeName"] == "n-" + std::to_string(pods));
    CHECK(pod["metadata"]["annotations"]["kueue.x-k8s.io/workload"] == wl);
    CHECK(pod["metadata"]["labels"]["kueue.x-k8s.io/multikueue-worker-workload-pod"] == "true");
    CHECK(pod["metadata"]["labels"]["kueue.x-k8s.io/cluster-queue-name"] == "wcq");
    CHECK(pod["metadata"]["ownerReferences"][0]["kind"] == "Job");
    CHECK((*cond(pod["status"], "PodScheduled"))["status"] == "True");
    CHECK(pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating");
    ++pods;
  }
  CHECK(pods == 2);
  Json running = Json::parse(stepWhere(sc, "running", 5min).body)["status"];
  CHECK(running["phase"] == "Running");
  CHECK(running["containerStatuses"][0]["state"]["running"]["startedAt"] == "{{t+5m}}");
  CHECK(Json::parse(stepWhere(sc, "first useful work", 6min).body)["metadata"]["annotations"]["firstwork.dev/first-work-at"] ==
        "{{t+6m}}");
  CHECK(Json::parse(stepWhere(sc, "checkpoint", 10min).body)["metadata"]["annotations"]["firstwork.dev/last-checkpoint-at"] ==
        "{{t+10m}}");
  CHECK((*cond(Json::parse(stepWhere(sc, "pods ready (mirrored)", 5min).body)["status"], "PodsReady"))["reason"] == "Started");
  Json fin = Json::parse(stepWhere(sc, "finished (mirrored)", 20min).body)["status"];
  CHECK((*cond(fin, "Finished"))["reason"] == "Succeeded");
}

TEST_CASE("a DRA job gets template claims allocated from its node's pool", "[scenario]") {
  Scenario sc = load(R"(name: t
description: d
duration: 30m
clusters: [{name: w, role: standalone}]
objects:
  - nodes: {cluster: w, name: "d-{i}", count: 2}
timeline:
  - at: 1m
    job:
      name: j
      namespace: ns
      queue: lq
      cluster_queue: cq
      worker: w
      pods: 2
      gpus_per_pod: 2
      dra: {claim_template: gpu-x2, quota_resource: whole-gpus}
      node: "d-{n}"
      pods_per_node: 1
      running: 2m
      pod_overrides:
        - {pod: 1, scheduled: 5m, running: 6m}
expected: {incidents: []}
)");
  // Standalone: reserved = admitted at creation.
  Json reserved = Json::parse(stepWhere(sc, "quota reserved", 1min).body)["status"];
  CHECK((*cond(reserved, "Admitted"))["status"] == "True");
  CHECK(reserved["admission"]["podSetAssignments"][0]["resourceUsage"]["whole-gpus"] == "4");
  int claims = 0;
  for (const auto& s : sc.steps) {
    if (s.kind == "ResourceClaim" && s.action == StepAction::Create) {
      Json c = Json::parse(s.body);
      CHECK(c["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.nvidia.com");
      CHECK(c["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2);
      CHECK(c["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] == "gpus");
      CHECK(c["metadata"]["ownerReferences"][0]["uid"].get<std::string>().rfind("{{uid:Pod:ns/j-", 0) == 0);
      ++claims;
    }
    if (s.kind == "ResourceClaim" && s.action == StepAction::Patch) {
      Json a = Json::parse(s.body)["status"];
      std::string node = a["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"][0];
      CHECK(a["allocation"]["devices"]["results"][0]["pool"] == node);
      CHECK(a["allocation"]["devices"]["results"][1]["device"] == "gpu-1");
      CHECK(s.at == (node == "d-0" ? Offset{1min} : Offset{5min}));
    }
  }
  CHECK(claims == 2);
  // Pod 1 waits Unschedulable until 5m.
  for (const auto& s : sc.steps) {
    if (s.kind != "Pod" || s.action != StepAction::Create || s.name.rfind("j-1-", 0) != 0) continue;
    Json pod = Json::parse(s.body);
    CHECK((*cond(pod["status"], "PodScheduled"))["reason"] == "Unschedulable");
    CHECK_FALSE(pod["spec"].contains("nodeName"));
    CHECK(pod["status"]["resourceClaimStatuses"][0]["name"] == "gpus");
  }
  CHECK(stepWhere(sc, "scheduled", 5min).kind == "Pod");
}

TEST_CASE("nodes, MultiKueueClusters and ResourceSlices are shaped like the real objects", "[scenario]") {
  Scenario sc = load(R"(name: t
description: d
duration: 10m
clusters:
  - {name: manager, role: manager}
  - {name: w, role: worker}
objects:
  - nodes: {cluster: w, name: n-0, gpus: 8, ready_since: -2h}
  - multikueue_cluster: {worker: w, active: true, since: -1h}
  - resource_slice: {cluster: w, name: s-a, node: n-0, generation: 2, resource_slice_count: 2, first_device: 2, device_count: 2}
timeline:
  - at: 1m
    kueue_connection: {worker: w, active: false}
expected: {incidents: []}
)");
  Json node = Json::parse(sc.steps[0].body);
  CHECK(node["status"]["allocatable"]["nvidia.com/gpu"] == "8");
  CHECK(node["status"]["capacity"]["nvidia.com/gpu"] == "8");
  CHECK((*cond(node["status"], "Ready"))["reason"] == "KubeletReady");
  CHECK((*cond(node["status"], "Ready"))["lastTransitionTime"] == "{{t-2h}}");
  Json mkc = Json::parse(sc.steps[1].body);
  CHECK(sc.steps[1].cluster == "manager");
  CHECK((*cond(mkc["status"], "Active"))["message"] == "Connected");
  Json slice = Json::parse(sc.steps[2].body);
  CHECK(slice["spec"]["driver"] == "gpu.nvidia.com");
  CHECK(slice["spec"]["pool"] == Json::parse(R"({"generation": 2, "name": "n-0", "resourceSliceCount": 2})"));
  CHECK(slice["spec"]["devices"][0]["name"] == "gpu-2");
  CHECK(slice["spec"]["devices"][0]["attributes"]["type"]["string"] == "gpu");
  CHECK(slice["metadata"]["ownerReferences"][0]["uid"] == "{{uid:Node:n-0}}");
  Json down = Json::parse(sc.steps[3].body)["status"];
  CHECK((*cond(down, "Active"))["status"] == "False");
  CHECK((*cond(down, "Active"))["reason"] == "ClientConnectionFailed");
  CHECK((*cond(down, "Active"))["message"].get<std::string>().find("connect: connection refused") != std::string::npos);
}

TEST_CASE("a preempted job carries Kueue's preemption message and two-phase eviction", "[scenario]") {
  Scenario sc = load(R"(name: t
description: d
duration: 30m
clusters: [{name: w, role: standalone}]
objects:
  - nodes: {cluster: w, name: n-0, gpus: 8}
timeline:
  - at: 1m
    job: {name: p, namespace: a, queue: q, cluster_queue: cq-a, worker: w, node: n-0}
  - at: 0s
    job:
      name: v
      namespace: b
      queue: q
      cluster_queue: cq-b
      worker: w
      node: n-0
      running: 10s
      first_work: 20s
      preempted: {at: 2m, released: 2m20s, reason: InCohortReclaimWhileBorrowing, preemptor: a/p,
                  preemptor_path: /root/cq-a, preemptee_path: /root/cq-b}
expected: {incidents: []}
)");
  const std::string msg = "Preempted to accommodate a workload (UID: {{uid:a/" + jobWorkloadName("a", "p") +
                          "@w}}, JobUID: {{jobuid:a/p@w}}) due to reclamation within the cohort while borrowing; "
                          "preemptor path: /root/cq-a; preemptee path: /root/cq-b";
  Json phase1 = Json::parse(stepWhere(sc, "evicted (preempted)", 2min).body)["status"];
  CHECK((*cond(phase1, "Evicted"))["reason"] == "Preempted");
  CHECK((*cond(phase1, "Evicted"))["message"] == msg);
  CHECK((*cond(phase1, "Preempted"))["reason"] == "InCohortReclaimWhileBorrowing");
  Json phase2 = Json::parse(stepWhere(sc, "quota released", 140s).body)["status"];
  CHECK((*cond(phase2, "QuotaReserved"))["reason"] == "PendingEvaluation");
  CHECK((*cond(phase2, "Requeued"))["reason"] == "Preempted");
  CHECK((*cond(phase2, "Admitted"))["reason"] == "NoReservation");
  CHECK(phase2["admission"].is_null());
  CHECK(phase2["accumulatedPastExecutionTimeSeconds"] == 140);  // admitted 0s → released 2m20s
  CHECK(stepWhere(sc, "deleted", 140s).action == StepAction::Delete);
}
