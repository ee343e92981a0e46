#include "firstwork/records/records.hpp"

#include <nlohmann/json.hpp>

#include "firstwork/core/rfc3339.hpp"
#include "firstwork/log/redact.hpp"

namespace firstwork::records {
namespace {

using nlohmann::json;

json timeOrNull(const std::optional<SystemTime>& t) {
  return t ? json(formatRfc3339(*t)) : json(nullptr);
}
json numberOrNull(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json workloadJson(const engine::WorkloadRef& w, const log::Redactor& r) {
  return json{{"cluster", w.cluster},       {"namespace", r.apply(w.namespace_)},
              {"name", r.apply(w.name)},    {"uid", w.uid},
              {"cluster_queue", w.clusterQueue}, {"local_queue", w.localQueue}};
}

json incidentClasses(const engine::IncidentRecord& i) {
  json classes = json::array();
  for (const auto& c : i.classes) {
    json o{{"device_class", c.deviceClass},
           {"unit", c.unit},
           {"usable", c.usable},
           {"demand", c.demand},
           {"stranded_seconds", c.strandedSeconds},
           {"unusable_for_backlog_seconds", c.unusableForBacklogSeconds}};
    if (!c.physicalUnit.empty()) {
      o["physical_unit"] = c.physicalUnit;
      o["physical_usable"] = c.physicalUsable;
      o["physical_stranded_seconds"] = c.physicalStrandedSeconds;
    }
    classes.push_back(std::move(o));
  }
  return classes;
}

json incidentObject(const engine::IncidentRecord& i) {
  return json{
      {"id", i.id},
      {"cluster", i.cluster},
      {"source", std::string(engine::incidentSourceName(i.source))},
      {"outcome", std::string(engine::incidentOutcomeName(i.outcome))},
      {"disconnected_at", timeOrNull(i.disconnectedAt)},
      {"reconnected_at", timeOrNull(i.reconnectedAt)},
      {"disconnect_reason", i.disconnectReason},
      {"usable_gpus", i.usableGpus},
      {"demand_gpus", i.demandGpus},
      {"first_dispatched_at", timeOrNull(i.firstDispatchedAt)},
      {"first_running_at", timeOrNull(i.firstRunningAt)},
      {"first_work_at", timeOrNull(i.firstWorkAt)},
      {"last_productive_at", timeOrNull(i.lastProductiveAt)},
      {"recovered_at", timeOrNull(i.recoveredAt)},
      {"closed_at", timeOrNull(i.closedAt)},
      {"stranded_gpu_seconds", i.strandedGpuSeconds},
      {"classes", incidentClasses(i)},
      {"recovery_seconds", numberOrNull(i.recoverySeconds)},  // null while open
      {"disconnected_seconds", numberOrNull(i.disconnectedSeconds)},
      {"excluded_workloads", i.excludedWorkloads},
      {"failure_reason", i.failureReason},
      {"observed_at", formatRfc3339(i.observedAt)},
  };
}

json reclaimObject(const engine::ReclaimRecord& c, const log::Redactor& r) {
  json victims = json::array();
  for (const auto& v : c.victims)
    victims.push_back(json{{"workload", workloadJson(v.workload, r)},
                           {"cycle_id", v.cycleId},
                           {"cluster", v.cluster},
                           {"reason", v.reason},
                           {"evicted_at", formatRfc3339(v.evictedAt)},
                           {"gpus", v.gpus},
                           {"work_since", timeOrNull(v.workSince)},
                           {"interrupted_gpu_seconds", v.interruptedGpuSeconds}});
  return json{
      {"id", c.id},
      {"preemptor", workloadJson(c.preemptor, r)},
      {"cycle_id", c.cycleId},
      {"cluster", c.cluster},
      {"cluster_queue", c.preemptor.clusterQueue},
      {"reason", c.reason},
      {"outcome", std::string(engine::reclaimOutcomeName(c.outcome))},
      {"queued_at", timeOrNull(c.queuedAt)},
      {"started_at", formatRfc3339(c.startedAt)},
      {"first_work_at", timeOrNull(c.firstWorkAt)},
      {"reclaim_to_first_work_seconds", numberOrNull(c.reclaimToFirstWorkSeconds)},
      {"interrupted_gpu_seconds", c.interruptedGpuSeconds},
      {"victims", victims},
      {"observed_at", formatRfc3339(c.observedAt)},
  };
}

/// A record's body, held in a block its own size: a dump grows its string by doubling, so a
/// 500-byte body kept a 960-byte block, and the first step after a sync of a large estate holds
/// tens of thousands of bodies at once (bench/README.md, change 44).
std::string bodyOf(const json& body) {
  std::string text = body.dump();
  text.shrink_to_fit();
  return text;
}

}  // namespace

std::string incidentJson(const engine::IncidentRecord& incident) {
  return incidentObject(incident).dump();
}

std::string reclaimJson(const engine::ReclaimRecord& reclaim, const log::Redactor& redactor) {
  return reclaimObject(reclaim, redactor).dump();
}

std::vector<PendingRecord> toRecords(engine::Outputs out, const log::Redactor& r) {
  using Effect = PendingRecord::Effect;
  std::vector<PendingRecord> recs;
  // Sized once: the first step after a sync turns tens of thousands of outputs into records, and
  // growing the vector moved every record built so far at each doubling (a PendingRecord is about
  // 200 bytes) through freshly faulted pages. Incidents and reclaims add at most
  // one closing record each.
  recs.reserve(out.milestones.size() + out.observations.size() + 2 * out.incidents.size() +
               2 * out.reclaims.size() + out.openCycles.size() + out.duplicates.size() +
               out.workerConnections.size());
  // Each output is moved out of its vector as its record is made, so its strings go as the
  // records come (the first step after a sync holds tens of thousands of each), and each vector
  // goes once its records are made. What a record keeps of an output (its key, an observation's
  // labels) is copied, not moved: the copies are made where the records are (the daemon makes
  // them in an arena for short-lived blocks, TransientHeapScope), and the engine's strings go
  // with its outputs, among the blocks the engine keeps (bench/README.md, change 90).
  for (auto& taken : out.milestones) {
    engine::MilestoneRecord m = std::move(taken);
    PendingRecord p;
    json body{{"workload", workloadJson(m.workload, r)},
              {"cycle_id", m.cycleId},
              {"milestone", std::string(engine::milestoneName(m.milestone))},
              {"event_time", formatRfc3339(m.eventTime)},
              {"observed_at", formatRfc3339(m.observedAt)},
              {"execution_cluster", m.executionCluster},
              {"resource", m.resource},
              {"signal", m.signal},
              {"proxy", m.proxy},
              {"reason", m.reason},
              {"preemptor_uid", m.preemptorUid},
              {"without_capacity", m.withoutCapacity},
              {"gpus", m.gpus}};
    p.record = store::Record{kMilestoneKind, std::string(m.key), m.workload.cluster,
                             m.workload.clusterQueue, m.eventTime, bodyOf(body),
                             store::WriteMode::InsertOnce};
    recs.push_back(std::move(p));
  }
  std::vector<engine::MilestoneRecord>().swap(out.milestones);
  for (auto& o : out.observations) {
    PendingRecord p;
    json body{{"histogram", std::string(engine::histogramMetricName(o.histogram))},
              {"cluster", o.cluster},
              {"cluster_queue", o.clusterQueue},
              {"stage", o.stage},
              {"reason", o.reason},
              {"outcome", o.outcome},
              {"source", o.source},
              {"resource", o.resource},
              {"seconds", o.seconds},
              {"event_time", formatRfc3339(o.eventTime)},
              {"observed_at", formatRfc3339(o.observedAt)}};
    // The key goes to the record: the exporter reads the observation's labels and value only.
    p.record = store::Record{kObservationKind, std::string(o.key), o.cluster, o.clusterQueue,
                             o.eventTime, bodyOf(body), store::WriteMode::InsertOnce};
    o.key.clear();
    p.setEffect(Effect::Observe).observation = o;  // a copy (see above)
    recs.push_back(std::move(p));
  }
  std::vector<engine::Observation>().swap(out.observations);
  for (const auto& i : out.incidents) {
    PendingRecord p;
    SystemTime t = i.disconnectedAt ? *i.disconnectedAt
                                    : (i.reconnectedAt ? *i.reconnectedAt : i.observedAt);
    auto body = incidentObject(i).dump();
    p.record = store::Record{kIncidentKind, i.id, i.cluster, "", t, body, store::WriteMode::Upsert};
    recs.push_back(std::move(p));
    bool closed = i.outcome == engine::IncidentOutcome::Recovered ||
                  i.outcome == engine::IncidentOutcome::Failed;
    // Probe incidents are telemetry gaps: they never count as recoveries (design §3).
    if (closed && i.source == engine::IncidentSource::MultiKueue) {
      PendingRecord c;
      c.record = store::Record{kIncidentClosedKind, i.id, i.cluster, "", t, body,
                               store::WriteMode::InsertOnce};
      RecordEffect& e = c.setEffect(Effect::RecoveryClosed);
      e.cluster = i.cluster;
      e.outcome = std::string(engine::incidentOutcomeName(i.outcome));
      e.strandedGpuSeconds = i.strandedGpuSeconds;
      e.classes = i.classes;
      recs.push_back(std::move(c));
    }
  }
  for (const auto& c : out.reclaims) {
    PendingRecord p;
    auto body = reclaimObject(c, r).dump();
    SystemTime t = c.queuedAt ? *c.queuedAt : c.startedAt;
    p.record = store::Record{kReclaimKind, c.id, c.cluster, c.preemptor.clusterQueue, t, body,
                             store::WriteMode::Upsert};
    recs.push_back(std::move(p));
    if (c.outcome != engine::ReclaimOutcome::Pending) {
      PendingRecord d;
      d.record = store::Record{kReclaimClosedKind, c.id, c.cluster, c.preemptor.clusterQueue, t,
                               body, store::WriteMode::InsertOnce};
      RecordEffect& e = d.setEffect(Effect::ReclaimClosed);
      e.clusterQueue = c.preemptor.clusterQueue;
      e.reason = c.reason;
      e.outcome = std::string(engine::reclaimOutcomeName(c.outcome));
      recs.push_back(std::move(d));
    }
  }
  for (const auto& c : out.openCycles) {
    PendingRecord p;
    if (c.open) {
      json body{{"workload", workloadJson(c.workload, r)},
                {"cycle_id", c.cycleId},
                {"work_since", timeOrNull(c.workSince)},
                {"observed_at", formatRfc3339(c.observedAt)}};
      p.record = store::Record{kOpenCycleKind, c.key, c.workload.cluster, c.workload.clusterQueue,
                               c.observedAt, bodyOf(body), store::WriteMode::Upsert};
    } else {
      p.record = store::Record{kOpenCycleKind, c.key, c.workload.cluster, c.workload.clusterQueue,
                               c.observedAt, "", store::WriteMode::Remove};
    }
    recs.push_back(std::move(p));
  }
  for (const auto& c : out.workerConnections) {
    PendingRecord p;
    const std::string key = "wc/" + c.worker;
    if (c.known) {
      json body{{"worker", c.worker},
                {"management_cluster", c.managementCluster},
                {"status", c.active ? "True" : "False"},
                {"since", formatRfc3339(c.since)},
                {"reason", c.reason},
                {"observed_at", formatRfc3339(c.observedAt)}};
      p.record = store::Record{kWorkerConnectionKind, key, c.worker, "", c.since, bodyOf(body),
                               store::WriteMode::Upsert};
    } else {
      p.record = store::Record{kWorkerConnectionKind, key, c.worker, "", c.observedAt, "",
                               store::WriteMode::Remove};
    }
    recs.push_back(std::move(p));
  }
  for (const auto& d : out.duplicates) {
    PendingRecord p;
    json clusters = d.clusters;
    json body{{"workload", workloadJson(d.workload, r)},
              {"cycle_id", d.cycleId},
              {"kind", std::string(engine::duplicateKindName(d.kind))},
              {"cluster", d.cluster},
              {"clusters", clusters},
              {"event_time", formatRfc3339(d.eventTime)},
              {"observed_at", formatRfc3339(d.observedAt)}};
    p.record = store::Record{kDuplicateKind, d.key, d.cluster, d.workload.clusterQueue, d.eventTime,
                             bodyOf(body), store::WriteMode::InsertOnce};
    p.setEffect(Effect::Duplicate).cluster = d.cluster;
    recs.push_back(std::move(p));
  }
  return recs;
}

}  // namespace firstwork::records
