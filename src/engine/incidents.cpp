// Reconnection incidents (design §5): Kueue's view of a worker (MultiKueueCluster `Active`) and,
// separately, the daemon's own connection (probe, a telemetry gap). A MultiKueue incident's
// figure is the exact event-time integral of stranded devices on the worker from reconnection to
// the first moment nothing is stranded there, computed from the timeline, so the same drill
// observed late gives the same figures.
#include <algorithm>
#include <utility>

#include "detail/state.hpp"
#include "firstwork/model/meta.hpp"

namespace firstwork::engine {

namespace {

std::string incidentId(const std::string& cluster, IncidentSource source,
                       std::optional<SystemTime> disconnectedAt,
                       std::optional<SystemTime> reconnectedAt) {
  std::string id = "incident/" + cluster + "/" + std::string(incidentSourceName(source)) + "/";
  if (disconnectedAt) return id + std::to_string(unixMillis(*disconnectedAt));
  return id + "r" + std::to_string(unixMillis(reconnectedAt.value_or(SystemTime{})));
}

double secondsBetween(SystemTime a, SystemTime b) { return b > a ? toSeconds(b - a) : 0.0; }

}  // namespace

void MilestoneEngine::State::emitIncident(const Incident& in) { produced.incidents.push_back(in.rec); }

bool MilestoneEngine::State::blocked(const std::string& cl) const {
  auto it = clusters.find(cl);
  return it != clusters.end() &&
         (it->second.probe == ProbeState::Disconnected || !it->second.watchesCurrent);
}

void MilestoneEngine::State::openIncident(const std::string& cl, IncidentSource source,
                                          std::optional<SystemTime> disconnectedAt,
                                          std::optional<SystemTime> reconnectedAt,
                                          std::string reason, std::string management,
                                          SystemTime observedAt) {
  Incident in;
  in.rec.id = incidentId(cl, source, disconnectedAt, reconnectedAt);
  if (incidents.count(in.rec.id) != 0) return;  // already known (re-delivered object)
  in.rec.cluster = cl;
  in.rec.source = source;
  in.rec.outcome = IncidentOutcome::Open;
  in.rec.disconnectedAt = disconnectedAt;
  in.rec.disconnectReason = std::move(reason);
  in.rec.observedAt = observedAt;
  in.managementCluster = std::move(management);
  const std::string id = in.rec.id;
  if (source == IncidentSource::MultiKueue) {
    openMkIncident[cl] = id;
    if (disconnectedAt) disconnected[cl].emplace_back(*disconnectedAt, std::nullopt);
  } else {
    clusters[cl].openProbeIncident = id;
  }
  Incident& stored = incidents.emplace(id, std::move(in)).first->second;
  if (reconnectedAt) {
    reconnect(stored, *reconnectedAt, observedAt);
  } else {
    emitIncident(stored);
  }
}

void MilestoneEngine::State::reconnect(Incident& in, SystemTime at, SystemTime observedAt) {
  IncidentRecord& r = in.rec;
  r.reconnectedAt = at;
  r.observedAt = observedAt;
  if (r.disconnectedAt) {
    r.disconnectedSeconds = secondsBetween(*r.disconnectedAt, at);
    observe(HistogramKind::WorkerDisconnected, "obs/worker_disconnected/" + r.id,
            *r.disconnectedSeconds, at, observedAt, r.cluster, {}, {}, {}, {},
            std::string(incidentSourceName(r.source)));
  }
  if (r.source == IncidentSource::Probe) {
    // A telemetry gap: over when the daemon sees the cluster again; no recovery to measure.
    r.outcome = IncidentOutcome::Recovered;
    r.recoveredAt = at;
    r.closedAt = at;
    auto c = clusters.find(r.cluster);
    if (c != clusters.end() && c->second.openProbeIncident == r.id) c->second.openProbeIncident.clear();
  } else {
    r.outcome = IncidentOutcome::Recovering;
    for (auto& span : disconnected[r.cluster]) {
      if (!span.second && r.disconnectedAt && span.first == *r.disconnectedAt) span.second = at;
    }
  }
  emitIncident(in);
}

void MilestoneEngine::State::onMultiKueueCluster(ClusterData& c, model::EventType type,
                                                 const model::MultiKueueCluster& m, SystemTime at) {
  const std::string worker = workerForMkc(m.meta.name);
  if (worker.empty()) {
    ++stats.ignoredObjects;  // not a configured worker: nothing of it is watched
    return;
  }
  MkcState& st = mkc[worker];
  st.managementCluster = c.config.name;
  if (type == model::EventType::Deleted) {
    if (st.status != model::ConditionStatus::Unknown) {
      st.status = model::ConditionStatus::Unknown;
      WorkerConnectionRecord r;
      r.worker = worker;
      r.managementCluster = c.config.name;
      r.known = false;
      r.observedAt = at;
      produced.workerConnections.push_back(std::move(r));
    }
    return;
  }
  const model::Condition* active = condition(m.conditions, "Active");
  if (active == nullptr || active->status == model::ConditionStatus::Unknown) return;
  const SystemTime t = active->lastTransitionTime.value_or(at);
  const MkcState prev = st;
  st.status = active->status;
  st.since = t;
  st.reason = active->reason;
  if (prev.status != st.status || prev.since != st.since) {
    // Durable, so that a restart still sees a loss and return that both fell while it was down.
    WorkerConnectionRecord r;
    r.worker = worker;
    r.managementCluster = c.config.name;
    r.active = st.status == model::ConditionStatus::True;
    r.since = t;
    r.reason = st.reason;
    r.observedAt = at;
    produced.workerConnections.push_back(std::move(r));
  }

  auto open = openMkIncident.find(worker);
  Incident* in = nullptr;
  if (open != openMkIncident.end()) {
    auto it = incidents.find(open->second);
    if (it != incidents.end()) in = &it->second;
  }
  if (active->status == model::ConditionStatus::False) {
    if (in != nullptr) {
      if (in->rec.outcome == IncidentOutcome::Recovering && in->rec.reconnectedAt &&
          t > *in->rec.reconnectedAt) {
        // Lost again before recovering: the first incident failed where the second begins.
        closeIncident(*in, t, false, "disconnected_again", at);
        openIncident(worker, IncidentSource::MultiKueue, t, std::nullopt, active->reason,
                     c.config.name, at);
      }
      return;  // still the same outage (re-delivery or a message update)
    }
    openIncident(worker, IncidentSource::MultiKueue, t, std::nullopt, active->reason,
                 c.config.name, at);
    return;
  }
  // Active=True.
  if (in != nullptr) {
    if (in->rec.outcome == IncidentOutcome::Open &&
        (!in->rec.disconnectedAt || t >= *in->rec.disconnectedAt)) {
      reconnect(*in, t, at);
    }
    return;
  }
  if (prev.status == model::ConditionStatus::True && prev.since < t) {
    // The condition went False and True again while we did not see it (our view of the manager
    // was cut): an outage whose end alone is known.
    openIncident(worker, IncidentSource::MultiKueue, std::nullopt, t, {}, c.config.name, at);
  }
}

void MilestoneEngine::State::onProbe(ClusterData& c, bool connected, SystemTime eventTime,
                                     SystemTime observedAt) {
  const ProbeState prev = c.probe;
  if (connected) {
    c.probe = ProbeState::Connected;
    if (!c.openProbeIncident.empty()) {
      auto it = incidents.find(c.openProbeIncident);
      if (it != incidents.end() && it->second.rec.outcome == IncidentOutcome::Open) {
        SystemTime at = eventTime;
        if (it->second.rec.disconnectedAt) at = std::max(at, *it->second.rec.disconnectedAt);
        reconnect(it->second, at, observedAt);
      } else {
        c.openProbeIncident.clear();
      }
    }
    // Objects of this cluster may have arrived with past timestamps: look again at everything.
    for (auto& [key, lw] : logical) markDirty(key);
    // Its Workloads are all listed: a restored cycle whose Workload is not among them went while
    // the daemon was down (nothing tells when).
    // Its durable open record goes with it.
    for (auto it = restoredCycles.begin(); it != restoredCycles.end();) {
      if (it->first.compare(0, c.config.name.size() + 1, c.config.name + "/") != 0) {
        ++it;
        continue;
      }
      closeOpenCycle(it->first, it->second, observedAt);
      it = restoredCycles.erase(it);
    }
    return;
  }
  c.probe = ProbeState::Disconnected;
  if (prev == ProbeState::Connected && c.openProbeIncident.empty()) {
    openIncident(c.config.name, IncidentSource::Probe, eventTime, std::nullopt, "probe",
                 std::string(), observedAt);
  }
}

void MilestoneEngine::State::closeIncident(Incident& in, SystemTime closeAt, bool recovered,
                                           std::string failureReason, SystemTime now) {
  IncidentRecord& r = in.rec;
  const SystemTime R = r.reconnectedAt.value_or(closeAt);
  const std::string& cl = r.cluster;
  // Per device class, each in its own unit; the headline figures add up whole GPUs only.
  const auto queued = queuedOnCluster(cl, R, closeAt);
  r.classes.clear();
  double integral = 0;
  r.usableGpus = 0;
  r.demandGpus = 0;
  for (const auto& [key, tl] : timelines) {
    if (key.first != cl) continue;
    const std::string& cls = key.second;
    IncidentClassFigures f;
    f.deviceClass = cls;
    const inventory::Unit unit = inv.unitOf(cls);
    f.unit = std::string(inventory::unitName(unit));
    const Levels atR = tl.at(R);
    f.usable = atR.usable;
    f.demand = atR.demand();
    tl.forEachPiece(R, closeAt, [&](SystemTime t0, SystemTime t1, const Levels& l) {
      f.strandedSeconds += static_cast<double>(l.strandedExcludingOwnFault()) * toSeconds(t1 - t0);
      // Free devices while work waited that none of it could use, over the overlap with the
      // spans where anything was queued for this worker.
      if (unusableForBacklog(l, 1) == 0) return;
      for (const auto& [q0, q1, n] : queued) {
        const SystemTime o0 = std::max(t0, q0);
        const SystemTime o1 = std::min(t1, q1);
        if (n > 0 && o0 < o1) {
          f.unusableForBacklogSeconds +=
              static_cast<double>(unusableForBacklog(l, n)) * toSeconds(o1 - o0);
        }
      }
    });
    if (unit == inventory::Unit::Share) {
      f.physicalUnit = std::string(inventory::unitName(inv.physicalUnitOf(cls)));
      f.physicalUsable = physicalLevelsAt(cl, cls, R).usable;
      forEachPhysicalPiece(cl, cls, R, closeAt, [&](SystemTime t0, SystemTime t1, const Levels& l) {
        f.physicalStrandedSeconds +=
            static_cast<double>(l.strandedExcludingOwnFault()) * toSeconds(t1 - t0);
      });
    }
    if (f.usable == 0 && f.demand == 0 && f.strandedSeconds == 0 && f.physicalStrandedSeconds == 0 &&
        f.unusableForBacklogSeconds == 0) {
      continue;
    }
    if (unit == inventory::Unit::Gpu) {
      integral += f.strandedSeconds;
      r.usableGpus += f.usable;
      r.demandGpus += f.demand;
    }
    r.classes.push_back(std::move(f));
  }
  r.firstDispatchedAt.reset();
  r.firstRunningAt.reset();
  r.firstWorkAt.reset();
  r.lastProductiveAt.reset();
  r.excludedWorkloads = 0;
  auto minSet = [](std::optional<SystemTime>& slot, SystemTime t) {
    if (!slot || t < *slot) slot = t;
  };
  for (auto& [key, lw] : logical) {
    bool touched = false;
    for (size_t i = 0; i < lw.cycles.size(); ++i) {
      Cycle& cy = lw.cycles[i];
      if (executionCluster(lw, cy) != cl) continue;
      const auto dispatched = lw.multikueue ? cy.time(Milestone::Dispatched) : std::nullopt;
      const auto onTarget = lw.multikueue ? dispatched : cy.time(Milestone::Reserved);
      const auto running = cy.time(Milestone::Running);
      const auto fw = cy.time(Milestone::FirstWork);
      const auto end = cycleEnd(lw, cy, i + 1 == lw.cycles.size());
      if (dispatched && *dispatched >= R && *dispatched <= closeAt) minSet(r.firstDispatchedAt, *dispatched);
      if (running && *running >= R && *running <= now) minSet(r.firstRunningAt, *running);
      if (fw && *fw >= R && *fw <= now) minSet(r.firstWorkAt, *fw);
      if (fw && *fw >= R && *fw <= closeAt && (!r.lastProductiveAt || *fw > *r.lastProductiveAt)) {
        r.lastProductiveAt = fw;
      }
      if (cy.excludedFrom && *cy.excludedFrom <= closeAt && (!end || *end > R)) ++r.excludedWorkloads;
      // Workloads this incident kept waiting: dispatched during the recovery, or already there
      // and not yet productive at reconnection.
      const bool dispatchedDuring = onTarget && *onTarget >= R && *onTarget <= closeAt;
      const bool waitingAtR = onTarget && *onTarget < R && (!fw || *fw >= R) && (!end || *end > R);
      if (!dispatchedDuring && !waitingAtR) continue;
      bool linked = false;
      for (const auto& link : cy.incidents) linked = linked || link.incidentId == r.id;
      if (linked) continue;
      cy.incidents.push_back(IncidentLink{r.id, cl, R, false});
      touched = true;
      if (dispatchedDuring && dispatched) {
        const MilestoneValue* d = cy.get(Milestone::Dispatched);
        observe(HistogramKind::Stage,
                joinKey({"obs/stage/reconnect_to_dispatched", r.id, lw.uid()}),
                secondsBetween(R, *dispatched), *dispatched, std::max(d->observedAt, now), cl,
                clusterQueueFor(lw, cy), std::string(stageName(Stage::ReconnectToDispatched)));
      }
    }
    if (touched) {
      for (auto& cy : lw.cycles) emitLinkedFirstWork(lw, cy);
    }
  }
  r.strandedGpuSeconds = integral;
  r.recoverySeconds = secondsBetween(R, closeAt);
  r.closedAt = closeAt;
  r.observedAt = now;
  r.outcome = recovered ? IncidentOutcome::Recovered : IncidentOutcome::Failed;
  if (recovered) r.recoveredAt = closeAt;
  r.failureReason = std::move(failureReason);
  observe(HistogramKind::Recovery, "obs/recovery/" + r.id, *r.recoverySeconds, closeAt, now, cl, {},
          {}, {}, std::string(incidentOutcomeName(r.outcome)));
  RecoveryTotals& totals = recoveryTotals[cl];
  totals.cluster = cl;
  if (recovered) ++totals.recovered;
  else ++totals.failed;
  totals.strandedGpuSeconds += integral;
  auto open = openMkIncident.find(cl);
  if (open != openMkIncident.end() && open->second == r.id) openMkIncident.erase(open);
  emitIncident(in);
}

bool MilestoneEngine::State::waitingWithUnknownDevices(const std::string& cl) const {
  for (const auto& [key, lw] : logical) {
    if (!lw.devicesUnresolved || lw.deleted || lw.cycles.empty()) continue;
    const Cycle& cy = lw.cycles.back();
    if (cycleEnd(lw, cy, true) || cy.has(Milestone::FirstWork)) continue;
    const bool forThisWorker =
        lw.multikueue ? (cy.dispatchedCluster == cl ||
                         (!cy.has(Milestone::Dispatched) &&
                          std::find(cy.candidates.begin(), cy.candidates.end(), cl) != cy.candidates.end()))
                      : lw.cluster() == cl;
    // Once its pods exist, what they hold is all there is to know.
    if (forThisWorker && cyclePods(lw, cy, false).empty()) return true;
  }
  return false;
}

void MilestoneEngine::State::evaluateIncidents(SystemTime now) {
  std::vector<Incident*> recovering;
  for (auto& [id, in] : incidents) {
    if (in.rec.source == IncidentSource::MultiKueue && in.rec.outcome == IncidentOutcome::Recovering &&
        in.rec.reconnectedAt) {
      recovering.push_back(&in);
    }
  }
  for (Incident* in : recovering) {
    const std::string& cl = in->rec.cluster;
    // Objects of a cluster the daemon cannot see may still arrive with earlier timestamps.
    if (blocked(cl) || (!in->managementCluster.empty() && blocked(in->managementCluster))) continue;
    const SystemTime R = *in->rec.reconnectedAt;
    if (now < R) continue;
    const SystemTime deadline = R + config.recoveryBudget;
    const SystemTime horizon = std::min(now, deadline);
    // The instant R itself counts: nothing stranded at reconnection closes at once.
    const SystemTime until = std::max(horizon, R + std::chrono::nanoseconds(1));
    std::optional<SystemTime> zero;
    for (const auto& [t0, t1, v] : incidentStranded(cl, R, until)) {
      if (v == 0) {
        zero = t0;
        break;
      }
    }
    if (zero && *zero <= horizon) {
      // Work waiting for this worker whose devices are not known yet (a claim template learned
      // only from the claims its pods will get) may turn out stranded back to reconnection:
      // recovery is not declared before that is known.
      if (!waitingWithUnknownDevices(cl)) closeIncident(*in, *zero, true, {}, now);
      else if (now >= deadline) closeIncident(*in, deadline, false, "budget", now);
    } else if (now >= deadline) {
      closeIncident(*in, deadline, false, "budget", now);
    }
  }
}

}  // namespace firstwork::engine
