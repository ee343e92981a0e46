#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "firstwork/core/clock.hpp"

namespace firstwork::engine {

// ---------------------------------------------------------------------------------------------
// Plain data the MilestoneEngine hands out. Every record that a store keeps or a histogram
// observes carries a STABLE KEY built only from object identities and event times (never from
// observation times or counters local to this process), so that the same fact re-derived after a
// restart and relist has the same key and `InsertOnce` refuses it:
//
//   milestone     ms/<home cluster>/<workload uid>/<cycle id>/<milestone>
//   stage etc.    obs/<histogram>[/<stage>]/<home cluster>/<workload uid>/<cycle id>
//   lag           lag/<home cluster>/<workload uid>/<cycle id>/<milestone>
//   reconnect     obs/reconnect_to_first_work/<incident id>/<workload uid>
//   reconnect     obs/stage/reconnect_to_dispatched/<incident id>/<workload uid>
//   recovery      obs/recovery/<incident id>
//   outage        obs/worker_disconnected/<incident id>
//   reclaim obs   obs/reclaim_to_first_work/<home cluster>/<preemptor uid>/<cycle id>
//   incident      incident/<cluster>/<source>/<disconnected_at unix ms>
//                 (incident/<cluster>/<source>/r<reconnected_at unix ms> when the outage was not
//                 seen, only its end)
//   reclaim       reclaim/<home cluster>/<preemptor uid>/<cycle id>
//   duplicate     dup/<home cluster>/<workload uid>/<cycle id>/<concurrent|rerun>/<cluster>
//
// <cycle id> is the cycle's `queued` event time in Unix milliseconds (creationTimestamp for the
// first cycle, the Requeued=True transition for later ones), which the Workload object itself
// carries, so it survives a restart. <home cluster> is the cluster of the manager (MultiKueue) or
// standalone Workload; a workload's identity is its uid there.
// ---------------------------------------------------------------------------------------------

/// Per-cycle milestones (design §3).
enum class Milestone : uint8_t {
  Queued,
  Reserved,
  Dispatched,
  Admitted,
  Scheduled,
  Running,
  FirstWork,
  Evicted,
  Preempted,
  Released,
  Finished,
};
inline constexpr size_t kMilestoneCount = 11;
/// "queued" | "reserved" | "dispatched" | "admitted" | "scheduled" | "running" | "first_work" |
/// "evicted" | "preempted" | "released" | "finished".
std::string_view milestoneName(Milestone milestone);
/// The milestone milestoneName() names; nullopt for any other string.
std::optional<Milestone> milestoneFromName(std::string_view name);

/// `stage` label of firstwork_stage_seconds.
enum class Stage : uint8_t {
  QueuedToReserved,
  ReservedToDispatched,
  ReconnectToDispatched,
  DispatchedToScheduled,
  ReservedToScheduled,
  ScheduledToRunning,
  RunningToFirstWork,
  EvictedToReleased,
};
inline constexpr size_t kStageCount = 8;
std::string_view stageName(Stage stage);

/// Which histogram of design §6 an observation belongs to.
enum class HistogramKind : uint8_t {
  ReservationToFirstWork,  // labels cluster, cluster_queue
  ReclaimToFirstWork,      // cluster, cluster_queue, reason
  ReconnectToFirstWork,    // cluster
  Stage,                   // cluster, cluster_queue, stage
  Recovery,                // cluster, outcome
  WorkerDisconnected,      // cluster, source
  ObservationLag,          // cluster, resource
};
inline constexpr size_t kHistogramKindCount = 7;
/// The metric name, e.g. "firstwork_reservation_to_first_work_seconds".
std::string_view histogramMetricName(HistogramKind kind);

/// One histogram sample. Only the labels of its histogram are filled.
struct Observation {
  std::string key;  // stable identity (see above)
  HistogramKind histogram = HistogramKind::Stage;
  std::string cluster;
  std::string clusterQueue;
  std::string stage;
  std::string reason;
  std::string outcome;
  std::string source;
  std::string resource;
  double seconds = 0;
  SystemTime eventTime{};   // event time at which the measured interval ended
  SystemTime observedAt{};  // when the engine learned it
};

/// Identity of a logical workload: the manager Workload on MultiKueue, else the Workload itself.
struct WorkloadRef {
  std::string cluster;  // home cluster (management or standalone/worker-local)
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string clusterQueue;  // status.admission.clusterQueue when known (else learned from its LocalQueue)
  std::string localQueue;    // spec.queueName
};

/// One milestone of one admission cycle. Emitted once per (workload, cycle, milestone); a
/// milestone never changes once emitted.
struct MilestoneRecord {
  std::string key;
  WorkloadRef workload;
  std::string cycleId;  // queued time, Unix ms
  int32_t cycle = 0;    // ordinal among the cycles this process saw (display only, not stable)
  Milestone milestone = Milestone::Queued;
  SystemTime eventTime{};   // from the object (condition time, startedAt, annotation value, ...)
  SystemTime observedAt{};  // when the daemon saw it
  /// Where it happened: the worker for pod-side milestones and dispatch, else the home cluster.
  std::string executionCluster;
  /// Kind that carried the event time: "workloads", "pods", "external", "multikueueclusters".
  std::string resource;
  /// first_work: "annotation" | "condition" | "ready_proxy" | the external signal's name.
  std::string signal;
  bool proxy = false;  // first_work from the Ready proxy
  /// Condition reason (queued: "Created" or the Requeued reason; evicted, preempted, released,
  /// finished: the condition's reason).
  std::string reason;
  std::string preemptorUid;  // preempted: from the condition message
  /// reserved (standalone) / dispatched (MultiKueue): usable free devices at that event time were
  /// fewer than requested (design §5).
  bool withoutCapacity = false;
  /// Devices of all classes the workload wants (its podsets' total) when the milestone was
  /// emitted; 0 while unknown (e.g. an unresolved claim template).
  int64_t gpus = 0;
};

enum class IncidentSource : uint8_t { MultiKueue, Probe };
/// "multikueue" | "probe".
std::string_view incidentSourceName(IncidentSource source);

enum class IncidentOutcome : uint8_t {
  Open,        // disconnected, not reconnected yet
  Recovering,  // reconnected, stranded devices not back to 0 yet
  Recovered,   // stranded back to 0 within the budget (probe: reconnected)
  Failed,      // budget ran out, or the worker disconnected again before recovering
};
/// "open" | "recovering" | "recovered" | "failed".
std::string_view incidentOutcomeName(IncidentOutcome outcome);

/// A worker outage and its recovery (design §5, §7). Re-emitted on every change with the same id
/// (store it with Upsert).
///
/// MultiKueue incidents (`source` multikueue) open when the worker's MultiKueueCluster `Active`
/// goes False, reconnect when it goes True, and close when stranded devices on the worker return
/// to 0 (`recovered_at`) or fail at `reconnected_at + recoveryBudget`. `stranded_gpu_seconds` is
/// the exact event-time integral from `reconnected_at` to the close, over all device classes,
/// leaving out devices of workloads stuck on their own fault (image_pull, config_error,
/// crash_loop; counted in `excluded_workloads`).
///
/// Probe incidents (`source` probe) are the daemon's own lost connection to a cluster: a telemetry
/// gap, not a recovery delay. They close at reconnection, always `recovered`, with no stranded
/// figure, and do not count in recoveries or recovery latencies.
///
/// Units: the per-class figures (`classes`) keep every device class in its own unit; the headline
/// `usableGpus`, `demandGpus` and `strandedGpuSeconds` add up the classes whose unit is a whole
/// GPU (`gpu`) only — MIG instances, shares and other devices are never added to them.

/// One device class of a closed MultiKueue incident, in the class's own unit.
struct IncidentClassFigures {
  std::string deviceClass;
  std::string unit;        // "gpu" | "mig" | "share" | "device"
  int64_t usable = 0;      // at reconnection
  int64_t demand = 0;      // at reconnection (compatible demand: see Snapshot)
  double strandedSeconds = 0;  // ∫ stranded of this class from reconnection to close
  /// Share classes only: the devices behind the shares (unit `physicalUnit`), where one
  /// productive tenant makes a device productive.
  std::string physicalUnit;
  int64_t physicalUsable = 0;
  double physicalStrandedSeconds = 0;
  /// ∫ free devices of this class while work waited on the worker that none of it could use
  /// (e.g. free 1g.10gb MIG instances under a 3g.40gb backlog): not stranded.
  double unusableForBacklogSeconds = 0;
  bool operator==(const IncidentClassFigures&) const = default;
};

struct IncidentRecord {
  std::string id;
  std::string cluster;
  IncidentSource source = IncidentSource::MultiKueue;
  IncidentOutcome outcome = IncidentOutcome::Open;
  std::optional<SystemTime> disconnectedAt;  // unset when only the reconnection was seen
  std::optional<SystemTime> reconnectedAt;
  std::string disconnectReason;  // condition reason, e.g. ClientConnectionFailed
  SystemTime observedAt{};       // when this version of the record was produced
  // At reconnection (event time), summed over device classes:
  int64_t usableGpus = 0;
  int64_t demandGpus = 0;
  std::optional<SystemTime> firstDispatchedAt;  // first dispatch to the worker at/after reconnection
  std::optional<SystemTime> firstRunningAt;
  std::optional<SystemTime> firstWorkAt;
  std::optional<SystemTime> lastProductiveAt;  // when the last device needed became productive
  std::optional<SystemTime> recoveredAt;       // close time (recovered only)
  std::optional<SystemTime> closedAt;          // recoveredAt, or the failure time
  double strandedGpuSeconds = 0;
  /// Per device class, sorted by class; set when the incident closes.
  std::vector<IncidentClassFigures> classes;
  std::optional<double> recoverySeconds;  // reconnected → close (or failure time); unknown while open
  /// disconnected → reconnected; unset unless both are known (an outage seen only by its end).
  std::optional<double> disconnectedSeconds;
  int32_t excludedWorkloads = 0;
  std::string failureReason;  // "budget" | "disconnected_again"
};

enum class ReclaimOutcome : uint8_t { Pending, Completed, Failed };
/// "pending" | "completed" | "failed".
std::string_view reclaimOutcomeName(ReclaimOutcome outcome);

struct ReclaimVictim {
  WorkloadRef workload;
  std::string cycleId;
  std::string cluster;  // where it was evicted
  std::string reason;   // Preempted condition reason
  SystemTime evictedAt{};
  int64_t gpus = 0;     // devices of all classes it held
  /// max(first_work, last checkpoint) of the interrupted cycle; unset when it never did useful work.
  std::optional<SystemTime> workSince;
  double interruptedGpuSeconds = 0;  // gpus × (evicted − workSince), ≥ 0
};

/// A reclaim (design §5): workload P whose admission preempted victims for InCohortReclamation,
/// InCohortReclaimWhileBorrowing, InCohortFairSharing (or the pre-v0.8 `InCohort`).
/// InClusterQueue preemptions are priority preemptions inside one queue, not reclaims of lent
/// quota: they get no reclaim record (their victims' lost work still counts in the interrupted
/// GPU-seconds counter with reason InClusterQueue). Re-emitted on every change (Upsert by id).
struct ReclaimRecord {
  std::string id;
  WorkloadRef preemptor;  // uid always set; the rest once the preemptor Workload was seen
  std::string cycleId;    // the preemptor's cycle
  std::string cluster;    // where the preemption happened
  std::string reason;     // first victim's Preempted reason
  ReclaimOutcome outcome = ReclaimOutcome::Pending;
  std::vector<ReclaimVictim> victims;
  std::optional<SystemTime> queuedAt;     // P.queued
  SystemTime startedAt{};                 // first victim evicted
  std::optional<SystemTime> firstWorkAt;  // P.first_work
  std::optional<double> reclaimToFirstWorkSeconds;  // P.first_work − P.queued
  double interruptedGpuSeconds = 0;                 // sum over victims
  SystemTime observedAt{};
};

enum class DuplicateKind : uint8_t { Concurrent, Rerun };
/// "concurrent" | "rerun".
std::string_view duplicateKindName(DuplicateKind kind);

/// One manager workload with running pods on two workers at once (concurrent), or running again
/// after it finished (rerun). Emitted once per key.
struct DuplicateExecution {
  std::string key;
  WorkloadRef workload;
  std::string cycleId;
  DuplicateKind kind = DuplicateKind::Concurrent;
  std::string cluster;                // where the extra execution runs
  std::vector<std::string> clusters;  // every cluster with running pods at detection
  SystemTime eventTime{};             // latest pod start involved
  SystemTime observedAt{};
};

/// Everything produced since the previous MilestoneEngine::advance, in production order.
/// What a restart cannot derive again about an admission cycle that holds (or held) quota and
/// has not been released: once its Workload is requeued the object no longer shows the cycle, and
/// once its pods are gone their checkpoints are unknown. Emitted when a cycle is reserved, when
/// its work-since changes and when it ends (`open` false: the durable copy goes). The daemon
/// stores the open ones and gives them back with MilestoneEngine::restoreCycle().
struct OpenCycleRecord {
  std::string key;  // "oc/<cluster>/<uid>/<cycle id>"
  WorkloadRef workload;
  std::string cycleId;
  bool open = true;
  /// max(first work, last checkpoint) up to its eviction, as far as known.
  std::optional<SystemTime> workSince;
  SystemTime observedAt{};
};

/// Kueue's view of one worker as last seen: its MultiKueueCluster's `Active` condition. A restart
/// cannot tell that a worker was lost and regained while the daemon was down (the object then
/// shows only the reconnection) unless it knows what the condition said before. Emitted when the
/// condition's status or transition time changes, `known` false when the MultiKueueCluster is
/// deleted (the durable copy goes). The daemon stores it and gives it back with
/// MilestoneEngine::restoreWorkerConnection().
struct WorkerConnectionRecord {
  std::string worker;             // the worker's configured cluster name
  std::string managementCluster;  // where its MultiKueueCluster lives
  bool known = true;
  bool active = false;  // Active=True (else False)
  SystemTime since{};   // the condition's lastTransitionTime
  std::string reason;
  SystemTime observedAt{};
};

struct Outputs {
  std::vector<MilestoneRecord> milestones;
  std::vector<Observation> observations;
  std::vector<IncidentRecord> incidents;
  std::vector<ReclaimRecord> reclaims;
  std::vector<DuplicateExecution> duplicates;
  std::vector<OpenCycleRecord> openCycles;
  std::vector<WorkerConnectionRecord> workerConnections;
  bool empty() const {
    return milestones.empty() && observations.empty() && incidents.empty() && reclaims.empty() &&
           duplicates.empty() && openCycles.empty() && workerConnections.empty();
  }
  /// The outputs of every kind together.
  size_t size() const {
    return milestones.size() + observations.size() + incidents.size() + reclaims.size() +
           duplicates.size() + openCycles.size() + workerConnections.size();
  }
};

// ---------------------------------------------------------------------------------------------
// Snapshot: gauges now and cumulative counters (monotonic for each label set during the process
// lifetime; a metrics layer increments Prometheus counters by the difference).
// ---------------------------------------------------------------------------------------------

/// `phase` label of the stranded figures.
enum class StrandedPhase : uint8_t { Disconnected, Idle, PendingStart, Starting };
inline constexpr size_t kStrandedPhaseCount = 4;
/// "disconnected" | "idle" | "pending_start" | "starting".
std::string_view strandedPhaseName(StrandedPhase phase);

/// `state` label of firstwork_workloads.
enum class WorkloadState : uint8_t { Queued, Reserved, Dispatched, Running, Productive };
inline constexpr size_t kWorkloadStateCount = 5;
std::string_view workloadStateName(WorkloadState state);

/// `reason` label of firstwork_stuck_workloads.
enum class StuckReason : uint8_t {
  ImagePull,
  CrashLoop,
  ConfigError,
  Unschedulable,
  PodsPending,
  NoFirstWork,
};
inline constexpr size_t kStuckReasonCount = 6;
std::string_view stuckReasonName(StuckReason reason);
/// True for reasons that are the workload's own fault (image_pull, crash_loop, config_error):
/// their devices are kept out of incident figures.
bool isWorkloadCaused(StuckReason reason);

/// `state` label of firstwork_gpu_seconds_total.
enum class GpuState : uint8_t { Reserved, Allocated, Productive };
std::string_view gpuStateName(GpuState state);

// Units: every figure below that has a device class also has a `unit` ("gpu", "mig", "share",
// "device", "unknown"; inventory::Unit). A share class ("<resource>.shared") appears twice: in
// unit "share" (its replicas) and in the unit of the devices behind them ("gpu", or "mig" for
// shares of MIG instances), where one productive tenant makes the device productive. Demand is
// *compatible* demand: work waiting for a cluster counts toward every class that can serve it (a
// plain nvidia.com/gpu request toward whole GPUs and toward time-sliced shares of nvidia.com/gpu),
// so stranded figures of different classes must never be added.

struct StrandedGauge {
  std::string cluster;
  std::string deviceClass;
  std::string unit;
  StrandedPhase phase = StrandedPhase::Idle;
  int64_t gpus = 0;
};

struct WorkloadCount {
  std::string cluster;
  std::string clusterQueue;
  WorkloadState state = WorkloadState::Queued;
  int64_t count = 0;
};

struct StuckCount {
  std::string cluster;
  std::string clusterQueue;
  StuckReason reason = StuckReason::NoFirstWork;
  int64_t count = 0;
};

/// firstwork_gpus: published / usable / unavailable / allocated from the inventory, productive
/// and unusable_for_backlog from the engine. Unclassified capacity is device class "unknown",
/// unit "unknown" (published / usable / allocated).
struct GpuGauge {
  std::string cluster;
  std::string deviceClass;
  std::string unit;
  /// "published" | "usable" | "unavailable" | "allocated" | "productive" |
  /// "unusable_for_backlog" (free devices while work waits on the cluster that none of it can use)
  std::string state;
  int64_t gpus = 0;
};

struct ConnectionGauge {
  std::string cluster;
  IncidentSource source = IncidentSource::MultiKueue;
  bool connected = false;
};

struct ClusterCount {  // firstwork_duplicate_executions, firstwork_pods_without_workload
  std::string cluster;
  int64_t count = 0;
};

// Cumulative counters.
struct StrandedSecondsTotal {  // firstwork_stranded_gpu_seconds_total
  std::string cluster;
  std::string deviceClass;
  std::string unit;
  StrandedPhase phase = StrandedPhase::Idle;
  double seconds = 0;
};
struct GpuSecondsTotal {  // firstwork_gpu_seconds_total
  std::string cluster;
  std::string clusterQueue;
  std::string deviceClass;
  std::string unit;
  GpuState state = GpuState::Reserved;
  double seconds = 0;
};
struct InterruptedSecondsTotal {  // firstwork_interrupted_gpu_seconds_total
  std::string cluster;
  std::string clusterQueue;
  std::string reason;
  double seconds = 0;
};
struct RecoveryTotals {  // firstwork_recoveries_total, firstwork_recovery_stranded_gpu_seconds_total
  std::string cluster;
  int64_t recovered = 0;
  int64_t failed = 0;
  double strandedGpuSeconds = 0;
};
struct ReclaimTotal {  // firstwork_reclaims_total
  std::string clusterQueue;
  std::string reason;
  ReclaimOutcome outcome = ReclaimOutcome::Completed;
  int64_t count = 0;
};
struct LabelledCount {  // reservations without capacity (cluster, device_class), duplicates (cluster)
  std::string cluster;
  std::string deviceClass;
  std::string unit;
  int64_t count = 0;
};

/// Data-quality counters: inputs the engine skipped or could not use.
struct EngineStats {
  uint64_t unknownCluster = 0;          // events for a cluster not in the configuration
  uint64_t ignoredObjects = 0;          // kinds not expected on that cluster's role
  uint64_t rejectedInventoryObjects = 0;  // malformed Nodes/Pods/Claims/Slices the inventory refused
  uint64_t invalidSignals = 0;          // unparsable firstwork.dev/* annotation values (per pod and value)
  uint64_t unmatchedSignals = 0;        // external signals for a pod not seen yet (kept, retried)
  uint64_t unresolvedPods = 0;          // pods whose workload is unknown, deleted ones too (gauge)
  uint64_t unresolvedClaimTemplates = 0;  // podset claims whose template's devices are unknown (gauge)
  uint64_t learnedClaimTemplates = 0;   // templates whose devices were learned from claims (gauge)
  uint64_t trackedWorkloads = 0;        // logical workloads in memory (gauge)
  uint64_t trackedPods = 0;             // gauge
  uint64_t timelinePoints = 0;          // gauge
};

struct Snapshot {
  SystemTime at{};  // the last advance
  std::vector<StrandedGauge> stranded;   // every (cluster, class) with capacity or demand, all phases
  std::vector<WorkloadCount> workloads;  // non-zero only
  std::vector<StuckCount> stuck;         // non-zero only
  std::vector<GpuGauge> gpus;
  std::vector<ConnectionGauge> connections;
  std::vector<ClusterCount> duplicatesNow;  // every worker/standalone cluster, zeros included
  /// Pods on each worker/standalone cluster (zeros included) that no Workload claims: pods of
  /// other controllers (DaemonSets, Deployments), and pods seen before their Workload; not the
  /// deleted ones. The engine keeps a copy of each one's metadata until a Workload resolves it
  /// or gc collects it an hour after its deletion (EngineStats::unresolvedPods counts all it
  /// keeps, the deleted ones too).
  std::vector<ClusterCount> podsWithoutWorkload;
  std::vector<StrandedSecondsTotal> strandedSeconds;
  std::vector<GpuSecondsTotal> gpuSeconds;
  std::vector<InterruptedSecondsTotal> interruptedSeconds;
  std::vector<RecoveryTotals> recoveries;
  std::vector<ReclaimTotal> reclaims;
  std::vector<LabelledCount> reservationsWithoutCapacity;
  std::vector<LabelledCount> duplicateExecutions;  // firstwork_duplicate_executions_total
  std::vector<IncidentRecord> openIncidents;       // outcome open or recovering
  std::vector<ReclaimRecord> pendingReclaims;
  /// Names of the ClusterQueue objects that exist now on management clusters (sorted, unique).
  /// The exporter drops a queue's series when its name leaves this list.
  std::vector<std::string> clusterQueues;
  EngineStats stats;
};

}  // namespace firstwork::engine
