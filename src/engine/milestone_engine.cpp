#include "firstwork/engine/milestone_engine.hpp"

#include <algorithm>
#include <utility>
#include <variant>

#include "detail/state.hpp"
#include "firstwork/model/meta.hpp"

namespace firstwork::engine {

// ---------------------------------------------------------------------------------------------
// Small helpers shared by the engine's files.

int64_t unixMillis(SystemTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string cycleIdOf(SystemTime queued) { return std::to_string(unixMillis(queued)); }

const model::Condition* condition(const model::Conditions& cs, std::string_view type) {
  return model::findCondition(cs, type);
}

const model::BriefCondition* condition(const model::BriefConditions& cs, std::string_view type) {
  return model::findCondition(cs, type);
}

bool conditionTrue(const model::Condition* c) {
  return c != nullptr && c->status == model::ConditionStatus::True;
}

bool conditionTrue(const model::BriefCondition* c) {
  return c != nullptr && c->status == model::ConditionStatus::True;
}

bool conditionFalse(const model::Condition* c) {
  return c != nullptr && c->status == model::ConditionStatus::False;
}

std::string joinKey(std::initializer_list<std::string_view> parts) {
  size_t n = parts.size() == 0 ? 0 : parts.size() - 1;
  for (std::string_view part : parts) n += part.size();
  std::string s;
  s.reserve(n);
  bool first = true;
  for (std::string_view part : parts) {
    if (!first) s += '/';
    first = false;
    s.append(part);
  }
  return s;
}

std::string nsName(std::string_view ns, std::string_view name) { return joinKey({ns, name}); }

namespace {

/// A key a Workload can resolve a pod by, hashed: its kind ('n' a Workload's namespace/name, 'o'
/// an owner's uid, 'j' a Job's namespace/name) and its parts.
uint64_t resolvingKey(char kind, std::string_view a, std::string_view b = {}) {
  constexpr uint64_t kMix = 0x9e3779b97f4a7c15ULL;
  const std::hash<std::string_view> hash;
  uint64_t h = static_cast<unsigned char>(kind);
  h = (h * kMix) ^ hash(a);
  h = (h * kMix) ^ hash(b);
  return h;
}

/// Every key a Workload could resolve a pod of metadata `m` by (resolvePod's: the annotation's
/// Workload name, the owners' uids and the pod's own, the Job owners' names).
template <typename F>
void forResolvingKeys(const model::ObjectMeta& m, F&& f) {
  if (const SmallString* name = model::findValue(m.annotations, kWorkloadAnnotation)) {
    f(resolvingKey('n', m.namespace_, *name));
  }
  for (const auto& o : m.ownerReferences) {
    f(resolvingKey('o', o.uid));
    if (o.kind == "Job") f(resolvingKey('j', m.namespace_, o.name));
  }
  f(resolvingKey('o', m.uid));
}

}  // namespace

void ClusterData::addUnresolved(PodEntry& pod, std::shared_ptr<const model::ObjectMeta> meta) {
  dropUnresolved(pod);  // waiting already: its keys were those of the pod as last seen
  // Once under a key the pod has twice (a set).
  forResolvingKeys(*meta, [&](uint64_t key) { unresolvedByKey.emplace(key, &pod); });
  ++unresolvedCount;
  if (pod.second.deleted) ++unresolvedDeleted;
  pod.second.rareFields().unresolved = std::move(meta);
}

void ClusterData::dropUnresolved(PodEntry& pod) {
  PodRecord& rec = pod.second;
  if (rec.rare == nullptr || rec.rare->unresolved == nullptr) return;
  forResolvingKeys(*rec.rare->unresolved, [&](uint64_t key) {
    unresolvedByKey.erase({key, &pod});
  });
  --unresolvedCount;
  if (rec.deleted) --unresolvedDeleted;
  rec.rare->unresolved.reset();
  rec.dropRareIfEmpty();
}

bool ClusterData::setPodDeleted(PodRecord& rec, bool deleted, SystemTime at) {
  if (rec.deleted == deleted) return false;
  if (rec.rare != nullptr && rec.rare->unresolved != nullptr) {
    if (deleted) {
      ++unresolvedDeleted;
    } else {
      --unresolvedDeleted;
    }
  }
  rec.deleted = deleted;
  if (deleted) rec.deletedAt = at;
  return deleted;
}

namespace {
template <typename Keys>
void remember(Keys& keys, std::string_view key) {
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.emplace_back(key);
}
}  // namespace

bool Cycle::set(Milestone k, MilestoneValue v, Interned preemptor, bool proxy, bool emitted) {
  if (has(k)) return false;
  if (values_.size() == values_.capacity()) {
    values_.reserve(std::max(kMilestonesReserved, values_.size() + 1));
  }
  values_.insert(values_.begin() + static_cast<std::ptrdiff_t>(slot(k)), std::move(v));
  present_ |= bit(k);
  if (proxy) proxy_ |= bit(k);
  if (emitted) emitted_ |= bit(k);
  if (k == Milestone::Preempted) preemptorUid = std::move(preemptor);
  return true;
}

// ---------------------------------------------------------------------------------------------

MilestoneEngine::State::State(EngineConfig c) : config(std::move(c)), inv(config.inventory) {
  for (const auto& cc : config.clusters) {
    ClusterData& d = clusters[cc.name];
    d.config = cc;
    if (cc.role == ClusterRole::Worker) {
      mkcToCluster[cc.multiKueueClusterName.empty() ? cc.name : cc.multiKueueClusterName] = cc.name;
    }
  }
}

ClusterData* MilestoneEngine::State::cluster(std::string_view name) {
  auto it = clusters.find(name);
  return it == clusters.end() ? nullptr : &it->second;
}

LocalWorkload* MilestoneEngine::State::local(std::string_view cluster, std::string_view uid) {
  auto c = clusters.find(cluster);
  if (c == clusters.end()) return nullptr;
  auto it = c->second.workloads.find(uid);
  return it == c->second.workloads.end() ? nullptr : &it->second;
}

const LocalWorkload* MilestoneEngine::State::local(std::string_view cluster,
                                                   std::string_view uid) const {
  auto c = clusters.find(cluster);
  if (c == clusters.end()) return nullptr;
  auto it = c->second.workloads.find(uid);
  return it == c->second.workloads.end() ? nullptr : &it->second;
}

LocalWorkload* MilestoneEngine::State::home(LogicalWorkload& lw) {
  return local(lw.cluster(), lw.uid());
}
const LocalWorkload* MilestoneEngine::State::home(const LogicalWorkload& lw) const {
  return local(lw.cluster(), lw.uid());
}

std::string MilestoneEngine::State::workerForMkc(std::string_view mkcName) const {
  auto it = mkcToCluster.find(std::string(mkcName));
  return it == mkcToCluster.end() ? std::string() : it->second;
}

// --- Workloads --------------------------------------------------------------------------------

void MilestoneEngine::State::indexWorkload(ClusterData& c, LocalWorkload& l) {
  const auto& m = l.obj->meta;
  indexUnder(c.workloadsByName, &l);
  if (!workloadJobName(&l).name.empty()) indexUnder(c.workloadsByJobName, &l);
  for (const auto& o : m.ownerReferences) {
    c.workloadsByOwner[o.uid] = &l;
    remember(l.ownerKeys, o.uid);
  }
  if (const SmallString* job = model::findValue(m.labels, kJobUidLabel)) {
    c.workloadsByOwner[*job] = &l;
    remember(l.ownerKeys, *job);
  }
}

// Decides which logical workload a Workload object belongs to: worker copies (origin label on a
// worker) join the manager Workload of the same namespace/name; everything else is its own
// logical workload on its cluster.
void MilestoneEngine::State::linkWorkload(ClusterData& c, std::string_view uid, LocalWorkload& l) {
  const auto& m = l.obj->meta;
  l.remoteCopy = c.config.role == ClusterRole::Worker &&
                 model::findValue(m.labels, kOriginLabel) != nullptr;
  // Each view in `locals` is of a configured cluster name and of a Workload's key in its
  // cluster's `workloads` (`uid` here), never of a decoded object (replaced at its next event).
  const std::string_view here = c.config.name;
  // Already the home of its logical workload (every event after the first): that entry is the
  // one the key below would find, and its `locals` lists this Workload. Without the key's string
  // and a walk down a tree of every logical workload by it (their keys begin alike, the
  // cluster's name), which was 2.7 % of the loop's samples at 500 ev/s (bench/README.md,
  // change 103).
  if (!l.remoteCopy && l.logical != nullptr && l.logical->cluster() == here &&
      l.logical->uid() == uid) {
    markDirty(l.logical->key);
    return;
  }
  if (!l.remoteCopy) {
    std::string key = nsName(c.config.name, m.uid);
    auto [it, inserted] = logical.try_emplace(std::move(key));
    LogicalWorkload& lw = it->second;
    if (inserted) {
      lw.setKey(it->first, c.config.name.size());
      lw.multikueue = c.config.role == ClusterRole::Management;
      if (auto r = restoredCycles.find(it->first); r != restoredCycles.end()) {
        lw.cycles.push_back(std::move(r->second));
        restoredCycles.erase(r);
      }
      // Copies that arrived before their manager.
      for (auto& [name, other] : clusters) {
        if (other.config.role != ClusterRole::Worker || !lw.multikueue) continue;
        auto byName = other.workloadsByName.find(model::namespacedName(m));
        if (byName == other.workloadsByName.end()) continue;
        LocalWorkload& copy = **byName;
        if (!copy.remoteCopy || copy.linked) continue;
        auto copyEntry = other.workloads.find(copy.obj->meta.uid);
        if (copyEntry == other.workloads.end() || &copyEntry->second != &copy) continue;
        copy.linked = true;
        copy.logical = &lw;
        lw.locals.emplace(std::string_view(other.config.name), std::string_view(copyEntry->first));
        markPreemptionScan(name, copyEntry->first, *copy.obj);
      }
    }
    lw.locals.emplace(here, uid);
    l.linked = true;
    l.logical = &lw;
    markDirty(it->first);
    return;
  }
  if (l.linked) {
    if (l.logical != nullptr) markDirty(l.logical->key);
    return;
  }
  // Find the manager Workload: prefer one whose clusterName/nominations name this worker. Its
  // logical workload is there while it is (linked when it arrived; gc erases both together).
  LogicalWorkload* best = nullptr;
  for (auto& [name, other] : clusters) {
    if (other.config.role != ClusterRole::Management) continue;
    auto byName = other.workloadsByName.find(model::namespacedName(m));
    if (byName == other.workloadsByName.end()) continue;
    const LocalWorkload& mw = **byName;
    if (mw.logical == nullptr) continue;
    const model::Workload& w = mw.obj;
    bool names = workerForMkc(w.admission->clusterName) == c.config.name;
    for (const auto& n : w.rareStatus->nominatedClusterNames) {
      names = names || workerForMkc(n) == c.config.name;
    }
    if (best == nullptr || names) best = mw.logical;
    if (names) break;
  }
  if (best == nullptr) return;  // linked when the manager Workload arrives
  l.linked = true;
  l.logical = best;
  best->locals.emplace(here, uid);
  markDirty(best->key);
}

void MilestoneEngine::State::onWorkload(ClusterData& c, model::EventType type,
                                        const model::Workload& w, SystemTime at,
                                        const std::shared_ptr<const model::Object>& holder) {
  if (w.meta.uid.empty()) {
    ++stats.ignoredObjects;
    return;
  }
  auto [it, inserted] = c.workloads.try_emplace(w.meta.uid);
  LocalWorkload& l = it->second;
  if (inserted) l.cluster = c.config.name;
  if (type == model::EventType::Deleted) {
    if (!l.deleted) {
      l.deleted = true;
      l.deletedAt = w.meta.deletionTimestamp.value_or(at);
      if (l.deletedAt > at) l.deletedAt = at;
      tombstones.push({l.deletedAt, c.config.name, w.meta.uid, false});
    }
  } else {
    l.deleted = false;
  }
  if (!inserted) {
    // Found by the fault soak: with an eviction and a re-admission delivered in one batch, only
    // the re-admitted state was judged, so whether an eviction was recorded depended on timing.
    for (const char* t : {"Evicted", "Preempted"}) {
      const model::Condition* was = condition(l.obj->conditions, t);
      if (conditionTrue(was) && !conditionTrue(condition(w.conditions, t))) {
        l.resetConditions.push_back(*was);
      }
    }
  }
  if (!inserted) {
    // A uid under another name (hostile input), or another Job owning it: out of that index
    // before its object goes.
    if (workloadName(&l) != model::namespacedName(w.meta)) {
      unindex(c.workloadsByName, workloadName(&l), &l);
    }
    const model::NamespacedName job = workloadJobName(&l);
    if (!job.name.empty() && job != jobOwnerName(w.meta)) unindex(c.workloadsByJobName, job, &l);
  }
  l.obj.reset(holder);
  l.lastObservedAt = std::max(l.lastObservedAt, at);
  indexWorkload(c, l);
  // Learn LocalQueue → ClusterQueue (Workloads not yet admitted do not name their ClusterQueue).
  if (!w.admission->clusterQueue.empty() && !w.queueName.empty()) {
    std::string& learned = c.localQueueToClusterQueue[nsName(w.meta.namespace_, w.queueName)];
    if (learned != w.admission->clusterQueue) {
      learned = w.admission->clusterQueue;
      // Workloads counted by their LocalQueue's ClusterQueue may now count under another.
      partsDirty.insert(partsByLocalQueue.begin(), partsByLocalQueue.end());
    }
  }
  linkWorkload(c, it->first, l);
  if (LogicalWorkload* lw = l.logical) {
    markPart(lw->key);  // deleted, or its home's queue, may have changed before any settle
    lw->lastObservedAt = std::max(lw->lastObservedAt, at);
    if (!l.remoteCopy) {
      lw->deleted = l.deleted;
      lw->deletedAt = l.deletedAt;
    }
  }
  markPreemptionScan(c.config.name, w.meta.uid, w);
  if (inserted) retryUnresolvedPods(c, l);
}

// --- Pods -------------------------------------------------------------------------------------

LocalWorkload* MilestoneEngine::State::resolvePod(const ClusterData& c, const model::ObjectMeta& m,
                                                  const LocalWorkload* joined) const {
  auto find = [&](const auto& idx, std::string_view k) -> LocalWorkload* {
    auto it = idx.find(k);
    return it == idx.end() ? nullptr : it->second;
  };
  // A deleted Workload (tracked for deletedRetention) keeps its name, and its Job's name, until
  // another of that name is indexed. A pod that a name leads to one is its own if it is joined
  // to it already, or was created before the Workload's deletion began (its deletionTimestamp,
  // which a Workload with finalizers, as Kueue's admitted ones, carries when deleted): the
  // Workload's whole life may have passed before the pod's first event came (the order across
  // watch streams is not kept; seen under bursts). A pod created later, or when the deletion's
  // start is not known (the time the deletion was seen is later than it began), is taken for a
  // pod of a Workload of that name still to come (a Job made again under its name: a drill
  // played again, the same names) and waits for it, unresolved; joined to the deleted one by
  // the name, a new pod stayed there and lost its milestones to the new cycle. Owners' uids,
  // which tell incarnations apart, are asked first.
  auto byNameIsOwn = [&](const LocalWorkload* w) {
    if (!w->deleted || w == joined) return true;
    const OptionalTime& deletion = w->obj->meta.deletionTimestamp;
    return deletion && m.creationTimestamp != SystemTime{} && m.creationTimestamp < *deletion;
  };
  LocalWorkload* deletedByName = nullptr;
  if (const SmallString* name = model::findValue(m.annotations, kWorkloadAnnotation)) {
    auto byName = c.workloadsByName.find(model::NamespacedName{m.namespace_, *name});
    if (byName != c.workloadsByName.end()) {
      if (!(*byName)->deleted) return *byName;
      deletedByName = *byName;
    }
  }
  // Controller owner first (Pod → Job → Workload owned by that Job, or labelled with its uid):
  // the decoder lists the controller references first.
  const auto& owners = m.ownerReferences;
  for (const auto& o : owners) {
    if (auto* w = find(c.workloadsByOwner, o.uid)) return w;
  }
  // Plain pods: the Workload is owned by the Pod.
  if (auto* w = find(c.workloadsByOwner, m.uid)) return w;
  if (deletedByName != nullptr && byNameIsOwn(deletedByName)) return deletedByName;
  // Worker copies of MultiKueue Jobs may carry no owner reference to the remote Job yet: match the
  // Job by name (as the annotation's name: a deleted Workload's Job name is another Job's once
  // that Job is made again).
  for (const auto& o : owners) {
    if (o.kind != "Job") continue;
    auto byJob = c.workloadsByJobName.find(model::NamespacedName{m.namespace_, o.name});
    if (byJob != c.workloadsByJobName.end() && byNameIsOwn(*byJob)) return *byJob;
  }
  return nullptr;
}

void MilestoneEngine::State::markPreemptionScan(const std::string& cluster, std::string_view uid,
                                                const model::Workload& w) {
  if (conditionTrue(condition(w.conditions, "Preempted"))) dirtyLocals.emplace(cluster, uid);
}

void MilestoneEngine::State::markPodDirty(const PodRecord& rec) {
  const LocalWorkload* w = rec.workload;
  if (w == nullptr || w->logical == nullptr) return;
  LogicalWorkload* lw = w->logical;
  markDirty(lw->key);
  lw->lastObservedAt = std::max(lw->lastObservedAt, rec.lastObservedAt);
}

void MilestoneEngine::State::joinPod(ClusterData& c, PodEntry& pod, const model::ObjectMeta& m,
                                     std::shared_ptr<const model::ObjectMeta> kept) {
  PodRecord& rec = pod.second;
  LocalWorkload* w = resolvePod(c, m, rec.workload);
  if (rec.workload != nullptr && rec.workload != w) {
    rec.workload->pods.erase(&pod);
    if (rec.workload->logical != nullptr) markDirty(rec.workload->logical->key);
  }
  // A waiting pod has no Workload (one whose Workload gc erased has none, and waits from its
  // next event); for one that was not waiting, dropUnresolved reads the record's rare fields only.
  rec.workload = w;
  if (w == nullptr) {
    // Kept to be resolved when a Workload comes (the record keeps no annotations or owner
    // references): the metadata alone, copied once a pod event.
    c.addUnresolved(
        pod, kept != nullptr ? std::move(kept) : std::make_shared<const model::ObjectMeta>(m));
    return;
  }
  c.dropUnresolved(pod);
  w->pods.insert(&pod);
  markPodDirty(rec);
}

// The pods waiting under a key of the new Workload's (its namespace/name, its Job's, its owners'
// uids and Job uid label: what indexWorkload put it under) are retried; no other pod can resolve
// to it.
void MilestoneEngine::State::retryUnresolvedPods(ClusterData& c, const LocalWorkload& l) {
  if (c.unresolvedCount == 0) return;
  std::vector<PodEntry*> waiting;
  auto collect = [&](uint64_t key) {
    for (auto it = c.unresolvedByKey.lower_bound({key, nullptr});
         it != c.unresolvedByKey.end() && it->first == key; ++it)
      waiting.push_back(it->second);
  };
  const model::NamespacedName name = workloadName(&l);
  collect(resolvingKey('n', name.ns, name.name));
  const model::NamespacedName job = workloadJobName(&l);
  if (!job.name.empty()) collect(resolvingKey('j', job.ns, job.name));
  for (const auto& k : l.ownerKeys) collect(resolvingKey('o', k));
  std::sort(waiting.begin(), waiting.end());
  waiting.erase(std::unique(waiting.begin(), waiting.end()), waiting.end());
  for (PodEntry* pod : waiting) {
    // The pod as last seen (a copy of the pointer: joining lets the record's go).
    std::shared_ptr<const model::ObjectMeta> meta = pod->second.rare->unresolved;
    joinPod(c, *pod, *meta, meta);
  }
}

void MilestoneEngine::State::attachExternal(ClusterData& c, PodRecord& rec, std::string_view uid) {
  if (!config.usefulWork.external) return;
  auto ext = external.find(c.config.name);
  if (ext == external.end()) return;
  auto attach = [&](std::string_view key, bool byName) {
    auto it = ext->second.find(key);
    if (it == ext->second.end()) return;
    // A signal naming the pod by name from before it was created is about an earlier pod of
    // that name (onUsefulWorkSignal).
    if (byName && it->second.first.at < rec.created) return;
    if (!rec.external() || it->second.first.at < rec.external()->at) {
      RarePodFields& rare = rec.rareFields();
      rare.external = it->second.first;
      rare.externalObservedAt = it->second.second;
    }
  };
  attach(uid, false);
  attach(nsName(rec.ns, rec.name), true);
}

void MilestoneEngine::State::onPod(ClusterData& c, model::EventType type, const model::Pod& p,
                                   SystemTime at) {
  // The inventory keeps a record of its own, as the engine does: the decoded pod goes when its
  // event has been taken (a pod no Workload resolves yet keeps a copy of its metadata).
  if (!inv.onPod(c.config.name, type, p)) {
    ++stats.rejectedInventoryObjects;
    return;
  }
  if (p.meta.uid.empty()) {
    ++stats.ignoredObjects;
    return;
  }
  auto it = c.pods.find(model::UidKey::Probe(p.meta.uid));
  const bool inserted = it == c.pods.end();
  if (inserted) it = c.pods.try_emplace(model::UidKey(p.meta.uid)).first;
  PodRecord& rec = it->second;
  if (!inserted && podName(&*it) != model::namespacedName(p.meta)) {
    // A uid under another name (hostile input): out of the name index before its name goes.
    unindex(c.podsByName, podName(&*it), &*it);
  }
  rec.setFacts(p, config.crashLoopRestarts);
  rec.lastObservedAt = std::max(rec.lastObservedAt, at);
  if (c.setPodDeleted(rec, type == model::EventType::Deleted, at)) {
    tombstones.push({rec.deletedAt, c.config.name, p.meta.uid, true});
  }
  indexUnder(c.podsByName, &*it);

  PodSignals sig = readPodSignals(p, config.usefulWork);
  const std::optional<UsefulWorkSignal> held = rec.firstWork();
  bool changed =
      sig.firstWork.has_value() != held.has_value() ||
      (sig.firstWork && (sig.firstWork->at != held->at || sig.firstWork->kind != held->kind));
  if (changed && sig.firstWork) rec.signalObservedAt = at;
  // Invalid values are counted once per pod and value, so a relist does not count them again.
  if (!sig.invalidFirstWork.empty() || !sig.invalidCheckpoint.empty()) {
    RarePodFields& rare = rec.rareFields();
    if (!sig.invalidFirstWork.empty() && sig.invalidFirstWork != rare.lastInvalidFirstWork) {
      ++stats.invalidSignals;
    }
    if (!sig.invalidCheckpoint.empty() && sig.invalidCheckpoint != rare.lastInvalidCheckpoint) {
      ++stats.invalidSignals;
    }
    rare.lastInvalidFirstWork = std::move(sig.invalidFirstWork);
    rare.lastInvalidCheckpoint = std::move(sig.invalidCheckpoint);
  } else if (rec.rare) {
    rec.rare->lastInvalidFirstWork.clear();
    rec.rare->lastInvalidCheckpoint.clear();
    rec.dropRareIfEmpty();
  }
  rec.setFirstWork(sig.firstWork);
  rec.signals.lastCheckpoint = sig.lastCheckpoint;
  if (!rec.scheduledObservedAt() && conditionTrue(condition(p.conditions, "PodScheduled"))) {
    rec.setScheduledObservedAt(at);
  }
  if (!rec.runningObservedAt()) {
    for (const auto& cs : p.containers) {
      if (!cs.init && cs.startedAt) {
        rec.setRunningObservedAt(at);
        break;
      }
    }
  }
  attachExternal(c, rec, p.meta.uid);
  // Generated claims name their template: learn its devices from claims already seen (the
  // pod's status names the claim made for each of its template claims).
  for (const auto& pc : p.claims) {
    if (pc.generatedClaimName.empty() || pc.resourceClaimTemplateName.empty()) continue;
    if (auto claim = inv.findClaim(c.config.name, p.meta.namespace_, pc.generatedClaimName)) {
      learnTemplate(p.meta.namespace_, pc.resourceClaimTemplateName, claim->requests);
    }
  }
  joinPod(c, *it, p.meta);
}

void MilestoneEngine::State::deletePodUnknown(ClusterData& c, PodEntry& pod, std::string_view uid,
                                              SystemTime at) {
  PodRecord& rec = pod.second;
  inv.erasePod(c.config.name, rec.ns, rec.name);
  rec.lastObservedAt = std::max(rec.lastObservedAt, at);
  if (c.setPodDeleted(rec, true, at)) {
    tombstones.push({rec.deletedAt, c.config.name, SmallString(uid), true});
  }
  // Its Workload (if any) looks at its pods again; an unresolved pod stays so until gc.
  markPodDirty(rec);
}

// --- DRA claims, slices, nodes ----------------------------------------------------------------

// A claim generated for a pod from a ResourceClaimTemplate carries the pod claim name and a
// controller reference to the pod; the pod's spec names the template. The claim's requests then
// say which DeviceClass (and how many devices) the template asks for.
void MilestoneEngine::State::learnTemplate(ClusterData& c, const model::ResourceClaim& claim) {
  const SmallString* podClaim = model::findValue(claim.meta.annotations, kPodClaimNameAnnotation);
  if (podClaim == nullptr) return;
  for (const auto& o : claim.meta.ownerReferences) {
    if (o.kind != "Pod") continue;
    auto pod = c.pods.find(model::UidKey::Probe(o.uid));
    if (pod == c.pods.end()) continue;
    for (const auto& pc : pod->second.claims) {
      if (std::string_view(pc.name) != std::string_view(*podClaim) || pc.templateName.empty()) {
        continue;
      }
      learnTemplate(claim.meta.namespace_, pc.templateName,
                    {claim.requests.data(), claim.requests.size()});
    }
  }
}

void MilestoneEngine::State::learnTemplate(std::string_view ns, std::string_view templateName,
                                           std::span<const model::DeviceRequest> requests) {
  // What a template asks for: its requests of a DeviceClass for a count of devices, each kept as
  // class, count and selectors alone.
  auto isNeed = [](const model::DeviceRequest& r) {
    return !r.allocationModeAll && !r.deviceClassName.empty();
  };
  auto it = templates.find(TemplateName(ns, templateName));
  if (it != templates.end()) {
    // Known already (every event of a pod with a generated claim gets here): nothing is built
    // when its needs are the same.
    const std::vector<model::DeviceRequest>& known = it->second;
    size_t i = 0;
    bool same = true;
    for (const auto& r : requests) {
      if (!isNeed(r)) continue;
      if (i == known.size() || known[i].deviceClassName != r.deviceClassName ||
          known[i].count != r.count || known[i].selectors != r.selectors) {
        same = false;
        break;
      }
      ++i;
    }
    if (same && i == known.size()) return;
  }
  std::vector<model::DeviceRequest> needs;
  for (const auto& r : requests) {
    if (!isNeed(r)) continue;
    model::DeviceRequest need;
    need.deviceClassName = r.deviceClassName;
    need.count = r.count;
    need.selectors = r.selectors;
    needs.push_back(std::move(need));
  }
  // A template first seen asking for no device is still known (its Workloads need nothing of it).
  if (it == templates.end()) {
    auto key = std::make_pair(std::string(ns), std::string(templateName));
    it = templates.emplace(std::move(key), std::vector<model::DeviceRequest>()).first;
  }
  if (it->second != needs) {
    it->second = std::move(needs);
    devicesDirty = true;
  }
  if (templates.size() > 2 * templatesAfterSweep + kTemplateSweepSlack) {
    sweepTemplates(TemplateName(ns, templateName));
  }
}

// Forgets the learned templates that no tracked Workload's podsets and no tracked pod's claims
// name (deleted ones still tracked count: they may come back through a relist), but `keep`, the
// one being learned. A Workload of a forgotten template that comes later learns it again from
// its pods' claims, as the first did.
void MilestoneEngine::State::sweepTemplates(TemplateName keep) {
  std::set<TemplateName> named{keep};
  for (const auto& [name, c] : clusters) {
    for (const auto& [uid, l] : c.workloads) {
      const model::Workload& w = l.obj;
      for (const auto& ps : w.podSets) {
        for (const auto& pc : ps.claims) {
          if (!pc.resourceClaimTemplateName.empty()) {
            named.insert(TemplateName(w.meta.namespace_, pc.resourceClaimTemplateName));
          }
        }
      }
    }
    for (const auto& [uid, rec] : c.pods) {
      for (const auto& pc : rec.claims) {
        if (!pc.templateName.empty()) named.insert(TemplateName(rec.ns, pc.templateName));
      }
    }
  }
  for (auto it = templates.begin(); it != templates.end();) {
    const bool isNamed = named.count(TemplateName(it->first.first, it->first.second)) != 0;
    it = isNamed ? std::next(it) : templates.erase(it);
  }
  templatesAfterSweep = templates.size();
}

void MilestoneEngine::State::onClaim(ClusterData& c, model::EventType type,
                                     const model::ResourceClaim& claim, SystemTime at,
                                     const std::shared_ptr<const model::Object>& holder) {
  (void)at;
  (void)holder;
  if (!inv.onClaim(c.config.name, type, claim)) {
    ++stats.rejectedInventoryObjects;
    return;
  }
  // The inventory keeps a record of the claim; the engine reads it from there.
  if (type != model::EventType::Deleted) learnTemplate(c, claim);
  // Allocation changes what the consuming pods hold.
  for (const auto& uid : claim.reservedForPods) {
    auto pod = c.pods.find(model::UidKey::Probe(uid));
    if (pod != c.pods.end()) markPodDirty(pod->second);
  }
  for (const auto& o : claim.meta.ownerReferences) {
    auto pod = c.pods.find(model::UidKey::Probe(o.uid));
    if (pod != c.pods.end()) markPodDirty(pod->second);
  }
}

void MilestoneEngine::State::onSlice(ClusterData& c, model::EventType type,
                                     const model::ResourceSlice& s, SystemTime at,
                                     const std::shared_ptr<const model::Object>& holder) {
  // The inventory keeps the slice shared with the reflector's object (`s` lives in `holder`).
  std::shared_ptr<const model::ResourceSlice> shared(holder, &s);
  if (!inv.onSlice(c.config.name, type, std::move(shared), at)) {
    ++stats.rejectedInventoryObjects;
    return;
  }
  // ResourceSlices carry no transition time; a slice that appears is published at its creation
  // (which makes a pool whole), anything else takes effect when seen.
  SystemTime t = at;
  if (type == model::EventType::Added && s.meta.creationTimestamp != SystemTime{} &&
      s.meta.creationTimestamp <= at) {
    t = s.meta.creationTimestamp;
  } else if (type == model::EventType::Deleted && s.meta.deletionTimestamp &&
             *s.meta.deletionTimestamp <= at) {
    t = *s.meta.deletionTimestamp;
  }
  if (!c.inventoryKnownSince) c.inventoryKnownSince = at;
  c.usableEventTime = c.usableDirty ? std::max(c.usableEventTime, t) : t;
  c.usableDirty = true;
}

void MilestoneEngine::State::onNode(ClusterData& c, model::EventType type, const model::Node& n,
                                    SystemTime at) {
  if (!inv.onNode(c.config.name, type, n)) {
    ++stats.rejectedInventoryObjects;
    return;
  }
  SystemTime t = at;
  const model::BriefCondition* ready = condition(n.conditions, "Ready");
  bool isReady = type != model::EventType::Deleted && conditionTrue(ready);
  const std::string name = n.meta.name.str();
  auto prev = c.nodeReady.find(name);
  if (prev != c.nodeReady.end() && prev->second != isReady && ready != nullptr &&
      ready->lastTransitionTime && *ready->lastTransitionTime <= at) {
    t = *ready->lastTransitionTime;  // readiness changed: the condition says when
  } else if (prev == c.nodeReady.end() && type == model::EventType::Added &&
             n.meta.creationTimestamp != SystemTime{} && n.meta.creationTimestamp <= at) {
    t = std::max(n.meta.creationTimestamp,
                 ready != nullptr && ready->lastTransitionTime && *ready->lastTransitionTime <= at
                     ? *ready->lastTransitionTime
                     : n.meta.creationTimestamp);
  }
  if (type == model::EventType::Deleted) {
    c.nodeReady.erase(name);
  } else {
    c.nodeReady[name] = isReady;
  }
  if (!c.inventoryKnownSince) c.inventoryKnownSince = at;
  c.usableEventTime = c.usableDirty ? std::max(c.usableEventTime, t) : t;
  c.usableDirty = true;
}

void MilestoneEngine::State::onQueueObject(ClusterData& c, model::EventType type,
                                           const model::Object& o) {
  bool del = type == model::EventType::Deleted;
  if (const auto* cq = std::get_if<model::ClusterQueue>(&o)) {
    if (del) c.clusterQueues.erase(cq->meta.name.str());
    else c.clusterQueues[cq->meta.name.str()] = *cq;
  } else if (const auto* ac = std::get_if<model::AdmissionCheck>(&o)) {
    if (del) c.admissionChecks.erase(ac->meta.name.str());
    else c.admissionChecks[ac->meta.name.str()] = *ac;
  } else if (const auto* mc = std::get_if<model::MultiKueueConfig>(&o)) {
    if (del) c.multiKueueConfigs.erase(mc->meta.name.str());
    else c.multiKueueConfigs[mc->meta.name.str()] = *mc;
  }
  candidatesDirty = true;
}

// --- flush / advance --------------------------------------------------------------------------

void MilestoneEngine::State::flush() {
  if (candidatesDirty) {
    for (auto& [key, lw] : logical) {
      if (lw.multikueue) markDirty(key);
    }
    candidatesDirty = false;
  }
  if (devicesDirty) {
    for (auto& [key, lw] : logical) {
      if (lw.devicesUnresolved) markDirty(key);
    }
    devicesDirty = false;
  }
  for (auto& [name, c] : clusters) refreshUsable(c);
  // Settling one workload never dirties another, but a reclaim update may: loop until quiet.
  for (int round = 0; round < 4 && (!dirty.empty() || !dirtyLocals.empty()); ++round) {
    std::set<std::string, std::less<>> keys;
    keys.swap(dirty);
    // Each key goes once its workload is settled, not all at the end: the keys of a sync were
    // made among the objects' own blocks, and what the settling makes fills their places.
    while (!keys.empty()) {
      const auto key = keys.extract(keys.begin());
      auto it = logical.find(key.value());
      if (it != logical.end()) settle(it->second);
      handOverIfFull();
    }
    std::set<std::pair<std::string, std::string>> locals;
    locals.swap(dirtyLocals);
    for (const auto& [cl, uid] : locals) {
      if (LocalWorkload* l = local(cl, uid)) scanPreemption(*l);
      handOverIfFull();
    }
    resolveVictims();
  }
}

// Visits only the tombstones that expired: the cost follows the deletions, not the estate.
void MilestoneEngine::State::gc(SystemTime now) {
  const SystemTime cutoff = now - config.deletedRetention;
  while (!tombstones.empty() && tombstones.top().deletedAt < cutoff) {
    Tombstone t = tombstones.top();
    tombstones.pop();
    auto cit = clusters.find(t.cluster);
    if (cit == clusters.end()) continue;
    ClusterData& c = cit->second;
    if (t.pod) {
      auto it = c.pods.find(model::UidKey::Probe(t.uid));
      // Re-added (or already collected) since: not this tombstone's business.
      if (it == c.pods.end() || !it->second.deleted || !(it->second.deletedAt < cutoff)) continue;
      if (it->second.workload != nullptr) it->second.workload->pods.erase(&*it);
      c.dropUnresolved(*it);
      unindex(c.podsByName, podName(&*it), &*it);
      c.pods.erase(it);
      continue;
    }
    auto it = c.workloads.find(t.uid);
    if (it == c.workloads.end()) continue;
    const LocalWorkload& l = it->second;
    if (!(l.deleted && l.deletedAt < cutoff)) continue;
    // Only the entries that still name this Workload (a later one may have taken a key).
    unindex(c.workloadsByName, workloadName(&l), &l);
    unindex(c.workloadsByJobName, workloadJobName(&l), &l);
    for (const auto& k : l.ownerKeys) {
      auto idx = c.workloadsByOwner.find(k);
      if (idx != c.workloadsByOwner.end() && idx->second == &l) c.workloadsByOwner.erase(idx);
    }
    if (LogicalWorkload* lw = l.logical) {
      // Before the Workload (and the key its entry views) is erased.
      lw->locals.erase({std::string_view(c.config.name), std::string_view(it->first)});
      // The logical workload goes with its home Workload; its intervals stay in the timeline
      // (they are history).
      if (!l.remoteCopy) {
        auto entry = logical.find(lw->key);
        addRates(*lw, -1);
        if (auto w = stuckWatch.find(entry->first); w != stuckWatch.end()) stuckWatch.erase(w);
        markPart(entry->first);
        // Copies left on workers still name it: their pointer goes with it (they stay linked).
        for (const auto& [cl, uid] : lw->locals) {
          if (LocalWorkload* other = local(cl, uid)) other->logical = nullptr;
        }
        logical.erase(entry);
      }
    }
    // Its pods are joined to nothing now (their next event resolves them again).
    for (PodEntry* p : l.pods) p->second.workload = nullptr;
    c.workloads.erase(it);
  }
  // External signals for pods that never appeared.
  for (auto& [cl, sigs] : external) {
    for (auto it = sigs.begin(); it != sigs.end();) {
      it = it->second.second < cutoff ? sigs.erase(it) : std::next(it);
    }
  }
}

// ---------------------------------------------------------------------------------------------

MilestoneEngine::MilestoneEngine(EngineConfig config)
    : s_(std::make_unique<State>(std::move(config))) {}

MilestoneEngine::~MilestoneEngine() = default;
MilestoneEngine::MilestoneEngine(MilestoneEngine&&) noexcept = default;
MilestoneEngine& MilestoneEngine::operator=(MilestoneEngine&&) noexcept = default;

void MilestoneEngine::onObject(std::string_view cluster, model::EventType type,
                               const model::Object& object, SystemTime observedAt) {
  if (type == model::EventType::Bookmark || type == model::EventType::Error) return;
  onObject(cluster, type, std::make_shared<const model::Object>(object), observedAt);
}

void MilestoneEngine::onObject(std::string_view cluster, model::EventType type,
                               std::shared_ptr<const model::Object> holder, SystemTime observedAt) {
  if (type == model::EventType::Bookmark || type == model::EventType::Error || !holder) return;
  const model::Object& object = *holder;
  ClusterData* c = s_->cluster(cluster);
  if (c == nullptr) {
    ++s_->stats.unknownCluster;
    return;
  }
  if (!c->firstSeen || observedAt < *c->firstSeen) c->firstSeen = observedAt;
  const ClusterRole role = c->config.role;
  const bool management = role == ClusterRole::Management;
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, model::Workload>) {
          s_->onWorkload(*c, type, o, observedAt, holder);
        } else if constexpr (std::is_same_v<T, model::MultiKueueCluster>) {
          if (management) s_->onMultiKueueCluster(*c, type, o, observedAt);
          else ++s_->stats.ignoredObjects;
        } else if constexpr (std::is_same_v<T, model::ClusterQueue> ||
                             std::is_same_v<T, model::AdmissionCheck> ||
                             std::is_same_v<T, model::MultiKueueConfig>) {
          s_->onQueueObject(*c, type, object);
        } else if constexpr (std::is_same_v<T, model::Pod>) {
          s_->onPod(*c, type, o, observedAt);
        } else if constexpr (std::is_same_v<T, model::ResourceClaim>) {
          s_->onClaim(*c, type, o, observedAt, holder);
        } else if constexpr (std::is_same_v<T, model::ResourceSlice>) {
          s_->onSlice(*c, type, o, observedAt, holder);
        } else if constexpr (std::is_same_v<T, model::Node>) {
          s_->onNode(*c, type, o, observedAt);
        }
      },
      object);
}

void MilestoneEngine::onDeletedUnknown(std::string_view cluster, model::Kind kind,
                                       std::string_view uid, uint64_t nameHash,
                                       SystemTime observedAt) {
  ClusterData* c = s_->cluster(cluster);
  if (c == nullptr) {
    ++s_->stats.unknownCluster;
    return;
  }
  if (kind == model::Kind::Pod) {
    // Its record is its last state: deleted as it stands.
    auto it = c->pods.find(model::UidKey::Probe(uid));
    if (it == c->pods.end()) {
      ++s_->stats.ignoredObjects;
      return;
    }
    s_->deletePodUnknown(*c, *it, uid, observedAt);
    return;
  }
  if (kind == model::Kind::ResourceClaim) {
    // The inventory's record is its last state; the pods it named look at their devices again.
    auto pods = s_->inv.eraseClaim(cluster, uid, nameHash);
    if (!pods) {
      ++s_->stats.ignoredObjects;
      return;
    }
    for (const auto& uidKey : *pods) {
      auto pod = c->pods.find(uidKey);
      if (pod != c->pods.end()) s_->markPodDirty(pod->second);
    }
    return;
  }
  // The last state seen, delivered deleted (the holder copied first: it is replaced in place).
  std::shared_ptr<const model::Object> last;
  if (kind == model::Kind::Workload) {
    if (auto it = c->workloads.find(uid); it != c->workloads.end()) last = it->second.obj.holder();
  }
  if (last == nullptr) {
    ++s_->stats.ignoredObjects;
    return;
  }
  onObject(cluster, model::EventType::Deleted, std::move(last), observedAt);
}

void MilestoneEngine::onConnection(std::string_view cluster, bool connected, SystemTime eventTime,
                                   SystemTime observedAt) {
  ClusterData* c = s_->cluster(cluster);
  if (c == nullptr) {
    ++s_->stats.unknownCluster;
    return;
  }
  s_->onProbe(*c, connected, eventTime, observedAt);
}

void MilestoneEngine::onWatchesCurrent(std::string_view cluster, bool current) {
  ClusterData* c = s_->cluster(cluster);
  if (c == nullptr) {
    ++s_->stats.unknownCluster;
    return;
  }
  // Nothing to settle again: what was held (recovering incidents, pending reclaims, stuck
  // verdicts in stuckWatch) is looked at by every advance, and relisted objects mark their own
  // workloads.
  c->watchesCurrent = current;
}

void MilestoneEngine::onUsefulWorkSignal(std::string_view cluster, std::string_view pod,
                                         SystemTime at, std::string signal, SystemTime observedAt) {
  ClusterData* c = s_->cluster(cluster);
  if (c == nullptr) {
    ++s_->stats.unknownCluster;
    return;
  }
  if (!s_->config.usefulWork.external) return;
  if (signal.empty()) signal = std::string(signalKindName(SignalKind::External));
  // "namespace/name" (the pod last seen under that name), else a uid.
  PodEntry* entry = nullptr;
  const size_t slash = pod.find('/');
  if (slash != std::string_view::npos) {
    auto byName =
        c->podsByName.find(model::NamespacedName{pod.substr(0, slash), pod.substr(slash + 1)});
    if (byName != c->podsByName.end()) entry = *byName;
  }
  if (entry == nullptr) {
    auto it = c->pods.find(model::UidKey::Probe(pod));
    if (it != c->pods.end()) entry = &*it;
  }
  PodRecord* rec = entry != nullptr ? &entry->second : nullptr;
  // The earliest signal for a pod is kept (for pods not seen yet, until deletedRetention). One
  // kept under a name from before the pod of that name was created was about an earlier pod of
  // that name (StatefulSet, JobSet and LeaderWorkerSet pods keep their names): this one takes
  // its place.
  auto& slot = s_->external[c->config.name][std::string(pod)];
  const bool earlierPod = slash != std::string_view::npos && rec != nullptr &&
                          !slot.first.name.empty() && slot.first.at < rec->created;
  if (slot.first.name.empty() || at < slot.first.at || earlierPod) {
    slot = {UsefulWorkSignal{SignalKind::External, at, std::move(signal)}, observedAt};
  }
  if (rec == nullptr) {
    ++s_->stats.unmatchedSignals;
    return;
  }
  s_->attachExternal(*c, *rec, entry->first.str());
  s_->markPodDirty(*rec);
}

void MilestoneEngine::restoreIncident(const IncidentRecord& incident) {
  if (incident.outcome != IncidentOutcome::Open && incident.outcome != IncidentOutcome::Recovering) {
    return;
  }
  if (s_->incidents.count(incident.id) != 0 || s_->cluster(incident.cluster) == nullptr) return;
  Incident in;
  in.rec = incident;
  if (incident.source == IncidentSource::MultiKueue) {
    for (const auto& [name, c] : s_->clusters) {
      if (c.config.role == ClusterRole::Management) {
        in.managementCluster = name;
        break;
      }
    }
    s_->openMkIncident[incident.cluster] = incident.id;
    if (incident.disconnectedAt || incident.reconnectedAt) {
      s_->disconnected[incident.cluster].emplace_back(
          incident.disconnectedAt.value_or(*incident.reconnectedAt), incident.reconnectedAt);
    }
  } else {
    s_->clusters[incident.cluster].openProbeIncident = incident.id;
  }
  s_->incidents.emplace(incident.id, std::move(in));
}

void MilestoneEngine::restoreReclaim(const ReclaimRecord& reclaim) { s_->restoreReclaim(reclaim); }

void MilestoneEngine::restoreWorkerConnection(const WorkerConnectionRecord& connection) {
  if (!connection.known || s_->mkc.count(connection.worker) != 0) return;
  // Only a configured worker has a MultiKueueCluster the live view follows (mkcToCluster), and
  // only its records survive the daemon's start (removeUnconfiguredWorkerConnections): a record
  // of a cluster since configured standalone or as a manager is no view of anything.
  const ClusterData* c = s_->cluster(connection.worker);
  if (c == nullptr || c->config.role != ClusterRole::Worker) return;
  MkcState& st = s_->mkc[connection.worker];
  st.status = connection.active ? model::ConditionStatus::True : model::ConditionStatus::False;
  st.since = connection.since;
  st.reason = connection.reason;
  st.managementCluster = connection.managementCluster;
}

void MilestoneEngine::restoreCycle(const std::vector<MilestoneRecord>& milestones,
                                   std::optional<SystemTime> workSince) {
  s_->restoreCycle(milestones, workSince);
}

Outputs MilestoneEngine::advance(SystemTime now) {
  State& s = *s_;
  if (s.lastAdvance && now < *s.lastAdvance) now = *s.lastAdvance;
  s.inv.advanceTo(now);
  s.integrateRates(s.lastAdvance.value_or(now), now);
  s.flush();
  s.classifyStuck(now);
  s.flush();  // stuck classification may exclude devices (intervals change)
  s.evaluateIncidents(now);
  s.updateReclaims(now);
  s.flush();
  s.integrateStranded(s.lastAdvance.value_or(now), now);
  s.lastAdvance = now;
  s.prune(now);
  s.gc(now);
  s.refreshWorkloadParts();  // bounded by what changed since the last advance or snapshot
  Outputs out;
  std::swap(out, s.produced);
  return out;
}

void MilestoneEngine::advance(SystemTime now, const OutputSink& sink) {
  State& s = *s_;
  struct Detach {
    State& s;
    ~Detach() { s.sink = nullptr; }
  } detach{s};
  s.sink = &sink;
  Outputs rest = advance(now);
  if (!rest.empty()) sink(std::move(rest));
}

Snapshot MilestoneEngine::snapshot() const { return s_->snapshot(); }

const inventory::Inventory& MilestoneEngine::inventory() const { return s_->inv; }

const EngineConfig& MilestoneEngine::config() const { return s_->config; }

}  // namespace firstwork::engine
