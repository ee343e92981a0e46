#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "firstwork/core/clock.hpp"
#include "firstwork/engine/engine_config.hpp"
#include "firstwork/engine/outputs.hpp"
#include "firstwork/inventory/inventory.hpp"
#include "firstwork/model/decode.hpp"
#include "firstwork/model/object.hpp"

namespace firstwork::engine {

/// The milestone engine (design §3–§5): joins Pods, Workload copies and claims to logical
/// workloads, derives per-cycle milestones from the objects' own timestamps, keeps the capacity
/// ledger and stranded(t) as an event-time timeline, and tracks reconnection incidents, reclaims,
/// stuck workloads and duplicate executions. Pure — no clock reads, no I/O: every input carries
/// its times. Single-threaded: owned and called by the daemon's event-loop thread only.
///
/// Calling protocol:
///  * feed watch events with onObject() (Bookmark/Error events are ignored), the daemon's own
///    connection state with onConnection(), external useful-work signals with
///    onUsefulWorkSignal();
///  * call advance(now) after each batch of events (e.g. each LIST page or watch read) and on a
///    timer (1 s): inputs are only recorded until then, so a batch is judged as a whole (the
///    earliest signal among pods listed together wins), and time-driven decisions (stuck, budgets,
///    incident close) are made there. advance() returns everything produced since the last call;
///  * report onConnection(cluster, false, ...) before a cluster's first LIST and
///    onConnection(cluster, true, ...) once all of its watches have (re)listed: incident closes,
///    failures and reclaim failures are not decided while a cluster involved is disconnected,
///    because its objects may still arrive late with past timestamps. A first `false` without an
///    earlier `true` is not an outage.
class MilestoneEngine {
 public:
  explicit MilestoneEngine(EngineConfig config);
  ~MilestoneEngine();
  MilestoneEngine(const MilestoneEngine&) = delete;
  MilestoneEngine& operator=(const MilestoneEngine&) = delete;
  MilestoneEngine(MilestoneEngine&&) noexcept;
  MilestoneEngine& operator=(MilestoneEngine&&) noexcept;

  /// One watch event of any watched kind on `cluster` (a configured cluster name). Slices, Nodes,
  /// Pods and ResourceClaims are also forwarded to the capacity inventory.
  void onObject(std::string_view cluster, model::EventType type, const model::Object& object,
                SystemTime observedAt);
  /// The same for an object the caller shares (the reflector's store): the engine keeps the
  /// pointer instead of a copy of the object.
  void onObject(std::string_view cluster, model::EventType type,
                std::shared_ptr<const model::Object> object, SystemTime observedAt);
  /// The object of `kind` and `uid` on `cluster` is gone, its final state unknown: a relist did
  /// not list it, or its resource went away, and the reflector keeps no objects of this kind
  /// (kube::ReflectorOptions::keepObjects; client-go's DeletedFinalStateUnknown). The engine
  /// deletes it as it last saw it, as if that state had come deleted. It keeps its Workloads and
  /// pods, and the inventory its ResourceClaims, which it finds by `nameHash`
  /// (kube::ObjectEvent::nameHash: model::hashOf of the object's namespace and name); for any
  /// other kind, or an object it does not hold, nothing happens (counted as ignored).
  void onDeletedUnknown(std::string_view cluster, model::Kind kind, std::string_view uid,
                        uint64_t nameHash, SystemTime observedAt);
  /// The daemon's own connection to `cluster` (source `probe`): `eventTime` is when it was lost or
  /// regained as far as the daemon can tell.
  void onConnection(std::string_view cluster, bool connected, SystemTime eventTime,
                    SystemTime observedAt);
  /// Whether every watch of the reachable `cluster` is streaming (true by default). While one is
  /// not (a relist after 410 Gone, retries after 429), its objects are not current: as while it
  /// is disconnected, incident closes and failures, stuck verdicts and reclaim failures that
  /// involve it wait, but no incident opens (its Kubernetes API is reachable; the daemon is
  /// behind). Found by the fault soak: a recovery closed on the manager's finished Workloads
  /// while the worker's pods, with their first useful work, were still being relisted.
  void onWatchesCurrent(std::string_view cluster, bool current);
  /// An external useful-work signal (e.g. the PromQL probe) for a pod of `cluster`, named by uid
  /// or by "namespace/name"; `signal` names the source ("promql"). The earliest time per pod is
  /// kept; a signal for a pod not seen yet waits for it.
  void onUsefulWorkSignal(std::string_view cluster, std::string_view pod, SystemTime at,
                          std::string signal, SystemTime observedAt);
  /// Re-opens an incident that was open or recovering when the daemon stopped (from the store),
  /// so that its recovery is still measured after a restart. Call before the first advance.
  void restoreIncident(const IncidentRecord& incident);
  /// Re-opens a reclaim that was pending when the daemon stopped (from the store), so that it
  /// still completes at its preemptor's first work, or fails at startedAt + reclaimBudget, after
  /// a restart. Call before the first advance; records not pending, already known or of an
  /// unknown cluster are ignored. Its victims keep their restored figures (evictedAt, gpus,
  /// workSince, interrupted GPU-seconds, reason, cluster, workload) — their interrupted cycle's
  /// pods are usually gone by the relist, so those can no longer be derived — unless the relisted
  /// objects give a derivation with workSince set; victims first seen after the restart are
  /// added. The record's cycleId and its victims' cycleId may be empty (not stored): the first
  /// is then the id's last segment, a victim's cycle the one evicted at its evictedAt.
  /// firstwork_interrupted_gpu_seconds_total restarts from 0 in a new process; a victim
  /// counts there when its cycle's quota is released, so a restored victim whose interrupted
  /// cycle this engine first sees already released (or never sees: requeued, a new cycle) was
  /// counted by the previous process and is NOT counted again; one first seen still holding
  /// quota (the daemon died between eviction and release) is counted here at its release.
  void restoreReclaim(const ReclaimRecord& reclaim);
  /// Re-opens an admission cycle that held quota and was not released when the daemon stopped,
  /// from its stored milestones (all of one workload's cycle: same workload cluster/uid and
  /// cycleId; others are ignored) and the work-since of its OpenCycleRecord (nullopt: unknown).
  /// A Workload requeued meanwhile shows only its new cycle, and the old cycle's pods are gone,
  /// so without this the old cycle's eviction, release, evicted_to_released and lost work would
  /// be lost; with it the relisted object finishes the old cycle as an uninterrupted process
  /// would have. The restored milestones count as emitted. Ignored unless the records include
  /// queued and reserved and neither released nor finished, or for an unknown cluster. Held
  /// until the workload's home cluster reports onConnection(true) (all listed): a Workload not
  /// listed by then is gone, and its OpenCycleRecord is closed. Call before the first advance
  /// (after restoreReclaim: a restored victim's lost work then counts at its release with the
  /// reclaim's figure when the cycle's pods are gone).
  void restoreCycle(const std::vector<MilestoneRecord>& milestones,
                    std::optional<SystemTime> workSince = std::nullopt);
  /// Gives back what a worker's MultiKueueCluster `Active` condition said when the daemon
  /// stopped (its last WorkerConnectionRecord). A relisted condition that is True again with a
  /// later transition then opens an incident whose start is unknown (lost and regained while the
  /// daemon was down), as an uninterrupted process cut off from the manager would. Call before
  /// the first advance; ignored for a worker that is not configured, once that worker's
  /// MultiKueueCluster has been seen, and for a record that is not `known`.
  void restoreWorkerConnection(const WorkerConnectionRecord& connection);
  /// Processes what was fed since the last call, runs time-driven logic up to `now` (stuck,
  /// budgets, incident closes, live integrals) and returns everything produced since the last call.
  Outputs advance(SystemTime now);
  /// Receives a part of what advance() produces (see below).
  using OutputSink = std::function<void(Outputs&&)>;
  /// Outputs in a part that advance(now, sink) hands over while it runs.
  static constexpr size_t kOutputsPerPart = 1024;
  /// advance(now), handing what it produces to `sink` in parts as it goes: a part once about
  /// kOutputsPerPart outputs have accumulated while it settles workloads, and the rest at the end
  /// (no part when nothing was produced). Together the parts are what advance(now) would return,
  /// in the same order. The first step after a sync produces hundreds of thousands of outputs: held
  /// until the end of the step, their strings stayed among the blocks the step made for good, and
  /// left those blocks' memory a third used once they were freed (bench/README.md, change 90).
  /// `sink` must not call the engine.
  void advance(SystemTime now, const OutputSink& sink);
  /// Gauges and cumulative counters as of the last advance().
  Snapshot snapshot() const;
  /// The capacity inventory fed by this engine (read-only: pools, classes, unclassified devices).
  const inventory::Inventory& inventory() const;
  const EngineConfig& config() const;

  struct State;

 private:
  std::unique_ptr<State> s_;
};

}  // namespace firstwork::engine
