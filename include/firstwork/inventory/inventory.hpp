#pragma once
#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/frozen_list.hpp"
#include "firstwork/core/result.hpp"
#include "firstwork/inventory/pool_tracker.hpp"
#include "firstwork/model/decode.hpp"  // model::EventType
#include "firstwork/model/dra.hpp"
#include "firstwork/model/node.hpp"
#include "firstwork/model/pod.hpp"
#include "firstwork/model/uid_key.hpp"
#include "firstwork/model/workload.hpp"

namespace firstwork::inventory {

// ---------------------------------------------------------------------------------------------
// Device classes: the `device_class` label. A class is one unit; figures of different classes are
// never added together. Label values:
//   * extended resources: the resource name, e.g. "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"
//     (MIG mixed strategy); on a node that shares its GPUs (time-slicing / MPS, see NodeSharing)
//     the resource's *shares* go to "<resource>.shared" (e.g. "nvidia.com/gpu.shared", which is
//     also the name NVIDIA's device plugin uses with renameByDefault), never to the GPU class;
//   * NVIDIA DRA driver defaults (design §5): "gpu.nvidia.com" for whole GPUs (attribute
//     type=gpu) and "gpu.nvidia.com/mig-<profile>" for MIG slices (type=mig, e.g.
//     "gpu.nvidia.com/mig-1g.10gb"); attribute names as published by NVIDIA's driver
//     (NVIDIA/k8s-dra-driver-gpu cmd/gpu-kubelet-plugin/deviceinfo.go @ 03af8246: `type`,
//     `profile`; fixture dra-resourceslice-v1-nvidia-gpu-openshift-conformance.yaml shows
//     `type: {string: gpu}`);
//   * configured DRA DeviceClasses (DeviceClassMapping): the DeviceClass name.
// DRA devices that match no class are *unclassified*: counted per driver, never guessed into a
// class.
// ---------------------------------------------------------------------------------------------

/// Suffix of the class that counts shares of time-sliced / MPS-shared GPUs.
inline constexpr std::string_view kSharedClassSuffix = ".shared";
/// Infix of NVIDIA DRA MIG classes: "<driver>/mig-<profile>".
inline constexpr std::string_view kMigClassInfix = "/mig-";

/// One condition of a simple selector: `device.attributes["<domain>"].<name> == "<value>"`.
struct AttributeEquals {
  /// Qualified ("gpu.nvidia.com/type") or unqualified ("type"). Unqualified names live in the
  /// driver's domain, as in Kubernetes: "type" published by driver d equals "d/type".
  std::string name;
  std::string value;  // compared with the attribute's string form ("gpu", "1g.10gb", "true", "80")
};

/// Maps a DRA DeviceClass to the devices it selects (config `gpu.deviceClasses[]`). DeviceClass
/// objects are not watched: the mapping is configuration, optionally written as the class's CEL
/// selector (parseDeviceClassSelector).
struct DeviceClassMapping {
  std::string name;    // DeviceClass name; also the device_class label value
  std::string driver;  // devices of this driver ...
  std::vector<AttributeEquals> attributes;  // ... whose attributes all match (empty: every device)
};

/// Parses a DeviceClass CEL selector of the simple form
///   device.driver == "x" [&& device.attributes["domain"].name == "value"]...
/// (single or double quotes; `&&` only; the driver comparison is required). The website's
/// example class (`device.driver == "driver.example.com"`) maps to driver driver.example.com.
/// Anything else (||, !, functions, other operators) is an error naming the unsupported part:
/// such classes must be mapped explicitly rather than guessed.
Result<DeviceClassMapping> parseDeviceClassSelector(std::string_view deviceClassName,
                                                    std::string_view celExpression);

/// Inventory configuration (design §5 defaults work without any).
struct InventoryConfig {
  /// Extended resources counted as devices: exact names, or prefixes ending in '*'.
  std::vector<std::string> extendedResources{"nvidia.com/gpu", "nvidia.com/gpu.shared",
                                             "nvidia.com/mig-*"};
  /// Classify devices of `nvidiaDriver` by `typeAttribute` (gpu | mig) and `profileAttribute`.
  bool nvidiaDraDefaults = true;
  std::string nvidiaDriver = "gpu.nvidia.com";
  std::string typeAttribute = "type";
  std::string profileAttribute = "profile";
  /// NVIDIA's DeviceClass for whole GPUs; claims of this class map to "gpu.nvidia.com".
  std::string nvidiaGpuDeviceClass = "gpu.nvidia.com";
  /// NVIDIA's DeviceClass for MIG devices; requests of it resolve to a MIG class when their CEL
  /// selectors pin the profile attribute (classForRequest).
  std::string nvidiaMigDeviceClass = "mig.nvidia.com";
  /// Configured DeviceClasses, checked in order before the NVIDIA defaults; first match wins.
  std::vector<DeviceClassMapping> deviceClasses;
  /// Node taint keys that GPU workloads are expected to tolerate (GKE and many operators taint GPU
  /// nodes `nvidia.com/gpu=present:NoSchedule`); other NoSchedule/NoExecute node taints make the
  /// node's devices unavailable (reason tainted).
  std::vector<std::string> toleratedNodeTaintKeys{"nvidia.com/gpu"};
};

/// The device attribute names the inventory reads with `config` (classifyDevice): the NVIDIA
/// driver's type and profile attributes with the NVIDIA defaults, and every attribute a
/// configured DeviceClass compares. What the daemon's decoders keep of a ResourceSlice's
/// devices (model::DecodeOptions::deviceAttributes): a reader of another attribute must add it
/// here.
std::vector<std::string> deviceAttributesRead(const InventoryConfig& config);

/// The unit a device class counts: the `unit` label. Figures of different units are never added
/// together; within one unit, capacity states (published, usable, allocated, productive) add up
/// across device classes (e.g. whole GPUs from the device plugin and from the DRA driver).
///  - gpu:     one whole physical GPU ("nvidia.com/gpu" on nodes that do not share or partition
///             it, "gpu.nvidia.com" DRA devices of type gpu);
///  - mig:     one MIG instance of the profile the class names ("nvidia.com/mig-<profile>",
///             "gpu.nvidia.com/mig-<profile>");
///  - share:   one time-sliced or MPS replica ("<resource>.shared"); the physical devices behind a
///             share class are reported separately in the base resource's unit;
///  - device:  one device of a configured DeviceClass or another tracked extended resource;
///  - unknown: capacity that could not be classified (reported, never guessed into a class).
enum class Unit : uint8_t { Gpu, Mig, Share, Device, Unknown };
inline constexpr size_t kUnitCount = 5;
/// "gpu" | "mig" | "share" | "device" | "unknown".
std::string_view unitName(Unit unit);

/// Whether a class counts extended-resource units or DRA devices.
enum class ClassKind : uint8_t { ExtendedResource, Dra };

/// Figures of one (cluster, device class): the `firstwork_gpus` gauge and what the engine needs.
/// Invariants: published = usable + unavailable; unavailable = sum(unavailableByReason);
/// free = usable devices not allocated (≤ usable; for extended resources per node,
/// max(0, usable − held) summed, so devices held on one node never free another's).
struct ClassFigures {
  std::string cluster;
  std::string deviceClass;
  ClassKind kind = ClassKind::ExtendedResource;
  int64_t published = 0;    // node allocatable (extended) / devices in ResourceSlices (DRA)
  int64_t usable = 0;
  int64_t unavailable = 0;
  ReasonCounts unavailableByReason{};
  /// Held by pods: extended-resource requests of pods bound to a node and not terminated;
  /// DRA devices in allocation results of allocated claims (each device once). May exceed
  /// `usable` (e.g. pods still bound to a NotReady node).
  int64_t allocated = 0;
  int64_t free = 0;
  Unit unit = Unit::Device;
  /// The class counts shares (time-slicing / MPS); the devices behind them, in `physicalUnit`
  /// (gpu, or mig for shares of MIG instances): published (ceil(allocatable / replicas) per node,
  /// or the node's count label), usable (on usable nodes) and allocated (per usable node
  /// min(devices, shares held): NVIDIA's device plugin hands replicas out across the node's
  /// devices, fewest-allocated first — `distributed` policy, internal/rm/allocate.go @ 046b76bb —
  /// so held shares occupy distinct devices up to the node's device count). Zero when not shared.
  bool shared = false;
  Unit physicalUnit = Unit::Device;
  int64_t physicalDevices = 0;
  int64_t physicalUsable = 0;
  int64_t physicalAllocated = 0;
  /// DRA devices that consume shared counters (overlapping partitions of the same hardware, not
  /// all allocatable at once); included in `published` and, when nothing else applies, `usable`
  /// — so for such classes usable is an upper bound (counter sets are not modelled).
  int64_t partitionDevices = 0;
};

/// Capacity no class matches, per (cluster, source): DRA devices per driver, and extended
/// resources (per resource name) on nodes whose sharing mode is unknown. Never guessed into a
/// class; exported as `unit="unknown"`.
struct UnclassifiedFigures {
  std::string cluster;
  std::string source;  // the driver (DRA) or the extended resource name
  ClassKind kind = ClassKind::Dra;
  int64_t published = 0;
  int64_t usable = 0;
  int64_t allocated = 0;
};

/// How a node hands out one NVIDIA extended resource, as GPU feature discovery labels say.
///  - exclusive:    one unit per device, labelled (replicas 0/1, sharing-strategy none, a product);
///  - time-slicing / mps: replicas > 1 (or a "-SHARED" product, or the resource renamed
///                  "<resource>.shared"); the shares go to "<class>.shared";
///  - mig-single:   nvidia.com/mig.strategy=single and a "<model>-MIG-<profile>" product:
///                  "nvidia.com/gpu" counts MIG instances, class "nvidia.com/mig-<profile>";
///  - mig-mixed:    a "nvidia.com/mig-<profile>" resource;
///  - unlabelled:   no GPU feature discovery labels for the resource: counted as one unit per
///                  device (the device plugin's behaviour without a sharing configuration), but
///                  reported so that operators can see the mode was not confirmed;
///  - unknown:      labels that contradict each other or cannot be read: the capacity is
///                  unclassified (`unit` unknown), with `NodeSharing::problem` saying why.
enum class SharingMode : uint8_t {
  Exclusive,
  TimeSlicing,
  Mps,
  MigSingle,
  MigMixed,
  Unlabelled,
  Unknown,
};
inline constexpr size_t kSharingModeCount = 7;
/// "exclusive" | "time-slicing" | "mps" | "mig-single" | "mig-mixed" | "unlabelled" | "unknown".
std::string_view sharingModeName(SharingMode mode);

/// NVIDIA sharing labels of a node for one extended resource (GPU feature discovery):
/// `<resource>.replicas`, `<resource>.sharing-strategy`, `<resource>.product`,
/// `<resource>.count` (e.g. `nvidia.com/gpu.replicas`, `nvidia.com/mig-1g.10gb.product`), and
/// the node-wide `nvidia.com/mig.strategy`. A renamed share resource ("nvidia.com/gpu.shared")
/// reads the labels of its original name. Sources in src/inventory/node_sharing.cpp.
struct NodeSharing {
  SharingMode mode = SharingMode::Unlabelled;
  std::string strategy;     // <resource>.sharing-strategy as published ("" when absent)
  std::string migStrategy;  // nvidia.com/mig.strategy as published ("" when absent)
  int64_t replicas = 1;     // <resource>.replicas; 1 when absent, 0 (sharing disabled) or 1
  std::optional<int64_t> count;  // <resource>.count (devices; MIG devices under mig-single)
  std::string product;
  bool productShared = false;  // product ends in "-SHARED" (shared, not renamed)
  std::string migProfile;      // the MIG profile the resource counts (mixed or single)
  bool migSingle = false;      // nvidia.com/gpu counts MIG devices (mig.strategy=single)
  std::string problem;         // mode unknown: why
  /// True when the node hands out shares rather than whole devices: replicas > 1 or a "-SHARED"
  /// product. Resources already named "<resource>.shared" are shares regardless.
  bool shared() const { return replicas > 1 || productShared; }
  bool operator==(const NodeSharing&) const = default;
};

/// Reads the sharing mode of extended resource `resource` (an "nvidia.com/" name) from a node's
/// labels. Pure; never guesses: contradictory or unreadable labels give mode unknown.
NodeSharing readNodeSharing(const model::KeyValues& labels, std::string_view resource);
/// The device class `resource` counts on a node with `sharing`; nullopt when the mode is unknown.
std::optional<std::string> sharingClass(std::string_view resource, const NodeSharing& sharing);

/// Sharing mode of one node's NVIDIA resource, for /api/v1/capacity and the node-mode gauge.
struct NodeResourceMode {
  std::string cluster;
  std::string node;
  std::string resource;     // as published in allocatable
  std::string deviceClass;  // "" when unknown
  NodeSharing sharing;
  int64_t units = 0;          // allocatable
  int64_t physicalDevices = 0;  // devices behind shares (0 unless shared)
};

/// Nodes of a cluster with NVIDIA capacity in one sharing mode (firstwork_gpu_nodes): a node
/// counts once in every mode one of its NVIDIA resources with allocatable units is in.
struct GpuNodeCount {
  std::string cluster;
  SharingMode mode = SharingMode::Unknown;
  int64_t nodes = 0;
  bool operator==(const GpuNodeCount&) const = default;
};

/// Devices of one class a pod (or podset) holds or wants.
struct DeviceCount {
  std::string deviceClass;
  int64_t count = 0;
  /// True: held (extended resources of a bound, non-terminated pod; devices of an allocated
  /// claim). False: wanted (unbound pod, or claim not allocated yet: by its requests).
  bool allocated = false;
};

/// What podDevices() reads of a pod: its namespace (its claims'), node, phase, requests and
/// claims. A view: of a decoded pod (its claims in `claims`), or of a record a caller keeps of
/// one (the engine's: in `claimRefs`).
struct PodUse {
  Interned ns;
  Interned nodeName;
  model::PodPhase phase = model::PodPhase::Unknown;
  std::span<const std::pair<Interned, int64_t>> requests;  // a model::ResourceList's entries
  std::span<const model::PodClaim> claims;
  std::span<const model::PodClaimRef> claimRefs;
  std::string_view name;  // the pod's: claimRefs' generated names are rebuilt from it
};

/// What podDevices() found for a pod.
struct PodDevices {
  std::vector<DeviceCount> devices;  // merged per (class, allocated), sorted
  int64_t unclassified = 0;      // devices held/wanted that map to no class
  int64_t unresolvedClaims = 0;  // claims not known yet, or requests with allocationMode All
};

/// Everything the metrics and the API read, taken at once.
struct InventorySnapshot {
  SystemTime at{};  // last advance of the pool-time integral
  std::vector<ClassFigures> classes;  // sorted by (cluster, deviceClass); empty classes omitted
  std::vector<UnclassifiedFigures> unclassified;
  std::vector<GpuNodeCount> gpuNodes;  // sorted by (cluster, mode); zero counts omitted
  /// NVIDIA resources with allocatable units whose sharing mode is unknown or unlabelled (what the
  /// daemon tells the operator about), sorted by (cluster, node, resource). Every node's mode is
  /// nodeModes(): the tick does not copy a record of every node each second.
  std::vector<NodeResourceMode> nodeModeProblems;
  std::vector<PoolStatus> pools;
  std::vector<PoolCount> poolCounts;
  std::vector<PoolSecondsTotal> poolIncompleteSeconds;
  uint64_t rejectedSlices = 0;
  uint64_t rejectedObjects = 0;  // malformed Nodes / Pods / ResourceClaims skipped
};

/// GPU capacity inventory of every cluster: published / usable / unavailable / allocated / free
/// devices per device class in honest units, from Nodes (extended resources), ResourceSlices
/// (DRA, through a PoolTracker), Pods and ResourceClaims; plus the lookups the milestone engine
/// needs to turn pods and podsets into devices of a class. Pure (no I/O, no clock reads: event
/// times are passed in) and single-threaded — owned and called by the daemon's event-loop thread
/// only. Query results are returned by value. Figures are kept as running totals per cluster:
/// every node (its extended resources and the pods holding them) and every DRA pool (its
/// devices) remembers what it adds to its cluster's figures, and a change subtracts the old part
/// and adds the new one. A Node event recounts that node and the pools whose slices name it, a
/// ResourceSlice event the pool(s) it touches, a Pod event the node it is bound to (all lazily, at
/// the next query), a ResourceClaim event its allocated devices — never the whole cluster;
/// updates that change nothing the inventory reads (status churn, heartbeats) cost nothing.
class Inventory {
 public:
  explicit Inventory(InventoryConfig config = {});

  const InventoryConfig& config() const { return config_; }

  // Watch events. Each returns false (and counts the object) when it is malformed; the previous
  // state of that object is kept. Bookmark/Error events are ignored.
  /// ResourceSlice event; see PoolTracker::onSlice for `at`.
  bool onSlice(std::string_view cluster, model::EventType type, const model::ResourceSlice& slice,
               SystemTime at);
  /// Same, keeping the caller's slice instead of a copy (see PoolTracker::onSlice).
  bool onSlice(std::string_view cluster, model::EventType type,
               std::shared_ptr<const model::ResourceSlice> slice, SystemTime at);
  /// Node event: readiness (Ready condition True), cordon, taints, allocatable of tracked
  /// extended resources, NVIDIA sharing labels. Deleting a node removes its extended capacity;
  /// DRA slices still naming it become unavailable (node_not_ready) until they are deleted.
  bool onNode(std::string_view cluster, model::EventType type, const model::Node& node);
  /// Pod event: bound node, phase, extended-resource requests (a record of its own of these; the
  /// pod is not kept).
  bool onPod(std::string_view cluster, model::EventType type, const model::Pod& pod);
  /// The pod `ns`/`name` is gone, its last state unknown (a relist did not list it): it is
  /// deleted as last seen.
  void erasePod(std::string_view cluster, std::string_view ns, std::string_view name);
  /// ResourceClaim event: requests, allocation results, and the pods it names (reserved for,
  /// or owning it). A record of its own of these; the claim is not kept.
  bool onClaim(std::string_view cluster, model::EventType type, const model::ResourceClaim& claim);
  /// The claim of `cluster` with uid `uid` is gone, its last state unknown (a relist did not list
  /// it): it is deleted as last seen. `nameHash` is model::hashOf of its namespace and name, as
  /// the reflector's store kept it (kube::ObjectEvent::nameHash): the claims are kept by name, and
  /// the hash finds the uid's among them without an index by uid. Returns the pods the claim
  /// named (ClaimView::pods), or nullopt when no claim of that uid is tracked.
  std::optional<std::vector<model::UidKey>> eraseClaim(std::string_view cluster,
                                                       std::string_view uid, uint64_t nameHash);
  /// What the inventory keeps of a claim: views into its record, valid until the claim's next
  /// event.
  struct ClaimView {
    std::span<const model::DeviceRequest> requests;
    bool allocated = false;  // status.allocation
    std::span<const model::DeviceAllocation> allocations;
    /// status.reservedFor's pods and the pods among its owner references, each once.
    std::span<const model::UidKey> pods;
  };
  /// The claim `ns`/`name` of `cluster` as last seen, or nullopt when it is not tracked. The
  /// engine reads a generated claim's requests through it rather than keeping claims of its own
  /// (bench/README.md, change 66).
  std::optional<ClaimView> findClaim(std::string_view cluster, std::string_view ns,
                                     std::string_view name) const;
  /// Advances the pool-seconds integral (see PoolTracker::advanceTo).
  void advanceTo(SystemTime at);
  /// Forgets every object of `cluster`; counters are kept.
  void clearCluster(std::string_view cluster, SystemTime at);

  // Snapshots.
  /// Every figure at once. `withPools` = false leaves `pools` empty: the per-pool detail is a
  /// pass over every pool that only /api/v1/pools shows (it asks pools() itself), so the
  /// daemon's 1 s tick, which exports the rest, does not pay it.
  InventorySnapshot snapshot(bool withPools = true) const;
  /// Figures of every non-empty class of `cluster` (all clusters when empty), sorted.
  std::vector<ClassFigures> classes(std::string_view cluster = {}) const;
  /// Figures of one class, nullopt when the class has nothing on that cluster.
  std::optional<ClassFigures> figures(std::string_view cluster, std::string_view deviceClass) const;
  /// Usable devices of a class on a cluster (0 when unknown).
  int64_t usableDevices(std::string_view cluster, std::string_view deviceClass) const;
  /// Usable devices of a class not allocated to anyone (0 when unknown).
  int64_t freeDevices(std::string_view cluster, std::string_view deviceClass) const;
  std::vector<UnclassifiedFigures> unclassified() const;
  /// Per-pool detail for /api/v1/pools, node verdicts included.
  std::vector<PoolStatus> pools() const;
  std::vector<PoolCount> poolCounts() const { return tracker_.poolCounts(); }
  std::vector<PoolSecondsTotal> poolIncompleteSeconds() const {
    return tracker_.incompleteSeconds();
  }
  const PoolTracker& poolTracker() const { return tracker_; }
  uint64_t rejectedObjects() const { return rejected_objects_; }

  // Classification and lookups for the engine.
  /// Class of a DRA device of `driver` (configured mappings first, then the NVIDIA defaults);
  /// nullopt when unclassified.
  std::optional<std::string> classifyDevice(std::string_view driver,
                                            const model::Device& device) const;
  /// Class of an extended resource requested without a node in view (demand): the resource name
  /// when it is tracked, else nullopt. (A pod bound to a sharing node holds "<resource>.shared"
  /// instead; podDevices() accounts for that.)
  std::optional<std::string> classForExtendedResource(std::string_view resource) const;
  /// Class for devices requested through DeviceClass `deviceClassName` (a configured mapping's
  /// name, or NVIDIA's whole-GPU class), nullopt when it cannot be told without guessing. The
  /// engine uses it to resolve DRA claim templates of podsets: count × this class.
  std::optional<std::string> classForDeviceClassName(std::string_view deviceClassName) const;
  /// Extended-resource demand of `pods` pods each requesting `perPod` (milli-units; whole devices
  /// = milli / 1000), tracked resources only, wanted (allocated = false), sorted.
  std::vector<DeviceCount> demandForRequests(const model::ResourceList& perPod, int64_t pods) const;
  /// demandForRequests(podSet.perPodRequests, podSet.count). DRA claim templates of the podset are
  /// resolved by the engine (classForDeviceClassName).
  std::vector<DeviceCount> podSetDemand(const model::PodSet& podSet) const;
  /// Devices `pod` of `cluster` holds or wants: extended resources (held when bound and not
  /// terminated, in the node's class — shares on a sharing node), and DRA claims (through the
  /// claim's allocation results when allocated, else its requests' DeviceClasses). Terminated
  /// pods hold nothing.
  PodDevices podDevices(std::string_view cluster, const model::Pod& pod) const;
  PodDevices podDevices(std::string_view cluster, const PodUse& pod) const;
  /// NVIDIA sharing labels of a node for `resource`, nullopt for an unknown node.
  std::optional<NodeSharing> nodeSharing(std::string_view cluster, std::string_view node,
                                         std::string_view resource = "nvidia.com/gpu") const;
  /// Sharing mode of every NVIDIA extended resource published by the nodes of `cluster` (all
  /// clusters when empty), sorted by (cluster, node, resource).
  std::vector<NodeResourceMode> nodeModes(std::string_view cluster = {}) const;
  /// Nodes with NVIDIA capacity per (cluster, sharing mode), sorted (see GpuNodeCount).
  std::vector<GpuNodeCount> gpuNodeCounts() const;
  /// The entries of nodeModes() with allocatable units and mode unknown or unlabelled.
  std::vector<NodeResourceMode> nodeModeProblems() const;

  // Units and compatibility.
  /// The unit of a device class (see Unit).
  Unit unitOf(std::string_view deviceClass) const;
  /// The unit of the devices behind a class: for "<base>.shared" the unit of <base>, else unitOf.
  Unit physicalUnitOf(std::string_view deviceClass) const;
  /// Classes of `cluster` that can serve a request for `requestClass` (an extended resource name
  /// or a DRA class): the class itself, plus every class a node of the cluster publishes that
  /// resource as (a plain "nvidia.com/gpu" request lands on a time-sliced node as a share, on a
  /// mig.strategy=single node as a MIG instance). Sorted.
  std::vector<std::string> servingClasses(std::string_view cluster,
                                          std::string_view requestClass) const;
  /// servingClasses without `requestClass` itself and without allocating (the engine asks for
  /// every waiting workload at every settle): a reference into the cluster's cache, valid until
  /// the next inventory event.
  const std::vector<std::string>& alsoServedBy(std::string_view cluster,
                                               std::string_view requestClass) const;
  /// Usable devices behind share class `deviceClass` per usable node of `cluster` (empty for
  /// classes that are not shares).
  std::map<std::string, int64_t, std::less<>> physicalUsableByNode(
      std::string_view cluster, std::string_view deviceClass) const;
  /// Class of one DRA request: classForDeviceClassName, or for NVIDIA's MIG DeviceClass
  /// (`mig.nvidia.com`) a request whose CEL selectors pin the profile
  /// (`device.attributes["gpu.nvidia.com"].profile == "1g.10gb"`) → "gpu.nvidia.com/mig-1g.10gb".
  std::optional<std::string> classForRequest(const model::DeviceRequest& request) const;

 private:
  struct NodeRecord {
    bool ready = false;
    bool unschedulable = false;
    bool tainted = false;  // a non-tolerated NoSchedule/NoExecute taint
    model::ResourceList allocatable;  // tracked extended resources only
    model::KeyValues nvidiaLabels;    // "nvidia.com/" labels (sharing)
    bool operator==(const NodeRecord&) const = default;
  };
  /// One per tracked pod (150,000 at the largest estates): what is read of it (its node, and
  /// what it holds: its tracked requests, none once it ended) under its namespace and name, in
  /// a set hashed and compared by them. A 64-byte node a pod (80 with its requests a
  /// CompactVector and an `ended` flag, before change 98), where sharing the decoded pod took a
  /// 32-byte node but kept the pod's 560 bytes alive (bench/README.md, change 96; a record with
  /// an "ns/name" key took a 96-byte node and the key's 48 bytes of heap before change 68).
  struct PodRecord {
    ShortString name;
    Interned ns;
    mutable Interned nodeName;
    /// The tracked requests of a pod that has not ended (Succeeded or Failed), in the pod's
    /// order: what it holds on its node. Empty for a pod that ended.
    mutable FrozenList<std::pair<Interned, int64_t>> requests;
    model::NamespacedName key() const { return {ns, name}; }
  };
  /// One per tracked claim (50,000 at the largest estates): what is read of it (its requests,
  /// allocation results and the pods it names) under its namespace and name, and its uid for a
  /// delete whose last state is unknown (eraseClaim). A 96-byte node with its lists FrozenLists
  /// (change 98; 128 with CompactVectors), where sharing the decoded claim took a 32-byte node
  /// but kept the claim's 256-byte block and its lists, about 560 bytes, alive (bench/README.md,
  /// change 97; an "ns/name" key took a 64-byte node and the key's heap block before change 74).
  struct ClaimRecord {
    ShortString name;
    Interned ns;
    mutable model::UidKey uid;  // a claim deleted and made again under its name has another
    mutable FrozenList<model::DeviceRequest> requests;
    mutable FrozenList<model::DeviceAllocation> allocations;
    mutable FrozenList<model::UidKey> pods;  // ClaimView::pods
    mutable bool allocated = false;
    model::NamespacedName key() const { return {ns, name}; }
  };
  /// A claim's uid where its namespace and name hash to `hash` (eraseClaim): found in the set of
  /// records by that hash and told apart by the uid.
  struct UidAtName {
    size_t hash;
    model::UidKey::Probe uid;
  };
  /// Hashes a record (a PodRecord, a ClaimRecord) by its namespace and name (key()), and a
  /// model::NamespacedName the same way: sets of records are looked up by name without a key of
  /// their own.
  struct RecordHash {
    using is_transparent = void;
    size_t operator()(model::NamespacedName k) const noexcept { return model::hashOf(k); }
    size_t operator()(const UidAtName& k) const noexcept { return k.hash; }
    template <typename Record>
    size_t operator()(const Record& r) const noexcept {
      return model::hashOf(r.key());
    }
  };
  struct RecordEqual {
    using is_transparent = void;
    static model::NamespacedName of(model::NamespacedName k) { return k; }
    template <typename Record>
    static model::NamespacedName of(const Record& r) {
      return r.key();
    }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const { return of(a) == of(b); }
    bool operator()(const UidAtName& a, const ClaimRecord& b) const { return b.uid == a.uid; }
    bool operator()(const ClaimRecord& a, const UidAtName& b) const { return a.uid == b.uid; }
  };
  /// A DRA device: its driver, pool and name as the slice and the claim hold them (pooled
  /// handles, 24 bytes; a "driver\x1fpool\x1fdevice" string was 32 and a heap block, in two
  /// places a device; bench/README.md, change 74). Ordered by the three texts.
  struct DeviceKey {
    Interned driver;
    Interned pool;
    Interned device;
    friend bool operator==(const DeviceKey&, const DeviceKey&) = default;
    friend std::strong_ordering operator<=>(const DeviceKey&, const DeviceKey&) = default;
  };
  struct DeviceKeyHash {
    size_t operator()(const DeviceKey& k) const noexcept;
  };
  /// One allocated DRA device, counted once however many claims hold it.
  struct AllocatedDevice {
    int64_t claims = 0;
    std::optional<Interned> requestedClass;  // from the request's DeviceClass (fallback)
  };
  /// A DRA device as its pool's last count saw it.
  struct DeviceInfo {
    std::optional<Interned> deviceClass;
    bool usable = false;
  };
  /// What a part of a cluster (one node, one pool, the allocated DRA devices) adds to the figures
  /// of one class. The cluster's totals are the sum over its parts; ClassFigures is derived from
  /// them when read.
  struct ClassSums {
    int64_t published = 0;
    int64_t usable = 0;
    int64_t unavailable = 0;
    ReasonCounts unavailableByReason{};
    int64_t partitionDevices = 0;
    int64_t sharedParts = 0;  // nodes publishing the class as shares (ClassFigures::shared)
    int64_t physicalDevices = 0;
    int64_t physicalUsable = 0;
    int64_t physicalAllocated = 0;
    int64_t extendedPublished = 0;  // units published by nodes (decides ClassFigures::kind)
    int64_t extendedAllocated = 0;
    int64_t extendedFree = 0;  // per usable node max(0, usable − held), summed
    int64_t draAllocated = 0;
    int64_t draAllocatedUsable = 0;
    void add(const ClassSums& other, int64_t sign);
  };
  /// The same for capacity no class matches, per source (driver or extended resource).
  struct UnclassifiedSums {
    int64_t published = 0;
    int64_t usable = 0;
    int64_t draPublished = 0;  // decides UnclassifiedFigures::kind
    int64_t extendedAllocated = 0;
    int64_t draAllocated = 0;
    void add(const UnclassifiedSums& other, int64_t sign);
  };
  /// What one node or one pool currently adds to its cluster's totals (a handful of classes).
  struct Contribution {
    std::vector<std::pair<std::string, ClassSums>> classes;
    std::vector<std::pair<std::string, UnclassifiedSums>> unclassified;
    ClassSums& of(std::string_view deviceClass);
    UnclassifiedSums& unclassifiedOf(std::string_view source);
  };
  /// One allocatable extended resource of a node, classified by the node's sharing labels.
  struct NodeResource {
    std::string resource;
    std::optional<std::string> deviceClass;  // nullopt: the node's sharing mode is unknown
    int64_t units = 0;
    int64_t physical = 0;  // devices behind the units when the class counts shares
    NodeSharing sharing;   // NVIDIA resources: what the node's labels say (nodeModes)
    bool operator==(const NodeResource&) const = default;
  };
  /// Derived state of one node name (a known node, or one that pods are bound to).
  struct NodePart {
    bool known = false;                   // in ClusterState::nodes
    std::vector<NodeResource> resources;  // recomputed when the node's record changes
    std::vector<std::pair<std::string, int64_t>> physicalUsable;  // share class -> devices
    Contribution applied;                 // what the node adds to the totals now
  };
  /// Derived state of one DRA pool.
  struct PoolPart {
    std::vector<DeviceKey> deviceKeys;  // its entries in ClusterState::devices
    std::vector<std::string> nodes;       // node names its slices name (node verdicts)
    Contribution applied;
    PoolStatus figures;  // devices, usable, unavailable (by reason), partitionDevices only
  };
  using PoolId = std::pair<std::string, std::string>;  // driver, pool
  struct ServingRefs {
    std::map<std::string, int64_t, std::less<>> nodes;  // class -> nodes publishing it so
    std::vector<std::string> classes;                   // the keys, for alsoServedBy
  };
  struct ClusterState {
    std::map<std::string, NodeRecord, std::less<>> nodes;
    // By the namespace and name inside each record's pod. Only looked up, never walked (so hashed:
    // an ordered tree of 150,000 pods costs a string compare per level on every pod event;
    // bench/README.md, change 36).
    std::unordered_set<PodRecord, RecordHash, RecordEqual> pods;
    std::unordered_set<ClaimRecord, RecordHash, RecordEqual> claims;
    // Maintained on every pod / claim event: node -> resource -> units held; allocated DRA
    // devices (their figures are applied to the totals at once).
    std::map<std::string, std::map<std::string, int64_t, std::less<>>, std::less<>> held;
    std::unordered_map<DeviceKey, AllocatedDevice, DeviceKeyHash> allocatedDevices;

    // Parts whose contribution is out of date, recounted at the next query (fresh()).
    mutable std::map<std::string, bool, std::less<>> dirtyNodes;  // node -> its record changed
    mutable std::set<PoolId> dirtyPools;
    mutable std::map<std::string, NodePart, std::less<>> nodeParts;
    mutable std::map<PoolId, PoolPart> poolParts;
    mutable std::map<std::string, std::set<PoolId>, std::less<>> poolsByNode;
    mutable std::unordered_map<DeviceKey, DeviceInfo, DeviceKeyHash> devices;
    mutable std::map<std::string, ServingRefs, std::less<>> serving;  // requested resource ->
    mutable std::map<std::string, std::map<std::string, int64_t, std::less<>>, std::less<>>
        physicalByClass;  // share class -> usable node -> usable devices behind the shares
    // Running totals: the sum of every part's contribution plus the allocated DRA devices.
    mutable std::map<std::string, ClassSums, std::less<>> totals;
    mutable std::map<std::string, UnclassifiedSums, std::less<>> unclassifiedTotals;
  };

  ClusterState& cluster(std::string_view name);
  const ClusterState* findCluster(std::string_view name) const;
  const ClusterState* fresh(std::string_view name) const;  // dirty parts recounted
  /// Calls fn(cluster, node, resource) for the NVIDIA resources of every node of `cluster` (all
  /// clusters when empty), in (cluster, node, resource) order.
  template <typename Fn>
  void forEachNvidiaResource(std::string_view cluster, Fn&& fn) const;
  /// gpuNodeCounts() and nodeModeProblems() as of the last change to any node's resources:
  /// recounted only when one changed (a node's sharing labels, units, its coming or going), not
  /// on every tick (bench/README.md, change 39).
  struct NodeModeSummary {
    uint64_t version = ~uint64_t{0};
    std::vector<GpuNodeCount> gpuNodes;
    std::vector<NodeResourceMode> problems;
  };
  const NodeModeSummary& nodeModeSummary() const;
  /// A pool recount that finds the same device keys, in the same order, as the pool's last one:
  /// updates their entries in ClusterState::devices in place (moving allocated devices whose
  /// class or usability changed) and returns true; false (nothing changed) otherwise.
  bool updateDevicesInPlace(const ClusterState& state, const std::vector<DeviceKey>& keys,
                            std::vector<std::pair<DeviceKey, DeviceInfo>>& seen) const;
  static void unlinkPoolNodes(const ClusterState& state, const PoolId& id,
                              const std::vector<std::string>& nodes);
  static NodeResourceMode nodeResourceMode(const std::string& cluster, const std::string& node,
                                           const NodeResource& r);
  void recountNode(const ClusterState& state, const std::string& node, bool recordChanged) const;
  void recountPool(std::string_view cluster, const ClusterState& state, const PoolId& id) const;
  static void apply(const ClusterState& state, const Contribution& part, int64_t sign);
  static void serve(const ClusterState& state, const std::string& resource,
                    const std::string& deviceClass, int64_t sign);
  ClassFigures classFigures(std::string_view cluster, const std::string& deviceClass,
                            const ClassSums& sums) const;
  /// Records a pod's holdings (+1) or releases them (−1); its node is recounted.
  void holdPod(ClusterState& state, const PodRecord& pod, int64_t sign) const;
  void holdClaim(ClusterState& state, const ClaimRecord& claim, int64_t sign) const;
  static void markNodeChanged(ClusterState& state, const std::string& node);
  void applyDraDelta(const ClusterState& state, const DeviceKey& key,
                     const AllocatedDevice& device, int64_t sign) const;
  std::optional<UnavailableReason> nodeReason(const ClusterState& state,
                                              std::string_view node) const;
  bool tracked(std::string_view resource) const;
  /// Whether a pod's new version holds what its record does: node, termination and tracked
  /// requests.
  bool samePod(const PodRecord& a, const model::Pod& b) const;
  /// Sets what the record says `pod` holds: its tracked requests, none once it ended.
  void setHeld(const PodRecord& record, const model::Pod& pod) const;
  static NodeSharing sharingOf(const NodeRecord& node, std::string_view resource);
  /// The class `resource` counts on `node` (nullptr: not bound, the resource itself); nullopt
  /// when the node's sharing mode for it is unknown.
  std::optional<std::string> extendedClass(std::string_view resource, const NodeRecord* node) const;
  std::optional<std::string> requestedClass(const ClaimRecord& claim,
                                            const model::DeviceAllocation& result) const;
  std::optional<std::string> classOfAllocation(std::string_view cluster, const ClaimRecord& claim,
                                               const model::DeviceAllocation& result) const;

  InventoryConfig config_;
  PoolTracker tracker_;
  std::map<std::string, ClusterState, std::less<>> clusters_;
  uint64_t rejected_objects_ = 0;
  mutable uint64_t nodeResourcesVersion_ = 0;  // bumped when any node's resources change
  mutable NodeModeSummary nodeModeSummary_;
};

}  // namespace firstwork::inventory
