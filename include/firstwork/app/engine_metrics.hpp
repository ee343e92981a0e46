#pragma once
#include <memory>
#include <string_view>
#include <vector>

#include "firstwork/core/clock.hpp"

namespace prometheus {
class Registry;
}
namespace firstwork::engine {
struct Observation;
struct Snapshot;
struct IncidentClassFigures;
}  // namespace firstwork::engine
namespace firstwork::inventory {
struct InventorySnapshot;
}

namespace firstwork::records {
struct PendingRecord;
}

namespace firstwork::app {

/// The contract metrics of design §6 that come from the milestone engine and the capacity
/// inventory: latency histograms, stranded GPUs, GPU-seconds, incidents, reclaims, workloads,
/// stuck workloads, duplicates, DRA pools and connections.
///
/// Two ways in, and why:
///  * Histogram samples and the incident/reclaim/duplicate counters are fed one committed fact
///    at a time (observe(), recoveryClosed(), ...), only after the store accepted the fact as new.
///    That is what keeps a restart (which re-derives every fact from relisted objects) from
///    counting anything twice.
///  * Gauges and the live integrals (stranded and GPU-seconds) are set from snapshots: gauges
///    take the snapshot's value, counters grow by the snapshot's increase. A label set missing from
///    a snapshot has its series removed, so series go away with their cluster, queue or class.
///  * A ClusterQueue absent from the snapshots for 10 minutes of real (monotonic) time — deleted,
///    not re-applied — takes every series labelled with it along, the fact-fed histograms and
///    reclaim counters included.
/// Single-threaded writer (the event loop); scrapes read through the registry.
class EngineMetrics {
 public:
  /// `buckets`: latency histogram bounds in seconds (config metrics.buckets).
  EngineMetrics(prometheus::Registry& registry, std::vector<double> buckets);
  ~EngineMetrics();
  EngineMetrics(const EngineMetrics&) = delete;
  EngineMetrics& operator=(const EngineMetrics&) = delete;

  /// One committed histogram sample. ObservationLag samples are not handled here (SelfMetrics).
  void observe(const engine::Observation& observation);
  /// An incident reached `recovered` or `failed` (committed for the first time): counts it and
  /// adds its stranded seconds per device class and unit (shares also in the unit of the devices
  /// behind them).
  void recoveryClosed(std::string_view cluster, std::string_view outcome,
                      const std::vector<engine::IncidentClassFigures>& classes);
  /// A reclaim reached `completed` or `failed` (committed for the first time).
  void reclaimClosed(std::string_view clusterQueue, std::string_view reason,
                     std::string_view outcome);
  /// A duplicate execution was detected (committed for the first time).
  void duplicateExecution(std::string_view cluster);

  /// Exports what a record the store has just accepted as new stands for (its Effect): a
  /// histogram sample, a closed incident or reclaim, or a duplicate execution.
  void exportCommitted(const records::PendingRecord& record);

  /// Creates the per-cluster counters and cluster-only histograms at 0 for a watched worker or
  /// standalone cluster, so the first incident, outage or duplicate shows up in rate()/increase()
  /// (a series that appears with its first sample has no increase to Prometheus). Workers also
  /// get the `multikueue` outage histogram; every such cluster the `probe` one.
  void initCluster(std::string_view cluster, bool multikueueWorker);

  /// Gauges and live counters from the engine's and the inventory's snapshots. `steadyNow`
  /// (Clock::monotonicNow) judges how long a ClusterQueue has been gone: not the snapshot's time,
  /// which runs scaled in the demo.
  void apply(const engine::Snapshot& engine, const inventory::InventorySnapshot& inventory,
             MonotonicTime steadyNow);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace firstwork::app
