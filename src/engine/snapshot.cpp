// Gauges and cumulative counters for the metrics layer and the API.
#include <algorithm>
#include <map>

#include "detail/state.hpp"

namespace firstwork::engine {

namespace {
template <typename Map>
void take(Map& totals, std::optional<typename Map::iterator>& slot) {
  if (!slot) return;
  if (--(*slot)->second == 0) totals.erase(*slot);
  slot.reset();
}
template <typename Map>
void put(Map& totals, std::optional<typename Map::iterator>& slot, typename Map::key_type key) {
  auto it = totals.try_emplace(std::move(key), 0).first;
  ++it->second;
  slot = it;
}
}  // namespace

// Recounts the parts of the workloads in partsDirty: what the full pass over every workload
// counted for each of them (a live cycle's cluster, ClusterQueue, state and stuck reason; the
// clusters it runs on twice right now; whether its claim templates are unresolved).
void MilestoneEngine::State::refreshWorkloadParts() const {
  // Each key goes as its part is recounted, not all at the end (a sync's keys were made among
  // the objects' own blocks, and what the recount makes fills their places), and a new part keeps
  // the key's string (bench/README.md, change 91).
  while (!partsDirty.empty()) {
    auto node = partsDirty.extract(partsDirty.begin());
    std::string& key = node.value();
    auto lwIt = logical.find(key);
    auto partIt = workloadParts.find(key);
    if (partIt != workloadParts.end()) {
      WorkloadPart& old = partIt->second;
      take(stateTotals, old.state);
      take(stuckTotals, old.stuck);
      for (const auto& cl : old.duplicatesNow) {
        auto d = duplicatesNowTotals.find(cl);
        if (--d->second == 0) duplicatesNowTotals.erase(d);
      }
      old.duplicatesNow.clear();
      if (old.devicesUnresolved) --devicesUnresolvedTotal;
      old.devicesUnresolved = false;
    }
    partsByLocalQueue.erase(key);
    if (lwIt == logical.end()) {
      if (partIt != workloadParts.end()) workloadParts.erase(partIt);
      continue;
    }
    const LogicalWorkload& lw = lwIt->second;
    WorkloadPart part;
    part.duplicatesNow = lw.duplicateClustersNow;
    for (const auto& cl : part.duplicatesNow) ++duplicatesNowTotals[cl];
    part.devicesUnresolved = lw.devicesUnresolved;
    if (part.devicesUnresolved) ++devicesUnresolvedTotal;
    if (!lw.cycles.empty() && !lw.deleted && !cycleEnd(lw, lw.cycles.back(), true)) {
      const Cycle& cy = lw.cycles.back();
      const std::string exec = executionCluster(lw, cy);
      const std::string& cl = exec.empty() ? std::string(lw.cluster()) : exec;
      const std::string cq = clusterQueueFor(lw, cy);
      if (cy.clusterQueue.empty()) partsByLocalQueue.insert(key);
      WorkloadState st = WorkloadState::Queued;
      if (cy.has(Milestone::FirstWork)) st = WorkloadState::Productive;
      else if (cy.has(Milestone::Running)) st = WorkloadState::Running;
      else if (cy.has(Milestone::Dispatched)) st = WorkloadState::Dispatched;
      else if (cy.has(Milestone::Reserved)) st = WorkloadState::Reserved;
      put(stateTotals, part.state, {cl, cq, st});
      if (cy.stuck) put(stuckTotals, part.stuck, {cl, cq, *cy.stuck});
    }
    if (!part.state && part.duplicatesNow.empty() && !part.devicesUnresolved) {
      if (partIt != workloadParts.end()) workloadParts.erase(partIt);
    } else if (partIt != workloadParts.end()) {
      partIt->second = std::move(part);
    } else {
      workloadParts.emplace(std::move(key), std::move(part));
    }
  }
}

Snapshot MilestoneEngine::State::snapshot() const {
  Snapshot s;
  const SystemTime at = lastAdvance.value_or(SystemTime{});
  s.at = at;

  auto unitOf = [&](const std::string& cls) { return std::string(inventory::unitName(inv.unitOf(cls))); };
  auto physicalUnitOf = [&](const std::string& cls) {
    return std::string(inventory::unitName(inv.physicalUnitOf(cls)));
  };
  auto workerCluster = [&](const std::string& cl) {
    auto it = clusters.find(cl);
    return it != clusters.end() && it->second.config.role != ClusterRole::Management;
  };
  std::map<std::string, int64_t> queuedNow;  // Σ queued over classes, per cluster
  for (const auto& [key, tl] : timelines) {
    if (!workerCluster(key.first)) continue;
    const Levels l = tl.at(at);
    queuedNow[key.first] += std::max<int64_t>(l.queued, 0);
    const bool down = isDisconnected(key.first, at);
    auto phases = splitStranded(l, down);
    for (size_t i = 0; i < kStrandedPhaseCount; ++i) {
      s.stranded.push_back({key.first, key.second, unitOf(key.second), static_cast<StrandedPhase>(i),
                            phases[i]});
    }
    if (isShareClass(key.second)) {
      phases = splitStranded(physicalLevelsAt(key.first, key.second, at), down);
      for (size_t i = 0; i < kStrandedPhaseCount; ++i) {
        s.stranded.push_back({key.first, key.second, physicalUnitOf(key.second),
                              static_cast<StrandedPhase>(i), phases[i]});
      }
    }
  }

  refreshWorkloadParts();
  std::map<std::string, int64_t> dupNow;
  for (const auto& [name, c] : clusters) {
    if (c.config.role != ClusterRole::Management) dupNow[name] = 0;
  }
  for (const auto& [cl, n] : duplicatesNowTotals) dupNow[cl] += n;
  for (const auto& [k, n] : stateTotals) s.workloads.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), n});
  for (const auto& [k, n] : stuckTotals) s.stuck.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), n});
  for (const auto& [cl, n] : dupNow) s.duplicatesNow.push_back({cl, n});

  std::map<std::pair<std::string, std::string>, bool> productiveDone;
  for (const auto& f : inv.classes()) {
    const std::string unit(inventory::unitName(f.unit));
    const Levels l = levelsAt(f.cluster, f.deviceClass, at);
    s.gpus.push_back({f.cluster, f.deviceClass, unit, "published", f.published});
    s.gpus.push_back({f.cluster, f.deviceClass, unit, "usable", f.usable});
    s.gpus.push_back({f.cluster, f.deviceClass, unit, "unavailable", f.unavailable});
    s.gpus.push_back({f.cluster, f.deviceClass, unit, "allocated", f.allocated});
    s.gpus.push_back({f.cluster, f.deviceClass, unit, "productive", l.productive});
    if (workerCluster(f.cluster)) {
      s.gpus.push_back({f.cluster, f.deviceClass, unit, "unusable_for_backlog",
                        unusableForBacklog(l, queuedNow[f.cluster])});
    }
    if (f.shared) {
      // The devices behind the shares, in their own unit.
      const std::string physical(inventory::unitName(f.physicalUnit));
      s.gpus.push_back({f.cluster, f.deviceClass, physical, "published", f.physicalDevices});
      s.gpus.push_back({f.cluster, f.deviceClass, physical, "usable", f.physicalUsable});
      s.gpus.push_back({f.cluster, f.deviceClass, physical, "unavailable",
                        f.physicalDevices - f.physicalUsable});
      s.gpus.push_back({f.cluster, f.deviceClass, physical, "allocated", f.physicalAllocated});
      s.gpus.push_back({f.cluster, f.deviceClass, physical, "productive",
                        physicalLevelsAt(f.cluster, f.deviceClass, at).productive});
    }
    productiveDone[{f.cluster, f.deviceClass}] = true;
  }
  for (const auto& [key, tl] : timelines) {
    if (productiveDone.count(key) != 0 || !workerCluster(key.first)) continue;
    int64_t p = tl.at(at).productive;
    if (p != 0) s.gpus.push_back({key.first, key.second, unitOf(key.second), "productive", p});
  }
  // Capacity that could not be classified, per cluster: never added to a class.
  std::map<std::string, std::array<int64_t, 3>> unknown;
  for (const auto& u : inv.unclassified()) {
    auto& v = unknown[u.cluster];
    v[0] += u.published;
    v[1] += u.usable;
    v[2] += u.allocated;
  }
  const std::string kUnknown(inventory::unitName(inventory::Unit::Unknown));
  for (const auto& [cl, v] : unknown) {
    s.gpus.push_back({cl, kUnknown, kUnknown, "published", v[0]});
    s.gpus.push_back({cl, kUnknown, kUnknown, "usable", v[1]});
    s.gpus.push_back({cl, kUnknown, kUnknown, "allocated", v[2]});
  }

  for (const auto& [name, c] : clusters) {
    if (c.probe != ProbeState::Unknown) {
      s.connections.push_back({name, IncidentSource::Probe, c.probe == ProbeState::Connected});
    }
    if (c.config.role == ClusterRole::Management)
      for (const auto& [cq, obj] : c.clusterQueues) s.clusterQueues.push_back(cq);
  }
  std::sort(s.clusterQueues.begin(), s.clusterQueues.end());
  s.clusterQueues.erase(std::unique(s.clusterQueues.begin(), s.clusterQueues.end()), s.clusterQueues.end());
  for (const auto& [worker, st] : mkc) {
    if (st.status == model::ConditionStatus::Unknown) continue;
    s.connections.push_back({worker, IncidentSource::MultiKueue, st.status == model::ConditionStatus::True});
  }

  for (const auto& [k, v] : strandedSeconds) {
    s.strandedSeconds.push_back({std::get<0>(k), std::get<1>(k), unitOf(std::get<1>(k)), std::get<2>(k), v});
  }
  for (const auto& [k, v] : physicalStrandedSeconds) {
    s.strandedSeconds.push_back(
        {std::get<0>(k), std::get<1>(k), physicalUnitOf(std::get<1>(k)), std::get<2>(k), v});
  }
  for (const auto& [k, v] : gpuSeconds) {
    s.gpuSeconds.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), unitOf(std::get<2>(k)),
                            std::get<3>(k), v});
  }
  for (const auto& [k, v] : interruptedSeconds) {
    s.interruptedSeconds.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), v});
  }
  for (const auto& [cl, t] : recoveryTotals) s.recoveries.push_back(t);
  for (const auto& [k, n] : reclaimTotals) {
    s.reclaims.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), n});
  }
  for (const auto& [k, n] : withoutCapacity) {
    s.reservationsWithoutCapacity.push_back({k.first, k.second, unitOf(k.second), n});
  }
  for (const auto& [cl, n] : duplicateTotals) s.duplicateExecutions.push_back({cl, {}, {}, n});
  for (const auto& [id, in] : incidents) {
    if (!in.closed()) s.openIncidents.push_back(in.rec);
  }
  for (const auto& [id, r] : reclaims) {
    if (!r.done()) s.pendingReclaims.push_back(r.rec);
  }

  s.stats = stats;
  uint64_t pods = 0;
  uint64_t unresolved = 0;
  for (const auto& [name, c] : clusters) {
    pods += c.pods.size();
    unresolved += c.unresolvedCount;
    if (c.config.role != ClusterRole::Management)
      s.podsWithoutWorkload.push_back(
          {name, static_cast<int64_t>(c.unresolvedCount - c.unresolvedDeleted)});
  }
  const uint64_t templatesUnknown = devicesUnresolvedTotal;  // refreshWorkloadParts() above
  s.stats.trackedWorkloads = logical.size();
  s.stats.trackedPods = pods;
  s.stats.unresolvedPods = unresolved;
  s.stats.unresolvedClaimTemplates = templatesUnknown;
  s.stats.learnedClaimTemplates = templates.size();
  s.stats.rejectedInventoryObjects = stats.rejectedInventoryObjects;
  return s;
}

}  // namespace firstwork::engine
