// Admission cycles and their milestones (design §3), derived from the Workload's conditions and
// its pods. Derivation is state-based: every call looks at the current objects and sets what they
// prove, never un-sets anything, so a re-delivered object (relist, restart) changes nothing and
// the same object seen late gives the same event times.
#include <algorithm>
#include <array>
#include <boost/container/small_vector.hpp>
#include <optional>
#include <utility>

#include "detail/state.hpp"
#include "firstwork/engine/preemption.hpp"
#include "firstwork/model/meta.hpp"

namespace firstwork::engine {

namespace {

using model::ConditionStatus;

// QuotaReserved=False reasons that mean "this workload will not be admitted as it is": it is not
// demand for any devices (Kueue reference §1.4, §1.9).
bool neverAdmits(std::string_view reason) {
  return reason == "Misconfigured" || reason == "Inadmissible" || reason == "ExceedsMaxQuota" ||
         reason == "NoMatchingFlavor";
}

double seconds(SystemTime from, SystemTime to) {
  return to > from ? toSeconds(to - from) : 0.0;
}

// The worker named in a MultiKueue admission check message (v0.19+ "The workload was admitted on
// \"<c>\"", ≤ v0.18 "The workload got reservation on \"<c>\"").
std::string clusterFromCheckMessage(std::string_view message) {
  for (std::string_view marker : {std::string_view("admitted on \""),
                                  std::string_view("got reservation on \"")}) {
    auto p = message.find(marker);
    if (p == std::string_view::npos) continue;
    auto rest = message.substr(p + marker.size());
    auto q = rest.find('"');
    if (q != std::string_view::npos) return std::string(rest.substr(0, q));
  }
  return {};
}

struct StageDef {
  Stage stage;
  Milestone from;
  Milestone to;
  bool homeCluster;  // labelled with the home cluster (the stage ends on the manager)
};

constexpr std::array<StageDef, 7> kStages{{
    {Stage::QueuedToReserved, Milestone::Queued, Milestone::Reserved, true},
    {Stage::ReservedToDispatched, Milestone::Reserved, Milestone::Dispatched, false},
    {Stage::DispatchedToScheduled, Milestone::Dispatched, Milestone::Scheduled, false},
    {Stage::ReservedToScheduled, Milestone::Reserved, Milestone::Scheduled, false},
    {Stage::ScheduledToRunning, Milestone::Scheduled, Milestone::Running, false},
    {Stage::RunningToFirstWork, Milestone::Running, Milestone::FirstWork, false},
    {Stage::EvictedToReleased, Milestone::Evicted, Milestone::Released, true},
}};

// When all containers of a pod have started: the latest start (design §3 `running`).
std::optional<SystemTime> podRunningAt(const model::Pod& p) {
  if (p.phase != model::PodPhase::Running && p.phase != model::PodPhase::Succeeded) {
    return std::nullopt;
  }
  std::optional<SystemTime> latest;
  for (const auto& c : p.containers) {
    if (c.init) continue;
    if (!c.startedAt) return std::nullopt;
    if (!latest || *c.startedAt > *latest) latest = c.startedAt;
  }
  return latest;
}

const model::AdmissionCheckStatus* multiKueueCheck(const ClusterData& c, const model::Workload& w) {
  for (const auto& acs : w.admissionChecks) {
    auto it = c.admissionChecks.find(acs.name);
    if (it != c.admissionChecks.end() && it->second.controllerName == kMultiKueueController) return &acs;
  }
  // AdmissionCheck objects not listed (yet): recognise MultiKueue's check by its messages.
  for (const auto& acs : w.admissionChecks) {
    if (!clusterFromCheckMessage(acs.message).empty()) return &acs;
  }
  if (w.admissionChecks.size() == 1 && !w.admission->clusterName.empty()) {
    return &w.admissionChecks.front();
  }
  return nullptr;
}

}  // namespace

void PodRecord::setFacts(const model::Pod& p, int32_t crashLoopRestarts) {
  name = p.meta.name;
  ns = p.meta.namespace_;
  nodeName = p.nodeName;
  created = p.meta.creationTimestamp;
  deletionTimestamp = p.meta.deletionTimestamp;
  phase = p.phase;
  const model::BriefCondition* s = condition(p.conditions, "PodScheduled");
  scheduled_ = conditionTrue(s);
  scheduledTransition = scheduled_ ? s->lastTransitionTime : OptionalTime();
  allStartedAt = podRunningAt(p);
  firstRunningStart = OptionalTime();
  lastRunningStart = OptionalTime();
  if (p.phase == model::PodPhase::Running) {
    for (const auto& cs : p.containers) {
      if (cs.init || cs.state != model::ContainerStateKind::Running || !cs.startedAt) continue;
      if (!firstRunningStart || *cs.startedAt < *firstRunningStart)
        firstRunningStart = cs.startedAt;
      if (!lastRunningStart || *cs.startedAt > *lastRunningStart) lastRunningStart = cs.startedAt;
    }
  }
  // Status churn leaves these as they were: copied (a block of their own) only when changed.
  if (!requests.equals(p.requests)) requests.assign(p.requests);
  const auto sameClaim = [&p](const model::PodClaimRef& a, const model::PodClaim& b) {
    return a.name == b.name && a.templateName == b.resourceClaimTemplateName &&
           a.resolvesTo(p.meta.name, model::claimNameOf(b));
  };
  if (!std::equal(claims.begin(), claims.end(), p.claims.begin(), p.claims.end(), sameClaim)) {
    // Each a PodClaimRef of the pod's claim, gathered on the stack for the usual few claims (as
    // setHeld gathers a pod's requests), not in a heap block of its own before the list's.
    boost::container::small_vector<model::PodClaimRef, 4> refs;
    for (const auto& c : p.claims) refs.emplace_back(c, p.meta.name);
    claims.assign(refs);
  }
  const std::optional<StuckReason> r = podStuckReason(p, crashLoopRestarts);
  stuck_ = r ? static_cast<uint8_t>(*r) : kNotStuck;
}

WorkloadRef MilestoneEngine::State::ref(const LogicalWorkload& lw, const Cycle* cy) const {
  WorkloadRef r;
  r.cluster = lw.cluster();
  r.uid = lw.uid();
  if (const LocalWorkload* h = home(lw)) {
    r.namespace_ = h->obj->meta.namespace_;
    r.name = h->obj->meta.name;
    r.localQueue = h->obj->queueName;
    r.clusterQueue = cy != nullptr && !cy->clusterQueue.empty() ? cy->clusterQueue.str()
                                                                : clusterQueueOf(lw, *h);
  } else if (cy != nullptr) {
    r.clusterQueue = cy->clusterQueue;
  }
  return r;
}

std::string MilestoneEngine::State::clusterQueueFor(const LogicalWorkload& lw,
                                                    const Cycle& cy) const {
  if (!cy.clusterQueue.empty()) return cy.clusterQueue.str();
  const LocalWorkload* h = home(lw);
  return h != nullptr ? clusterQueueOf(lw, *h) : std::string();
}

int64_t MilestoneEngine::State::expectedPods(const model::Workload& w) const {
  int64_t assigned = 0;
  for (const auto& a : w.admission->podSetAssignments) assigned += a.count;
  if (assigned > 0) return assigned;
  int64_t total = 0;
  for (const auto& ps : w.podSets) total += ps.count;
  return total;
}

std::string MilestoneEngine::State::executionCluster(const LogicalWorkload& lw,
                                                     const Cycle& cy) const {
  if (!lw.multikueue) return std::string(lw.cluster());
  if (!cy.dispatchedCluster.empty()) return cy.dispatchedCluster;
  return {};
}

std::optional<SystemTime> MilestoneEngine::State::cycleEnd(const LogicalWorkload& lw,
                                                           const Cycle& cy, bool last) const {
  std::optional<SystemTime> end;
  for (Milestone k : {Milestone::Evicted, Milestone::Released, Milestone::Finished}) {
    if (auto t = cy.time(k); t && (!end || *t < *end)) end = t;
  }
  if (last && lw.deleted && (!end || lw.deletedAt < *end)) end = lw.deletedAt;
  return end;
}

std::vector<const PodRecord*> MilestoneEngine::State::cyclePods(const LogicalWorkload& lw,
                                                                const Cycle& cy,
                                                                bool includeDeleted) const {
  std::vector<const PodRecord*> out;
  const std::string exec = executionCluster(lw, cy);
  if (exec.empty()) return out;
  auto c = clusters.find(exec);
  if (c == clusters.end()) return out;
  // Pods after the cycle's start belong to it; pods created after the next cycle started belong
  // to that one.
  const auto idx = static_cast<size_t>(&cy - lw.cycles.data());
  std::optional<SystemTime> until;
  if (idx + 1 < lw.cycles.size()) until = lw.cycles[idx + 1].podsSince;
  for (const auto& [cl, uid] : lw.locals) {
    if (cl != exec) continue;
    auto l = c->second.workloads.find(uid);
    if (l == c->second.workloads.end()) continue;
    for (const PodEntry* p : l->second.pods) {
      const PodRecord& rec = p->second;
      if (rec.deleted && !includeDeleted) continue;
      SystemTime created = rec.created;
      if (cy.podsSince && created < *cy.podsSince) continue;
      if (until && created >= *until) continue;
      out.push_back(&rec);
    }
  }
  return out;
}

void MilestoneEngine::State::observe(HistogramKind kind, std::string key, double secs,
                                     SystemTime eventTime, SystemTime observedAt,
                                     std::string cluster, std::string clusterQueue,
                                     std::string stage, std::string reason, std::string outcome,
                                     std::string source, std::string resource) {
  Observation o;
  o.key = std::move(key);
  o.histogram = kind;
  o.cluster = std::move(cluster);
  o.clusterQueue = std::move(clusterQueue);
  o.stage = std::move(stage);
  o.reason = std::move(reason);
  o.outcome = std::move(outcome);
  o.source = std::move(source);
  o.resource = std::move(resource);
  o.seconds = secs < 0 ? 0 : secs;
  o.eventTime = eventTime;
  o.observedAt = observedAt;
  produced.observations.push_back(std::move(o));
}

// --- cycles -----------------------------------------------------------------------------------

void MilestoneEngine::State::fillCycle(LogicalWorkload& lw, Cycle& cy, const LocalWorkload& h,
                                       std::optional<SystemTime> upper) {
  const model::Workload& w = h.obj;
  const SystemTime seen = h.lastObservedAt;
  auto ct = [&](const model::Condition* c) { return c->lastTransitionTime.value_or(seen); };
  auto value = [&](SystemTime t, std::string reason = {}) {
    MilestoneValue v;
    v.eventTime = t;
    v.observedAt = seen;
    v.cluster = lw.cluster();
    v.resource = "workloads";
    v.reason = std::move(reason);
    return v;
  };
  const SystemTime lower = *cy.time(Milestone::Queued);
  auto within = [&](SystemTime t) { return t >= lower && (!upper || t < *upper); };

  const auto* qr = condition(w.conditions, "QuotaReserved");
  const auto* ad = condition(w.conditions, "Admitted");
  const auto* ev = condition(w.conditions, "Evicted");
  const auto* pr = condition(w.conditions, "Preempted");
  const auto* fi = condition(w.conditions, "Finished");

  // Finished is terminal and overrides everything: nothing after it is recorded.
  if (!upper && conditionTrue(fi)) cy.set(Milestone::Finished, value(ct(fi), fi->reason));
  const std::optional<SystemTime> fin = cy.time(Milestone::Finished);
  auto beforeEnd = [&](SystemTime t) { return !fin || t <= *fin; };

  if (conditionTrue(qr) && within(ct(qr)) && beforeEnd(ct(qr))) {
    if (cy.set(Milestone::Reserved, value(ct(qr)))) cy.clusterQueue = w.admission->clusterQueue;
  }
  if (cy.clusterQueue.empty() && cy.has(Milestone::Reserved)) {
    cy.clusterQueue = w.admission->clusterQueue;
  }
  if (!cy.has(Milestone::Reserved)) {
    cy.ineligibleSince.reset();
    if (!upper && conditionFalse(qr) && neverAdmits(qr->reason)) {
      cy.ineligibleSince = std::max(ct(qr), lower);
    }
    return;
  }
  const SystemTime reserved = *cy.time(Milestone::Reserved);
  auto inCycle = [&](SystemTime t) { return t >= reserved && within(t) && beforeEnd(t); };

  if (lw.multikueue) {
    const ClusterData* mc = nullptr;
    if (auto it = clusters.find(lw.cluster()); it != clusters.end()) mc = &it->second;
    const model::AdmissionCheckStatus* check = mc != nullptr ? multiKueueCheck(*mc, w) : nullptr;
    if (check != nullptr && check->state == model::CheckState::Ready) {
      std::string mkcName = !w.admission->clusterName.empty()
                                ? w.admission->clusterName.str()
                                : clusterFromCheckMessage(check->message);
      SystemTime t = check->lastTransitionTime.value_or(conditionTrue(ad) ? ct(ad) : seen);
      if (!mkcName.empty() && inCycle(t)) {
        std::string worker = workerForMkc(mkcName);
        if (worker.empty()) worker = mkcName;  // not a configured worker: still say where it went
        MilestoneValue v = value(t);
        v.cluster = worker;
        if (cy.set(Milestone::Dispatched, std::move(v))) cy.dispatchedCluster = worker;
      }
    }
  }
  if (conditionTrue(ad) && inCycle(ct(ad))) cy.set(Milestone::Admitted, value(ct(ad)));
  // A condition True in a state seen since the last settle counts as if it were still True.
  auto resetTrue = [&](const model::Condition* now, const char* type) {
    if (conditionTrue(now)) return now;
    for (auto it = h.resetConditions.rbegin(); it != h.resetConditions.rend(); ++it) {
      if (it->type == type && inCycle(ct(&*it))) return &*it;
    }
    return now;
  };
  ev = resetTrue(ev, "Evicted");
  pr = resetTrue(pr, "Preempted");
  if (conditionTrue(ev) && inCycle(ct(ev))) cy.set(Milestone::Evicted, value(ct(ev), ev->reason));
  if (conditionTrue(pr) && inCycle(ct(pr))) {
    Interned preemptor;
    if (auto msg = parsePreemptionMessage(pr->message)) preemptor = ownedUid(msg->preemptorUid);
    cy.set(Milestone::Preempted, value(ct(pr), pr->reason), std::move(preemptor));
  }
  // Two-phase eviction: quota is released when QuotaReserved goes False (pods gone).
  if (conditionFalse(qr) && ct(qr) >= reserved && (!upper || ct(qr) <= *upper) &&
      beforeEnd(ct(qr))) {
    cy.set(Milestone::Released, value(ct(qr), qr->reason));
  }
}

void MilestoneEngine::State::deriveCycles(LogicalWorkload& lw, const LocalWorkload& h) {
  const model::Workload& w = h.obj;
  const SystemTime seen = h.lastObservedAt;
  const auto* rq = condition(w.conditions, "Requeued");
  const auto* qr = condition(w.conditions, "QuotaReserved");
  auto ct = [&](const model::Condition* c) { return c->lastTransitionTime.value_or(seen); };

  // The current cycle started at creation, or at the last Requeued=True.
  SystemTime start = w.meta.creationTimestamp;
  std::string startReason = "Created";
  if (conditionTrue(rq) && ct(rq) > start) {
    start = ct(rq);
    startReason = rq->reason;
  }
  auto newCycle = [&](SystemTime queued, std::string reason, std::optional<SystemTime> podsSince) {
    Cycle cy;
    cy.id = cycleIdOf(queued);
    cy.ordinal = static_cast<int32_t>(lw.cycles.size());
    MilestoneValue v;
    v.eventTime = queued;
    v.observedAt = seen;
    v.cluster = lw.cluster();
    v.resource = "workloads";
    v.reason = std::move(reason);
    cy.set(Milestone::Queued, std::move(v));
    cy.podsSince = podsSince;
    lw.cycles.push_back(std::move(cy));
  };
  // Where the next cycle's pods begin: pods of the old cycle were created before its eviction.
  auto boundary = [](const Cycle& cy, SystemTime fallback) {
    if (auto t = cy.time(Milestone::Evicted)) return *t;
    if (auto t = cy.time(Milestone::Released)) return *t;
    return fallback;
  };

  if (lw.cycles.empty()) {
    newCycle(start, startReason, std::nullopt);
  } else {
    Cycle& cur = lw.cycles.back();
    const SystemTime curQueued = *cur.time(Milestone::Queued);
    if (!cur.has(Milestone::Finished) && start > curQueued) {
      // Requeued: finish the old cycle with what the object still shows, then start anew.
      fillCycle(lw, cur, h, start);
      if (cur.has(Milestone::Reserved) && !cur.has(Milestone::Released)) {
        MilestoneValue v;
        v.observedAt = seen;
        v.cluster = lw.cluster();
        v.resource = "workloads";
        if (conditionFalse(qr) && ct(qr) >= *cur.time(Milestone::Reserved) && ct(qr) <= start) {
          v.eventTime = ct(qr);
          v.reason = qr->reason;
        } else {
          v.eventTime = start;  // the release itself was overwritten before we saw it
          v.reason = startReason;
        }
        cur.set(Milestone::Released, std::move(v));
      }
      SystemTime since = boundary(cur, start);
      newCycle(start, startReason, since);
    } else if (!cur.has(Milestone::Finished) && cur.has(Milestone::Released) &&
               conditionTrue(qr) && ct(qr) > *cur.time(Milestone::Released)) {
      // Re-reserved after a release without a Requeued condition (older Kueue).
      SystemTime released = *cur.time(Milestone::Released);
      newCycle(released, "Released", boundary(cur, released));
    }
  }
  fillCycle(lw, lw.cycles.back(), h, std::nullopt);
}

// --- restored and persisted open cycles ------------------------------------------------------

// A cycle that had quota and was not released when the previous process stopped. Once its
// Workload is requeued the object shows only the new cycle, so without this a restart before the
// release loses the old cycle's end (evicted, preempted, released, evicted_to_released) and its
// lost work; with it, the relisted object's Evicted/QuotaReserved=False/Requeued conditions
// finish the old cycle exactly as an uninterrupted process would have (deriveCycles), and
// `workSince` (from its OpenCycleRecord) stands for its pods' first work and checkpoints if they
// are gone. What was restored was committed, i.e. emitted.
void MilestoneEngine::State::restoreCycle(const std::vector<MilestoneRecord>& milestones,
                                          std::optional<SystemTime> restoredSince) {
  if (milestones.empty()) return;
  const MilestoneRecord& first = milestones.front();
  if (first.workload.uid.empty() || first.cycleId.empty() || cluster(first.workload.cluster) == nullptr) {
    return;
  }
  Cycle cy;
  cy.id = first.cycleId;
  cy.restored = true;
  cy.capacityChecked = true;  // judged (and recorded) by the previous process
  cy.clusterQueue = first.workload.clusterQueue;
  for (const auto& r : milestones) {
    if (r.workload.cluster != first.workload.cluster || r.workload.uid != first.workload.uid ||
        r.cycleId != cy.id) {
      continue;
    }
    MilestoneValue v;
    v.eventTime = r.eventTime;
    v.observedAt = r.observedAt;
    v.cluster = r.executionCluster;
    v.resource = r.resource;
    v.signal = r.signal;
    v.reason = r.reason;
    if (r.milestone == Milestone::Dispatched) cy.dispatchedCluster = r.executionCluster;
    if (cy.clusterQueue.empty()) cy.clusterQueue = r.workload.clusterQueue;
    cy.set(r.milestone, std::move(v), ownedUid(r.preemptorUid), r.proxy, /*emitted=*/true);
  }
  // Only what a restart cannot derive again: a cycle holding quota. Its queued milestone is its
  // identity (deriveCycles compares it with the object's current cycle).
  if (!cy.has(Milestone::Queued) || !cy.has(Milestone::Reserved) || cy.has(Milestone::Released) ||
      cy.has(Milestone::Finished)) {
    return;
  }
  const SystemTime queued = *cy.time(Milestone::Queued);
  cy.podsSince = queued;  // its pods were created after it was queued
  cy.restoredWorkSince = restoredSince;
  cy.persistedOpen = true;
  cy.persistedWorkSince = restoredSince;
  for (const auto& def : kStages) {
    cy.stageEmitted[static_cast<size_t>(def.stage)] = cy.has(def.from) && cy.has(def.to);
  }
  cy.reservationToFirstWorkEmitted = cy.has(Milestone::Reserved) && cy.has(Milestone::FirstWork);
  const std::string key = nsName(first.workload.cluster, first.workload.uid);
  auto it = restoredCycles.find(key);
  if (it != restoredCycles.end() && *it->second.time(Milestone::Queued) == queued) {
    // Restored twice (its open record and its stored eviction): keep what is known.
    if (!it->second.restoredWorkSince) {
      it->second.restoredWorkSince = restoredSince;
      it->second.persistedWorkSince = restoredSince;
    }
    return;
  }
  // One per workload: the latest (an earlier one ended in a way the store missed).
  if (it == restoredCycles.end() || *it->second.time(Milestone::Queued) < queued) {
    restoredCycles[key] = std::move(cy);
  }
}

// Keeps the durable OpenCycleRecord of `cy` in step: open from its reservation until it is
// released or finished (or its workload deleted, or a later cycle started), with its work-since.
void MilestoneEngine::State::persistOpenCycle(LogicalWorkload& lw, Cycle& cy) {
  const bool last = &cy == &lw.cycles.back();
  const bool open = cy.has(Milestone::Reserved) && !cy.has(Milestone::Released) &&
                    !cy.has(Milestone::Finished) && last && !lw.deleted;
  if (!open) {
    if (cy.persistedOpen) closeOpenCycle(lw.key, cy, lw.lastObservedAt);
    return;
  }
  const std::optional<SystemTime> since =
      workSince(lw, cy, cy.time(Milestone::Evicted).value_or(SystemTime::max()));
  // As optionals: an OptionalTime converts to a time, and absent == absent must hold.
  if (cy.persistedOpen && since == std::optional<SystemTime>(cy.persistedWorkSince)) return;
  cy.persistedOpen = true;
  cy.persistedWorkSince = since;
  OpenCycleRecord r;
  r.key = joinKey({"oc", lw.key, cy.id});
  r.workload = ref(lw, &cy);
  r.cycleId = cy.id;
  r.workSince = since;
  r.observedAt = lw.lastObservedAt;
  produced.openCycles.push_back(std::move(r));
}

void MilestoneEngine::State::closeOpenCycle(std::string_view lwKey, Cycle& cy,
                                            SystemTime observedAt) {
  cy.persistedOpen = false;
  OpenCycleRecord r;
  const size_t slash = lwKey.find('/');
  r.workload.cluster = lwKey.substr(0, slash);
  r.workload.uid = slash == std::string_view::npos ? std::string_view() : lwKey.substr(slash + 1);
  r.key.append("oc/").append(lwKey).append("/").append(cy.id);
  r.workload.clusterQueue = cy.clusterQueue;
  r.cycleId = cy.id;
  r.open = false;
  r.observedAt = observedAt;
  produced.openCycles.push_back(std::move(r));
}

// --- pod-side milestones ----------------------------------------------------------------------

void MilestoneEngine::State::podMilestones(LogicalWorkload& lw, Cycle& cy) {
  const std::string exec = executionCluster(lw, cy);
  if (exec.empty()) return;
  const LocalWorkload* h = home(lw);
  if (h == nullptr) return;
  const auto pods = cyclePods(lw, cy, true);
  if (pods.empty()) return;
  const bool last = &cy == &lw.cycles.back();
  const std::optional<SystemTime> end = cycleEnd(lw, cy, last);
  auto beforeEnd = [&](SystemTime t) { return !end || t <= *end; };
  const int64_t expected = std::max<int64_t>(expectedPods(h->obj), 1);

  auto value = [&](SystemTime t, SystemTime observed) {
    MilestoneValue v;
    v.eventTime = t;
    v.observedAt = observed;
    v.cluster = exec;
    v.resource = "pods";
    return v;
  };
  // "All pods" = the expected number of pods; with replacements, the time the expected-th pod
  // got there.
  auto allPods = [&](std::vector<std::pair<SystemTime, SystemTime>> times, Milestone k) {
    if (static_cast<int64_t>(times.size()) < expected) return;
    std::sort(times.begin(), times.end());
    SystemTime t = times[static_cast<size_t>(expected - 1)].first;
    SystemTime observed{};
    for (int64_t i = 0; i < expected; ++i) observed = std::max(observed, times[static_cast<size_t>(i)].second);
    if (beforeEnd(t)) cy.set(k, value(t, observed));
  };

  if (!cy.has(Milestone::Scheduled)) {
    std::vector<std::pair<SystemTime, SystemTime>> times;
    for (const PodRecord* p : pods) {
      if (!p->scheduled()) continue;
      times.emplace_back(p->scheduledTransition.value_or(p->lastObservedAt),
                         p->scheduledObservedAt().value_or(p->lastObservedAt));
    }
    allPods(std::move(times), Milestone::Scheduled);
  }
  if (!cy.has(Milestone::Running)) {
    std::vector<std::pair<SystemTime, SystemTime>> times;
    for (const PodRecord* p : pods) {
      if (p->allStartedAt) {
        times.emplace_back(*p->allStartedAt, p->runningObservedAt().value_or(p->lastObservedAt));
      }
    }
    allPods(std::move(times), Milestone::Running);
  }
  if (!cy.has(Milestone::FirstWork)) {
    // The most preferred kind of signal any pod shows (design §4 order), earliest among those.
    std::optional<UsefulWorkSignal> best;
    SystemTime bestObserved{};
    auto consider = [&](const UsefulWorkSignal& s, SystemTime observed) {
      if (!beforeEnd(s.at)) return;
      if (!best || s.kind < best->kind || (s.kind == best->kind && s.at < best->at)) {
        best = s;
        bestObserved = observed;
      }
    };
    for (const PodRecord* p : pods) {
      if (auto fw = p->firstWork()) consider(*fw, p->signalObservedAt);
      if (p->external()) consider(*p->external(), p->externalObservedAt());
    }
    if (best) {
      MilestoneValue v = value(best->at, bestObserved);
      v.signal = best->name;
      if (best->kind == SignalKind::External) v.resource = "external";
      cy.set(Milestone::FirstWork, std::move(v), {}, best->kind == SignalKind::ReadyProxy);
    }
  }
}

// --- emission ---------------------------------------------------------------------------------

void MilestoneEngine::State::emitMilestones(LogicalWorkload& lw, Cycle& cy) {
  std::optional<WorkloadRef> workload;  // the same for every milestone emitted now
  for (size_t i = 0; i < kMilestoneCount; ++i) {
    const auto k = static_cast<Milestone>(i);
    if (!cy.has(k) || cy.emitted(k)) continue;
    const MilestoneValue& slot = *cy.get(k);
    cy.markEmitted(k);
    MilestoneRecord r;
    if (!workload) workload = ref(lw, &cy);
    r.workload = *workload;
    r.cycleId = cy.id;
    r.cycle = cy.ordinal;
    r.milestone = k;
    r.key = joinKey({"ms", lw.key, cy.id, milestoneName(k)});
    r.eventTime = slot.eventTime;
    r.observedAt = slot.observedAt;
    r.executionCluster = slot.cluster;
    r.resource = slot.resource;
    r.signal = slot.signal;
    r.proxy = cy.proxy(k);
    r.reason = slot.reason;
    if (k == Milestone::Preempted) r.preemptorUid = cy.preemptorUid;
    for (const auto& need : lw.devices) r.gpus += need.count;
    if ((k == Milestone::Reserved && !lw.multikueue) || k == Milestone::Dispatched) {
      r.withoutCapacity = cy.withoutCapacity;
    }
    // Observation lag of things that happened while the daemon watched (not of history found at
    // startup, which would only measure the object's age).
    const ClusterData* from = cluster(slot.cluster);
    if (from != nullptr && from->firstSeen && slot.eventTime >= *from->firstSeen) {
      observe(HistogramKind::ObservationLag, joinKey({"lag", lw.key, cy.id, milestoneName(k)}),
              seconds(slot.eventTime, slot.observedAt), slot.eventTime, slot.observedAt,
              slot.cluster, {}, {}, {}, {}, {}, slot.resource);
    }
    produced.milestones.push_back(std::move(r));
  }
}

void MilestoneEngine::State::emitStages(LogicalWorkload& lw, Cycle& cy) {
  const std::string exec = executionCluster(lw, cy);
  const std::string cq = clusterQueueFor(lw, cy);
  for (const auto& def : kStages) {
    auto& done = cy.stageEmitted[static_cast<size_t>(def.stage)];
    if (done) continue;
    const MilestoneValue* a = cy.get(def.from);
    const MilestoneValue* b = cy.get(def.to);
    if (a == nullptr || b == nullptr) continue;
    done = true;
    const std::string& cl = def.homeCluster || exec.empty() ? std::string(lw.cluster()) : exec;
    observe(HistogramKind::Stage, joinKey({"obs/stage", stageName(def.stage), lw.key, cy.id}),
            seconds(a->eventTime, b->eventTime), b->eventTime, b->observedAt, cl, cq,
            std::string(stageName(def.stage)));
  }
  if (!cy.reservationToFirstWorkEmitted && cy.has(Milestone::Reserved) &&
      cy.has(Milestone::FirstWork)) {
    cy.reservationToFirstWorkEmitted = true;
    const MilestoneValue* fw = cy.get(Milestone::FirstWork);
    observe(HistogramKind::ReservationToFirstWork,
            joinKey({"obs/reservation_to_first_work", lw.key, cy.id}),
            seconds(*cy.time(Milestone::Reserved), fw->eventTime), fw->eventTime, fw->observedAt,
            exec.empty() ? std::string(lw.cluster()) : exec, cq);
  }
}

void MilestoneEngine::State::emitLinkedFirstWork(LogicalWorkload& lw, Cycle& cy) {
  const MilestoneValue* fw = cy.get(Milestone::FirstWork);
  if (fw == nullptr) return;
  for (auto& link : cy.incidents) {
    if (link.firstWorkEmitted || fw->cluster != link.cluster) continue;
    link.firstWorkEmitted = true;
    observe(HistogramKind::ReconnectToFirstWork,
            joinKey({"obs/reconnect_to_first_work", link.incidentId, lw.uid()}),
            seconds(link.reconnectedAt, fw->eventTime), fw->eventTime, fw->observedAt,
            link.cluster);
  }
}

void MilestoneEngine::State::settle(LogicalWorkload& lw) {
  markPart(lw.key);  // its cycles, stuck verdict and duplicates may change here
  LocalWorkload* h = home(lw);
  if (h == nullptr) return;
  if (const ClusterData* c = cluster(lw.cluster())) {
    lw.multikueue = c->config.role == ClusterRole::Management;
    if (lw.multikueue) {
      // A management cluster may also run local queues: a ClusterQueue known to have no
      // MultiKueue admission check makes the workload local.
      std::string cq = clusterQueueOf(lw, *h);
      auto q = c->clusterQueues.find(cq);
      if (q != c->clusterQueues.end()) {
        bool mk = false;
        bool allKnown = true;
        for (const auto& name : q->second.admissionChecks) {
          auto ac = c->admissionChecks.find(name);
          if (ac == c->admissionChecks.end()) allKnown = false;
          else mk = mk || ac->second.controllerName == kMultiKueueController;
        }
        if (!mk && allKnown) lw.multikueue = false;
      }
    }
  }
  deriveCycles(lw, *h);
  h->resetConditions.clear();
  resolveDevices(lw);
  for (auto& cy : lw.cycles) podMilestones(lw, cy);
  for (auto& cy : lw.cycles) {
    checkCapacity(lw, cy);
    emitMilestones(lw, cy);
    emitStages(lw, cy);
    emitLinkedFirstWork(lw, cy);
    countInterrupted(lw, cy);
    persistOpenCycle(lw, cy);
  }
  updateIntervals(lw);
  addRates(lw, -1);
  updateRates(lw);
  addRates(lw, 1);
  if (stuckWatch.find(lw.key) == stuckWatch.end()) stuckWatch.emplace(lw.key);
  checkDuplicates(lw);
}

}  // namespace firstwork::engine
