// Stuck workloads and duplicate executions.
#include <algorithm>
#include <map>

#include "detail/state.hpp"
#include "firstwork/model/meta.hpp"

namespace firstwork::engine {

// Admitted workloads without useful work past stuckAfter get a reason from their pods. A reason
// that is the workload's own fault (bad image, bad config, crash loop) takes its devices out of
// incident figures from the moment its pods got devices (first PodScheduled): such a delay is not
// the platform's recovery. Live stranded figures keep counting them (as pending_start/starting):
// the devices are stranded all the same.
void MilestoneEngine::State::classifyStuck(SystemTime now) {
  for (auto& [key, lw] : logical) {
    if (lw.cycles.empty() || lw.deleted) continue;
    Cycle& cy = lw.cycles.back();
    const auto admitted = cy.time(Milestone::Admitted);
    const bool eligible = admitted && !cy.has(Milestone::FirstWork) && !cycleEnd(lw, cy, true);
    const std::string exec = executionCluster(lw, cy);
    if (!eligible || exec.empty() || now < *admitted + config.stuckAfter) {
      cy.stuck.reset();
      continue;
    }
    if (blocked(exec)) continue;  // pods not current: keep the last verdict
    const LocalWorkload* h = home(lw);
    if (h == nullptr) continue;
    std::vector<const model::Pod*> pods;
    std::optional<SystemTime> firstScheduled;
    for (const PodRecord* p : cyclePods(lw, cy, false)) {
      pods.push_back(&p->obj);
      const auto* s = condition(p->obj.conditions, "PodScheduled");
      if (conditionTrue(s) && s->lastTransitionTime &&
          (!firstScheduled || *s->lastTransitionTime < *firstScheduled)) {
        firstScheduled = s->lastTransitionTime;
      }
    }
    const StuckReason reason =
        workloadStuckReason(pods, expectedPods(h->obj), config.crashLoopRestarts);
    cy.stuck = reason;
    if (isWorkloadCaused(reason) && !cy.excludedFrom) {
      SystemTime from = firstScheduled.value_or(*admitted);
      if (auto d = cy.time(Milestone::Dispatched); d && from < *d) from = *d;
      cy.excludedFrom = from;
      dirty.insert(key);
    }
  }
}

// One manager workload with running pods on two workers at once, or running again after it
// finished. The worker that won (status.clusterName) is the legitimate one.
void MilestoneEngine::State::checkDuplicates(LogicalWorkload& lw) {
  lw.duplicateClustersNow.clear();
  if (lw.cycles.empty()) return;
  const Cycle& cy = lw.cycles.back();
  std::map<std::string, SystemTime> running;  // cluster → earliest container start of a running pod
  std::map<std::string, SystemTime> rerun;    // cluster → latest start after finished
  const auto finished = cy.time(Milestone::Finished);
  for (const auto& [cl, uid] : lw.locals) {
    const LocalWorkload* l = local(cl, uid);
    if (l == nullptr) continue;
    auto c = clusters.find(cl);
    for (const auto& podUid : l->pods) {
      auto p = c->second.pods.find(podUid);
      if (p == c->second.pods.end() || p->second.deleted) continue;
      const model::Pod& pod = p->second.obj;
      if (pod.phase != model::PodPhase::Running) continue;
      std::optional<SystemTime> first;
      std::optional<SystemTime> latest;
      for (const auto& cs : pod.containers) {
        if (cs.init || cs.state != model::ContainerStateKind::Running || !cs.startedAt) continue;
        if (!first || *cs.startedAt < *first) first = cs.startedAt;
        if (!latest || *cs.startedAt > *latest) latest = cs.startedAt;
      }
      if (!first) continue;
      auto [it, inserted] = running.try_emplace(cl, *first);
      if (!inserted) it->second = std::min(it->second, *first);
      if (finished && *latest > *finished) {
        auto [r, ins] = rerun.try_emplace(cl, *latest);
        if (!ins) r->second = std::max(r->second, *latest);
      }
    }
  }
  auto emit = [&](DuplicateKind kind, const std::string& cl, SystemTime at) {
    lw.duplicateClustersNow.push_back(cl);
    std::string key = "dup/" + lw.cluster + "/" + lw.uid + "/" + cy.id + "/" +
                      std::string(duplicateKindName(kind)) + "/" + cl;
    if (!lw.duplicateKeys.insert(key).second) return;
    DuplicateExecution d;
    d.key = std::move(key);
    d.workload = ref(lw, &cy);
    d.cycleId = cy.id;
    d.kind = kind;
    d.cluster = cl;
    for (const auto& [name, t] : running) d.clusters.push_back(name);
    d.eventTime = at;
    d.observedAt = lw.lastObservedAt;
    ++duplicateTotals[cl];
    produced.duplicates.push_back(std::move(d));
  };
  if (lw.multikueue && running.size() >= 2) {
    std::string winner = cy.dispatchedCluster;
    if (const LocalWorkload* h = home(lw); winner.empty() && h != nullptr) {
      winner = workerForMkc(h->obj.clusterName);
    }
    if (running.find(winner) == running.end()) {
      winner = std::min_element(running.begin(), running.end(), [](const auto& a, const auto& b) {
                 return a.second < b.second;
               })->first;
    }
    SystemTime latest{};
    for (const auto& [cl, t] : running) latest = std::max(latest, t);
    for (const auto& [cl, t] : running) {
      if (cl != winner) emit(DuplicateKind::Concurrent, cl, latest);
    }
  }
  for (const auto& [cl, t] : rerun) emit(DuplicateKind::Rerun, cl, t);
}

}  // namespace firstwork::engine
