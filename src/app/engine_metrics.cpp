#include "firstwork/app/engine_metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "firstwork/core/clock.hpp"
#include "firstwork/engine/outputs.hpp"
#include "firstwork/records/records.hpp"
#include "firstwork/inventory/inventory.hpp"
#include "firstwork/inventory/pool_tracker.hpp"

namespace firstwork::app {
namespace {

using Labels = std::map<std::string, std::string>;

/// How long a ClusterQueue must be gone before its series are removed, in real (monotonic) time:
/// the grace is about the operator re-applying a queue, and the snapshots' event-time clock can
/// run scaled (firstworkd demo plays drills 120-240x fast, where 10 snapshot minutes are seconds
/// and the next drill's re-created queue lost its histograms) or jump (a skewed cluster clock).
constexpr std::chrono::minutes kQueueGrace{10};


/// Gauges set from snapshots: series not written in an update are removed.
class GaugeSet {
 public:
  explicit GaugeSet(prometheus::Family<prometheus::Gauge>& family) : family_(family) {}
  void begin() { seen_.clear(); }
  void set(const Labels& labels, double value) {
    auto& g = family_.Add(labels);
    g.Set(value);
    live_[labels] = &g;
    seen_.insert(labels);
  }
  void end() {
    for (auto it = live_.begin(); it != live_.end();) {
      if (!seen_.count(it->first)) {
        family_.Remove(it->second);
        it = live_.erase(it);
      } else {
        ++it;
      }
    }
  }

 private:
  prometheus::Family<prometheus::Gauge>& family_;
  std::map<Labels, prometheus::Gauge*> live_;
  std::set<Labels> seen_;
};

/// Counters that follow a cumulative total from a snapshot: they grow by its increase. A label
/// set that disappears from the snapshot has its series removed; its last total is kept, so a
/// series that comes back (a ClusterQueue created again under the same name) starts from 0 and
/// grows by what accrues from then on, not by the source's whole history.
class TotalSet {
 public:
  explicit TotalSet(prometheus::Family<prometheus::Counter>& family) : family_(family) {}
  void begin() { seen_.clear(); }
  void total(const Labels& labels, double value) {
    auto& e = live_[labels];
    if (!e.counter) e.counter = &family_.Add(labels);
    // A total lower than before means the source started over (it never does within one engine);
    // the counter keeps its value and resumes from the new base.
    if (value > e.last) e.counter->Increment(value - e.last);
    e.last = value;
    seen_.insert(labels);
  }
  void end() {
    for (auto& [labels, e] : live_) {
      if (e.counter && !seen_.count(labels)) {
        family_.Remove(e.counter);
        e.counter = nullptr;
      }
    }
  }

 private:
  struct Entry {
    prometheus::Counter* counter = nullptr;
    double last = 0;
  };
  prometheus::Family<prometheus::Counter>& family_;
  std::map<Labels, Entry> live_;
  std::set<Labels> seen_;
};

prometheus::Family<prometheus::Gauge>& gauge(prometheus::Registry& r, const char* name,
                                             const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}
prometheus::Family<prometheus::Counter>& counter(prometheus::Registry& r, const char* name,
                                                 const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}
prometheus::Family<prometheus::Histogram>& histogram(prometheus::Registry& r, const char* name,
                                                     const char* help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(r);
}

}  // namespace

struct EngineMetrics::State {
  State(prometheus::Registry& r, std::vector<double> b)
      : buckets(std::move(b)),
        reservationToFirstWork(histogram(
            r, "firstwork_reservation_to_first_work_seconds",
            "Quota reserved to first useful work, one sample per admission cycle.")),
        reclaimToFirstWork(histogram(r, "firstwork_reclaim_to_first_work_seconds",
                                     "Reclaiming workload queued to its first useful work.")),
        reconnectToFirstWork(histogram(
            r, "firstwork_reconnect_to_first_work_seconds",
            "Worker reconnected to first useful work of each workload waiting for it.")),
        stage(histogram(r, "firstwork_stage_seconds", "Duration of each stage between milestones.")),
        recovery(histogram(r, "firstwork_recovery_seconds",
                           "Reconnection to recovery (or to the budget, when failed), per incident.")),
        disconnected(histogram(r, "firstwork_worker_disconnected_seconds",
                               "Worker outage durations by source (multikueue, probe).")),
        strandedSecondsTotal(counter(r, "firstwork_stranded_gpu_seconds_total",
                                     "Live integral of stranded devices (eligible, not doing useful "
                                     "work while compatible work waits), by device class, unit "
                                     "and phase.")),
        strandedGpus(gauge(r, "firstwork_stranded_gpus",
                           "Stranded devices now, by device class, unit and phase.")),
        recoveryStranded(counter(r, "firstwork_recovery_stranded_gpu_seconds_total",
                                 "Exact stranded device-seconds of reconnection incidents per "
                                 "device class and unit, added when an incident closes or "
                                 "fails.")),
        recoveries(counter(r, "firstwork_recoveries_total", "Reconnection incidents closed.")),
        reclaims(counter(r, "firstwork_reclaims_total", "Reclaims completed or failed.")),
        gpuSeconds(counter(r, "firstwork_gpu_seconds_total",
                           "Reserved, allocated and productive GPU-seconds.")),
        interrupted(counter(r, "firstwork_interrupted_gpu_seconds_total",
                            "GPU-seconds of work lost to evictions.")),
        gpus(gauge(r, "firstwork_gpus",
                   "Devices by device class, unit and state: published, usable, unavailable, "
                   "allocated, productive, unusable_for_backlog.")),
        gpuNodes(gauge(r, "firstwork_gpu_nodes",
                       "Nodes publishing an NVIDIA extended resource, by sharing mode.")),
        withoutCapacity(counter(r, "firstwork_reservations_without_capacity_total",
                                "Reservations made while usable free devices were fewer than "
                                "requested.")),
        draPools(gauge(r, "firstwork_dra_pools", "DRA pools by state.")),
        draIncomplete(counter(r, "firstwork_dra_pool_incomplete_seconds_total",
                              "Pool-seconds spent incomplete or stale.")),
        workloads(gauge(r, "firstwork_workloads", "Workloads by state.")),
        stuck(gauge(r, "firstwork_stuck_workloads",
                    "Workloads admitted but not productive past stuckAfter, by cause.")),
        duplicatesTotal(counter(r, "firstwork_duplicate_executions_total",
                                "Duplicate executions detected.")),
        duplicatesNow(gauge(r, "firstwork_duplicate_executions",
                            "Workloads executing on more than one cluster now.")),
        connected(gauge(r, "firstwork_worker_connected",
                        "1 while a worker is connected, by source (multikueue, probe).")) {}

  prometheus::Histogram::BucketBoundaries buckets;
  prometheus::Family<prometheus::Histogram>& reservationToFirstWork;
  prometheus::Family<prometheus::Histogram>& reclaimToFirstWork;
  prometheus::Family<prometheus::Histogram>& reconnectToFirstWork;
  prometheus::Family<prometheus::Histogram>& stage;
  prometheus::Family<prometheus::Histogram>& recovery;
  prometheus::Family<prometheus::Histogram>& disconnected;
  TotalSet strandedSecondsTotal;
  GaugeSet strandedGpus;
  prometheus::Family<prometheus::Counter>& recoveryStranded;
  /// The incident counter of one (cluster, device class, unit), created at 0 when first asked for.
  prometheus::Counter& recoveryStrandedSeries(const std::string& cluster,
                                             const std::string& deviceClass,
                                             const std::string& unit) {
    State& s = *this;
    return s.recoveryStranded.Add({{"cluster", cluster}, {"device_class", deviceClass}, {"unit", unit}});
  }
  prometheus::Family<prometheus::Counter>& recoveries;
  prometheus::Family<prometheus::Counter>& reclaims;
  TotalSet gpuSeconds;
  TotalSet interrupted;
  GaugeSet gpus;
  GaugeSet gpuNodes;
  TotalSet withoutCapacity;
  GaugeSet draPools;
  TotalSet draIncomplete;
  GaugeSet workloads;
  GaugeSet stuck;
  prometheus::Family<prometheus::Counter>& duplicatesTotal;
  GaugeSet duplicatesNow;
  GaugeSet connected;

  // Series labelled with a ClusterQueue that are fed one fact at a time (not from snapshots), by
  // queue, so that they go away with their queue.
  std::map<std::string, std::set<std::pair<prometheus::Family<prometheus::Histogram>*,
                                           prometheus::Histogram*>>>
      queueHistograms;
  std::map<std::string, std::set<prometheus::Counter*>> queueReclaims;
  std::set<std::string> knownQueues;            // ClusterQueues in the last snapshot
  std::map<std::string, MonotonicTime> missingSince;  // known once, absent since (real time)
  std::set<std::string> goneQueues;  // absent for kQueueGrace: their series are dropped

  prometheus::Histogram& queueHistogram(prometheus::Family<prometheus::Histogram>& family,
                                        const Labels& labels) {
    revive(labels.at("cluster_queue"));
    auto& h = family.Add(labels, buckets);
    queueHistograms[labels.at("cluster_queue")].emplace(&family, &h);
    return h;
  }
  /// A fact about a queue shows that it exists again, even before its object is seen (a
  /// re-created queue's Workloads may be listed before it): its new series must not be dropped
  /// with the old ones at the next snapshot.
  void revive(const std::string& clusterQueue) { goneQueues.erase(clusterQueue); }
  bool gone(const std::string& clusterQueue) const { return goneQueues.count(clusterQueue) != 0; }

  /// Follows the snapshot's ClusterQueues: a queue that was there and has been absent for
  /// kQueueGrace has its fact-fed series removed (the snapshot-fed ones are skipped while it is
  /// gone). The grace keeps a queue that is deleted and re-applied (GitOps, a re-install) from
  /// resetting its histograms.
  void trackQueues(const std::vector<std::string>& now, MonotonicTime at) {
    std::set<std::string> current(now.begin(), now.end());
    for (const auto& q : knownQueues)
      if (!current.count(q)) missingSince.emplace(q, at);
    for (const auto& q : current) {
      missingSince.erase(q);
      goneQueues.erase(q);
    }
    knownQueues = std::move(current);
    for (auto it = missingSince.begin(); it != missingSince.end();) {
      if (at - it->second >= kQueueGrace) {
        goneQueues.insert(it->first);
        it = missingSince.erase(it);
      } else {
        ++it;
      }
    }
    for (const auto& q : goneQueues) {
      if (auto it = queueHistograms.find(q); it != queueHistograms.end()) {
        for (auto [family, h] : it->second) family->Remove(h);
        queueHistograms.erase(it);
      }
      if (auto it = queueReclaims.find(q); it != queueReclaims.end()) {
        for (auto* c : it->second) reclaims.Remove(c);
        queueReclaims.erase(it);
      }
    }
  }
};

EngineMetrics::EngineMetrics(prometheus::Registry& registry, std::vector<double> buckets)
    : s_(std::make_unique<State>(registry, std::move(buckets))) {}
EngineMetrics::~EngineMetrics() = default;

void EngineMetrics::observe(const engine::Observation& o) {
  using engine::HistogramKind;
  switch (o.histogram) {
    case HistogramKind::ReservationToFirstWork:
      s_->queueHistogram(s_->reservationToFirstWork,
                         {{"cluster", o.cluster}, {"cluster_queue", o.clusterQueue}})
          .Observe(o.seconds);
      break;
    case HistogramKind::ReclaimToFirstWork:
      s_->queueHistogram(
            s_->reclaimToFirstWork,
            {{"cluster", o.cluster}, {"cluster_queue", o.clusterQueue}, {"reason", o.reason}})
          .Observe(o.seconds);
      break;
    case HistogramKind::ReconnectToFirstWork:
      s_->reconnectToFirstWork.Add({{"cluster", o.cluster}}, s_->buckets).Observe(o.seconds);
      break;
    case HistogramKind::Stage:
      s_->queueHistogram(
            s_->stage,
            {{"cluster", o.cluster}, {"cluster_queue", o.clusterQueue}, {"stage", o.stage}})
          .Observe(o.seconds);
      break;
    case HistogramKind::Recovery:
      s_->recovery.Add({{"cluster", o.cluster}, {"outcome", o.outcome}}, s_->buckets)
          .Observe(o.seconds);
      break;
    case HistogramKind::WorkerDisconnected:
      s_->disconnected.Add({{"cluster", o.cluster}, {"source", o.source}}, s_->buckets)
          .Observe(o.seconds);
      break;
    case HistogramKind::ObservationLag:
      break;  // SelfMetrics owns firstwork_observation_lag_seconds
  }
}

void EngineMetrics::recoveryClosed(std::string_view cluster, std::string_view outcome,
                                   const std::vector<engine::IncidentClassFigures>& classes) {
  s_->recoveries.Add({{"cluster", std::string(cluster)}, {"outcome", std::string(outcome)}})
      .Increment();
  for (const auto& c : classes) {
    s_->recoveryStrandedSeries(std::string(cluster), c.deviceClass, c.unit)
        .Increment(c.strandedSeconds);
    if (!c.physicalUnit.empty()) {
      s_->recoveryStrandedSeries(std::string(cluster), c.deviceClass, c.physicalUnit)
          .Increment(c.physicalStrandedSeconds);
    }
  }
}

void EngineMetrics::reclaimClosed(std::string_view clusterQueue, std::string_view reason,
                                  std::string_view outcome) {
  s_->revive(std::string(clusterQueue));
  auto& c = s_->reclaims.Add({{"cluster_queue", std::string(clusterQueue)},
                              {"reason", std::string(reason)},
                              {"outcome", std::string(outcome)}});
  c.Increment();
  s_->queueReclaims[std::string(clusterQueue)].insert(&c);
}

void EngineMetrics::exportCommitted(const records::PendingRecord& p) {
  using records::PendingRecord;
  switch (p.effect) {
    case PendingRecord::Effect::None:
      break;
    case PendingRecord::Effect::Observe:
      observe(p.detail->observation);
      break;
    case PendingRecord::Effect::RecoveryClosed:
      recoveryClosed(p.detail->cluster, p.detail->outcome, p.detail->classes);
      break;
    case PendingRecord::Effect::ReclaimClosed:
      reclaimClosed(p.detail->clusterQueue, p.detail->reason, p.detail->outcome);
      break;
    case PendingRecord::Effect::Duplicate:
      duplicateExecution(p.detail->cluster);
      break;
  }
}

void EngineMetrics::initCluster(std::string_view cluster, bool multikueueWorker) {
  std::string c(cluster);
  for (const char* outcome : {"recovered", "failed"}) {
    s_->recoveries.Add({{"cluster", c}, {"outcome", outcome}});
    s_->recovery.Add({{"cluster", c}, {"outcome", outcome}}, s_->buckets);
  }
  s_->duplicatesTotal.Add({{"cluster", c}});
  s_->reconnectToFirstWork.Add({{"cluster", c}}, s_->buckets);
  s_->disconnected.Add({{"cluster", c}, {"source", "probe"}}, s_->buckets);
  if (multikueueWorker) s_->disconnected.Add({{"cluster", c}, {"source", "multikueue"}}, s_->buckets);
}

void EngineMetrics::duplicateExecution(std::string_view cluster) {
  s_->duplicatesTotal.Add({{"cluster", std::string(cluster)}}).Increment();
}

void EngineMetrics::apply(const engine::Snapshot& e, const inventory::InventorySnapshot& inv,
                          MonotonicTime steadyNow) {
  auto& s = *s_;
  s.trackQueues(e.clusterQueues, steadyNow);
  s.strandedGpus.begin();
  for (const auto& g : e.stranded)
    s.strandedGpus.set({{"cluster", g.cluster},
                        {"device_class", g.deviceClass},
                        {"unit", g.unit},
                        {"phase", std::string(engine::strandedPhaseName(g.phase))}},
                       static_cast<double>(g.gpus));
  s.strandedGpus.end();

  s.strandedSecondsTotal.begin();
  std::set<std::tuple<std::string, std::string, std::string, engine::StrandedPhase>> integrated;
  for (const auto& t : e.strandedSeconds) {
    s.strandedSecondsTotal.total({{"cluster", t.cluster},
                                  {"device_class", t.deviceClass},
                                  {"unit", t.unit},
                                  {"phase", std::string(engine::strandedPhaseName(t.phase))}},
                                 t.seconds);
    integrated.emplace(t.cluster, t.deviceClass, t.unit, t.phase);
  }
  // Every phase with a gauge has its counter from 0, so the first stranded interval of a phase
  // (e.g. the first outage) shows up in increase() instead of being the series' first value.
  for (const auto& g : e.stranded)
    if (!integrated.count({g.cluster, g.deviceClass, g.unit, g.phase}))
      s.strandedSecondsTotal.total({{"cluster", g.cluster},
                                    {"device_class", g.deviceClass},
                                    {"unit", g.unit},
                                    {"phase", std::string(engine::strandedPhaseName(g.phase))}},
                                   0);
  s.strandedSecondsTotal.end();

  s.gpuSeconds.begin();
  for (const auto& t : e.gpuSeconds)
    if (!s.gone(t.clusterQueue))
      s.gpuSeconds.total({{"cluster", t.cluster},
                        {"cluster_queue", t.clusterQueue},
                        {"device_class", t.deviceClass},
                        {"unit", t.unit},
                        {"state", std::string(engine::gpuStateName(t.state))}},
                       t.seconds);
  s.gpuSeconds.end();

  s.interrupted.begin();
  for (const auto& t : e.interruptedSeconds)
    if (!s.gone(t.clusterQueue))
      s.interrupted.total(
        {{"cluster", t.cluster}, {"cluster_queue", t.clusterQueue}, {"reason", t.reason}},
        t.seconds);
  s.interrupted.end();

  s.gpus.begin();
  for (const auto& g : e.gpus) {
    s.gpus.set({{"cluster", g.cluster}, {"device_class", g.deviceClass}, {"unit", g.unit},
                {"state", g.state}},
               static_cast<double>(g.gpus));
    // Incident figures of a class that exists start at 0, so the first incident shows up in
    // increase() (see initCluster).
    if (g.state == "usable" && g.unit != "unknown") {
      s.recoveryStrandedSeries(g.cluster, g.deviceClass, g.unit);
    }
  }
  s.gpus.end();

  s.gpuNodes.begin();
  for (const auto& n : inv.gpuNodes) {
    s.gpuNodes.set({{"cluster", n.cluster}, {"mode", std::string(inventory::sharingModeName(n.mode))}},
                   static_cast<double>(n.nodes));
  }
  s.gpuNodes.end();

  s.withoutCapacity.begin();
  for (const auto& c : e.reservationsWithoutCapacity)
    s.withoutCapacity.total({{"cluster", c.cluster}, {"device_class", c.deviceClass}, {"unit", c.unit}},
                            static_cast<double>(c.count));
  s.withoutCapacity.end();

  s.workloads.begin();
  for (const auto& w : e.workloads)
    if (!s.gone(w.clusterQueue))
      s.workloads.set({{"cluster", w.cluster},
                     {"cluster_queue", w.clusterQueue},
                     {"state", std::string(engine::workloadStateName(w.state))}},
                    static_cast<double>(w.count));
  s.workloads.end();

  s.stuck.begin();
  for (const auto& w : e.stuck)
    if (!s.gone(w.clusterQueue))
      s.stuck.set({{"cluster", w.cluster},
                 {"cluster_queue", w.clusterQueue},
                 {"reason", std::string(engine::stuckReasonName(w.reason))}},
                static_cast<double>(w.count));
  s.stuck.end();

  s.duplicatesNow.begin();
  for (const auto& d : e.duplicatesNow)
    s.duplicatesNow.set({{"cluster", d.cluster}}, static_cast<double>(d.count));
  s.duplicatesNow.end();

  s.connected.begin();
  for (const auto& c : e.connections)
    s.connected.set({{"cluster", c.cluster},
                     {"source", std::string(engine::incidentSourceName(c.source))}},
                    c.connected ? 1 : 0);
  s.connected.end();

  s.draPools.begin();
  for (const auto& p : inv.poolCounts)
    for (size_t i = 0; i < p.byState.size(); ++i)
      s.draPools.set(
          {{"cluster", p.cluster},
           {"driver", p.driver},
           {"state", std::string(inventory::poolStateName(static_cast<inventory::PoolState>(i)))}},
          static_cast<double>(p.byState[i]));
  s.draPools.end();

  s.draIncomplete.begin();
  for (const auto& p : inv.poolIncompleteSeconds)
    s.draIncomplete.total({{"cluster", p.cluster}, {"driver", p.driver}}, p.seconds());
  s.draIncomplete.end();
}

}  // namespace firstwork::app
