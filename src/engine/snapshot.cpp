// Gauges and cumulative counters for the metrics layer and the API.
#include <algorithm>
#include <map>

#include "detail/state.hpp"

namespace firstwork::engine {

Snapshot MilestoneEngine::State::snapshot() const {
  Snapshot s;
  const SystemTime at = lastAdvance.value_or(SystemTime{});
  s.at = at;

  for (const auto& [key, tl] : timelines) {
    const ClusterData* c = nullptr;
    if (auto it = clusters.find(key.first); it != clusters.end()) c = &it->second;
    if (c == nullptr || c->config.role == ClusterRole::Management) continue;
    auto phases = splitStranded(tl.at(at), isDisconnected(key.first, at));
    for (size_t i = 0; i < kStrandedPhaseCount; ++i) {
      s.stranded.push_back({key.first, key.second, static_cast<StrandedPhase>(i), phases[i]});
    }
  }

  std::map<std::tuple<std::string, std::string, WorkloadState>, int64_t> states;
  std::map<std::tuple<std::string, std::string, StuckReason>, int64_t> stuck;
  std::map<std::string, int64_t> dupNow;
  for (const auto& [name, c] : clusters) {
    if (c.config.role != ClusterRole::Management) dupNow[name] = 0;
  }
  for (const auto& [key, lw] : logical) {
    for (const auto& cl : lw.duplicateClustersNow) ++dupNow[cl];
    if (lw.cycles.empty() || lw.deleted) continue;
    const Cycle& cy = lw.cycles.back();
    if (cycleEnd(lw, cy, true)) continue;
    const std::string exec = executionCluster(lw, cy);
    const std::string& cl = exec.empty() ? lw.cluster : exec;
    // What ref(lw, &cy).clusterQueue says, without building the whole reference per workload
    // per tick.
    const LocalWorkload* h = cy.clusterQueue.empty() ? home(lw) : nullptr;
    const std::string cq = !cy.clusterQueue.empty() ? cy.clusterQueue
                           : h != nullptr           ? clusterQueueOf(lw, *h)
                                                    : std::string();
    WorkloadState st = WorkloadState::Queued;
    if (cy.has(Milestone::FirstWork)) st = WorkloadState::Productive;
    else if (cy.has(Milestone::Running)) st = WorkloadState::Running;
    else if (cy.has(Milestone::Dispatched)) st = WorkloadState::Dispatched;
    else if (cy.has(Milestone::Reserved)) st = WorkloadState::Reserved;
    ++states[{cl, cq, st}];
    if (cy.stuck) ++stuck[{cl, cq, *cy.stuck}];
  }
  for (const auto& [k, n] : states) s.workloads.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), n});
  for (const auto& [k, n] : stuck) s.stuck.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), n});
  for (const auto& [cl, n] : dupNow) s.duplicatesNow.push_back({cl, n});

  std::map<std::pair<std::string, std::string>, bool> productiveDone;
  for (const auto& f : inv.classes()) {
    s.gpus.push_back({f.cluster, f.deviceClass, "published", f.published});
    s.gpus.push_back({f.cluster, f.deviceClass, "usable", f.usable});
    s.gpus.push_back({f.cluster, f.deviceClass, "unavailable", f.unavailable});
    s.gpus.push_back({f.cluster, f.deviceClass, "allocated", f.allocated});
    s.gpus.push_back({f.cluster, f.deviceClass, "productive", levelsAt(f.cluster, f.deviceClass, at).productive});
    productiveDone[{f.cluster, f.deviceClass}] = true;
  }
  for (const auto& [key, tl] : timelines) {
    if (productiveDone.count(key) != 0) continue;
    if (auto it = clusters.find(key.first); it == clusters.end() ||
                                            it->second.config.role == ClusterRole::Management) {
      continue;
    }
    int64_t p = tl.at(at).productive;
    if (p != 0) s.gpus.push_back({key.first, key.second, "productive", p});
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
    s.strandedSeconds.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), v});
  }
  for (const auto& [k, v] : gpuSeconds) {
    s.gpuSeconds.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), v});
  }
  for (const auto& [k, v] : interruptedSeconds) {
    s.interruptedSeconds.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), v});
  }
  for (const auto& [cl, t] : recoveryTotals) s.recoveries.push_back(t);
  for (const auto& [k, n] : reclaimTotals) {
    s.reclaims.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), n});
  }
  for (const auto& [k, n] : withoutCapacity) s.reservationsWithoutCapacity.push_back({k.first, k.second, n});
  for (const auto& [cl, n] : duplicateTotals) s.duplicateExecutions.push_back({cl, {}, n});
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
  }
  uint64_t templatesUnknown = 0;
  for (const auto& [key, lw] : logical) templatesUnknown += lw.devicesUnresolved ? 1 : 0;
  s.stats.trackedWorkloads = logical.size();
  s.stats.trackedPods = pods;
  s.stats.unresolvedPods = unresolved;
  s.stats.unresolvedClaimTemplates = templatesUnknown;
  s.stats.rejectedInventoryObjects = stats.rejectedInventoryObjects;
  return s;
}

}  // namespace firstwork::engine
