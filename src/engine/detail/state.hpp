#pragma once
// Internal state of the MilestoneEngine, shared by the engine's .cpp files (not a public header).
#include <array>
#include <bit>
#include <boost/container/flat_set.hpp>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "firstwork/core/compact_vector.hpp"
#include "firstwork/core/frozen_list.hpp"
#include "firstwork/core/interned.hpp"
#include "firstwork/core/optional_time.hpp"
#include "firstwork/core/small_string.hpp"
#include "firstwork/engine/milestone_engine.hpp"
#include "firstwork/engine/stuck.hpp"
#include "firstwork/engine/timeline.hpp"
#include "firstwork/engine/useful_work.hpp"
#include "firstwork/inventory/inventory.hpp"
#include "firstwork/model/object.hpp"
#include "firstwork/model/uid_key.hpp"

namespace firstwork::engine {

inline constexpr std::string_view kWorkloadAnnotation = "kueue.x-k8s.io/workload";
inline constexpr std::string_view kJobUidLabel = "kueue.x-k8s.io/job-uid";
inline constexpr std::string_view kOriginLabel = "kueue.x-k8s.io/multikueue-origin";
inline constexpr std::string_view kMultiKueueController = "kueue.x-k8s.io/multikueue";
inline constexpr std::string_view kPodClaimNameAnnotation = "resource.kubernetes.io/pod-claim-name";

/// A decoded object the engine keeps without copying it: the daemon's reflectors keep the same
/// object for their relists, so sharing it halves what a tracked object costs. Reads as a
/// `const T&`; an empty holder reads as a default T.
/// Holds only the shared pointer (16 bytes; the alternative is found again at each read, an
/// index check): it is in every pod record (change 58).
template <typename T>
class SharedObject {
 public:
  void reset(std::shared_ptr<const model::Object> holder) {
    holder_ = holder && std::holds_alternative<T>(*holder) ? std::move(holder) : nullptr;
  }
  const T& operator*() const { return holder_ ? *std::get_if<T>(holder_.get()) : empty(); }
  const T* operator->() const { return &**this; }
  operator const T&() const { return **this; }  // NOLINT(google-explicit-constructor)
  /// The object holding T; null when empty.
  const std::shared_ptr<const model::Object>& holder() const { return holder_; }

 private:
  static const T& empty() {
    static const T e{};
    return e;
  }
  std::shared_ptr<const model::Object> holder_;
};

/// Device counts of one (cluster, device class) at one event time: the capacity ledger's levels.
/// usable from the inventory; the others are devices (summed over workloads) in that state.
struct Levels {
  int64_t usable = 0;
  int64_t queued = 0;      // demand of workloads waiting for this cluster (not reserved/dispatched here)
  int64_t pending = 0;     // reserved/dispatched here, pods not all running
  int64_t starting = 0;    // pods running, no useful work yet
  int64_t productive = 0;  // past first_work, not ended
  int64_t excluded = 0;    // not productive and stuck on the workload's own fault (subset of pending+starting)
  Levels& operator+=(const Levels& o);
  Levels& operator-=(const Levels& o);
  bool operator==(const Levels& o) const = default;
  int64_t demand() const { return queued + pending + starting; }
  /// stranded = min(usable − productive, demand), never negative.
  int64_t stranded() const;
  /// The same without devices of workloads stuck on their own fault (incident figures).
  int64_t strandedExcludingOwnFault() const;
};

/// stranded split by phase; `disconnected`: the cluster's MultiKueue connection is down, so the
/// idle remainder is attributed to the outage.
std::array<int64_t, kStrandedPhaseCount> splitStranded(const Levels& l, bool disconnected);

/// One contribution of a workload to the capacity timeline of (cluster, class), or — with `node`
/// set — to the per-node timeline of a share class (productive shares on that node).
/// It moves one level by `count` devices over [from, to): the level and the count in place of a
/// whole Levels, of which it set one field, and `to` an OptionalTime: 56 bytes where it was 96
/// (several a logical workload, kept with it: bench/README.md, change 82).
struct Interval {
  Interned cluster;
  Interned deviceClass;
  Interned node;
  SystemTime from{};
  OptionalTime to;
  int64_t Levels::*level = nullptr;
  int64_t count = 0;
  /// The Levels it adds: `count` in its level, 0 in the others.
  Levels delta() const {
    Levels l;
    if (level != nullptr) l.*level = count;
    return l;
  }
  bool operator==(const Interval& o) const = default;
};
static_assert(sizeof(void*) != 8 || sizeof(Interval) <= 56, "Interval past 56 bytes");

/// One per milestone a cycle has reached (Cycle::values_): the strings that repeat across
/// workloads are interned, which halves a cycle. The preemptor's uid, set on the Preempted
/// milestone only, is the cycle's (Cycle::preemptorUid: a cycle went from jemalloc's 1,280-byte
/// size class to the 1,024-byte one, bench/README.md, change 57); whether a milestone is set,
/// emitted and a proxy are bits of the cycle's (48 bytes where the flags took 56: change 85).
struct MilestoneValue {
  SystemTime eventTime{};
  SystemTime observedAt{};
  Interned cluster;   // where it happened (execution cluster for pod-side and dispatch)
  Interned resource;  // kind that carried the time
  Interned signal;
  Interned reason;
};

/// A uid for Cycle::preemptorUid: owned by the handle, never added to the pool.
inline Interned ownedUid(std::string_view uid) { return Interned::pooledUpTo(uid, 0); }

/// Devices of one class the pods of a cycle hold on one node (from the inventory: a plain GPU
/// request on a time-sliced node holds a share, on a mig.strategy=single node a MIG instance).
struct HeldDevices {
  Interned deviceClass;
  Interned node;
  int64_t count = 0;
  bool operator==(const HeldDevices&) const = default;
};

struct IncidentLink {
  std::string incidentId;
  Interned cluster;
  SystemTime reconnectedAt{};
  bool firstWorkEmitted = false;
};

/// One admission cycle of a logical workload.
struct Cycle {
  std::string id;  // queued event time, Unix ms
  /// Who preempted it (its Preempted milestone's, from Kueue's message; ownedUid: unique, not
  /// pooled); empty when not preempted or the message did not say.
  Interned preemptorUid;
  Interned clusterQueue;
  Interned dispatchedCluster;  // MultiKueue: worker (config name) that admitted it
  /// MultiKueue: workers it waited for, last known pre-dispatch.
  std::vector<std::string> candidates;
  OptionalTime podsSince;  // pods created before this belong to an earlier cycle
  OptionalTime ineligibleSince;  // QuotaReserved=False for a reason that never admits
  /// When `restored`: what its pods showed as the start of work before the restart (they may be
  /// gone).
  OptionalTime restoredWorkSince;
  // What the last OpenCycleRecord said, with persistedOpen (persistOpenCycle emits on change).
  OptionalTime persistedWorkSince;
  OptionalTime excludedFrom;  // workload-caused stuck: out of incident figures from here
  std::vector<IncidentLink> incidents;
  /// What its pods held when last seen holding anything (kept after they end, so the cycle's past
  /// stays in the classes its devices really were). A CompactVector, kept at its size.
  CompactVector<HeldDevices> held;
  std::array<bool, kStageCount> stageEmitted{};
  int32_t ordinal = 0;
  std::optional<StuckReason> stuck;
  bool reservationToFirstWorkEmitted = false;
  bool capacityChecked = false;
  bool withoutCapacity = false;
  bool interruptedCounted = false;
  /// Restored from the store (restoreCycle): open (not released) when the previous process
  /// stopped, so that process did not count its lost work; its pods may be gone, and then
  /// restoredWorkSince stands for what they showed.
  bool restored = false;
  bool persistedOpen = false;  // with persistedWorkSince

 private:
  // Bit k: milestone k is set; emitted; its value is a proxy (the Ready condition for first work).
  uint16_t present_ = 0;
  uint16_t emitted_ = 0;
  uint16_t proxy_ = 0;
  /// The milestones set, in milestone order: the value of milestone k is at the number of bits
  /// of `present_` below k's. Room for kMilestonesReserved from the first, grown one at a time
  /// past that: a running cycle has six or seven, one that ended eight to ten, and an array of
  /// all eleven took 528 of its 768 bytes. Eight take jemalloc's 384-byte class, which the
  /// sync's short-lived blocks leave alone; grown at their size, six would take the 320 one,
  /// where about 200,000 of them come and go (bench/README.md, change 88).
  CompactVector<MilestoneValue> values_;
  static constexpr size_t kMilestonesReserved = 8;
  static uint16_t bit(Milestone k) { return static_cast<uint16_t>(1u << static_cast<size_t>(k)); }
  size_t slot(Milestone k) const {
    return static_cast<size_t>(std::popcount(static_cast<uint16_t>(present_ & (bit(k) - 1u))));
  }

 public:
  bool has(Milestone k) const { return (present_ & bit(k)) != 0; }
  const MilestoneValue* get(Milestone k) const { return has(k) ? &values_[slot(k)] : nullptr; }
  std::optional<SystemTime> time(Milestone k) const {
    return has(k) ? std::optional<SystemTime>(values_[slot(k)].eventTime) : std::nullopt;
  }
  bool emitted(Milestone k) const { return (emitted_ & bit(k)) != 0; }
  void markEmitted(Milestone k) { emitted_ |= bit(k); }
  bool proxy(Milestone k) const { return (proxy_ & bit(k)) != 0; }
  /// Sets a milestone unless already set (milestones never move). True when newly set;
  /// `preemptor` is kept with the Preempted milestone (preemptorUid) and ignored for the others;
  /// `proxy`: the value stands in for the real signal; `emitted`: its record exists already
  /// (restored from the store).
  bool set(Milestone k, MilestoneValue v, Interned preemptor = {}, bool proxy = false,
           bool emitted = false);
};
static_assert(kMilestoneCount <= 16, "a milestone's bit in a uint16_t");
// One per admission cycle of every tracked workload (25,000 at the benchmark's full estate), each
// the only element of its workload's vector: 208 bytes, jemalloc's 224-byte class, with its set
// milestones in a block of their own (change 88); 768 with all eleven milestone slots inline
// (change 85), 872 before, 1,000 before change 73. Not the 192-byte class, on purpose: about
// 100,000 short-lived blocks of that class come and go in the sync's steps, and cycles made
// meanwhile pinned their slabs half empty (192 bytes with the candidates and incident links
// CompactVectors: 13 MiB more RSS at the full estate, jemalloc reporting 19 MB of that class's
// slabs unused, where the sizes promised 4.6 MiB less). A change of this size is measured, not
// predicted (bench/README.md, "Changes 88-89").
static_assert(sizeof(void*) != 8 || (sizeof(Cycle) > 192 && sizeof(Cycle) <= 224),
              "Cycle out of jemalloc's 224-byte size class");

/// A Workload object as seen on one cluster (manager, standalone, worker-local or worker copy).
struct LogicalWorkload;
struct PodRecord;
/// An entry of ClusterData::pods (a node: it stays put until gc erases it).
using PodEntry = std::pair<const model::UidKey, PodRecord>;

struct LocalWorkload {
  Interned cluster;
  SharedObject<model::Workload> obj;
  SystemTime lastObservedAt{};
  SystemTime deletedAt{};
  bool deleted = false;
  bool remoteCopy = false;   // worker copy of a manager workload (origin label on a worker)
  /// Linked to a logical workload once (a copy's manager known), whether or not that logical
  /// workload is still there: a copy whose manager gc collected is not adopted by a later
  /// manager of the same name.
  bool linked = false;
  /// The logical workload it belongs to, an entry of State::logical (a std::map: its nodes stay
  /// put); null until linked, and cleared in every local the entry lists when gc erases it. In
  /// place of a copy of the entry's key: no "<cluster>/<uid>" string a Workload, and the local
  /// one jemalloc size class smaller with its hash-map node (bench/README.md, change 64).
  LogicalWorkload* logical = nullptr;
  /// Pods joined to it (same cluster), each its entry in ClusterData::pods: a pod record is
  /// taken out of this set before it is erased (joinPod, gc). A sorted vector: 8 bytes a pod
  /// where a tree node took 48 (bench/README.md, change 60) and a view of the uid 16, and its
  /// readers reach each record without a lookup (change 95); a pod joins once, so the insert's
  /// move is rare. In address order: what its readers make of the pods (sums, earliest and
  /// latest times, the worst stuck cause) does not depend on the order.
  boost::container::flat_set<PodEntry*> pods;
  /// (time ns, reason) of each Preempted condition processed: a handful at most, found by a walk
  /// (a CompactVector of 16 bytes where an empty std::set took 48; change 87).
  CompactVector<std::pair<int64_t, Interned>> preemptionsSeen;
  /// Evicted/Preempted conditions True in a state delivered since the last settle and no longer
  /// True in the latest one (set and reset within one batch): still milestones, whatever the
  /// batching. Cleared by settle().
  CompactVector<model::Condition> resetConditions;  // 16 bytes: nearly always empty
  // Keys this Workload registered in workloadsByOwner (every version's), so that gc() removes
  // exactly its entries without scanning the index.
  CompactVector<SmallString> ownerKeys;  // uids: inline
};
// One per tracked Workload (50,000 at the benchmark's full estate): with its hash-map node (the
// next pointer and the 40-byte inline uid) jemalloc's 192-byte class (224 before change 87 made
// preemptionsSeen and ownerKeys CompactVectors, 256 before change 75 took its Job-name keys and
// made resetConditions a CompactVector; 320 with the logical workload's key as a string).
static_assert(sizeof(void*) != 8 || sizeof(LocalWorkload) <= 144,
              "LocalWorkload past jemalloc's 192-byte class with its hash-map node");

/// The pod signals a PodRecord keeps (PodSignals without the invalid values, which only the
/// event that carries them reads), in 24 bytes where two std::optionals took 48: the first-work
/// signal's time says whether there is one, and its kind sits with the record's flags
/// (PodRecord::firstWork(); bench/README.md, change 83).
struct HeldPodSignals {
  OptionalTime firstWorkAt;
  Interned firstWorkName;
  OptionalTime lastCheckpoint;
};

/// What a pod record holds that almost no pod has: an external useful-work signal (the probe's),
/// and the last annotation values that were not RFC 3339 (each counted once per pod and value).
struct RarePodFields {
  std::optional<UsefulWorkSignal> external;
  SystemTime externalObservedAt{};
  std::string lastInvalidFirstWork;
  std::string lastInvalidCheckpoint;
  /// The pod's metadata as last seen while no Workload of its cluster resolves it: resolving
  /// reads its annotations, owner references, namespace, uid and creation time, which the record
  /// does not keep (retried when a Workload comes: retryUnresolvedPods). Only the metadata: the
  /// decoded pod (600 B of a DaemonSet's, which no Workload ever claims) goes with its event.
  /// Null once resolved.
  std::shared_ptr<const model::ObjectMeta> unresolved;
  bool empty() const {
    return !external && lastInvalidFirstWork.empty() && lastInvalidCheckpoint.empty() &&
           unresolved == nullptr;
  }
};

/// One pod of a cluster. One per tracked pod (150,000 at the largest estates): what the engine
/// reads of the pod after its event, in place of a hold on the decoded pod (change 96); the
/// fields most pods leave empty live behind `rare`, the flags share one word, the Workload is a
/// pointer, the signals take 24 bytes and the cluster is the map's (ClusterData::pods), so that
/// a record with its hash-map node (the next pointer and the 16-byte uid key) fits jemalloc's
/// 224-byte size class (bench/README.md, changes 35, 58, 61, 83, 95, 96 and 98).
struct PodRecord {
  // What the engine reads of the pod after its event, taken from each event (setFacts): the
  // decoded pod goes when its event has been taken (bench/README.md, change 96).
  ShortString name;
  Interned ns;
  Interned nodeName;
  SystemTime created{};
  OptionalTime deletionTimestamp;
  /// PodScheduled's lastTransitionTime while the condition is True (scheduled(): True at all).
  OptionalTime scheduledTransition;
  /// All regular containers started, in phase Running or Succeeded: the latest start (design §3
  /// `running`; podRunningAt).
  OptionalTime allStartedAt;
  /// In phase Running: the earliest and the latest start of a running regular container.
  OptionalTime firstRunningStart;
  OptionalTime lastRunningStart;
  /// Set whole at an event and read (FrozenList: 8 bytes each where a CompactVector took 16,
  /// which with the rest put the record's node in the 256-byte class; change 98).
  FrozenList<std::pair<Interned, int64_t>> requests;  // a model::ResourceList's entries
  FrozenList<model::PodClaimRef> claims;  // change 99: 48 bytes each, not a PodClaim's 128
  SystemTime lastObservedAt{};
  SystemTime deletedAt{};
  SystemTime signalObservedAt{};
  /// The local workload (same cluster, a node of ClusterData::workloads: it stays put) the pod is
  /// joined to; null while unresolved, and cleared in each of its pods when gc erases it. In
  /// place of its uid: no 36-character copy a pod, no lookup at each pod event, and the record
  /// one jemalloc size class smaller (bench/README.md, change 61).
  LocalWorkload* workload = nullptr;
  HeldPodSignals signals;
  std::unique_ptr<RarePodFields> rare;  // null while every field of it is empty

 private:
  SystemTime scheduledAt_{};
  SystemTime runningAt_{};
  bool hasScheduled_ = false;
  bool hasRunning_ = false;
  SignalKind firstWorkKind_ = SignalKind::Annotation;  // with signals.firstWorkAt
  bool scheduled_ = false;                             // PodScheduled True
  uint8_t stuck_ = kNotStuck;                          // podStuckReason, or kNotStuck
  static constexpr uint8_t kNotStuck = 0xFF;

 public:
  bool deleted = false;
  model::PodPhase phase = model::PodPhase::Unknown;

  /// Takes what the record keeps of `p` (its state as of this event).
  void setFacts(const model::Pod& p, int32_t crashLoopRestarts);
  bool scheduled() const { return scheduled_; }
  /// The pod's stuck cause as of its last event (podStuckReason).
  std::optional<StuckReason> stuck() const {
    return stuck_ == kNotStuck ? std::nullopt
                               : std::optional<StuckReason>(static_cast<StuckReason>(stuck_));
  }
  /// Drops the rare fields when nothing is left in them.
  void dropRareIfEmpty() {
    if (rare && rare->empty()) rare.reset();
  }

  /// The first-work signal the pod shows (PodSignals::firstWork as last seen), if any.
  std::optional<UsefulWorkSignal> firstWork() const {
    if (!signals.firstWorkAt) return std::nullopt;
    return UsefulWorkSignal{firstWorkKind_, *signals.firstWorkAt, signals.firstWorkName};
  }
  void setFirstWork(const std::optional<UsefulWorkSignal>& s) {
    signals.firstWorkAt = s ? OptionalTime(s->at) : OptionalTime();
    signals.firstWorkName = s ? s->name : Interned();
    firstWorkKind_ = s ? s->kind : SignalKind::Annotation;
  }

  /// When the pod was first seen scheduled (PodScheduled True), and running (a container
  /// started); each set once.
  std::optional<SystemTime> scheduledObservedAt() const {
    return hasScheduled_ ? std::optional<SystemTime>(scheduledAt_) : std::nullopt;
  }
  std::optional<SystemTime> runningObservedAt() const {
    return hasRunning_ ? std::optional<SystemTime>(runningAt_) : std::nullopt;
  }
  void setScheduledObservedAt(SystemTime at) {
    scheduledAt_ = at;
    hasScheduled_ = true;
  }
  void setRunningObservedAt(SystemTime at) {
    runningAt_ = at;
    hasRunning_ = true;
  }

  const std::optional<UsefulWorkSignal>& external() const {
    static const std::optional<UsefulWorkSignal> none;
    return rare ? rare->external : none;
  }
  SystemTime externalObservedAt() const { return rare ? rare->externalObservedAt : SystemTime{}; }
  RarePodFields& rareFields() {
    if (!rare) rare = std::make_unique<RarePodFields>();
    return *rare;
  }
};
// With its hash-map node (the next pointer and the 16-byte key) jemalloc's 224-byte class, with
// what the engine reads of the pod in place of a hold on the decoded pod (its 256-byte block
// and about 300 bytes of lists; bench/README.md, change 96) and its two lists FrozenLists
// (change 98): 256 with CompactVectors, 128 before change 96, with the hold.
static_assert(sizeof(void*) != 8 || sizeof(PodRecord) <= 200,
              "PodRecord past jemalloc's 224-byte class with its hash-map node");

/// Devices of one class a workload wants (all its pods).
struct DeviceNeed {
  std::string deviceClass;
  int64_t count = 0;
};

/// A logical workload: the manager Workload (MultiKueue), else the Workload itself.
struct LogicalWorkload {
  /// "<cluster>/<uid>": a view of its key in State::logical (the node's key stays put).
  std::string_view key;
  /// Its home cluster's name and its uid: the two parts of `key`, not copies of their own (a
  /// node of State::logical 64 bytes and a heap block smaller; bench/README.md, change 81).
  std::string_view cluster() const { return key.substr(0, clusterBytes); }
  std::string_view uid() const { return key.substr(clusterBytes + 1); }
  /// Sets `key` from the map's key, "<cluster>/<uid>" with `clusterLength` bytes of cluster.
  void setKey(std::string_view k, size_t clusterLength) {
    key = k;
    clusterBytes = static_cast<uint16_t>(clusterLength);
  }
  uint16_t clusterBytes = 0;  // the length of cluster() in key
  bool multikueue = false;
  bool devicesUnresolved = false;  // a podset claim whose devices are unknown
  bool deleted = false;
  bool interruptedPending = false;
  std::vector<Cycle> cycles;
  /// (cluster, uid): itself and its copies, each a view of the cluster's configured name and of
  /// the Workload's key in that cluster's ClusterData::workloads (both stay put; gc takes a
  /// Workload out of this set before it erases the Workload). A sorted vector of views: 32 bytes
  /// a Workload where a tree node with two strings took 144 (bench/README.md, change 64).
  boost::container::flat_set<std::pair<std::string_view, std::string_view>> locals;
  std::vector<DeviceNeed> devices;
  std::vector<Interval> intervals;
  SystemTime deletedAt{};
  SystemTime lastObservedAt{};
  // Rates for the GPU-seconds counters (per class), refreshed at each settle.
  std::string rateCluster;
  std::string rateQueue;
  /// Per device class: reserved, allocated, productive. Sorted by class, one or two entries: 32
  /// bytes each where a std::map node took 96 (bench/README.md, change 82).
  CompactVector<std::pair<Interned, std::array<int64_t, 3>>> rates;
  std::set<std::string> duplicateKeys;  // emitted
  std::vector<std::string> duplicateClustersNow;
};
// One per logical workload (25,000 at the benchmark's full estate): with its std::map node (32
// bytes) and its 48-byte key inline, jemalloc's 384-byte class (448 before change 81, 512 before
// change 64; a std::string key of 32 bytes and a heap block before change 104).
static_assert(sizeof(void*) != 8 || sizeof(LogicalWorkload) <= 304,
              "LogicalWorkload past jemalloc's 384-byte class with its map node and key");

struct Incident {
  IncidentRecord rec;
  std::string managementCluster;  // multikueue: where its MultiKueueCluster lives
  bool closed() const {
    return rec.outcome == IncidentOutcome::Recovered || rec.outcome == IncidentOutcome::Failed;
  }
};

struct MkcState {
  model::ConditionStatus status = model::ConditionStatus::Unknown;
  SystemTime since{};
  std::string reason;
  std::string managementCluster;
};

enum class ProbeState : uint8_t { Unknown, Connected, Disconnected };

/// A victim waiting for its preemptor to be identified, or attached to a reclaim.
struct VictimRef {
  std::string victimLogical;  // LW key
  std::string victimCycleId;
  std::string cluster;        // where preempted
  std::string reason;         // Preempted condition reason
  SystemTime evictedAt{};
  WorkloadRef workload;
  /// Figures from a record restored after a restart (restoreReclaim): the interrupted cycle's
  /// pods may be gone by now, so these stand unless the objects give a derivation with workSince.
  std::optional<ReclaimVictim> restored;
};

struct Reclaim {
  ReclaimRecord rec;
  std::string preemptorLogical;  // LW key ("" when the preemptor was never seen)
  std::vector<VictimRef> victims;
  bool done() const { return rec.outcome != ReclaimOutcome::Pending; }
};

struct PendingVictim {
  std::string cluster;
  std::string preemptorUid;  // local uid on `cluster`
  VictimRef victim;
};

/// Hash of std::string keys that also takes string_views (no temporary string per lookup).
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

/// Hash of uid keys (SmallString, looked up by string_view). noexcept, so that libstdc++ keeps
/// no hash code in each node (it caches one for hashes that may throw): with the 40-byte inline
/// key a node is as large as with a std::string key and a cached hash, and the 48-byte heap
/// block a 36-character uid took as a std::string is gone (bench/README.md, change 69). Lookups
/// compare keys in the bucket directly; a rehash hashes each key again.
struct UidHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using UidMap = std::unordered_map<SmallString, V, UidHash, std::equal_to<>>;

/// Hash and equality of pod uid keys (model::UidKey: a UUID in 16 bytes), looked up by a uid's
/// text read once (model::UidKey::Probe). noexcept: no hash code kept in a node.
struct PodUidHash {
  using is_transparent = void;
  size_t operator()(const model::UidKey& k) const noexcept { return k.hash(); }
  size_t operator()(const model::UidKey::Probe& p) const noexcept { return p.hash(); }
};
struct PodUidEqual {
  using is_transparent = void;
  bool operator()(const model::UidKey& a, const model::UidKey& b) const noexcept { return a == b; }
  bool operator()(const model::UidKey::Probe& a, const model::UidKey& b) const noexcept {
    return b == a;
  }
  bool operator()(const model::UidKey& a, const model::UidKey::Probe& b) const noexcept {
    return a == b;
  }
};
/// uid → record, one per tracked pod (150,000 at the benchmark's full estate). Keyed by the uid
/// packed: 16 bytes where the SmallString key took 40 (bench/README.md, change 95); with the
/// record a node of jemalloc's 224-byte class (change 98).
using PodMap = std::unordered_map<model::UidKey, PodRecord, PodUidHash, PodUidEqual>;

/// A pod's namespace and name, as its record has them.
inline model::NamespacedName podName(const PodEntry* e) { return {e->second.ns, e->second.name}; }
/// What the inventory's podDevices() reads of a pod, from its record.
inline inventory::PodUse podUse(const PodRecord& r) {
  return {r.ns, r.nodeName, r.phase, r.requests.span(), {}, r.claims.span(), r.name.view()};
}
/// A Workload's namespace and name, as its decoded object has them.
inline model::NamespacedName workloadName(const LocalWorkload* l) {
  return model::namespacedName(l->obj->meta);
}
/// The namespace and the name of the first Job among the owners in `m` (an empty name: none).
inline model::NamespacedName jobOwnerName(const model::ObjectMeta& m) {
  for (const auto& o : m.ownerReferences) {
    if (o.kind == "Job") return {m.namespace_, o.name};
  }
  return {m.namespace_, {}};
}
inline model::NamespacedName workloadJobName(const LocalWorkload* l) {
  return jobOwnerName(l->obj->meta);
}
/// An index of records (pod records, Workloads: nodes of their own maps, so they stay put) by a
/// namespace and name read from each record's object (`Key`), looked up by a NamespacedName:
/// a 16-byte node a record, where an "ns/name" string key took a 64-byte node and a heap block,
/// and a lookup builds no key (bench/README.md, changes 67 and 75). The key must not change
/// while a record is in it: a record whose next object has another key is taken out before
/// that object replaces its own.
template <typename Record, model::NamespacedName (*Key)(const Record*)>
struct IndexHash {
  using is_transparent = void;
  size_t operator()(model::NamespacedName k) const noexcept { return model::hashOf(k); }
  size_t operator()(const Record* r) const noexcept { return model::hashOf(Key(r)); }
};
template <typename Record, model::NamespacedName (*Key)(const Record*)>
struct IndexEqual {
  using is_transparent = void;
  static model::NamespacedName of(model::NamespacedName k) { return k; }
  static model::NamespacedName of(const Record* r) { return Key(r); }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const { return of(a) == of(b); }
};
template <typename Record, model::NamespacedName (*Key)(const Record*)>
using NameIndex = std::unordered_set<Record*, IndexHash<Record, Key>, IndexEqual<Record, Key>>;

/// Makes `r` the record of `index` under its key (the last seen under it takes it).
template <typename Record, model::NamespacedName (*Key)(const Record*)>
void indexUnder(NameIndex<Record, Key>& index, Record* r) {
  // A name rarely changes hands (an object deleted and created again), so most events neither
  // allocate nor write here.
  if (auto it = index.find(Key(r)); it == index.end()) {
    index.insert(r);
  } else if (*it != r) {
    index.erase(it);
    index.insert(r);
  }
}
/// Takes `r` out of `index` under `key` if it is the record there.
template <typename Record, model::NamespacedName (*Key)(const Record*)>
void unindex(NameIndex<Record, Key>& index, model::NamespacedName key, const Record* r) {
  if (auto it = index.find(key); it != index.end() && *it == r) index.erase(it);
}

/// Per-cluster object indexes.
struct ClusterData {
  ClusterConfig config;
  // Looked up on every event and never iterated: hashed, so a lookup does not grow with the
  // estate (ordered maps of 36-byte uids were the engine's top cost at scale).
  UidMap<LocalWorkload> workloads;          // uid →
  // Each names a Workload by its entry in `workloads` (a node: it stays put), not by a copy of its
  // uid; gc erases a Workload's entries with it (change 62). The Workload last seen under each
  // namespace/name, and under the namespace/name of its Job owner, each read from its object
  // (NameIndex; change 75); under each owner uid and Job uid label (LocalWorkload::ownerKeys).
  NameIndex<LocalWorkload, workloadName> workloadsByName;
  UidMap<LocalWorkload*> workloadsByOwner;  // owner/job uid →
  NameIndex<LocalWorkload, workloadJobName> workloadsByJobName;
  PodMap pods;                              // uid →
  /// The record of the pod last seen under each namespace/name (for external signals naming a
  /// pod so): pointers to records of `pods` (nodes: they stay put), hashed by the name in each
  /// record's object; gc erases a record's entry with it. A 16-byte node a pod where a map from an
  /// "ns/name" copy to the uid took 112 bytes (bench/README.md, change 67).
  NameIndex<PodEntry, podName> podsByName;
  /// Pods no Workload of the cluster resolves yet, each under a hash of every key a Workload
  /// could resolve it by (its annotation's Workload name, its owners' uids and its own, its Job's
  /// name: resolvingKeys): a new Workload retries the pods its own keys name, not every waiting
  /// pod of its namespace (plain pods that no Workload will own wait for good; a namespace's few
  /// hundred, each retried at every new Workload of it, cost 10.9 % of the event loop at 500
  /// events/s: bench/README.md, change 107). A hash that two keys share only retries a pod that
  /// resolvePod then leaves waiting. The pod as last seen is its record's `rare->unresolved`.
  /// Ordered pairs, not a multimap of keys: the pods of one DaemonSet (one per node) share their
  /// owner's key, and finding one pod among thousands under it made every add and drop linear
  /// (5,000 such pods took 2.9 s to take in a Debug build, 50,000 took 151 s).
  struct KeyAndPodLess {
    bool operator()(const std::pair<uint64_t, PodEntry*>& a,
                    const std::pair<uint64_t, PodEntry*>& b) const {
      return a.first != b.first ? a.first < b.first : std::less<PodEntry*>{}(a.second, b.second);
    }
  };
  std::set<std::pair<uint64_t, PodEntry*>, KeyAndPodLess> unresolvedByKey;
  size_t unresolvedCount = 0;
  /// Of those, the deleted ones: they still wait (a Workload seen after its pod's deletion, as
  /// events of separate streams come in any order, still gets its milestones) until gc collects
  /// them, but are no pods of the cluster's any more (Snapshot::podsWithoutWorkload leaves them
  /// out: a DaemonSet's rollout counted its old pods for an hour).
  size_t unresolvedDeleted = 0;
  /// `pod` waits, as `meta` shows it; its keys are replaced if it waited already.
  void addUnresolved(PodEntry& pod, std::shared_ptr<const model::ObjectMeta> meta);
  /// `pod` waits no more (resolved, or collected); nothing when it was not waiting.
  void dropUnresolved(PodEntry& pod);
  /// Marks `rec` deleted (at `at`, when it was not) or not, keeping unresolvedDeleted; true
  /// when it was not deleted and now is (its tombstone is then the caller's).
  bool setPodDeleted(PodRecord& rec, bool deleted, SystemTime at);
  // ResourceClaims: the inventory's (Inventory::findClaim), not a map of the engine's own.
  // Management cluster objects.
  std::map<std::string, model::ClusterQueue> clusterQueues;
  std::map<std::string, model::AdmissionCheck> admissionChecks;
  std::map<std::string, model::MultiKueueConfig> multiKueueConfigs;
  std::map<std::string, std::string> localQueueToClusterQueue;  // ns/lq → cq (learned)
  // Inventory bookkeeping.
  std::optional<SystemTime> inventoryKnownSince;
  bool usableDirty = false;
  SystemTime usableEventTime{};
  std::map<std::string, bool> nodeReady;  // node → Ready status last seen
  ProbeState probe = ProbeState::Unknown;
  /// False while a watch of this reachable cluster is not streaming (a relist after 410, a
  /// retry after 429): its objects are not current (MilestoneEngine::onWatchesCurrent).
  bool watchesCurrent = true;
  /// First observation of any object of this cluster: events before it happened before the daemon
  /// watched, so their "lag" says nothing about telemetry.
  std::optional<SystemTime> firstSeen;
  std::string openProbeIncident;
};

/// A deleted pod or Workload waiting for deletedRetention to pass (gc() pops the expired ones).
struct Tombstone {
  SystemTime deletedAt{};
  std::string cluster;
  SmallString uid;
  bool pod = false;
  bool operator>(const Tombstone& o) const { return deletedAt > o.deletedAt; }
};

struct MilestoneEngine::State {
  explicit State(EngineConfig c);

  EngineConfig config;
  inventory::Inventory inv;
  std::map<std::string, ClusterData, std::less<>> clusters;
  std::map<std::string, std::string> mkcToCluster;  // MultiKueueCluster name → config cluster
  /// Key "<cluster>/<uid>" → the logical workload. The key inline (46 characters: a cluster
  /// name of up to 9 with a uid) where a std::string's took a 48-byte heap block: its node stays
  /// in jemalloc's 384-byte class (sizeof(LogicalWorkload) 288; bench/README.md, change 104).
  using LogicalKey = BasicSmallString<48>;
  std::map<LogicalKey, LogicalWorkload, std::less<>> logical;
  std::set<std::string, std::less<>> dirty;         // LW keys to settle
  /// Puts a logical workload's key in `dirty` (a copy only when it is not there yet).
  void markDirty(std::string_view lwKey) {
    if (dirty.find(lwKey) == dirty.end()) dirty.emplace(lwKey);
  }
  // Per-advance work is proportional to what changed, not to the estate: these name the few
  // logical workloads the time-driven passes must visit.
  // Settled since classifyStuck last found them settled for good.
  std::set<std::string, std::less<>> stuckWatch;
  std::priority_queue<Tombstone, std::vector<Tombstone>, std::greater<>> tombstones;  // gc()
  std::set<std::pair<std::string, std::string>> dirtyLocals;  // (cluster, uid) to scan for preemption
  /// Puts a Workload copy in `dirtyLocals` when it shows a preemption (Preempted=True): for any
  /// other, scanPreemption() has nothing to do. A sync marked every Workload, and the marks'
  /// blocks, made among the objects' own and freed by the first step, left their slabs part
  /// empty (bench/README.md, change 91).
  void markPreemptionScan(const std::string& cluster, std::string_view uid,
                          const model::Workload& w);
  bool candidatesDirty = false;
  bool devicesDirty = false;
  // Claim templates learned from generated claims: (ns, name) → their requests (DeviceClass name,
  // count, CEL selectors; a MIG request names its profile in the selectors). Looked up by views
  // (TemplateName): a DRA pod's every event looks its templates up.
  using TemplateName = std::pair<std::string_view, std::string_view>;
  struct TemplateNameLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return TemplateName(a.first, a.second) < TemplateName(b.first, b.second);
    }
  };
  std::map<std::pair<std::string, std::string>, std::vector<model::DeviceRequest>, TemplateNameLess>
      templates;
  // Templates are not watched, so a learned one is never deleted: a template made for each job
  // (about 300 bytes an entry) would stay for good. When the map has doubled since its last
  // sweep, the templates no Workload or pod names any more are forgotten (sweepTemplates):
  // amortised, the map holds at most twice what is named, plus kTemplateSweepSlack.
  size_t templatesAfterSweep = 0;
  static constexpr size_t kTemplateSweepSlack = 64;
  // External useful-work signals by cluster and pod reference (uid or ns/name).
  std::map<std::string,
           std::map<std::string, std::pair<UsefulWorkSignal, SystemTime>, std::less<>>>
      external;

  // Capacity ledger.
  std::map<std::pair<std::string, std::string>, StepTimeline<Levels>> timelines;  // (cluster, class)
  std::map<std::pair<std::string, std::string>, int64_t> usableNow;
  std::map<std::pair<std::string, std::string>, SystemTime> usableChangedAt;
  // Share classes per node: usable = devices behind the shares, productive = productive shares
  // (one productive tenant makes a device productive: min(usable, productive) per node).
  using NodeKey = std::tuple<std::string, std::string, std::string>;  // cluster, class, node
  std::map<NodeKey, StepTimeline<Levels>> nodeTimelines;
  std::map<NodeKey, int64_t> physicalNow;
  // Intervals of the MultiKueue connection being down per worker cluster: [from, to).
  std::map<std::string, std::vector<std::pair<SystemTime, std::optional<SystemTime>>>> disconnected;

  // Incidents and connections.
  std::map<std::string, Incident> incidents;  // id →
  std::map<std::string, std::string> openMkIncident;  // cluster → id (open or recovering)
  std::map<std::string, MkcState> mkc;                // cluster → Kueue's view

  // Reclaims.
  std::map<std::string, Reclaim> reclaims;  // id →
  std::vector<PendingVictim> pendingVictims;
  // (victim LW key, evicted Unix ms) → the interrupted GPU-seconds the previous process derived,
  // of victims restored from a previous process (their cycle id is not always stored): see
  // countInterrupted.
  std::map<std::pair<std::string, int64_t>, double> restoredVictimEvictions;
  // Cycles restored from the store (restoreCycle) by logical workload key, until their Workload
  // is listed (linkWorkload adopts them) or its home cluster has listed without it.
  std::map<std::string, Cycle, std::less<>> restoredCycles;

  // Counters.
  std::map<std::tuple<std::string, std::string, StrandedPhase>, double> strandedSeconds;
  // Share classes: the devices behind them (unit: the base resource's).
  std::map<std::tuple<std::string, std::string, StrandedPhase>, double> physicalStrandedSeconds;
  std::map<std::tuple<std::string, std::string, std::string, GpuState>, double> gpuSeconds;
  // Σ of every logical workload's rates by gpuSeconds key, kept as rates change, so that
  // integrateRates() costs the keys (queues × classes), not the workloads running.
  std::map<std::tuple<std::string, std::string, std::string, GpuState>, int64_t> rateTotals;
  std::map<std::tuple<std::string, std::string, std::string>, double> interruptedSeconds;
  std::map<std::string, RecoveryTotals> recoveryTotals;
  std::map<std::tuple<std::string, std::string, ReclaimOutcome>, int64_t> reclaimTotals;
  std::map<std::pair<std::string, std::string>, int64_t> withoutCapacity;
  std::map<std::string, int64_t> duplicateTotals;
  EngineStats stats;

  std::optional<SystemTime> lastAdvance;
  Outputs produced;  // drained by advance()
  /// advance(now, sink)'s sink while it runs: `produced` goes to it in parts (handOverIfFull).
  const MilestoneEngine::OutputSink* sink = nullptr;
  /// Hands `produced` to the sink once it holds MilestoneEngine::kOutputsPerPart outputs.
  void handOverIfFull() {
    if (sink == nullptr || produced.size() < MilestoneEngine::kOutputsPerPart) return;
    Outputs part;
    std::swap(part, produced);
    (*sink)(std::move(part));
  }

  // snapshot()'s workload gauges (workloads by state, stuck, duplicates now, unresolved claim
  // templates) as running totals:
  // a logical workload's part is recounted when what it is computed from may have changed (its
  // key in partsDirty: settle, onWorkload, a stuck verdict, a learned LocalQueue), not on every
  // snapshot (a pass over every retained workload was most of the daemon's 1 s tick).
  using StateKey = std::tuple<std::string, std::string, WorkloadState>;  // cluster, queue, state
  using StuckKey = std::tuple<std::string, std::string, StuckReason>;
  struct WorkloadPart {
    std::optional<std::map<StateKey, int64_t>::iterator> state;
    std::optional<std::map<StuckKey, int64_t>::iterator> stuck;
    std::vector<std::string> duplicatesNow;
    bool devicesUnresolved = false;
  };
  mutable std::map<StateKey, int64_t> stateTotals;
  mutable std::map<StuckKey, int64_t> stuckTotals;
  mutable std::map<std::string, int64_t> duplicatesNowTotals;
  mutable uint64_t devicesUnresolvedTotal = 0;
  mutable StringMap<WorkloadPart> workloadParts;  // LW key → what it adds
  // Drained by every advance() and snapshot(), so it holds what changed since the last of them.
  mutable std::unordered_set<std::string, StringHash, std::equal_to<>> partsDirty;
  // Workloads whose ClusterQueue is read through localQueueToClusterQueue: recounted when it learns.
  mutable std::unordered_set<std::string, StringHash, std::equal_to<>> partsByLocalQueue;
  void markPart(std::string_view lwKey) {
    if (partsDirty.find(lwKey) == partsDirty.end()) partsDirty.emplace(lwKey);
  }
  void refreshWorkloadParts() const;

  // --- ingest (milestone_engine.cpp)
  ClusterData* cluster(std::string_view name);
  // `holder` owns the object (`w`, `p`, `claim` point into it); the engine keeps it, not a copy.
  void onWorkload(ClusterData& c, model::EventType type, const model::Workload& w, SystemTime at,
                  const std::shared_ptr<const model::Object>& holder);
  void onPod(ClusterData& c, model::EventType type, const model::Pod& p, SystemTime at);
  void onClaim(ClusterData& c, model::EventType type, const model::ResourceClaim& claim, SystemTime at,
               const std::shared_ptr<const model::Object>& holder);
  void onSlice(ClusterData& c, model::EventType type, const model::ResourceSlice& s, SystemTime at,
               const std::shared_ptr<const model::Object>& holder);
  void onNode(ClusterData& c, model::EventType type, const model::Node& n, SystemTime at);
  void onQueueObject(ClusterData& c, model::EventType type, const model::Object& o);
  void indexWorkload(ClusterData& c, LocalWorkload& lw);
  void linkWorkload(ClusterData& c, std::string_view uid, LocalWorkload& lw);
  /// The Workload a pod belongs to, or null; `joined`: the one it is joined to now, which a
  /// deleted Workload's name still finds.
  LocalWorkload* resolvePod(const ClusterData& c, const model::ObjectMeta& m,
                            const LocalWorkload* joined) const;
  /// `pod` is the pod's entry in `c.pods` (the Workload's pod set holds it); `m` its metadata as
  /// last seen, and `kept` the copy of it a waiting pod holds already (null: copied should the
  /// pod wait).
  void joinPod(ClusterData& c, PodEntry& pod, const model::ObjectMeta& m,
               std::shared_ptr<const model::ObjectMeta> kept = nullptr);
  /// The pod is gone, its last state unknown (onDeletedUnknown): deleted as last seen.
  void deletePodUnknown(ClusterData& c, PodEntry& pod, std::string_view uid, SystemTime at);
  void retryUnresolvedPods(ClusterData& c, const LocalWorkload& l);
  void markPodDirty(const PodRecord& rec);
  void learnTemplate(ClusterData& c, const model::ResourceClaim& claim);
  void sweepTemplates(TemplateName keep);
  void learnTemplate(std::string_view ns, std::string_view templateName,
                     std::span<const model::DeviceRequest> requests);
  /// `uid`: the pod's (its key's text).
  void attachExternal(ClusterData& c, PodRecord& rec, std::string_view uid);
  LocalWorkload* local(std::string_view cluster, std::string_view uid);
  const LocalWorkload* local(std::string_view cluster, std::string_view uid) const;
  LocalWorkload* home(LogicalWorkload& lw);
  const LocalWorkload* home(const LogicalWorkload& lw) const;
  std::string workerForMkc(std::string_view mkcName) const;
  void gc(SystemTime now);

  // --- cycles and milestones (cycles.cpp)
  void settle(LogicalWorkload& lw);
  void deriveCycles(LogicalWorkload& lw, const LocalWorkload& h);
  void fillCycle(LogicalWorkload& lw, Cycle& cy, const LocalWorkload& h,
                 std::optional<SystemTime> upper);
  void podMilestones(LogicalWorkload& lw, Cycle& cy);
  void emitMilestones(LogicalWorkload& lw, Cycle& cy);
  void emitStages(LogicalWorkload& lw, Cycle& cy);
  void emitLinkedFirstWork(LogicalWorkload& lw, Cycle& cy);
  void restoreCycle(const std::vector<MilestoneRecord>& milestones, std::optional<SystemTime> workSince);
  void persistOpenCycle(LogicalWorkload& lw, Cycle& cy);
  void closeOpenCycle(std::string_view lwKey, Cycle& cy, SystemTime observedAt);
  std::vector<const PodRecord*> cyclePods(const LogicalWorkload& lw, const Cycle& cy,
                                          bool includeDeleted) const;
  std::string executionCluster(const LogicalWorkload& lw, const Cycle& cy) const;
  WorkloadRef ref(const LogicalWorkload& lw, const Cycle* cy) const;
  /// ref(lw, &cy).clusterQueue, without the rest of the reference.
  std::string clusterQueueFor(const LogicalWorkload& lw, const Cycle& cy) const;
  int64_t expectedPods(const model::Workload& w) const;
  std::optional<SystemTime> cycleEnd(const LogicalWorkload& lw, const Cycle& cy, bool last) const;
  void observe(HistogramKind kind, std::string key, double seconds, SystemTime eventTime,
               SystemTime observedAt, std::string cluster, std::string clusterQueue = {},
               std::string stage = {}, std::string reason = {}, std::string outcome = {},
               std::string source = {}, std::string resource = {});

  // --- capacity (capacity.cpp)
  void resolveDevices(LogicalWorkload& lw);
  std::vector<std::string> candidates(const LogicalWorkload& lw, const LocalWorkload& h) const;
  std::string clusterQueueOf(const LogicalWorkload& lw, const LocalWorkload& h) const;
  void updateIntervals(LogicalWorkload& lw);
  std::vector<Interval> deriveIntervals(LogicalWorkload& lw) const;
  /// What the cycle's bound, non-terminated pods hold, per (class, node).
  CompactVector<HeldDevices> heldDevices(const LogicalWorkload& lw, const Cycle& cy) const;
  /// The cycle's devices per class: what its pods held when known, else what it asked for.
  std::vector<DeviceNeed> devicesOf(const LogicalWorkload& lw, const Cycle& cy) const;
  bool isShareClass(const std::string& deviceClass) const;
  /// Levels of the devices behind share class `deviceClass` at `t`: usable and productive in
  /// devices (Σ per node, productive = min(devices, productive shares)), demand as the class's.
  Levels physicalLevelsAt(const std::string& cluster, const std::string& deviceClass,
                          SystemTime t) const;
  /// Calls fn(from, to, physical levels) for each constant piece of [a, b).
  void forEachPhysicalPiece(const std::string& cluster, const std::string& deviceClass, SystemTime a,
                            SystemTime b,
                            const std::function<void(SystemTime, SystemTime, const Levels&)>& fn) const;
  /// Σ over classes of queued demand on `cluster` over [a, b): pieces (from, to, devices).
  std::vector<std::tuple<SystemTime, SystemTime, int64_t>> queuedOnCluster(const std::string& cluster,
                                                                           SystemTime a,
                                                                           SystemTime b) const;
  /// Free devices of a class while work waits on its cluster that none of it can serve.
  static int64_t unusableForBacklog(const Levels& l, int64_t queuedOnCluster);
  void checkCapacity(LogicalWorkload& lw, Cycle& cy);
  void updateRates(LogicalWorkload& lw);
  /// Adds (sign 1) or removes (sign -1) lw's rates to rateTotals.
  void addRates(const LogicalWorkload& lw, int64_t sign);
  void refreshUsable(ClusterData& c);
  bool isDisconnected(const std::string& cluster, SystemTime t) const;
  Levels levelsAt(const std::string& cluster, const std::string& deviceClass, SystemTime t) const;
  /// Σ over classes of strandedExcludingOwnFault on [a, b): pieces (from, to, devices).
  std::vector<std::tuple<SystemTime, SystemTime, int64_t>> incidentStranded(
      const std::string& cluster, SystemTime a, SystemTime b) const;
  void integrateStranded(SystemTime from, SystemTime to);
  void integrateRates(SystemTime from, SystemTime to);
  void prune(SystemTime now);

  // --- incidents (incidents.cpp)
  void onMultiKueueCluster(ClusterData& c, model::EventType type, const model::MultiKueueCluster& m,
                           SystemTime at);
  void onProbe(ClusterData& c, bool connected, SystemTime eventTime, SystemTime observedAt);
  void openIncident(const std::string& cluster, IncidentSource source,
                    std::optional<SystemTime> disconnectedAt, std::optional<SystemTime> reconnectedAt,
                    std::string reason, std::string management, SystemTime observedAt);
  void reconnect(Incident& in, SystemTime at, SystemTime observedAt);
  void evaluateIncidents(SystemTime now);
  /// A workload waits for `cluster` (or was dispatched there) whose devices are not known yet and
  /// whose pods do not exist yet (they will tell).
  bool waitingWithUnknownDevices(const std::string& cluster) const;
  void closeIncident(Incident& in, SystemTime closeAt, bool recovered, std::string failureReason,
                     SystemTime now);
  bool blocked(const std::string& cluster) const;
  void emitIncident(const Incident& in);

  // --- reclaims (reclaims.cpp)
  void scanPreemption(LocalWorkload& l);
  void resolveVictims();
  void updateReclaims(SystemTime now);
  void refreshReclaim(Reclaim& r, SystemTime observedAt);
  ReclaimVictim victimFigures(const VictimRef& v) const;
  std::optional<SystemTime> workSince(const LogicalWorkload& lw, const Cycle& cy,
                                      SystemTime until) const;
  void countInterrupted(LogicalWorkload& lw, Cycle& cy);
  void restoreReclaim(const ReclaimRecord& rec);
  int64_t totalDevices(const LogicalWorkload& lw) const;

  // --- health: stuck and duplicates (health.cpp)
  void classifyStuck(SystemTime now);
  void checkDuplicates(LogicalWorkload& lw);

  // --- advance / snapshot (milestone_engine.cpp, snapshot.cpp)
  void flush();
  Snapshot snapshot() const;
};

/// Unix milliseconds (cycle ids, incident ids).
int64_t unixMillis(SystemTime t);
std::string cycleIdOf(SystemTime queued);
const model::Condition* condition(const model::Conditions& cs, std::string_view type);
const model::BriefCondition* condition(const model::BriefConditions& cs, std::string_view type);
bool conditionTrue(const model::Condition* c);
bool conditionTrue(const model::BriefCondition* c);
bool conditionFalse(const model::Condition* c);
std::string nsName(std::string_view ns, std::string_view name);
/// The parts joined by '/', in one allocation: a record's or an observation's key (outputs.hpp),
/// built for every milestone and observation the engine emits. A chain of operator+ made a
/// temporary of each part and grew the string at each '/' (bench/README.md, change 105).
std::string joinKey(std::initializer_list<std::string_view> parts);

}  // namespace firstwork::engine
