// Capacity ledger (design §5): what each workload wants, its contribution to the per-(cluster,
// device class) event-time timeline, stranded(t), the live integrals and the "reservation
// without capacity" check.
#include <algorithm>
#include <initializer_list>
#include <utility>

#include "detail/state.hpp"
#include "firstwork/model/meta.hpp"

namespace firstwork::engine {

Levels& Levels::operator+=(const Levels& o) {
  usable += o.usable;
  queued += o.queued;
  pending += o.pending;
  starting += o.starting;
  productive += o.productive;
  excluded += o.excluded;
  return *this;
}

Levels& Levels::operator-=(const Levels& o) {
  usable -= o.usable;
  queued -= o.queued;
  pending -= o.pending;
  starting -= o.starting;
  productive -= o.productive;
  excluded -= o.excluded;
  return *this;
}

int64_t Levels::stranded() const {
  return std::max<int64_t>(0, std::min(usable - productive, demand()));
}

// Devices held by a workload stuck on its own fault are neither available to others nor a
// platform delay: they leave both sides of the min().
int64_t Levels::strandedExcludingOwnFault() const {
  return std::max<int64_t>(0, std::min(usable - productive - excluded, demand() - excluded));
}

std::array<int64_t, kStrandedPhaseCount> splitStranded(const Levels& l, bool disconnected) {
  std::array<int64_t, kStrandedPhaseCount> out{};
  int64_t s = l.stranded();
  // Work already on the worker keeps starting there even while Kueue's connection is down; only
  // the idle remainder is the outage's.
  int64_t starting = std::min(std::max<int64_t>(l.starting, 0), s);
  int64_t pending = std::min(std::max<int64_t>(l.pending, 0), s - starting);
  int64_t idle = s - starting - pending;
  out[static_cast<size_t>(StrandedPhase::Starting)] = starting;
  out[static_cast<size_t>(StrandedPhase::PendingStart)] = pending;
  out[static_cast<size_t>(disconnected ? StrandedPhase::Disconnected : StrandedPhase::Idle)] = idle;
  return out;
}

namespace {

std::optional<SystemTime> earliest(std::initializer_list<std::optional<SystemTime>> ts) {
  std::optional<SystemTime> out;
  for (const auto& t : ts) {
    if (t && (!out || *t < *out)) out = t;
  }
  return out;
}

}  // namespace

// --- what a workload wants ----------------------------------------------------------------------

std::string MilestoneEngine::State::clusterQueueOf(const LogicalWorkload& lw,
                                                   const LocalWorkload& h) const {
  if (!h.obj->admissionClusterQueue.empty()) return h.obj->admissionClusterQueue;
  for (auto it = lw.cycles.rbegin(); it != lw.cycles.rend(); ++it) {
    if (!it->clusterQueue.empty()) return it->clusterQueue;
  }
  auto c = clusters.find(lw.cluster);
  if (c != clusters.end() && !h.obj->queueName.empty()) {
    auto q = c->second.localQueueToClusterQueue.find(nsName(h.obj->meta.namespace_, h.obj->queueName));
    if (q != c->second.localQueueToClusterQueue.end()) return q->second;
  }
  return {};
}

// Devices a workload wants, per class: extended resources from its podsets, DRA claim templates
// through the configured or learned template → DeviceClass mapping (templates are not watched).
// When a template cannot be resolved, the devices its pods actually hold or want are used once
// the pods exist.
void MilestoneEngine::State::resolveDevices(LogicalWorkload& lw) {
  const LocalWorkload* h = home(lw);
  if (h == nullptr) return;
  const model::Workload& w = h->obj;
  std::map<std::string, int64_t> need;
  bool unresolved = false;
  auto templateNeeds = [&](const std::string& ns, const std::string& name)
      -> std::optional<std::vector<std::pair<std::string, int64_t>>> {
    std::optional<std::vector<std::pair<std::string, int64_t>>> out;
    for (const auto& m : config.claimTemplates) {
      if (m.name != name || (!m.namespace_.empty() && m.namespace_ != ns)) continue;
      if (!out) out.emplace();
      out->emplace_back(m.deviceClassName, m.count);
    }
    if (out) return out;
    auto it = templates.find({ns, name});
    if (it != templates.end()) return it->second;
    return std::nullopt;
  };
  for (const auto& ps : w.podSets) {
    int64_t count = ps.count;
    for (const auto& a : w.podSetAssignments) {
      if (a.name == ps.name && a.count > 0) count = a.count;
    }
    for (const auto& dc : inv.demandForRequests(ps.perPodRequests, count)) need[dc.deviceClass] += dc.count;
    for (const auto& claim : ps.claims) {
      if (claim.resourceClaimTemplateName.empty()) {
        unresolved = true;  // pre-created claims: known only through the pods
        continue;
      }
      auto needs = templateNeeds(w.meta.namespace_, claim.resourceClaimTemplateName);
      if (!needs) {
        unresolved = true;
        continue;
      }
      for (const auto& [deviceClassName, n] : *needs) {
        auto cls = inv.classForDeviceClassName(deviceClassName);
        if (!cls) {
          unresolved = true;
          continue;
        }
        need[*cls] += n * count;
      }
    }
  }
  if (unresolved && !lw.cycles.empty()) {
    const Cycle& cy = lw.cycles.back();
    const std::string exec = executionCluster(lw, cy);
    std::map<std::string, int64_t> fromPods;
    for (const PodRecord* p : cyclePods(lw, cy, false)) {
      for (const auto& d : inv.podDevices(exec, p->obj).devices) fromPods[d.deviceClass] += d.count;
    }
    if (!fromPods.empty()) {
      need = std::move(fromPods);
      unresolved = false;
    }
  }
  lw.devicesUnresolved = unresolved;
  lw.devices.clear();
  for (const auto& [cls, n] : need) {
    if (n > 0) lw.devices.push_back({cls, n});
  }
}

std::vector<std::string> MilestoneEngine::State::candidates(const LogicalWorkload& lw,
                                                            const LocalWorkload& h) const {
  const model::Workload& w = h.obj;
  std::set<std::string> out;
  auto addMkc = [&](const std::string& mkcName) {
    std::string worker = workerForMkc(mkcName);
    if (!worker.empty()) out.insert(worker);
  };
  if (!w.clusterName.empty()) {
    addMkc(w.clusterName);
  } else if (!w.nominatedClusterNames.empty()) {
    for (const auto& n : w.nominatedClusterNames) addMkc(n);
  } else if (auto c = clusters.find(lw.cluster); c != clusters.end()) {
    // Kueue does not nominate an inactive worker: count toward every worker of the queue's
    // MultiKueueConfig (ClusterQueue → AdmissionCheck → MultiKueueConfig → clusters).
    const ClusterData& mc = c->second;
    std::vector<std::string> configs;
    std::string cq = clusterQueueOf(lw, h);
    auto q = mc.clusterQueues.find(cq);
    if (q != mc.clusterQueues.end()) {
      for (const auto& name : q->second.admissionChecks) {
        auto ac = mc.admissionChecks.find(name);
        if (ac != mc.admissionChecks.end() && ac->second.controllerName == kMultiKueueController &&
            !ac->second.parametersName.empty()) {
          configs.push_back(ac->second.parametersName);
        }
      }
    } else {
      for (const auto& [name, cfg] : mc.multiKueueConfigs) configs.push_back(name);
    }
    for (const auto& name : configs) {
      auto cfg = mc.multiKueueConfigs.find(name);
      if (cfg == mc.multiKueueConfigs.end()) continue;
      for (const auto& mkcName : cfg->second.clusters) addMkc(mkcName);
    }
  }
  if (out.empty()) {
    for (const auto& [name, c] : clusters) {
      if (c.config.role == ClusterRole::Worker) out.insert(name);
    }
  }
  return {out.begin(), out.end()};
}

// --- the timeline -------------------------------------------------------------------------------

std::vector<Interval> MilestoneEngine::State::deriveIntervals(LogicalWorkload& lw) const {
  std::vector<Interval> out;
  const LocalWorkload* h = home(lw);
  if (h == nullptr || lw.devices.empty()) return out;
  auto add = [&](const std::string& cl, SystemTime from, std::optional<SystemTime> to,
                 int64_t Levels::*field) {
    if (cl.empty() || clusters.find(cl) == clusters.end()) return;
    if (to && !(from < *to)) return;
    for (const auto& need : lw.devices) {
      Interval iv;
      iv.cluster = cl;
      iv.deviceClass = need.deviceClass;
      iv.from = from;
      iv.to = to;
      iv.delta.*field = need.count;
      out.push_back(std::move(iv));
    }
  };
  for (size_t i = 0; i < lw.cycles.size(); ++i) {
    const Cycle& cy = lw.cycles[i];
    const bool last = i + 1 == lw.cycles.size();
    const SystemTime queued = *cy.time(Milestone::Queued);
    const auto end = cycleEnd(lw, cy, last);
    const auto fw = cy.time(Milestone::FirstWork);
    const auto running = cy.time(Milestone::Running);
    std::vector<std::string> pre;
    std::optional<SystemTime> onTarget;  // reserved here (standalone) / dispatched here (MultiKueue)
    std::string exec;
    if (lw.multikueue) {
      pre = cy.candidates;
      onTarget = cy.time(Milestone::Dispatched);
      exec = cy.dispatchedCluster;
    } else {
      pre = {lw.cluster};
      onTarget = cy.time(Milestone::Reserved);
      exec = lw.cluster;
    }
    // Waiting: demand toward every cluster it may run on.
    const bool inactive = last && !h->obj->active && !onTarget;
    if (!inactive) {
      auto qEnd = earliest({onTarget, fw, end, cy.ineligibleSince});
      for (const auto& cl : pre) add(cl, queued, qEnd, &Levels::queued);
    }
    if (onTarget && !exec.empty()) {
      add(exec, *onTarget, earliest({running, fw, end}), &Levels::pending);
    }
    if (running && !exec.empty()) {
      SystemTime from = onTarget ? std::max(*running, *onTarget) : *running;
      add(exec, from, earliest({fw, end}), &Levels::starting);
    }
    if (fw && !exec.empty()) add(exec, *fw, end, &Levels::productive);
    if (cy.excludedFrom && !exec.empty()) {
      add(exec, *cy.excludedFrom, earliest({fw, end}), &Levels::excluded);
    }
  }
  return out;
}

void MilestoneEngine::State::updateIntervals(LogicalWorkload& lw) {
  if (lw.multikueue && !lw.cycles.empty()) {
    Cycle& cy = lw.cycles.back();
    const LocalWorkload* h = home(lw);
    // Candidates are followed while the workload waits; a cycle first seen already dispatched
    // (restart, late relist) waited for the worker it went to.
    if (h != nullptr && ((!cy.has(Milestone::Dispatched) && !cycleEnd(lw, cy, true)) ||
                         cy.candidates.empty())) {
      cy.candidates = candidates(lw, *h);
    }
  }
  std::vector<Interval> next = deriveIntervals(lw);
  if (next == lw.intervals) return;
  for (const auto& iv : lw.intervals) {
    timelines[{iv.cluster, iv.deviceClass}].remove(iv.from, iv.to, iv.delta);
  }
  for (const auto& iv : next) timelines[{iv.cluster, iv.deviceClass}].add(iv.from, iv.to, iv.delta);
  lw.intervals = std::move(next);
}

Levels MilestoneEngine::State::levelsAt(const std::string& cl, const std::string& deviceClass,
                                        SystemTime t) const {
  auto it = timelines.find({cl, deviceClass});
  return it == timelines.end() ? Levels{} : it->second.at(t);
}

// A reservation (standalone) or dispatch (MultiKueue) that counts on devices that are not there:
// at its event time, usable devices not held by other workloads were fewer than it wants.
void MilestoneEngine::State::checkCapacity(LogicalWorkload& lw, Cycle& cy) {
  if (cy.capacityChecked) return;
  const auto t = lw.multikueue ? cy.time(Milestone::Dispatched) : cy.time(Milestone::Reserved);
  if (!t) return;
  const std::string exec = executionCluster(lw, cy);
  const ClusterData* c = cluster(exec);
  if (c == nullptr || c->config.role == ClusterRole::Management) {
    cy.capacityChecked = true;
    return;
  }
  if (lw.devices.empty()) {
    if (!lw.devicesUnresolved) cy.capacityChecked = true;
    return;  // devices not known yet: check when they are
  }
  cy.capacityChecked = true;
  // Before the inventory of that cluster was known there is nothing to compare with (startup).
  if (!c->inventoryKnownSince || *t < *c->inventoryKnownSince) return;
  for (const auto& need : lw.devices) {
    Levels l = levelsAt(exec, need.deviceClass, *t);
    for (const auto& iv : lw.intervals) {  // leave out this workload's own contribution
      if (iv.cluster == exec && iv.deviceClass == need.deviceClass && iv.from <= *t &&
          (!iv.to || *t < *iv.to)) {
        l -= iv.delta;
      }
    }
    int64_t held = l.productive + l.pending + l.starting;
    if (l.usable - held < need.count) {
      cy.withoutCapacity = true;
      ++withoutCapacity[{exec, need.deviceClass}];
    }
  }
}

void MilestoneEngine::State::updateRates(LogicalWorkload& lw) {
  lw.rates.clear();
  if (lw.cycles.empty()) return;
  const Cycle& cy = lw.cycles.back();
  const LocalWorkload* h = home(lw);
  const std::string exec = executionCluster(lw, cy);
  lw.rateCluster = exec.empty() ? lw.cluster : exec;
  lw.rateQueue = ref(lw, &cy).clusterQueue;
  const bool ended = cycleEnd(lw, cy, true).has_value();
  if (!ended) {
    for (const auto& need : lw.devices) {
      auto& r = lw.rates[need.deviceClass];
      if (cy.has(Milestone::Reserved)) r[static_cast<size_t>(GpuState::Reserved)] += need.count;
      if (cy.has(Milestone::FirstWork)) r[static_cast<size_t>(GpuState::Productive)] += need.count;
    }
  }
  // Devices bound to its pods (any cycle: terminating pods still hold theirs).
  if (h == nullptr) return;
  for (const auto& [cl, uid] : lw.locals) {
    if (cl != lw.rateCluster) continue;
    const LocalWorkload* l = local(cl, uid);
    if (l == nullptr) continue;
    auto c = clusters.find(cl);
    for (const auto& podUid : l->pods) {
      auto p = c->second.pods.find(podUid);
      if (p == c->second.pods.end() || p->second.deleted) continue;
      for (const auto& d : inv.podDevices(cl, p->second.obj).devices) {
        if (d.allocated) lw.rates[d.deviceClass][static_cast<size_t>(GpuState::Allocated)] += d.count;
      }
    }
  }
}

void MilestoneEngine::State::refreshUsable(ClusterData& c) {
  if (!c.usableDirty) return;
  c.usableDirty = false;
  const std::string& name = c.config.name;
  std::map<std::string, int64_t> now;
  for (const auto& f : inv.classes(name)) now[f.deviceClass] = f.usable;
  for (const auto& [key, old] : usableNow) {
    if (key.first == name && now.find(key.second) == now.end()) now[key.second] = 0;
  }
  for (const auto& [cls, usable] : now) {
    const auto key = std::make_pair(name, cls);
    int64_t& old = usableNow[key];
    if (usable == old) continue;
    // Usable changes are placed in event-time order: a change never lands before an earlier one.
    SystemTime at = c.usableEventTime;
    if (auto prev = usableChangedAt.find(key); prev != usableChangedAt.end()) {
      at = std::max(at, prev->second);
    }
    Levels d;
    d.usable = usable - old;
    timelines[key].add(at, std::nullopt, d);
    usableChangedAt[key] = at;
    old = usable;
  }
}

bool MilestoneEngine::State::isDisconnected(const std::string& cl, SystemTime t) const {
  auto it = disconnected.find(cl);
  if (it == disconnected.end()) return false;
  for (const auto& [from, to] : it->second) {
    if (from <= t && (!to || t < *to)) return true;
  }
  return false;
}

std::vector<std::tuple<SystemTime, SystemTime, int64_t>> MilestoneEngine::State::incidentStranded(
    const std::string& cl, SystemTime a, SystemTime b) const {
  std::map<SystemTime, int64_t> steps;
  for (const auto& [key, tl] : timelines) {
    if (key.first != cl) continue;
    tl.forEachPiece(a, b, [&](SystemTime t0, SystemTime t1, const Levels& l) {
      int64_t s = l.strandedExcludingOwnFault();
      if (s == 0) return;
      steps[t0] += s;
      steps[t1] -= s;
    });
  }
  std::vector<std::tuple<SystemTime, SystemTime, int64_t>> out;
  int64_t v = 0;
  SystemTime t = a;
  for (const auto& [at, d] : steps) {
    if (t < at) out.emplace_back(t, at, v);
    v += d;
    t = at;
  }
  if (t < b) out.emplace_back(t, b, v);
  return out;
}

void MilestoneEngine::State::integrateStranded(SystemTime from, SystemTime to) {
  if (!(from < to)) return;
  for (const auto& [key, tl] : timelines) {
    const auto& [cl, cls] = key;
    const ClusterData* c = cluster(cl);
    if (c == nullptr) continue;
    std::vector<SystemTime> cuts;
    if (auto d = disconnected.find(cl); d != disconnected.end()) {
      for (const auto& [a, b] : d->second) {
        if (from < a && a < to) cuts.push_back(a);
        if (b && from < *b && *b < to) cuts.push_back(*b);
      }
    }
    std::sort(cuts.begin(), cuts.end());
    tl.forEachPiece(from, to, [&](SystemTime t0, SystemTime t1, const Levels& l) {
      SystemTime s = t0;
      auto piece = [&](SystemTime p0, SystemTime p1) {
        auto phases = splitStranded(l, isDisconnected(cl, p0));
        const double secs = toSeconds(p1 - p0);
        for (size_t i = 0; i < kStrandedPhaseCount; ++i) {
          if (phases[i] != 0) {
            strandedSeconds[{cl, cls, static_cast<StrandedPhase>(i)}] +=
                static_cast<double>(phases[i]) * secs;
          }
        }
      };
      for (SystemTime cut : cuts) {
        if (s < cut && cut < t1) {
          piece(s, cut);
          s = cut;
        }
      }
      piece(s, t1);
    });
  }
}

// GPU-seconds by state integrate the rates as they were over [from, to): the state settled at the
// previous advance held until the events of this one.
void MilestoneEngine::State::integrateRates(SystemTime from, SystemTime to) {
  if (!(from < to)) return;
  const double secs = toSeconds(to - from);
  for (const auto& [key, rate] : rateTotals) gpuSeconds[key] += static_cast<double>(rate) * secs;
}

void MilestoneEngine::State::addRates(const LogicalWorkload& lw, int64_t sign) {
  for (const auto& [cls, r] : lw.rates) {
    for (size_t i = 0; i < r.size(); ++i) {
      if (r[i] == 0) continue;
      auto key = std::make_tuple(lw.rateCluster, lw.rateQueue, cls, static_cast<GpuState>(i));
      auto [it, inserted] = rateTotals.try_emplace(std::move(key), 0);
      it->second += sign * r[i];
      if (it->second == 0) rateTotals.erase(it);
    }
  }
}

void MilestoneEngine::State::prune(SystemTime now) {
  SystemTime floor = now - config.timelineRetention;
  for (const auto& [id, in] : incidents) {
    if (in.closed()) continue;
    if (in.rec.disconnectedAt) floor = std::min(floor, *in.rec.disconnectedAt);
    if (in.rec.reconnectedAt) floor = std::min(floor, *in.rec.reconnectedAt);
  }
  for (const auto& [id, r] : reclaims) {
    if (!r.done()) floor = std::min(floor, r.rec.startedAt);
  }
  size_t points = 0;
  for (auto& [key, tl] : timelines) {
    tl.pruneBefore(floor);
    points += tl.points();
  }
  stats.timelinePoints = points;
  for (auto& [cl, spans] : disconnected) {
    spans.erase(std::remove_if(spans.begin(), spans.end(),
                               [&](const auto& s) { return s.second && *s.second < floor; }),
                spans.end());
  }
  for (auto it = incidents.begin(); it != incidents.end();) {
    const Incident& in = it->second;
    it = in.closed() && in.rec.closedAt && *in.rec.closedAt < floor ? incidents.erase(it) : std::next(it);
  }
  for (auto it = reclaims.begin(); it != reclaims.end();) {
    it = it->second.done() && it->second.rec.observedAt < floor ? reclaims.erase(it) : std::next(it);
  }
}

}  // namespace firstwork::engine
