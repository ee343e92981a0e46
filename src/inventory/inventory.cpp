#include "firstwork/inventory/inventory.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <tuple>
#include <set>
#include <utility>

#include <boost/container/small_vector.hpp>

namespace firstwork::inventory {

namespace {

constexpr std::string_view kNvidiaLabelPrefix = "nvidia.com/";

// Node taints the node lifecycle controller and `kubectl cordon` set: they are reported under the
// node's own reason rather than as a generic taint.
constexpr std::string_view kNotReadyTaint = "node.kubernetes.io/not-ready";
constexpr std::string_view kUnreachableTaint = "node.kubernetes.io/unreachable";
constexpr std::string_view kUnschedulableTaint = "node.kubernetes.io/unschedulable";


// Extended resources are whole numbers; milli-units only come from the quantity parser.
int64_t wholeUnits(int64_t milli) { return milli > 0 ? milli / 1000 : 0; }

// Devices behind `units` shares: units / replicas (a device whose replicas are partly published
// is still a device), or the count label when the replica count is not published.
int64_t physicalBehind(int64_t units, const NodeSharing& sharing) {
  if (sharing.replicas > 1) return (units + sharing.replicas - 1) / sharing.replicas;
  return sharing.count.value_or(0);
}

// "<request>/<subrequest>" (firstAvailable) belongs to request "<request>".
std::string_view requestName(std::string_view result_request) {
  const size_t slash = result_request.find('/');
  return slash == std::string_view::npos ? result_request : result_request.substr(0, slash);
}

void addCount(std::map<std::pair<std::string, bool>, int64_t>& counts, std::string device_class,
              bool allocated, int64_t n) {
  if (n > 0) counts[{std::move(device_class), allocated}] += n;
}

std::vector<DeviceCount> toDeviceCounts(const std::map<std::pair<std::string, bool>, int64_t>& m) {
  std::vector<DeviceCount> out;
  out.reserve(m.size());
  for (const auto& [key, n] : m) out.push_back(DeviceCount{key.first, n, key.second});
  return out;
}

}  // namespace

namespace {

// Calls f(uid) for each pod a claim names: status.reservedFor's pods, then the pods among the
// owner references, each once.
template <typename F>
void forEachClaimPod(const model::ResourceClaim& claim, F&& f) {
  const auto& reserved = claim.reservedForPods;
  for (size_t i = 0; i < reserved.size(); ++i) {
    const std::string_view uid = reserved[i];
    const auto before = reserved.begin() + static_cast<ptrdiff_t>(i);
    if (uid.empty() || std::find(reserved.begin(), before, uid) != before) continue;
    f(uid);
  }
  const auto& owners = claim.meta.ownerReferences;
  for (size_t i = 0; i < owners.size(); ++i) {
    const std::string_view uid = owners[i].uid;
    if (owners[i].kind != "Pod" || uid.empty()) continue;
    if (std::find(reserved.begin(), reserved.end(), uid) != reserved.end()) continue;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = owners[j].kind == "Pod" && owners[j].uid == uid;
    if (!seen) f(uid);
  }
}

// On the stack for the usual one or two pods: the record's list is copied from it.
boost::container::small_vector<model::UidKey, 4> claimPods(const model::ResourceClaim& claim) {
  boost::container::small_vector<model::UidKey, 4> pods;
  forEachClaimPod(claim, [&](std::string_view uid) { pods.emplace_back(uid); });
  return pods;
}

// Whether a record's pods are the ones the claim names, in the same order.
bool sameClaimPods(const FrozenList<model::UidKey>& pods, const model::ResourceClaim& claim) {
  size_t i = 0;
  bool same = true;
  forEachClaimPod(claim, [&](std::string_view uid) {
    if (same && (i >= pods.size() || !(pods.begin()[i] == uid))) same = false;
    ++i;
  });
  return same && i == pods.size();
}

}  // namespace

size_t Inventory::DeviceKeyHash::operator()(const DeviceKey& k) const noexcept {
  const std::hash<std::string_view> hash;
  size_t h = hash(k.device);
  for (std::string_view part : {std::string_view(k.pool), std::string_view(k.driver)}) {
    h ^= hash(part) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

Inventory::Inventory(InventoryConfig config) : config_(std::move(config)) {}

Inventory::ClusterState& Inventory::cluster(std::string_view name) {
  auto it = clusters_.find(name);
  if (it == clusters_.end()) it = clusters_.emplace(std::string(name), ClusterState{}).first;
  return it->second;
}

void Inventory::markNodeChanged(ClusterState& state, const std::string& node) {
  state.dirtyNodes.insert_or_assign(node, true);
  // The node's verdict (ready, cordoned, tainted) applies to the DRA devices its slices publish.
  if (auto it = state.poolsByNode.find(node); it != state.poolsByNode.end()) {
    state.dirtyPools.insert(it->second.begin(), it->second.end());
  }
}

const Inventory::ClusterState* Inventory::findCluster(std::string_view name) const {
  auto it = clusters_.find(name);
  return it == clusters_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------------
// Events

bool Inventory::onSlice(std::string_view cluster_name, model::EventType type,
                        const model::ResourceSlice& slice, SystemTime at) {
  if (type == model::EventType::Bookmark || type == model::EventType::Error) return true;
  return onSlice(cluster_name, type, std::make_shared<const model::ResourceSlice>(slice), at);
}

bool Inventory::onSlice(std::string_view cluster_name, model::EventType type,
                        std::shared_ptr<const model::ResourceSlice> shared, SystemTime at) {
  if (type == model::EventType::Bookmark || type == model::EventType::Error || !shared) return true;
  const model::ResourceSlice& slice = *shared;
  // The pool the slice leaves (deleted, or moved by an update) and the pool it is in now.
  auto before = tracker_.poolOfSlice(cluster_name, slice.meta.name);
  if (!tracker_.onSlice(cluster_name, type, shared, at)) return false;
  ClusterState& state = cluster(cluster_name);
  const bool stays = type != model::EventType::Deleted;
  if (before && !(stays && std::string_view(before->first) == std::string_view(slice.driver) &&
                  std::string_view(before->second) == std::string_view(slice.poolName))) {
    state.dirtyPools.insert(std::move(*before));
  }
  if (stays) state.dirtyPools.emplace(slice.driver, slice.poolName);
  return true;
}

bool Inventory::onNode(std::string_view cluster_name, model::EventType type,
                       const model::Node& node) {
  if (type == model::EventType::Bookmark || type == model::EventType::Error) return true;
  if (node.meta.name.empty()) {
    ++rejected_objects_;
    return false;
  }
  ClusterState& state = cluster(cluster_name);
  auto existing = state.nodes.find(node.meta.name);
  if (type == model::EventType::Deleted) {
    if (existing != state.nodes.end()) {
      state.nodes.erase(existing);
      markNodeChanged(state, node.meta.name.str());
    }
    return true;
  }
  NodeRecord record;
  record.ready = model::isTrue(node.conditions, "Ready");
  record.unschedulable = node.unschedulable;
  for (const auto& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (taint.key == kNotReadyTaint || taint.key == kUnreachableTaint) {
      // The scheduler keeps pods off the node while the taint is there, even if the Ready
      // condition has already flipped back.
      record.ready = false;
    } else if (taint.key == kUnschedulableTaint) {
      record.unschedulable = true;
    } else if (std::find(config_.toleratedNodeTaintKeys.begin(),
                         config_.toleratedNodeTaintKeys.end(),
                         taint.key) == config_.toleratedNodeTaintKeys.end()) {
      record.tainted = true;
    }
  }
  for (const auto& [resource, milli] : node.allocatable) {
    if (tracked(resource)) record.allocatable.emplace_back(resource, milli);
  }
  for (const auto& [key, value] : node.meta.labels) {
    if (key.starts_with(kNvidiaLabelPrefix)) record.nvidiaLabels.emplace_back(key, value);
  }
  // Most Node updates (heartbeats, images, unrelated labels) change nothing the inventory reads:
  // they must not cost a recount.
  if (existing != state.nodes.end() && existing->second == record) return true;
  std::string name = node.meta.name.str();
  markNodeChanged(state, name);
  state.nodes.insert_or_assign(std::move(name), std::move(record));
  return true;
}

namespace {
bool podEnded(const model::Pod& p) {
  return p.phase == model::PodPhase::Succeeded || p.phase == model::PodPhase::Failed;
}
}  // namespace

bool Inventory::onPod(std::string_view cluster_name, model::EventType type, const model::Pod& pod) {
  if (type == model::EventType::Bookmark || type == model::EventType::Error) return true;
  if (pod.meta.name.empty()) {
    ++rejected_objects_;
    return false;
  }
  if (type == model::EventType::Deleted) {
    erasePod(cluster_name, pod.meta.namespace_, pod.meta.name);
    return true;
  }
  ClusterState& state = cluster(cluster_name);
  auto existing = state.pods.find(model::namespacedName(pod.meta));
  if (existing == state.pods.end()) {
    PodRecord record{pod.meta.name, pod.meta.namespace_, pod.nodeName, {}};
    setHeld(record, pod);
    holdPod(state, record, +1);
    state.pods.insert(std::move(record));
    return true;
  }
  // Most pod events are status churn: container statuses change nothing here; only binding,
  // termination and requests do.
  if (!samePod(*existing, pod)) {
    holdPod(state, *existing, -1);
    existing->nodeName = pod.nodeName;
    setHeld(*existing, pod);
    holdPod(state, *existing, +1);
  }
  return true;
}

void Inventory::setHeld(const PodRecord& record, const model::Pod& pod) const {
  if (podEnded(pod)) {
    record.requests.clear();
    return;
  }
  boost::container::small_vector<std::pair<Interned, int64_t>, 4> held;
  for (const auto& r : pod.requests) {
    if (tracked(r.first)) held.push_back(r);
  }
  record.requests.assign(held);
}

void Inventory::erasePod(std::string_view cluster_name, std::string_view ns,
                         std::string_view name) {
  ClusterState& state = cluster(cluster_name);
  auto existing = state.pods.find(model::NamespacedName{ns, name});
  if (existing == state.pods.end()) return;
  holdPod(state, *existing, -1);
  state.pods.erase(existing);
}

bool Inventory::samePod(const PodRecord& a, const model::Pod& b) const {
  if (a.nodeName != b.nodeName) return false;
  if (podEnded(b)) return a.requests.empty();
  // The record's requests are b's tracked ones, in order.
  size_t i = 0;
  for (const auto& r : b.requests) {
    if (!tracked(r.first)) continue;
    if (i == a.requests.size() || a.requests[i] != r) return false;
    ++i;
  }
  return i == a.requests.size();
}

bool Inventory::onClaim(std::string_view cluster_name, model::EventType type,
                        const model::ResourceClaim& claim) {
  static_assert(sizeof(ClaimRecord) <= 88, "a claim's record in jemalloc's 96-byte class");
  static_assert(sizeof(PodRecord) <= 56, "a pod's record in jemalloc's 64-byte class");
  if (type == model::EventType::Bookmark || type == model::EventType::Error) return true;
  if (claim.meta.name.empty()) {
    ++rejected_objects_;
    return false;
  }
  ClusterState& state = cluster(cluster_name);
  auto existing = state.claims.find(model::namespacedName(claim.meta));
  if (type == model::EventType::Deleted) {
    if (existing != state.claims.end()) {
      holdClaim(state, *existing, -1);
      state.claims.erase(existing);
    }
    return true;
  }
  if (existing == state.claims.end()) {
    ClaimRecord record{
        claim.meta.name, claim.meta.namespace_, model::UidKey(claim.meta.uid), {}, {}, {}, false};
    record.requests.assign(claim.requests);
    record.allocations.assign(claim.allocations);
    record.pods.assign(claimPods(claim));
    record.allocated = claim.allocated;
    holdClaim(state, record, +1);
    state.claims.insert(std::move(record));
    return true;
  }
  // The same name, so the same place in the set: the record takes the latest facts in place, and
  // nothing is built when they are the ones it has (a claim seldom changes once allocated; a
  // relist delivers every claim again). An unallocated claim's results are not compared.
  const ClaimRecord& record = *existing;  // its facts are mutable: they are not its key
  const bool sameFigures = record.allocated == claim.allocated &&
                           record.requests.equals(claim.requests) &&
                           (!claim.allocated || record.allocations.equals(claim.allocations));
  if (!sameFigures) {
    FrozenList<model::DeviceRequest> requests;
    requests.assign(claim.requests);
    FrozenList<model::DeviceAllocation> allocations;
    allocations.assign(claim.allocations);
    holdClaim(state, record, -1);
    record.requests = std::move(requests);
    record.allocations = std::move(allocations);
    record.allocated = claim.allocated;
    holdClaim(state, record, +1);
  }
  if (!(record.uid == claim.meta.uid)) record.uid = model::UidKey(claim.meta.uid);
  if (!sameClaimPods(record.pods, claim)) record.pods.assign(claimPods(claim));
  return true;
}

std::optional<std::vector<model::UidKey>> Inventory::eraseClaim(std::string_view cluster_name,
                                                                std::string_view uid,
                                                                uint64_t nameHash) {
  auto it = clusters_.find(cluster_name);
  if (it == clusters_.end()) return std::nullopt;
  ClusterState& state = it->second;
  auto existing = state.claims.find(UidAtName{nameHash, model::UidKey::Probe(uid)});
  if (existing == state.claims.end()) return std::nullopt;
  std::vector<model::UidKey> pods(existing->pods.begin(), existing->pods.end());
  holdClaim(state, *existing, -1);
  state.claims.erase(existing);
  return pods;
}

std::optional<Inventory::ClaimView> Inventory::findClaim(std::string_view cluster_name,
                                                         std::string_view ns,
                                                         std::string_view name) const {
  const ClusterState* state = findCluster(cluster_name);
  if (state == nullptr) return std::nullopt;
  auto it = state->claims.find(model::NamespacedName{ns, name});
  if (it == state->claims.end()) return std::nullopt;
  return ClaimView{it->requests.span(), it->allocated, it->allocations.span(), it->pods.span()};
}

void Inventory::advanceTo(SystemTime at) { tracker_.advanceTo(at); }

void Inventory::clearCluster(std::string_view cluster_name, SystemTime at) {
  tracker_.clearCluster(cluster_name, at);
  if (auto it = clusters_.find(cluster_name); it != clusters_.end()) {
    clusters_.erase(it);
    ++nodeResourcesVersion_;
  }
}

// ---------------------------------------------------------------------------------------------
// Node verdicts and sharing

std::optional<UnavailableReason> Inventory::nodeReason(const ClusterState& state,
                                                       std::string_view node) const {
  auto it = state.nodes.find(node);
  // An unknown node is gone (its slices are about to be garbage-collected) or not listed yet:
  // either way nothing can be scheduled there now.
  if (it == state.nodes.end() || !it->second.ready) return UnavailableReason::NodeNotReady;
  if (it->second.unschedulable) return UnavailableReason::NodeUnschedulable;
  if (it->second.tainted) return UnavailableReason::Tainted;
  return std::nullopt;
}

NodeSharing Inventory::sharingOf(const NodeRecord& node, std::string_view resource) {
  return readNodeSharing(node.nvidiaLabels, resource);
}

std::optional<std::string> Inventory::extendedClass(std::string_view resource,
                                                    const NodeRecord* node) const {
  if (node == nullptr || !resource.starts_with(kNvidiaLabelPrefix)) return std::string(resource);
  return sharingClass(resource, sharingOf(*node, resource));
}

std::optional<NodeSharing> Inventory::nodeSharing(std::string_view cluster_name,
                                                  std::string_view node,
                                                  std::string_view resource) const {
  const ClusterState* state = findCluster(cluster_name);
  if (state == nullptr) return std::nullopt;
  auto it = state->nodes.find(node);
  if (it == state->nodes.end()) return std::nullopt;
  return sharingOf(it->second, resource);
}

NodeResourceMode Inventory::nodeResourceMode(const std::string& cluster, const std::string& node,
                                             const NodeResource& r) {
  NodeResourceMode m;
  m.cluster = cluster;
  m.node = node;
  m.resource = r.resource;
  m.sharing = r.sharing;
  m.deviceClass = r.deviceClass.value_or(std::string());
  m.units = r.units;
  if (!m.deviceClass.empty() && m.deviceClass.ends_with(kSharedClassSuffix)) {
    m.physicalDevices = r.physical;
  }
  return m;
}

template <typename Fn>
void Inventory::forEachNvidiaResource(std::string_view cluster_name, Fn&& fn) const {
  for (const auto& [name, state] : clusters_) {
    if (!cluster_name.empty() && name != cluster_name) continue;
    fresh(name);  // the labels are read once per node change, not per call
    for (const auto& [node_name, part] : state.nodeParts) {
      for (const auto& r : part.resources) {
        if (r.resource.starts_with(kNvidiaLabelPrefix)) fn(name, node_name, r);
      }
    }
  }
}

std::vector<NodeResourceMode> Inventory::nodeModes(std::string_view cluster_name) const {
  std::vector<NodeResourceMode> out;
  forEachNvidiaResource(cluster_name, [&](const std::string& cluster, const std::string& node,
                                          const NodeResource& r) {
    out.push_back(nodeResourceMode(cluster, node, r));
  });
  return out;
}

const Inventory::NodeModeSummary& Inventory::nodeModeSummary() const {
  for (const auto& entry : clusters_) fresh(entry.first);  // pending node recounts first
  NodeModeSummary& m = nodeModeSummary_;
  if (m.version == nodeResourcesVersion_) return m;
  m.version = nodeResourcesVersion_;
  m.gpuNodes.clear();
  m.problems.clear();
  // One walk for both: per (cluster, mode) the nodes with units in it, and the resources whose
  // mode is unknown or unlabelled.
  std::vector<GpuNodeCount>& out = m.gpuNodes;
  std::array<int64_t, kSharingModeCount> counts{};
  const std::string* cluster = nullptr;
  const std::string* node = nullptr;
  uint32_t modes = 0;  // of `node`: a bit per SharingMode
  auto closeNode = [&] {
    for (size_t i = 0; i < kSharingModeCount; ++i) counts[i] += (modes >> i) & 1U;
    modes = 0;
  };
  auto closeCluster = [&] {
    closeNode();
    for (size_t i = 0; i < kSharingModeCount; ++i) {
      if (counts[i] > 0) out.push_back({*cluster, static_cast<SharingMode>(i), counts[i]});
    }
    counts = {};
  };
  forEachNvidiaResource({}, [&](const std::string& c, const std::string& n, const NodeResource& r) {
    if (r.units <= 0) return;
    if (cluster != &c) {
      if (cluster != nullptr) closeCluster();
      cluster = &c;
    } else if (node != &n) {
      closeNode();
    }
    node = &n;
    modes |= 1U << static_cast<unsigned>(r.sharing.mode);
    if (r.sharing.mode == SharingMode::Unknown || r.sharing.mode == SharingMode::Unlabelled)
      m.problems.push_back(nodeResourceMode(c, n, r));
  });
  if (cluster != nullptr) closeCluster();
  std::sort(out.begin(), out.end(), [](const GpuNodeCount& a, const GpuNodeCount& b) {
    return std::tie(a.cluster, a.mode) < std::tie(b.cluster, b.mode);
  });
  return m;
}

std::vector<GpuNodeCount> Inventory::gpuNodeCounts() const { return nodeModeSummary().gpuNodes; }

std::vector<NodeResourceMode> Inventory::nodeModeProblems() const {
  return nodeModeSummary().problems;
}

// ---------------------------------------------------------------------------------------------
// Figures

void Inventory::ClassSums::add(const ClassSums& o, int64_t sign) {
  published += sign * o.published;
  usable += sign * o.usable;
  unavailable += sign * o.unavailable;
  for (size_t i = 0; i < unavailableByReason.size(); ++i) {
    unavailableByReason[i] += sign * o.unavailableByReason[i];
  }
  partitionDevices += sign * o.partitionDevices;
  sharedParts += sign * o.sharedParts;
  physicalDevices += sign * o.physicalDevices;
  physicalUsable += sign * o.physicalUsable;
  physicalAllocated += sign * o.physicalAllocated;
  extendedPublished += sign * o.extendedPublished;
  extendedAllocated += sign * o.extendedAllocated;
  extendedFree += sign * o.extendedFree;
  draAllocated += sign * o.draAllocated;
  draAllocatedUsable += sign * o.draAllocatedUsable;
}

void Inventory::UnclassifiedSums::add(const UnclassifiedSums& o, int64_t sign) {
  published += sign * o.published;
  usable += sign * o.usable;
  draPublished += sign * o.draPublished;
  extendedAllocated += sign * o.extendedAllocated;
  draAllocated += sign * o.draAllocated;
}

namespace {

// Entry `key` of a short (class or resource -> value) vector, appended when missing. A node or a
// pool touches a handful of classes: a linear search beats a map.
template <typename T>
T& entry(std::vector<std::pair<std::string, T>>& v, std::string_view key) {
  for (auto& [k, value] : v) {
    if (k == key) return value;
  }
  return v.emplace_back(std::string(key), T{}).second;
}

int64_t valueOf(const std::vector<std::pair<std::string, int64_t>>& v, std::string_view key) {
  for (const auto& [k, value] : v) {
    if (k == key) return value;
  }
  return 0;
}

}  // namespace

Inventory::ClassSums& Inventory::Contribution::of(std::string_view deviceClass) {
  return entry(classes, deviceClass);
}

Inventory::UnclassifiedSums& Inventory::Contribution::unclassifiedOf(std::string_view source) {
  return entry(unclassified, source);
}

void Inventory::apply(const ClusterState& state, const Contribution& part, int64_t sign) {
  for (const auto& [device_class, sums] : part.classes) {
    auto it = state.totals.find(device_class);
    if (it == state.totals.end()) it = state.totals.emplace(device_class, ClassSums{}).first;
    it->second.add(sums, sign);
  }
  for (const auto& [source, sums] : part.unclassified) {
    auto it = state.unclassifiedTotals.find(source);
    if (it == state.unclassifiedTotals.end()) {
      it = state.unclassifiedTotals.emplace(source, UnclassifiedSums{}).first;
    }
    it->second.add(sums, sign);
  }
}

void Inventory::serve(const ClusterState& state, const std::string& resource,
                      const std::string& deviceClass, int64_t sign) {
  auto refs = state.serving.find(resource);
  if (refs == state.serving.end()) refs = state.serving.emplace(resource, ServingRefs{}).first;
  auto& nodes = refs->second.nodes;
  auto it = nodes.try_emplace(deviceClass, 0).first;
  it->second += sign;
  const bool appeared = sign > 0 && it->second == sign;
  const bool gone = it->second <= 0;
  if (gone) nodes.erase(it);
  if (nodes.empty()) {
    state.serving.erase(refs);
  } else if (appeared || gone) {
    refs->second.classes.clear();
    for (const auto& [c, n] : nodes) refs->second.classes.push_back(c);
  }
}

void Inventory::holdPod(ClusterState& state, const PodRecord& pod, int64_t sign) const {
  if (pod.nodeName.empty()) return;
  auto& by_resource = state.held[pod.nodeName];
  for (const auto& [resource, milli] : pod.requests) {
    if (!tracked(resource)) continue;
    const int64_t units = wholeUnits(milli);
    if (units == 0) continue;
    auto it = by_resource.find(resource);
    if (it == by_resource.end()) it = by_resource.emplace(resource, 0).first;
    it->second += sign * units;
    if (it->second == 0) by_resource.erase(it);
  }
  if (by_resource.empty()) state.held.erase(pod.nodeName);
  // Only the node's allocation figures change (its record did not).
  state.dirtyNodes.try_emplace(pod.nodeName, false);
}

void Inventory::holdClaim(ClusterState& state, const ClaimRecord& claim, int64_t sign) const {
  if (!claim.allocated) return;
  for (const auto& result : claim.allocations) {
    DeviceKey key{result.driver, result.pool, result.device};
    auto it = state.allocatedDevices.find(key);
    if (sign > 0) {
      if (it == state.allocatedDevices.end()) {
        AllocatedDevice device;
        if (auto requested = requestedClass(claim, result)) {
          device.requestedClass.emplace(*requested);
        }
        it = state.allocatedDevices.emplace(std::move(key), std::move(device)).first;
      }
      // A device counts once however many claims hold it: only 0 → 1 and 1 → 0 change figures.
      if (++it->second.claims == 1) applyDraDelta(state, it->first, it->second, +1);
    } else if (it != state.allocatedDevices.end() && --it->second.claims <= 0) {
      applyDraDelta(state, it->first, it->second, -1);
      state.allocatedDevices.erase(it);
    }
  }
}

// An allocated device counts in the class its pool's last count gave it (usable or not), or, while
// its slice is gone or not counted yet, in the class its request asked for.
void Inventory::applyDraDelta(const ClusterState& state, const DeviceKey& key,
                              const AllocatedDevice& device, int64_t sign) const {
  auto it = state.devices.find(key);
  const std::optional<Interned>& device_class =
      it != state.devices.end() ? it->second.deviceClass : device.requestedClass;
  if (!device_class) {
    auto u = state.unclassifiedTotals.find(key.driver.str());
    if (u == state.unclassifiedTotals.end()) {
      u = state.unclassifiedTotals.emplace(key.driver.str(), UnclassifiedSums{}).first;
    }
    u->second.draAllocated += sign;
    return;
  }
  auto f = state.totals.find(device_class->str());
  if (f == state.totals.end()) f = state.totals.emplace(device_class->str(), ClassSums{}).first;
  f->second.draAllocated += sign;
  if (it != state.devices.end() && it->second.usable) f->second.draAllocatedUsable += sign;
}

std::optional<std::string> Inventory::requestedClass(const ClaimRecord& claim,
                                                     const model::DeviceAllocation& result) const {
  const std::string_view request = requestName(result.request);
  for (const auto& r : claim.requests) {
    if (r.name == request) return classForRequest(r);
  }
  return std::nullopt;
}

std::optional<std::string> Inventory::classOfAllocation(std::string_view cluster_name,
                                                        const ClaimRecord& claim,
                                                        const model::DeviceAllocation& result) const {
  if (auto device = tracker_.findDevice(cluster_name, result.driver, result.pool, result.device)) {
    return classifyDevice(result.driver, *device->device);
  }
  // The device's slice is gone (or not listed yet): the request's DeviceClass still says what was
  // asked for.
  return requestedClass(claim, result);
}

// A node's part: its extended resources (published, usable or why not, devices behind shares) and
// what the pods bound to it hold (allocated, free per node, devices behind held shares). A node
// name that pods are bound to but that is not (or no longer) known holds in the requested
// resource's own class, on no usable node.
void Inventory::recountNode(const ClusterState& state, const std::string& node_name,
                            bool recordChanged) const {
  NodePart& part = state.nodeParts[node_name];
  auto record_it = state.nodes.find(node_name);
  const NodeRecord* record = record_it == state.nodes.end() ? nullptr : &record_it->second;
  if (recordChanged) {
    for (const auto& r : part.resources) {
      if (r.deviceClass && *r.deviceClass != r.resource) serve(state, r.resource, *r.deviceClass, -1);
    }
    std::vector<NodeResource> before = std::move(part.resources);
    part.resources.clear();
    if (record != nullptr) {
      for (const auto& [resource, milli] : record->allocatable) {
        NodeResource r;
        r.resource = resource;
        r.units = wholeUnits(milli);
        if (resource.starts_with(kNvidiaLabelPrefix)) {
          r.sharing = sharingOf(*record, resource);
          r.deviceClass = sharingClass(resource, r.sharing);
        } else {
          r.deviceClass = resource;
        }
        if (r.deviceClass && *r.deviceClass != resource) serve(state, resource, *r.deviceClass, +1);
        if (r.deviceClass && r.deviceClass->ends_with(kSharedClassSuffix)) {
          // Shares: report the devices behind them, never count them as devices.
          r.physical = physicalBehind(
              r.units, resource.starts_with(kNvidiaLabelPrefix) ? r.sharing : sharingOf(*record, resource));
        }
        part.resources.push_back(std::move(r));
      }
    }
    part.known = record != nullptr;
    // A node's status updates (conditions, heartbeats) leave its resources as they were.
    if (part.resources != before) ++nodeResourcesVersion_;
  }

  Contribution next;
  std::vector<std::pair<std::string, int64_t>> usable;    // class -> usable units here
  std::vector<std::pair<std::string, int64_t>> physical;  // share class -> usable devices here
  const auto reason = nodeReason(state, node_name);
  for (const auto& r : part.resources) {
    if (r.units == 0) continue;
    if (!r.deviceClass) {
      // The node's labels do not say what the units are: reported, never guessed.
      UnclassifiedSums& u = next.unclassifiedOf(r.resource);
      u.published += r.units;
      if (!reason) u.usable += r.units;
      continue;
    }
    ClassSums& f = next.of(*r.deviceClass);
    f.published += r.units;
    f.extendedPublished += r.units;
    if (reason) {
      f.unavailable += r.units;
      f.unavailableByReason[static_cast<size_t>(*reason)] += r.units;
    } else {
      f.usable += r.units;
      entry(usable, *r.deviceClass) += r.units;
    }
    if (r.deviceClass->ends_with(kSharedClassSuffix)) {
      f.sharedParts = 1;
      f.physicalDevices += r.physical;
      if (!reason) {
        f.physicalUsable += r.physical;
        entry(physical, *r.deviceClass) += r.physical;
      }
    }
  }
  std::vector<std::pair<std::string, int64_t>> held;  // class -> units held here (usable node)
  if (auto held_it = state.held.find(node_name); held_it != state.held.end()) {
    for (const auto& [resource, units] : held_it->second) {
      std::string_view device_class = resource;
      if (part.known) {
        // A known node that does not publish the resource serves it through DRA
        // (DRAExtendedResource): those devices are counted through the claim, not twice.
        const NodeResource* published = nullptr;
        for (const auto& r : part.resources) {
          if (r.resource == resource) published = &r;
        }
        if (published == nullptr) continue;
        if (!published->deviceClass) {
          next.unclassifiedOf(resource).extendedAllocated += units;
          continue;
        }
        device_class = *published->deviceClass;
      }
      next.of(device_class).extendedAllocated += units;
      if (!usable.empty()) entry(held, device_class) += units;
    }
  }
  // Free is per node: devices held on one node do not free devices on another.
  for (const auto& [device_class, units] : usable) {
    next.of(device_class).extendedFree += std::max<int64_t>(0, units - valueOf(held, device_class));
  }
  // Devices behind shares with at least one tenant: min(devices, shares held) (the device plugin
  // spreads replicas over the node's devices; see ClassFigures).
  for (const auto& [device_class, devices] : physical) {
    next.of(device_class).physicalAllocated += std::min(devices, valueOf(held, device_class));
  }

  apply(state, part.applied, -1);
  apply(state, next, +1);
  part.applied = std::move(next);
  for (const auto& [device_class, devices] : part.physicalUsable) {
    auto it = state.physicalByClass.find(device_class);
    if (it == state.physicalByClass.end()) continue;
    it->second.erase(node_name);
    if (it->second.empty()) state.physicalByClass.erase(it);
  }
  for (const auto& [device_class, devices] : physical) {
    if (devices > 0) state.physicalByClass[device_class][node_name] = devices;
  }
  part.physicalUsable = std::move(physical);
  if (!part.known && !state.held.contains(node_name)) state.nodeParts.erase(node_name);
}

// A pool's part: its devices per class (published, usable or why not), and the class and
// usability that its allocated devices count with.
void Inventory::recountPool(std::string_view cluster_name, const ClusterState& state,
                            const PoolId& id) const {
  PoolPart next;
  const Interned driver(id.first);
  const Interned pool_name(id.second);
  std::vector<std::pair<DeviceKey, DeviceInfo>> seen;
  std::vector<std::string_view> nodes;
  tracker_.forEachPoolDevice(cluster_name, id.first, id.second, [&](const DeviceView& view) {
    std::optional<UnavailableReason> reason = view.poolReason;
    if (!reason && !view.nodeName.empty()) reason = nodeReason(state, view.nodeName);
    if (!reason && view.tainted) reason = UnavailableReason::Tainted;
    PoolStatus& pool = next.figures;
    ++pool.devices;
    if (view.device->consumesCounters) ++pool.partitionDevices;
    if (reason) {
      ++pool.unavailable;
      ++pool.unavailableByReason[static_cast<size_t>(*reason)];
    } else {
      ++pool.usable;
    }
    auto device_class = classifyDevice(view.driver, *view.device);
    if (!device_class) {
      UnclassifiedSums& u = next.applied.unclassifiedOf(view.driver);
      ++u.published;
      ++u.draPublished;
      if (!reason) ++u.usable;
    } else {
      ClassSums& f = next.applied.of(*device_class);
      ++f.published;
      if (view.device->consumesCounters) ++f.partitionDevices;
      if (reason) {
        ++f.unavailable;
        ++f.unavailableByReason[static_cast<size_t>(*reason)];
      } else {
        ++f.usable;
      }
    }
    if (!view.nodeName.empty()) nodes.push_back(view.nodeName);
    DeviceInfo info{std::nullopt, !reason};
    if (device_class) info.deviceClass.emplace(*device_class);
    seen.emplace_back(DeviceKey{driver, pool_name, view.device->name}, std::move(info));
  });
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  next.nodes.assign(nodes.begin(), nodes.end());

  auto old = state.poolParts.find(id);
  // Most recounts keep the pool's devices (a generation bump, a taint, a node's verdict): their
  // entries are updated in place, and only allocated devices whose class or usability changed
  // move. (Erasing and re-adding every entry cost four hash lookups a device.)
  if (old != state.poolParts.end() && updateDevicesInPlace(state, old->second.deviceKeys, seen)) {
    apply(state, old->second.applied, -1);
    apply(state, next.applied, +1);
    if (old->second.nodes != next.nodes) {
      unlinkPoolNodes(state, id, old->second.nodes);
      for (const auto& node : next.nodes) state.poolsByNode[node].insert(id);
    }
    next.deviceKeys = std::move(old->second.deviceKeys);
    old->second = std::move(next);
    return;
  }
  // Allocated devices of the pool (before or after) move from their old class and usability to
  // the new ones.
  std::vector<DeviceKey> allocated;
  auto noteAllocated = [&state, &allocated](const DeviceKey& key) {
    if (state.allocatedDevices.contains(key)) allocated.push_back(key);
  };
  if (old != state.poolParts.end()) {
    for (const auto& key : old->second.deviceKeys) noteAllocated(key);
  }
  for (const auto& device : seen) noteAllocated(device.first);
  std::sort(allocated.begin(), allocated.end());
  allocated.erase(std::unique(allocated.begin(), allocated.end()), allocated.end());
  for (const auto& key : allocated) applyDraDelta(state, key, state.allocatedDevices.at(key), -1);
  if (old != state.poolParts.end()) {
    for (const auto& key : old->second.deviceKeys) state.devices.erase(key);
    apply(state, old->second.applied, -1);
    unlinkPoolNodes(state, id, old->second.nodes);
  }
  for (auto& [key, info] : seen) {
    // First copy wins when a pool publishes a name twice (such a pool is unusable anyway).
    auto [it, inserted] = state.devices.try_emplace(std::move(key), std::move(info));
    if (inserted) next.deviceKeys.push_back(it->first);
  }
  for (const auto& key : allocated) applyDraDelta(state, key, state.allocatedDevices.at(key), +1);
  apply(state, next.applied, +1);
  for (const auto& node : next.nodes) state.poolsByNode[node].insert(id);
  if (next.deviceKeys.empty()) {
    if (old != state.poolParts.end()) state.poolParts.erase(old);
  } else if (old != state.poolParts.end()) {
    old->second = std::move(next);
  } else {
    state.poolParts.emplace(id, std::move(next));
  }
}

bool Inventory::updateDevicesInPlace(const ClusterState& state, const std::vector<DeviceKey>& keys,
                                     std::vector<std::pair<DeviceKey, DeviceInfo>>& seen) const {
  if (keys.size() != seen.size()) return false;
  std::vector<DeviceInfo*> entries;
  entries.reserve(seen.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    if (keys[i] != seen[i].first) return false;
    auto it = state.devices.find(keys[i]);
    if (it == state.devices.end()) return false;
    entries.push_back(&it->second);
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    DeviceInfo& entry = *entries[i];
    DeviceInfo& now = seen[i].second;
    if (entry.deviceClass == now.deviceClass && entry.usable == now.usable) continue;
    auto allocated = state.allocatedDevices.find(keys[i]);
    if (allocated != state.allocatedDevices.end()) applyDraDelta(state, keys[i], allocated->second, -1);
    entry = std::move(now);
    if (allocated != state.allocatedDevices.end()) applyDraDelta(state, keys[i], allocated->second, +1);
  }
  return true;
}

void Inventory::unlinkPoolNodes(const ClusterState& state, const PoolId& id,
                                const std::vector<std::string>& nodes) {
  for (const auto& node : nodes) {
    auto it = state.poolsByNode.find(node);
    if (it == state.poolsByNode.end()) continue;
    it->second.erase(id);
    if (it->second.empty()) state.poolsByNode.erase(it);
  }
}

const Inventory::ClusterState* Inventory::fresh(std::string_view cluster_name) const {
  const ClusterState* state = findCluster(cluster_name);
  if (state == nullptr) return state;
  if (!state->dirtyNodes.empty()) {
    const auto nodes = std::exchange(state->dirtyNodes, {});
    for (const auto& [node, recordChanged] : nodes) {
      recountNode(*state, node, recordChanged);
    }
  }
  if (!state->dirtyPools.empty()) {
    const auto pools = std::exchange(state->dirtyPools, {});
    for (const auto& id : pools) recountPool(cluster_name, *state, id);
  }
  return state;
}

ClassFigures Inventory::classFigures(std::string_view cluster_name, const std::string& deviceClass,
                                     const ClassSums& sums) const {
  ClassFigures f;
  f.cluster = std::string(cluster_name);
  f.deviceClass = deviceClass;
  // A class published by nodes counts extended-resource units, one published by slices DRA
  // devices; a class only held so far is what holds it.
  if (sums.extendedPublished > 0) {
    f.kind = ClassKind::ExtendedResource;
  } else if (sums.published > 0) {
    f.kind = ClassKind::Dra;
  } else {
    f.kind = sums.extendedAllocated != 0 ? ClassKind::ExtendedResource : ClassKind::Dra;
  }
  f.published = sums.published;
  f.usable = sums.usable;
  f.unavailable = sums.unavailable;
  f.unavailableByReason = sums.unavailableByReason;
  f.allocated = sums.extendedAllocated + sums.draAllocated;
  f.free = f.kind == ClassKind::ExtendedResource ? sums.extendedFree
                                                  : f.usable - sums.draAllocatedUsable;
  f.unit = unitOf(deviceClass);
  f.shared = sums.sharedParts > 0;
  f.physicalUnit = physicalUnitOf(deviceClass);
  f.physicalDevices = sums.physicalDevices;
  f.physicalUsable = sums.physicalUsable;
  f.physicalAllocated = sums.physicalAllocated;
  f.partitionDevices = sums.partitionDevices;
  return f;
}

std::vector<ClassFigures> Inventory::classes(std::string_view cluster_name) const {
  std::vector<ClassFigures> out;
  for (const auto& [name, state] : clusters_) {
    if (!cluster_name.empty() && name != cluster_name) continue;
    fresh(name);
    for (const auto& [device_class, sums] : state.totals) {
      // A class that neither publishes nor holds anything has no series.
      if (sums.published == 0 && sums.extendedAllocated + sums.draAllocated == 0) continue;
      out.push_back(classFigures(name, device_class, sums));
    }
  }
  return out;
}

std::optional<ClassFigures> Inventory::figures(std::string_view cluster_name,
                                               std::string_view deviceClass) const {
  const ClusterState* state = fresh(cluster_name);
  if (state == nullptr) return std::nullopt;
  auto it = state->totals.find(deviceClass);
  if (it == state->totals.end()) return std::nullopt;
  const ClassSums& sums = it->second;
  if (sums.published == 0 && sums.extendedAllocated + sums.draAllocated == 0) return std::nullopt;
  return classFigures(cluster_name, it->first, sums);
}

int64_t Inventory::usableDevices(std::string_view cluster_name,
                                 std::string_view deviceClass) const {
  const auto f = figures(cluster_name, deviceClass);
  return f ? f->usable : 0;
}

int64_t Inventory::freeDevices(std::string_view cluster_name, std::string_view deviceClass) const {
  const auto f = figures(cluster_name, deviceClass);
  return f ? f->free : 0;
}

std::vector<UnclassifiedFigures> Inventory::unclassified() const {
  std::vector<UnclassifiedFigures> out;
  for (const auto& [name, state] : clusters_) {
    fresh(name);
    for (const auto& [source, sums] : state.unclassifiedTotals) {
      if (sums.published == 0 && sums.extendedAllocated == 0 && sums.draAllocated == 0) continue;
      UnclassifiedFigures u;
      u.cluster = name;
      u.source = source;
      if (sums.extendedAllocated != 0) {
        u.kind = ClassKind::ExtendedResource;
      } else if (sums.draAllocated != 0 || sums.draPublished > 0) {
        u.kind = ClassKind::Dra;
      } else {
        u.kind = ClassKind::ExtendedResource;
      }
      u.published = sums.published;
      u.usable = sums.usable;
      u.allocated = sums.extendedAllocated + sums.draAllocated;
      out.push_back(std::move(u));
    }
  }
  return out;
}

std::vector<PoolStatus> Inventory::pools() const {
  // Device figures as each pool's last count left them (a pool is recounted when its slices or
  // the nodes they name change), not a pass over every device of the estate per call.
  std::vector<PoolStatus> out = tracker_.poolHeaders();
  const ClusterState* state = nullptr;
  const std::string* current = nullptr;  // pools are sorted by cluster first
  for (auto& s : out) {
    if (current == nullptr || *current != s.cluster) {
      current = &s.cluster;
      state = fresh(s.cluster);
    }
    if (state == nullptr) continue;
    auto part = state->poolParts.find(PoolId{s.driver, s.pool});
    if (part == state->poolParts.end()) continue;
    const PoolStatus& f = part->second.figures;
    s.devices = f.devices;
    s.usable = f.usable;
    s.unavailable = f.unavailable;
    s.unavailableByReason = f.unavailableByReason;
    s.partitionDevices = f.partitionDevices;
  }
  return out;
}

InventorySnapshot Inventory::snapshot(bool withPools) const {
  InventorySnapshot s;
  s.at = tracker_.now();
  s.classes = classes();
  s.unclassified = unclassified();
  const NodeModeSummary& modes = nodeModeSummary();
  s.gpuNodes = modes.gpuNodes;
  s.nodeModeProblems = modes.problems;
  if (withPools) s.pools = pools();
  s.poolCounts = tracker_.poolCounts();
  s.poolIncompleteSeconds = tracker_.incompleteSeconds();
  s.rejectedSlices = tracker_.rejectedSlices();
  s.rejectedObjects = rejected_objects_;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Lookups for the engine

const std::vector<std::string>& Inventory::alsoServedBy(std::string_view cluster_name,
                                                        std::string_view requestClass) const {
  static const std::vector<std::string> kNone;
  const ClusterState* state = fresh(cluster_name);
  if (state == nullptr) return kNone;
  auto it = state->serving.find(requestClass);
  return it == state->serving.end() ? kNone : it->second.classes;
}

std::vector<std::string> Inventory::servingClasses(std::string_view cluster_name,
                                                   std::string_view requestClass) const {
  std::vector<std::string> out{std::string(requestClass)};
  for (const auto& c : alsoServedBy(cluster_name, requestClass)) out.push_back(c);
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, int64_t, std::less<>> Inventory::physicalUsableByNode(
    std::string_view cluster_name, std::string_view deviceClass) const {
  std::map<std::string, int64_t, std::less<>> out;
  const ClusterState* state = fresh(cluster_name);
  if (state == nullptr) return out;
  auto it = state->physicalByClass.find(deviceClass);
  if (it != state->physicalByClass.end()) out = it->second;
  return out;
}

std::vector<DeviceCount> Inventory::demandForRequests(const model::ResourceList& perPod,
                                                      int64_t pods) const {
  std::map<std::pair<std::string, bool>, int64_t> counts;
  if (pods <= 0) return {};
  for (const auto& [resource, milli] : perPod) {
    if (!tracked(resource)) continue;
    addCount(counts, resource, false, wholeUnits(milli) * pods);
  }
  return toDeviceCounts(counts);
}

std::vector<DeviceCount> Inventory::podSetDemand(const model::PodSet& podSet) const {
  return demandForRequests(podSet.perPodRequests, podSet.count);
}

PodDevices Inventory::podDevices(std::string_view cluster_name, const model::Pod& pod) const {
  return podDevices(cluster_name, PodUse{pod.meta.namespace_,
                                         pod.nodeName,
                                         pod.phase,
                                         {pod.requests.data(), pod.requests.size()},
                                         {pod.claims.data(), pod.claims.size()},
                                         {},
                                         pod.meta.name.view()});
}

PodDevices Inventory::podDevices(std::string_view cluster_name, const PodUse& pod) const {
  PodDevices out;
  if (pod.phase == model::PodPhase::Succeeded || pod.phase == model::PodPhase::Failed) return out;
  const ClusterState* state = findCluster(cluster_name);
  const bool bound = !pod.nodeName.empty();
  const NodeRecord* node = nullptr;
  if (state != nullptr && bound) {
    auto it = state->nodes.find(pod.nodeName);
    if (it != state->nodes.end()) node = &it->second;
  }
  std::map<std::pair<std::string, bool>, int64_t> counts;

  for (const auto& [resource, milli] : pod.requests) {
    if (!tracked(resource)) continue;
    const int64_t units = wholeUnits(milli);
    if (units == 0) continue;
    if (node != nullptr && std::none_of(node->allocatable.begin(), node->allocatable.end(),
                                        [&r = resource](const auto& kv) { return kv.first == r; })) {
      // Served through a DRA claim the scheduler made for the extended resource; the model does
      // not link that claim to the pod.
      ++out.unresolvedClaims;
      continue;
    }
    const auto device_class = bound ? extendedClass(resource, node) : std::string(resource);
    if (!device_class) {
      out.unclassified += units;  // the node's labels do not say what the units are
      continue;
    }
    addCount(counts, *device_class, bound, units);
  }

  // The ResourceClaim `claim_name` of the pod's namespace ("" while not generated yet).
  auto addClaim = [&](std::string_view claim_name) {
    const ClaimRecord* claim = nullptr;
    if (state != nullptr && !claim_name.empty()) {
      auto it = state->claims.find(model::NamespacedName{pod.ns, claim_name});
      if (it != state->claims.end()) claim = &*it;
    }
    if (claim == nullptr) {
      ++out.unresolvedClaims;
      return;
    }
    if (claim->allocated) {
      for (const auto& result : claim->allocations) {
        if (auto device_class = classOfAllocation(cluster_name, *claim, result)) {
          addCount(counts, std::move(*device_class), true, 1);
        } else {
          ++out.unclassified;
        }
      }
      return;
    }
    for (const auto& request : claim->requests) {
      if (request.allocationModeAll) {
        ++out.unresolvedClaims;
        continue;
      }
      if (auto device_class = classForRequest(request)) {
        addCount(counts, std::move(*device_class), false, request.count);
      } else {
        out.unclassified += std::max<int64_t>(0, request.count);
      }
    }
  };
  for (const auto& pod_claim : pod.claims) addClaim(model::claimNameOf(pod_claim));
  model::PodClaimRef::NameBuffer buf;
  for (const auto& ref : pod.claimRefs) addClaim(ref.claimName(pod.name, buf));
  out.devices = toDeviceCounts(counts);
  return out;
}

}  // namespace firstwork::inventory
