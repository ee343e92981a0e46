#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "firstwork/core/result.hpp"

namespace firstwork::scenario {

/// A point in a drill: an offset from the drill start on the scenario clock (may be negative for
/// objects that existed before the drill began).
using Offset = std::chrono::milliseconds;

/// Parses a Go-style duration as scenario files write it: "8m", "90s", "1h30m", "6m30s", "500ms",
/// "-30m", "0"; a bare integer means seconds.
Result<Offset> parseOffset(std::string_view text);
/// The shortest Go-style spelling: "8m", "1m30s", "-30m", "0s", "250ms".
std::string formatOffset(Offset offset);

enum class ClusterRole { Manager, Worker, Standalone };
/// "manager" | "worker" | "standalone".
std::string_view clusterRoleName(ClusterRole role);

/// One simulated cluster a scenario acts on.
struct ScenarioCluster {
  std::string name;  // the key in the player's server map: "manager", "worker-1", ...
  ClusterRole role = ClusterRole::Worker;
  /// Workers: the MultiKueueCluster name the manager knows this worker by (default: `name`).
  std::string multikueueCluster;
};

enum class StepAction {
  Create,             // ApiServer::create
  Update,             // ApiServer::update (whole object)
  Apply,              // ApiServer::apply
  Patch,              // merge `body` into the current object, then ApiServer::update
  Delete,             // ApiServer::remove
  CutConnection,      // ApiServer::stop (the daemon's connection to this cluster drops)
  RestoreConnection,  // ApiServer::start (same port)
};
/// "create" | "update" | "apply" | "patch" | "delete" | "cut" | "restore".
std::string_view stepActionName(StepAction action);

/// One primitive action at one instant. Generators (`job:`, `nodes:`, ...) expand into these at
/// load time, so what the player does is fully visible here.
struct Step {
  Offset at{0};
  std::string cluster;
  StepAction action = StepAction::Create;
  std::string kind;       // "Workload", "Pod", ... (empty for connection steps)
  std::string resource;   // plural as the API server names it: "workloads", "pods", ...
  std::string ns;         // "" for cluster-scoped kinds
  std::string name;
  /// JSON with `{{...}}` placeholders rendered at play time: the object (create/update/apply) or
  /// the partial object to merge (patch). Empty for delete and connection steps.
  std::string body;
  /// Where the step came from, for messages: "timeline[4] job a-new-{i} (i=2): pod running".
  std::string origin;
  /// From `objects:` (the estate the drill starts from) rather than from the timeline.
  bool setup = false;
};

// ----------------------------------------------------------------------------------------------
// Expected figures, worked out by hand in each file (see config/scenarios/README.md). Offsets are
// relative to the drill start; GPU figures are in GPUs and GPU-seconds.

/// One device class of an incident, in the class's own unit (docs/metrics.md): what
/// /api/v1/incidents reports under `classes`.
struct ExpectedIncidentClass {
  std::string deviceClass;
  std::string unit;                 // gpu | mig | share | device
  std::optional<double> usable;     // at reconnection
  std::optional<double> demand;     // at reconnection (compatible demand)
  double strandedSeconds = 0;       // ∫ stranded of this class from reconnection to close
  std::string physicalUnit;         // share classes: unit of the devices behind the shares
  std::optional<double> physicalUsable;
  std::optional<double> physicalStrandedSeconds;
  std::optional<double> unusableForBacklogSeconds;
};

/// A reconnection incident (design §5).
struct ExpectedIncident {
  std::string cluster;                 // worker (scenario cluster name)
  std::string source = "multikueue";   // which view's disconnection opened it
  Offset disconnectedAt{0};
  Offset reconnectedAt{0};
  std::optional<Offset> firstDispatchedAt;
  std::optional<Offset> firstRunningAt;
  std::optional<Offset> firstWorkAt;
  std::optional<Offset> recoveredAt;   // when stranded returned to 0
  double usableGpus = 0;               // at reconnection
  double demandGpus = 0;               // at reconnection
  double strandedGpuSeconds = 0;       // ∫ from reconnection to close of stranded(t) dt (whole GPUs)
  std::string outcome;                 // "recovered" | "failed"
  std::vector<ExpectedIncidentClass> classes;  // per device class and unit (optional)
};

/// Live stranded GPU-seconds (firstwork_stranded_gpu_seconds_total) accumulated over the drill.
struct ExpectedStranded {
  std::string cluster;
  std::string deviceClass;
  std::string phase;  // disconnected | idle | pending_start | starting
  double gpuSeconds = 0;
};

/// Observations a latency histogram must have received: `count` samples of `seconds` each.
struct ExpectedLatency {
  std::string metric;        // e.g. "reconnect_to_first_work_seconds", "stage_seconds"
  std::string cluster;       // empty: not pinned by the scenario
  std::string clusterQueue;  // empty: not pinned
  std::string stage;         // for stage_seconds
  std::string reason;        // for reclaim_to_first_work_seconds
  std::string outcome;       // for recovery_seconds
  std::string source;        // for worker_disconnected_seconds
  int count = 0;
  double seconds = 0;
  /// The value is a lower bound (durations the daemon measures with its own clock, e.g. probe
  /// outages, which its reconnect backoff can lengthen).
  bool atLeast = false;
};

/// A reclaim (design §5): one preemptor and the victims it displaced.
struct ExpectedReclaim {
  std::string cluster;       // cluster whose Workloads carry the preemption
  std::string clusterQueue;  // the preemptor's ClusterQueue
  std::string preemptor;     // namespace/name of the preemptor Workload
  std::string reason;        // InCohortReclamation | InCohortReclaimWhileBorrowing | InCohortFairSharing
  Offset queuedAt{0};
  std::optional<Offset> firstWorkAt;
  double reclaimToFirstWorkSeconds = 0;
  std::vector<std::string> victims;  // namespace/name
  double interruptedGpuSeconds = 0;  // lost work of this preemptor's victims
  std::string outcome;               // "completed" | "failed"
};

/// Work lost by one evicted workload: gpus × (evicted − max(first_work, last checkpoint)).
struct ExpectedInterruption {
  std::string cluster;
  std::string clusterQueue;
  std::string workload;  // namespace/name
  std::string reason;    // the Preempted/Evicted reason, e.g. InClusterQueue
  double gpus = 0;
  Offset evictedAt{0};
  Offset workSince{0};   // max(first_work, last checkpoint)
  double gpuSeconds = 0;
};

/// A workload admitted but not productive for a known reason over [since, until).
struct ExpectedStuck {
  std::string cluster;  // where its pods are
  std::string clusterQueue;
  std::string workload;
  std::string reason;   // image_pull | crash_loop | config_error | unschedulable | pods_pending | no_first_work
  Offset since{0};      // admitted (the stuckAfter clock starts here)
  std::optional<Offset> until;  // empty: until the drill ends
};

/// One manager workload running on two workers at once.
struct ExpectedDuplicate {
  std::string workload;               // namespace/name of the manager Workload
  std::vector<std::string> clusters;  // the workers it runs on
  Offset from{0};
  std::optional<Offset> until;
  double gpus = 0;                    // GPUs held on each worker
};

/// A reservation made while usable free devices were fewer than requested.
struct ExpectedReservationWithoutCapacity {
  std::string cluster;
  std::string deviceClass;
  std::string workload;
  Offset at{0};
  double requested = 0;
  double usableFree = 0;
};

/// One DRA pool's state over the drill.
struct ExpectedPool {
  struct Phase {
    Offset from{0};
    std::string state;  // complete | incomplete | stale
  };
  std::string cluster;
  std::string driver;
  std::string pool;
  std::vector<Phase> phases;
  double incompleteSeconds = 0;  // pool-seconds incomplete or stale during the drill
};

/// Device counts of one cluster and device class at one instant.
struct ExpectedCapacity {
  std::string cluster;
  std::string deviceClass;
  Offset at{0};
  double usable = 0;
  double unavailable = 0;
};

/// One firstwork_gpus series when the drill ends (after its last step): the estate as it stands.
struct ExpectedGpus {
  std::string cluster;
  std::string deviceClass;
  std::string unit;   // gpu | mig | share | device | unknown
  std::string state;  // published | usable | unavailable | allocated | productive | unusable_for_backlog
  double value = 0;
};

/// A worker outage seen by one source (firstwork_worker_disconnected_seconds).
struct ExpectedOutage {
  std::string cluster;
  std::string source;  // multikueue | probe
  Offset from{0};
  Offset until{0};
  double seconds = 0;
  bool atLeast = false;  // lower bound (probe outages are measured by the daemon's clock)
};

/// How this drill compares with another scenario (the "improved" variants).
struct ExpectedComparison {
  std::string baseline;  // scenario name
  std::string figure;    // e.g. "recovery_stranded_gpu_seconds"
  double baselineValue = 0;
  double value = 0;
  double reduction = 0;         // baselineValue − value
  double reductionPercent = 0;  // 100 × reduction / baselineValue
};

/// Everything a scenario file states the daemon must report (plain data, read-only after load).
struct ExpectedFigures {
  /// Section names the file states (an empty list stated on purpose, e.g. `incidents: []`,
  /// means "none", which differs from "not stated").
  std::vector<std::string> stated;
  std::vector<ExpectedIncident> incidents;
  std::vector<ExpectedStranded> stranded;
  std::vector<ExpectedLatency> latencies;
  std::vector<ExpectedReclaim> reclaims;
  std::vector<ExpectedInterruption> interruptions;
  std::vector<ExpectedStuck> stuck;
  std::vector<ExpectedDuplicate> duplicates;
  std::vector<ExpectedReservationWithoutCapacity> reservationsWithoutCapacity;
  std::vector<ExpectedPool> pools;
  std::vector<ExpectedCapacity> capacity;
  std::vector<ExpectedGpus> gpusAtEnd;
  std::vector<ExpectedOutage> outages;
  std::vector<ExpectedComparison> comparisons;

  bool states(std::string_view section) const;
};

/// A loaded, validated scenario: primitive steps plus the figures the daemon must report.
struct Scenario {
  std::string name;
  std::string description;
  std::string sourcePath;  // file it was loaded from ("<string>" etc. otherwise)
  std::vector<ScenarioCluster> clusters;
  Offset duration{0};      // length of one play-through; every step is at or before it
  /// Setup steps (`objects:`) in file order, then timeline steps sorted by `at` (stable: steps at
  /// the same instant keep file/generation order).
  std::vector<Step> steps;
  ExpectedFigures expected;

  const ScenarioCluster* cluster(std::string_view clusterName) const;
};

/// Loads and validates a scenario file. On failure the error lists every problem found, one per
/// line, each as `<file>:<line>: <path>: <message>` with `<path>` naming the step index and key
/// (e.g. `timeline[3].job.first_work`).
Result<Scenario> loadScenario(const std::string& path);
Result<Scenario> loadScenarioFromString(std::string_view yaml,
                                        std::string_view sourceName = "<string>");
/// The Workload name Kueue's job integration gives the Workload of batch/v1 Job `jobName`
/// (`job-<name>-<5 hex>`; the hash is deterministic here, so files and tests can refer to it).
std::string jobWorkloadName(std::string_view ns, std::string_view jobName);

}  // namespace firstwork::scenario
