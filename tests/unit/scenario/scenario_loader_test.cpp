#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "firstwork/scenario/scenario.hpp"

using namespace firstwork::scenario;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> scenarioFiles() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(FIRSTWORK_SOURCE_DIR "/config/scenarios"))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("every scenario file loads and states expected figures", "[scenario]") {
  auto files = scenarioFiles();
  REQUIRE(files.size() >= 9);
  for (const auto& f : files) {
    INFO(f);
    auto sc = loadScenario(f);
    if (!sc) FAIL(sc.error());
    CHECK_FALSE(sc->description.empty());
    CHECK(sc->duration > Offset{0});
    CHECK_FALSE(sc->steps.empty());
    CHECK_FALSE(sc->expected.stated.empty());
  }
}

TEST_CASE("durations parse as scenario files write them", "[scenario]") {
  CHECK(parseOffset("8m").value() == 8min);
  CHECK(parseOffset("90s").value() == 90s);
  CHECK(parseOffset("1h30m").value() == 90min);
  CHECK(parseOffset("6m30s").value() == 390s);
  CHECK(parseOffset("-30m").value() == -30min);
  CHECK(parseOffset("-4m59s").value() == -299s);
  CHECK(parseOffset("500ms").value() == 500ms);
  CHECK(parseOffset("1.5s").value() == 1500ms);
  CHECK(parseOffset("0").value() == 0s);
  CHECK(parseOffset("90").value() == 90s);  // bare integer: seconds
  CHECK_FALSE(parseOffset("").ok());
  CHECK_FALSE(parseOffset("8").value() != 8s);
  CHECK_FALSE(parseOffset("8 minutes").ok());
  CHECK_FALSE(parseOffset("m").ok());
  CHECK_FALSE(parseOffset("5d").ok());
  CHECK(formatOffset(8min) == "8m");
  CHECK(formatOffset(390s) == "6m30s");
  CHECK(formatOffset(-299s) == "-4m59s");
  CHECK(formatOffset(0s) == "0s");
  CHECK(formatOffset(1500ms) == "1.5s");
  CHECK(formatOffset(250ms) == "250ms");
  CHECK(formatOffset(3600s) == "1h");
}

TEST_CASE("reconnection-baseline states the worked example's figures", "[scenario]") {
  auto sc = loadScenario(FIRSTWORK_SOURCE_DIR "/config/scenarios/reconnection-baseline.yaml");
  REQUIRE(sc.ok());
  CHECK(sc->name == "reconnection-baseline");
  CHECK(sc->duration == 20min);
  REQUIRE(sc->expected.incidents.size() == 1);
  const auto& inc = sc->expected.incidents[0];
  CHECK(inc.cluster == "worker-1");
  CHECK(inc.source == "multikueue");
  CHECK(inc.reconnectedAt == 6min);
  CHECK(inc.recoveredAt == std::optional<Offset>(18min));
  // 32 GPUs × 8 min + 16 GPUs × 4 min = 320 GPU-min = 19 200 GPU-s.
  CHECK(inc.strandedGpuSeconds == 19200);
  CHECK(inc.outcome == "recovered");
  CHECK(sc->expected.states("duplicates"));  // stated empty on purpose
  CHECK(sc->expected.duplicates.empty());
  CHECK_FALSE(sc->expected.states("reclaims"));
  // 2 setup objects per... 3 manager objects + MultiKueueCluster + 4 nodes.
  size_t setup = std::count_if(sc->steps.begin(), sc->steps.end(), [](const Step& s) { return s.setup; });
  CHECK(setup == 8);
  // The timeline is sorted by time; the incident's milestones are where the file says.
  CHECK(std::is_sorted(sc->steps.begin() + static_cast<long>(setup), sc->steps.end(),
                       [](const Step& a, const Step& b) { return a.at < b.at; }));
  auto reconnect = std::find_if(sc->steps.begin(), sc->steps.end(), [](const Step& s) {
    return s.kind == "MultiKueueCluster" && s.action == StepAction::Patch && s.body.find("\"True\"") != std::string::npos;
  });
  REQUIRE(reconnect != sc->steps.end());
  CHECK(reconnect->at == 6min);
  CHECK(reconnect->cluster == "manager");
  // 32 pods, each marked with first useful work: 16 at 14m, 16 at 18m.
  auto firstWork = [&](Offset at) {
    return std::count_if(sc->steps.begin(), sc->steps.end(), [&](const Step& s) {
      return s.kind == "Pod" && s.at == at && s.body.find("firstwork.dev/first-work-at") != std::string::npos;
    });
  };
  CHECK(firstWork(14min) == 16);
  CHECK(firstWork(18min) == 16);
}

TEST_CASE("the improved drills state their reductions against the baselines", "[scenario]") {
  auto rec = loadScenario(FIRSTWORK_SOURCE_DIR "/config/scenarios/reconnection-improved.yaml");
  REQUIRE(rec.ok());
  REQUIRE(rec->expected.incidents.size() == 1);
  // 32 × 3 min + 16 × 2 min = 128 GPU-min = 7 680 GPU-s.
  CHECK(rec->expected.incidents[0].strandedGpuSeconds == 7680);
  REQUIRE(rec->expected.comparisons.size() == 1);
  CHECK(rec->expected.comparisons[0].baseline == "reconnection-baseline");
  CHECK(rec->expected.comparisons[0].reductionPercent == 60);

  auto before = loadScenario(FIRSTWORK_SOURCE_DIR "/config/scenarios/reclaim.yaml");
  auto after = loadScenario(FIRSTWORK_SOURCE_DIR "/config/scenarios/reclaim-improved.yaml");
  REQUIRE(before.ok());
  REQUIRE(after.ok());
  REQUIRE(before->expected.reclaims.size() == 4);
  REQUIRE(after->expected.reclaims.size() == 4);
  double earlier = 0;
  for (size_t i = 0; i < 4; ++i) {
    CHECK(before->expected.reclaims[i].reason == "InCohortReclamation");
    CHECK(before->expected.reclaims[i].reclaimToFirstWorkSeconds == 720);
    CHECK(after->expected.reclaims[i].reclaimToFirstWorkSeconds == 180);
    // one GPU each
    earlier += before->expected.reclaims[i].reclaimToFirstWorkSeconds - after->expected.reclaims[i].reclaimToFirstWorkSeconds;
  }
  CHECK(earlier == 36 * 60);  // 36 GPU-minutes earlier access
  // job:team-a/a-new-0 resolves to the generated Workload name.
  CHECK(before->expected.reclaims[0].preemptor == "team-a/" + jobWorkloadName("team-a", "a-new-0"));
  double interrupted = 0;
  for (const auto& i : before->expected.interruptions) interrupted += i.gpuSeconds;
  CHECK(interrupted == 60 + 120 + 300 + 600);
}

TEST_CASE("the DRA drill flags the reservation made on 12 usable GPUs", "[scenario]") {
  auto sc = loadScenario(FIRSTWORK_SOURCE_DIR "/config/scenarios/dra-incomplete-pool.yaml");
  REQUIRE(sc.ok());
  REQUIRE(sc->expected.reservationsWithoutCapacity.size() == 1);
  CHECK(sc->expected.reservationsWithoutCapacity[0].requested == 16);
  CHECK(sc->expected.reservationsWithoutCapacity[0].usableFree == 12);
  REQUIRE(sc->expected.pools.size() == 4);
  CHECK(sc->expected.pools[3].pool == "w1-dra-3");
  REQUIRE(sc->expected.pools[3].phases.size() == 3);
  CHECK(sc->expected.pools[3].phases[1].state == "incomplete");
  CHECK(sc->expected.pools[3].incompleteSeconds == 540);
}

TEST_CASE("a scenario with several mistakes gets every problem listed with step index and key", "[scenario]") {
  const char* yaml = R"(name: broken
description: everything wrong at once
duration: 10m
clusters:
  - {name: manager, role: manager}
  - {name: worker-1, role: worker}
timeline:
  - at: 1m
    kueue_connection: {worker: worker-9, active: false}
  - at: 2m
    job:
      name: j
      namespace: ns
      queue: q
      cluster_queue: cq
      manager: manager
      worker: worker-1
      node: n-0
      dispatched: 3m
      running: 5m
      first_work: 4m
      colour: blue
  - at: 3m
    cluster: worker-1
    patch: {kind: Pod, metadata: {namespace: ns, name: ghost}, status: {phase: Running}}
  - at: 4m
    cluster: worker-1
    create: {kind: LocalQueue, metadata: {namespace: ns, name: q}}
  - at: 12m
    cut_daemon_connection: {cluster: worker-1, for: 1m}
  - at: soon
    nodes: {cluster: worker-1, name: n-0}
expected:
  interruptions:
    - {cluster: worker-1, cluster_queue: cq, workload: ns/w, reason: InClusterQueue, gpus: 8,
       evicted_at: 12m, work_since: 10m, gpu_seconds: 900}
)";
  auto sc = loadScenarioFromString(yaml, "broken.yaml");
  REQUIRE_FALSE(sc.ok());
  const std::string& e = sc.error();
  INFO(e);
  CHECK(e.find("problems in broken.yaml") != std::string::npos);
  // file:line: path: message
  CHECK(e.find("broken.yaml:9: timeline[0].kueue_connection.worker: unknown cluster \"worker-9\"") != std::string::npos);
  CHECK(e.find("timeline[1].job.first_work: first_work (4m) is before running (5m)") != std::string::npos);
  CHECK(e.find("broken.yaml:22: timeline[1].job.colour: unknown key") != std::string::npos);
  CHECK(e.find("timeline[2]: patch Pod ns/ghost") != std::string::npos);
  CHECK(e.find("worker-1 Pod ns/ghost does not exist at 3m (patch)") != std::string::npos);
  CHECK(e.find("timeline[3].create.kind: kind \"LocalQueue\" is not served") != std::string::npos);
  CHECK(e.find("timeline[4]: cut_daemon_connection worker-1 for 1m: at 12m is after the drill's duration 10m") !=
        std::string::npos);
  CHECK(e.find("timeline[5].at: invalid duration \"soon\"") != std::string::npos);
  // 8 × (12m − 10m) = 960, not 900: the hand arithmetic is checked for consistency.
  CHECK(e.find("expected.interruptions[0].gpu_seconds: 900 ≠ gpus × (evicted_at − work_since) = 960") !=
        std::string::npos);
  CHECK(std::count(e.begin(), e.end(), '\n') >= 9);
}

TEST_CASE("loader rejects structural mistakes", "[scenario]") {
  auto expectError = [](const std::string& yaml, const std::string& needle) {
    auto sc = loadScenarioFromString(yaml, "t");
    REQUIRE_FALSE(sc.ok());
    INFO(sc.error());
    CHECK(sc.error().find(needle) != std::string::npos);
  };
  const std::string head = "name: t\ndescription: d\nduration: 5m\nclusters: [{name: w, role: standalone}]\n";
  expectError(head + "timeline: []\n", "expected: required");
  expectError(head + "timeline: []\nexpected: {}\n", "expected: states no figures");
  expectError(head + "timeline: []\nexpected: {incidentz: []}\n", "expected.incidentz: unknown key");
  expectError(head + "timeline:\n  - at: 1m\n    cluster: w\n    delete: {kind: Node, name: n}\nexpected: {incidents: []}\n",
              "w Node n does not exist at 1m (delete)");
  expectError(head + "timeline:\n  - {at: 1m, cluster: w, create: {kind: Node, metadata: {name: a}}, "
                     "delete: {kind: Node, name: a}}\nexpected: {incidents: []}\n",
              "more than one action");
  expectError(head + "objects:\n  - {at: 1m, nodes: {cluster: w, name: n}}\ntimeline: []\nexpected: {incidents: []}\n",
              "objects[0].at: objects: describe the estate at the drill start");
  expectError(head + "timeline:\n  - at: 1m\n    cluster: w\n    create: {kind: Pod, metadata: {name: p}}\n"
                     "expected: {incidents: []}\n",
              "timeline[0].create.metadata.namespace: required: Pod is namespaced");
  // A uid reference to an object that does not exist yet.
  expectError(head + "timeline:\n  - at: 1m\n    cluster: w\n    create: {kind: Pod, metadata: {namespace: n, name: p,"
                     " ownerReferences: [{uid: \"{{uid:Node:n-0}}\"}]}}\nexpected: {incidents: []}\n",
              "{{uid:...}} refers to w Node n-0 which does not exist at 1m");
  expectError(head + "timeline:\n  - at: 1m\n    cluster: w\n    create: {kind: Node, metadata: {name: n,"
                     " annotations: {a: \"{{t+8 minutes}}\"}}}\nexpected: {incidents: []}\n",
              "metadata.annotations.a: {{t+8 minutes}}: invalid duration");
  expectError("name: t\ndescription: d\nduration: 5m\nclusters: [{name: w, role: worker}]\ntimeline: []\n"
              "expected: {incidents: []}\n",
              "workers need a manager");
  expectError("name: [unclosed\n", "problem in t");
  auto named = loadScenarioFromString(head + "timeline: []\nexpected: {incidents: []}\n", "other-name.yaml");
  REQUIRE_FALSE(named.ok());
  CHECK(named.error().find("\"t\" differs from the file name \"other-name\"") != std::string::npos);
}

// Found by fuzz/fuzz_scenario: a byte that is not UTF-8 inside an object made nlohmann::json's
// dump() throw type_error 316 out of the loader (std::terminate in `firstworkd demo`).
TEST_CASE("a scenario that is not valid UTF-8 is refused with where the bad byte is", "[scenario]") {
  const std::string head = "name: t\ndescription: d\nduration: 5m\nclusters: [{name: w, role: standalone}]\n";
  // The 0xFF is on line 8: four head lines, then timeline, the step's at, cluster, create.
  std::string yaml = head + "timeline:\n  - at: 1m\n    cluster: w\n    create: {kind: Node, metadata: {name: n,"
                            " labels: {a: \"\xFF\"}}}\nexpected: {incidents: []}\n";
  auto sc = loadScenarioFromString(yaml, "t");
  REQUIRE_FALSE(sc.ok());
  INFO(sc.error());
  CHECK(sc.error().find("line 8: not valid UTF-8 (byte 0xff at offset") != std::string::npos);
}

TEST_CASE("merge keys let entries share a template", "[scenario]") {
  auto sc = loadScenarioFromString(R"(name: t
description: d
duration: 10m
clusters: [{name: w, role: standalone}]
objects:
  - nodes: {cluster: w, name: n-0, gpus: 8}
timeline:
  - at: 1m
    job: &base {name: a, namespace: ns, queue: q, cluster_queue: cq, worker: w, node: n-0,
                running: 2m, first_work: 3m}
  - at: 1m
    job: {<<: *base, name: b, first_work: 4m}
expected: {incidents: []}
)",
                                   "t");
  REQUIRE(sc.ok());
  auto fw = [&](const std::string& pod) {
    for (const auto& s : sc->steps)
      if (s.kind == "Pod" && s.name.rfind(pod, 0) == 0 && s.body.find("first-work-at") != std::string::npos) return s.at;
    return Offset{-1};
  };
  CHECK(fw("a-0-") == 3min);
  CHECK(fw("b-0-") == 4min);  // overridden
  // b inherited running: 2m from the anchor
  CHECK(std::any_of(sc->steps.begin(), sc->steps.end(), [](const Step& s) {
    return s.kind == "Pod" && s.name.rfind("b-0-", 0) == 0 && s.at == 2min && s.origin.find("running") != std::string::npos;
  }));
}

TEST_CASE("the mixed-estate drill states its incident per device class, each in its own unit",
          "[scenario][sharing]") {
  auto sc = loadScenario(FIRSTWORK_SOURCE_DIR "/config/scenarios/reconnection-mixed-estate.yaml");
  if (!sc) FAIL(sc.error());
  REQUIRE(sc->expected.incidents.size() == 1);
  const auto& in = sc->expected.incidents[0];
  // The headline is the whole-GPU classes only: 960, not 960 + 660 + 540 + 600 + 840.
  CHECK(in.strandedGpuSeconds == 960);
  REQUIRE(in.classes.size() == 5);
  const auto& shares = in.classes[1];
  CHECK(shares.deviceClass == "nvidia.com/gpu.shared");
  CHECK(shares.unit == "share");
  CHECK(shares.strandedSeconds == 660);
  CHECK(shares.physicalUnit == "gpu");
  CHECK(shares.physicalStrandedSeconds == std::optional<double>(540));
  CHECK(shares.unusableForBacklogSeconds == std::optional<double>(2340));
  CHECK(in.classes[2].unusableForBacklogSeconds == std::optional<double>(1950));
  CHECK(sc->expected.gpusAtEnd.size() == 13);
}

TEST_CASE("per-class incident figures are checked for consistency and units", "[scenario][sharing]") {
  auto load = [](const std::string& classes, double headline) {
    return loadScenarioFromString(R"(name: t
description: d
duration: 10m
clusters:
  - {name: manager, role: manager}
  - {name: worker-1, role: worker}
timeline: []
expected:
  incidents:
    - {cluster: worker-1, disconnected_at: 1m, reconnected_at: 2m, recovered_at: 3m, usable_gpus: 4,
       demand_gpus: 4, stranded_gpu_seconds: )" + std::to_string(headline) + R"(, outcome: recovered,
       classes: [)" + classes + R"(]}
  gpus_at_end:
    - {cluster: worker-1, device_class: nvidia.com/gpu.shared, unit: share, state: usable, value: 8}
)",
                                  "t.yaml");
  };
  // Headline = Σ of the gpu classes: 120 + 60 = 180; MIG and share classes never add to it.
  const std::string ok = "{device_class: nvidia.com/gpu, unit: gpu, stranded_seconds: 120}, "
                         "{device_class: gpu.nvidia.com, unit: gpu, stranded_seconds: 60}, "
                         "{device_class: nvidia.com/mig-1g.10gb, unit: mig, stranded_seconds: 500}, "
                         "{device_class: nvidia.com/gpu.shared, unit: share, stranded_seconds: 70, "
                         "physical_unit: gpu, physical_stranded_seconds: 20}";
  auto good = load(ok, 180);
  if (!good) FAIL(good.error());
  CHECK(good->expected.incidents[0].classes.size() == 4);
  auto bad = load(ok, 750);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("stranded_gpu_seconds: 750 ≠ Σ stranded_seconds of the classes in unit gpu = 180") !=
        std::string::npos);
  auto noPhysical = load("{device_class: nvidia.com/gpu.shared, unit: share, stranded_seconds: 70}", 0);
  REQUIRE_FALSE(noPhysical.ok());
  CHECK(noPhysical.error().find("a share class states the devices behind it") != std::string::npos);
  auto badUnit = load("{device_class: nvidia.com/gpu, unit: gpus, stranded_seconds: 0}", 0);
  REQUIRE_FALSE(badUnit.ok());
  CHECK(badUnit.error().find("\"gpus\" is not one of: gpu, mig, share, device") != std::string::npos);
}
