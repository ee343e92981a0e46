// Reclaims (design §5) and work lost to evictions. Victims name their preemptor in the
// Preempted condition message; a reclaim is keyed by the preemptor's admission cycle and
// measures reclaim_to_first_work = P.first_work − P.queued.
#include <algorithm>
#include <utility>

#include "detail/state.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/engine/preemption.hpp"
#include "firstwork/model/meta.hpp"

namespace firstwork::engine {

namespace {

// The cycle of `lw` that was current at `t`: the last one queued at or before `t`.
Cycle* cycleAt(LogicalWorkload& lw, SystemTime t) {
  Cycle* found = nullptr;
  for (auto& cy : lw.cycles) {
    if (*cy.time(Milestone::Queued) <= t) found = &cy;
  }
  if (found == nullptr && !lw.cycles.empty()) found = &lw.cycles.front();
  return found;
}

const Cycle* cycleById(const LogicalWorkload& lw, const std::string& id) {
  for (const auto& cy : lw.cycles) {
    if (cy.id == id) return &cy;
  }
  return nullptr;
}

std::string signature(const ReclaimRecord& r) {
  std::string s = std::string(reclaimOutcomeName(r.outcome)) + "|" + r.preemptor.name + "|" +
                  r.preemptor.clusterQueue + "|" + std::to_string(r.victims.size()) + "|" +
                  std::to_string(r.interruptedGpuSeconds);
  if (r.firstWorkAt) s += "|" + std::to_string(unixMillis(*r.firstWorkAt));
  if (r.queuedAt) s += "|" + std::to_string(unixMillis(*r.queuedAt));
  for (const auto& v : r.victims) s += "|" + v.workload.name + "/" + std::to_string(v.gpus);
  return s;
}

}  // namespace

int64_t MilestoneEngine::State::totalDevices(const LogicalWorkload& lw) const {
  int64_t n = 0;
  for (const auto& d : lw.devices) n += d.count;
  return n;
}

std::optional<SystemTime> MilestoneEngine::State::workSince(const LogicalWorkload& lw,
                                                            const Cycle& cy,
                                                            SystemTime until) const {
  const auto pods = cyclePods(lw, cy, true);
  if (cy.restored && pods.empty()) {
    // Its pods went while the daemon was down: what the previous process knew of them (first
    // work alone would miss their checkpoints). Unknown stays unknown.
    const auto& rs = cy.restoredWorkSince;
    return rs && *rs <= until ? rs : std::nullopt;
  }
  std::optional<SystemTime> since;
  if (auto fw = cy.time(Milestone::FirstWork); fw && *fw <= until) since = fw;
  for (const PodRecord* p : pods) {
    const auto& cp = p->signals.lastCheckpoint;
    if (cp && *cp <= until && (!since || *cp > *since)) since = cp;
  }
  return since;
}

// Work lost to an eviction: devices × (evicted − max(first_work, last checkpoint)), counted once
// per evicted cycle when its quota is released (the pods, and their checkpoints, are known then).
void MilestoneEngine::State::countInterrupted(LogicalWorkload& lw, Cycle& cy) {
  if (cy.interruptedCounted || !cy.has(Milestone::Evicted)) return;
  const SystemTime evicted = *cy.time(Milestone::Evicted);
  // A victim restored after a restart (restoreReclaim): the previous process counted its lost
  // work when the cycle's quota was released. A cycle this process first sees already released
  // was therefore counted there and is not counted again (the counter restarts from 0, so this
  // is what keeps restarts from double counting); one it first sees still holding quota was not,
  // and is counted here at its release like any other — and so is a cycle restored as evicted
  // but not released (restoreCycle), whose pods this process usually never sees: the previous
  // process's figure for the victim stands then.
  auto restored = restoredVictimEvictions.find({std::string(lw.key), unixMillis(evicted)});
  const bool last = &cy == &lw.cycles.back();
  if (!(cy.has(Milestone::Released) || cy.has(Milestone::Finished) || !last || lw.deleted)) {
    if (restored != restoredVictimEvictions.end() && !cy.restored) restoredVictimEvictions.erase(restored);
    return;
  }
  const bool podsKnown = !cyclePods(lw, cy, true).empty();
  std::optional<double> stored;
  if (restored != restoredVictimEvictions.end()) {
    if (!cy.restored) {
      cy.interruptedCounted = true;
      return;
    }
    if (!podsKnown) stored = restored->second;
  }
  if (!stored && lw.devices.empty() && lw.devicesUnresolved) return;
  cy.interruptedCounted = true;
  double secs = 0;
  if (stored) {
    secs = *stored;
  } else {
    auto since = workSince(lw, cy, evicted);
    if (!since || !(*since < evicted)) return;
    secs = static_cast<double>(totalDevices(lw)) * toSeconds(evicted - *since);
  }
  if (secs <= 0) return;
  const MilestoneValue* pre = cy.get(Milestone::Preempted);
  const std::string reason = pre != nullptr && !pre->reason.empty()
                                 ? pre->reason
                                 : cy.get(Milestone::Evicted)->reason;
  const std::string exec = executionCluster(lw, cy);
  const std::string cl = exec.empty() ? std::string(lw.cluster()) : exec;
  interruptedSeconds[{cl, clusterQueueFor(lw, cy), reason}] += secs;
}

void MilestoneEngine::State::scanPreemption(LocalWorkload& l) {
  const model::Workload& w = l.obj;
  const model::Condition* pr = condition(w.conditions, "Preempted");
  if (!conditionTrue(pr) || !l.linked) return;
  const SystemTime t = pr->lastTransitionTime.value_or(l.lastObservedAt);
  const auto seenKey = std::make_pair(static_cast<int64_t>(t.time_since_epoch().count()), pr->reason);
  if (std::find(l.preemptionsSeen.begin(), l.preemptionsSeen.end(), seenKey) !=
      l.preemptionsSeen.end()) {
    return;  // re-delivered
  }
  l.preemptionsSeen.push_back(seenKey);
  auto msg = parsePreemptionMessage(pr->message);
  const model::Condition* ev = condition(w.conditions, "Evicted");
  if (!msg && conditionTrue(ev)) msg = parsePreemptionMessage(ev->message);
  PreemptionReason reason = preemptionReasonFromCondition(pr->reason);
  if (reason == PreemptionReason::Unknown && msg) reason = msg->reason;
  if (!isReclaim(reason)) return;  // InClusterQueue: a priority preemption, not a reclaim
  if (!msg || msg->preemptorUid.empty()) return;  // "UID: UNKNOWN": nobody to attribute it to
  if (l.logical == nullptr) return;  // its logical workload went with its home Workload
  LogicalWorkload& victim = *l.logical;
  SystemTime evictedAt = t;
  if (conditionTrue(ev) && ev->lastTransitionTime) evictedAt = *ev->lastTransitionTime;
  Cycle* cy = cycleAt(victim, evictedAt);
  if (cy == nullptr) return;
  PendingVictim p;
  p.cluster = l.cluster;
  p.preemptorUid = msg->preemptorUid;
  p.victim.victimLogical = std::string(victim.key);
  p.victim.victimCycleId = cy->id;
  p.victim.cluster = l.cluster;
  p.victim.reason = std::string(preemptionReasonName(reason));
  p.victim.evictedAt = evictedAt;
  p.victim.workload = ref(victim, cy);
  pendingVictims.push_back(std::move(p));
}

void MilestoneEngine::State::resolveVictims() {
  for (auto it = pendingVictims.begin(); it != pendingVictims.end();) {
    LocalWorkload* pl = local(it->cluster, it->preemptorUid);
    if (pl == nullptr || pl->logical == nullptr || pl->logical->cycles.empty()) {
      ++it;
      continue;
    }
    LogicalWorkload& p = *pl->logical;
    Cycle* cy = cycleAt(p, it->victim.evictedAt);
    const std::string id = joinKey({"reclaim", p.key, cy->id});
    auto [rit, inserted] = reclaims.try_emplace(id);
    Reclaim& r = rit->second;
    if (inserted) {
      r.rec.id = id;
      r.rec.cycleId = cy->id;
      r.rec.cluster = it->cluster;
      r.rec.reason = it->victim.reason;
      r.rec.startedAt = it->victim.evictedAt;
      r.rec.outcome = ReclaimOutcome::Pending;
      r.preemptorLogical = std::string(p.key);
    }
    bool known = false;
    for (const auto& v : r.victims) {
      known = known || (v.victimLogical == it->victim.victimLogical && v.evictedAt == it->victim.evictedAt);
    }
    if (!known) {
      r.victims.push_back(it->victim);
      r.rec.startedAt = std::min(r.rec.startedAt, it->victim.evictedAt);
    }
    refreshReclaim(r, std::max(p.lastObservedAt, it->victim.evictedAt));
    it = pendingVictims.erase(it);
  }
}

ReclaimVictim MilestoneEngine::State::victimFigures(const VictimRef& v) const {
  ReclaimVictim out;
  out.workload = v.workload;
  out.cycleId = v.victimCycleId;
  out.cluster = v.cluster;
  out.reason = v.reason;
  out.evictedAt = v.evictedAt;
  bool podsKnown = false;
  auto it = logical.find(v.victimLogical);
  if (it != logical.end()) {
    const LogicalWorkload& lw = it->second;
    const Cycle* cy = cycleById(lw, v.victimCycleId);
    if (cy == nullptr && v.victimCycleId.empty()) {
      // A restored victim whose cycle id was not stored: its cycle is the one evicted then.
      for (const auto& c : lw.cycles) {
        if (c.time(Milestone::Evicted) == std::optional<SystemTime>(v.evictedAt)) cy = &c;
      }
      if (cy != nullptr) out.cycleId = cy->id;
    }
    out.workload = ref(lw, cy);
    out.gpus = totalDevices(lw);
    podsKnown = cy != nullptr && !cyclePods(lw, *cy, true).empty();
    if (cy != nullptr) out.workSince = workSince(lw, *cy, v.evictedAt);
    if (out.workSince && *out.workSince < v.evictedAt) {
      out.interruptedGpuSeconds =
          static_cast<double>(out.gpus) * toSeconds(v.evictedAt - *out.workSince);
    }
  }
  // After a restart the interrupted cycle's pods (first work, checkpoints) are usually gone:
  // without them (a restored cycle still knows its first work, not its checkpoints) or without a
  // workSince from the objects, the figures the previous process derived stand.
  if (v.restored && (!out.workSince || !podsKnown)) return *v.restored;
  return out;
}

void MilestoneEngine::State::restoreReclaim(const ReclaimRecord& rec) {
  if (rec.outcome != ReclaimOutcome::Pending || rec.id.empty() || reclaims.count(rec.id) != 0) return;
  if (cluster(rec.cluster) == nullptr) return;
  // The id is reclaim/<home cluster>/<preemptor uid>/<cycle id>: <home>/<uid> is the preemptor's
  // logical key, and the cycle id (not in every stored body) is its last segment.
  Reclaim r;
  r.rec = rec;
  const std::string prefix = "reclaim/";
  const size_t slash = rec.id.rfind('/');
  if (r.rec.cycleId.empty() && slash != std::string::npos) r.rec.cycleId = rec.id.substr(slash + 1);
  std::string preemptorKey = nsName(rec.preemptor.cluster, rec.preemptor.uid);
  const std::string suffix = "/" + r.rec.cycleId;
  if (rec.id.size() > prefix.size() + suffix.size() && rec.id.compare(0, prefix.size(), prefix) == 0 &&
      rec.id.compare(rec.id.size() - suffix.size(), suffix.size(), suffix) == 0) {
    preemptorKey = rec.id.substr(prefix.size(), rec.id.size() - prefix.size() - suffix.size());
  }
  r.preemptorLogical = std::move(preemptorKey);
  for (const auto& v : rec.victims) {
    VictimRef vr;
    vr.victimLogical = nsName(v.workload.cluster, v.workload.uid);
    vr.victimCycleId = v.cycleId;
    vr.cluster = v.cluster;
    vr.reason = v.reason;
    vr.evictedAt = v.evictedAt;
    vr.workload = v.workload;
    vr.restored = v;
    restoredVictimEvictions.emplace(std::make_pair(vr.victimLogical, unixMillis(vr.evictedAt)),
                                    v.interruptedGpuSeconds);
    r.victims.push_back(std::move(vr));
  }
  reclaims.emplace(rec.id, std::move(r));
}

void MilestoneEngine::State::refreshReclaim(Reclaim& r, SystemTime observedAt) {
  ReclaimRecord& rec = r.rec;
  const std::string before = signature(rec);
  const LogicalWorkload* p = nullptr;
  const Cycle* cy = nullptr;
  if (auto it = logical.find(r.preemptorLogical); it != logical.end()) {
    p = &it->second;
    cy = cycleById(*p, rec.cycleId);
  }
  if (p != nullptr) {
    rec.preemptor = ref(*p, cy);
    if (cy != nullptr) {
      rec.queuedAt = cy->time(Milestone::Queued);
      rec.firstWorkAt = cy->time(Milestone::FirstWork);
    }
  }
  rec.victims.clear();
  rec.interruptedGpuSeconds = 0;
  for (const auto& v : r.victims) {
    rec.victims.push_back(victimFigures(v));
    rec.interruptedGpuSeconds += rec.victims.back().interruptedGpuSeconds;
  }
  if (rec.outcome == ReclaimOutcome::Pending && rec.firstWorkAt && rec.queuedAt) {
    rec.outcome = ReclaimOutcome::Completed;
  }
  if (rec.firstWorkAt && rec.queuedAt && !rec.reclaimToFirstWorkSeconds && p != nullptr && cy != nullptr) {
    rec.reclaimToFirstWorkSeconds =
        *rec.firstWorkAt > *rec.queuedAt ? toSeconds(*rec.firstWorkAt - *rec.queuedAt) : 0.0;
    const MilestoneValue* fw = cy->get(Milestone::FirstWork);
    const std::string exec = executionCluster(*p, *cy);
    observe(HistogramKind::ReclaimToFirstWork,
            joinKey({"obs/reclaim_to_first_work", p->key, cy->id}), *rec.reclaimToFirstWorkSeconds,
            *rec.firstWorkAt, fw->observedAt, exec.empty() ? std::string(p->cluster()) : exec,
            rec.preemptor.clusterQueue, {}, rec.reason);
    if (rec.outcome == ReclaimOutcome::Completed) {
      ++reclaimTotals[{rec.preemptor.clusterQueue, rec.reason, ReclaimOutcome::Completed}];
    }
  }
  if (signature(rec) != before || rec.observedAt == SystemTime{}) {
    rec.observedAt = std::max(rec.observedAt, observedAt);
    produced.reclaims.push_back(rec);
  }
}

void MilestoneEngine::State::updateReclaims(SystemTime now) {
  for (auto& [id, r] : reclaims) {
    if (r.done()) continue;
    refreshReclaim(r, now);
    if (r.done()) continue;
    const LogicalWorkload* p = nullptr;
    const Cycle* cy = nullptr;
    if (auto it = logical.find(r.preemptorLogical); it != logical.end()) {
      p = &it->second;
      cy = cycleById(*p, r.rec.cycleId);
    }
    bool fail = false;
    if (p != nullptr && cy != nullptr &&
        cycleEnd(*p, *cy, cy == &p->cycles.back()).has_value()) {
      fail = true;  // the preemptor's cycle ended without useful work
    } else if (now >= r.rec.startedAt + config.reclaimBudget) {
      std::string exec = p != nullptr && cy != nullptr ? executionCluster(*p, *cy) : std::string();
      fail = !blocked(r.rec.cluster) && (exec.empty() || !blocked(exec));
    }
    if (!fail) continue;
    r.rec.outcome = ReclaimOutcome::Failed;
    r.rec.observedAt = now;
    ++reclaimTotals[{r.rec.preemptor.clusterQueue, r.rec.reason, ReclaimOutcome::Failed}];
    produced.reclaims.push_back(r.rec);
  }
  // Preemptors never seen: after the budget, a failed reclaim naming only the preemptor's uid.
  for (auto it = pendingVictims.begin(); it != pendingVictims.end();) {
    if (now < it->victim.evictedAt + config.reclaimBudget || blocked(it->cluster)) {
      ++it;
      continue;
    }
    const std::string id = joinKey({"reclaim", it->cluster, it->preemptorUid, "unknown"});
    auto [rit, inserted] = reclaims.try_emplace(id);
    Reclaim& r = rit->second;
    if (inserted) {
      r.rec.id = id;
      r.rec.cycleId = "unknown";
      r.rec.cluster = it->cluster;
      r.rec.reason = it->victim.reason;
      r.rec.preemptor.uid = it->preemptorUid;
      r.rec.preemptor.cluster = it->cluster;
      r.rec.startedAt = it->victim.evictedAt;
      r.rec.outcome = ReclaimOutcome::Failed;
      ++reclaimTotals[{std::string(), r.rec.reason, ReclaimOutcome::Failed}];
    }
    r.victims.push_back(it->victim);
    r.rec.victims.push_back(victimFigures(it->victim));
    r.rec.interruptedGpuSeconds += r.rec.victims.back().interruptedGpuSeconds;
    r.rec.observedAt = now;
    produced.reclaims.push_back(r.rec);
    it = pendingVictims.erase(it);
  }
}

}  // namespace firstwork::engine
