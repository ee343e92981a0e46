// Stuck workloads and duplicate executions.
#include <algorithm>
#include <map>
#include <optional>

#include "detail/state.hpp"
#include "firstwork/model/meta.hpp"

namespace firstwork::engine {

// Admitted workloads without useful work past stuckAfter get a reason from their pods. A reason
// that is the workload's own fault (bad image, bad config, crash loop) takes its devices out of
// incident figures from the moment its pods got devices (first PodScheduled): such a delay is not
// the platform's recovery. Live stranded figures keep counting them (as pending_start/starting):
// the devices are stranded all the same.
//
// Only workloads in stuckWatch are visited: every settle puts its workload there, and one leaves
// once its verdict can change only through another settle (deleted, not admitted, past first
// work, ended), so the pass costs the workloads in flight, not every workload retained.
void MilestoneEngine::State::classifyStuck(SystemTime now) {
  for (auto watched = stuckWatch.begin(); watched != stuckWatch.end();) {
    auto found = logical.find(*watched);
    if (found == logical.end()) {
      watched = stuckWatch.erase(watched);
      continue;
    }
    const std::string_view key = found->first;
    LogicalWorkload& lw = found->second;
    if (lw.cycles.empty() || lw.deleted) {
      watched = stuckWatch.erase(watched);
      continue;
    }
    Cycle& cy = lw.cycles.back();
    const auto admitted = cy.time(Milestone::Admitted);
    const bool eligible = admitted && !cy.has(Milestone::FirstWork) && !cycleEnd(lw, cy, true);
    if (!eligible) {
      if (cy.stuck) markPart(key);
      cy.stuck.reset();
      watched = stuckWatch.erase(watched);
      continue;
    }
    ++watched;
    const std::string exec = executionCluster(lw, cy);
    if (exec.empty() || now < *admitted + config.stuckAfter) {
      if (cy.stuck) markPart(key);
      cy.stuck.reset();
      continue;
    }
    if (blocked(exec)) continue;  // pods not current: keep the last verdict
    const LocalWorkload* h = home(lw);
    if (h == nullptr) continue;
    std::vector<std::optional<StuckReason>> podReasons;
    std::optional<SystemTime> firstScheduled;
    for (const PodRecord* p : cyclePods(lw, cy, false)) {
      podReasons.push_back(p->stuck());
      if (p->scheduled() && p->scheduledTransition &&
          (!firstScheduled || *p->scheduledTransition < *firstScheduled)) {
        firstScheduled = p->scheduledTransition;
      }
    }
    const StuckReason reason = workloadStuckReason(podReasons, expectedPods(h->obj));
    if (cy.stuck != reason) markPart(key);
    cy.stuck = reason;
    if (isWorkloadCaused(reason) && !cy.excludedFrom) {
      SystemTime from = firstScheduled.value_or(*admitted);
      if (auto d = cy.time(Milestone::Dispatched); d && from < *d) from = *d;
      cy.excludedFrom = from;
      markDirty(key);
    }
  }
}

// One manager workload with running pods on two workers at once, or running again after it
// finished. The worker that won (status.clusterName) is the legitimate one.
//
// Judged on event times, not on what happens to be in memory at the same moment: a worker whose
// telemetry arrives late (a relist after a stall or 410) may show its running pod only after the
// other worker's pod is already gone, and the two still ran at once. Each worker's run is
// [earliest container start, end), where a pod that is gone (last seen running) ended at its
// deletionTimestamp (the latest its containers were killed), else when the deletion was observed
// (all the engine knows); a pod still there has not ended.
void MilestoneEngine::State::checkDuplicates(LogicalWorkload& lw) {
  lw.duplicateClustersNow.clear();
  if (lw.cycles.empty()) return;
  const Cycle& cy = lw.cycles.back();
  struct Run {
    SystemTime start{};
    std::optional<SystemTime> end;  // nullopt: still running
    bool runningNow = false;
  };
  std::map<std::string, Run> runs;          // cluster → its pods' run on that worker
  std::map<std::string, SystemTime> rerun;  // cluster → latest start after finished
  const auto finished = cy.time(Milestone::Finished);
  for (const auto& [cl, uid] : lw.locals) {
    const LocalWorkload* l = local(cl, uid);
    if (l == nullptr) continue;
    for (const PodEntry* p : l->pods) {
      const PodRecord& pod = p->second;
      // Last state seen: running, with a running container (its earliest and latest start).
      if (pod.phase != model::PodPhase::Running || !pod.firstRunningStart) continue;
      const std::optional<SystemTime> first = pod.firstRunningStart;
      const std::optional<SystemTime> latest = pod.lastRunningStart;
      std::optional<SystemTime> end;
      if (p->second.deleted) {
        end = p->second.deletedAt;
        if (pod.deletionTimestamp && *pod.deletionTimestamp < *end) end = pod.deletionTimestamp;
        if (*end < *first) end = *first;
      }
      auto [it, inserted] = runs.try_emplace(std::string(cl), Run{*first, end, !p->second.deleted});
      if (!inserted) {
        Run& r = it->second;
        r.start = std::min(r.start, *first);
        if (!end || (r.end && *end > *r.end)) r.end = end;
        r.runningNow = r.runningNow || !p->second.deleted;
      }
      if (!p->second.deleted && finished && *latest > *finished) {
        auto [r, ins] = rerun.try_emplace(std::string(cl), *latest);
        if (!ins) r->second = std::max(r->second, *latest);
      }
    }
  }
  auto emit = [&](DuplicateKind kind, const std::string& cl, SystemTime at,
                  const std::vector<std::string>& clusters2, bool now) {
    if (now) lw.duplicateClustersNow.push_back(cl);
    std::string key = joinKey({"dup", lw.key, cy.id, duplicateKindName(kind), cl});
    if (!lw.duplicateKeys.insert(key).second) return;
    DuplicateExecution d;
    d.key = std::move(key);
    d.workload = ref(lw, &cy);
    d.cycleId = cy.id;
    d.kind = kind;
    d.cluster = cl;
    d.clusters = clusters2;
    d.eventTime = at;
    d.observedAt = lw.lastObservedAt;
    ++duplicateTotals[cl];
    produced.duplicates.push_back(std::move(d));
  };
  if (lw.multikueue && runs.size() >= 2) {
    std::string winner = cy.dispatchedCluster;
    if (const LocalWorkload* h = home(lw); winner.empty() && h != nullptr) {
      winner = workerForMkc(h->obj->admission->clusterName);
    }
    if (runs.find(winner) == runs.end()) {
      winner = std::min_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
                 return a.second.start < b.second.start;
               })->first;
    }
    auto overlapStart = [](const Run& a, const Run& b) -> std::optional<SystemTime> {
      const SystemTime from = std::max(a.start, b.start);
      if ((a.end && *a.end <= from) || (b.end && *b.end <= from)) return std::nullopt;
      return from;
    };
    // Every worker whose run overlaps another's is part of the duplicate (the `clusters` list);
    // every loser whose run overlaps the winner's, or any other run, is one.
    std::vector<std::string> involved;
    for (const auto& [cl, r] : runs) {
      for (const auto& [other, o] : runs) {
        if (other != cl && overlapStart(r, o)) {
          involved.push_back(cl);
          break;
        }
      }
    }
    const Run& w = runs.at(winner);
    for (const auto& [cl, r] : runs) {
      if (cl == winner) continue;
      std::optional<SystemTime> at = overlapStart(r, w);
      for (const auto& [other, o] : runs) {
        if (at || other == cl) continue;
        at = overlapStart(r, o);
      }
      if (!at) continue;
      // Running on two workers right now (the gauge) only while both pods are still there.
      bool now = r.runningNow && std::any_of(runs.begin(), runs.end(), [&c = cl](const auto& e) {
                   return e.first != c && e.second.runningNow;
                 });
      emit(DuplicateKind::Concurrent, cl, *at, involved, now);
    }
  }
  if (!rerun.empty()) {
    std::vector<std::string> runningNow;
    for (const auto& [cl, r] : runs)
      if (r.runningNow) runningNow.push_back(cl);
    for (const auto& [cl, t] : rerun) emit(DuplicateKind::Rerun, cl, t, runningNow, true);
  }
}

}  // namespace firstwork::engine
