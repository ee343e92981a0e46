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
  if (!h.obj->admission->clusterQueue.empty()) return h.obj->admission->clusterQueue;
  for (auto it = lw.cycles.rbegin(); it != lw.cycles.rend(); ++it) {
    if (!it->clusterQueue.empty()) return it->clusterQueue;
  }
  auto c = clusters.find(lw.cluster());
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
      -> std::optional<std::vector<model::DeviceRequest>> {
    std::optional<std::vector<model::DeviceRequest>> out;
    for (const auto& m : config.claimTemplates) {
      if (m.name != name || (!m.namespace_.empty() && m.namespace_ != ns)) continue;
      if (!out) out.emplace();
      model::DeviceRequest mapped;
      mapped.deviceClassName = m.deviceClassName;
      mapped.count = m.count;
      out->push_back(std::move(mapped));
    }
    if (out) return out;
    auto it = templates.find(TemplateName(ns, name));
    if (it != templates.end()) return it->second;
    return std::nullopt;
  };
  for (const auto& ps : w.podSets) {
    int64_t count = ps.count;
    for (const auto& a : w.admission->podSetAssignments) {
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
      for (const auto& request : *needs) {
        auto cls = inv.classForRequest(request);
        if (!cls) {
          unresolved = true;
          continue;
        }
        need[*cls] += request.count * count;
      }
    }
  }
  if (unresolved && !lw.cycles.empty()) {
    const Cycle& cy = lw.cycles.back();
    const std::string exec = executionCluster(lw, cy);
    std::map<std::string, int64_t> fromPods;
    for (const PodRecord* p : cyclePods(lw, cy, false)) {
      for (const auto& d : inv.podDevices(exec, podUse(*p)).devices)
        fromPods[d.deviceClass] += d.count;
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
  if (!w.admission->clusterName.empty()) {
    addMkc(w.admission->clusterName);
  } else if (!w.rareStatus->nominatedClusterNames.empty()) {
    for (const auto& n : w.rareStatus->nominatedClusterNames) addMkc(n);
  } else if (auto c = clusters.find(lw.cluster()); c != clusters.end()) {
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

CompactVector<HeldDevices> MilestoneEngine::State::heldDevices(const LogicalWorkload& lw,
                                                               const Cycle& cy) const {
  std::map<std::pair<std::string, std::string>, int64_t> held;
  const std::string exec = executionCluster(lw, cy);
  for (const PodRecord* p : cyclePods(lw, cy, false)) {
    if (p->nodeName.empty()) continue;
    for (const auto& d : inv.podDevices(exec, podUse(*p)).devices) {
      if (d.allocated) held[{d.deviceClass, std::string(p->nodeName)}] += d.count;
    }
  }
  CompactVector<HeldDevices> out;
  out.reserve(static_cast<uint32_t>(held.size()));
  for (const auto& [key, n] : held) out.push_back({key.first, key.second, n});
  return out;
}

// Held classes replace the requested ones they can serve (a plain GPU request held as a share);
// requested devices not (yet) held stay in their requested class.
std::vector<DeviceNeed> MilestoneEngine::State::devicesOf(const LogicalWorkload& lw,
                                                         const Cycle& cy) const {
  if (cy.held.empty()) return lw.devices;
  const std::string exec = executionCluster(lw, cy);
  std::map<std::string, int64_t> remaining;
  for (const auto& need : lw.devices) remaining[need.deviceClass] += need.count;
  std::map<std::string, int64_t> out;
  for (const auto& h : cy.held) {
    out[h.deviceClass] += h.count;
    int64_t n = h.count;
    for (auto& [requested, left] : remaining) {
      if (n == 0) break;
      if (left == 0) continue;
      const auto& also = inv.alsoServedBy(exec, requested);
      if (h.deviceClass != requested &&
          std::find(also.begin(), also.end(), h.deviceClass) == also.end()) {
        continue;
      }
      const int64_t take = std::min(left, n);
      left -= take;
      n -= take;
    }
  }
  for (const auto& [requested, left] : remaining) {
    if (left > 0) out[requested] += left;
  }
  std::vector<DeviceNeed> result;
  for (const auto& [cls, n] : out) result.push_back({cls, n});
  return result;
}

bool MilestoneEngine::State::isShareClass(const std::string& deviceClass) const {
  return inv.unitOf(deviceClass) == inventory::Unit::Share;
}

std::vector<Interval> MilestoneEngine::State::deriveIntervals(LogicalWorkload& lw) const {
  std::vector<Interval> out;
  const LocalWorkload* h = home(lw);
  if (h == nullptr || lw.devices.empty()) return out;
  auto addOne = [&](const std::string& cl, const std::string& cls, const std::string& node,
                    SystemTime from, std::optional<SystemTime> to, int64_t Levels::*field,
                    int64_t count) {
    Interval iv;
    iv.cluster = cl;
    iv.deviceClass = cls;
    iv.node = node;
    iv.from = from;
    iv.to = to;
    iv.level = field;
    iv.count = count;
    out.push_back(std::move(iv));
  };
  auto valid = [&](const std::string& cl, SystemTime from, std::optional<SystemTime> to) {
    return !cl.empty() && clusters.find(cl) != clusters.end() && (!to || from < *to);
  };
  auto add = [&](const std::string& cl, SystemTime from, std::optional<SystemTime> to,
                 int64_t Levels::*field, const std::vector<DeviceNeed>& devices) {
    if (!valid(cl, from, to)) return;
    for (const auto& need : devices) addOne(cl, need.deviceClass, {}, from, to, field, need.count);
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
      pre = {std::string(lw.cluster())};
      onTarget = cy.time(Milestone::Reserved);
      exec = lw.cluster();
    }
    // Waiting: demand toward every cluster it may run on, in every class there that can serve it
    // (compatible demand: a plain GPU request also waits for time-sliced shares of that GPU).
    const bool inactive = last && !h->obj->active && !onTarget;
    if (!inactive) {
      auto qEnd = earliest({onTarget, fw, end, cy.ineligibleSince});
      for (const auto& cl : pre) {
        if (!valid(cl, queued, qEnd)) continue;
        for (const auto& need : lw.devices) {
          addOne(cl, need.deviceClass, {}, queued, qEnd, &Levels::queued, need.count);
          for (const auto& cls : inv.alsoServedBy(cl, need.deviceClass)) {
            addOne(cl, cls, {}, queued, qEnd, &Levels::queued, need.count);
          }
        }
      }
    }
    const std::vector<DeviceNeed> devices = devicesOf(lw, cy);
    if (onTarget && !exec.empty()) {
      add(exec, *onTarget, earliest({running, fw, end}), &Levels::pending, devices);
    }
    if (running && !exec.empty()) {
      SystemTime from = onTarget ? std::max(*running, *onTarget) : *running;
      add(exec, from, earliest({fw, end}), &Levels::starting, devices);
    }
    if (fw && !exec.empty()) {
      add(exec, *fw, end, &Levels::productive, devices);
      // Productive shares per node: a device with one productive tenant is productive.
      if (valid(exec, *fw, end)) {
        for (const auto& held : cy.held) {
          if (isShareClass(held.deviceClass)) {
            addOne(exec, held.deviceClass, held.node, *fw, end, &Levels::productive, held.count);
          }
        }
      }
    }
    if (cy.excludedFrom && !exec.empty()) {
      add(exec, *cy.excludedFrom, earliest({fw, end}), &Levels::excluded, devices);
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
  if (!lw.cycles.empty()) {
    // Only the current cycle's pods can still change what they hold. Pods that end release
    // their devices; what they held stays the cycle's (a partial view never replaces a fuller
    // one).
    Cycle& cy = lw.cycles.back();
    auto held = heldDevices(lw, cy);
    int64_t now = 0, before = 0;
    for (const auto& d : held) now += d.count;
    for (const auto& d : cy.held) before += d.count;
    if (now > 0 && now >= before) cy.held = std::move(held);  // built at its size
  }
  std::vector<Interval> next = deriveIntervals(lw);
  if (next == lw.intervals) return;
  auto timelineOf = [&](const Interval& iv) -> StepTimeline<Levels>& {
    if (iv.node.empty()) return timelines[{iv.cluster, iv.deviceClass}];
    return nodeTimelines[{iv.cluster, iv.deviceClass, iv.node}];
  };
  for (const auto& iv : lw.intervals) timelineOf(iv).remove(iv.from, iv.to, iv.delta());
  for (const auto& iv : next) timelineOf(iv).add(iv.from, iv.to, iv.delta());
  lw.intervals = std::move(next);
  lw.intervals.shrink_to_fit();  // kept with the workload: no spare capacity (change 82)
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
    // Enough free devices in any class that can serve the request is capacity.
    bool enough = false;
    for (const auto& cls : inv.servingClasses(exec, need.deviceClass)) {  // once per cycle
      Levels l = levelsAt(exec, cls, *t);
      for (const auto& iv : lw.intervals) {  // leave out this workload's own contribution
        if (iv.node.empty() && iv.cluster == exec && iv.deviceClass == cls && iv.from <= *t &&
            (!iv.to || *t < *iv.to)) {
          l -= iv.delta();
        }
      }
      int64_t held = l.productive + l.pending + l.starting;
      enough = enough || l.usable - held >= need.count;
    }
    if (!enough) {
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
  lw.rateCluster = exec.empty() ? std::string(lw.cluster()) : exec;
  lw.rateQueue = clusterQueueFor(lw, cy);
  const bool ended = cycleEnd(lw, cy, true).has_value();
  auto rateOf = [&](std::string_view cls) -> std::array<int64_t, 3>& {
    auto it = std::lower_bound(lw.rates.begin(), lw.rates.end(), cls,
                               [](const auto& e, std::string_view k) { return e.first < k; });
    if (it == lw.rates.end() || it->first != cls) it = lw.rates.insert(it, {Interned(cls), {}});
    return it->second;
  };
  if (!ended) {
    for (const auto& need : devicesOf(lw, cy)) {
      auto& r = rateOf(need.deviceClass);
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
    for (const PodEntry* p : l->pods) {
      if (p->second.deleted) continue;
      for (const auto& d : inv.podDevices(cl, podUse(p->second)).devices) {
        if (d.allocated) rateOf(d.deviceClass)[static_cast<size_t>(GpuState::Allocated)] += d.count;
      }
    }
  }
}

void MilestoneEngine::State::refreshUsable(ClusterData& c) {
  if (!c.usableDirty) return;
  c.usableDirty = false;
  const std::string& name = c.config.name;
  std::map<std::string, int64_t> now;
  std::map<NodeKey, int64_t> physical;
  for (const auto& f : inv.classes(name)) {
    now[f.deviceClass] = f.usable;
    if (!f.shared) continue;
    for (const auto& [node, devices] : inv.physicalUsableByNode(name, f.deviceClass)) {
      physical[{name, f.deviceClass, node}] = devices;
    }
  }
  for (const auto& [key, old] : usableNow) {
    if (key.first == name && now.find(key.second) == now.end()) now[key.second] = 0;
  }
  for (const auto& [key, old] : physicalNow) {
    if (std::get<0>(key) == name && physical.find(key) == physical.end()) physical[key] = 0;
  }
  // Usable changes are placed in event-time order: a change never lands before an earlier one of
  // the same class.
  auto changeAt = [&](const std::pair<std::string, std::string>& key) {
    SystemTime at = c.usableEventTime;
    if (auto prev = usableChangedAt.find(key); prev != usableChangedAt.end()) {
      at = std::max(at, prev->second);
    }
    return at;
  };
  for (const auto& [key, devices] : physical) {
    int64_t& old = physicalNow[key];
    if (devices == old) continue;
    Levels d;
    d.usable = devices - old;
    nodeTimelines[key].add(changeAt({std::get<0>(key), std::get<1>(key)}), std::nullopt, d);
    old = devices;
  }
  for (const auto& [cls, usable] : now) {
    const auto key = std::make_pair(name, cls);
    int64_t& old = usableNow[key];
    if (usable == old) continue;
    const SystemTime at = changeAt(key);
    Levels d;
    d.usable = usable - old;
    timelines[key].add(at, std::nullopt, d);
    usableChangedAt[key] = at;
    old = usable;
  }
}

Levels MilestoneEngine::State::physicalLevelsAt(const std::string& cl, const std::string& deviceClass,
                                                SystemTime t) const {
  Levels l = levelsAt(cl, deviceClass, t);
  l.usable = 0;
  l.productive = 0;
  for (auto it = nodeTimelines.lower_bound({cl, deviceClass, std::string()});
       it != nodeTimelines.end() && std::get<0>(it->first) == cl &&
       std::get<1>(it->first) == deviceClass;
       ++it) {
    const Levels n = it->second.at(t);
    const int64_t devices = std::max<int64_t>(n.usable, 0);
    l.usable += devices;
    l.productive += std::min(devices, std::max<int64_t>(n.productive, 0));
  }
  return l;
}

void MilestoneEngine::State::forEachPhysicalPiece(
    const std::string& cl, const std::string& deviceClass, SystemTime a, SystemTime b,
    const std::function<void(SystemTime, SystemTime, const Levels&)>& fn) const {
  if (!(a < b)) return;
  std::vector<SystemTime> cuts{a, b};
  auto collect = [&](SystemTime t) { cuts.push_back(t); };
  if (auto it = timelines.find({cl, deviceClass}); it != timelines.end()) {
    it->second.forEachChange(a, b, collect);
  }
  for (auto it = nodeTimelines.lower_bound({cl, deviceClass, std::string()});
       it != nodeTimelines.end() && std::get<0>(it->first) == cl &&
       std::get<1>(it->first) == deviceClass;
       ++it) {
    it->second.forEachChange(a, b, collect);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    fn(cuts[i], cuts[i + 1], physicalLevelsAt(cl, deviceClass, cuts[i]));
  }
}

int64_t MilestoneEngine::State::unusableForBacklog(const Levels& l, int64_t queuedOnCluster) {
  if (l.queued > 0 || queuedOnCluster <= 0) return 0;
  return std::max<int64_t>(0, l.usable - l.productive - l.pending - l.starting);
}

bool MilestoneEngine::State::isDisconnected(const std::string& cl, SystemTime t) const {
  auto it = disconnected.find(cl);
  if (it == disconnected.end()) return false;
  for (const auto& [from, to] : it->second) {
    if (from <= t && (!to || t < *to)) return true;
  }
  return false;
}

namespace {

// Σ over the class timelines of `cluster` of value(levels) on [a, b), as constant pieces.
template <typename Timelines, typename Value>
std::vector<std::tuple<SystemTime, SystemTime, int64_t>> sumOverClasses(const Timelines& timelines,
                                                                        const std::string& cl,
                                                                        SystemTime a, SystemTime b,
                                                                        Value value) {
  std::map<SystemTime, int64_t> steps;
  for (const auto& [key, tl] : timelines) {
    if (key.first != cl) continue;
    tl.forEachPiece(a, b, [&](SystemTime t0, SystemTime t1, const Levels& l) {
      int64_t s = value(l);
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

}  // namespace

std::vector<std::tuple<SystemTime, SystemTime, int64_t>> MilestoneEngine::State::incidentStranded(
    const std::string& cl, SystemTime a, SystemTime b) const {
  return sumOverClasses(timelines, cl, a, b,
                        [](const Levels& l) { return l.strandedExcludingOwnFault(); });
}

std::vector<std::tuple<SystemTime, SystemTime, int64_t>> MilestoneEngine::State::queuedOnCluster(
    const std::string& cl, SystemTime a, SystemTime b) const {
  return sumOverClasses(timelines, cl, a, b,
                        [](const Levels& l) { return std::max<int64_t>(l.queued, 0); });
}

void MilestoneEngine::State::integrateStranded(SystemTime from, SystemTime to) {
  if (!(from < to)) return;
  for (const auto& [key, tl] : timelines) {
    // Plain references, not a structured binding: the lambdas below use them, and clang 14 (the
    // fuzz/sanitizer compiler) cannot capture structured bindings.
    const std::string& cl = key.first;
    const std::string& cls = key.second;
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
    // Adds one constant piece to `totals`, split where the MultiKueue connection went or came.
    auto addPiece = [&](auto& totals, SystemTime t0, SystemTime t1, const Levels& l) {
      SystemTime s = t0;
      auto piece = [&](SystemTime p0, SystemTime p1) {
        auto phases = splitStranded(l, isDisconnected(cl, p0));
        const double secs = toSeconds(p1 - p0);
        for (size_t i = 0; i < kStrandedPhaseCount; ++i) {
          if (phases[i] != 0) {
            totals[{cl, cls, static_cast<StrandedPhase>(i)}] += static_cast<double>(phases[i]) * secs;
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
    };
    tl.forEachPiece(from, to, [&](SystemTime t0, SystemTime t1, const Levels& l) {
      addPiece(strandedSeconds, t0, t1, l);
    });
    if (isShareClass(cls)) {
      forEachPhysicalPiece(cl, cls, from, to, [&](SystemTime t0, SystemTime t1, const Levels& l) {
        addPiece(physicalStrandedSeconds, t0, t1, l);
      });
    }
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
      auto key = std::make_tuple(lw.rateCluster, lw.rateQueue, cls.str(), static_cast<GpuState>(i));
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
  for (auto& [key, tl] : nodeTimelines) {
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
