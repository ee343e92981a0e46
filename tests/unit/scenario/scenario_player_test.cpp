#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "firstwork/core/rfc3339.hpp"
#include "firstwork/core/scaled_clock.hpp"
#include "firstwork/scenario/scenario.hpp"
#include "firstwork/scenario/scenario_player.hpp"
#include "firstwork/sim/api_server.hpp"

using namespace firstwork;
using namespace firstwork::scenario;
using namespace std::chrono_literals;
using Json = nlohmann::json;

namespace {

// Polls `done` every millisecond until it holds or `limit` (real time) passes.
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = 10s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return done();
}

std::optional<Json> find(const sim::ApiServer& server, const std::string& resource, const std::string& ns,
                         const std::string& name) {
  for (const auto& text : server.objects(resource)) {
    Json o = Json::parse(text);
    if (o["metadata"].value("name", "") == name && o["metadata"].value("namespace", "") == ns) return o;
  }
  return std::nullopt;
}

const Json* condition(const Json& object, const std::string& type) {
  if (!object.contains("status") || !object["status"].contains("conditions")) return nullptr;
  for (const auto& c : object["status"]["conditions"])
    if (c.value("type", "") == type) return &c;
  return nullptr;
}

Scenario load(const std::string& yaml) {
  auto sc = loadScenarioFromString(yaml, "inline");
  if (!sc) FAIL(sc.error());
  return std::move(*sc);
}

SystemTime at(const char* rfc3339) { return parseRfc3339(rfc3339).value(); }

sim::ApiServerOptions named(const char* name) {
  sim::ApiServerOptions o;
  o.name = name;
  return o;
}

// The drill start used below and the clock reading it at construction.
constexpr const char* kStart = "2026-08-20T10:00:00Z";

const char* kSmallDrill = R"(
name: small
description: one reclaim on a tiny estate
duration: 6m
clusters:
  - {name: manager, role: manager}
  - {name: worker-1, role: worker}
objects:
  - multikueue_cluster: {worker: worker-1, active: true, since: -1h}
  - nodes: {cluster: worker-1, name: "n-{i}", count: 1, gpus: 8, ready_since: -1h}
timeline:
  - at: -10m
    job:
      name: victim
      namespace: team-b
      queue: team-b-lq
      cluster_queue: team-b-cq
      manager: manager
      worker: worker-1
      gpus_per_pod: 1
      node: n-0
      dispatched: -9m
      running: -8m
      first_work: -7m
      checkpoints: [1m]
      preempted:
        at: 2m
        released: 2m30s
        reason: InCohortReclamation
        preemptor: team-a/winner
        preemptor_path: /research/team-a-cq
        preemptee_path: /research/team-b-cq
  - at: 1m
    kueue_connection: {worker: worker-1, active: false}
  - at: 1m50s
    job:
      name: winner
      namespace: team-a
      queue: team-a-lq
      cluster_queue: team-a-cq
      manager: manager
      worker: worker-1
      gpus_per_pod: 1
      node: n-0
      reserved: 2m30s
      dispatched: 3m
      running: 4m
      first_work: 5m
  - at: 3m
    kueue_connection: {worker: worker-1, active: true}
expected:
  incidents: []
)";

}  // namespace

TEST_CASE("player applies each step at drill start + offset with rendered times and real UIDs", "[scenario]") {
  sim::ApiServer manager(named("manager"));
  sim::ApiServer worker(named("worker-1"));
  manager.start();
  worker.start();
  // 300×: the 6-minute drill plays in 1.2 s; the connection is down for 0.4 s of it.
  ScaledClock clock(300.0, at(kStart), std::chrono::steady_clock::now());
  PlayerOptions options;
  options.drillStart = at(kStart);
  ScenarioPlayer player(load(kSmallDrill), {{"manager", manager}, {"worker-1", worker}}, clock, options);
  REQUIRE(player.start().ok());

  // Setup and steps at offsets ≤ 0 are applied by start() itself.
  auto mkc = find(manager, "multikueueclusters", "", "worker-1");
  REQUIRE(mkc);
  CHECK((*mkc)["metadata"]["creationTimestamp"] == "2026-08-20T09:00:00Z");  // since: -1h
  auto victimWl = find(manager, "workloads", "team-b", jobWorkloadName("team-b", "victim"));
  REQUIRE(victimWl);
  CHECK((*victimWl)["metadata"]["creationTimestamp"] == "2026-08-20T09:50:00Z");  // at: -10m
  REQUIRE(condition(*victimWl, "Admitted"));
  CHECK((*condition(*victimWl, "Admitted"))["lastTransitionTime"] == "2026-08-20T09:51:00Z");  // dispatched -9m
  CHECK((*victimWl)["status"]["clusterName"] == "worker-1");

  // A step is applied only once the scenario clock has passed its instant: when the MultiKueue
  // connection is first seen down, the clock reads at least 10:01:00.
  REQUIRE(eventually([&] {
    auto o = find(manager, "multikueueclusters", "", "worker-1");
    const Json* c = o ? condition(*o, "Active") : nullptr;
    return c && (*c)["status"] == "False";
  }));
  CHECK(clock.systemNow() >= at("2026-08-20T10:01:00Z"));
  auto down = find(manager, "multikueueclusters", "", "worker-1");
  CHECK((*condition(*down, "Active"))["reason"] == "ClientConnectionFailed");
  CHECK((*condition(*down, "Active"))["lastTransitionTime"] == "2026-08-20T10:01:00Z");

  REQUIRE(player.waitUntilDone(10s));
  CHECK(player.errors().empty());
  CHECK(clock.systemNow() >= at("2026-08-20T10:06:00Z"));

  // The winner's manager Workload and the UID the API server gave it.
  const std::string winnerName = jobWorkloadName("team-a", "winner");
  auto winner = find(manager, "workloads", "team-a", winnerName);
  REQUIRE(winner);
  const std::string winnerUid = (*winner)["metadata"]["uid"];
  const std::string winnerJobUid = (*winner)["metadata"]["labels"]["kueue.x-k8s.io/job-uid"];
  CHECK_FALSE(winnerUid.empty());
  CHECK(winnerJobUid.size() == 36);
  CHECK((*winner)["metadata"]["ownerReferences"][0]["uid"] == winnerJobUid);
  CHECK((*winner)["metadata"]["creationTimestamp"] == "2026-08-20T10:01:50Z");
  CHECK((*condition(*winner, "QuotaReserved"))["lastTransitionTime"] == "2026-08-20T10:02:30Z");
  CHECK((*winner)["status"]["admissionChecks"][0]["state"] == "Ready");
  CHECK((*winner)["status"]["admissionChecks"][0]["message"] == "The workload was admitted on \"worker-1\"");
  CHECK((*winner)["status"]["admissionChecks"][0]["lastTransitionTime"] == "2026-08-20T10:03:00Z");

  // The victim's preemption names the preemptor's real UID and its Job's UID (v0.15+ format).
  auto victim = find(manager, "workloads", "team-b", jobWorkloadName("team-b", "victim"));
  REQUIRE(victim);
  const std::string message = "Preempted to accommodate a workload (UID: " + winnerUid + ", JobUID: " + winnerJobUid +
                              ") due to reclamation within the cohort; preemptor path: /research/team-a-cq; "
                              "preemptee path: /research/team-b-cq";
  REQUIRE(condition(*victim, "Preempted"));
  CHECK((*condition(*victim, "Preempted"))["message"] == message);
  CHECK((*condition(*victim, "Preempted"))["reason"] == "InCohortReclamation");
  CHECK((*condition(*victim, "Preempted"))["lastTransitionTime"] == "2026-08-20T10:02:00Z");
  CHECK((*condition(*victim, "Evicted"))["reason"] == "Preempted");
  CHECK((*condition(*victim, "QuotaReserved"))["status"] == "False");
  CHECK((*condition(*victim, "QuotaReserved"))["reason"] == "PendingEvaluation");
  CHECK((*condition(*victim, "QuotaReserved"))["lastTransitionTime"] == "2026-08-20T10:02:30Z");
  CHECK((*condition(*victim, "Requeued"))["message"] == message);
  CHECK_FALSE((*victim)["status"].contains("admission"));
  CHECK_FALSE((*victim)["status"].contains("clusterName"));
  // Admitted at 09:51:00, released at 10:02:30: 11.5 min = 690 s of execution.
  CHECK((*victim)["status"]["accumulatedPastExecutionTimeSeconds"] == 690);

  // Worker side: the victim's pod and copy are gone; the winner's pod runs with its annotations.
  CHECK_FALSE(find(worker, "workloads", "team-b", jobWorkloadName("team-b", "victim")));
  auto winnerCopy = find(worker, "workloads", "team-a", winnerName);
  REQUIRE(winnerCopy);
  CHECK((*winnerCopy)["metadata"]["labels"]["kueue.x-k8s.io/multikueue-origin"] == "multikueue");
  CHECK_FALSE((*winnerCopy)["metadata"]["labels"].contains("kueue.x-k8s.io/job-uid"));
  CHECK((*winnerCopy)["metadata"]["uid"] != winnerUid);  // a new object on the worker
  CHECK(worker.count("pods") == 1);
  Json pod = Json::parse(worker.objects("pods").at(0));
  CHECK(pod["metadata"]["annotations"]["kueue.x-k8s.io/workload"] == winnerName);
  CHECK(pod["metadata"]["annotations"]["firstwork.dev/first-work-at"] == "2026-08-20T10:05:00Z");
  CHECK(pod["metadata"]["creationTimestamp"] == "2026-08-20T10:03:00Z");
  CHECK(pod["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] == "2026-08-20T10:04:00Z");
  CHECK(pod["status"]["phase"] == "Running");
  CHECK(pod["spec"]["nodeName"] == "n-0");
  // The worker-side Job is a different object from the manager's: its own UID, used consistently.
  const std::string workerJobUid = pod["metadata"]["ownerReferences"][0]["uid"];
  CHECK(pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == workerJobUid);
  CHECK(workerJobUid != winnerJobUid);
  // The MultiKueueCluster came back at 10:03:00.
  auto up = find(manager, "multikueueclusters", "", "worker-1");
  CHECK((*condition(*up, "Active"))["status"] == "True");
  CHECK((*condition(*up, "Active"))["message"] == "Connected");
  CHECK((*condition(*up, "Active"))["lastTransitionTime"] == "2026-08-20T10:03:00Z");
  player.stop();
}

TEST_CASE("cut_daemon_connection stops the worker's server and restarts it on the same port", "[scenario]") {
  sim::ApiServer manager(named("manager"));
  sim::ApiServer worker(named("worker-1"));
  manager.start();
  worker.start();
  const int port = worker.port();
  // 120×: the one-minute cut lasts 0.5 s of real time, long enough to observe by polling.
  ScaledClock clock(120.0, at(kStart), std::chrono::steady_clock::now());
  PlayerOptions options;
  options.drillStart = at(kStart);
  ScenarioPlayer player(load(R"(
name: cut
description: the daemon loses worker-1 while work starts there
duration: 1m30s
clusters:
  - {name: manager, role: manager}
  - {name: worker-1, role: worker}
objects:
  - nodes: {cluster: worker-1, name: n-0, gpus: 8}
timeline:
  - at: 10s
    cut_daemon_connection: {cluster: worker-1, for: 1m}
  - at: 20s
    job: {name: j, namespace: ns, queue: q, cluster_queue: cq, manager: manager, worker: worker-1,
          node: n-0, dispatched: 30s, running: 40s, first_work: 50s}
expected:
  incidents: []
)"),
                        {{"manager", manager}, {"worker-1", worker}}, clock, options);
  REQUIRE(player.start().ok());
  REQUIRE(eventually([&] { return !worker.running(); }));
  CHECK(clock.systemNow() >= at("2026-08-20T10:00:10Z"));
  REQUIRE(eventually([&] { return worker.running(); }));
  CHECK(clock.systemNow() >= at("2026-08-20T10:01:10Z"));
  CHECK(worker.port() == port);
  REQUIRE(player.waitUntilDone(10s));
  CHECK(player.errors().empty());
  // What happened on worker-1 while it was cut is there, with its event times.
  Json pod = Json::parse(worker.objects("pods").at(0));
  CHECK(pod["metadata"]["creationTimestamp"] == "2026-08-20T10:00:30Z");
  CHECK(pod["metadata"]["annotations"]["firstwork.dev/first-work-at"] == "2026-08-20T10:00:50Z");
}

TEST_CASE("stop() restarts a server the player had cut", "[scenario]") {
  sim::ApiServer worker(named("worker-1"));
  worker.start();
  ScaledClock clock(600.0, at(kStart), std::chrono::steady_clock::now());
  PlayerOptions options;
  options.drillStart = at(kStart);
  ScenarioPlayer player(load(R"(
name: cut-forever
description: a cut that outlasts the stop
duration: 1h
clusters: [{name: worker-1, role: standalone}]
timeline:
  - at: 1s
    cut_daemon_connection: {cluster: worker-1, for: 59m}
expected:
  outages: []
)"),
                        {{"worker-1", worker}}, clock, options);
  REQUIRE(player.start().ok());
  REQUIRE(eventually([&] { return !worker.running(); }));
  player.stop();
  CHECK(worker.running());
  CHECK_FALSE(player.waitUntilDone(1ms));
}

TEST_CASE("a looping player restores the setup estate and replays with new times", "[scenario]") {
  sim::ApiServer worker(named("worker-1"));
  worker.start();
  ScaledClock clock(60.0, at(kStart), std::chrono::steady_clock::now());
  PlayerOptions options;
  options.drillStart = at(kStart);
  options.loop = true;
  ScenarioPlayer player(load(R"(
name: loop
description: one job per minute on a standalone cluster whose node goes unschedulable
duration: 1m
clusters: [{name: worker-1, role: standalone}]
objects:
  - nodes: {cluster: worker-1, name: "n-{i}", count: 2, gpus: 8}
timeline:
  - at: 10s
    job: {name: j, namespace: ns, queue: q, cluster_queue: cq, worker: worker-1, node: n-0,
          running: 20s, first_work: 30s}
  - at: 40s
    cluster: worker-1
    patch: {kind: Node, metadata: {name: n-1}, spec: {unschedulable: true}}
expected:
  stuck: []
)"),
                        {{"worker-1", worker}}, clock, options);
  REQUIRE(player.start().ok());
  const std::string n0Uid = find(worker, "nodes", "", "n-0").value()["metadata"]["uid"];
  const std::string n1Uid = find(worker, "nodes", "", "n-1").value()["metadata"]["uid"];
  // Second play-through (60×: one per real second): its pod is stamped 10:01:10.
  REQUIRE(eventually([&] {
    if (player.iteration() != 1 || worker.count("pods") != 1) return false;
    return Json::parse(worker.objects("pods").at(0))["metadata"]["creationTimestamp"] == "2026-08-20T10:01:10Z";
  }));
  CHECK(player.drillStart() == at("2026-08-20T10:01:00Z"));
  // The second play-through's workload is a new object stamped with the new drill start.
  auto wl = find(worker, "workloads", "ns", jobWorkloadName("ns", "j"));
  REQUIRE(wl);
  CHECK((*wl)["metadata"]["creationTimestamp"] == "2026-08-20T10:01:10Z");
  // n-0 was never touched by the timeline: the same object. n-1 was patched: recreated as set up.
  CHECK(find(worker, "nodes", "", "n-0").value()["metadata"]["uid"] == n0Uid);
  auto n1 = find(worker, "nodes", "", "n-1");
  REQUIRE(n1);
  CHECK((*n1)["metadata"]["uid"] != n1Uid);
  CHECK_FALSE((*n1)["spec"].contains("unschedulable"));
  player.stop();
  CHECK(player.errors().empty());
}

TEST_CASE("start() refuses a scenario whose clusters have no server", "[scenario]") {
  sim::ApiServer manager(named("manager"));
  ScaledClock clock(600.0);
  ScenarioPlayer player(load(R"(
name: missing
description: two clusters, one server
duration: 1m
clusters:
  - {name: manager, role: manager}
  - {name: worker-1, role: worker}
objects:
  - multikueue_cluster: {worker: worker-1}
timeline:
  - {at: 10s, kueue_connection: {worker: worker-1, active: false}}
expected:
  incidents: []
)"),
                        {{"manager", manager}}, clock);
  auto st = player.start();
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().find("worker-1") != std::string::npos);
  CHECK(manager.count("multikueueclusters") == 0);
}

TEST_CASE("the reclaim scenario file plays against API servers without errors", "[scenario]") {
  auto sc = loadScenario(FIRSTWORK_SOURCE_DIR "/config/scenarios/reclaim.yaml");
  REQUIRE(sc.ok());
  sim::ApiServer manager(named("manager"));
  sim::ApiServer worker(named("worker-1"));
  manager.start();
  worker.start();
  // 6000×: the 20-minute drill plays in 0.2 s.
  ScaledClock clock(6000.0, at(kStart), std::chrono::steady_clock::now());
  PlayerOptions options;
  options.drillStart = at(kStart);
  ScenarioPlayer player(std::move(*sc), {{"manager", manager}, {"worker-1", worker}}, clock, options);
  REQUIRE(player.start().ok());
  REQUIRE(player.waitUntilDone(20s));
  for (const auto& e : player.errors()) UNSCOPED_INFO(e);
  CHECK(player.errors().empty());
  // 4 a-run + 12 b-run + 4 a-new manager Workloads; on the worker the 4 victims' copies and pods
  // are gone and the 4 new ones run: 16 pods on 16 GPUs.
  CHECK(manager.count("workloads") == 20);
  CHECK(worker.count("workloads") == 16);
  CHECK(worker.count("pods") == 16);
  for (int k = 0; k < 4; ++k) {
    auto preemptor = find(manager, "workloads", "team-a", jobWorkloadName("team-a", "a-new-" + std::to_string(k)));
    auto victim = find(manager, "workloads", "team-b", jobWorkloadName("team-b", "b-run-" + std::to_string(8 + k)));
    REQUIRE(preemptor);
    REQUIRE(victim);
    std::string uid = (*preemptor)["metadata"]["uid"];
    std::string msg = (*condition(*victim, "Preempted"))["message"];
    CHECK(msg.find("(UID: " + uid + ", JobUID: ") != std::string::npos);
    CHECK((*condition(*victim, "Evicted"))["lastTransitionTime"] == "2026-08-20T10:05:01Z");
  }
  // b-run-8's last checkpoint (4m1s) is on its pod until the pod goes at 5m31s; b-run-11's
  // checkpoint predates the drill. Check the surviving B pods kept their first-work time.
  auto b0 = worker.objects("pods");
  int annotated = 0;
  for (const auto& text : b0) {
    Json p = Json::parse(text);
    if (p["metadata"]["namespace"] == "team-b") {
      CHECK(p["metadata"]["annotations"]["firstwork.dev/first-work-at"] == "2026-08-20T09:35:00Z");
      ++annotated;
    }
  }
  CHECK(annotated == 8);

  // Clearing the estate for the next drill removes exactly what the player created.
  manager.create("clusterqueues", R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"not-ours"}})");
  player.removeObjects();
  CHECK(manager.count("workloads") == 0);
  CHECK(manager.count("multikueueclusters") == 0);
  CHECK(manager.count("clusterqueues") == 1);  // not-ours stays
  CHECK(worker.count("workloads") == 0);
  CHECK(worker.count("pods") == 0);
  CHECK(worker.count("nodes") == 0);
}

TEST_CASE("every scenario file plays against API servers without a failed step", "[scenario]") {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(FIRSTWORK_SOURCE_DIR "/config/scenarios"))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  REQUIRE(files.size() >= 9);
  for (const auto& f : files) {
    INFO(f);
    auto sc = loadScenario(f);
    REQUIRE(sc.ok());
    const size_t steps = sc->steps.size();
    sim::ApiServer manager(named("manager"));
    sim::ApiServer worker1(named("worker-1"));
    sim::ApiServer worker2(named("worker-2"));
    manager.start();
    worker1.start();
    worker2.start();
    // 12000×: a 20-minute drill plays in 0.1 s.
    ScaledClock clock(12000.0, at(kStart), std::chrono::steady_clock::now());
    PlayerOptions options;
    options.drillStart = at(kStart);
    ScenarioPlayer player(std::move(*sc), {{"manager", manager}, {"worker-1", worker1}, {"worker-2", worker2}},
                          clock, options);
    REQUIRE(player.start().ok());
    // A deadline for a loaded machine (ASan beside the whole suite on a slow 2-vCPU machine took
    // more than 20 s once); a drill plays in well under a second on an idle one.
    REQUIRE(player.waitUntilDone(90s));
    for (const auto& e : player.errors()) UNSCOPED_INFO(e);
    CHECK(player.errors().empty());
    CHECK(player.stepsApplied() == steps);
    CHECK(worker1.running());
  }
}
