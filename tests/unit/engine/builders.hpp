#pragma once
// Small builders for engine tests: objects shaped like the real ones (field names and strings as
// Kueue / Kubernetes write them, see /work/shared/reference/k8s-objects.md), plus a harness that
// feeds them through a MilestoneEngine and keeps every output.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "firstwork/core/rfc3339.hpp"
#include "firstwork/engine/milestone_engine.hpp"
#include "firstwork/model/object.hpp"

namespace firstwork::testing {

using namespace std::chrono_literals;
using engine::Milestone;

/// 2026-05-01T10:00:00Z, the origin of every test timeline.
inline SystemTime t0() { return parseRfc3339("2026-05-01T10:00:00Z").value(); }
inline SystemTime at(std::chrono::seconds s) { return t0() + s; }
/// Unix milliseconds, as in cycle and incident ids.
inline int64_t unixMs(SystemTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

inline model::Condition cond(std::string type, bool status, std::string reason, SystemTime t,
                             std::string message = {}) {
  model::Condition c;
  c.type = std::move(type);
  c.status = status ? model::ConditionStatus::True : model::ConditionStatus::False;
  c.reason = std::move(reason);
  c.message = std::move(message);
  c.lastTransitionTime = t;
  return c;
}

/// A Pod's or a Node's condition: `c` without its message (model::BriefCondition, change 89).
inline model::BriefCondition brief(model::Condition c) {
  return {std::move(c.type), c.status, std::move(c.reason), c.lastTransitionTime};
}

template <typename C>
void setCondition(CompactVector<C>& cs, C c) {
  for (auto& x : cs) {
    if (x.type == c.type) {
      x = std::move(c);
      return;
    }
  }
  cs.push_back(std::move(c));
}

inline void setValue(model::KeyValues& kv, std::string k, std::string v) {
  for (auto& [key, value] : kv) {
    if (key == k) {
      value = std::move(v);
      return;
    }
  }
  kv.emplace_back(std::move(k), std::move(v));
}

/// The Kueue v0.15+ preemption message (reference §1.5).
inline std::string preemptionMessage(const std::string& preemptorUid, const std::string& reasonText,
                                     const std::string& preemptorPath = "/org/cq-a",
                                     const std::string& preempteePath = "/org/cq-b") {
  return "Preempted to accommodate a workload (UID: " + preemptorUid + ", JobUID: job-" +
         preemptorUid + ") due to " + reasonText + "; preemptor path: " + preemptorPath +
         "; preemptee path: " + preempteePath;
}

/// A kueue.x-k8s.io/v1beta2 Workload owned by a batch Job (name `job-<name>-<hash>` like Kueue's).
class WorkloadBuilder {
 public:
  WorkloadBuilder(std::string ns, std::string name, std::string uid, SystemTime created) {
    w_.meta.namespace_ = std::move(ns);
    w_.meta.name = std::move(name);
    w_.meta.uid = std::move(uid);
    w_.meta.creationTimestamp = created;
    w_.queueName = "lq";
  }
  WorkloadBuilder& queue(std::string lq) {
    w_.queueName = std::move(lq);
    return *this;
  }
  /// podSets[] entry with `count` pods each requesting `perPod` devices of `resource`.
  WorkloadBuilder& podSet(int32_t count, int64_t perPod, std::string resource = "nvidia.com/gpu",
                          std::string name = "main") {
    model::PodSet ps;
    ps.name = std::move(name);
    ps.count = count;
    if (perPod > 0) ps.perPodRequests.emplace_back(std::move(resource), perPod * 1000);
    w_.podSets.push_back(std::move(ps));
    return *this;
  }
  /// A podset whose pods each get a claim from ResourceClaimTemplate `tmpl`.
  WorkloadBuilder& claimPodSet(int32_t count, std::string tmpl, std::string name = "main") {
    model::PodSet ps;
    ps.name = std::move(name);
    ps.count = count;
    ps.claims.push_back({"gpu", std::move(tmpl), ""});
    w_.podSets.push_back(std::move(ps));
    return *this;
  }
  WorkloadBuilder& ownedByJob(const std::string& job, const std::string& jobUid) {
    w_.meta.ownerReferences.push_back({"Job", job, jobUid});
    setValue(w_.meta.labels, "kueue.x-k8s.io/job-uid", jobUid);
    return *this;
  }
  WorkloadBuilder& ownedByPod(const std::string& pod, const std::string& podUid) {
    w_.meta.ownerReferences.push_back({"Pod", pod, podUid});
    return *this;
  }
  /// Worker copy made by MultiKueue: origin label, no job-uid label (reference §1.6).
  WorkloadBuilder& remoteCopy() {
    setValue(w_.meta.labels, "kueue.x-k8s.io/multikueue-origin", "multikueue");
    w_.meta.labels.erase(std::remove_if(w_.meta.labels.begin(), w_.meta.labels.end(),
                                        [](const auto& kv) { return kv.first == "kueue.x-k8s.io/job-uid"; }),
                         w_.meta.labels.end());
    return *this;
  }
  WorkloadBuilder& condition(model::Condition c) {
    setCondition(w_.conditions, std::move(c));
    return *this;
  }
  WorkloadBuilder& pending(SystemTime t, std::string reason = "WaitingForQuota") {
    return condition(cond("QuotaReserved", false, std::move(reason), t,
                          "couldn't assign flavors to pod set main: insufficient unused quota"));
  }
  /// QuotaReserved=True with status.admission (podSetAssignments mirror the podsets).
  WorkloadBuilder& reserved(std::string cq, SystemTime t) {
    auto& admission = w_.admission.mut();
    admission.clusterQueue = cq;
    admission.podSetAssignments.clear();
    for (const auto& ps : w_.podSets) {
      model::PodSetAssignment a;
      a.name = ps.name;
      a.count = ps.count;
      admission.podSetAssignments.push_back(std::move(a));
    }
    return condition(cond("QuotaReserved", true, "QuotaReserved", t, "Quota reserved in ClusterQueue " + cq));
  }
  WorkloadBuilder& admitted(SystemTime t) {
    return condition(cond("Admitted", true, "Admitted", t, "The workload is admitted"));
  }
  /// MultiKueue admission check state (name `mk`).
  WorkloadBuilder& check(model::CheckState state, SystemTime t, std::string message = "",
                         std::string name = "mk") {
    for (auto& acs : w_.admissionChecks) {
      if (acs.name == name) {
        acs.state = state;
        acs.lastTransitionTime = t;
        acs.message = std::move(message);
        return *this;
      }
    }
    w_.admissionChecks.push_back({std::move(name), state, t, std::move(message)});
    return *this;
  }
  /// The worker admitted it: AC Ready with Kueue's v0.19 message, status.clusterName, Admitted.
  WorkloadBuilder& dispatchedTo(const std::string& worker, SystemTime t) {
    w_.admission.mut().clusterName = worker;
    if (w_.rareStatus.held()) w_.rareStatus.mut().nominatedClusterNames.clear();
    check(model::CheckState::Ready, t, "The workload was admitted on \"" + worker + "\"");
    return admitted(t);
  }
  WorkloadBuilder& nominated(std::vector<std::string> workers) {
    w_.rareStatus.mut().nominatedClusterNames = std::move(workers);
    return *this;
  }
  WorkloadBuilder& evicted(std::string reason, SystemTime t, std::string message = {}) {
    return condition(cond("Evicted", true, std::move(reason), t, std::move(message)));
  }
  WorkloadBuilder& preempted(std::string reason, SystemTime t, const std::string& message) {
    evicted("Preempted", t, message);
    return condition(cond("Preempted", true, std::move(reason), t, message));
  }
  /// Phase 2 of an eviction: admission cleared, QuotaReserved=False, Admitted=False, Requeued.
  WorkloadBuilder& released(SystemTime t, std::string requeueReason = "Preempted") {
    w_.admission.reset();
    condition(cond("QuotaReserved", false, "PendingEvaluation", t));
    condition(cond("Admitted", false, "NoReservation", t, "The workload has no reservation"));
    if (!requeueReason.empty()) condition(cond("Requeued", true, std::move(requeueReason), t));
    return *this;
  }
  WorkloadBuilder& finished(SystemTime t, std::string reason = "Succeeded") {
    return condition(cond("Finished", true, std::move(reason), t, "Job finished successfully"));
  }
  WorkloadBuilder& active(bool a) {
    w_.active = a;
    return *this;
  }
  const model::Workload& get() const { return w_; }
  model::Workload& mutate() { return w_; }
  model::Object obj() const { return w_; }

 private:
  model::Workload w_;
};

/// A core/v1 Pod of a Job (ownerReference + batch.kubernetes.io/job-name label).
class PodBuilder {
 public:
  PodBuilder(std::string ns, std::string name, std::string uid, SystemTime created) {
    p_.meta.namespace_ = std::move(ns);
    p_.meta.name = std::move(name);
    p_.meta.uid = std::move(uid);
    p_.meta.creationTimestamp = created;
    p_.phase = model::PodPhase::Pending;
    model::ContainerStatus c;
    c.name = "main";
    c.state = model::ContainerStateKind::Waiting;
    c.reason = "ContainerCreating";
    p_.containers.push_back(c);
  }
  PodBuilder& ownedByJob(const std::string& job, const std::string& jobUid) {
    p_.meta.ownerReferences.push_back({"Job", job, jobUid});
    setValue(p_.meta.labels, "batch.kubernetes.io/job-name", job);
    return *this;
  }
  PodBuilder& workloadAnnotation(const std::string& workload) {
    setValue(p_.meta.annotations, "kueue.x-k8s.io/workload", workload);
    return *this;
  }
  PodBuilder& gpus(int64_t n, std::string resource = "nvidia.com/gpu") {
    p_.requests.emplace_back(std::move(resource), n * 1000);
    return *this;
  }
  PodBuilder& scheduled(std::string node, SystemTime t) {
    p_.nodeName = std::move(node);
    setCondition(p_.conditions, brief(cond("PodScheduled", true, "", t)));
    return *this;
  }
  PodBuilder& unschedulable(SystemTime t) {
    setCondition(p_.conditions, brief(cond("PodScheduled", false, "Unschedulable", t)));
    return *this;
  }
  /// Container waiting (kubelet reason), pod Pending.
  PodBuilder& waiting(std::string reason) {
    p_.phase = model::PodPhase::Pending;
    p_.containers[0].state = model::ContainerStateKind::Waiting;
    p_.containers[0].reason = std::move(reason);
    p_.containers[0].startedAt.reset();
    return *this;
  }
  PodBuilder& running(SystemTime startedAt) {
    p_.phase = model::PodPhase::Running;
    p_.containers[0].state = model::ContainerStateKind::Running;
    p_.containers[0].reason.clear();
    p_.containers[0].startedAt = startedAt;
    p_.containers[0].ready = true;
    return *this;
  }
  PodBuilder& restarts(int32_t n) {
    p_.containers[0].restartCount = n;
    return *this;
  }
  PodBuilder& succeeded(SystemTime finishedAt) {
    p_.phase = model::PodPhase::Succeeded;
    p_.containers[0].state = model::ContainerStateKind::Terminated;
    p_.containers[0].reason = "Completed";
    p_.containers[0].finishedAt = finishedAt;
    return *this;
  }
  PodBuilder& ready(SystemTime t) {
    setCondition(p_.conditions, brief(cond("Ready", true, "", t)));
    return *this;
  }
  PodBuilder& condition(model::Condition c) {
    setCondition(p_.conditions, brief(std::move(c)));
    return *this;
  }
  PodBuilder& annotation(std::string k, std::string v) {
    setValue(p_.meta.annotations, std::move(k), std::move(v));
    return *this;
  }
  PodBuilder& firstWork(SystemTime t) {
    return annotation("firstwork.dev/first-work-at", formatRfc3339(t));
  }
  PodBuilder& checkpoint(SystemTime t) {
    return annotation("firstwork.dev/last-checkpoint-at", formatRfc3339(t));
  }
  PodBuilder& label(std::string k, std::string v) {
    setValue(p_.meta.labels, std::move(k), std::move(v));
    return *this;
  }
  const model::Pod& get() const { return p_; }
  model::Pod& mutate() { return p_; }
  model::Object obj() const { return p_; }

 private:
  model::Pod p_;
};

/// A Ready node advertising `gpus` of an extended resource.
inline model::Node node(std::string name, std::vector<std::pair<std::string, int64_t>> allocatable,
                        SystemTime created, bool ready = true) {
  model::Node n;
  n.meta.name = std::move(name);
  n.meta.uid = "node-uid-" + n.meta.name;
  n.meta.creationTimestamp = created;
  n.conditions.push_back(
      brief(cond("Ready", ready, ready ? "KubeletReady" : "KubeletNotReady", created)));
  for (auto& [r, v] : allocatable) {
    n.allocatable.emplace_back(r, v * 1000);
    n.capacity.emplace_back(r, v * 1000);
  }
  return n;
}

inline model::Node gpuNode(std::string name, int64_t gpus, SystemTime created) {
  return node(std::move(name), {{"nvidia.com/gpu", gpus}}, created);
}

/// A ResourceSlice of NVIDIA's DRA driver (gpu.nvidia.com) with whole GPUs (type=gpu).
inline model::ResourceSlice gpuSlice(std::string name, std::string nodeName, std::string pool,
                                     int64_t sliceCount, int devices, SystemTime created,
                                     int64_t generation = 1, int firstDevice = 0) {
  model::ResourceSlice s;
  s.meta.name = std::move(name);
  s.meta.uid = "slice-uid-" + s.meta.name;
  s.meta.creationTimestamp = created;
  s.driver = "gpu.nvidia.com";
  s.poolName = std::move(pool);
  s.poolGeneration = generation;
  s.resourceSliceCount = sliceCount;
  s.nodeName = std::move(nodeName);
  for (int i = 0; i < devices; ++i) {
    model::Device d;
    d.name = "gpu-" + std::to_string(firstDevice + i);
    d.attributes.push_back({"type", "gpu"});
    d.attributes.push_back({"productName", "NVIDIA H100 80GB HBM3"});
    s.devices.push_back(std::move(d));
  }
  return s;
}

inline model::MultiKueueCluster multiKueueCluster(std::string name, bool active, SystemTime t) {
  model::MultiKueueCluster m;
  m.meta.name = std::move(name);
  m.meta.uid = "mkc-uid-" + m.meta.name;
  if (active) {
    m.conditions.push_back(cond("Active", true, "Active", t, "Connected"));
  } else {
    m.conditions.push_back(cond("Active", false, "ClientConnectionFailed", t,
                                "dial tcp 10.0.0.7:443: connect: connection refused"));
  }
  return m;
}

inline model::ClusterQueue clusterQueue(std::string name, std::vector<std::string> checks,
                                        std::string cohort = {}, int64_t nominalGpus = 0) {
  model::ClusterQueue q;
  q.meta.name = std::move(name);
  q.meta.uid = "cq-uid-" + q.meta.name;
  q.admissionChecks = std::move(checks);
  q.cohort = std::move(cohort);
  if (nominalGpus > 0) q.nominalQuota.emplace_back("nvidia.com/gpu", nominalGpus * 1000);
  return q;
}

inline model::AdmissionCheck multiKueueCheck(std::string name, std::string config) {
  model::AdmissionCheck ac;
  ac.meta.name = std::move(name);
  ac.meta.uid = "ac-uid-" + ac.meta.name;
  ac.controllerName = "kueue.x-k8s.io/multikueue";
  ac.parametersKind = "MultiKueueConfig";
  ac.parametersName = std::move(config);
  return ac;
}

inline model::MultiKueueConfig multiKueueConfig(std::string name, std::vector<std::string> clusters) {
  model::MultiKueueConfig c;
  c.meta.name = std::move(name);
  c.meta.uid = "mkconf-uid-" + c.meta.name;
  c.clusters = std::move(clusters);
  return c;
}

inline engine::EngineConfig standaloneConfig(std::string name = "c1") {
  engine::EngineConfig cfg;
  cfg.clusters.push_back({std::move(name), engine::ClusterRole::Standalone, {}});
  return cfg;
}

inline engine::EngineConfig multiKueueConfigFor(std::vector<std::string> workers,
                                                std::string manager = "manager") {
  engine::EngineConfig cfg;
  cfg.clusters.push_back({std::move(manager), engine::ClusterRole::Management, {}});
  for (auto& w : workers) cfg.clusters.push_back({std::move(w), engine::ClusterRole::Worker, {}});
  return cfg;
}

/// Feeds objects through an engine (Added the first time an object is seen, Modified after) and
/// keeps every output.
class Harness {
 public:
  explicit Harness(engine::EngineConfig cfg) : e(std::move(cfg)) {}

  void put(const std::string& cluster, const model::Object& o, SystemTime observedAt) {
    const auto& m = model::metaOf(o);
    const auto key = std::make_tuple(cluster, static_cast<int>(model::kindOf(o)), m.uid + "/" + m.name);
    auto type = seen_.insert(key).second ? model::EventType::Added : model::EventType::Modified;
    e.onObject(cluster, type, o, observedAt);
    last_[key] = {cluster, o};
  }
  void remove(const std::string& cluster, const model::Object& o, SystemTime observedAt) {
    const auto& m = model::metaOf(o);
    const auto key = std::make_tuple(cluster, static_cast<int>(model::kindOf(o)), m.uid + "/" + m.name);
    seen_.erase(key);
    last_.erase(key);
    e.onObject(cluster, model::EventType::Deleted, o, observedAt);
  }
  /// Re-delivers the last state of every object (a relist) as Added events.
  void relist(SystemTime observedAt) {
    for (const auto& [key, v] : last_) e.onObject(v.first, model::EventType::Added, v.second, observedAt);
  }
  engine::Outputs step(SystemTime now) {
    engine::Outputs o = e.advance(now);
    append(o);
    return o;
  }
  void append(const engine::Outputs& o) {
    all.milestones.insert(all.milestones.end(), o.milestones.begin(), o.milestones.end());
    all.observations.insert(all.observations.end(), o.observations.begin(), o.observations.end());
    all.incidents.insert(all.incidents.end(), o.incidents.begin(), o.incidents.end());
    all.reclaims.insert(all.reclaims.end(), o.reclaims.begin(), o.reclaims.end());
    all.duplicates.insert(all.duplicates.end(), o.duplicates.begin(), o.duplicates.end());
    all.openCycles.insert(all.openCycles.end(), o.openCycles.begin(), o.openCycles.end());
    all.workerConnections.insert(all.workerConnections.end(), o.workerConnections.begin(),
                                 o.workerConnections.end());
  }
  /// The last OpenCycleRecord of workload `uid` (what the store holds for it), if any.
  std::optional<engine::OpenCycleRecord> openCycle(const std::string& uid) const {
    std::optional<engine::OpenCycleRecord> last;
    for (const auto& c : all.openCycles) {
      if (c.workload.uid == uid) last = c;
    }
    return last;
  }

  std::vector<engine::MilestoneRecord> milestones(const std::string& uid) const {
    std::vector<engine::MilestoneRecord> out;
    for (const auto& m : all.milestones) {
      if (m.workload.uid == uid) out.push_back(m);
    }
    return out;
  }
  /// The one milestone `k` of workload `uid` in cycle `cycle` (ordinal); nullopt when absent.
  std::optional<engine::MilestoneRecord> milestone(const std::string& uid, Milestone k,
                                                   int32_t cycle = 0) const {
    std::optional<engine::MilestoneRecord> found;
    for (const auto& m : all.milestones) {
      if (m.workload.uid == uid && m.milestone == k && m.cycle == cycle) {
        if (found) throw std::runtime_error("milestone emitted twice: " + m.key);
        found = m;
      }
    }
    return found;
  }
  std::optional<engine::Observation> observation(const std::string& key) const {
    std::optional<engine::Observation> found;
    for (const auto& o : all.observations) {
      if (o.key == key) {
        if (found) throw std::runtime_error("observation emitted twice: " + key);
        found = o;
      }
    }
    return found;
  }
  std::vector<engine::Observation> observations(engine::HistogramKind kind) const {
    std::vector<engine::Observation> out;
    for (const auto& o : all.observations) {
      if (o.histogram == kind) out.push_back(o);
    }
    return out;
  }
  /// The latest version of incident `id`.
  std::optional<engine::IncidentRecord> incident(const std::string& id) const {
    std::optional<engine::IncidentRecord> found;
    for (const auto& i : all.incidents) {
      if (i.id == id) found = i;
    }
    return found;
  }
  std::optional<engine::ReclaimRecord> reclaim(const std::string& id) const {
    std::optional<engine::ReclaimRecord> found;
    for (const auto& r : all.reclaims) {
      if (r.id == id) found = r;
    }
    return found;
  }

  engine::MilestoneEngine e;
  engine::Outputs all;

 private:
  std::set<std::tuple<std::string, int, std::string>> seen_;
  std::map<std::tuple<std::string, int, std::string>, std::pair<std::string, model::Object>> last_;
};

/// Sum of a stranded-seconds counter over the snapshot.
inline double strandedSeconds(const engine::Snapshot& s, const std::string& cluster,
                              engine::StrandedPhase phase) {
  double v = 0;
  for (const auto& x : s.strandedSeconds) {
    if (x.cluster == cluster && x.phase == phase) v += x.seconds;
  }
  return v;
}

inline int64_t strandedNow(const engine::Snapshot& s, const std::string& cluster,
                           const std::string& deviceClass, engine::StrandedPhase phase) {
  for (const auto& x : s.stranded) {
    if (x.cluster == cluster && x.deviceClass == deviceClass && x.phase == phase) return x.gpus;
  }
  return 0;
}

inline int64_t gpusNow(const engine::Snapshot& s, const std::string& cluster,
                       const std::string& deviceClass, const std::string& state) {
  for (const auto& x : s.gpus) {
    if (x.cluster == cluster && x.deviceClass == deviceClass && x.state == state) return x.gpus;
  }
  return 0;
}

}  // namespace firstwork::testing
